// `sandbox: on|off` on a provider (issue 4: an explicit, reported opt-out of confinement), and
// `read:`, what a confined checker may read beyond its readable set (issue 7).
#include <doctest/doctest.h>

#include <filesystem>

#include "config/config.h"
#include "support/support.h"

namespace devflow {

TEST_CASE("a provider may turn its sandbox off explicitly, on is the default") {
  auto config = LoadConfigText(
      "providers:\n"
      "  loose:\n"
      "    command: [checker]\n"
      "    sandbox: off\n"
      "  tight:\n"
      "    command: [checker]\n"
      "plugins: []\n",
      "g.yaml");
  REQUIRE(config.ok());
  REQUIRE(config->FindProvider("loose") != nullptr);
  CHECK(config->FindProvider("loose")->sandbox_off);
  CHECK_FALSE(config->FindProvider("tight")->sandbox_off);
}

TEST_CASE("a sandbox value other than on or off fails the load naming the line") {
  auto config = LoadConfigText(
      "providers:\n"
      "  loose:\n"
      "    command: [checker]\n"
      "    sandbox: false\n"
      "plugins: []\n",
      "g.yaml");
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("g.yaml:4:14: providers.loose: sandbox must be on or off") !=
        std::string::npos);
}

TEST_CASE("read: lists absolute paths that exist, kept as written") {
  test::TempDir dir;
  test::Spit(dir / "models/m.bin", "m");
  auto config = LoadConfigText(
      "providers:\n"
      "  llm:\n"
      "    command: [checker]\n"
      "    read: ['" +
          dir / "models" + "', '" + dir / "models/m.bin" +
          "']\n"
          "plugins: []\n",
      "g.yaml");
  REQUIRE_MESSAGE(config.ok(), config.status().message());
  CHECK(config->FindProvider("llm")->read ==
        std::vector<std::string>{dir / "models", dir / "models/m.bin"});
}

TEST_CASE("a read: path that is relative or does not exist fails the load naming it") {
  test::TempDir dir;
  auto config = LoadConfigText(
      "providers:\n"
      "  llm:\n"
      "    command: [checker]\n"
      "    read: [models, '" +
          dir / "gone" +
          "']\n"
          "  other:\n"
          "    command: [checker]\n"
          "    read: /opt\n"
          "plugins: []\n",
      "g.yaml");
  REQUIRE_FALSE(config.ok());
  const std::string message = config.status().message();
  INFO(message);
  CHECK(message.find("g.yaml:4:12: providers.llm: read[0] \"models\" is not an absolute path; "
                     "write the file or directory as /...") != std::string::npos);
  CHECK(message.find("g.yaml:4:20: providers.llm: read[1] \"" + dir / "gone" +
                     "\" cannot be read: No such file or directory (ENOENT); create it or "
                     "remove it from read") != std::string::npos);
  CHECK(message.find("g.yaml:7:11: providers.other: read must be a list of absolute paths the "
                     "checker may read") != std::string::npos);
}

// trial13: `read: [/proc/<host pid>/environ]` loaded silently. /proc, /sys and /dev are built by
// the sandbox itself; a read: rule there is refused, by its written path or where a link leads.
TEST_CASE("a read: path in /proc, /sys or /dev fails the load naming the tree") {
  test::TempDir dir;
  std::filesystem::create_symlink("/dev/null", dir / "null-link");
  auto config = LoadConfigText(
      "providers:\n"
      "  llm:\n"
      "    command: [checker]\n"
      "    read: [/proc/1/environ, /sys/kernel, '" +
          dir / "null-link" +
          "', /usr/share]\n"
          "plugins: []\n",
      "g.yaml");
  REQUIRE_FALSE(config.ok());
  const std::string message = config.status().message();
  INFO(message);
  const std::string tail =
      ", which the sandbox sets up itself (a private /proc and /dev under bubblewrap; at the "
      "Landlock level /proc read-only and a few devices): read names files of the file system, "
      "not kernel or device files; remove it from read";
  CHECK(message.find("g.yaml:4:12: providers.llm: read[0] \"/proc/1/environ\" lies in /proc" +
                     tail) != std::string::npos);
  CHECK(message.find("providers.llm: read[1] \"/sys/kernel\" lies in /sys" + tail) !=
        std::string::npos);
  CHECK(message.find("providers.llm: read[2] \"" + dir / "null-link" + "\" lies in /dev" + tail) !=
        std::string::npos);
  CHECK(message.find("read[3]") == std::string::npos);
}

}  // namespace devflow

namespace devflow {

TEST_CASE("a provider may set reply: block-only, text is the default, anything else fails") {
  auto config = LoadConfigText(
      "providers:\n"
      "  strict:\n"
      "    command: [checker]\n"
      "    reply: block-only\n"
      "  plain:\n"
      "    command: [checker]\n"
      "  spelled:\n"
      "    command: [checker]\n"
      "    reply: text\n"
      "plugins: []\n",
      "g.yaml");
  REQUIRE(config.ok());
  CHECK(config->FindProvider("strict")->reply_block_only);
  CHECK_FALSE(config->FindProvider("plain")->reply_block_only);
  CHECK_FALSE(config->FindProvider("spelled")->reply_block_only);
  auto bad = LoadConfigText(
      "providers:\n"
      "  strict:\n"
      "    command: [checker]\n"
      "    reply: strict\n"
      "plugins: []\n",
      "g.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("g.yaml:4:12: providers.strict: reply must be text") !=
        std::string::npos);
}

}  // namespace devflow

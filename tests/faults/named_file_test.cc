// A file an operator names for the gate to copy into a card (`artifact add FILE`, `card create
// --body-file F`) lies, as a rule, in the workspace the judged agent writes. trial19 5f: the
// agent replaced its design with a link to /proc/self/environ, and `artifact add` registered the
// operator's whole environment (an API key in it) as an artifact the next check sent to the
// checker; a link to /etc/shadow made a world-readable copy. FileSystem::ReadNamedFile (host/
// os.h) follows no link at any component and reads no /proc or /sys file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "faults/faults.h"
#include "host/os.h"

namespace devflow::faults {
namespace {

TEST_CASE("artifact add copies no link's target: a planted link to the environment is refused") {
  Workspace ws = AllowGated();
  ws.CardInDesigning();
  const std::string link = ws / "inputs/design-v2.md";
  REQUIRE(::symlink("/proc/self/environ", link.c_str()) == 0);
  const auto before = ws.JournalLines();

  auto added = ws.Gate({"artifact", "add", kCard, "design", "inputs/design-v2.md"},
                       {{"OPERATOR_API_KEY", "sk-live-OPERATORSECRET"}});
  CHECK(added.exit_code == 2);
  CHECK(added.err.rfind("devflow-gate: cannot read the artifact file: read inputs/design-v2.md: "
                        "names a symbolic link (ELOOP); the gate reads the file a path names, "
                        "never a link's target: name the file itself (/proc/",
                        0) == 0);
  CHECK(added.out.find("OPERATOR_API_KEY") == std::string::npos);
  CHECK(ws.JournalLines() == before);
}

TEST_CASE("artifact add follows no link in a directory component either") {
  Workspace ws = AllowGated();
  ws.CardInDesigning();
  test::TempDir outside;
  test::Spit(outside / "secret.md", "HOST SECRET\n");
  REQUIRE(::symlink(outside.path().c_str(), (ws / "inputs/docs").c_str()) == 0);
  const auto before = ws.JournalLines();

  auto added = ws.Gate({"artifact", "add", kCard, "design", "inputs/docs/secret.md"});
  CHECK(added.exit_code == 2);
  CHECK(added.err.find("read inputs/docs/secret.md: names a symbolic link (ELOOP)") !=
        std::string::npos);
  CHECK(ws.JournalLines() == before);

  // The file itself, named by its own path, is the operator's to register.
  auto direct = ws.Gate({"artifact", "add", kCard, "design", outside / "secret.md"});
  INFO(direct.out << direct.err);
  CHECK(direct.exit_code == 0);
  CHECK(test::Slurp(ws.card_dir() + "/artifacts/5-design.md") ==
        std::optional<std::string>("HOST SECRET\n"));
}

TEST_CASE("artifact add and card create --body-file read no file of /proc or /sys") {
  Workspace ws = AllowGated();
  ws.CardInDesigning();
  const auto before = ws.JournalLines();
  auto proc = ws.Gate({"artifact", "add", kCard, "design", "/proc/version"});
  CHECK(proc.exit_code == 2);
  CHECK(proc.err ==
        "devflow-gate: cannot read the artifact file: read /proc/version: a file of /proc or "
        "/sys, not a document (EINVAL)\n");
  auto sys = ws.Gate({"artifact", "add", kCard, "design", "/sys/kernel/uevent_seqnum"});
  CHECK(sys.exit_code == 2);
  CHECK(sys.err.find("a file of /proc or /sys, not a document (EINVAL)") != std::string::npos);
  CHECK(ws.JournalLines() == before);

  REQUIRE(::symlink("/proc/self/environ", (ws / "body.md").c_str()) == 0);
  auto created = ws.Gate({"card", "create", "--title", "New card", "--body-file", "body.md"},
                         {{"OPERATOR_API_KEY", "sk-live-BODYSECRET"}});
  CHECK(created.exit_code == 2);
  CHECK(created.err.rfind("devflow-gate: cannot read --body-file: read body.md: names a symbolic "
                          "link (ELOOP)",
                          0) == 0);
  CHECK(!std::filesystem::exists(ws.root() + "/tasks/0002-new-card"));
}

}  // namespace
}  // namespace devflow::faults

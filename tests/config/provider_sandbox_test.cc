// `sandbox: on|off` on a provider (issue 4: an explicit, reported opt-out of confinement).
#include <doctest/doctest.h>

#include "config/config.h"

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

}  // namespace devflow

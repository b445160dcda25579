// The shipped example configs and the JSON Schema stay in step with the loader.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "config/config.h"
#include "support/support.h"

namespace devflow {
namespace {

std::string Source(const std::string& rel) { return test::SourceDir() + "/" + rel; }

TEST_CASE("the minimal example config loads without warnings") {
  auto r = LoadConfigFile(Source("config/examples/minimal.yaml"));
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->plugins.size() == 1);
  CHECK(r->plugins[0].agent->edges.size() == 1);
  CHECK(ConfigWarnings(*r).empty());
}

TEST_CASE("the full example config loads every plugin without warnings") {
  auto r = LoadConfigFile(Source("config/examples/full.yaml"));
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->plugins.size() == 3);
  CHECK(r->plugins[0].artifact.has_value());
  CHECK(r->plugins[1].agent.has_value());
  CHECK(r->plugins[1].agent->edges[1].prompt ==
        "Check that the review addresses every risk the design lists.\n"
        "Veto when a risk is neither mitigated nor explicitly accepted.\n");
  CHECK(r->plugins[2].grounding.has_value());
  CHECK(ConfigWarnings(*r).empty());
}

std::set<std::string> Keys(const nlohmann::json& properties) {
  std::set<std::string> out;
  for (auto it = properties.begin(); it != properties.end(); ++it) out.insert(it.key());
  return out;
}

TEST_CASE("the JSON Schema parses and closes each object over the keys the loader accepts") {
  auto text = test::Slurp(Source("config/devflow-gate.schema.json"));
  REQUIRE(text.has_value());
  auto schema = nlohmann::json::parse(*text, nullptr, false);
  REQUIRE_FALSE(schema.is_discarded());
  const auto& defs = schema.at("$defs");
  CHECK(Keys(defs.at("provider").at("properties")) ==
        std::set<std::string>{"builtin", "args", "command", "env", "network", "sandbox", "read",
                              "reply"});
  CHECK(Keys(defs.at("agentGate").at("properties")) ==
        std::set<std::string>{"edges", "reportDir", "verdictCacheDir", "checkTimeoutMs",
                              "maxReplyBytes"});
  CHECK(Keys(defs.at("agentGate")
                 .at("properties")
                 .at("edges")
                 .at("additionalProperties")
                 .at("properties")) ==
        std::set<std::string>{"provider", "inputs", "prompt", "verdictNonce"});
  CHECK(Keys(defs.at("artifactGate").at("properties")) == std::set<std::string>{"kinds", "edges"});
  CHECK(Keys(defs.at("groundingGate").at("properties")) ==
        std::set<std::string>{"ledger", "edges"});
  for (const char* def : {"provider", "plugin", "agentGate", "artifactGate", "groundingGate"}) {
    CAPTURE(def);
    CHECK(defs.at(def).at("additionalProperties") == false);
  }
}

}  // namespace
}  // namespace devflow

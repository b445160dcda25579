// Port of upstream tests/config.spec.ts (reference/devflow-upstream.md §5.3) against our YAML
// loader (SPEC §3): each problem is one line `<file>:<line>:<col>: <item path>: <message>`.
// Product difference: reportDir / verdictCacheDir are config keys here, so upstream's cases 6–7
// ("was removed") become "a blank reportDir / verdictCacheDir fails the load".
#include "gate/fixture.h"

namespace devflow::gatetest {
namespace {

// A config with one agent-gate plugin whose `config:` body is `body` (indented 6 spaces).
std::string AgentYaml(const std::string& body) {
  return "plugins:\n"
         "  - id: devflow-agent-gate\n"
         "    config:\n" +
         body;
}

const char kEdge[] =
    "      edges:\n"
    "        'designing->ready':\n"
    "          provider: checker\n"
    "          prompt: Check the design.\n";

std::string LoadError(const std::string& text) {
  Result<GateConfig> loaded = LoadConfigText(text, "devflow-gate.yaml");
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == "config");
  return loaded.status().message();
}

TEST_CASE("config.spec 1: fails the load on a malformed edge key") {
  CHECK(LoadError(AgentYaml("      edges:\n"
                            "        'designing=>ready':\n"
                            "          provider: checker\n"
                            "          prompt: Check the design.\n")) ==
        "devflow-gate.yaml:5:9: plugins[0](devflow-agent-gate): edges names invalid edge "
        "\"designing=>ready\"; use \"<from>-><to>\" with stage names or \"blocked\"");
}

TEST_CASE("config.spec 2: fails the load on an unknown location name") {
  CHECK(LoadError(AgentYaml("      edges:\n"
                            "        'designing->shipping':\n"
                            "          provider: checker\n"
                            "          prompt: Check the design.\n")) ==
        "devflow-gate.yaml:5:9: plugins[0](devflow-agent-gate): edges names invalid edge "
        "\"designing->shipping\"; use \"<from>-><to>\" with stage names or \"blocked\"");
}

TEST_CASE("config.spec 3: fails the load on a blank provider") {
  CHECK(LoadError(AgentYaml("      edges:\n"
                            "        'designing->ready':\n"
                            "          provider: ' '\n"
                            "          prompt: Check the design.\n")) ==
        "devflow-gate.yaml:6:21: plugins[0](devflow-agent-gate): "
        "edges[\"designing->ready\"].provider must be a non-empty subagent provider name");
}

TEST_CASE("config.spec 4: fails the load on a blank prompt") {
  CHECK(LoadError(AgentYaml("      edges:\n"
                            "        'designing->ready':\n"
                            "          provider: checker\n"
                            "          prompt: ''\n")) ==
        "devflow-gate.yaml:7:19: plugins[0](devflow-agent-gate): "
        "edges[\"designing->ready\"].prompt must be a non-empty check instruction");
}

TEST_CASE("config.spec 5: fails the load on an ill-formed input kind") {
  CHECK(
      LoadError(AgentYaml("      edges:\n"
                          "        'designing->ready':\n"
                          "          provider: checker\n"
                          "          inputs: [prd, Bad Kind]\n"
                          "          prompt: Check the design.\n")) ==
      "devflow-gate.yaml:7:25: plugins[0](devflow-agent-gate): edges[\"designing->ready\"].inputs "
      "names invalid kind \"Bad Kind\"; kinds use lowercase letters, digits and dashes and "
      "start with a letter or digit");
}

TEST_CASE("config.spec 6: fails the load on a blank reportDir") {
  CHECK(LoadError(AgentYaml(std::string(kEdge) + "      reportDir: ''\n")) ==
        "devflow-gate.yaml:8:18: plugins[0](devflow-agent-gate): reportDir must be a non-empty "
        "path when set");
}

TEST_CASE("config.spec 7: fails the load on a blank verdictCacheDir") {
  CHECK(LoadError(AgentYaml(std::string(kEdge) + "      verdictCacheDir: '  '\n")) ==
        "devflow-gate.yaml:8:24: plugins[0](devflow-agent-gate): verdictCacheDir must be a "
        "non-empty path when set");
}

TEST_CASE("config.spec 8: fails the load on a non-positive checker timeout") {
  CHECK(LoadError(AgentYaml(std::string(kEdge) + "      checkTimeoutMs: 0\n")) ==
        "devflow-gate.yaml:8:23: plugins[0](devflow-agent-gate): checkTimeoutMs must be a positive "
        "integer");
}

TEST_CASE(
    "config.spec 9: applies its defaults under direct application outside Loader "
    "normalization") {
  // `{}` loads: no edges, the gate is inert.
  Result<GateConfig> empty =
      LoadConfigText("plugins:\n  - id: devflow-agent-gate\n    config: {}\n", "devflow-gate.yaml");
  REQUIRE_MESSAGE(empty.ok(), empty.status().message());
  REQUIRE(empty->plugins.size() == 1);
  REQUIRE(empty->plugins[0].agent.has_value());
  const AgentGateConfig& inert = *empty->plugins[0].agent;
  CHECK(inert.edges.empty());
  CHECK(inert.check_timeout_ms == 600000);
  CHECK(inert.max_reply_bytes == 8 * 1024 * 1024);
  CHECK(!inert.report_dir.has_value());
  CHECK(!inert.verdict_cache_dir.has_value());

  // An edge without `inputs` loads with no inputs.
  Result<GateConfig> loaded = LoadConfigText(AgentYaml(kEdge), "devflow-gate.yaml");
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  const AgentGateConfig& gate = *loaded->plugins[0].agent;
  REQUIRE(gate.edges.size() == 1);
  CHECK(gate.edges[0].edge == Edge{Location::kDesigning, Location::kReady});
  CHECK(gate.edges[0].provider == "checker");
  CHECK(gate.edges[0].prompt == "Check the design.");
  CHECK(gate.edges[0].inputs.empty());

  // An unconfigured edge still commits through the loaded gate.
  Rig rig;
  rig.config = gate;
  WriteCard(rig.root, "0501-defaults", {}, /*draft_only=*/true);
  CHECK(rig.Move("0501-defaults", Location::kDesigning).code == "committed");
  CHECK(rig.scripted.requests.empty());
}

}  // namespace
}  // namespace devflow::gatetest

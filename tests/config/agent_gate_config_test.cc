// devflow-agent-gate config: the upstream validation order and messages (reference §4.2,
// the cases of tests/config.spec.ts in §5.3), adapted to this SPEC's reportDir /
// verdictCacheDir / maxReplyBytes.
#include <doctest/doctest.h>

#include <string>

#include "config/config.h"

namespace devflow {
namespace {

std::string ProblemsOf(const std::string& yaml) {
  auto r = LoadConfigText(yaml, "devflow-gate.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == "config");
  return r.status().message();
}

AgentGateConfig AgentOf(const std::string& yaml) {
  auto r = LoadConfigText(yaml, "devflow-gate.yaml");
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->plugins.size() == 1);
  REQUIRE(r->plugins[0].agent.has_value());
  return *r->plugins[0].agent;
}

/// One agent gate (plugins[0]) whose config body starts on line 4, indented 6.
std::string Gate(const std::string& config_lines) {
  return "plugins:\n  - id: devflow-agent-gate\n    config:\n" + config_lines;
}

/// One edge designing->ready (key on line 5) with the given field lines (from line 6).
std::string OneEdge(const std::string& fields, const std::string& key = "designing->ready") {
  return Gate("      edges:\n        '" + key + "':\n" + fields);
}

TEST_CASE("agent config names the SPEC's position for a blank provider") {
  CHECK(ProblemsOf(R"(plugins:
- id: devflow-artifact-gate
  config:
    kinds: {prd: {}, design: {}}
    edges: {'designing->ready': [prd, design]}
- id: devflow-agent-gate
  config:
    edges:
      'designing->ready':
        inputs: [prd, design]
        prompt: Check that the design cites only requirements the PRD states.
        provider: ' '
)") == "devflow-gate.yaml:12:19: plugins[1](devflow-agent-gate): edges[\"designing->ready\"]"
       ".provider must be a non-empty subagent provider name");
}

TEST_CASE("agent config fails the load on a malformed edge key") {
  CHECK(ProblemsOf(OneEdge("          provider: p\n          prompt: q\n", "designing=>ready")) ==
        "devflow-gate.yaml:5:9: plugins[0](devflow-agent-gate): edges names invalid edge "
        "\"designing=>ready\"; use \"<from>-><to>\" with stage names or \"blocked\"");
}

TEST_CASE("agent config fails the load on an unknown location name") {
  CHECK(
      ProblemsOf(OneEdge("          provider: p\n          prompt: q\n", "designing->shipping")) ==
      "devflow-gate.yaml:5:9: plugins[0](devflow-agent-gate): edges names invalid edge "
      "\"designing->shipping\"; use \"<from>-><to>\" with stage names or \"blocked\"");
}

TEST_CASE("agent config accepts edges to and from blocked") {
  auto c =
      AgentOf(Gate("      edges:\n        blocked->designing: {provider: p, prompt: q}\n"
                   "        developing->blocked: {provider: p, prompt: q}\n"));
  REQUIRE(c.edges.size() == 2);
  CHECK(c.edges[0].edge.Name() == "blocked->designing");
  CHECK(c.edges[1].edge.Name() == "developing->blocked");
}

TEST_CASE("agent config fails the load on a blank, missing or non-string provider") {
  const std::string msg =
      ": plugins[0](devflow-agent-gate): edges[\"designing->ready\"].provider must be a "
      "non-empty subagent provider name";
  CHECK(ProblemsOf(OneEdge("          provider: ' '\n          prompt: q\n")) ==
        "devflow-gate.yaml:6:21" + msg);
  CHECK(ProblemsOf(OneEdge("          prompt: q\n")) == "devflow-gate.yaml:5:9" + msg);
  CHECK(ProblemsOf(OneEdge("          provider:\n          prompt: q\n")) ==
        "devflow-gate.yaml:6:11" + msg);
  CHECK(ProblemsOf(OneEdge("          provider: [a]\n          prompt: q\n")) ==
        "devflow-gate.yaml:6:21" + msg);
  CHECK(ProblemsOf(OneEdge("          provider: 42\n          prompt: q\n")) ==
        "devflow-gate.yaml:6:21" + msg);
}

TEST_CASE("agent config types scalars as YAML 1.2 does: numbers, booleans and null are not names") {
  for (const char* bad :
       {"42", "-7", "4.5", "1e3", ".inf", ".NaN", "0x1F", "0o17", "true", "FALSE", "null", "~"}) {
    CAPTURE(bad);
    CHECK(ProblemsOf(OneEdge(std::string("          provider: ") + bad + "\n          prompt: q\n"))
              .find(".provider must be a non-empty subagent provider name") != std::string::npos);
  }
  for (const char* good : {"yes", "on", "1.2.3", "'42'", "\"true\"", "v1", "0x", "1e", "!!str 5"}) {
    CAPTURE(good);
    auto c =
        AgentOf(OneEdge(std::string("          provider: ") + good + "\n          prompt: q\n"));
    REQUIRE(c.edges.size() == 1);
    CHECK_FALSE(c.edges[0].provider.empty());
  }
}

TEST_CASE("agent config fails the load on a blank prompt") {
  CHECK(ProblemsOf(OneEdge("          provider: p\n          prompt: \"\\t \"\n")) ==
        "devflow-gate.yaml:7:19: plugins[0](devflow-agent-gate): edges[\"designing->ready\"]"
        ".prompt must be a non-empty check instruction");
}

TEST_CASE("agent config fails the load on an ill-formed input kind") {
  CHECK(ProblemsOf(OneEdge("          provider: p\n          prompt: q\n"
                           "          inputs: [prd, Bad Kind]\n")) ==
        "devflow-gate.yaml:8:25: plugins[0](devflow-agent-gate): edges[\"designing->ready\"]"
        ".inputs names invalid kind \"Bad Kind\"; kinds use lowercase letters, digits and dashes "
        "and start with a letter or digit");
}

TEST_CASE("agent config de-duplicates inputs keeping the first occurrence") {
  auto c =
      AgentOf(OneEdge("          provider: p\n          prompt: q\n"
                      "          inputs: [design, prd, design, prd, adr-2]\n"));
  REQUIRE(c.edges.size() == 1);
  CHECK(c.edges[0].inputs == std::vector<std::string>{"design", "prd", "adr-2"});
}

TEST_CASE("agent config keeps the prompt verbatim") {
  auto c =
      AgentOf(OneEdge("          provider: p\n          prompt: |\n            line one\n"
                      "            line two\n"));
  CHECK(c.edges[0].prompt == "line one\nline two\n");
}

TEST_CASE("agent config accepts reportDir and verdictCacheDir as paths") {
  auto c =
      AgentOf(Gate("      reportDir: .devflow-agent-gate-reports\n"
                   "      verdictCacheDir: /var/cache/devflow-gate\n"));
  CHECK(c.report_dir == ".devflow-agent-gate-reports");
  CHECK(c.verdict_cache_dir == "/var/cache/devflow-gate");
}

TEST_CASE("agent config fails the load on a blank or non-string reportDir") {
  const std::string msg =
      ": plugins[0](devflow-agent-gate): reportDir must be a non-empty path when set";
  CHECK(ProblemsOf(Gate("      reportDir: '  '\n")) == "devflow-gate.yaml:4:18" + msg);
  CHECK(ProblemsOf(Gate("      reportDir:\n")) == "devflow-gate.yaml:4:7" + msg);
  CHECK(ProblemsOf(Gate("      reportDir: [a]\n")) == "devflow-gate.yaml:4:18" + msg);
  CHECK(ProblemsOf(Gate("      reportDir: true\n")) == "devflow-gate.yaml:4:18" + msg);
}

TEST_CASE("agent config fails the load on a blank verdictCacheDir") {
  CHECK(ProblemsOf(Gate("      verdictCacheDir: ''\n")) ==
        "devflow-gate.yaml:4:24: plugins[0](devflow-agent-gate): verdictCacheDir must be a "
        "non-empty path when set");
  CHECK(ProblemsOf(Gate("      verdictCacheDir: ~\n")) ==
        "devflow-gate.yaml:4:7: plugins[0](devflow-agent-gate): verdictCacheDir must be a "
        "non-empty path when set");
}

TEST_CASE("agent config fails the load on a non-positive checker timeout") {
  const std::string msg =
      ": plugins[0](devflow-agent-gate): checkTimeoutMs must be a positive integer";
  for (const char* bad : {"0", "-1", "1.5", "6e5", "0x10", "'600000'", "ten", "[1]"}) {
    CAPTURE(bad);
    CHECK(ProblemsOf(Gate(std::string("      checkTimeoutMs: ") + bad + "\n")) ==
          "devflow-gate.yaml:4:23" + msg);
  }
  CHECK(ProblemsOf(Gate("      checkTimeoutMs:\n")) == "devflow-gate.yaml:4:7" + msg);
}

TEST_CASE("agent config rejects a leading-zero timeout instead of reading it as octal") {
  CHECK(ProblemsOf(Gate("      checkTimeoutMs: 010\n")) ==
        "devflow-gate.yaml:4:23: plugins[0](devflow-agent-gate): checkTimeoutMs must be a "
        "positive integer; \"010\" has a leading zero, which YAML 1.1 reads as octal: write plain "
        "decimal digits");
}

TEST_CASE("agent config reads plain decimal timeouts and reply caps") {
  auto c = AgentOf(Gate("      checkTimeoutMs: 1\n      maxReplyBytes: 1048576\n"));
  CHECK(c.check_timeout_ms == 1);
  CHECK(c.max_reply_bytes == 1048576);
}

TEST_CASE("agent config fails the load on a non-positive maxReplyBytes") {
  CHECK(ProblemsOf(Gate("      maxReplyBytes: 0\n")) ==
        "devflow-gate.yaml:4:22: plugins[0](devflow-agent-gate): maxReplyBytes must be a "
        "positive integer");
}

TEST_CASE("agent config applies its defaults to an empty or absent config") {
  for (const char* yaml : {"plugins:\n  - id: devflow-agent-gate\n    config: {}\n",
                           "plugins:\n  - id: devflow-agent-gate\n",
                           "plugins:\n  - id: devflow-agent-gate\n    config:\n"}) {
    CAPTURE(yaml);
    auto c = AgentOf(yaml);
    CHECK(c.edges.empty());
    CHECK_FALSE(c.report_dir.has_value());
    CHECK_FALSE(c.verdict_cache_dir.has_value());
    CHECK(c.check_timeout_ms == 600000);
    CHECK(c.max_reply_bytes == 8 * 1024 * 1024);
  }
  auto c = AgentOf(OneEdge("          provider: p\n          prompt: q\n"));
  REQUIRE(c.edges.size() == 1);
  CHECK(c.edges[0].inputs.empty());
}

TEST_CASE("agent config rejects a misspelt key, suggesting the right one") {
  CHECK(ProblemsOf(Gate("      checkTimeuotMs: 5000\n")) ==
        "devflow-gate.yaml:4:7: plugins[0](devflow-agent-gate): unknown key \"checkTimeuotMs\" "
        "in config (did you mean \"checkTimeoutMs\"?); allowed here: edges, reportDir, "
        "verdictCacheDir, checkTimeoutMs, maxReplyBytes");
}

TEST_CASE("agent config lists verdictNonce among the keys an edge allows") {
  CHECK(ProblemsOf(OneEdge("          provider: p\n          prompt: q\n"
                           "          verdictNonse: true\n")) ==
        "devflow-gate.yaml:8:11: plugins[0](devflow-agent-gate): unknown key \"verdictNonse\" "
        "in edges[\"designing->ready\"] (did you mean \"verdictNonce\"?); allowed here: provider, "
        "inputs, prompt, verdictNonce");
}

TEST_CASE("agent config rejects a duplicate edge and a duplicate field") {
  CHECK(ProblemsOf(Gate("      edges:\n"
                        "        designing->ready: {provider: p, prompt: q}\n"
                        "        'designing->ready': {provider: p, prompt: q, prompt: r}\n")) ==
        "devflow-gate.yaml:6:9: plugins[0](devflow-agent-gate): duplicate key "
        "\"designing->ready\" in edges (first at line 5); remove one of them");
  CHECK(ProblemsOf(Gate("      edges:\n"
                        "        designing->ready: {provider: p, prompt: q, prompt: r}\n")) ==
        "devflow-gate.yaml:5:52: plugins[0](devflow-agent-gate): duplicate key \"prompt\" in "
        "edges[\"designing->ready\"] (first at line 5); remove one of them");
}

TEST_CASE("agent config reports every problem, edge by edge in upstream order, in one load") {
  CHECK(ProblemsOf(R"(plugins:
  - id: devflow-agent-gate
    config:
      checkTimeoutMs: 0
      edges:
        designing=>ready:
          provider: " "
          prompt: ""
          inputs: [Bad Kind]
        ready->developing: {provider: p, prompt: "  "}
      maxReplyBytes: -1
      verdictCacheDir: ""
      reportDir: ""
)") == "devflow-gate.yaml:6:9: plugins[0](devflow-agent-gate): edges names invalid edge "
       "\"designing=>ready\"; use \"<from>-><to>\" with stage names or \"blocked\"\n"
       "devflow-gate.yaml:7:21: plugins[0](devflow-agent-gate): edges[\"designing=>ready\"]"
       ".provider must be a non-empty subagent provider name\n"
       "devflow-gate.yaml:8:19: plugins[0](devflow-agent-gate): edges[\"designing=>ready\"]"
       ".prompt must be a non-empty check instruction\n"
       "devflow-gate.yaml:9:20: plugins[0](devflow-agent-gate): edges[\"designing=>ready\"]"
       ".inputs names invalid kind \"Bad Kind\"; kinds use lowercase letters, digits and dashes "
       "and start with a letter or digit\n"
       "devflow-gate.yaml:10:50: plugins[0](devflow-agent-gate): edges[\"ready->developing\"]"
       ".prompt must be a non-empty check instruction\n"
       "devflow-gate.yaml:13:18: plugins[0](devflow-agent-gate): reportDir must be a non-empty "
       "path when set\n"
       "devflow-gate.yaml:12:24: plugins[0](devflow-agent-gate): verdictCacheDir must be a "
       "non-empty path when set\n"
       "devflow-gate.yaml:4:23: plugins[0](devflow-agent-gate): checkTimeoutMs must be a "
       "positive integer\n"
       "devflow-gate.yaml:11:22: plugins[0](devflow-agent-gate): maxReplyBytes must be a "
       "positive integer");
}

TEST_CASE("agent config rejects edges that are not a map and an edge that is not a map") {
  CHECK(ProblemsOf(Gate("      edges: [designing->ready]\n")) ==
        "devflow-gate.yaml:4:14: plugins[0](devflow-agent-gate): edges must be a map of "
        "\"<from>-><to>\" to {provider, inputs?, prompt}");
  CHECK(ProblemsOf(Gate("      edges:\n        designing->ready: check it\n")) ==
        "devflow-gate.yaml:5:27: plugins[0](devflow-agent-gate): edges[\"designing->ready\"] "
        "must be a map with provider, prompt and optional inputs");
}

}  // namespace
}  // namespace devflow

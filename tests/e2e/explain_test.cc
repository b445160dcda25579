// `move --explain` through the real binary: dispatches nothing, writes nothing, and shows per
// plugin whether the edge is configured, the exact prompt, the cache key and file, and a
// cached verdict when there is one.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

using Clock = std::chrono::steady_clock;

const char kInstruction[] = "Check that the design cites only requirements the PRD states.";

std::string Sha256(const std::string& bytes) {
  auto r = test::RunProgram({"/usr/bin/sha256sum"}, "", {}, bytes);
  REQUIRE(r.exit_code == 0);
  return r.out.substr(0, 64);
}

// An artifact gate that does not gate designing->ready, then the agent gate on it with
// `command` as the checker and a cache dir.
std::string Config(const std::vector<std::string>& command) {
  GateYaml yaml;
  yaml.command = command;
  yaml.timeout_ms = 20000;
  yaml.cache_dir = ".gate-cache";
  std::string agent = yaml.Text();
  std::string plugins = agent.substr(agent.find("plugins:\n") + 9);
  return agent.substr(0, agent.find("plugins:\n")) +
         "plugins:\n"
         "  - id: devflow-artifact-gate\n"
         "    config:\n"
         "      kinds:\n"
         "        prd: { sections: [Problem] }\n"
         "      edges:\n"
         "        'developing->reviewing': [prd]\n" +
         plugins;
}

// The explain run: exit 0, quick (a dispatched marker_hang.sh would last the 20 s timeout),
// no marker, workspace unchanged. Returns stdout.
std::string ExplainWritesNothing(Workspace& ws) {
  auto before = test::Snapshot(ws.path());
  auto t0 = Clock::now();
  auto r = ws.Gate({"move", ws.card(), "ready", "--explain"});
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  CHECK(seconds < 5.0);
  CHECK_FALSE(test::Slurp(ws / "marker"));
  CHECK(test::Snapshot(ws.path()) == before);
  return r.out;
}

std::string PromptOf(const std::string& out) {
  const std::string begin = "----- prompt begin -----\n", end = "\n----- prompt end -----";
  size_t b = out.find(begin);
  REQUIRE(b != std::string::npos);
  size_t e = out.find(end, b);
  REQUIRE(e != std::string::npos);
  return out.substr(b + begin.size(), e - b - begin.size());
}

TEST_CASE("explain dispatches nothing, writes nothing, and shows the prompt and cache key") {
  Workspace ws("");
  ws.WriteConfig(Config({Fixture("e2e/marker_hang.sh"), ws / "marker"}));
  ws.CardInDesigning();

  std::string out = ExplainWritesNothing(ws);
  const std::string key = "{\"edge\":\"designing->ready\",\"root\":\"" + ws.root() +
                          "\",\"card\":\"0001-export-the-audit-log\",\"inputs\":[\"design:4\","
                          "\"prd:3\"],\"promptSha256\":\"" +
                          Sha256(kInstruction) + "\"}";
  const std::string cache_file = ws / (".gate-cache/" + Sha256(key).substr(0, 16) + ".json");
  const std::string head =
      "explain: card 0001-export-the-audit-log designing->ready at revision 4 (nothing is "
      "dispatched or written)\n\n[1] devflow-artifact-gate\n";
  CHECK(out.rfind(head, 0) == 0);
  const std::string agent =
      "\n[2] devflow-agent-gate\n"
      "edge designing->ready is configured: provider \"checker\", checkTimeoutMs 20000\n"
      "inputs: prd:3, design:4\n"
      "report would be written to: " +
      ws.root() +
      "/reports/agent-gate/0001-export-the-audit-log-designing-ready-r4.md\n"
      "cache key: " +
      key + "\ncache file: " + cache_file +
      "\ncached verdict: none (the checker would be dispatched)\n"
      "prompt that would be sent (";
  CHECK(out.find(agent) != std::string::npos);
  CHECK(out.find(head + "edge designing->ready is not configured: delegates to the next policy\n" +
                 agent) == 0);

  // The exact prompt: a real (dry-run) dispatch receives the same bytes explain printed.
  std::string prompt = PromptOf(out);
  CHECK(out.find("prompt that would be sent (" + std::to_string(prompt.size()) + " bytes):\n") !=
        std::string::npos);
  CHECK(prompt.find(kInstruction) != std::string::npos);
  CHECK(prompt.find("REQ-1: export CSV") != std::string::npos);
  ws.WriteConfig(Config({Fixture("e2e/prompt_digest.py")}));
  auto dry = ws.Gate({"move", ws.card(), "ready", "--dry-run"});
  INFO("dry run: " << dry.out << dry.err);
  CHECK(dry.exit_code == 1);
  CHECK(dry.out.find("agent check vetoed designing->ready: prompt sha256 " + Sha256(prompt) +
                     " bytes " + std::to_string(prompt.size()) + ";") != std::string::npos);
}

TEST_CASE("explain shows the cached verdict after a real allow, still dispatching nothing") {
  Workspace ws("");
  ws.WriteConfig(Config({Fixture("checkers/allow.sh")}));
  ws.CardInDesigning();
  auto allowed = ws.Gate({"move", ws.card(), "ready"});
  INFO("allow: " << allowed.out << allowed.err);
  REQUIRE(allowed.exit_code == 0);
  // Back to designing (rework) with the same inputs, so designing->ready has the same key.
  REQUIRE(ws.Gate({"move", ws.card(), "developing"}).exit_code == 0);
  REQUIRE(ws.Gate({"move", ws.card(), "designing", "--reason", "redo"}).exit_code == 0);
  auto cached = test::Snapshot(ws / ".gate-cache");
  REQUIRE(cached.size() == 1);
  auto record = nlohmann::json::parse(cached.begin()->second);

  std::string out = ExplainWritesNothing(ws);
  CHECK(out.find("explain: card 0001-export-the-audit-log designing->ready at revision 7 ") == 0);
  CHECK(out.find("\ncache file: " + ws / (".gate-cache/" + cached.begin()->first) + "\n") !=
        std::string::npos);
  CHECK(out.find("\ncached verdict: allow: ok (at " + record["at"].get<std::string>() + ")\n") !=
        std::string::npos);

  // Another provider (one that would leave a marker and hang): the cached verdict is not its
  // own, so explain says the checker would run (issue 7 item 3), and still runs nothing.
  ws.WriteConfig(Config({Fixture("e2e/marker_hang.sh"), ws / "marker"}));
  out = ExplainWritesNothing(ws);
  CHECK(out.find("\ncached verdict: none (the checker would be dispatched)\n") !=
        std::string::npos);
}

}  // namespace
}  // namespace devflow::e2e

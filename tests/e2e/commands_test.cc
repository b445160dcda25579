// Happy paths of the non-move commands of the real binary, and --help on every command.
#include <doctest/doctest.h>

#include <string>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

TEST_CASE("card create, list and show print the cards the store wrote") {
  Workspace ws("plugins: []\n");
  auto first = ws.Gate({"card", "create", "--title", "Export the audit log", "--body", "Body."});
  CHECK(first.exit_code == 0);
  CHECK(first.out == "0001-export-the-audit-log\n");
  test::Spit(ws / "body.md", "From a file.\n");
  auto second = ws.Gate({"card", "create", "--title", "Second one", "--slug", "second", "--class",
                         "express", "--body-file", "body.md"});
  CHECK(second.exit_code == 0);
  CHECK(second.out == "0002-second\n");

  auto list = ws.Gate({"card", "list"});
  CHECK(list.exit_code == 0);
  CHECK(list.out ==
        "0001-export-the-audit-log        draft       r1    Export the audit log\n"
        "0002-second                      draft       r1    Second one\n");
  auto list_json = ws.Gate({"card", "list", "--json"});
  CHECK(list_json.exit_code == 0);
  CHECK(nlohmann::json::parse(list_json.out) ==
        nlohmann::json::parse(R"([{"id":"0001-export-the-audit-log","stage":"draft",
            "stageRevision":1,"title":"Export the audit log"},
            {"id":"0002-second","stage":"draft","stageRevision":1,"title":"Second one"}])"));

  auto shown = ws.Gate({"card", "show", "0002-second", "--json"});
  CHECK(shown.exit_code == 0);
  auto j = nlohmann::json::parse(shown.out);
  CHECK(j["title"] == "Second one");
  CHECK(j["serviceClass"] == "express");
  CHECK(j["body"] == "From a file.");
  CHECK(j["root"] == ws.root());
  CHECK(j["path"] == ws.root() + "/tasks/0002-second/card.md");
  auto text = ws.Gate({"card", "show", "0002-second"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.rfind("0002-second: Second one\n  stage:    draft\n  revision: 1\n"
                       "  class:    express\n  updated:  ",
                       0) == 0);
  CHECK(text.out.find("  history:\n    r1 ") != std::string::npos);
}

TEST_CASE("artifact add stores the file as artifacts/<rev>-<kind>.md and journals it") {
  Workspace ws("plugins: []\n");
  REQUIRE(ws.Gate({"card", "create", "--title", "Export the audit log"}).exit_code == 0);
  test::Spit(ws / "d.md", "# Design\n");
  auto r = ws.Gate(
      {"artifact", "add", "0001-export-the-audit-log", "design", "d.md", "--by", "agent:s-1"});
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "registered design on card 0001-export-the-audit-log as artifacts/2-design.md "
        "(revision 2)\n");
  const std::string dir = ws.root() + "/tasks/0001-export-the-audit-log";
  CHECK(test::Slurp(dir + "/artifacts/2-design.md") == "# Design\n");
  auto lines = Lines(test::Slurp(dir + "/journal.jsonl").value_or(""));
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].find("\"type\":\"artifact\",\"path\":\"artifacts/2-design.md\",\"stage\":"
                      "\"draft\",\"by\":{\"kind\":\"agent\",\"session\":\"s-1\"},\"kind\":"
                      "\"design\"}") != std::string::npos);
  auto shown = ws.Gate({"card", "show", "0001-export-the-audit-log"});
  CHECK(shown.out.find("  artifacts:\n    r2 design artifacts/2-design.md\n") != std::string::npos);
}

TEST_CASE("config check refuses an undefined provider, and the move it names fails closed") {
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  yaml.provider = "ghost";
  Workspace ws(yaml.Text());
  const std::string error =
      ws / "devflow-gate.yaml" +
      ": plugins[0](devflow-agent-gate): edges[\"designing->ready\"].provider \"ghost\" is not "
      "defined under providers; moves on this edge will fail closed; define it under providers "
      "or fix the name";
  auto r = ws.Gate({"config", "check"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.rfind(ws / "devflow-gate.yaml" +
                        ": not usable\n  waterfall: devflow-agent-gate\n  providers:",
                    0) == 0);
  CHECK(r.out.find("checker") != std::string::npos);
  CHECK(r.err == "error: " + error + "\n");
  auto j = ws.Gate({"config", "check", "--json"});
  CHECK(j.exit_code == 2);
  auto parsed = nlohmann::json::parse(j.out);
  CHECK(parsed["ok"] == false);
  CHECK(parsed["problems"] == nlohmann::json::array({error}));
  // The config in the workspace is a trust warning of its own (tests/config/trust_test.cc).
  const std::string trust = "the config file " + ws / "devflow-gate.yaml" +
                            " lies inside the workspace " + ws.path() +
                            ", which the judged agent can write: it can change what decides its "
                            "own moves; keep it outside (pass --config FILE or set "
                            "DEVFLOW_GATE_CONFIG; docs/security.md)";
  // And so is an express card's way around the gated edge (W1; config_check_test.cc).
  const std::string bypass =
      "cards of class express and emergency may move draft->developing, which no plugin gates, "
      "and so skip designing->ready, which the config gates: such a card passes no check on the "
      "way (reference §1.4); gate draft->developing too (the same policy as designing->ready), "
      "or do not create cards of that class";
  CHECK(parsed["warnings"] == nlohmann::json::array({trust, bypass}));

  // And the move it names fails closed at check time (the load accepts the file).
  ws.CardInDesigning();
  auto moved = ws.Gate({"move", ws.card(), "ready"});
  CHECK(moved.exit_code == 3);
  CHECK(moved.out.find("could not run: subagent provider \"ghost\" is not registered;") !=
        std::string::npos);
}

TEST_CASE("--help on every command exits 0 and prints usage on stdout") {
  Workspace ws("plugins: []\n");
  const std::vector<std::vector<std::string>> commands{
      {},
      {"card"},
      {"card", "create"},
      {"card", "show"},
      {"card", "list"},
      {"artifact"},
      {"artifact", "add"},
      {"move"},
      {"config"},
      {"config", "check"},
      {"checker"},
      {"checker", "grounding"},
  };
  for (auto args : commands) {
    std::string name;
    for (const auto& a : args) name += a + " ";
    args.push_back("--help");
    auto r = ws.Gate(args);
    INFO("command: " << name << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err == "");
    CHECK(r.out.size() > 50);
  }
  CHECK(ws.Gate({"move", "--help"}).out.find("--expect-revision") != std::string::npos);
  CHECK(ws.Gate({"checker", "grounding", "--help"})
            .out.rfind("usage: devflow-gate checker grounding", 0) == 0);
}

}  // namespace
}  // namespace devflow::e2e

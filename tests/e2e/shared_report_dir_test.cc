// A report dir outside the devflow root, shared by two roots (issue 7, trial20b 2-1): one root's
// veto report never replaces the other's; each root's ledger row, answer and `reports list`
// name its own. Two agent gates of one config on one edge sharing a dir are refused.
#include "config/config.h"
#include "e2e/workspace.h"
#include "reports/gate_layout.h"

namespace devflow::e2e {
namespace {

// The last ledger row of `ws`'s root.
nlohmann::json LastRow(const Workspace& ws) {
  auto rows = Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
  REQUIRE(!rows.empty());
  return nlohmann::json::parse(rows.back());
}

}  // namespace

TEST_CASE("two roots sharing an absolute reportDir each keep their own veto report") {
  test::TempDir shared;
  GateYaml yaml;
  yaml.command = {Fixture("e2e/veto_root.sh")};
  const std::string text = yaml.Text() + "      reportDir: " + shared.path() + "\n";
  Workspace a(text);
  Workspace b(text);
  a.CardInDesigning();
  b.CardInDesigning();  // the same card id, at the same revision 4
  auto moved_a = a.Gate({"move", a.card(), "ready"});
  auto moved_b = b.Gate({"move", b.card(), "ready"});
  INFO(moved_a.out << moved_a.err << moved_b.out << moved_b.err);
  REQUIRE(moved_a.exit_code == 1);
  REQUIRE(moved_b.exit_code == 1);

  const std::string name = a.card() + "-designing-ready-r4.md";
  const std::string report_a = shared.path() + "/" + RootReportTag(a.root()) + "/" + name;
  const std::string report_b = shared.path() + "/" + RootReportTag(b.root()) + "/" + name;
  REQUIRE(report_a != report_b);
  // Each answer and ledger row names its own root's report, and that report is about its root.
  CHECK((moved_a.out + moved_a.err).find("full report: " + report_a) != std::string::npos);
  CHECK((moved_b.out + moved_b.err).find("full report: " + report_b) != std::string::npos);
  CHECK(LastRow(a)["report"] == report_a);
  CHECK(LastRow(b)["report"] == report_b);
  for (const auto& [ws, report] : {std::pair{&a, report_a}, std::pair{&b, report_b}}) {
    const std::string text_of = test::Slurp(report).value_or("<missing>");
    INFO(report << ":\n" << text_of);
    CHECK(text_of.find("- card: " + ws->card() + "\n") != std::string::npos);
    CHECK(text_of.find("- root: " + ws->root() + "\n") != std::string::npos);
    CHECK(text_of.find("vetoed for " + ws->root() + "\n") != std::string::npos);
  }
  // `reports list` of each root lists its own report, not the other's.
  auto list_a = a.Gate({"reports", "list"});
  auto list_b = b.Gate({"reports", "list"});
  INFO(list_a.out << list_a.err << list_b.out << list_b.err);
  CHECK(list_a.out.find(report_a) != std::string::npos);
  CHECK(list_a.out.find(report_b) == std::string::npos);
  CHECK(list_b.out.find(report_b) != std::string::npos);
  CHECK(list_b.out.find(report_a) == std::string::npos);
}

TEST_CASE("the default report dir inside the root keeps upstream's report name and bytes") {
  GateYaml yaml;
  yaml.command = {Fixture("e2e/veto_root.sh")};
  Workspace ws(yaml.Text());
  ws.CardInDesigning();
  auto moved = ws.Gate({"move", ws.card(), "ready"});
  INFO(moved.out << moved.err);
  REQUIRE(moved.exit_code == 1);
  const std::string report =
      ws.root() + "/reports/agent-gate/" + ws.card() + "-designing-ready-r4.md";
  CHECK(LastRow(ws)["report"] == report);
  const std::string text = test::Slurp(report).value_or("<missing>");
  CHECK(text.find("- card: " + ws.card() + "\n") != std::string::npos);
  CHECK(text.find("- root: ") == std::string::npos);
}

TEST_CASE("two agent gates of one config on one edge sharing a reportDir are refused") {
  GateYaml yaml;
  yaml.command = {Fixture("e2e/veto_root.sh")};
  std::string gate = yaml.Text().substr(yaml.Text().find("  - id: devflow-agent-gate"));
  gate += "      reportDir: /tmp/shared-gate-reports\n";
  std::string text = yaml.Text().substr(0, yaml.Text().find("  - id: devflow-agent-gate"));
  text += gate + gate;
  Workspace ws(text);
  const std::string file = ws / "devflow-gate.yaml";
  const std::string expected =
      "plugins[0](devflow-agent-gate): reportDir /tmp/shared-gate-reports is used by plugins #0 "
      "and #1 (both check designing->ready); reports would replace each other";
  auto checked = ws.Gate({"config", "check"});
  INFO(checked.out << checked.err);
  CHECK(checked.exit_code == 2);
  CHECK(checked.err.find("error: " + file + ": " + expected + "\n") != std::string::npos);
  auto created = ws.Gate({"card", "create", "--title", "Export the audit log"});
  REQUIRE(created.exit_code == 0);
  auto moved = ws.Gate({"move", Lines(created.out).at(0), "designing"});
  INFO(moved.out << moved.err);
  CHECK(moved.exit_code == 2);
  CHECK(moved.err.find(file + ": " + expected) != std::string::npos);
}

}  // namespace devflow::e2e

namespace devflow::e2e {

TEST_CASE(
    "agent gates on disjoint edges may share a report dir, a shared cache dir on one edge "
    "may not") {
  auto load = [](const std::string& a, const std::string& b) {
    Result<GateConfig> config = LoadConfigText(
        "plugins:\n"
        "  - id: devflow-agent-gate\n"
        "    config:\n"
        "      edges: {'" +
            a +
            "': {provider: p, prompt: x}}\n"
            "      verdictCacheDir: /srv/cache\n"
            "  - id: devflow-agent-gate\n"
            "    config:\n"
            "      edges: {'" +
            b +
            "': {provider: p, prompt: x}}\n"
            "      verdictCacheDir: /srv/cache\n",
        "devflow-gate.yaml");
    REQUIRE(config.ok());
    return SharedGateDirs(*config, "/ws/.devflow");
  };
  // Both default report dirs (<root>/reports/agent-gate) and one cache dir: names and keys
  // carry the edge, so nothing can be replaced.
  CHECK(load("designing->ready", "ready->developing").empty());
  CHECK(load("designing->ready", "designing->ready") ==
        std::vector<std::string>{
            "plugins[0](devflow-agent-gate): reportDir /ws/.devflow/reports/agent-gate is used by "
            "plugins #0 and #1 (both check designing->ready); reports would replace each other",
            "plugins[0](devflow-agent-gate): verdictCacheDir /srv/cache is used by plugins #0 and "
            "#1 (both check designing->ready); cached verdicts would replace each other"});
}

}  // namespace devflow::e2e

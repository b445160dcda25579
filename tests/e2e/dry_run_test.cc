// `move --dry-run` through the real binary: the whole waterfall and the checker run, and the
// workspace (root, report dir, cache dir) is byte-identical afterwards.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "e2e/workspace.h"
#include "reports/gate_layout.h"

namespace devflow::e2e {
namespace {

// A card in designing under a config whose checker is `command`, with a report dir and a cache
// dir outside the root (relative to the workspace).
void Prepare(Workspace& ws, std::vector<std::string> command, int timeout_ms = 20000) {
  GateYaml yaml;
  yaml.command = std::move(command);
  yaml.timeout_ms = timeout_ms;
  yaml.cache_dir = ".gate-cache";
  std::string text = yaml.Text() + "      reportDir: .gate-reports\n";
  ws.WriteConfig(text);
  ws.CardInDesigning();
}

TEST_CASE("dry run of an allowed move prints the would-be move and writes nothing (exit 0)") {
  Workspace ws("");
  Prepare(ws, {Fixture("checkers/allow.sh")});
  auto before = test::Snapshot(ws.path());

  auto r = ws.Gate({"move", ws.card(), "ready", "--dry-run"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "dry run: card 0001-export-the-audit-log would move designing->ready; nothing was "
        "written\n"
        "  check by agent: ok\n");
  CHECK(test::Snapshot(ws.path()) == before);
  CHECK(ws.ShowJson()["stageRevision"] == 4);
}

// Issue 7 item 12, trial14 D2: the checker's scratch dir comes and goes, and so does the
// per-user parent a dry run had to make for it (`$TMPDIR/devflow-gate-<euid>`); a real move
// keeps the parent (its next checks and sweeps use it).
TEST_CASE("dry run leaves TMPDIR as it found it, the scratch parent included") {
  Workspace ws("");
  Prepare(ws, {Fixture("checkers/allow.sh")});
  test::TempDir tmp;
  auto r = ws.Gate({"move", ws.card(), "ready", "--dry-run"}, {{"TMPDIR", tmp.path()}});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(std::filesystem::is_empty(tmp.path()));
  auto real = ws.Gate({"move", ws.card(), "ready"}, {{"TMPDIR", tmp.path()}});
  CHECK(real.exit_code == 0);
  CHECK_FALSE(std::filesystem::is_empty(tmp.path()));
}

TEST_CASE("dry run of a vetoed move prints the report text and writes nothing (exit 1)") {
  Workspace ws("");
  Prepare(ws, {Fixture("e2e/veto.sh")});
  auto before = test::Snapshot(ws.path());

  auto r = ws.Gate({"move", ws.card(), "ready", "--dry-run"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 1);
  // A reportDir outside the root: the root's own subdirectory of it (reports/gate_layout.h).
  const std::string report = ws / ".gate-reports/" + RootReportTag(ws.root()) +
                             "/0001-export-the-audit-log-designing-ready-r4.md";
  CHECK(r.out.rfind(
            "devflow: transition of card 0001-export-the-audit-log to \"ready\" was rejected: "
            "agent check vetoed designing->ready: design cites REQ-9; the full report would be "
            "written to " +
                report + "\n" + "dry run: the veto report that would be written to " + report +
                ":\n# Agent check veto: card 0001-export-the-audit-log, edge designing->ready\n",
            0) == 0);
  CHECK(r.out.find("- checked inputs: prd:3, design:4\n") != std::string::npos);
  CHECK(r.out.find("## Summary\n\ndesign cites REQ-9\n\n## Findings\n\n"
                   "- REQ-9 is not in the PRD\n- date 2027-01-01 is not in the PRD\n") !=
        std::string::npos);
  const std::string tail = "- date 2027-01-01 is not in the PRD\ndry run: nothing was written\n";
  REQUIRE(r.out.size() > tail.size());
  CHECK(r.out.substr(r.out.size() - tail.size()) == tail);
  CHECK(r.out.find("full report: ") == std::string::npos);  // names no file it did not write
  CHECK(!std::filesystem::exists(report));
  CHECK(test::Snapshot(ws.path()) == before);

  // --json: the same message; the text the report would have is in reportText.
  auto j = ws.Gate({"move", ws.card(), "ready", "--dry-run", "--json"});
  CHECK(j.exit_code == 1);
  auto parsed = nlohmann::json::parse(j.out);
  CHECK(parsed["message"].get<std::string>().find("; the full report would be written to " +
                                                  report) != std::string::npos);
  CHECK(parsed["message"].get<std::string>().find("full report: ") == std::string::npos);
  CHECK(parsed["reportText"].get<std::string>().find("## Summary\n\ndesign cites REQ-9\n") !=
        std::string::npos);
  CHECK(test::Snapshot(ws.path()) == before);
}

TEST_CASE("dry run of a failing checker prints would park and writes nothing (exit 3)") {
  Workspace ws("");
  Prepare(ws, {Fixture("checkers/fail.sh")});
  auto before = test::Snapshot(ws.path());

  auto r = ws.Gate({"move", ws.card(), "ready", "--dry-run"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out ==
        "devflow: transition of card 0001-export-the-audit-log to \"ready\" was rejected: agent "
        "check for designing->ready could not run: the checker ended with exit code 7: boom; the "
        "card would be parked blocked until the deployment recovers\n"
        "dry run: would park card 0001-export-the-audit-log blocked: agent check for "
        "designing->ready failed closed: the checker ended with exit code 7: boom\n"
        "dry run: nothing was written\n");
  CHECK(test::Snapshot(ws.path()) == before);
  CHECK(ws.ShowJson()["stage"] == "designing");
}

TEST_CASE("dry run of a timing-out checker kills its process group and writes nothing (exit 3)") {
  Workspace ws("");
  Prepare(ws, {Fixture("e2e/grandchild_holds_stdout.sh")}, 500);
  auto before = test::Snapshot(ws.path());
  const std::string marker = "DEVFLOW_GATE_ROOT=" + ws.root();
  ProcessWatch watch(marker);
  auto r = ws.Gate({"move", ws.card(), "ready", "--dry-run"});
  watch.Stop();
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("\ndry run: would park card 0001-export-the-audit-log blocked: agent check for "
                   "designing->ready failed closed: the checker exceeded checkTimeoutMs (500ms)\n"
                   "dry run: nothing was written\n") != std::string::npos);
  CHECK(test::Snapshot(ws.path()) == before);
  CHECK(watch.seen().size() >= 2);
  CHECK(ProcessesWithEnv(marker).empty());
}

TEST_CASE("the same moves for real write what the dry runs did not") {
  // The control for the three cases above: without --dry-run each one changes the workspace.
  Workspace ws("");
  Prepare(ws, {Fixture("e2e/veto.sh")});
  auto r = ws.Gate({"move", ws.card(), "ready"});
  CHECK(r.exit_code == 1);
  CHECK(test::Slurp(ws / ".gate-reports/" + RootReportTag(ws.root()) +
                    "/0001-export-the-audit-log-designing-ready-r4.md"));
  auto cached = test::Snapshot(ws / ".gate-cache");
  CHECK(cached.size() == 1);  // one veto record
}

}  // namespace
}  // namespace devflow::e2e

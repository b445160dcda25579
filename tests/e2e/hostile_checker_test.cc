// Hostile checkers through the real binary: each fault fails closed (exit 3), parks the card
// blocked with the upstream reason, and leaves nothing of the checker running.
#include <doctest/doctest.h>

#include <filesystem>
#include <vector>

#include <chrono>
#include <set>
#include <string>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

using Clock = std::chrono::steady_clock;

const char kEdge[] = "designing->ready";

// The checker ran, so the message names its fault report (issue 10 item 8).
std::string CouldNotRun(const Workspace& ws, const std::string& fault) {
  const std::string dir = ws.root() + "/reports/agent-gate/faults";
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(e.path().filename().string());
  }
  REQUIRE(names.size() == 1);
  return "devflow: transition of card 0001-export-the-audit-log to \"ready\" was rejected: "
         "agent check for designing->ready could not run: " +
         fault +
         "; the card is parked blocked until the deployment recovers; fault report: " + dir + "/" +
         names[0] + "\n";
}

// The journal's last line is the park at revision 5 with the agent gate's reason and actor.
void RequireParked(const Workspace& ws, const std::string& fault) {
  auto lines = ws.JournalLines();
  REQUIRE(lines.size() == 5);
  const std::string& park = lines[4];
  CHECK(park.rfind("{\"rev\":5,\"at\":\"", 0) == 0);
  CHECK(park.find("\"type\":\"transition\",\"from\":\"designing\",\"to\":\"blocked\","
                  "\"by\":{\"kind\":\"command\",\"name\":\"devflow-agent-gate\"},"
                  "\"reason\":\"agent check for designing->ready failed closed: " +
                  fault + "\"}") != std::string::npos);
  auto card = ws.ShowJson();
  CHECK(card["stage"] == "blocked");
  CHECK(card["blockedFrom"] == "designing");
  CHECK(card["stageRevision"] == 5);
}

std::string ParkedLine() {
  return "card 0001-export-the-audit-log parked blocked (revision 5); recover with: "
         "devflow-gate move 0001-export-the-audit-log designing\n";
}

TEST_CASE(
    "a checker whose grandchild holds stdout open ends at the timeout, parked, nothing left") {
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("e2e/grandchild_holds_stdout.sh")};
  yaml.timeout_ms = 500;
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();

  const std::string marker = "DEVFLOW_GATE_ROOT=" + ws.root();
  ProcessWatch watch(marker);
  auto t0 = Clock::now();
  auto r = ws.Gate({"move", ws.card(), "ready"});
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  watch.Stop();
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(seconds < 10.0);  // the timeout, the TERM grace, a park: not the grandchild's 30 s
  const std::string fault = "the checker exceeded checkTimeoutMs (500ms)";
  CHECK(r.out == CouldNotRun(ws, fault) + ParkedLine());
  RequireParked(ws, fault);

  // Both the checker and its grandchild ran (sh and sleep), and neither outlives the move.
  auto seen = watch.seen();
  CHECK(seen.size() >= 2);
  for (int pid : seen) {
    INFO("pid " << pid);
    CHECK_FALSE(Running(pid));
  }
  CHECK(ProcessesWithEnv(marker).empty());
}

TEST_CASE("a checker that writes 20 MiB before reading its 20 MiB prompt hits the reply cap") {
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("checkers/flood_stdout_first.sh")};
  ws.WriteConfig(yaml.Text());
  // A 20 MiB design makes the prompt larger than any pipe buffer.
  std::string design = kDesign + std::string(20 << 20, 'd') + "\n";
  ws.CardInDesigning(design);

  auto t0 = Clock::now();
  auto r = ws.Gate({"move", ws.card(), "ready"});
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(seconds < 15.0);  // no deadlock: the 20 s default timeout is never reached
  const std::string fault = "the checker reply exceeded 8388608 bytes";
  CHECK(r.out == CouldNotRun(ws, fault) + ParkedLine());
  RequireParked(ws, fault);
}

TEST_CASE("a checker that exits 7 fails closed naming the exit code and its last stderr line") {
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("checkers/fail.sh")};
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();

  auto r = ws.Gate({"move", ws.card(), "ready"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  const std::string fault = "the checker ended with exit code 7: boom";
  CHECK(r.out == CouldNotRun(ws, fault) + ParkedLine());
  RequireParked(ws, fault);
}

TEST_CASE("a checker killed by SIGSEGV fails closed naming the signal") {
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("checkers/kill_self.sh"), "SEGV"};
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();

  auto r = ws.Gate({"move", ws.card(), "ready"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  const std::string fault = "the checker ended with signal SIGSEGV";
  CHECK(r.out == CouldNotRun(ws, fault) + ParkedLine());
  RequireParked(ws, fault);
}

TEST_CASE("a checker sees only fds 0-2 and the minimal environment plus its provider's names") {
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("e2e/probe_veto.py")};
  yaml.env = {"DG_PASSED"};
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();

  auto r =
      ws.Gate({"move", ws.card(), "ready"}, {{"DG_HOST_SECRET", "x"}, {"DG_PASSED", "visible"}});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 1);
  const std::string report =
      ws.root() + "/reports/agent-gate/" + ws.card() + "-designing-ready-r4.md";
  CHECK(r.out ==
        "devflow: transition of card 0001-export-the-audit-log to \"ready\" was rejected: agent "
        "check vetoed designing->ready: inherited state listed; full report: " +
            report + "\n");

  auto text = test::Slurp(report);
  REQUIRE(text);
  std::set<std::string> findings;
  bool in_findings = false;
  for (const auto& line : Lines(*text)) {
    if (line == "## Findings") in_findings = true;
    if (in_findings && line.rfind("- ", 0) == 0) findings.insert(line.substr(2));
  }
  const std::set<std::string> expected{
      "fd 0",
      "fd 1",
      "fd 2",
      "env DEVFLOW_GATE_CARD=0001-export-the-audit-log",
      "env DEVFLOW_GATE_EDGE=designing->ready",
      // The gate's inputs manifest (checker/dispatch.h: <kind>:<rev>:<bytes>, prompt order).
      "env DEVFLOW_GATE_INPUTS=prd:3:" + std::to_string(sizeof kPrd - 1) +
          ",design:4:" + std::to_string(sizeof kDesign - 1),
      "env DEVFLOW_GATE_ROOT=" + ws.root(),
      "env DG_PASSED=visible",
      "env HOME",
      "env LANG",
      "env PATH",
      "env TMPDIR",
  };
  std::string listed;
  for (const auto& f : findings) listed += f + "\n";
  INFO("findings:\n" << listed);
  CHECK(findings == expected);
  CHECK(text->find("DG_HOST_SECRET") == std::string::npos);
  // A veto is not a fault: the card stays in designing, no park line.
  CHECK(ws.JournalLines().size() == 4);
  CHECK(ws.ShowJson()["stage"] == "designing");
}

}  // namespace
}  // namespace devflow::e2e

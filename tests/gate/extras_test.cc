// Cases beyond upstream's spec files: the bug-derived and edge cases of
// reference/devflow-upstream.md §4.12 and §7.3, and the dry run of SPEC §7.
#include "gate/fixture.h"
#include "reports/gate_layout.h"

namespace devflow::gatetest {
namespace {

TEST_CASE("§7.3: two roots with the same card id never share a cached verdict") {
  // One absolute cache directory shared by two roots: the key carries the root, so the second
  // root's twin card gets its own checker run and its own record.
  TempDir shared;
  const std::string cache_dir = shared.path() + "/verdicts";
  Rig first;
  Rig second;
  first.config.verdict_cache_dir = cache_dir;
  second.config.verdict_cache_dir = cache_dir;
  second.checker = &first.scripted;  // one checker for both, to count dispatches together
  WriteCard(first.root, "0601-same", {{"design", "DESIGN\n"}});
  WriteCard(second.root, "0601-same", {{"design", "DESIGN\n"}});
  first.scripted.Allow("design is sound");
  first.scripted.Veto("the other project's design is hollow");
  CHECK(first.Move("0601-same").code == "committed");
  MoveOutcome other = second.Move("0601-same");
  CHECK(other.message ==
        Rejected("0601-same",
                 "agent check vetoed designing->ready: the other project's design is hollow; "
                 "full report: " +
                     second.ReportDir() + "/0601-same-designing-ready-r3.md"));
  REQUIRE(first.scripted.requests.size() == 2);
  CHECK(first.scripted.requests[0].root == first.root);
  CHECK(first.scripted.requests[1].root == second.root);
  CHECK(first.Files(cache_dir).size() == 2);
}

TEST_CASE(
    "§4.12: an agent check on a recovery edge that fails closed only warns (blocked->blocked is "
    "illegal)") {
  Rig rig;
  rig.config.edges.push_back(AgentEdgeConfig{
      Edge{Location::kBlocked, Location::kDesigning}, "checker", {}, "Check the card may resume."});
  const std::string id = "0602-recovery";
  WriteCard(rig.root, id);
  const std::string dir = rig.CardDir(id);
  Spit(dir + "/journal.jsonl", rig.Journal(id) + ParkLine(3, "spawn backend down") + "\n");
  const std::string before = rig.Journal(id);
  rig.scripted.Fault("spawn backend down");
  MoveOutcome outcome = rig.Move(id, Location::kDesigning);
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.message ==
        Rejected(id,
                 "agent check for blocked->designing could not run: spawn backend down; nothing "
                 "was committed and the card was NOT parked: card " +
                     id +
                     " cannot move from \"blocked\" to \"blocked\"; a blocked card returns "
                     "only to \"designing\"",
                 "designing"));
  CHECK(outcome.failed_closed);
  CHECK(!outcome.parked);
  CHECK(rig.warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: failed to park card 0602-recovery blocked: "
                                 "card 0602-recovery cannot move from \"blocked\" to \"blocked\"; "
                                 "a blocked card returns only to \"designing\""});
  Card card = rig.Read(id);
  CHECK(card.stage == Location::kBlocked);
  CHECK(card.blocked_from == Location::kDesigning);
  CHECK(card.stage_revision == 3);
  CHECK(rig.Journal(id) == before);
}

TEST_CASE(
    "dry run: a vetoed move writes no report, cache record or journal line and returns the "
    "report text") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0603-dry-veto";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const auto before = Snapshot(rig.workspace);
  rig.scripted.Veto("the design is hollow", {"no error handling"});
  MoveOutcome outcome = rig.Move(id, Location::kReady, /*dry_run=*/true);
  const std::string path = rig.ReportDir() + "/0603-dry-veto-designing-ready-r4.md";
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.message ==
        Rejected(id,
                 "agent check vetoed designing->ready: the design is hollow; the full report "
                 "would be written to " +
                     path));
  CHECK(!outcome.failed_closed);
  REQUIRE(outcome.reports.size() == 1);
  CHECK(outcome.reports[0].path == path);
  CHECK(!outcome.reports[0].written);
  CHECK(outcome.reports[0].text ==
        "# Agent check veto: card 0603-dry-veto, edge designing->ready\n\n- card: 0603-dry-veto\n"
        "- edge: designing->ready\n- revision: 4\n- checked inputs: prd:3, design:4\n- at: "
        "2026-09-16T08:00:00.000Z\n\n## Summary\n\nthe design is hollow\n\n## Findings\n\n- no "
        "error handling\n");
  CHECK(Snapshot(rig.workspace) == before);
  CHECK(rig.scripted.requests.size() == 1);
}

TEST_CASE("dry run: a fail-closed move parks nothing and says it would park") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0604-dry-fault";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const auto before = Snapshot(rig.workspace);
  rig.scripted.Fault("spawn backend down");
  MoveOutcome outcome = rig.Move(id, Location::kReady, /*dry_run=*/true);
  CHECK(outcome.code == "vetoed");
  // Nothing is parked, so the reason must not say it is.
  CHECK(outcome.message ==
        Rejected(id,
                 "agent check for designing->ready could not run: spawn backend down; the card "
                 "would be parked blocked until the deployment recovers"));
  CHECK(outcome.failed_closed);
  CHECK(!outcome.parked);
  CHECK(outcome.park_message ==
        "would park card 0604-dry-fault blocked: agent check for designing->ready failed closed: "
        "spawn backend down");
  CHECK(Snapshot(rig.workspace) == before);
  CHECK(rig.Read(id).stage == Location::kDesigning);
  CHECK(rig.warnings.lines.empty());
}

TEST_CASE("dry run: an allowed move commits nothing and caches nothing") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0605-dry-allow";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const auto before = Snapshot(rig.workspace);
  rig.scripted.Allow("design is sound");
  MoveOutcome outcome = rig.Move(id, Location::kReady, /*dry_run=*/true);
  CHECK(outcome.ok);
  CHECK(outcome.code == "committed");
  CHECK(outcome.message ==
        "dry run: card 0605-dry-allow would move designing->ready; nothing was written");
  REQUIRE(outcome.checks.size() == 1);
  CHECK(outcome.checks[0].summary == "design is sound");
  CHECK(Snapshot(rig.workspace) == before);
  CHECK(rig.scripted.requests.size() == 1);
}

TEST_CASE("§4.9: a fault is never cached: the retry after recovery dispatches again") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0606-fault-uncached";
  WriteCard(rig.root, id, {{"design", "DESIGN\n"}});
  rig.scripted.Fault("spawn backend down");
  rig.scripted.Allow("design is sound");
  ExpectParked(rig, rig.Move(id), id, "spawn backend down", 4);
  CHECK(rig.Files(rig.CacheDir()).empty());
  REQUIRE(rig.Move(id, Location::kDesigning).code == "committed");
  MoveOutcome retry = rig.Move(id);
  CHECK(retry.code == "committed");
  CHECK(rig.scripted.requests.size() == 2);
  REQUIRE(retry.checks.size() == 1);
  CHECK(retry.checks[0].summary == "design is sound");
}

TEST_CASE("SPEC §3: keeps the veto report where reportDir points, resolved against the workspace") {
  Rig rig;
  rig.config.report_dir = "audit/agent-gate";
  const std::string id = "0607-report-dir";
  WriteCard(rig.root, id, {{"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  MoveOutcome outcome = rig.Move(id);
  // Outside the root: the root's own subdirectory of it (reports/gate_layout.h).
  const std::string path = rig.workspace + "/audit/agent-gate/" + RootReportTag(rig.root) +
                           "/0607-report-dir-designing-ready-r3.md";
  CHECK(outcome.message ==
        Rejected(
            id, "agent check vetoed designing->ready: the design is hollow; full report: " + path));
  CHECK(Slurp(path).has_value());
  CHECK(rig.Files(rig.ReportDir()).empty());
}

}  // namespace
}  // namespace devflow::gatetest

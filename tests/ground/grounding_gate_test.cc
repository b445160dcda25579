// devflow-grounding-gate in the waterfall (SPEC §6): a real Store in a TempDir, the Executor,
// and the ledger under the root.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "gate/fixture.h"
#include "plugin/grounding_gate.h"

namespace devflow {
namespace {

using gatetest::LambdaPolicy;
using gatetest::LastLine;
using gatetest::LineCount;
using gatetest::Rejected;
using gatetest::WriteCard;
using test::FaultyFileSystem;
using test::FixedClock;
using test::Slurp;
using test::Spit;
using test::TempDir;

const char kEdge[] = "designing->ready";

struct GroundRig {
  TempDir tmp;
  std::string root = tmp.path() + "/.devflow";
  FixedClock clock{"2026-09-16T08:00:00.000Z"};
  CollectedWarnings warnings;
  FaultyFileSystem fs;
  Store store{root, fs, clock, warnings};
  GroundingGateConfig config = DefaultConfig();
  std::vector<Policy*> after;

  static GroundingGateConfig DefaultConfig() {
    GroundingGateConfig c;
    c.edges.push_back(
        GroundingEdgeConfig{Edge{Location::kDesigning, Location::kReady}, "design", {"prd"}, {}});
    return c;
  }
  MoveOutcome Move(const std::string& id, bool dry_run = false) {
    GroundingGate gate(
        config,
        [this](const std::string& r, const std::string& card) {
          return Store(r, fs, clock, warnings).Read(card);
        },
        fs);
    std::vector<Policy*> policies = {&gate};
    policies.insert(policies.end(), after.begin(), after.end());
    Executor executor(store, policies, clock, warnings);
    MoveRequest request;
    request.id = id;
    request.to = Location::kReady;
    request.dry_run = dry_run;
    return executor.Move(request);
  }
  std::string Ledger() const { return Slurp(root + "/ledger/grounding.jsonl").value_or(""); }
  std::string Journal(const std::string& id) const {
    return Slurp(root + "/tasks/" + id + "/journal.jsonl").value_or("");
  }
};

}  // namespace

TEST_CASE("grounding gate: a grounded claim commits with its check and a verified ledger row") {
  GroundRig rig;
  WriteCard(rig.root, "0001-a",
            {{"prd", "Deliver #41 by 2026-09-24.\n"}, {"design", "Ships #41 on 2026-09-24.\n"}});
  const MoveOutcome outcome = rig.Move("0001-a");
  CHECK(outcome.code == "committed");
  REQUIRE(outcome.checks.size() == 1);
  CHECK(outcome.checks[0].by == Actor{"command", std::string("devflow-grounding-gate"), {}});
  CHECK(outcome.checks[0].summary ==
        "every date, URL, ticket ref and hash in design (rev 4) appears in the evidence");
  CHECK(rig.Ledger() ==
        "{\"ts\": \"2026-09-16T08:00:00+00:00\", \"label\": \"0001-a designing->ready\", "
        "\"verdict\": \"verified\", \"state\": \"allowed\", \"kinds\": [\"date\", \"url\", "
        "\"ref\", \"hash\"], \"reject_reasons\": [], \"rejected_claim\": null, \"card\": "
        "\"0001-a\", \"edge\": \"designing->ready\", \"claim\": {\"kind\": \"design\", \"rev\": "
        "4}, \"evidence\": [\"title\", \"body\", \"prd:3\"], \"options\": {\"compat\": false, "
        "\"exclude_keys\": [\"system_prompt\", \"policy\", \"seed\", \"history\", "
        "\"constitution\"], \"require\": [], \"repo\": null}}\n");
}

TEST_CASE("grounding gate: ungrounded specifics veto with every reason and are ledgered") {
  GroundRig rig;
  WriteCard(rig.root, "0001-a",
            {{"prd", "Deliver #41 by 2026-09-24.\n"}, {"design", "Ships #42 on 2026-09-25.\n"}});
  const std::string before = rig.Journal("0001-a");
  const MoveOutcome outcome = rig.Move("0001-a");
  CHECK(outcome.code == "vetoed");
  CHECK_FALSE(outcome.failed_closed);
  CHECK(outcome.message ==
        Rejected("0001-a",
                 "ungrounded specifics in design: date not in evidence: 2026-09-25 (line 1:14; "
                 "evidence has 2026-09-24); ref not in evidence: #42 (line 1:7; evidence has "
                 "#41)"));
  CHECK(rig.Journal("0001-a") == before);
  const std::string row = rig.Ledger();
  CHECK(row.find("\"verdict\": \"rejected\", \"state\": \"vetoed\"") != std::string::npos);
  CHECK(row.find("\"reject_reasons\": [\"date not in evidence: 2026-09-25 (line 1:14; evidence "
                 "has 2026-09-24)\", \"ref not in evidence: #42 (line 1:7; evidence has #41)\"], "
                 "\"rejected_claim\": \"Ships #42 on 2026-09-25.\\n\"") != std::string::npos);
}

TEST_CASE("grounding gate: the card body is evidence, and options reach the check") {
  GroundRig rig;
  WriteCard(rig.root, "0001-a", {{"prd", "nothing\n"}, {"design", "Fixes PROJ-7, see /view/3.\n"}});
  Spit(rig.root + "/tasks/0001-a/card.md", "---\ntitle: Card\n---\n\nTracks PROJ-7.\n");
  rig.config.edges[0].options.require = {R"(/view/\d+)"};
  CHECK(rig.Move("0001-a").code == "committed");

  GroundRig strict;
  WriteCard(strict.root, "0001-a", {{"prd", "PROJ-71"}, {"design", "Fixes PROJ-7.\n"}});
  CHECK(strict.Move("0001-a").message ==
        Rejected("0001-a",
                 "ungrounded specifics in design: ref not in evidence: PROJ-7 (line 1:7; "
                 "evidence has PROJ-71)"));
  strict.config.edges[0].options.compat = true;  // release_gate.py's substring matching
  CHECK(strict.Move("0001-a").code == "committed");
}

TEST_CASE("grounding gate: a missing claim artifact vetoes without parking") {
  GroundRig rig;
  WriteCard(rig.root, "0001-a", {{"prd", "#41\n"}});
  const MoveOutcome outcome = rig.Move("0001-a");
  CHECK(outcome.code == "vetoed");
  CHECK_FALSE(outcome.failed_closed);
  CHECK_FALSE(outcome.parked);
  CHECK(outcome.message ==
        Rejected("0001-a",
                 "ungrounded specifics in design: the card has no design artifact to ground; "
                 "register one with devflow-gate artifact add 0001-a design FILE"));
  CHECK(rig.Ledger().find("\"reject_reasons\": [\"claim artifact design is missing\"], "
                          "\"rejected_claim\": null") != std::string::npos);
}

TEST_CASE("grounding gate: an unreadable evidence artifact fails closed and parks the card") {
  GroundRig rig;
  WriteCard(rig.root, "0001-a", {{"prd", "#41\n"}, {"design", "#41\n"}});
  rig.fs.Fail("read", "3-prd.md", EACCES, 1);
  const MoveOutcome outcome = rig.Move("0001-a");
  const std::string fault = "a required input cannot be read: read " + rig.root +
                            "/tasks/0001-a/artifacts/3-prd.md: Permission denied (EACCES)";
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.failed_closed);
  CHECK(outcome.parked);
  CHECK(outcome.message ==
        Rejected("0001-a", "grounding check for designing->ready could not run: " + fault +
                               "; the card is parked blocked until the deployment recovers"));
  CHECK(LastLine(rig.Journal("0001-a")) ==
        "{\"rev\":5,\"at\":\"2026-09-16T08:00:00.000Z\",\"type\":\"transition\",\"from\":"
        "\"designing\",\"to\":\"blocked\",\"by\":{\"kind\":\"command\",\"name\":"
        "\"devflow-grounding-gate\"},\"reason\":\"grounding check for designing->ready failed "
        "closed: " +
            fault + "\"}");
  CHECK(rig.Ledger() == "");  // a fault is no verdict
}

TEST_CASE("grounding gate: a ledger that cannot be written fails closed") {
  GroundRig rig;
  WriteCard(rig.root, "0001-a", {{"prd", "#41\n"}, {"design", "#41\n"}});
  Spit(rig.root + "/ledger/grounding.jsonl/x", "a directory where the ledger should be");
  const MoveOutcome outcome = rig.Move("0001-a");
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.failed_closed);
  CHECK(outcome.message.find(
            "could not run: the grounding ledger could not be written: append " + rig.root +
            "/ledger/grounding.jsonl: Is a directory (EISDIR) at open") != std::string::npos);
}

TEST_CASE("grounding gate: a dry run decides but writes no ledger row") {
  GroundRig rig;
  WriteCard(rig.root, "0001-a", {{"prd", "#41\n"}, {"design", "#42\n"}});
  const MoveOutcome outcome = rig.Move("0001-a", true);
  CHECK(outcome.message ==
        Rejected("0001-a",
                 "ungrounded specifics in design: ref not in evidence: #42 (line 1:1; "
                 "evidence has #41)"));
  CHECK_FALSE(Slurp(rig.root + "/ledger/grounding.jsonl").has_value());
}

TEST_CASE("grounding gate: a relative ledger path resolves against the workspace") {
  GroundRig rig;
  rig.config.ledger = "audit/grounding.jsonl";
  WriteCard(rig.root, "0001-a", {{"prd", "#41\n"}, {"design", "#41\n"}});
  CHECK(rig.Move("0001-a").code == "committed");
  CHECK(LineCount(Slurp(rig.tmp.path() + "/audit/grounding.jsonl").value_or("")) == 1);
}

TEST_CASE("grounding gate: a downstream veto passes back unchanged, other edges delegate") {
  GroundRig rig;
  LambdaPolicy later("later", [](const Attempt&, AttemptContext&, const Next&) {
    return Decision::Veto("later says no");
  });
  rig.after = {&later};
  WriteCard(rig.root, "0001-a", {{"prd", "#41\n"}, {"design", "#41\n"}});
  CHECK(rig.Move("0001-a").message == Rejected("0001-a", "later says no"));

  GroundRig other;
  other.config.edges[0].edge = Edge{Location::kReady, Location::kDeveloping};
  WriteCard(other.root, "0001-a", {{"design", "#42\n"}});
  CHECK(other.Move("0001-a").code == "committed");
  CHECK_FALSE(Slurp(other.root + "/ledger/grounding.jsonl").has_value());
}

}  // namespace devflow

// `ledger list` / `ledger show` (issue 10 item 7) and the decision id and outcome each row
// carries (host/decision_ledger.h).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include <sys/wait.h>
#include <unistd.h>

#include "host/decision_ledger.h"
#include "operator/operator_fixture.h"
#include "reports/ledger_command.h"

namespace devflow {
namespace {

using namespace devflow::test;
using ojson = nlohmann::ordered_json;

// A row of today's host, one of an older host (no decision, no outcome), a fault that parked,
// a fault whose park failed (older row: inferred from its message), a store rejection, and a
// row with a sandbox level and a fault report (fields later hosts add).
const std::vector<std::string> kRows = {
    R"({"decision":"20260916T080000.000Z-00000001","at":"2026-09-16T08:00:00.000Z","card":"0001-a","edge":"designing->ready","revision":4,"by":{"kind":"human"},"code":"committed","ok":true,"message":"","checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"fine"}],"report":null,"parked":false,"outcome":"allowed"})",
    R"({"at":"2026-09-16T09:00:00.000Z","card":"0002-b","edge":"designing->ready","revision":4,"by":{"kind":"agent","session":"s1"},"code":"vetoed","ok":false,"message":"agent check vetoed designing->ready: no","checks":[],"report":"/r/x.md","parked":false})",
    R"({"decision":"20260917T080000.000Z-00000003","at":"2026-09-17T08:00:00.000Z","card":"0002-b","edge":"designing->ready","revision":5,"by":{"kind":"human"},"code":"vetoed","ok":false,"message":"agent check for designing->ready could not run: timeout","checks":[],"report":null,"parked":true,"outcome":"parked"})",
    R"({"at":"2026-09-17T09:00:00.000Z","card":"0003-c","edge":"ready->developing","revision":2,"by":{"kind":"human"},"code":"vetoed","ok":false,"message":"agent check for ready->developing could not run: spawn failed","checks":[],"report":null,"parked":false})",
    R"({"decision":"20260918T080000.000Z-00000005","at":"2026-09-18T08:00:00.000Z","card":"0001-a","edge":"ready->developing","revision":null,"by":{"kind":"command","name":"ci"},"code":"revision-mismatch","ok":false,"message":"card 0001-a is at revision 6, not the expected 5; re-read and retry","checks":[],"report":null,"parked":false,"outcome":"rejected"})",
    R"({"decision":"20260918T090000.000Z-00000006","at":"2026-09-18T09:00:00.000Z","card":"0003-c","edge":"ready->developing","revision":3,"by":{"kind":"human"},"code":"vetoed","ok":false,"message":"agent check for ready->developing could not run: no verdict","checks":[],"report":null,"parked":true,"outcome":"parked","sandbox":"bwrap","faultReport":"/r/fault.md"})",
};

std::string Ledger(OperatorRoot& r, const std::string& tail = "") {
  std::string text;
  for (const auto& row : kRows) text += row + "\n";
  const std::string path = r.root + "/ledger/decisions.jsonl";
  Spit(path, text + tail);
  return path;
}

TEST_CASE("ledger list prints every decision oldest first with its id, outcome and sandbox") {
  OperatorRoot r;
  const std::string path = Ledger(r);
  Ran ran = RunOp(RunLedgerCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.err == "");
  const std::string legacy2 = DerivedDecisionId(kRows[1]);
  const std::string legacy4 = DerivedDecisionId(kRows[3]);
  CHECK(ran.out ==
        "20260916T080000.000Z-00000001 2026-09-16T08:00:00.000Z 0001-a designing->ready r4 "
        "allowed (sandbox unknown, by human)\n" +
            legacy2 +
            " 2026-09-16T09:00:00.000Z 0002-b designing->ready r4 vetoed (sandbox unknown, by "
            "agent:s1): agent check vetoed designing->ready: no\n"
            "20260917T080000.000Z-00000003 2026-09-17T08:00:00.000Z 0002-b designing->ready r5 "
            "parked (sandbox unknown, by human): agent check for designing->ready could not run: "
            "timeout\n" +
            legacy4 +
            " 2026-09-17T09:00:00.000Z 0003-c ready->developing r2 fault (sandbox unknown, by "
            "human): agent check for ready->developing could not run: spawn failed\n"
            "20260918T080000.000Z-00000005 2026-09-18T08:00:00.000Z 0001-a ready->developing r? "
            "rejected (sandbox unknown, by command:ci): card 0001-a is at revision 6, not the "
            "expected 5; re-read and retry\n"
            "20260918T090000.000Z-00000006 2026-09-18T09:00:00.000Z 0003-c ready->developing r3 "
            "parked (sandbox bwrap, by human): agent check for ready->developing could not run: "
            "no verdict\n"
            "6 decisions of 6 in " +
            path + "\n");
  CHECK(std::regex_match(legacy2, std::regex("sha-[0-9a-f]{12}")));
}

TEST_CASE("ledger list filters by card, edge, outcome and time window") {
  OperatorRoot r;
  const std::string path = Ledger(r);
  auto ids = [&](const std::vector<std::string>& args) {
    Ran ran = RunOp(RunLedgerCommand, args, r.Ctx());
    REQUIRE_MESSAGE(ran.code == 0, ran.err);
    std::vector<std::string> out;
    for (const auto& line : Lines(ran.out)) out.push_back(line.substr(0, line.find(' ')));
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(ids({"list", "--card", "0001-a"}) ==
        V{"20260916T080000.000Z-00000001", "20260918T080000.000Z-00000005", "2"});
  CHECK(ids({"list", "--edge", "ready->developing", "--outcome", "parked"}) ==
        V{"20260918T090000.000Z-00000006", "1"});
  CHECK(ids({"list", "--outcome", "fault"}) == V{DerivedDecisionId(kRows[3]), "1"});
  CHECK(ids({"list", "--since", "2026-09-17", "--until", "2026-09-18T08:00Z"}) ==
        V{"20260917T080000.000Z-00000003", DerivedDecisionId(kRows[3]), "2"});
  // A duration counts back from now (the probe's clock: 2026-09-16T08:00:00.000Z).
  r.probe.now_ms += 2 * 86400000;  // 2026-09-18T08:00
  CHECK(ids({"list", "--since", "1h"}) ==
        V{"20260918T080000.000Z-00000005", "20260918T090000.000Z-00000006", "2"});
  CHECK(ids({"list", "--since", "25h", "--until", "2026-09-18T08:00:00.000Z"}) ==
        V{"20260917T080000.000Z-00000003", DerivedDecisionId(kRows[3]), "2"});

  Ran bad = RunOp(RunLedgerCommand, {"list", "--since", "yesterday"}, r.Ctx());
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "devflow-gate: ledger list: --since yesterday is not a time; pass ISO-8601 UTC "
        "(2026-09-16T08:00:00Z) or a duration (12h, 7d)\n");
  Ran outcome = RunOp(RunLedgerCommand, {"list", "--outcome", "maybe"}, r.Ctx());
  CHECK(outcome.code == 2);
  CHECK(outcome.err.find(
            "--outcome: maybe not in {allowed,vetoed,fault,parked,interrupted,rejected,intent}") !=
        std::string::npos);
}

TEST_CASE("ledger list --json gives each decision's fields, unknown ones as null") {
  OperatorRoot r;
  Ledger(r);
  Ran ran = RunOp(RunLedgerCommand, {"list", "--json", "--card", "0003-c"}, r.Ctx());
  REQUIRE(ran.code == 0);
  ojson j = ojson::parse(ran.out);
  CHECK(j["rows"] == 6);
  CHECK(j["badLines"] == 0);
  REQUIRE(j["decisions"].size() == 2);
  CHECK(
      j["decisions"][1].dump() ==
      R"({"decision":"20260918T090000.000Z-00000006","line":6,"at":"2026-09-18T09:00:00.000Z","card":"0003-c","edge":"ready->developing","revision":3,"by":"human","outcome":"parked","code":"vetoed","sandbox":"bwrap","message":"agent check for ready->developing could not run: no verdict","report":null,"faultReport":"/r/fault.md","inputsSha256":null})");
  CHECK(j["decisions"][0]["sandbox"].is_null());
}

TEST_CASE("ledger show prints every field of one decision, by stored or derived id") {
  OperatorRoot r;
  const std::string path = Ledger(r);
  Ran ran = RunOp(RunLedgerCommand, {"show", "20260916T080000.000Z-00000001"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out ==
        "decision 20260916T080000.000Z-00000001\n"
        "  at:       2026-09-16T08:00:00.000Z\n"
        "  card:     0001-a\n"
        "  edge:     designing->ready\n"
        "  revision: 4\n"
        "  by:       human\n"
        "  outcome:  allowed (code committed)\n"
        "  sandbox:  unknown\n"
        "  message:  \n"
        "  report:   none\n"
        "  check:    agent: fine\n"
        "  row:      " +
            path + ":1\n");
  Ran legacy = RunOp(RunLedgerCommand, {"show", DerivedDecisionId(kRows[1])}, r.Ctx());
  CHECK(legacy.code == 0);
  CHECK(Lines(legacy.out).at(9) == "  report:   /r/x.md");
  Ran fault = RunOp(RunLedgerCommand, {"show", "20260918T090000.000Z-00000006", "--json"}, r.Ctx());
  CHECK(fault.code == 0);
  ojson j = ojson::parse(fault.out);
  CHECK(j["faultReport"] == "/r/fault.md");
  CHECK(j["row"]["sandbox"] == "bwrap");

  Ran none = RunOp(RunLedgerCommand, {"show", "nope"}, r.Ctx());
  CHECK(none.code == 2);
  CHECK(none.out == "");
  CHECK(none.err == "devflow-gate: ledger show: no decision nope in " + path +
                        "; run `devflow-gate ledger list` to see the decisions\n");
}

// trial19 5b: the ledger lies below the root, which the agent may write; a decision id holding
// ESC reached the operator's terminal raw through the first line of `ledger show`.
TEST_CASE("ledger show prints a decision id with control characters escaped") {
  OperatorRoot r;
  std::string row = kRows[0];
  const std::string id = R"(20260916T080000.000Z-\u001b]0;owned\u0007)";
  row.replace(row.find("20260916T080000.000Z-00000001"), 29, id);
  Spit(r.root + "/ledger/decisions.jsonl", row + "\n");
  Ran ran = RunOp(RunLedgerCommand, {"show", "20260916T080000.000Z-\x1b]0;owned\x07"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(Lines(ran.out).at(0) == "decision 20260916T080000.000Z-\\x1b]0;owned\\x07");
  CHECK(ran.out.find('\x1b') == std::string::npos);
}

TEST_CASE("ledger list names torn and foreign lines on stderr and exits 1, listing the rest") {
  OperatorRoot r;
  const std::string path = Ledger(r, "[1]\n{\"code\":\"committed\",\"ok\":tr");
  Ran ran = RunOp(RunLedgerCommand, {"list", "--outcome", "allowed"}, r.Ctx());
  CHECK(ran.code == 1);
  CHECK(Lines(ran.out).back() == "1 decision of 6 in " + path);
  CHECK(ran.err ==
        "devflow-gate: ledger: " + path +
            ":7: not a decision row (no string \"code\"); move the line out of the ledger by "
            "hand\n"
            "devflow-gate: ledger: " +
            path +
            ":8: not valid JSON (a torn last line without its newline); move the damaged line "
            "out of the ledger by hand\n");
}

TEST_CASE("a root without a ledger lists no decisions") {
  OperatorRoot r;
  Ran ran = RunOp(RunLedgerCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out ==
        "0 decisions of 0 in " + r.root + "/ledger/decisions.jsonl (none yet: no move recorded)\n");
}

TEST_CASE("every new ledger row carries a decision id and its outcome") {
  MoveRequest req;
  req.id = "0001-a";
  req.to = Location::kReady;
  MoveOutcome out;
  out.code = "vetoed";
  out.failed_closed = true;
  out.message = "agent check for designing->ready could not run: x";
  std::string row = DecisionRow(req, out, kT0, {});
  ojson j = ojson::parse(row);
  CHECK(j.begin().key() == "decision");
  CHECK(std::regex_match(j["decision"].get<std::string>(),
                         std::regex(R"(20260916T080000\.000Z-[0-9a-f]{8})")));
  CHECK(j["outcome"] == "fault");
  CHECK(NewDecisionId(kT0) != NewDecisionId(kT0));
  CHECK(
      DecisionRow(req, out, kT0, DecisionIdentity{"/w/devflow.yaml", "ab", {{"agent", "/bin/c"}}},
                  "D") ==
      R"({"decision":"D","at":"2026-09-16T08:00:00.000Z","card":"0001-a","edge":"?->ready","revision":null,"by":{"kind":"human"},"code":"vetoed","ok":false,"message":"agent check for designing->ready could not run: x","checks":[],"report":null,"faultReport":null,"parked":false,"sandbox":[],"outcome":"fault","config":{"file":"/w/devflow.yaml","sha256":"ab"},"programs":{"agent":"/bin/c"}})");
  out.parked = true;
  CHECK(DecisionOutcome(out) == "parked");
  out = MoveOutcome{};
  out.ok = true;
  CHECK(DecisionOutcome(out) == "allowed");
  out.ok = false;
  out.code = "vetoed";
  CHECK(DecisionOutcome(out) == "vetoed");
  out.code = "illegal-edge";
  CHECK(DecisionOutcome(out) == "rejected");
  out.code = "interrupted";
  CHECK(DecisionOutcome(out) == "interrupted");
  out.code = "internal-error";
  CHECK(DecisionOutcome(out) == "fault");
  out.code = "ledger-unwritable";
  CHECK(DecisionOutcome(out) == "fault");
}

TEST_CASE("a commit-intent row carries its attempt's decision id and the outcome intent") {
  Attempt attempt;
  attempt.id = "0001-a";
  attempt.from = Location::kDesigning;
  attempt.to = Location::kReady;
  attempt.expected_revision = 4;
  attempt.at = kT0;
  TransitionCommit commit;
  commit.id = "0001-a";
  commit.expected_revision = 4;
  commit.at = kT0;
  CHECK(
      IntentRow(attempt, commit, {}, "D") ==
      R"({"decision":"D","at":"2026-09-16T08:00:00.000Z","card":"0001-a","edge":"designing->ready","revision":4,"by":{"kind":"human"},"code":"commit-intent","ok":true,"message":"committing card 0001-a designing->ready as revision 5","checks":[],"report":null,"faultReport":null,"parked":false,"outcome":"intent","config":{"file":"","sha256":""},"programs":{},"commit":{"rev":5,"at":"2026-09-16T08:00:00.000Z"}})");
  // A row of a host before outcomes: inferred from its code.
  CHECK(InferredOutcome(true, false, "commit-intent", "") == "intent");
}

// Decision ids draw their random bits from a per-thread pool filled 256 bytes at a time (issue
// 8: no getrandom per decision). A forked child must not hand out the words its parent has yet
// to: the pool is dropped in the child (pthread_atfork). Fails with that handler removed: the
// child's first id and the parent's next carry the same bits.
TEST_CASE("decision ids: a forked child and its parent never draw the same pooled bits") {
  for (int round = 0; round < 8; ++round) {
    (void)NewDecisionId(kT0);  // the pool now holds unused words
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const std::string id = NewDecisionId(kT0);
      (void)!::write(fds[1], id.data(), id.size());
      ::_exit(0);
    }
    ::close(fds[1]);
    char buf[64] = {};
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(n > 0);
    const std::string child(buf, static_cast<size_t>(n));
    const std::string parent = NewDecisionId(kT0);
    CHECK(child != parent);
  }
}

}  // namespace
}  // namespace devflow

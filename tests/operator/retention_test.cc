// Retention (issue 10 item 9): `reports prune` and `ledger prune` with --older-than / --keep,
// --dry-run and --json; what they never remove; the locked replace under the ledger's append.
#include <doctest/doctest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "operator/operator_fixture.h"
#include "reports/fault_report.h"
#include "reports/gate_layout.h"
#include "reports/veto_report.h"

namespace devflow {
namespace {

using namespace devflow::test;
using ojson = nlohmann::ordered_json;

constexpr const char* kDay1 = "2026-09-14T08:00:00.000Z";  // two days before kT0
constexpr const char* kDay2 = "2026-09-15T08:00:00.000Z";  // one day before kT0

// Facts of either kind of report on designing->ready.
template <typename Facts>
Facts ReportFacts(const std::string& card, int64_t revision, const std::string& at) {
  Facts facts;
  facts.card_id = card;
  facts.edge = "designing->ready";
  facts.revision = revision;
  facts.at = at;
  return facts;
}

std::pair<std::string, size_t> Written(const std::string& path, const std::string& text) {
  Spit(path, text);
  return {path, text.size()};
}

// A veto report of `card` at `revision`, written at `at`; returns its path and its size.
std::pair<std::string, size_t> VetoReport(OperatorRoot& r, const std::string& card,
                                          int64_t revision, const std::string& at) {
  auto facts = ReportFacts<VetoReportFacts>(card, revision, at);
  facts.summary = "no";
  return Written(VetoReportPath(r.ReportDir(), card, "designing", "ready", revision),
                 RenderVetoReport(facts));
}

std::pair<std::string, size_t> FaultReport(OperatorRoot& r, const std::string& card,
                                           int64_t revision, const std::string& at) {
  auto facts = ReportFacts<FaultReportFacts>(card, revision, at);
  facts.provider = "grounding";
  facts.fault = "the checker exceeded checkTimeoutMs (600000ms)";
  return Written(FaultReportPath(r.ReportDir(), card, "designing", "ready", revision, at),
                 RenderFaultReport(facts));
}

// A cached veto of 0001-a naming `report`.
std::string CachedVeto(OperatorRoot& r, const std::string& report) {
  VerdictCacheRecord rec{
      r.Key("0001-a", {"prd:3", "design:4"}), false, "no", report, kT0, r.Identity(), ""};
  rec.inputs_sha256 = r.Inputs(rec.key);
  const std::string path = r.CacheDir() + "/" + rec.key.FileName();
  Spit(path, RenderCacheRecord(rec));
  return path;
}

// A designing card 0001-a with a veto report (at kDay1) that a cached veto names, and a fault
// report of 0003-c at kDay1.
struct NamedReports {
  std::string named, fault;
  size_t fault_size;
  std::string cached;
};
NamedReports NamedAndFault(OperatorRoot& r) {
  r.DesigningCard("0001-a");
  const std::string named = VetoReport(r, "0001-a", 4, kDay1).first;
  auto [fault, fault_size] = FaultReport(r, "0003-c", 2, kDay1);
  return {named, fault, fault_size, CachedVeto(r, named)};
}

std::string LedgerPath(const OperatorRoot& r) { return r.root + "/ledger/decisions.jsonl"; }

std::string Row(const std::string& id, const std::string& at, const std::string& outcome,
                const std::string& fault_report = "") {
  return R"({"decision":")" + id + R"(","at":")" + at +
         R"(","card":"0001-a","edge":"designing->ready","revision":4,"by":{"kind":"human"},"code":")" +
         (outcome == "intent" ? "commit-intent" : "committed") +
         R"(","ok":true,"message":"","checks":[],"report":null,"faultReport":)" +
         (fault_report.empty() ? "null" : "\"" + fault_report + "\"") +
         R"(,"parked":false,"outcome":")" + outcome + "\"}";
}

TEST_CASE("reports prune removes nothing without --older-than or --keep: a usage error, exit 2") {
  OperatorRoot r(CachedGateYaml());
  VetoReport(r, "0001-a", 4, kDay1);
  auto before = Snapshot(r.ws.path());
  for (const char* group : {"reports", "ledger"}) {
    Ran ran = RunOp(OpCommand{group}, {"prune"}, r.Ctx());
    CHECK(ran.code == 2);
    CHECK(ran.out == "");
    CHECK(ran.err == "devflow-gate: " + std::string(group) +
                         " prune: pass --older-than DURATION, --keep N, or both; nothing is "
                         "pruned by default\n");
  }
  Ran bad = RunOp(RunReportsCommand, {"prune", "--older-than", "3 weeks"}, r.Ctx());
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "devflow-gate: reports prune: --older-than 3 weeks is not a duration; pass one like 30d, "
        "12h, 45m or 0s (or an ISO-8601 UTC time)\n");
  CHECK(Snapshot(r.ws.path()) == before);
}

TEST_CASE("reports prune --older-than 0s keeps the report a cached veto names, removes the rest") {
  OperatorRoot r(CachedGateYaml());
  auto [named, fault, fault_size, cached] = NamedAndFault(r);
  auto [other, other_size] = VetoReport(r, "0002-b", 4, kDay2);

  Ran ran = RunOp(RunReportsCommand, {"prune", "--older-than", "0s"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.err == "");
  const std::string dirs = r.ReportDir() + ", " + r.ReportDir() + "/faults";
  CHECK(ran.out == "removed " + other + " (veto report of card 0002-b, at " + kDay2 + ")\n" +
                       "removed " + fault + " (fault report of card 0003-c, at " + kDay1 + ")\n" +
                       "kept " + named + " (veto report of card 0001-a, at " + kDay1 +
                       "): the cached veto " + cached + " names it\n" + "removed 2 reports (" +
                       std::to_string(other_size + fault_size) +
                       " bytes), kept 1 (1 only because a cached veto or a newer ledger row "
                       "names it, or it explains a park) in " +
                       dirs + "\n");
  CHECK(Slurp(named).has_value());
  CHECK_FALSE(Slurp(other).has_value());
  CHECK_FALSE(Slurp(fault).has_value());
  // The cached veto is still whole: audit finds no dangling cached veto.
  Ran audit = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(audit.out.find("dangling") == std::string::npos);
}

// trial21 4-1: a prune removed the fault report of a card still parked by that fault; audit went
// on naming the parked card, and the operator had lost why it was parked.
TEST_CASE("reports prune keeps the newest fault report of a card parked blocked now") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0003-c");
  std::string journal = *Slurp(r.CardDir("0003-c") + "/journal.jsonl");
  Spit(
      r.CardDir("0003-c") + "/journal.jsonl",
      journal +
          R"({"rev":5,"at":"2026-09-16T08:04:00.000Z","type":"transition","from":"designing","to":"blocked","by":{"kind":"command","name":"devflow-agent-gate"},"reason":"agent check for designing->ready failed closed: timeout"})"
          "\n");
  r.DesigningCard("0004-d");  // not parked: its fault reports age out
  auto [older, older_size] = FaultReport(r, "0003-c", 2, kDay1);
  auto [newest, newest_size] = FaultReport(r, "0003-c", 4, kDay2);
  auto [other, other_size] = FaultReport(r, "0004-d", 4, kDay2);
  Ran ran = RunOp(RunReportsCommand, {"prune", "--older-than", "0s"}, r.Ctx());
  INFO(ran.out << ran.err);
  CHECK(ran.code == 0);
  CHECK_FALSE(Slurp(older).has_value());
  CHECK_FALSE(Slurp(other).has_value());
  CHECK(Slurp(newest).has_value());
  CHECK(ran.out.find("kept " + newest + " (fault report of card 0003-c, at " + kDay2 +
                     "): card 0003-c is parked blocked, and this is its newest fault report") !=
        std::string::npos);
}

TEST_CASE("reports prune --dry-run says what it would remove and deletes nothing") {
  OperatorRoot r(CachedGateYaml());
  auto [a, a_size] = VetoReport(r, "0001-a", 4, kDay1);
  auto [b, b_size] = VetoReport(r, "0002-b", 4, kDay2);
  auto before = Snapshot(r.ws.path());

  Ran ran = RunOp(RunReportsCommand, {"prune", "--older-than", "1d", "--dry-run"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.err == "");
  CHECK(ran.out == "would remove " + a + " (veto report of card 0001-a, at " + kDay1 + ")\n" +
                       "would remove " + b + " (veto report of card 0002-b, at " + kDay2 + ")\n" +
                       "would remove 2 reports (" + std::to_string(a_size + b_size) +
                       " bytes), kept 0 (0 only because a cached veto or a newer ledger row "
                       "names it, or it explains a park) in " +
                       r.ReportDir() + ", " + r.ReportDir() + "/faults\n");
  CHECK(Snapshot(r.ws.path()) == before);
}

TEST_CASE(
    "reports prune --keep keeps the newest N of each kind: with --older-than both must agree") {
  OperatorRoot r(CachedGateYaml());
  auto [a, a_size] = VetoReport(r, "0001-a", 4, kDay1);
  auto [b, b_size] = VetoReport(r, "0002-b", 4, kDay2);
  auto [c, c_size] = VetoReport(r, "0003-c", 4, kT0);
  auto [f, f_size] = FaultReport(r, "0004-d", 2, kDay1);

  // Older than 1d is a and b (b is exactly 1 day old); the newest 2 are c and b.
  Ran both =
      RunOp(RunReportsCommand, {"prune", "--older-than", "1d", "--keep", "2", "--json"}, r.Ctx());
  CHECK(both.code == 0);
  ojson j = ojson::parse(both.out);
  CHECK(j["removed"].size() == 1);
  CHECK(j["removed"][0]["path"] == a);
  CHECK(j["kept"] == 3);

  Ran keep = RunOp(RunReportsCommand, {"prune", "--keep", "1"}, r.Ctx());
  CHECK(keep.code == 0);
  CHECK(Lines(keep.out) ==
        std::vector<std::string>{"removed " + b + " (veto report of card 0002-b, at " + kDay2 + ")",
                                 "removed 1 report (" + std::to_string(b_size) +
                                     " bytes), kept 2 (0 only because a cached veto or a newer "
                                     "ledger row names it, or it explains a park) in " +
                                     r.ReportDir() + ", " + r.ReportDir() + "/faults"});
  CHECK(Slurp(c).has_value());
  CHECK(Slurp(f).has_value());  // the newest (and only) fault report
}

TEST_CASE("reports prune --json names what it removed, what it kept and why") {
  OperatorRoot r(CachedGateYaml());
  auto [named, fault, fault_size, cached] = NamedAndFault(r);
  auto [gone, gone_size] = VetoReport(r, "0002-b", 4, kDay1);
  // A decision newer than the cut names the fault report: it stays too.
  Spit(LedgerPath(r), Row("20260916T080000.000Z-00000001", kT0, "parked", fault) + "\n");

  Ran ran = RunOp(RunReportsCommand, {"prune", "--older-than", "12h", "--json"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.err == "");
  ojson expected = {
      {"dryRun", false},
      {"dirs", {r.ReportDir(), r.ReportDir() + "/faults"}},
      {"cutMs", r.probe.now_ms - 12 * 3600000},
      {"keep", nullptr},
      {"removed",
       ojson::array({{{"path", gone}, {"kind", "veto"}, {"at", kDay1}, {"bytes", gone_size}}})},
      {"removedBytes", gone_size},
      {"kept", 2},
      {"protected", ojson::array({{{"path", named},
                                   {"kind", "veto"},
                                   {"cachedVeto", cached},
                                   {"decision", nullptr},
                                   {"parked", false}},
                                  {{"path", fault},
                                   {"kind", "fault"},
                                   {"cachedVeto", nullptr},
                                   {"decision", "20260916T080000.000Z-00000001"},
                                   {"parked", false}}})},
      {"errors", ojson::array()}};
  CHECK(ran.out == expected.dump(2) + "\n");
  CHECK(Slurp(fault).has_value());
}

TEST_CASE(
    "reports prune never removes a file that is not a report, nor anything when the "
    "ledger cannot be read") {
  OperatorRoot r(CachedGateYaml());
  auto [a, a_size] = VetoReport(r, "0001-a", 4, kDay1);
  Spit(r.ReportDir() + "/notes.md", "# my notes\n");
  Spit(LedgerPath(r), Row("d1", kDay1, "allowed") + "\n");
  FaultyFileSystem fs;
  fs.Fail("read", "decisions.jsonl", EACCES);
  Ran ran = RunOp(RunReportsCommand, {"prune", "--older-than", "0s"}, r.Ctx(fs));
  CHECK(ran.code == 1);
  CHECK(ran.err ==
        "devflow-gate: reports prune: decision ledger: read " + LedgerPath(r) +
            ": Permission denied (EACCES); check its permissions; no report is removed while the "
            "rows that name reports are unknown\n");
  CHECK(Slurp(a).has_value());

  Ran ok = RunOp(RunReportsCommand, {"prune", "--older-than", "0s"}, r.Ctx());
  CHECK(ok.code == 0);
  CHECK_FALSE(Slurp(a).has_value());
  CHECK(Slurp(r.ReportDir() + "/notes.md").has_value());
}

TEST_CASE(
    "ledger prune keeps newer rows byte for byte, an intent with its decision, and every "
    "line it cannot read") {
  OperatorRoot r;
  const std::string old1 = Row("d1", kDay1, "allowed");
  const std::string old_intent = Row("d2", kDay1, "intent");
  const std::string new_outcome = Row("d2", kT0, "allowed");  // d2's outcome is new: d2 stays
  const std::string undated = R"({"code":"committed","ok":true,"message":"no time"})";
  const std::string garbage = "not json at all";
  const std::string newer = Row("d3", kDay2, "allowed");
  const std::string torn = R"({"at":"2026-09-1)";
  const std::string text = old1 + "\n" + old_intent + "\n" + garbage + "\n" + new_outcome + "\n" +
                           undated + "\n" + newer + "\n" + torn;
  Spit(LedgerPath(r), text);

  Ran dry = RunOp(RunLedgerCommand, {"prune", "--older-than", "1d", "--dry-run"}, r.Ctx());
  CHECK(dry.code == 0);
  CHECK(Slurp(LedgerPath(r)) == text);
  CHECK(Lines(dry.out) ==
        std::vector<std::string>{
            std::string("would remove d1 ") + kDay1 + " 0001-a designing->ready allowed",
            std::string("would remove d3 ") + kDay2 + " 0001-a designing->ready allowed",
            "would remove 2 rows (" + std::to_string(old1.size() + newer.size() + 2) +
                " bytes) of 5 in " + LedgerPath(r) +
                "; kept 3 (1 without a readable time) and 2 lines that are no decision rows, "
                "as they were"});

  Ran ran = RunOp(RunLedgerCommand, {"prune", "--older-than", "1d"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out ==
        std::string("removed d1 ") + kDay1 + " 0001-a designing->ready allowed\nremoved d3 " +
            kDay2 + " 0001-a designing->ready allowed\n" + "removed 2 rows (" +
            std::to_string(old1.size() + newer.size() + 2) + " bytes) of 5 in " + LedgerPath(r) +
            "; kept 3 (1 without a readable time) and 2 lines that are no decision "
            "rows, as they were\n");
  // The lines it cannot read are named, not dropped silently.
  CHECK(ran.err == "devflow-gate: ledger prune: kept " + LedgerPath(r) +
                       ":3: not valid JSON; move the damaged line out of the ledger by hand\n" +
                       "devflow-gate: ledger prune: kept " + LedgerPath(r) +
                       ":7: not valid JSON (a torn last line without its newline); move the "
                       "damaged line out of the ledger by hand\n");
  CHECK(Slurp(LedgerPath(r)) ==
        old_intent + "\n" + garbage + "\n" + new_outcome + "\n" + undated + "\n" + torn);
}

// trial19 4a: /v1/admit records the caller's `at`; the row's age is the recorder's clock, which
// its decision id carries, so a caller cannot pick when its row leaves the ledger.
TEST_CASE("ledger prune and list --since age a row by its decision id, not the caller's at") {
  OperatorRoot r;
  // Recorded two days before kT0, claiming a time in the far future.
  const std::string old_row =
      Row("20260914T080000.000Z-0000000a", "9999-12-31T23:59:59.999Z", "allowed");
  // Recorded at kT0's day, claiming 1999.
  const std::string new_row =
      Row("20260916T070000.000Z-0000000b", "1999-01-01T00:00:00.000Z", "allowed");
  Spit(LedgerPath(r), old_row + "\n" + new_row + "\n");
  Ran since = RunOp(RunLedgerCommand, {"list", "--since", "1d"}, r.Ctx());
  CHECK(since.code == 0);
  CHECK(since.out.find("20260914T080000.000Z-0000000a") == std::string::npos);
  CHECK(since.out.find("20260916T070000.000Z-0000000b") != std::string::npos);
  Ran ran = RunOp(RunLedgerCommand, {"prune", "--older-than", "1d"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(Slurp(LedgerPath(r)) == new_row + "\n");
}

TEST_CASE("ledger prune --keep and --json: no ledger is nothing to prune") {
  OperatorRoot r;
  Ran none = RunOp(RunLedgerCommand, {"prune", "--keep", "1"}, r.Ctx());
  CHECK(none.code == 0);
  CHECK(none.out == "no decision ledger at " + LedgerPath(r) + ": nothing to prune\n");

  const std::string a = Row("d1", kDay1, "allowed"), b = Row("d2", kDay2, "allowed"),
                    c = Row("d3", kT0, "allowed");
  Spit(LedgerPath(r), a + "\n" + b + "\n" + c + "\n");
  Ran ran = RunOp(RunLedgerCommand, {"prune", "--keep", "2", "--json"}, r.Ctx());
  CHECK(ran.code == 0);
  ojson expected = {
      {"dryRun", false},
      {"path", LedgerPath(r)},
      {"present", true},
      {"cutMs", nullptr},
      {"keep", 2},
      {"removed",
       ojson::array({{{"decision", "d1"}, {"line", 1}, {"at", kDay1}, {"outcome", "allowed"}}})},
      {"removedBytes", a.size() + 1},
      {"keptRows", 2},
      {"undatedRows", 0},
      {"otherLines", 0},
      {"problems", ojson::array()},
      {"errors", ojson::array()}};
  CHECK(ran.out == expected.dump(2) + "\n");
  CHECK(Slurp(LedgerPath(r)) == b + "\n" + c + "\n");
}

TEST_CASE("ledger prune that cannot replace the ledger leaves it as it was, exit 1") {
  OperatorRoot r;
  const std::string text = Row("d1", kDay1, "allowed") + "\n";
  Spit(LedgerPath(r), text);
  FaultyFileSystem fs;
  fs.Fail("replace-locked", "decisions.jsonl", ENOSPC);
  Ran ran = RunOp(RunLedgerCommand, {"prune", "--older-than", "0s"}, r.Ctx(fs));
  CHECK(ran.code == 1);
  CHECK(ran.out == "");
  CHECK(ran.err.find("the ledger is as it was") != std::string::npos);
  CHECK(Slurp(LedgerPath(r)) == text);
}

// Whether this process waits for an flock: a line of /proc/locks like
// `2: -> FLOCK  ADVISORY  WRITE <pid> 08:01:1234 0 EOF`.
bool WeWaitForALock() {
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream words(line);
    std::string n, arrow, type, advisory, mode, pid;
    words >> n >> arrow >> type >> advisory >> mode >> pid;
    if (arrow == "->" && type == "FLOCK" && pid == std::to_string(::getpid())) return true;
  }
  return false;
}

TEST_CASE("an append that waited on the lock of a ledger replaced under it lands in the new file") {
  TempDir dir;
  const std::string path = dir / "decisions.jsonl";
  Spit(path, "old 1\nold 2\n");
  FileSystem& fs = PosixFileSystem();
  Status appended = Status::Error("pending", "");
  Status replaced = Status::Ok();
  // The replace holds the lock; inside its rewrite, an appender opens the old file and waits.
  std::thread appender;
  replaced = fs.ReplaceLocked(path, [&](const std::string& current) {
    CHECK(current == "old 1\nold 2\n");
    appender = std::thread([&] { appended = fs.AppendDurable(path, "new row\n"); });
    while (!WeWaitForALock()) std::this_thread::yield();
    return std::optional<std::string>("old 2\n");
  });
  appender.join();
  CHECK(replaced.ok());
  CHECK(appended.ok());
  CHECK(Slurp(path) == "old 2\nnew row\n");
}

TEST_CASE("audit shows the count and total size of reports and ledger rows") {
  OperatorRoot r(CachedGateYaml());
  auto [a, a_size] = VetoReport(r, "0001-a", 4, kDay1);
  auto [f, f_size] = FaultReport(r, "0003-c", 2, kDay1);
  const std::string rows = Row("d1", kDay1, "allowed") + "\n" + Row("d2", kDay2, "allowed") + "\n";
  Spit(LedgerPath(r), rows);
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  auto lines = Lines(ran.out);
  CHECK(std::find(lines.begin(), lines.end(),
                  "veto reports: 1 (" + std::to_string(a_size) + " bytes)") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(),
                  "fault reports: 1 (" + std::to_string(f_size) + " bytes)") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(),
                  "decision ledger: 2 rows (" + std::to_string(rows.size()) +
                      " bytes in all): 2 decisions: allowed 2, vetoed 0, fault 0, parked 0, "
                      "interrupted 0, rejected 0; 0 commit intents; 0 bad lines") != lines.end());
  ojson j = ojson::parse(RunOp(RunAuditCommand, {"--json"}, r.Ctx()).out);
  CHECK(j["reports"]["bytes"] == a_size);
  CHECK(j["reports"]["faultBytes"] == f_size);
  CHECK(j["ledger"]["bytes"] == rows.size());
}

}  // namespace
}  // namespace devflow

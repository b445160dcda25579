// `audit [--json]` (SPEC §7): a read-only health report of a devflow root.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "operator/operator_fixture.h"
#include "reports/veto_report.h"

namespace devflow {
namespace {

using namespace devflow::test;
using ojson = nlohmann::ordered_json;

const char kParkReason[] =
    "agent check for designing->ready failed closed: the checker exceeded checkTimeoutMs "
    "(600000ms)";

void BlockedCard(OperatorRoot& r, const std::string& id) {
  r.Journal(
      id,
      {
          R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"}})",
          R"({"rev":2,"at":"2026-09-16T08:01:00.000Z","type":"transition","from":"draft","to":"designing","by":{"kind":"human"}})",
          std::string(
              R"({"rev":3,"at":"2026-09-16T08:02:00.000Z","type":"transition","from":"designing","to":"blocked","by":{"kind":"command","name":"devflow-agent-gate"},"reason":")") +
              kParkReason + "\"}",
      });
}

const char kCommittedRow[] =
    R"({"at":"2026-09-16T08:00:00.000Z","card":"0001-a","edge":"designing->ready","revision":4,"by":{"kind":"human"},"code":"committed","ok":true,"message":"","checks":[],"report":null,"parked":false})";
const char kVetoedRow[] =
    R"({"at":"2026-09-16T08:00:00.000Z","card":"0001-a","edge":"designing->ready","revision":4,"by":{"kind":"human"},"code":"vetoed","ok":false,"message":"no","checks":[],"report":null,"parked":false})";

std::string LedgerPath(const OperatorRoot& r) { return r.root + "/ledger/decisions.jsonl"; }

TEST_CASE("audit of a healthy root prints every section and exits 0") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  r.Record(r.Key("0001-a", {"prd:3", "design:4"}), true, "ok");
  VetoReportFacts facts;
  facts.card_id = "0001-a";
  facts.edge = "designing->ready";
  facts.revision = 4;
  facts.at = kT0;
  facts.summary = "no";
  const std::string report = RenderVetoReport(facts);
  Spit(VetoReportPath(r.ReportDir(), "0001-a", "designing", "ready", 4), report);
  const std::string ledger = std::string(kCommittedRow) + "\n" + kVetoedRow + "\n";
  Spit(LedgerPath(r), ledger);
  // A fresh temp file may be a write in flight: not reported.
  Spit(r.CardDir("0001-a") + "/.card.md.1.0.tmp", "x");

  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.err == "");
  CHECK(ran.out ==
        "audit of " + r.root + "\n" +
            "cards: 1 checked, 0 do not fold\n"
            "commit locks: 0 (0 not held by a running process)\n"
            "blocked cards: 0\n"
            "stale temp files: 0\n"
            "verdict cache: 1 record: current 1, stale 0, corrupt 0, misnamed 0, unreadable 0; "
            "temp files 0\n"
            "veto reports: 1 (" +
            std::to_string(report.size()) +
            " bytes)\n"
            "fault reports: 0 (0 bytes)\n"
            "decision ledger: 2 rows (" +
            std::to_string(ledger.size()) +
            " bytes in all): 2 decisions: allowed 1, vetoed 1, fault 0, parked 0, interrupted "
            "0, rejected 0; 0 commit intents; 0 bad lines\n"
            "sandbox of decisions: unknown 2\n"
            "healthy: 0 problems, 0 warnings\n");
}

// A root with one of each problem and warning.
struct Sick {
  std::string bad_journal, dead_lock, live_lock, temp, corrupt;
};

Sick MakeSick(OperatorRoot& r) {
  Sick s;
  r.DesigningCard("0001-a");
  r.Record(r.Key("0001-a", {"prd:3", "design:4"}), true, "ok");
  s.corrupt = r.CacheDir() + "/0000000000000000.json";
  Spit(s.corrupt, "{\"verdict\":");
  r.Journal(
      "0002-b",
      {
          R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"}})",
          R"({"rev":2,"at":"2026-09-16T08:01:00.000Z","type":"transition","from":"draft","to":"designing","by":{"kind":"robot"}})",
      });
  s.bad_journal = r.CardDir("0002-b") + "/journal.jsonl";
  BlockedCard(r, "0003-c");
  s.dead_lock = r.CardDir("0001-a") + "/commit.lock";
  Spit(s.dead_lock, "999999\n");
  s.live_lock = r.CardDir("0003-c") + "/commit.lock";
  Spit(s.live_lock, "4242\n");
  r.probe.alive.insert(4242);
  s.temp = r.CardDir("0001-a") + "/.card.md.55.0.tmp";
  Spit(s.temp, "half");
  r.probe.ages[s.temp] = 3600000;
  Spit(LedgerPath(r), std::string(kCommittedRow) + "\n" + R"({"at":"2026-09-16T08:0)");
  return s;
}

TEST_CASE(
    "audit lists each fold failure, dead lock, corrupt cache file and torn ledger line as "
    "a problem and exits 1") {
  OperatorRoot r(CachedGateYaml());
  Sick s = MakeSick(r);
  auto before = Snapshot(r.ws.path());

  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 1);
  CHECK(ran.err == "");
  std::vector<std::string> expected = {
      "audit of " + r.root,
      "cards: 3 checked, 1 does not fold",
      "commit locks: 2 (1 not held by a running process)",
      "blocked cards: 1",
      "stale temp files: 1",
      "verdict cache: 2 records: current 1, stale 0, corrupt 1, misnamed 0, unreadable 0; temp "
      "files 0",
      "veto reports: 0 (0 bytes)",
      "fault reports: 0 (0 bytes)",
      "decision ledger: 1 row (" + std::to_string(Slurp(LedgerPath(r))->size()) +
          " bytes in all): 1 decision: allowed 1, vetoed 0, fault 0, parked 0, interrupted 0, "
          "rejected 0; 0 commit intents; 1 bad line",
      "sandbox of decisions: unknown 1",
      "problem: card 0002-b does not fold: " + s.bad_journal +
          ":2: actor field \"kind\" must be human, agent, or command (got \"robot\"); repair the "
          "line by hand or "
          "restore the journal from version control (every read and move of this card fails "
          "until then)",
      "problem: card 0001-a is locked by " + s.dead_lock +
          ", held by pid 999999, which is not running: every commit on this card fails "
          "write-contended; no devflow process holds it, so remove " +
          s.dead_lock,
      "problem: " + s.corrupt +
          ": corrupt: not valid JSON; the gate treats it as a miss: remove it with "
          "`devflow-gate cache prune`",
      "problem: decision ledger: " + LedgerPath(r) +
          ":2: not valid JSON (a torn last line without its newline); move the damaged line out "
          "of the ledger by hand",
      "warning: card 0003-c is locked by " + s.live_lock +
          ", held by pid 4242, which is running (a commit in progress); if it stays and pid 4242 "
          "is no devflow process, remove " +
          s.live_lock,
      "warning: card 0003-c is parked blocked since 2026-09-16T08:02:00.000Z (from designing) by "
      "command:devflow-agent-gate: " +
          std::string(kParkReason) +
          "; once the cause is fixed, recover it with `devflow-gate move 0003-c designing`",
      "warning: stale temp file " + s.temp +
          " (3600s old) is left over from an interrupted write; delete it",
      "unhealthy: 4 problems, 3 warnings",
  };
  CHECK(Lines(ran.out) == expected);
  CHECK(Snapshot(r.ws.path()) == before);  // read-only
}

TEST_CASE("audit --json gives the counts, the problems and each section's facts") {
  OperatorRoot r(CachedGateYaml());
  Sick s = MakeSick(r);
  Ran ran = RunOp(RunAuditCommand, {"--json"}, r.Ctx());
  CHECK(ran.code == 1);
  ojson j = ojson::parse(ran.out);
  CHECK(j["root"] == r.root);
  CHECK(j["healthy"] == false);
  CHECK(j["problems"].size() == 4);
  CHECK(j["warnings"].size() == 3);
  CHECK(
      j["cards"].dump() ==
      ojson{{"checked", 3},
            {"unfoldable",
             {{{"card", "0002-b"},
               {"problem",
                s.bad_journal +
                    ":2: actor field \"kind\" must be human, agent, or command (got \"robot\")"}}}}}
          .dump());
  CHECK(j["locks"].dump() ==
        ojson{{{"card", "0001-a"}, {"path", s.dead_lock}, {"pid", 999999}, {"alive", false}},
              {{"card", "0003-c"}, {"path", s.live_lock}, {"pid", 4242}, {"alive", true}}}
            .dump());
  CHECK(j["blocked"].dump() == ojson{{{"card", "0003-c"},
                                      {"since", "2026-09-16T08:02:00.000Z"},
                                      {"from", "designing"},
                                      {"by", "command:devflow-agent-gate"},
                                      {"reason", kParkReason}}}
                                   .dump());
  CHECK(j["tempFiles"].dump() == ojson{{{"path", s.temp}, {"ageMs", 3600000}}}.dump());
  CHECK(j["cache"].dump() == ojson{{"dirs", {r.CacheDir()}},
                                   {"counts",
                                    {{"current", 1},
                                     {"stale", 0},
                                     {"corrupt", 1},
                                     {"misnamed", 0},
                                     {"unreadable", 0},
                                     {"temp", 0}}}}
                                 .dump());
  CHECK(j["reports"].dump() == ojson{{"dirs", {r.ReportDir()}},
                                     {"count", 0},
                                     {"bytes", 0},
                                     {"faultDirs", {r.ReportDir() + "/faults"}},
                                     {"faults", 0},
                                     {"faultBytes", 0}}
                                   .dump());
  CHECK(j["ledger"]["rows"] == 1);
  CHECK(j["ledger"]["badLines"] == 1);
  CHECK(j["ledger"]["byOutcome"].dump() ==
        R"({"allowed":1,"vetoed":0,"fault":0,"parked":0,"interrupted":0,"rejected":0})");
  CHECK(j["ledger"]["bySandbox"].dump() == R"({"unknown":1})");
}

TEST_CASE("a blocked card alone is a warning: audit stays healthy") {
  OperatorRoot r;
  BlockedCard(r, "0003-c");
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 0);
  auto lines = Lines(ran.out);
  CHECK(lines.at(5) == "verdict cache: disabled (no devflow-agent-gate sets verdictCacheDir)");
  CHECK(lines.at(8) == "decision ledger: none yet (no move recorded)");
  CHECK(lines.back() == "healthy: 0 problems, 1 warning");
}

TEST_CASE("audit warns of card.md front matter behind the journal, with its fix") {
  // trial20b 1a-3: a commit that left card.md as a person was editing it (host/store.cc
  // RewriteProjection) and audit said healthy.
  OperatorRoot r;
  r.DesigningCard("0001-a");
  const std::string card_md = r.CardDir("0001-a") + "/card.md";
  Spit(card_md, "---\ntitle: A\nstage: draft\nstageRevision: 1\n---\n\nbody\n");
  r.DesigningCard("0002-b");
  Spit(r.CardDir("0002-b") + "/card.md",
       "---\ntitle: B\nstage: designing\nstageRevision: 4\n---\n\nbody\n");
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 0);
  auto lines = Lines(ran.out);
  CHECK(lines.at(lines.size() - 2) ==
        "warning: projection drift for card 0001-a at " + card_md +
            ": stage \"draft\" (journal: \"designing\"); stageRevision 1 (journal: 4); card.md's "
            "front matter lags the journal, which wins (reads and moves follow it); the card's "
            "next commit (`move` or `artifact add`) rewrites the front matter");
  CHECK(lines.back() == "healthy: 0 problems, 1 warning");
}

TEST_CASE("audit names a commit.lock that holds no pid") {
  OperatorRoot r;
  r.DesigningCard("0001-a");
  std::string lock = r.CardDir("0001-a") + "/commit.lock";
  Spit(lock, "");
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 1);
  CHECK(Lines(ran.out).at(9) == "problem: card 0001-a is locked by " + lock +
                                    ", which names no pid (\"\"); if no devflow process is "
                                    "running, remove " +
                                    lock);
}

TEST_CASE("audit folds archived cards and cards that lost their journal") {
  OperatorRoot r;
  Spit(r.root + "/archive/2026-09/0004-d/journal.jsonl", "");
  Spit(r.CardDir("0005-e") + "/card.md", "---\ntitle: e\n---\n");
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 1);
  auto lines = Lines(ran.out);
  CHECK(lines.at(1) == "cards: 2 checked, 2 do not fold");
  CHECK(lines.at(9) == "problem: card 0005-e does not fold: " + r.CardDir("0005-e") +
                           "/journal.jsonl: the journal is missing while the card's other "
                           "files are there; restore it from version control or a backup (every "
                           "read and move of this card fails until then)");
  CHECK(lines.at(10).rfind("problem: card 0004-d does not fold: " + r.root +
                               "/archive/2026-09/0004-d/journal.jsonl: ",
                           0) == 0);
}

TEST_CASE("audit names a card directory that is a symbolic link, which nothing reads") {
  // trial19 5c: a card dir replaced by a link vanished from `card list` and `audit` silently.
  OperatorRoot r;
  TempDir elsewhere;
  Spit(elsewhere / "card/journal.jsonl", "");
  ::mkdir(r.CardDir("0006-f").substr(0, r.CardDir("0006-f").rfind('/')).c_str(), 0755);
  REQUIRE(::symlink((elsewhere / "card").c_str(), r.CardDir("0006-f").c_str()) == 0);
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 1);
  auto lines = Lines(ran.out);
  CHECK(lines.at(1) == "cards: 1 checked, 1 does not fold");
  CHECK(std::find(lines.begin(), lines.end(),
                  "problem: card 0006-f does not fold: " + r.CardDir("0006-f") +
                      " is a symbolic link, not a card directory (ELOOP): the gate never follows "
                      "a link below the root, so this card is neither read nor moved; replace "
                      "the link with the card's own directory (every read and move of this "
                      "card fails until then)") != lines.end());
}

TEST_CASE("audit counts a ledger row without a code as a bad line") {
  OperatorRoot r;
  Spit(LedgerPath(r), std::string(kVetoedRow) + "\n[1]\n");
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 1);
  auto lines = Lines(ran.out);
  CHECK(lines.at(8) == "decision ledger: 1 row (" +
                           std::to_string(std::string(kVetoedRow).size() + 5) +
                           " bytes in all): 1 decision: allowed 0, vetoed 1, fault 0, parked 0, "
                           "interrupted 0, rejected 0; 0 commit intents; 1 bad line");
  CHECK(lines.at(10) == "problem: decision ledger: " + LedgerPath(r) +
                            ":2: not a decision row (no string \"code\"); move the line out of "
                            "the ledger by hand");
}

TEST_CASE("audit counts commit intents apart and warns about one without its outcome row") {
  OperatorRoot r;
  const std::string intent =
      R"({"decision":"D1","at":"2026-09-16T08:00:00.000Z","card":"0001-a","edge":"designing->ready","revision":4,"by":{"kind":"human"},"code":"commit-intent","ok":true,"message":"committing card 0001-a designing->ready as revision 5","checks":[],"report":null,"parked":false,"outcome":"intent","commit":{"rev":5,"at":"2026-09-16T08:00:00.000Z"}})";
  const std::string outcome =
      R"({"decision":"D1","at":"2026-09-16T08:00:00.000Z","card":"0001-a","edge":"designing->ready","revision":4,"by":{"kind":"human"},"code":"committed","ok":true,"message":"","checks":[],"report":null,"parked":false,"sandbox":[],"outcome":"allowed"})";
  std::string orphan = intent;
  orphan.replace(orphan.find("D1"), 2, "D2");
  Spit(LedgerPath(r), intent + "\n" + outcome + "\n" + orphan + "\n");
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 0);
  auto lines = Lines(ran.out);
  CHECK(lines.at(8) == "decision ledger: 3 rows (" +
                           std::to_string(intent.size() + outcome.size() + orphan.size() + 3) +
                           " bytes in all): 1 decision: allowed 1, vetoed 0, fault 0, parked 0, "
                           "interrupted 0, rejected 0; 2 commit intents; 0 bad lines");
  CHECK(lines.at(9) == "sandbox of decisions: no checker 1");
  CHECK(lines.at(10) ==
        "warning: decision D2 (0001-a designing->ready, " + LedgerPath(r) +
            ":3) has a commit-intent row and no outcome row: the host stopped or could not "
            "write between them; whether it committed is in the card's journal (`devflow-gate "
            "card show 0001-a`)");
  CHECK(lines.at(11) == "healthy: 0 problems, 1 warning");
}

TEST_CASE("audit refuses a root that does not exist, exit 2") {
  OperatorRoot r;
  REQUIRE(::rmdir(r.root.c_str()) == 0);
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 2);
  CHECK(ran.out == "");
  CHECK(ran.err == "devflow-gate: the devflow root " + r.root +
                       " does not exist (pass --root DIR or set DEVFLOW_ROOT)\n");
  Ran opt = RunOp(RunAuditCommand, {"--fix"}, r.Ctx());
  CHECK(opt.code == 2);
  CHECK(opt.err ==
        "devflow-gate: The following argument was not expected: --fix\n"
        "run 'devflow-gate --help' (or '<command> --help') for usage\n");
}

TEST_CASE("the real probe sees this process alive and a reaped child dead") {
  HostProbe& probe = RealHostProbe();
  CHECK(probe.ProcessAlive(::getpid()));
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK_FALSE(probe.ProcessAlive(child));
  CHECK_FALSE(probe.ProcessAlive(0));
  CHECK_FALSE(probe.ProcessAlive(-1));
}

TEST_CASE("the real probe measures a file's age from its mtime") {
  TempDir dir;
  std::string path = dir / "f";
  Spit(path, "x");
  struct timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= 120;
  times[1] = times[0];
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
  auto age = RealHostProbe().AgeMs(path);
  REQUIRE(age.ok());
  CHECK(*age >= 120000);
  CHECK(*age < 130000);
  auto missing = RealHostProbe().AgeMs(dir / "none");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == "ENOENT");
}

TEST_CASE("audit counts fault reports and warns about a file in the fault dir it did not write") {
  OperatorRoot r;
  FaultReportFacts f;
  f.card_id = "0001-a";
  f.edge = "designing->ready";
  f.revision = 4;
  f.at = kT0;
  f.fault = "the checker ended with exit code 3";
  const std::string good = RenderFaultReport(f);
  const std::string foreign = "# Agent check fault: card 1-x, edge a->b\n\n## Reply\n";
  Spit(r.ReportDir() + "/faults/0001-a-designing-ready-r4-20260916T080000.000Z.md", good);
  Spit(r.ReportDir() + "/faults/x.md", foreign);
  Ran ran = RunOp(RunAuditCommand, {}, r.Ctx());
  CHECK(ran.code == 0);
  auto lines = Lines(ran.out);
  CHECK(lines.at(7) ==
        "fault reports: 2 (" + std::to_string(good.size() + foreign.size()) + " bytes)");
  CHECK(lines.at(9) == "warning: fault report " + r.ReportDir() +
                           "/faults/x.md does not read as a fault report: no \"- card: <id>\" "
                           "line; the gate did not write it: move it out of the fault dir");
}

}  // namespace
}  // namespace devflow

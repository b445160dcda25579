// Fault matrix, file and disk faults (issue 4 item 5): an unreadable input, an unwritable report
// dir, a cache that cannot be written, read, parsed or trusted, a full disk at the report, the
// cache and the journal, a held lock during a park, and a torn journal. Real faults through the
// real binary where the OS can produce them as root (a path component that is a file, a
// read-only or full tmpfs); the in-process Executor with FaultyFileSystem where only the I/O
// seam can place the fault exactly (ENOSPC at the journal append itself).
#include <doctest/doctest.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "faults/faults.h"
#include "gate/fixture.h"
#include "reports/gate_layout.h"

namespace devflow::faults {
namespace {

namespace fs = std::filesystem;

void Prepare(Workspace& ws, const std::string& checker, const std::string& cache_dir = "",
             const std::string& extra_config = "") {
  GateYaml yaml;
  yaml.command = {Fixture(checker)};
  yaml.cache_dir = cache_dir;
  ws.WriteConfig(yaml.Text() + extra_config);
  ws.CardInDesigning();
}

// `text` starts with `prefix` and ends with `suffix` (for messages that carry a temp file name
// with the writer's pid in it).
bool Framed(const std::string& text, const std::string& prefix, const std::string& suffix) {
  return text.size() >= prefix.size() + suffix.size() && text.rfind(prefix, 0) == 0 &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The park reason of the last journal line (the card must have parked at revision 5).
std::string ParkReason(const Workspace& ws) {
  auto lines = ws.JournalLines();
  REQUIRE(lines.size() == 5);
  return nlohmann::json::parse(lines[4])["reason"].get<std::string>();
}

const char kFailedClosed[] = "agent check for designing->ready failed closed: ";

TEST_CASE("fault: an input artifact that is gone fails closed naming the read error") {
  Workspace ws("");
  Prepare(ws, "checkers/allow.sh");
  const std::string design = ws.card_dir() + "/artifacts/4-design.md";
  REQUIRE(fs::remove(design));
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stderr: " << r.err);
  const std::string fault =
      "a required input cannot be read: open " + design + ": No such file or directory (ENOENT)";
  CHECK(r.exit_code == 3);
  CHECK(r.out == CouldNotRun(fault) + ParkedLine());
  RequireParked(ws, fault);
}

TEST_CASE("fault: a report dir that cannot be written fails closed, no report left behind") {
  SUBCASE("a path component is a regular file (ENOTDIR)") {
    Workspace ws("");
    Prepare(ws, "e2e/veto.sh");
    test::Spit(ws.root() + "/reports", "not a directory\n");
    auto r = ws.Gate({"move", kCard, "ready"});
    INFO("stderr: " << r.err);
    const std::string fault = "the veto report could not be written: mkdir " + ws.root() +
                              "/reports/agent-gate: Not a directory (ENOTDIR)";
    CHECK(r.exit_code == 3);
    CHECK(r.out == CouldNotRun(fault) + ParkedLine());
    RequireParked(ws, fault);
  }
  SUBCASE("the report dir is a read-only file system (EROFS)") {
    Workspace ws("");
    Prepare(ws, "e2e/veto.sh");
    const std::string dir = ws.root() + "/reports/agent-gate";
    fs::create_directories(dir);
    Tmpfs ro(dir, "ro");
    if (!ro.mounted()) {
      MESSAGE("no tmpfs here (" << ro.error() << "): the ENOTDIR subcase stands for this fault");
      return;
    }
    auto r = ws.Gate({"move", kCard, "ready"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 3);
    // open <dir>/.<report>.<pid>.<seq>.tmp: Read-only file system (EROFS)
    const std::string prefix = "the veto report could not be written: open " + dir + "/." + kCard +
                               "-designing-ready-r4.md.";
    const std::string suffix = ".tmp: Read-only file system (EROFS)";
    CHECK(Framed(ParkReason(ws), kFailedClosed + prefix, suffix));
    RequireParked(ws, ParkReason(ws).substr(sizeof kFailedClosed - 1));
    CHECK(fs::is_empty(dir));
  }
}

TEST_CASE("fault: a cache dir that cannot be created only warns, the allow commits") {
  Workspace ws("");
  Prepare(ws, "checkers/allow.sh", ".devflow/cache/agent-gate");
  test::Spit(ws.root() + "/cache", "not a directory\n");
  const std::string file = CacheFile(ws, ws.root() + "/cache/agent-gate");
  auto r = ws.Gate({"move", kCard, "ready"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == CommittedOut("ok"));
  // The lookup meets the same broken path: a warned miss, then the store's warning.
  CHECK(r.err == "devflow-agent-gate: could not read the verdict cache at " + file + ": open " +
                     file + ": Not a directory (ENOTDIR)\n" +
                     "devflow-agent-gate: could not cache the allow verdict at " + file +
                     ": mkdir " + ws.root() + "/cache/agent-gate: Not a directory (ENOTDIR)\n");
  RequireCommitted(ws, "ok");
}

TEST_CASE("fault: a cache record that cannot be read is a warned miss, the checker decides") {
  Workspace ws("");
  Prepare(ws, "e2e/veto.sh", ".devflow/cache/agent-gate");
  const std::string file = CacheFile(ws, ws.root() + "/cache/agent-gate");
  fs::create_directories(file);  // a directory where the record should be: read gives EISDIR
  auto r = ws.Gate({"move", kCard, "ready"});
  CHECK(r.exit_code == 1);
  CHECK(r.out == Vetoed("design cites REQ-9", ReportPath(ws)));
  CHECK(r.err == "devflow-agent-gate: could not read the verdict cache at " + file + ": read " +
                     file + ": Is a directory (EISDIR)\n" +
                     "devflow-agent-gate: could not cache the veto verdict at " + file +
                     ": rename " + file + ": Is a directory (EISDIR)\n");
  CHECK(fs::is_directory(file));
  CHECK(fs::is_empty(file));  // the failed store left no temp file behind
  RequireUnmoved(ws);
}

TEST_CASE("fault: a corrupt cache record is a warned miss and is replaced by a valid one") {
  Workspace ws("");
  Prepare(ws, "checkers/allow.sh", ".devflow/cache/agent-gate");
  const std::string file = CacheFile(ws, ws.root() + "/cache/agent-gate");
  test::Spit(file, "{\"key\": {\"edge\": \"designing->ready\"");  // torn JSON
  auto r = ws.Gate({"move", kCard, "ready"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == CommittedOut("ok"));
  CHECK(r.err == "devflow-agent-gate: the verdict cache at " + file +
                     " is corrupt; treating it as a miss\n");
  RequireCommitted(ws, "ok");
  auto record = nlohmann::json::parse(test::Slurp(file).value());
  CHECK(record["verdict"] == "allow");
  CHECK(record["key"]["card"] == kCard);
  // The rewritten record passes the cache's own validity rules: a lookup hits, unwarned.
  CollectedWarnings warnings;
  auto hit = VerdictCache(ws.root() + "/cache/agent-gate", RealFileSystem())
                 .Lookup(VerdictCacheKey::Compute("designing->ready", ws.root(), kCard,
                                                  {"prd:3", "design:4"}, GateYaml().prompt),
                         CheckerIdOf(ws), InputsIdOf(ws), warnings);
  CHECK(hit.has_value());
  CHECK(warnings.lines.empty());
}

TEST_CASE("fault: a colliding cache record of another key is never trusted, the checker decides") {
  // The file name is right but the stored key is another card's (a 64-bit prefix collision):
  // an allow stored for it must not admit this card.
  Workspace ws("");
  Prepare(ws, "e2e/veto.sh", ".devflow/cache/agent-gate");
  const std::string file = CacheFile(ws, ws.root() + "/cache/agent-gate");
  VerdictCacheRecord other;
  other.key = VerdictCacheKey::Compute("designing->ready", ws.root(), "0002-another-card",
                                       {"prd:3", "design:4"}, GateYaml().prompt);
  other.allow = true;
  other.summary = "allowed for another card";
  other.at = "2026-09-16T08:00:00.000Z";
  other.checker_sha256 = CheckerIdOf(ws);  // the right checker and contents: only the key
  other.inputs_sha256 = InputsIdOf(ws);    // tells them apart
  test::Spit(file, RenderCacheRecord(other));
  auto r = ws.Gate({"move", kCard, "ready"});
  CHECK(r.exit_code == 1);
  CHECK(r.out == Vetoed("design cites REQ-9", ReportPath(ws)));
  CHECK(r.err == "");  // a key mismatch is a silent miss
  RequireUnmoved(ws);
  auto record = nlohmann::json::parse(test::Slurp(file).value());
  CHECK(record["key"]["card"] == kCard);
  CHECK(record["verdict"] == "veto");
}

TEST_CASE("fault: a commit.lock held while a checker fault parks only warns, nothing written") {
  Workspace ws("");
  Prepare(ws, "checkers/fail.sh");
  const std::string lock = ws.card_dir() + "/commit.lock";
  const std::string holder = std::to_string(test::LivePid()) + "\n";
  test::Spit(lock, holder);
  const std::string before = test::Slurp(ws.journal_path()).value();
  auto r = ws.Gate({"move", kCard, "ready"});
  const std::string fault = "the checker ended with exit code 7: boom";
  CHECK(r.exit_code == 3);
  const std::string locked = "card " + std::string(kCard) + " stayed locked by another commit (" +
                             lock +
                             "); nothing was written, so retry the move; if no devflow process is "
                             "running, the lock is stale: remove " +
                             lock;
  CHECK(r.out == NotParkedWithReport(ws, fault, locked));
  CHECK(r.err == std::string("devflow-agent-gate: failed to park card ") + kCard +
                     " blocked: card " + kCard + " stayed locked by another commit (" + lock +
                     "); nothing was written, so retry the move; if no devflow process is "
                     "running, the lock is stale: remove " +
                     lock + "\n");
  CHECK(test::Slurp(ws.journal_path()) == before);
  CHECK(test::Slurp(lock) == holder);
  fs::remove(lock);
  RequireUnmoved(ws);
}

TEST_CASE(
    "audit: a park the held commit.lock kept from committing is unhealthy until the card is "
    "parked") {
  // The fresh trial: the ledger got the park's intent row and a `vetoed` row with parked:false,
  // audit counted "fault 1" and still said "healthy". Through the real store and a held lock.
  Workspace ws("");
  Prepare(ws, "checkers/fail.sh");
  const std::string lock = ws.card_dir() + "/commit.lock";
  test::Spit(lock, std::to_string(test::LivePid()) + "\n");
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 3);
  fs::remove(lock);  // the holder is done: only the unpersisted park is left
  RequireUnmoved(ws);

  auto audit = ws.Gate({"--root", ws.root(), "audit"});
  INFO("audit: " << audit.out << audit.err);
  CHECK(audit.exit_code == 1);
  CHECK(audit.out.find("fault 1") != std::string::npos);
  CHECK(audit.out.find(" failed closed and the card was NOT parked (") != std::string::npos);
  CHECK(audit.out.find("card " + std::string(kCard) +
                       " is still designing at that revision, "
                       "unparked though its check could not run; fix the cause, then retry the "
                       "move (`devflow-gate move " +
                       std::string(kCard) + " ready`)") != std::string::npos);
  CHECK(audit.out.find("\nunhealthy: 1 problem") != std::string::npos);
  auto json = nlohmann::json::parse(ws.Gate({"--root", ws.root(), "audit", "--json"}).out);
  CHECK(json["healthy"] == false);
  CHECK(json["ledger"]["byOutcome"]["fault"] == 1);

  // The retry parks it: the fault row is history, explained by a warning; healthy again.
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 3);
  auto after = ws.Gate({"--root", ws.root(), "audit"});
  INFO("audit after: " << after.out << after.err);
  CHECK(after.exit_code == 0);
  CHECK(after.out.find("failed closed without parking the card; the card has been parked "
                       "blocked since") != std::string::npos);
  CHECK(after.out.find("\nhealthy: 0 problems") != std::string::npos);
}

TEST_CASE(
    "fault: a journal with a torn last line fails every read naming the line, writes nothing") {
  Workspace ws("");
  Prepare(ws, "checkers/allow.sh");
  const std::string intact = test::Slurp(ws.journal_path()).value();
  const std::string torn = intact + "{\"rev\":5,\"at\":\"2026-09-16T08:0";
  test::Spit(ws.journal_path(), torn);

  auto show = ws.Gate({"card", "show", kCard});
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("show: " << show.out << show.err << "\nmove: " << r.out << r.err);
  const std::string problem =
      ws.journal_path() +
      ":5: invalid JSON: parse error at line 1, column 31: syntax error while parsing value - "
      "invalid string: missing closing quote; last read: '\"2026-09-16T08:0'; it is the "
      "file's last line and has no line end: a writer stopped in the middle of an append (a "
      "crash or a full disk). With no writer running, cut it off (truncate -s " +
      std::to_string(intact.size()) + " " + ws.journal_path() +
      ") and check the card with devflow-gate audit";
  CHECK(show.exit_code == 4);
  CHECK(show.out == "");
  CHECK(show.err == "devflow-gate: " + problem + "\n");
  CHECK(r.exit_code == 4);
  CHECK(r.out == problem + "\n");
  CHECK(test::Slurp(ws.journal_path()) == torn);  // never "repaired", never appended to
  CHECK_FALSE(fs::exists(ws.card_dir() + "/commit.lock"));

  // The operator cuts the torn tail as told: the journal folds again and the move goes through.
  fs::resize_file(ws.journal_path(), intact.size());
  CHECK(test::Slurp(ws.journal_path()) == intact);
  RequireUnmoved(ws);
  CHECK(ws.Gate({"move", kCard, "ready"}).exit_code == 0);
  RequireCommitted(ws, "ok");
}

// ---- disk full ------------------------------------------------------------------------------

TEST_CASE("fault: disk full (tmpfs) at the report write fails closed, no torn report") {
  Workspace ws("");
  const std::string dir = ws / "full-reports";
  fs::create_directories(dir);
  Tmpfs small(dir, "size=64k");
  if (!small.mounted()) {
    MESSAGE("no tmpfs here (" << small.error() << "): the FileSystem-seam case stands");
    return;
  }
  FillUp(dir);
  Prepare(ws, "e2e/veto.sh", "", "      reportDir: " + dir + "\n");
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 3);
  // The root's own subdirectory of a reportDir outside it (reports/gate_layout.h).
  const std::string reports = dir + "/" + RootReportTag(ws.root());
  const std::string prefix = "the veto report could not be written: write " + reports + "/." +
                             kCard + "-designing-ready-r4.md.";
  const std::string suffix = ".tmp: No space left on device (ENOSPC)";
  CHECK(Framed(ParkReason(ws), kFailedClosed + prefix, suffix));
  RequireParked(ws, ParkReason(ws).substr(sizeof kFailedClosed - 1));
  CHECK(test::Snapshot(reports).empty());  // the temp file was unlinked
}

TEST_CASE("fault: disk full (tmpfs) at the cache write only warns, the allow commits") {
  Workspace ws("");
  const std::string dir = ws / "full-cache";
  fs::create_directories(dir);
  Tmpfs small(dir, "size=64k");
  if (!small.mounted()) {
    MESSAGE("no tmpfs here (" << small.error() << "): the FileSystem-seam case stands");
    return;
  }
  FillUp(dir);
  Prepare(ws, "checkers/allow.sh", dir);
  const std::string file = CacheFile(ws, dir);
  auto r = ws.Gate({"move", kCard, "ready"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == CommittedOut("ok"));
  const std::string prefix = "devflow-agent-gate: could not cache the allow verdict at " + file +
                             ": write " + dir + "/." + file.substr(dir.size() + 1) + ".";
  CHECK(Framed(r.err, prefix, ".tmp: No space left on device (ENOSPC)\n"));
  RequireCommitted(ws, "ok");
  CHECK(test::Snapshot(dir).size() == 1);
}

TEST_CASE("fault: disk full (tmpfs) under the whole root rejects the commit and loses nothing") {
  // On a full disk the commit's first write (its lock) fails: the move is rejected, the journal
  // is as it was and folds, and the retry after space returns commits. (The journal append
  // itself is reached only through the seam: see the ENOSPC seam case below.)
  Workspace ws("");
  fs::create_directories(ws.root());
  Tmpfs small(ws.root(), "size=256k");
  if (!small.mounted()) {
    MESSAGE("no tmpfs here (" << small.error() << "): the FileSystem-seam case stands");
    return;
  }
  Prepare(ws, "checkers/allow.sh");
  const std::string before = test::Slurp(ws.journal_path()).value();
  FillUp(ws.root());
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 4);
  // The lock is the first byte the commit writes; the store removes its empty lock file.
  // What was written and what was not: no lock and no journal line, and in the decision ledger
  // the commit-intent row, then the outcome row that says the commit did not happen.
  CHECK(r.out == "write " + ws.card_dir() +
                     "/commit.lock: No space left on device (ENOSPC); nothing was committed, and "
                     "the decision ledger " +
                     ws.root() +
                     "/ledger/decisions.jsonl holds this attempt's commit-intent row for card " +
                     kCard +
                     " designing->ready at revision 5, followed by this outcome row (code "
                     "ENOSPC)\n");
  CHECK(r.err == "");
  CHECK(test::Slurp(ws.journal_path()) == before);
  CHECK_FALSE(fs::exists(ws.card_dir() + "/commit.lock"));
  fs::remove(ws.root() + "/filler");
  RequireUnmoved(ws);
  auto retry = ws.Gate({"move", kCard, "ready"});
  CHECK(retry.exit_code == 0);
  RequireCommitted(ws, "ok");
}

// The fresh trial of issue 7 (createfull.sh): `card create` on a full disk left its reserved,
// empty `tasks/0002-…/` behind, after which `card list` exited 2 for the whole root, also once
// space was back. Now the creation removes what it made and says why, with the fix.
TEST_CASE("fault: disk full (tmpfs) at card create leaves no card dir, and list still works") {
  Workspace ws("");
  fs::create_directories(ws.root());
  Tmpfs small(ws.root(), "size=256k");
  if (!small.mounted()) {
    MESSAGE("no tmpfs here (" << small.error() << "): the FileSystem-seam cases stand");
    return;
  }
  Prepare(ws, "checkers/allow.sh");
  FillUp(ws.root());
  const std::string tasks = ws.root() + "/tasks";
  const std::string reserved = tasks + "/0002-x";
  auto r = ws.Gate({"card", "create", "--title", "x", "--body", "y"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 4);
  CHECK(Framed(r.err, "devflow-gate: card 0002-x was not created: ",
               ": No space left on device (ENOSPC); free space on the file system holding " +
                   tasks + " and retry (the reserved directory " + reserved + " was removed)\n"));
  CHECK(r.err.find(reserved + "/.journal.jsonl.") != std::string::npos);  // the temp it wrote
  CHECK_FALSE(fs::exists(reserved));
  auto full = ws.Gate({"card", "list"});
  CHECK(full.exit_code == 0);
  CHECK(full.out.rfind(std::string(kCard) + " ", 0) == 0);

  fs::remove(ws.root() + "/filler");
  auto again = ws.Gate({"card", "create", "--title", "x", "--body", "y"});
  CHECK(again.exit_code == 0);
  CHECK(fs::exists(reserved + "/journal.jsonl"));  // the number was given back
  auto listed = ws.Gate({"card", "list"});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.find("0002-x ") != std::string::npos);
}

// A creation SIGKILLed after its mkdir leaves an empty card dir (tests/store/store_test.cc
// makes one for real): `card list` lists the others with a warning (exit 0), a card whose
// journal does not fold is named and fails the listing (exit 4) without hiding the others, and
// audit's advice fits each.
TEST_CASE("fault: card list and audit with an interrupted creation and a card that does not fold") {
  Workspace ws("");
  Prepare(ws, "checkers/allow.sh");
  const std::string empty = ws.root() + "/tasks/0002-x";
  fs::create_directories(empty);
  auto listed = ws.Gate({"card", "list"});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.rfind(std::string(kCard) + " ", 0) == 0);
  CHECK(listed.err == "devflow: " + empty +
                          " is an interrupted card creation (no journal): no card was created; "
                          "remove it (rm -r " +
                          empty + ")\n");
  auto audit = ws.Gate({"audit"});
  CHECK(audit.out.find("warning: card directory " + empty +
                       " has no journal and nothing else: a card creation was interrupted before "
                       "its first journal line, so no card was created; remove it (rm -r " +
                       empty + ")") != std::string::npos);
  CHECK(audit.out.find("does not fold") == std::string::npos);

  fs::remove(empty);
  const std::string broken = ws.root() + "/tasks/0002-y";
  fs::create_directories(broken);
  test::Spit(broken + "/journal.jsonl", "{}\n");
  auto partial = ws.Gate({"card", "list"});
  CHECK(partial.exit_code == 4);
  CHECK(partial.out.rfind(std::string(kCard) + " ", 0) == 0);  // the others are listed
  CHECK(partial.err == "devflow-gate: card 0002-y is not listed: " + broken +
                           "/journal.jsonl:1: journal entry field \"rev\" must be a positive "
                           "integer\n");
  auto json = ws.Gate({"card", "list", "--json"});
  CHECK(json.exit_code == 4);
  CHECK(nlohmann::json::parse(json.out).size() == 1);
}

// The in-process executor with the FileSystem seam: ENOSPC exactly at each write, whatever the
// host allows (reference: tests/gate/fixture.h Rig, the agent gate + Executor + Store).
using gatetest::Rig;
using gatetest::WriteCard;

TEST_CASE("fault: ENOSPC (FileSystem seam) at the report write fails closed and parks") {
  Rig rig;
  const std::string id = "0501-report-full";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.fs.Fail("write-atomic", rig.ReportDir(), ENOSPC);
  rig.scripted.Veto("the design is hollow");
  MoveOutcome outcome = rig.Move(id);
  const std::string report = rig.ReportDir() + "/" + id + "-designing-ready-r4.md";
  gatetest::ExpectParked(rig, outcome, id,
                         "the veto report could not be written: write-atomic " + report +
                             ": No space left on device (ENOSPC)",
                         5);
  CHECK(rig.Files(rig.ReportDir()).empty());
}

TEST_CASE("fault: ENOSPC (FileSystem seam) at the cache write warns, the allow commits") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0502-cache-full";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.fs.Fail("write-atomic", rig.CacheDir(), ENOSPC);
  rig.scripted.Allow("design is sound");
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "committed");
  const std::string file = rig.CacheDir() + "/" +
                           VerdictCacheKey::Compute("designing->ready", rig.root, id,
                                                    {"prd:3", "design:4"}, gatetest::kInstruction)
                               .FileName();
  CHECK(rig.warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: could not cache the allow verdict at " +
                                 file + ": write-atomic " + file +
                                 ": No space left on device (ENOSPC)"});
  CHECK(rig.Read(id).stage == Location::kReady);
  CHECK(rig.Files(rig.CacheDir()).empty());
}

TEST_CASE("fault: ENOSPC (FileSystem seam) at the journal append rejects, the journal folds") {
  Rig rig;
  const std::string id = "0503-journal-full";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string journal = rig.CardDir(id) + "/journal.jsonl";
  const std::string before = rig.Journal(id);
  rig.fs.Fail("append", journal, ENOSPC);
  rig.scripted.Allow("design is sound");
  MoveOutcome outcome = rig.Move(id);
  CHECK_FALSE(outcome.ok);
  CHECK(outcome.code == "ENOSPC");
  CHECK(outcome.message.find("append " + journal + ": No space left on device (ENOSPC)") !=
        std::string::npos);
  CHECK(rig.Journal(id) == before);
  CHECK_FALSE(fs::exists(rig.CardDir(id) + "/commit.lock"));
  rig.fs.Clear();
  Card card = rig.Read(id);  // folds
  CHECK(card.stage == Location::kDesigning);
  CHECK(card.stage_revision == 4);
}

}  // namespace
}  // namespace devflow::faults

// Records that must not be lost or torn (issue 7 items 9 and 10, code paths): the one durable
// append on a really full disk (a tmpfs with room for commit.lock but not the whole line), a
// journal or ledger whose last line lacks its newline, the commit lock released on an exception,
// no commit without its decision-ledger row, and an exception that escapes a move.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "faults/faults.h"
#include "gate/fixture.h"
#include "host/cli/cli.h"
#include "reports/sha256.h"
#include "server/serve_fixture.h"

namespace devflow::faults {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kPage = 4096;

void Prepare(Workspace& ws, const std::string& extra_config = "") {
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  ws.WriteConfig(yaml.Text() + extra_config);
  ws.CardInDesigning();
}

// Mounts a tmpfs of `size` over the existing directory `dir`, keeping its files (copied out and
// back in). nullopt-like: `mounted()` false when mount(2) is not permitted.
std::unique_ptr<Tmpfs> MountKeeping(const std::string& dir, const std::string& size) {
  const std::string keep = dir + ".keep";
  fs::rename(dir, keep);
  fs::create_directories(dir);
  auto mounted = std::make_unique<Tmpfs>(dir, "size=" + size);
  fs::copy(keep, dir, fs::copy_options::recursive);
  fs::remove_all(keep);
  return mounted;
}

// Pads `file` with blank lines (which every reader skips) so that exactly `room` bytes are left
// in its last page, then fills the file system holding it to the last page: the next append
// writes `room` bytes and then meets ENOSPC (a short write), unless `free_pages` pages are left
// free for other files (commit.lock).
void FillLeaving(const std::string& file, size_t room, size_t free_pages) {
  size_t size = fs::file_size(file);
  size_t pad = (kPage - room - size % kPage + kPage) % kPage;
  std::ofstream(file, std::ios::app) << std::string(pad, '\n');
  REQUIRE(fs::file_size(file) % kPage == kPage - room);
  const std::string dir = fs::path(file).parent_path().string();
  FillUp(dir);
  const std::string filler = dir + "/filler";
  const auto full = fs::file_size(filler);
  REQUIRE(full >= free_pages * kPage);
  fs::resize_file(filler, full - free_pages * kPage);
}

std::vector<json> Rows(const std::string& path) {
  std::vector<json> rows;
  for (const auto& line : e2e::Lines(test::Slurp(path).value_or(""))) {
    if (line.find_first_not_of('\n') == std::string::npos) continue;
    rows.push_back(json::parse(line));
  }
  return rows;
}

std::string LedgerFile(const Workspace& ws) { return ws.root() + "/ledger/decisions.jsonl"; }

TEST_CASE("records: a full disk at the journal append leaves the journal byte-identical") {
  Workspace ws("");
  Prepare(ws);
  auto small = MountKeeping(ws.card_dir(), "256k");
  if (!small->mounted()) {
    MESSAGE("no tmpfs here (" << small->error() << "): the seam case in disk_faults stands");
    return;
  }
  // Room for commit.lock (one page) and 16 bytes of the journal's last page: not the line.
  FillLeaving(ws.journal_path(), 16, 1);
  const std::string before = test::Slurp(ws.journal_path()).value();
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 4);
  // What was written and what was not: the journal unchanged, the ledger's intent row and the
  // outcome row after it that says the commit did not happen; the path and the fix.
  CHECK(r.out == "append " + ws.journal_path() +
                     ": No space left on device (ENOSPC); the file is unchanged (" +
                     std::to_string(before.size()) +
                     " bytes); free space on the file system "
                     "holding " +
                     ws.card_dir() + " and retry; nothing was committed, and the decision ledger " +
                     ws.root() +
                     "/ledger/decisions.jsonl holds this attempt's commit-intent row for card " +
                     kCard +
                     " designing->ready at revision 5, followed by this outcome row (code "
                     "ENOSPC)\n");
  CHECK(r.err == "");
  CHECK(test::Slurp(ws.journal_path()) == before);  // no torn half line
  CHECK_FALSE(fs::exists(ws.card_dir() + "/commit.lock"));
  auto card = ws.ShowJson();  // the card still folds (blank padding lines are skipped)
  CHECK(card["stage"] == "designing");
  CHECK(card["stageRevision"] == 4);
  // The ledger says what happened: the intent, then the ENOSPC outcome; no row claims a commit.
  auto rows = Rows(LedgerFile(ws));
  REQUIRE(rows.size() >= 2);
  CHECK(rows[rows.size() - 2]["code"] == "commit-intent");
  CHECK(rows[rows.size() - 2]["commit"]["rev"] == 5);
  CHECK(rows.back()["code"] == "ENOSPC");
  CHECK(rows.back()["ok"] == false);

  fs::remove(ws.card_dir() + "/filler");
  auto retry = ws.Gate({"move", kCard, "ready"});
  INFO("retry: " << retry.out << retry.err);
  CHECK(retry.exit_code == 0);
  const std::string after = test::Slurp(ws.journal_path()).value();
  REQUIRE(after.rfind(before + "{\"rev\":5,", 0) == 0);  // whole line after the old bytes
  CHECK(after.back() == '\n');
  CHECK(ws.ShowJson()["stage"] == "ready");
}

// The disk full at the journal append (as above), and the outcome row that would say so fails
// too (here RLIMIT_FSIZE stops it, SIGXFSZ ignored): the ledger's last row of this attempt is
// then an intent whose commit did not happen, and the message says exactly that, never that
// the intent row stands as the record of a commit.
TEST_CASE(
    "records: a full disk at the journal append whose outcome row fails too says what the "
    "ledger holds") {
  Workspace ws("");
  Prepare(ws);
  auto small = MountKeeping(ws.card_dir(), "256k");
  if (!small->mounted()) {
    MESSAGE("no tmpfs here (" << small->error() << "): the seam case in disk_faults stands");
    return;
  }
  FillLeaving(ws.journal_path(), 16, 1);
  const std::string ledger = LedgerFile(ws);
  std::vector<json> rows = Rows(ledger);
  REQUIRE(rows.size() >= 2);
  size_t intent_size = 0;  // the last intent row's length, within a few bytes of the next one's
  for (const auto& line : e2e::Lines(test::Slurp(ledger).value())) {
    if (line.find("\"commit-intent\"") != std::string::npos) intent_size = line.size() + 1;
  }
  REQUIRE(intent_size > 0);
  // Blank lines (which every reader skips) past the journal's size, so the limit stops only the
  // ledger's second row: room for the intent row, not for the outcome row after it.
  std::ofstream(ledger, std::ios::app) << std::string(16384 - fs::file_size(ledger), '\n');
  const std::string ledger_before = test::Slurp(ledger).value();
  const std::string before = test::Slurp(ws.journal_path()).value();
  const size_t limit = ledger_before.size() + intent_size + 64;
  auto r = test::RunProgram({"/bin/sh", "-c",
                             "trap '' XFSZ; exec prlimit --fsize=" + std::to_string(limit) +
                                 ":unlimited -- \"$0\" \"$@\"",
                             test::GateBinary(), "move", kCard, "ready"},
                            ws.path());
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 4);
  const std::string after = test::Slurp(ledger).value();
  REQUIRE(after.rfind(ledger_before, 0) == 0);
  const std::string added = after.substr(ledger_before.size());
  CHECK(added.find("\"code\":\"commit-intent\"") != std::string::npos);
  CHECK(std::count(added.begin(), added.end(), '\n') == 1);  // the intent row alone
  CHECK(r.out ==
        "append " + ws.journal_path() +
            ": No space left on device (ENOSPC); the file is unchanged (" +
            std::to_string(before.size()) + " bytes); free space on the file system holding " +
            ws.card_dir() + " and retry; nothing was committed, and the decision ledger " + ledger +
            " holds this attempt's commit-intent row for card " + kCard +
            " designing->ready at revision 5, but not its outcome row (append " + ledger +
            ": File too large (EFBIG); the file is unchanged (" + std::to_string(after.size()) +
            " bytes); check the disk holding " + ledger +
            " and retry); `devflow-gate audit` reports that intent as without its outcome\n");
  CHECK(r.err == "");
  CHECK(test::Slurp(ws.journal_path()) == before);
  auto card = ws.ShowJson();  // the card still folds (blank padding lines are skipped)
  CHECK(card["stage"] == "designing");
  CHECK(card["stageRevision"] == 4);
}

// trial14 D1: under a file-size limit (a shell's `ulimit -f`, systemd's LimitFSIZE=) an append
// that crosses it is a short write, and the kernel then sends SIGXFSZ, whose default action
// killed the host mid-append: a torn journal or ledger line and commit.lock left behind. The
// host ignores SIGXFSZ, so the append meets EFBIG and the one durable-append path undoes it.
// Here nothing traps the signal: the limit is set on the gate alone.
TEST_CASE("records: a file-size limit at an append refuses the move and tears nothing") {
  Workspace ws("");
  Prepare(ws);
  const std::string ledger = LedgerFile(ws);
  const std::string journal_before = test::Slurp(ws.journal_path()).value();
  const std::string ledger_before = test::Slurp(ledger).value();
  // Room for a few bytes more than the larger of the two files: the next append to it crosses
  // the limit partway (a short write), the smaller one's rows fit.
  const size_t limit = std::max(journal_before.size(), ledger_before.size()) + 16;
  auto r = test::RunProgram({"/usr/bin/prlimit", "--fsize=" + std::to_string(limit) + ":unlimited",
                             "--", test::GateBinary(), "move", kCard, "ready"},
                            ws.path());
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 4);  // refused and reported, not killed by SIGXFSZ (128 + 25)
  CHECK(r.out.find("File too large (EFBIG); the file is unchanged") != std::string::npos);
  CHECK(test::Slurp(ws.journal_path()) == journal_before);
  const std::string ledger_after = test::Slurp(ledger).value();
  CHECK(ledger_after.rfind(ledger_before, 0) == 0);
  CHECK((ledger_after.empty() || ledger_after.back() == '\n'));
  CHECK_FALSE(fs::exists(ws.card_dir() + "/commit.lock"));
  CHECK(ws.ShowJson()["stage"] == "designing");
}

TEST_CASE("records: a full disk at the decision ledger refuses the move, nothing is committed") {
  Workspace ws("");
  fs::create_directories(ws.root() + "/ledger");
  Tmpfs small(ws.root() + "/ledger", "size=128k");
  if (!small.mounted()) {
    MESSAGE("no tmpfs here (" << small.error() << "): the ENOTDIR case below stands");
    return;
  }
  Prepare(ws);
  const std::string ledger = LedgerFile(ws);
  FillLeaving(ledger, 16, 0);
  const std::string ledger_before = test::Slurp(ledger).value();
  const std::string journal_before = test::Slurp(ws.journal_path()).value();
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 4);
  CHECK(r.out == "devflow-gate: card " + std::string(kCard) +
                     " designing->ready was not committed: its decision-ledger row could not be "
                     "written, and no transition commits without one: append " +
                     ledger + ": No space left on device (ENOSPC); the file is unchanged (" +
                     std::to_string(ledger_before.size()) +
                     " bytes); free space on the file system holding " + ws.root() +
                     "/ledger and retry (or set ledger: best-effort in " + ws.path() +
                     "/devflow-gate.yaml to commit without the row)\n");
  CHECK(test::Slurp(ledger) == ledger_before);  // rolled back: no fragment
  CHECK(test::Slurp(ws.journal_path()) == journal_before);
  RequireUnmoved(ws);

  // A writer that crashed mid-row left a fragment: the next rows start on their own line.
  fs::remove(ws.root() + "/ledger/filler");
  const std::string fragment = "{\"at\":\"2026-09-16T08:00:00.000Z\",\"card\":\"00";
  std::ofstream(ledger, std::ios::app) << fragment;
  auto again = ws.Gate({"move", kCard, "ready"});
  INFO("again: " << again.out << again.err);
  CHECK(again.exit_code == 0);
  const std::string after = test::Slurp(ledger).value();
  REQUIRE(after.rfind(ledger_before + fragment + "\n", 0) == 0);
  const auto tail = e2e::Lines(after.substr(ledger_before.size() + fragment.size() + 1));
  REQUIRE(tail.size() == 2);
  CHECK(json::parse(tail[0])["code"] == "commit-intent");
  CHECK(json::parse(tail[1])["code"] == "committed");
  RequireCommitted(ws, "ok");
}

TEST_CASE("records: an unwritable decision ledger refuses the move unless ledger: best-effort") {
  SUBCASE("default: refused with ledger-unwritable, exit 4, nothing committed") {
    Workspace ws("");
    Prepare(ws);
    fs::remove_all(ws.root() + "/ledger");
    test::Spit(ws.root() + "/ledger", "not a directory\n");
    const std::string before = test::Slurp(ws.journal_path()).value();
    auto r = ws.Gate({"move", kCard, "ready", "--json"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 4);
    auto j = json::parse(r.out);
    CHECK(j["ok"] == false);
    CHECK(j["code"] == "ledger-unwritable");
    CHECK(j["checks"] == json::array());
    CHECK(j["message"].get<std::string>().find(
              "mkdir " + ws.root() + "/ledger: Not a directory (ENOTDIR)") != std::string::npos);
    CHECK(test::Slurp(ws.journal_path()) == before);
    RequireUnmoved(ws);
  }
  SUBCASE("ledger: best-effort: warned, committed") {
    Workspace ws("");
    Prepare(ws, "ledger: best-effort\n");
    fs::remove_all(ws.root() + "/ledger");
    test::Spit(ws.root() + "/ledger", "not a directory\n");
    auto r = ws.Gate({"move", kCard, "ready"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == CommittedOut("ok"));
    CHECK(r.err.find("devflow-gate: committing card " + std::string(kCard) +
                     " designing->ready without its decision-ledger row (ledger: best-effort)") !=
          std::string::npos);
    RequireCommitted(ws, "ok");
  }
}

// trial19 5d: a FIFO planted at the decision ledger swallowed every row while moves committed.
TEST_CASE("records: a FIFO planted at the decision ledger refuses the move, nothing is committed") {
  Workspace ws("");
  Prepare(ws);
  const std::string ledger = ws.root() + "/ledger/decisions.jsonl";
  fs::remove(ledger);
  REQUIRE(::mkfifo(ledger.c_str(), 0600) == 0);
  const std::string before = test::Slurp(ws.journal_path()).value();
  auto r = ws.Gate({"move", kCard, "ready", "--json"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 4);
  auto j = json::parse(r.out);
  CHECK(j["code"] == "ledger-unwritable");
  CHECK(j["message"].get<std::string>().find("append " + ledger +
                                             ": not a regular file (EINVAL); nothing was "
                                             "written") != std::string::npos);
  CHECK(test::Slurp(ws.journal_path()) == before);
  RequireUnmoved(ws);
}

// Trial 0353 F3: the judged agent can write the workspace and plants symlinks below .devflow
// where the gate (often root) writes its records. Through none of them is a host file outside
// the root written or read: the decision ledger (file or directory) is an unwritable ledger
// (exit 4, ledger-unwritable, the path and the fix), a journal or tasks directory fails the
// move closed, `artifact add` and `card create` are refused; the host files stay as they were.
TEST_CASE("records: no symlink planted below the devflow root is written or read through") {
  test::TempDir host;  // outside the workspace: nothing may change here
  const std::string victim = host / "f";
  auto plant = [&](Workspace& ws) {
    Prepare(ws);
    test::Spit(victim, "HOST FILE\n");
  };
  auto require_untouched = [&](const std::string& note) {
    INFO(note);
    CHECK(test::Slurp(victim) == std::optional<std::string>("HOST FILE\n"));
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(host.path())) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"f"});
  };
  // `what`: the refused operation and its path (`append <ledger file>`, `mkdir <ledger dir>`).
  auto refused_ledger = [&](Workspace& ws, const std::string& what, const std::string& link,
                            const char* kind) {
    auto r = ws.Gate({"move", kCard, "ready", "--json"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 4);
    auto j = json::parse(r.out);
    CHECK(j["code"] == "ledger-unwritable");
    CHECK(j["message"].get<std::string>().find(
              "its decision-ledger row could not be written, and no transition commits without "
              "one: " +
              what + ": " + link + " is a symbolic link below the devflow root " + ws.root() +
              ", which the gate never follows (ELOOP); nothing was written; replace " + link +
              " with a real " + kind + " and retry") != std::string::npos);
    RequireUnmoved(ws);
  };
  SUBCASE("ledger file -> host file") {
    Workspace ws("");
    plant(ws);
    fs::create_directories(ws.root() + "/ledger");
    fs::remove(LedgerFile(ws));
    fs::create_symlink(victim, LedgerFile(ws));
    refused_ledger(ws, "append " + LedgerFile(ws), LedgerFile(ws), "file");
    require_untouched("ledger file");
    // `ledger list` does not read the host file into its output either.
    auto listed = ws.Gate({"ledger", "list"});
    CHECK(listed.exit_code != 0);
    CHECK(listed.out.find("HOST FILE") == std::string::npos);
    CHECK(listed.err.find("HOST FILE") == std::string::npos);
  }
  SUBCASE("ledger dir -> host dir") {
    Workspace ws("");
    plant(ws);
    fs::remove_all(ws.root() + "/ledger");
    fs::create_directory_symlink(host.path(), ws.root() + "/ledger");
    refused_ledger(ws, "mkdir " + ws.root() + "/ledger", ws.root() + "/ledger", "directory");
    require_untouched("ledger dir");
  }
  SUBCASE("journal -> a host copy of it") {
    Workspace ws("");
    plant(ws);
    const std::string copy = host / "journal.jsonl";
    fs::copy_file(ws.journal_path(), copy);
    const std::string before = test::Slurp(copy).value();
    fs::remove(ws.journal_path());
    fs::create_symlink(copy, ws.journal_path());
    auto r = ws.Gate({"move", kCard, "ready"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code != 0);
    CHECK((r.out + r.err)
              .find(ws.journal_path() + ": " + ws.journal_path() +
                    " is a symbolic link below the devflow root " + ws.root()) !=
          std::string::npos);
    CHECK(test::Slurp(copy) == before);
    auto shown = ws.Gate({"card", "show", kCard});
    CHECK(shown.exit_code != 0);
    fs::remove(copy);
    require_untouched("journal");
  }
  SUBCASE("tasks dir -> a host copy of it") {
    Workspace ws("");
    plant(ws);
    const std::string copy = host / "tasks";
    fs::copy(ws.root() + "/tasks", copy, fs::copy_options::recursive);
    const auto before = test::Snapshot(copy);
    fs::remove_all(ws.root() + "/tasks");
    fs::create_directory_symlink(copy, ws.root() + "/tasks");
    auto r = ws.Gate({"move", kCard, "ready"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code != 0);
    CHECK((r.out + r.err).find(ws.root() + "/tasks is a symbolic link below the devflow root") !=
          std::string::npos);
    auto created = ws.Gate({"card", "create", "--title", "evil"});
    CHECK(created.exit_code != 0);
    CHECK(test::Snapshot(copy) == before);
    fs::remove_all(copy);
    require_untouched("tasks dir");
  }
  SUBCASE("artifacts dir -> host dir") {
    Workspace ws("");
    plant(ws);
    fs::remove_all(ws.card_dir() + "/artifacts");
    fs::create_directory_symlink(host.path(), ws.card_dir() + "/artifacts");
    auto r = ws.Gate({"artifact", "add", kCard, "design", "inputs/design.md"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code != 0);
    CHECK((r.out + r.err)
              .find(ws.card_dir() + "/artifacts is a symbolic link below the devflow root") !=
          std::string::npos);
    require_untouched("artifacts dir");
  }
  SUBCASE("the next card dir -> host dir") {
    Workspace ws("");
    plant(ws);
    fs::create_directory_symlink(host.path(), ws.root() + "/tasks/0002-evil");
    auto r = ws.Gate({"card", "create", "--title", "evil"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    require_untouched("next card dir");
  }
}

// A checker fault asks for a park, and the park, like any commit, needs its ledger row: with the
// ledger unwritable nothing is committed, and every face of the outcome says so (the policy's
// "the card is parked blocked" was the message even so, beside "parked": false).
TEST_CASE(
    "records: a failed-closed move whose park cannot write its ledger row says it was "
    "refused, nothing committed, at every face") {
  auto prepare = [](Workspace& ws) {
    GateYaml yaml;
    yaml.command = {Fixture("checkers/fail.sh")};
    ws.WriteConfig(yaml.Text());
    ws.CardInDesigning();
    fs::remove_all(ws.root() + "/ledger");
    test::Spit(ws.root() + "/ledger", "not a directory\n");
  };
  const std::string fault = "the checker ended with exit code 7: boom";
  auto refusal = [](const Workspace& ws) {
    return "devflow-gate: card " + std::string(kCard) +
           " designing->blocked was not committed: its decision-ledger row could not be "
           "written, and no transition commits without one: mkdir " +
           ws.root() + "/ledger: Not a directory (ENOTDIR) (or set ledger: best-effort in " +
           ws.path() + "/devflow-gate.yaml to commit without the row)";
  };
  auto expected = [&](const Workspace& ws) {
    std::string text = NotParkedWithReport(ws, fault, refusal(ws));
    text.pop_back();  // the line's newline
    return text;
  };
  // The move --json object and the server's answer: refused, nothing parked, nothing moved.
  auto check_refusal = [&](const json& j, const Workspace& ws) {
    CHECK(j["ok"] == false);
    CHECK(j["code"] == "ledger-unwritable");
    CHECK(j["parked"] == false);
    CHECK(j["message"] == expected(ws));
    RequireUnmoved(ws);
  };
  SUBCASE("move: text") {
    Workspace ws("");
    prepare(ws);
    const std::string before = test::Slurp(ws.journal_path()).value();
    auto r = ws.Gate({"move", kCard, "ready"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 4);
    CHECK(r.out == expected(ws) + "\n");
    CHECK(r.err == "devflow-agent-gate: failed to park card " + std::string(kCard) +
                       " blocked: " + refusal(ws) + "\n");
    CHECK(test::Slurp(ws.journal_path()) == before);
    RequireUnmoved(ws);
  }
  SUBCASE("move --json") {
    Workspace ws("");
    prepare(ws);
    auto r = ws.Gate({"move", kCard, "ready", "--json"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 4);
    check_refusal(json::parse(r.out), ws);
  }
  SUBCASE("POST /v1/moves") {
    Workspace ws("");
    prepare(ws);
    server_test::SocketServer server(ws);
    auto a = server.Post("/v1/moves", "{\"id\":\"" + std::string(kCard) + "\",\"to\":\"ready\"}");
    INFO("answer: " << a.body << "\nlog: " << server.serve->Log());
    CHECK(a.status == 200);
    check_refusal(a.json(), ws);
  }
}

TEST_CASE("records: a journal whose last line lacks its newline is never glued to our entry") {
  Workspace ws("");
  Prepare(ws);
  std::string intact = test::Slurp(ws.journal_path()).value();
  REQUIRE(intact.back() == '\n');
  intact.pop_back();  // another writer crashed before its newline
  test::Spit(ws.journal_path(), intact);
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  const std::string after = test::Slurp(ws.journal_path()).value();
  // Exactly the bytes the TypeScript store has for the same history: its newline restored,
  // then our line.
  REQUIRE(after.rfind(intact + "\n{\"rev\":5,", 0) == 0);
  CHECK(after.back() == '\n');
  RequireCommitted(ws, "ok");
}

// The in-process executor: an exception thrown from inside the commit (through the OS seam)
// must not leave commit.lock behind.
TEST_CASE("records: an exception inside the commit never leaves commit.lock behind") {
  gatetest::Rig rig;
  const std::string id = "0504-throwing-append";
  gatetest::WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string journal = rig.CardDir(id) + "/journal.jsonl";
  const std::string before = rig.Journal(id);
  bool thrown = false;
  rig.fs.before = [&](const std::string& op, const std::string& path) {
    if (op == "append" && path == journal) {
      CHECK(fs::exists(rig.CardDir(id) + "/commit.lock"));  // thrown while the lock is held
      thrown = true;
      throw std::runtime_error("injected: the disk went away");
    }
  };
  rig.scripted.Allow("design is sound");
  CHECK_THROWS_WITH_AS(rig.Move(id), "injected: the disk went away", std::runtime_error);
  CHECK(thrown);
  CHECK_FALSE(fs::exists(rig.CardDir(id) + "/commit.lock"));
  rig.fs.before = nullptr;
  CHECK(rig.Journal(id) == before);
  rig.scripted.Allow("design is sound");
  CHECK(rig.Move(id).ok);  // the card is not locked out
}

// Runs RunCli in a child process with RealFileSystem() replaced by `faulty`; returns the wait
// status and the child's stdout/stderr (files in `dir`).
struct ChildRun {
  int status = 0;
  std::string out, err;
};
ChildRun RunCliInChild(FileSystem& faulty, const std::string& cwd, const std::string& dir,
                       std::vector<std::string> args) {
  const std::string out = dir + "/child.out", err = dir + "/child.err";
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr) ||
        ::chdir(cwd.c_str()) != 0) {
      ::_exit(120);
    }
    ReplaceFileSystemForTesting(&faulty);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = RunCli(static_cast<int>(args.size()), argv.data());
    std::fflush(nullptr);
    ::_exit(rc);
  }
  ChildRun r;
  REQUIRE(::waitpid(pid, &r.status, 0) == pid);
  r.out = test::Slurp(out).value_or("");
  r.err = test::Slurp(err).value_or("");
  return r;
}

TEST_CASE("records: an exception that escapes a move exits 2 with a ledger row, no terminate") {
  Workspace ws("");
  Prepare(ws);
  const std::string before = test::Slurp(ws.journal_path()).value();
  test::FaultyFileSystem faulty;
  faulty.before = [&](const std::string& op, const std::string& path) {
    if (op == "append" && path == ws.journal_path()) {
      throw std::runtime_error("injected: the journal disk went away");
    }
  };
  test::TempDir out;
  ChildRun r =
      RunCliInChild(faulty, ws.path(), out.path(), {"devflow-gate", "move", kCard, "ready"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(WIFEXITED(r.status));  // not killed by SIGABRT from std::terminate
  CHECK(WEXITSTATUS(r.status) == 2);
  CHECK(r.err == "devflow-gate: internal error while moving card " + std::string(kCard) +
                     ": injected: the journal disk went away; nothing was committed; report this "
                     "with the command that failed\n");
  CHECK(test::Slurp(ws.journal_path()) == before);
  CHECK_FALSE(fs::exists(ws.card_dir() + "/commit.lock"));
  auto rows = Rows(LedgerFile(ws));
  REQUIRE(rows.size() >= 2);
  CHECK(rows[rows.size() - 2]["code"] == "commit-intent");
  CHECK(rows.back()["code"] == "internal-error");
  CHECK(rows.back()["ok"] == false);
  CHECK(rows.back()["edge"] == "designing->ready");
  RequireUnmoved(ws);
}

TEST_CASE("records: every decision row names the config's SHA-256 and the program that ran") {
  Workspace ws("");
  Prepare(ws);
  auto r = ws.Gate({"move", kCard, "ready"});
  REQUIRE(r.exit_code == 0);
  const std::string config = ws.path() + "/devflow-gate.yaml";
  const std::string sha = Sha256Hex(test::Slurp(config).value());
  auto rows = Rows(LedgerFile(ws));
  REQUIRE(rows.size() >= 2);
  for (const auto& row : rows) {
    CHECK(row["config"]["file"] == config);
    CHECK(row["config"]["sha256"] == sha);
    CHECK(row["programs"]["checker"] == Fixture("checkers/allow.sh"));
  }
}

// Every directory entry the gate creates is made durable: each successful mkdir (the root, tasks/,
// the card directory, ledger/) and each file the durable append creates (the decision ledger) is
// followed by an fsync of its parent directory. Observed with strace on the real binary; below
// the root the gate creates names relative to a directory fd (mkdirat, openat: F3 of trial
// 0353), so `-y` prints each fd's path and the parent is known by it.
TEST_CASE("records: creating a card, a ledger and their directories syncs each parent directory") {
  REQUIRE_MESSAGE(fs::exists("/usr/bin/strace"), "strace is in .ci/setup's package list");
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  ws.WriteConfig(yaml.Text());
  test::TempDir logs;
  const std::string log = logs / "strace.txt";
  // The path a call names: its first argument is AT_FDCWD or `N</dir>` (strace -y) for the
  // *at calls, then the quoted name; `mkdir` names the path alone.
  auto named_path = [](const std::string& l, size_t call) {
    const size_t open_paren = l.find('(', call);
    const size_t q = l.find('"', open_paren);
    const std::string name = l.substr(q + 1, l.find('"', q + 1) - q - 1);
    const size_t lt = l.find('<', open_paren);
    if (lt == std::string::npos || lt > q || name.starts_with("/")) return name;
    return l.substr(lt + 1, l.find(">,", lt) - lt - 1) + "/" + name;
  };
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"card", "create", "--title", "Export the audit log"},
        std::vector<std::string>{"move", kCard, "designing"}}) {
    std::vector<std::string> argv = {
        "/usr/bin/strace", "-f", "-qq", "-y", "-o", log, "-e", "trace=mkdir,mkdirat,openat,fsync",
        test::GateBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    // LeakSanitizer cannot run under ptrace (the sanitizer build): leaks are checked elsewhere.
    auto r = test::RunProgram(argv, ws.path(), {{"ASAN_OPTIONS", "detect_leaks=0"}});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const auto lines = e2e::Lines(test::Slurp(log).value());
    std::vector<std::string> created;  // paths whose directory entry was created
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      size_t call = l.find(" mkdir(");
      if (call == std::string::npos) call = l.find(" mkdirat(");
      const bool made = call != std::string::npos && l.ends_with("= 0");  // strace pads "  = 0"
      if (!made) call = l.find(" openat(");
      if (call == std::string::npos) continue;
      const std::string path = named_path(l, call);
      const bool made_file =
          !made && l.find("O_CREAT|O_EXCL") != std::string::npos &&
          fs::path(path).filename().string()[0] != '.' &&  // not a replace's temp
          l.find("commit.lock") == std::string::npos && l.find(" = -1 ") == std::string::npos;
      if (!made && !made_file) continue;
      created.push_back(path);
      const std::string synced_parent = " fsync(";
      const std::string parent = "<" + fs::path(path).parent_path().string() + ">)";
      bool synced = false;
      for (size_t j = i + 1; j < lines.size() && j < i + 5 && !synced; ++j) {
        const std::string& m = lines[j];
        synced = m.find(synced_parent) != std::string::npos &&
                 m.find(parent) != std::string::npos && m.ends_with("= 0");
      }
      CHECK_MESSAGE(synced, "no fsync of " << parent << " after creating " << path);
    }
    if (args[0] == "card") {
      CHECK(std::find(created.begin(), created.end(), ws.root() + "/tasks/" + kCard) !=
            created.end());
    } else {
      CHECK(std::find(created.begin(), created.end(), LedgerFile(ws)) != created.end());
      CHECK(std::find(created.begin(), created.end(), ws.root() + "/ledger") != created.end());
    }
  }
}

}  // namespace
}  // namespace devflow::faults

// SIGTERM, SIGINT or SIGHUP to a running `devflow-gate move` (issue 7 item 10): the checker's
// whole tree dies (a setsid, double-forked sleeper included), nothing is committed or parked,
// the ledger gets an `interrupted` row, and the exit is 128 + the signal with a message on
// stderr. Synchronised on a FIFO: the test's blocking open for writing returns once the
// checker's tree holds the read end; afterwards a write gets EPIPE when no reader is left.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

// Starts `devflow-gate args…` in `cwd` with stdout/stderr into files; returns its pid.
pid_t StartGate(const std::vector<std::string>& args, const std::string& cwd,
                const std::string& out_file, const std::string& err_file,
                const std::string& path_override = "") {
  std::vector<std::string> argv = {test::GateBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  const char* path = std::getenv("PATH");
  const char* home = std::getenv("HOME");
  std::vector<std::string> env = {std::string("PATH=") + (!path_override.empty() ? path_override
                                                          : path                 ? path
                                                                                 : "/usr/bin:/bin"),
                                  std::string("HOME=") + (home ? home : "/tmp"), "LANG=C.UTF-8"};
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE((out >= 0 && err >= 0 && in >= 0));
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
    if (::chdir(cwd.c_str()) != 0) _exit(126);
    ::execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  ::close(out);
  ::close(err);
  ::close(in);
  return pid;
}

void InterruptWith(int sig, int expected_exit, const std::string& name) {
  Workspace ws("");
  const std::string fifo = ws / "held.fifo";
  GateYaml yaml;
  yaml.command = {Fixture("checkers/tree_escape.py"), fifo, "hang"};
  yaml.timeout_ms = 120000;  // far beyond the bound below: the interrupt, not the deadline, ends it
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  const auto rows_before = Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));

  test::TempDir logs;
  pid_t gate = StartGate({"move", ws.card(), "ready"}, ws.path(), logs / "out", logs / "err");
  // Returns once the sleeper (and so the whole tree) holds the read end.
  int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(writer >= 0);
  const auto sent = std::chrono::steady_clock::now();
  REQUIRE(::kill(gate, sig) == 0);
  int status = 0;
  REQUIRE(::waitpid(gate, &status, 0) == gate);
  CHECK(std::chrono::steady_clock::now() - sent < std::chrono::seconds(60));
  const std::string err = test::Slurp(logs / "err").value_or("");
  INFO("stdout: " << test::Slurp(logs / "out").value_or("") << "\nstderr: " << err);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == expected_exit);
  // One prefix; the card, the edge, the signal, and that nothing was committed.
  CHECK(err == "devflow-gate: move of card " + ws.card() +
                   " along designing->ready was "
                   "interrupted by " +
                   name + "; nothing was committed\n");

  // Nothing of the checker's tree is left holding the FIFO.
  auto old = ::signal(SIGPIPE, SIG_IGN);
  errno = 0;
  CHECK(::write(writer, "x", 1) == -1);
  CHECK(errno == EPIPE);
  ::signal(SIGPIPE, old);
  ::close(writer);

  auto rows = Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
  REQUIRE(rows.size() == rows_before.size() + 1);
  auto row = nlohmann::json::parse(rows.back());
  CHECK(row["code"] == "interrupted");
  CHECK(row["message"] == "move of card " + ws.card() +
                              " along designing->ready was interrupted by " + name +
                              "; nothing was committed");
  CHECK(row["ok"] == false);
  CHECK(row["parked"] == false);
  CHECK(ws.ShowJson()["stage"] == "designing");
  CHECK(ws.ShowJson()["stageRevision"] == 4);
}

// The host SIGKILLed while its checker tree (with a setsid escaper) holds the FIFO.
void KillHostMidCheck(const std::string& path_override) {
  Workspace ws("");
  const std::string fifo = ws / "held.fifo";
  GateYaml yaml;
  yaml.command = {Fixture("checkers/tree_escape.py"), fifo, "hang"};
  yaml.timeout_ms = 120000;
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  test::TempDir logs;
  pid_t gate =
      StartGate({"move", ws.card(), "ready"}, ws.path(), logs / "out", logs / "err", path_override);
  int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(writer >= 0);
  REQUIRE(::kill(gate, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(gate, &status, 0) == gate);
  // POLLERR on a FIFO's write end: the last reader is gone (a wait on that event, bounded far
  // below the checker's 120 s deadline).
  pollfd p{writer, 0, 0};
  CHECK(::poll(&p, 1, 30000) == 1);
  CHECK((p.revents & POLLERR) != 0);
  ::close(writer);
}

}  // namespace

TEST_CASE("a host SIGKILLed mid-check leaves nothing of its checker running: bubblewrap") {
  KillHostMidCheck("");
}

TEST_CASE("a host SIGKILLed mid-check leaves nothing of its checker running: Landlock") {
  PathWithoutBwrap no_bwrap;
  KillHostMidCheck(no_bwrap.path());
}

TEST_CASE("SIGTERM during a Landlock-confined move kills the whole tree too") {
  // The same as below without bubblewrap on PATH (its PID namespace is not what kills here).
  PathWithoutBwrap no_bwrap;
  Workspace ws("");
  const std::string fifo = ws / "held.fifo";
  GateYaml yaml;
  yaml.command = {Fixture("checkers/tree_escape.py"), fifo, "hang"};
  yaml.timeout_ms = 120000;
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  test::TempDir logs;
  pid_t gate = StartGate({"move", ws.card(), "ready"}, ws.path(), logs / "out", logs / "err",
                         no_bwrap.path());
  int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(writer >= 0);
  REQUIRE(::kill(gate, SIGTERM) == 0);
  int status = 0;
  REQUIRE(::waitpid(gate, &status, 0) == gate);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  auto old = ::signal(SIGPIPE, SIG_IGN);
  errno = 0;
  CHECK(::write(writer, "x", 1) == -1);
  CHECK(errno == EPIPE);
  ::signal(SIGPIPE, old);
  ::close(writer);
}

TEST_CASE("SIGTERM during a move kills the checker's tree, ledgers interrupted, exits 143") {
  InterruptWith(SIGTERM, 143, "SIGTERM");
}

TEST_CASE("SIGINT during a move kills the checker's tree, ledgers interrupted, exits 130") {
  InterruptWith(SIGINT, 130, "SIGINT");
}

TEST_CASE("SIGHUP during a move kills the checker's tree, ledgers interrupted, exits 129") {
  InterruptWith(SIGHUP, 129, "SIGHUP");
}

TEST_CASE("SIGTERM after the commit: the move stands, exit 0, its normal output, row allowed") {
  // issue 7, trial: a SIGTERM that landed after the journal append exited 143, which scripts
  // read as "did not happen". Synchronised on events: inotify on the ledger (the commit-intent
  // row written) and on the journal (the commit point); an flock the test holds on the ledger
  // keeps the outcome row, and so the end of the command, waiting until the signal is sent.
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
  const std::string ledger = ws.root() + "/ledger/decisions.jsonl";
  if (!test::Slurp(ledger)) test::Spit(ledger, "");
  const auto rows_before = Lines(test::Slurp(ledger).value_or(""));
  const int watch = ::inotify_init1(IN_CLOEXEC);
  REQUIRE(watch >= 0);
  const int ledger_wd = ::inotify_add_watch(watch, ledger.c_str(), IN_MODIFY);
  const int journal_wd = ::inotify_add_watch(watch, ws.journal_path().c_str(), IN_MODIFY);
  REQUIRE((ledger_wd >= 0 && journal_wd >= 0));
  // Blocks until a write to the watched file `wd` (events of the other are kept in `seen`).
  std::vector<int> seen;
  auto wait_for = [&](int wd) {
    while (std::find(seen.begin(), seen.end(), wd) == seen.end()) {
      alignas(inotify_event) char buf[4096];
      const ssize_t n = ::read(watch, buf, sizeof buf);
      REQUIRE(n > 0);
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
        seen.push_back(e->wd);
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
  };

  test::TempDir logs;
  pid_t gate = StartGate({"move", ws.card(), "ready"}, ws.path(), logs / "out", logs / "err");
  wait_for(ledger_wd);  // the commit-intent row is being written
  const int held = ::open(ledger.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);  // granted once the intent row's append is done
  wait_for(journal_wd);                  // the commit point: the journal line is appended
  REQUIRE(::kill(gate, SIGTERM) == 0);   // before the outcome row, which waits for our flock
  ::close(held);
  ::close(watch);
  int status = 0;
  REQUIRE(::waitpid(gate, &status, 0) == gate);
  const std::string out = test::Slurp(logs / "out").value_or("");
  const std::string err = test::Slurp(logs / "err").value_or("");
  INFO("stdout: " << out << "\nstderr: " << err);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(out.find("check by agent: ok") != std::string::npos);
  CHECK(err == "devflow-gate: SIGTERM arrived after card " + ws.card() +
                   " had moved designing->ready (revision 5); the move stands\n");
  CHECK(ws.ShowJson()["stage"] == "ready");
  CHECK(ws.ShowJson()["stageRevision"] == 5);
  auto rows = Lines(test::Slurp(ledger).value_or(""));
  REQUIRE(rows.size() == rows_before.size() + 2);
  CHECK(nlohmann::json::parse(rows[rows.size() - 2])["outcome"] == "intent");
  auto row = nlohmann::json::parse(rows.back());
  CHECK(row["outcome"] == "allowed");
  CHECK(row["ok"] == true);
}

}  // namespace devflow::e2e

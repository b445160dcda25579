// Nothing a checker starts outlives its check, at every level (issue 7 item 7): a sleeper that
// left the checker's session (setsid) and was double-forked holds a FIFO open for reading;
// once Dispatch has returned, no process may hold it (a non-blocking writer open fails with
// ENXIO at once: no wait, no sleep). Runs under bubblewrap and, with DG_TEST_SANDBOX=fallback,
// under Landlock + seccomp.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <thread>

#include "checker/checker_support.h"
#include "checker/subprocess.h"
#include "support/support.h"

namespace devflow {
namespace {

struct TreeRun {
  Result<CheckReply> reply;
  std::string level;
  int writer_errno = 0;  // errno of open(fifo, O_WRONLY | O_NONBLOCK) after Dispatch; 0: opened
};

TreeRun RunEscaper(bool sandbox_off = false) {
  test::TempDir ws;
  const std::string fifo = ws / "held.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  ProviderConfig p;
  p.name = "escaper";
  p.command = {test::SourceDir() + "/tests/fixtures/checkers/tree_escape.py", fifo};
  p.sandbox_off = sandbox_off;
  SubprocessOptions options;
  options.bwrap = test::TestBwrap();
  SubprocessChecker checker({p}, "", options);
  CheckRequest r;
  r.provider = "escaper";
  r.prompt = "x";
  r.timeout_ms = 20000;
  r.card_id = test::UniqueCard();
  r.edge = "designing->ready";
  r.root = ws.path() + "/.devflow";
  r.workspace = ws.path();
  TreeRun run{checker.Dispatch(r), checker.SandboxLevel(p), 0};
  int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  run.writer_errno = fd < 0 ? errno : 0;
  if (fd >= 0) ::close(fd);
  test::KillProcessesOfCard(r.card_id, r.root);  // whatever escaped (only ever the control case)
  return run;
}

}  // namespace

TEST_CASE("a setsid, double-forked sleeper is dead when Dispatch returns, at every level") {
  TreeRun run = RunEscaper();
  REQUIRE_MESSAGE(run.reply.ok(), run.reply.status().message());
  INFO("level " << run.level << ", reply: " << run.reply->text);
  CHECK(run.reply->text.rfind("sleeper ", 0) == 0);
  CHECK(run.writer_errno == ENXIO);  // no reader left: the sleeper is gone
  if (run.level != "bwrap") {        // its pid is the host's (not a PID namespace's)
    const int pid = std::stoi(run.reply->text.substr(8));
    CHECK(::kill(pid, 0) != 0);
  }
}

// The deadline's SIGTERM is sent by the checker's own reaper to the checker's group at every
// level; under bubblewrap by the reaper inside the sandbox (checker/reaper.h), relayed. It used
// to be sent host-side to every process a scan of /proc found below bubblewrap's init, so a
// setsid escaper got it under bubblewrap and not under Landlock.
TEST_CASE(
    "the deadline's SIGTERM reaches the checker's group and nothing that left it, at "
    "every level") {
  test::TempDir ws;
  ProviderConfig p;
  p.name = "term";
  p.command = {test::SourceDir() + "/tests/fixtures/checkers/term_group_only.py"};
  SubprocessOptions options;
  options.bwrap = test::TestBwrap();
  options.term_grace_ms = 500;
  SubprocessChecker checker({p}, "", options);
  CheckRequest r;
  r.provider = "term";
  r.prompt = "x";
  r.timeout_ms = 2000;
  r.card_id = test::UniqueCard();
  r.edge = "designing->ready";
  r.root = ws.path() + "/.devflow";
  r.workspace = ws.path();
  auto reply = checker.Dispatch(r);
  INFO("level " << checker.SandboxLevel(p));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker exceeded checkTimeoutMs (2000ms)");
  CHECK(checker.last_stderr() == "checker-term\n");
  CHECK(test::SurvivorsOfCard(r.card_id).empty());
}

// Issue 7 item 13's second spurious fault ("the checker ended with signal SIGKILL" in a stress
// move nobody killed): a test's clean-up SIGKILLed every process whose environment named its
// card, and card ids repeat (every e2e workspace's card is 0001-export-the-audit-log; test runs
// share the machine), so it hit another run's checker and its reaper, whose environment is the
// checker's. The clean-up matches the check's root too.
TEST_CASE("a clean-up of another root's check of the same card id leaves a running check alone") {
  test::TempDir ws, other;
  const std::string fifo = ws / "go.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  ProviderConfig p;
  p.name = "waiter";
  p.command = {test::SourceDir() + "/tests/fixtures/checkers/wait_fifo.sh", fifo};
  SubprocessOptions options;
  options.bwrap = test::TestBwrap();
  SubprocessChecker checker({p}, "", options);
  CheckRequest r;
  r.provider = "waiter";
  r.prompt = "x";
  r.timeout_ms = 20000;
  r.card_id = "0001-export-the-audit-log";
  r.edge = "designing->ready";
  r.root = ws.path() + "/.devflow";
  r.workspace = ws.path();
  std::optional<Result<CheckReply>> reply;
  std::thread check([&] {
    reply = checker.Dispatch(r);
    // A check that never reached the FIFO must not leave the writer's open below waiting.
    const int unblock = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (unblock >= 0) ::close(unblock);
  });
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // the checker reads: it runs
  REQUIRE(writer >= 0);
  CHECK_FALSE(test::ProcessesOfCard(r.card_id, r.root).empty());
  test::KillProcessesOfCard(r.card_id, other.path() + "/.devflow");  // another root's clean-up
  CHECK(::write(writer, "go\n", 3) == 3);
  ::close(writer);
  check.join();
  REQUIRE(reply.has_value());
  REQUIRE_MESSAGE(reply->ok(), reply->status().message());
  CHECK(reply->value().text.find("\"verdict\":\"allow\"") != std::string::npos);
}

TEST_CASE("sandbox: off reaps the checker's tree too") {
  TreeRun run = RunEscaper(/*sandbox_off=*/true);
  REQUIRE_MESSAGE(run.reply.ok(), run.reply.status().message());
  CHECK(run.level == "off");
  CHECK(run.writer_errno == ENXIO);
}

}  // namespace devflow

namespace devflow {

// Under bubblewrap the host starts bubblewrap itself (issue 8), so the one process that kills
// the checker's tree is R', the reaper inside the sandbox, and nothing outside the sandbox would
// end the tree if the checker stopped or killed R'. R' is the PID namespace's init
// (`--as-pid-1`), to which the kernel drops a SIGKILL or SIGSTOP sent from inside: right after
// both signals R' is neither dead, stopped nor holding a pending signal. As pid 2 below
// bubblewrap's own init (the cut without --as-pid-1) R' took the SIGKILL at once and the checker
// died with it (no reply), or it stopped and no kill of the host's reached the tree again.
TEST_CASE("under bubblewrap a checker can neither kill nor stop the reaper that ends its tree") {
  test::TempDir ws;
  ProviderConfig p;
  p.name = "parricide";
  p.command = {"/bin/sh", "-c",
               "cat >/dev/null; kill -KILL $PPID; kill -STOP $PPID; echo \"ppid $PPID\"; "
               "grep -E '^(State|SigPnd|ShdPnd):' /proc/$PPID/status"};
  SubprocessOptions options;
  options.bwrap = test::TestBwrap();
  SubprocessChecker checker({p}, "", options);
  if (checker.SandboxLevel(p) != "bwrap") return;  // R' exists only there
  CheckRequest r;
  r.provider = "parricide";
  r.prompt = "x";
  r.timeout_ms = 20000;
  r.card_id = test::UniqueCard();
  r.edge = "designing->ready";
  r.root = ws.path() + "/.devflow";
  r.workspace = ws.path();
  auto reply = checker.Dispatch(r);
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  INFO("reply: " << reply->text);
  CHECK(reply->text.rfind("ppid 1\n", 0) == 0);
  CHECK(reply->text.find("State:\tS") != std::string::npos);
  CHECK(reply->text.find("SigPnd:\t0000000000000000") != std::string::npos);
  CHECK(reply->text.find("ShdPnd:\t0000000000000000") != std::string::npos);
  CHECK(test::SurvivorsOfCard(r.card_id).empty());
}

}  // namespace devflow

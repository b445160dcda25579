// What a killed host leaves (SIGKILL skips every destructor) is cleared by the next dispatch:
// its scratch dir. (Its checker's processes are ended by the check's reaper when the host's
// end of the control pipe closes: tests/e2e/interrupt_test.cc.) Also: a sandboxed checker
// runs under the deadline guard, so it ends by itself.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "checker/subprocess.h"
#include "support/support.h"

namespace devflow {
namespace {

// A pid that belonged to a process of ours and is now certainly gone.
pid_t DeadPid() {
  pid_t pid = ::fork();
  if (pid == 0) _exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST_CASE("the next dispatch removes a dead host's scratch dir and keeps a live host's") {
  test::TempDir parent, ws;
  const std::string orphan =
      parent.path() + "/devflow-gate-checker-" + std::to_string(DeadPid()) + "-AbCdEf";
  std::filesystem::create_directories(orphan + "/home");
  const std::string live =
      parent.path() + "/devflow-gate-checker-" + std::to_string(::getpid()) + "-LiVeOn";
  std::filesystem::create_directories(live);
  ProviderConfig p;
  p.name = "allow";
  p.command = {test::SourceDir() + "/tests/fixtures/checkers/allow.sh"};
  SubprocessOptions options;
  options.scratch_parent = parent.path();
  SubprocessChecker checker({p}, "", options);
  CheckRequest r;
  r.provider = "allow";
  r.prompt = "x";
  r.timeout_ms = 20000;
  r.card_id = "0001-a";
  r.edge = "designing->ready";
  r.root = ws.path() + "/.devflow";
  r.workspace = ws.path();
  REQUIRE(checker.Dispatch(r).ok());

  CHECK_FALSE(std::filesystem::exists(orphan));
  CHECK(std::filesystem::exists(live));  // its host (this process) still runs
}

}  // namespace devflow

namespace devflow {

// Under bubblewrap the checker's parent is a reaper of its own (checker/reaper.h), whose control
// pipe is the relay from the outer reaper: it sends the deadline's SIGTERM to the checker's
// group and ends the sandbox when the outer reaper is gone (no coreutils `timeout` any more).
TEST_CASE("under bubblewrap the checker runs below a reaper of its own, its control the relay") {
  test::TempDir ws;
  ProviderConfig p;
  p.name = "parent";
  p.command = {"/bin/sh", "-c", "cat >/dev/null; cat /proc/$PPID/cmdline | tr '\\0' ' '"};
  SubprocessChecker checker({p}, "", SubprocessOptions{});
  if (checker.SandboxLevel(p) != "bwrap") return;  // the inner reaper exists only there
  CheckRequest r;
  r.provider = "parent";
  r.prompt = "x";
  r.timeout_ms = 5000;
  r.card_id = "0001-a";
  r.edge = "designing->ready";
  r.root = ws.path() + "/.devflow";
  r.workspace = ws.path();
  auto reply = checker.Dispatch(r);
  REQUIRE(reply.ok());
  INFO("parent: " << reply->text);
  CHECK(reply->text.find("devflow-gate-reaper ") != std::string::npos);
  CHECK(reply->text.find(" -1 0 0 0 0 -1 -1 -1 -1 -1 -- /bin/sh -c ") != std::string::npos);
}

}  // namespace devflow

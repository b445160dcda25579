// What a killed host leaves (SIGKILL skips every destructor) is cleared by the next dispatch:
// its scratch dir, below the per-user parent `<TMPDIR>/devflow-gate-<euid>/` only. (Its
// checker's processes are ended by the check's reaper when the host's end of the control pipe
// closes: tests/e2e/interrupt_test.cc.) A scratch dir is a gone host's when no process holds its
// flock, whatever PID namespace the host ran in. The fresh trial of issue 7 saw `move --dry-run`
// remove_all other hosts' dirs in world-writable /tmp, judged dead by kill(pid, 0).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "checker/checker_support.h"
#include "checker/subprocess.h"
#include "support/support.h"

namespace devflow {
namespace {

namespace fs = std::filesystem;

// A pid that belonged to a process of ours and is now certainly gone.
pid_t DeadPid() {
  pid_t pid = ::fork();
  if (pid == 0) _exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

std::string UserParent(const std::string& parent) {
  return parent + "/devflow-gate-" + std::to_string(::geteuid());
}

CheckRequest AllowRequest(const std::string& ws) {
  CheckRequest r;
  r.provider = "allow";
  r.prompt = "x";
  r.timeout_ms = 20000;
  r.card_id = "0001-a";
  r.edge = "designing->ready";
  r.root = ws + "/.devflow";
  r.workspace = ws;
  return r;
}

Result<CheckReply> DispatchIn(const std::string& parent, const std::string& ws, bool sweep = true,
                              std::vector<std::string> command = {}) {
  ProviderConfig p;
  p.name = "allow";
  p.command =
      command.empty()
          ? std::vector<std::string>{test::SourceDir() + "/tests/fixtures/checkers/allow.sh"}
          : std::move(command);
  SubprocessOptions options;
  options.scratch_parent = parent;
  options.sweep_scratch = sweep;
  options.bwrap = test::TestBwrap();
  SubprocessChecker checker({p}, "", options);
  return checker.Dispatch(AllowRequest(ws));
}

}  // namespace

TEST_CASE("the next dispatch removes a gone host's scratch dir, never a locked one, no link out") {
  test::TempDir parent, ws, outside;
  const std::string mine = UserParent(parent.path());
  REQUIRE(::mkdir(mine.c_str(), 0700) == 0);
  // Gone: nobody holds its lock. A read-only subdir, and symlinks out to a dir and a file that
  // the removal must unlink, never follow.
  const std::string orphan =
      mine + "/devflow-gate-checker-" + std::to_string(DeadPid()) + "-AbCdEf";
  fs::create_directories(orphan + "/home/ro");
  test::Spit(outside.path() + "/keep.txt", "keep");
  fs::create_directory_symlink(outside.path(), orphan + "/home/out");
  fs::create_symlink(outside.path() + "/keep.txt", orphan + "/home/ro/keep");
  fs::permissions(orphan + "/home/ro", fs::perms::owner_read | fs::perms::owner_exec);
  // Live: its host holds the lock, in whatever PID namespace (a pid that is gone here).
  const std::string live = mine + "/devflow-gate-checker-" + std::to_string(DeadPid()) + "-LiVeOn";
  fs::create_directories(live);
  const int held = ::open(live.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);

  REQUIRE(DispatchIn(parent.path(), ws.path()).ok());

  CHECK_FALSE(fs::exists(fs::symlink_status(orphan)));
  CHECK(fs::exists(live));  // its lock is held: a host still runs there
  CHECK(test::Slurp(outside.path() + "/keep.txt").value() == "keep");
  CHECK(fs::is_directory(outside.path()));
  ::close(held);
  // The dispatch's own scratch dir is gone once it returns: only the live one is left.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(mine)) left.push_back(e.path().string());
  CHECK(left == std::vector<std::string>{live});
}

// A chain of `levels` directories below `top`, with a file at each level, made relative to the
// previous level (no path grows past PATH_MAX); the bottom directory's fd is returned.
int DeepChain(const std::string& top, int levels) {
  int fd = ::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  for (int level = 0; level < levels; ++level) {
    REQUIRE(::mkdirat(fd, "d", 0700) == 0);
    const int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(next >= 0);
    ::close(fd);
    fd = next;
    const int file = ::openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    REQUIRE(file >= 0);
    ::close(file);
  }
  return fd;
}

TEST_CASE("a checker's scratch tree 300 and 3,000 levels deep is removed when the check ends") {
  // trial17 D1: the removal stopped 256 levels down, so a checker that nested its scratch dir
  // deeper left it (and whatever it wrote there) for good. Here the tree also holds a symlink
  // out, a mode-0 and a read-only directory at its bottom.
  for (const int levels : {300, 3000}) {
    CAPTURE(levels);
    test::TempDir parent, ws, outside;
    test::Spit(outside.path() + "/keep.txt", "keep");
    auto reply = DispatchIn(parent.path(), ws.path(), true,
                            {test::SourceDir() + "/tests/fixtures/checkers/deep_scratch.py",
                             std::to_string(levels), outside.path()});
    REQUIRE_MESSAGE(reply.ok(), reply.status().message());
    CHECK(reply->text.find("deep " + std::to_string(levels)) != std::string::npos);
    CHECK(fs::is_empty(UserParent(parent.path())));
    CHECK(test::Slurp(outside.path() + "/keep.txt").value() == "keep");
  }
}

TEST_CASE("the next dispatch removes a gone host's scratch dir 3,000 levels deep") {
  test::TempDir parent, ws, outside;
  const std::string mine = UserParent(parent.path());
  REQUIRE(::mkdir(mine.c_str(), 0700) == 0);
  const std::string orphan =
      mine + "/devflow-gate-checker-" + std::to_string(DeadPid()) + "-DeEpOo";
  REQUIRE(::mkdir(orphan.c_str(), 0700) == 0);
  test::Spit(outside.path() + "/keep.txt", "keep");
  const int bottom = DeepChain(orphan, 3000);
  REQUIRE(::symlinkat(outside.path().c_str(), bottom, "out") == 0);
  REQUIRE(::mkdirat(bottom, "shut", 0) == 0);
  ::close(bottom);

  REQUIRE(DispatchIn(parent.path(), ws.path()).ok());

  CHECK_FALSE(fs::exists(fs::symlink_status(orphan)));
  CHECK(fs::is_empty(mine));
  CHECK(test::Slurp(outside.path() + "/keep.txt").value() == "keep");
}

TEST_CASE("a dispatch never sweeps the shared parent, and without sweep_scratch sweeps nothing") {
  test::TempDir parent, ws;
  // Planted in the world-writable parent itself (where scratch dirs used to live): not ours.
  const std::string foreign =
      parent.path() + "/devflow-gate-checker-" + std::to_string(DeadPid()) + "-FoReiG";
  fs::create_directories(foreign + "/home");
  const std::string mine = UserParent(parent.path());
  REQUIRE(::mkdir(mine.c_str(), 0700) == 0);
  const std::string orphan =
      mine + "/devflow-gate-checker-" + std::to_string(DeadPid()) + "-AbCdEf";
  fs::create_directories(orphan);

  REQUIRE(DispatchIn(parent.path(), ws.path(), /*sweep=*/false).ok());
  CHECK(fs::exists(foreign + "/home"));
  CHECK(fs::exists(orphan));  // a dry run deletes nothing but its own scratch

  REQUIRE(DispatchIn(parent.path(), ws.path()).ok());
  CHECK(fs::exists(foreign + "/home"));
  CHECK_FALSE(fs::exists(orphan));
}

// trial12: on a host whose /tmp the user cannot write, the fault said only "cannot create
// /tmp/devflow-gate-1001: Permission denied". It now says to set TMPDIR. (A TMPDIR that is a
// file gives the same mkdir failure as root, whom no mode stops.)
TEST_CASE("a TMPDIR where the scratch parent cannot be made fails closed saying to set TMPDIR") {
  test::TempDir tmp, ws;
  const std::string file = tmp / "not-a-dir";
  test::Spit(file, "x");
  auto reply = DispatchIn(file, ws.path());
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message().find("scratch dir: cannot create " + UserParent(file) +
                                      ": Not a directory; set TMPDIR to a directory this user "
                                      "can write (the gate makes its checkers' scratch dirs "
                                      "below it), or fix " +
                                      file + "'s permissions") != std::string::npos);
}

TEST_CASE("a scratch parent that is a symlink, not ours or not 0700 fails the check closed") {
  test::TempDir parent, ws, elsewhere;
  const std::string mine = UserParent(parent.path());
  const std::string fix = "; remove it (rm -r " + mine +
                          ") so the gate makes it again, or set TMPDIR to a directory only this "
                          "user can write";
  SUBCASE("a symlink to a directory of ours with mode 0700") {
    REQUIRE(::chmod(elsewhere.path().c_str(), 0700) == 0);
    fs::create_directory_symlink(elsewhere.path(), mine);
    auto reply = DispatchIn(parent.path(), ws.path());
    REQUIRE_FALSE(reply.ok());
    CHECK(reply.status().message().find("scratch dir: the scratch parent " + mine +
                                        " is a symlink or not a directory" + fix) !=
          std::string::npos);
    CHECK(fs::is_empty(elsewhere.path()));  // nothing made through the link
  }
  SUBCASE("mode 0755") {
    REQUIRE(::mkdir(mine.c_str(), 0700) == 0);
    REQUIRE(::chmod(mine.c_str(), 0755) == 0);
    auto reply = DispatchIn(parent.path(), ws.path());
    REQUIRE_FALSE(reply.ok());
    CHECK(reply.status().message().find("the scratch parent " + mine + " has mode 0755, not 0700" +
                                        fix) != std::string::npos);
  }
  SUBCASE("owned by another user") {
    REQUIRE(::mkdir(mine.c_str(), 0700) == 0);
    if (::geteuid() != 0) return;  // only root can give it away
    REQUIRE(::chown(mine.c_str(), 65534, 65534) == 0);
    auto reply = DispatchIn(parent.path(), ws.path());
    REQUIRE_FALSE(reply.ok());
    CHECK(reply.status().message().find("the scratch parent " + mine +
                                        " is owned by uid 65534, not by this user (uid 0)" + fix) !=
          std::string::npos);
  }
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

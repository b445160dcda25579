// RemoveStaleTemps (host/cleanup.h, issue 4 item 6): which names are WriteFileAtomic temps, and
// that a sweep removes exactly the temps of writers that are gone.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <set>
#include <string>

#include "host/cleanup.h"
#include "support/support.h"

namespace devflow {
namespace {

namespace fs = std::filesystem;

// A pid that certainly ran and is gone: a child that exited and was reaped.
pid_t DeadPid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// A child that sleeps until killed (a writer still alive).
struct LiveChild {
  pid_t pid = ::fork();
  LiveChild() {
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
    REQUIRE(pid > 0);
  }
  ~LiveChild() {
    if (pid <= 0) return;  // kill(-1) would signal every process we may signal
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

std::string Temp(const std::string& name, int64_t pid, int seq = 0) {
  return "." + name + "." + std::to_string(pid) + "." + std::to_string(seq) + ".tmp";
}

TEST_CASE("TempWriterPid reads the pid of .<name>.<pid>.<seq>.tmp and refuses anything else") {
  CHECK(TempWriterPid(".card.md.123.0.tmp") == 123);
  CHECK(TempWriterPid(".6ed74e5fc9f8c830.json.4242.17.tmp") == 4242);
  CHECK(TempWriterPid(".x.1.2.tmp") == 1);
  CHECK(TempWriterPid("card.md") == -1);
  CHECK(TempWriterPid("journal.jsonl") == -1);
  CHECK(TempWriterPid(".card.md.tmp") == -1);     // no pid, no seq
  CHECK(TempWriterPid(".card.md.12.tmp") == -1);  // "card" would be the name, "md" the pid
  CHECK(TempWriterPid("..1.2.tmp") == -1);        // empty name
  CHECK(TempWriterPid(".a.12x.3.tmp") == -1);     // pid not decimal
  CHECK(TempWriterPid(".a.0.3.tmp") == -1);       // pid 0 is nobody
  CHECK(TempWriterPid("x.json.123.tmp") == -1);   // upstream's name: not this writer's
  CHECK(TempWriterPid(".a.1.2.tmp.bak") == -1);
}

TEST_CASE("RemoveStaleTemps removes the temps of dead writers and keeps everything else") {
  test::TempDir tmp;
  const std::string dir = tmp / "cache";
  const pid_t dead = DeadPid();
  LiveChild live;
  const std::string stale = dir + "/" + Temp("a.json", dead);
  const std::string stale2 = dir + "/" + Temp("b.json", dead, 3);
  const std::string mine = dir + "/" + Temp("c.json", ::getpid());
  const std::string in_flight = dir + "/" + Temp("d.json", live.pid);
  const std::string record = dir + "/a.json";
  const std::string lookalike_dir = dir + "/" + Temp("e.json", dead);
  for (const auto& f : {stale, stale2, mine, in_flight, record}) test::Spit(f, "{}\n");
  fs::create_directories(lookalike_dir);

  TempSweep sweep = RemoveStaleTemps(RealFileSystem(), {dir, tmp / "absent"});
  CHECK(sweep.errors.empty());
  CHECK(std::set<std::string>(sweep.removed.begin(), sweep.removed.end()) ==
        std::set<std::string>{stale, stale2});
  CHECK_FALSE(fs::exists(stale));
  CHECK_FALSE(fs::exists(stale2));
  CHECK(fs::exists(mine));
  CHECK(fs::exists(in_flight));
  CHECK(test::Slurp(record) == "{}\n");
  CHECK(fs::is_directory(lookalike_dir));
}

TEST_CASE("RemoveStaleTemps asks the liveness probe about each writer, never about itself") {
  test::TempDir tmp;
  const std::string dir = tmp.path();
  for (int pid : {101, 102}) test::Spit(dir + "/" + Temp("r.md", pid), "x");
  test::Spit(dir + "/" + Temp("r.md", ::getpid()), "x");
  std::set<int64_t> asked;
  TempSweep sweep = RemoveStaleTemps(RealFileSystem(), {dir}, [&](int64_t pid) {
    asked.insert(pid);
    return pid == 102;
  });
  CHECK(asked == std::set<int64_t>{101, 102});
  CHECK(sweep.removed == std::vector<std::string>{dir + "/" + Temp("r.md", 101)});
  CHECK(fs::exists(dir + "/" + Temp("r.md", 102)));
  CHECK(fs::exists(dir + "/" + Temp("r.md", ::getpid())));
}

TEST_CASE("RemoveStaleTemps reports list and remove errors as lines and keeps sweeping") {
  test::TempDir tmp;
  const std::string denied = tmp / "denied";
  const std::string other = tmp / "other";
  const std::string stuck = other + "/" + Temp("s.json", 101);
  const std::string gone = other + "/" + Temp("t.json", 101);
  test::Spit(denied + "/" + Temp("u.json", 101), "x");
  test::Spit(stuck, "x");
  test::Spit(gone, "x");
  test::FaultyFileSystem faulty;
  faulty.Fail("list", denied, EACCES);
  faulty.Fail("remove", stuck, EACCES);
  TempSweep sweep = RemoveStaleTemps(faulty, {denied, other}, [](int64_t) { return false; });
  CHECK(sweep.errors ==
        std::vector<std::string>{"list " + denied + ": Permission denied (EACCES)",
                                 "remove " + stuck + ": Permission denied (EACCES)"});
  CHECK(sweep.removed == std::vector<std::string>{gone});
  CHECK(fs::exists(stuck));
}

}  // namespace
}  // namespace devflow

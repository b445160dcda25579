// Spawn cost against the host's size (issue 11 item 5): a check dispatched by SubprocessChecker
// at each sandbox level, side by side with a bare posix_spawn of the same checker (the floor)
// a fork + exec of it (what a fork-based spawn pays) and the Landlock level's spawn alone
// through the reaper, with 8 MiB, 170 MiB and 1 GiB of
// touched memory in the host. Run by bench/spawn.sh, which prints the ratios.
//
//   SPAWN_BENCH_CHECKER=PATH build/spawn_bench [--benchmark_* flags]
//
// PATH: a checker that reads stdin to EOF and prints an allow reply (bench/allow_checker.c).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "checker/reaper.h"
#include "checker/sandbox.h"
#include "checker/subprocess.h"

extern char** environ;

namespace devflow {
namespace {

const char* CheckerPath() {
  const char* path = std::getenv("SPAWN_BENCH_CHECKER");
  return path && *path ? path : "/bin/true";
}

// The host's memory: `mib` MiB mapped and every page touched (so a fork must copy its page
// tables), kept across benchmarks of the same size.
void HoldMemory(size_t mib) {
  static void* block = nullptr;
  static size_t held = 0;
  if (held == mib) return;
  if (block) ::munmap(block, held << 20);
  block = ::mmap(nullptr, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  std::memset(block, 1, mib << 20);
  held = mib;
}

// CPU time of this process and of every descendant it reaped, over a benchmark's loop: what a
// loaded machine inflates far less than wall-clock time (a fork's page-table copy is system
// time of the host; the copied tables' teardown is the child's). Reported per iteration as the
// counter `cpu_ms`.
class CpuMeter {
 public:
  explicit CpuMeter(benchmark::State& state) : state_(state), start_(Now()) {}
  ~CpuMeter() {
    state_.counters["cpu_ms"] =
        benchmark::Counter(Now() - start_, benchmark::Counter::kAvgIterations);
  }

 private:
  static double Ms(const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; }
  static double Now() {
    rusage self{}, children{};
    ::getrusage(RUSAGE_SELF, &self);
    ::getrusage(RUSAGE_CHILDREN, &children);
    return Ms(self.ru_utime) + Ms(self.ru_stime) + Ms(children.ru_utime) + Ms(children.ru_stime);
  }
  benchmark::State& state_;
  double start_;
};

// The fastest single iteration of a benchmark's loop, in ms (counter `min_ms`): each iteration
// holds one `Lap`. On a machine shared with builds, a repetition's mean counts every preemption
// of every spawn in it, the fastest of its hundreds of spawns the one the load disturbed least;
// bench/spawn.sh judges the targets on it beside the means.
class Fastest {
 public:
  explicit Fastest(benchmark::State& state) : state_(state) {}
  Fastest(const Fastest&) = delete;
  Fastest& operator=(const Fastest&) = delete;
  ~Fastest() {
    if (best_ms_ > 0) state_.counters["min_ms"] = best_ms_;
  }

  class Lap {
   public:
    explicit Lap(Fastest& fastest) : fastest_(fastest), start_(Clock::now()) {}
    Lap(const Lap&) = delete;
    Lap& operator=(const Lap&) = delete;
    ~Lap() {
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
      fastest_.best_ms_ = fastest_.best_ms_ > 0 ? std::min(fastest_.best_ms_, ms) : ms;
    }

   private:
    Fastest& fastest_;
    std::chrono::steady_clock::time_point start_;
  };

 private:
  using Clock = std::chrono::steady_clock;
  benchmark::State& state_;
  double best_ms_ = 0;
};

// Bare posix_spawn of the checker, stdin and stdout on /dev/null, then waitpid.
void Floor(benchmark::State& state) {
  HoldMemory(static_cast<size_t>(state.range(0)));
  const char* path = CheckerPath();
  char* argv[] = {const_cast<char*>(path), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  CpuMeter cpu(state);
  Fastest fastest(state);
  for (auto _ : state) {
    Fastest::Lap lap(fastest);
    pid_t pid = 0;
    if (::posix_spawn(&pid, path, &actions, nullptr, argv, environ) != 0) {
      state.SkipWithError("posix_spawn failed");
      break;
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  posix_spawn_file_actions_destroy(&actions);
}

// fork + exec + waitpid: the page-table copy a fork-based spawn pays (the old path forked the
// host twice: once for the reaper, once more in it for the checker).
void ForkExec(benchmark::State& state) {
  HoldMemory(static_cast<size_t>(state.range(0)));
  const char* path = CheckerPath();
  CpuMeter cpu(state);
  Fastest fastest(state);
  for (auto _ : state) {
    Fastest::Lap lap(fastest);
    pid_t pid = ::fork();
    if (pid == 0) {
      int null_fd = ::open("/dev/null", O_RDWR);
      ::dup2(null_fd, 0);
      ::dup2(null_fd, 1);
      char* argv[] = {const_cast<char*>(path), nullptr};
      ::execve(path, argv, environ);
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
}

// The Landlock level's spawn alone: posix_spawn of the checker reaper (checker/reaper.h) with a
// Landlock ruleset and seccomp filter, which forks the checker, confines it between fork and
// exec and execs it; then waitpid of the reaper. Beside the floor this is what confining the
// checker between fork and exec costs, without the rest of a check (scratch dir, pipes, event
// loop, prompt and reply).
// With `confined` false (reaper_plain) the same reaper and checker with no ruleset, no filter
// and no limits: the difference of the two rows is what applying the confinement between clone
// and exec costs (issue 11 item 5's "< 1 ms at 1 GiB"), the rest is the reaper's own exec.
void ReaperAt(benchmark::State& state, bool confined) {
  HoldMemory(static_cast<size_t>(state.range(0)));
  const SandboxSupport& support = ProbeSandbox("", {false});
  if (support.landlock_abi < 1 || !support.seccomp) {
    state.SkipWithError("Landlock + seccomp is not usable here");
    return;
  }
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string();
  const std::string reaper_program = dir.substr(0, dir.rfind('/') + 1) + reaper::kProgram;
  const ReadableSet readable = CheckerReadable({"", "/tmp", {CheckerPath()}, "", {}});
  auto confinement = ChildConfinement::Landlock(LimitsFor(20000, 0, 64 << 20, 256),
                                                support.landlock_abi, readable, false);
  if (!confinement.ok()) {
    state.SkipWithError(confinement.status().message().c_str());
    return;
  }
  int control[2];
  if (::pipe2(control, O_CLOEXEC) != 0) {
    state.SkipWithError("pipe2 failed");
    return;
  }
  const ResourceLimits& lim = confinement->limits();
  auto number = [&](auto n) { return confined ? std::to_string(n) : std::string("0"); };
  auto fd = [&](int n) { return confined ? std::to_string(n) : std::string("-1"); };
  std::vector<std::string> argv = {reaper_program,
                                   std::to_string(control[0]),
                                   "2",  // the report pipe: stderr, on /dev/null here
                                   number(lim.cpu_soft_s),
                                   number(lim.cpu_hard_s),
                                   number(lim.file_bytes),
                                   number(lim.open_files),
                                   fd(confinement->ruleset_fd()),
                                   fd(confinement->filter_fd()),
                                   "-1",  // kPassFd: none (bubblewrap only)
                                   "-1",  // kRelayReadFd: none
                                   "-1",  // kRelayFd: none
                                   "--",
                                   CheckerPath()};
  // The reaper refuses an argv whose "--" is not at reaper::kSeparator (it exits 127): this row
  // was skipped from 2026-12-02, when kPassFd (5a8d3a4) and the relay fds (78df100) were added,
  // to 2026-12-05. Keep the two in step at compile time.
  static_assert(reaper::kSeparator == 12, "spawn_bench: update the reaper argv above");
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  for (int fd : {control[0], confinement->ruleset_fd(), confinement->filter_fd()}) {
    posix_spawn_file_actions_adddup2(&actions, fd, fd);
  }
  CpuMeter cpu(state);
  Fastest fastest(state);
  for (auto _ : state) {
    Fastest::Lap lap(fastest);
    pid_t pid = 0;
    if (::posix_spawn(&pid, reaper_program.c_str(), &actions, nullptr, args.data(), environ) != 0) {
      state.SkipWithError("posix_spawn of the reaper failed");
      break;
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("the reaper or the checker failed");
      break;
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  ::close(control[0]);
  ::close(control[1]);
}

void ReaperLandlock(benchmark::State& s) { ReaperAt(s, true); }
void ReaperPlain(benchmark::State& s) { ReaperAt(s, false); }

// What the readable set (issue 7) adds to a Landlock-level check, on the cache-miss path only:
// CheckerReadable and the ruleset that grants it (/etc entry by entry, without its secrets),
// counter "rules" = landlock_add_rule calls (one open and one fstat each). Beside
// landlock_scratch_only (the same ruleset and seccomp filter without the readable set) and
// dispatch_landlock, the whole check that pays it.
void LandlockRuleset(benchmark::State& state, bool readable_set) {
  const SandboxSupport& support = ProbeSandbox("", {false});
  if (support.landlock_abi < 1 || !support.seccomp) {
    state.SkipWithError("Landlock + seccomp is not usable here");
    return;
  }
  int rules = 0;
  for (auto _ : state) {
    ReadableSet readable;
    if (readable_set) {
      readable = CheckerReadable({"/tmp", "/tmp", {CheckerPath()}, SearchPath(), {}}, false);
    } else {
      readable.scratch = "/tmp";  // the rules before issue 7: the scratch dir and the devices
    }
    auto confinement = ChildConfinement::Landlock(LimitsFor(20000, 0, 64 << 20, 256),
                                                  support.landlock_abi, readable, false);
    if (!confinement.ok()) {
      state.SkipWithError(confinement.status().message().c_str());
      break;
    }
    rules = confinement->rules();
  }
  state.counters["rules"] = rules;
}
void LandlockScratchOnly(benchmark::State& s) { LandlockRuleset(s, false); }
void LandlockReadableSet(benchmark::State& s) { LandlockRuleset(s, true); }

// One whole check through SubprocessChecker::Dispatch at a sandbox level.
void DispatchAt(benchmark::State& state, const std::string& level) {
  HoldMemory(static_cast<size_t>(state.range(0)));
  ProviderConfig p;
  p.name = "bench";
  p.command = {CheckerPath()};
  p.sandbox_off = level == "off";
  SubprocessOptions options;
  options.bwrap = level == "landlock" ? "" : "bwrap";
  options.remember_probe = false;
  SubprocessChecker checker({p}, "", options);
  const std::string got = checker.SandboxLevel(p);
  if (level == "landlock" ? got.rfind("landlock", 0) != 0 : got != level) {
    state.SkipWithError(("sandbox level " + level + " is not usable here (" + got + ")").c_str());
    return;
  }
  CheckRequest r;
  r.provider = "bench";
  r.prompt = "check this\n";
  r.timeout_ms = 20000;
  r.card_id = "0001-bench";
  r.edge = "designing->ready";
  r.root = "/tmp/.devflow";
  CpuMeter cpu(state);
  Fastest fastest(state);
  for (auto _ : state) {
    Fastest::Lap lap(fastest);
    Result<CheckReply> reply = checker.Dispatch(r);
    if (!reply.ok()) {
      state.SkipWithError(reply.status().message().c_str());
      break;
    }
  }
}

void DispatchOff(benchmark::State& s) { DispatchAt(s, "off"); }
void DispatchLandlock(benchmark::State& s) { DispatchAt(s, "landlock"); }
void DispatchBwrap(benchmark::State& s) { DispatchAt(s, "bwrap"); }

}  // namespace
}  // namespace devflow

int main(int argc, char** argv) {
  using namespace devflow;
  // Memory size outermost, so each size is touched once and every variant runs at it.
  for (int64_t mib : {8, 170, 1024}) {
    const std::string at = "/" + std::to_string(mib);
    struct Variant {
      const char* name;
      void (*fn)(benchmark::State&);
    };
    for (Variant v :
         {Variant{"floor_posix_spawn", Floor}, Variant{"fork_exec", ForkExec},
          Variant{"reaper_plain", ReaperPlain}, Variant{"reaper_landlock", ReaperLandlock},
          Variant{"landlock_scratch_only", LandlockScratchOnly},
          Variant{"landlock_readable_set", LandlockReadableSet},
          Variant{"dispatch_off", DispatchOff}, Variant{"dispatch_landlock", DispatchLandlock},
          Variant{"dispatch_bwrap", DispatchBwrap}}) {
      benchmark::RegisterBenchmark(v.name, v.fn)
          ->Arg(mib)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

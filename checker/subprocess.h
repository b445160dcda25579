// The checker as a one-shot subprocess (SPEC §5 "Checker = subprocess", cpp-notes §1.4/§1.5).
// This header is plain C++: Boost.Asio / Boost.Process v2 live only in checker/subprocess.cc,
// the one translation unit that pays their compile cost (cpp-notes §1.3).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "checker/dispatch.h"
#include "config/config.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace devflow {

/// Tuning of SubprocessChecker. The defaults are the product's; tests shorten them.
struct SubprocessOptions {
  /// Grace between SIGTERM and SIGKILL to the checker's process group on a timeout (ms).
  int64_t term_grace_ms = 1000;
  /// How long to keep waiting for EOF on stdout/stderr after the direct child has been reaped
  /// and its group killed; a grandchild that left the group (setsid) may still hold the pipes
  /// (cpp-notes §1.5 item 4). In ms.
  int64_t eof_grace_ms = 200;
  /// How much of the end of stderr is kept for the fault message (bytes).
  int64_t stderr_tail_bytes = 64 * 1024;
  /// Where the per-user parent of the per-check scratch directories (HOME and TMPDIR of the
  /// checker) is made: `<scratch_parent>/devflow-gate-<euid>/`, mode 0700, refused unless it is
  /// a real directory this user owns with mode 0700. Empty means $TMPDIR, else /tmp.
  std::string scratch_parent;
  /// Whether a dispatch first removes the scratch dirs of hosts that are gone (below the
  /// per-user parent only); `--dry-run` sets false: it deletes nothing but its own scratch.
  bool sweep_scratch = true;
  /// Bubblewrap program (name searched on $PATH, or a path) probed once per process; empty
  /// never uses bubblewrap, which forces the Landlock + seccomp fallback (cpp-notes §3).
  std::string bwrap = "bwrap";
  /// RLIMIT_CPU soft limit in seconds of CPU time; 0 derives it from the deadline
  /// (ceil(timeout s) + 1). The hard limit is always soft + 1.
  int64_t cpu_limit_s = 0;
  /// RLIMIT_FSIZE: the largest file a checker may write (bytes).
  int64_t max_file_bytes = 64 * 1024 * 1024;
  /// RLIMIT_NOFILE: open files per checker process.
  int64_t max_open_files = 256;
  /// The checker reaper program (checker/reaper.h); empty: `devflow-gate-reaper` beside the
  /// running executable (/proc/self/exe), where the build and the package put it. A missing
  /// reaper is a start fault: no checker runs without one.
  std::string reaper;
  /// Whether a positive bubblewrap probe may be remembered on disk (ProbeOptions::remember);
  /// `--dry-run` and `config check` set false: they write nothing anywhere.
  bool remember_probe = true;
};

/// The distinct sandbox levels of the checks SubprocessChecker dispatched (run, or refused
/// for "none") on the calling thread since the last call, in order; clears the record. A move
/// dispatches its checks on the thread that runs it, so a deployment takes them before and
/// after a move for its ledger row (concurrent moves on other threads do not mix in).
std::vector<std::string> TakeSandboxLevels();

/// The server's drain (SIGTERM past `--drain-timeout-ms`): kills the whole tree of every check
/// SubprocessChecker is running in this process (through each check's reaper) and returns once
/// every reaper has exited, i.e. when nothing those checks started runs any more. From then on
/// the process is ending: a Dispatch that was running, or that starts later, never returns
/// (so no row or answer of its own follows the drain's `interrupted` rows). Thread-safe.
void KillRunningChecks();

/// How a check waits for its checker when the caller runs an event loop of its own (the
/// admission server: one io_context, no thread per request). While a CheckWaiter is installed
/// on the calling thread (CheckWaiter::Scope), SubprocessChecker::Dispatch creates the check's
/// pipes, timers and pidfd on `io()` instead of a private io_context, and instead of running
/// that loop itself calls `Wait(ready)`, which must return once `ready()` is true while `io()`
/// goes on running other work (the server: a stackful coroutine that suspends). Dispatch calls
/// `Wake()` when `ready()` has become true. Everything else — the spawn, the deadline, the
/// kills, the tree's end, the faults — is the same code in both modes.
class CheckWaiter {
 public:
  virtual ~CheckWaiter() = default;
  virtual boost::asio::io_context& io() = 0;
  virtual void Wait(const std::function<bool()>& ready) = 0;
  virtual void Wake() = 0;

  /// Installs `waiter` (nullptr: none) on this thread until the scope ends; RAII, nestable.
  class Scope {
   public:
    explicit Scope(CheckWaiter* waiter);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    CheckWaiter* saved_;
  };
  /// The waiter installed on this thread, or nullptr.
  static CheckWaiter* Current();
};

/// Runs a provider's checker as a subprocess: argv from the provider (`command`, or for
/// `builtin: <name>` the argv `{self, "checker", <name>, args...}`), the prompt on stdin, the
/// reply from stdout, stdin written and stdout/stderr drained concurrently.
///
/// Every check is started through its own reaper (checker/reaper.h): the host posix_spawns the
/// small `devflow-gate-reaper` program (no fork of the host, so the cost does not grow with the
/// host's memory), which becomes a child subreaper and forks the checker; under bubblewrap the
/// host starts bubblewrap itself and the reaper runs inside it as the PID namespace's init. The
/// checker runs in its own session and process group (setsid: no controlling terminal) with default
/// signal dispositions and an empty signal mask, no inherited fd above 2, PR_SET_PDEATHSIG(SIGKILL)
/// tied to the reaper, cwd = the workspace, and a minimal environment: PATH (host's), HOME = TMPDIR
/// = a fresh scratch dir (removed after the check), LANG (host's, else C.UTF-8), each provider
/// `env` name set in the host, and DEVFLOW_GATE_CARD / DEVFLOW_GATE_EDGE / DEVFLOW_GATE_ROOT /
/// DEVFLOW_GATE_INPUTS. When the check ends (or the host does) the reaper kills the checker's whole
/// tree, setsid and double-forked escapers included, and the host sees it exit only after that.
///
/// `timeout_ms` covers the whole check: on overrun the group gets SIGTERM, then SIGKILL after
/// `term_grace_ms`. After the direct child is reaped the rest of its group is SIGKILLed and
/// Dispatch waits (bounded) until no member of the group runs any more.
///
/// Confinement (checker/sandbox.h): the level from ProbeSandbox(options.bwrap) is applied to
/// every check and named in CheckReply::sandbox. Under "bwrap" the command runs in bubblewrap
/// (own PID namespace: everything the checker started dies with it, setsid or not), started by
/// the host itself, below the reaper as the namespace's init: the deadline's SIGTERM goes to
/// the checker's group from that reaper (on the host's control pipe; no process table is read),
/// the end of the check kills the tree from there too, and an exit code 128+N from bubblewrap
/// is reported as signal N (bubblewrap turns a signal death into that code). Under
/// "landlock-abi<N>+seccomp" the confinement is applied in the checker before exec, by its reaper.
/// Resource limits apply at every level, `sandbox: off` included. The program is checked before the
/// start (exists, executable) at every level.
///
/// Everything the checker wrote — the reply, the stderr tail, hence the faults below and the
/// evidence — is returned with each value passed under the provider's `env` redacted
/// (checker/redact.h Redactor: `[redacted: NAME]`, values of 8 bytes or more, never longer
/// than the text read; issue 7 item 5, trial15 L1). `reply_bytes` / `stderr_bytes` count the
/// bytes as written.
///
/// Before the first spawn the host makes itself non-dumpable (PR_SET_DUMPABLE 0), so no
/// checker without CAP_SYS_PTRACE can read its /proc/<pid>/environ or mem (issue 7 item 5).
///
/// Faults (Status code "fault", SPEC §5), checked in this order:
///  - `subagent provider "<name>" is not registered`
///  - NoSandboxProblem (checker/sandbox.h) when the level would be "none": nothing runs
///  - `cannot start checker "<program>": <OS error>` (also for a workspace that is not there,
///    and `...: sandbox <step>: <OS error>` when the confinement cannot be prepared)
///  - `the checker exceeded checkTimeoutMs (<n>ms)` (from the host's own deadline flag)
///  - `the checker reply exceeded <n> bytes` (stdout longer than `max_reply_bytes`)
///  - `the checker ended with signal SIG<NAME>`
///  - `the checker ended with exit code <n>` + `: <last non-blank stderr line>` if any.
/// A checker that closes stdin without reading the whole prompt is not a fault by itself.
///
/// Dispatch may run concurrently from several threads, and interleaved on one thread under a
/// CheckWaiter (the record of the levels dispatched, TakeSandboxLevels, stays each caller's
/// across a Wait); it ignores SIGPIPE process-wide.
class SubprocessChecker : public CheckerDispatch {
 public:
  /// `providers`: the configured providers (copied). `self_path`: absolute path of the
  /// devflow-gate binary, used for `builtin` providers.
  SubprocessChecker(std::vector<ProviderConfig> providers, std::string self_path,
                    SubprocessOptions options = {});

  Result<CheckReply> Dispatch(const CheckRequest& request) override;
  /// The configured provider of that name, or nullptr.
  const ProviderConfig* Provider(const std::string& provider) const override;

  /// The sandbox level a check of `provider` runs under with this checker's options: "off",
  /// "bwrap", "landlock-abi<N>+seccomp" or "none" (for `config check` and fault reports).
  std::string SandboxLevel(const ProviderConfig& provider) const;
  /// Empty when `provider`'s checks can run; else NoSandboxProblem (level "none"), which
  /// `config check` reports as an error.
  std::string SandboxProblem(const ProviderConfig& provider) const;

  /// Test hook: the process group id of the most recent checker started (0 before any); under
  /// bubblewrap, the group of bubblewrap itself.
  int last_pgid() const { return last_pgid_.load(); }
  /// Test hook: the stderr tail of the most recent check that ran (at most 2x
  /// stderr_tail_bytes).
  std::string last_stderr() const;

 private:
  std::map<std::string, ProviderConfig> providers_;
  std::string self_path_;
  SubprocessOptions options_;
  std::atomic<int> last_pgid_{0};
  mutable std::mutex last_stderr_mutex_;
  std::string last_stderr_;
};

}  // namespace devflow

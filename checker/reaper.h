// The contract between the host (checker/subprocess.cc) and the checker reaper, the small
// static program `devflow-gate-reaper` (checker/reaper/main.cc) that the host starts with
// posix_spawn for every check. Spawning through a program of its own keeps a spawn's cost
// independent of the host's memory (a fork copies the host's page tables: 20.7 ms at 1 GiB,
// issue 11 item 5), while everything that must run between fork and exec (the reaper's child
// subreaper, the checker's session and process group, parent-death signal, resource limits,
// Landlock, seccomp, capability drop) runs in a process of a few hundred KiB.
//
// The reaper R (own process group, default signals, empty mask, cwd = the workspace, environ =
// the checker's whole environment, stdin/stdout/stderr = the check's pipes):
//  1. makes itself non-dumpable (an exec made it dumpable again: no checker may ptrace it),
//     ignores the terminal's signals, becomes a child subreaper, reads the seccomp program;
//  2. starts the checker C with clone(CLONE_VM | CLONE_VFORK) on a stack of its own (nothing is
//     copied; R waits until C has exec'd) and then keeps none of the check's pipes (stdio on
//     /dev/null);
//  3. C: writes its pid on the report pipe, takes its own session (setsid: no controlling
//     terminal; its own process group), default signals (R started by the host undoes only its
//     own ignores: the host's spawn gave R every signal at its default; R' every signal),
//     PR_SET_PDEATHSIG(SIGKILL) tied to R, ApplyConfinement, marks every fd above 2
//     close-on-exec and execs; on a failure it reports the errno
//     and _exits 127;
//  4. R waits on C's pidfd and on the control pipe. kTerminate on the pipe: R sends SIGTERM to
//     C's group and waits on. C exits, or the pipe gives kKill or EOF (the host asks, or the
//     host is gone): R SIGKILLs C's group and then every child it has (orphans are re-parented
//     to R), reaps, repeats until none is left, and ends with C's wait status (the same exit
//     code, or the same signal). R leaves C a zombie until it has signalled C's group, so the
//     group it signals is never a recycled number.
// So when the host sees R exit, nothing the checker started is running; and the host never
// signals the checker's group itself (a group number it holds may be another's once R has
// reaped C): every signal to the tree goes through R.
//
// Under bubblewrap there is no outer reaper (issue 8: its exec was 2.0-2.3 ms of every check):
// the host starts bubblewrap itself (clone(CLONE_VM | CLONE_VFORK) in checker/subprocess.cc:
// its own session, default signals, empty mask, the resource limits, cwd = the workspace, only
// the check's pipes on 0-2, the control pipe's read end on 3 and the seccomp memfd on 4), and the
// command bubblewrap runs is this program, the reaper R', as the PID namespace's init
// (`--as-pid-1`): [R' 3 -1 0 0 0 0 -1 -1 -1 -1 -1 -- checker…]. R' removes the PWD bubblewrap
// always sets and does steps 1-4 there (no confinement of its own: bubblewrap applied it, and
// the limits are bubblewrap's, inherited), reading the host's control pipe itself: kTerminate
// sends the deadline's SIGTERM to the checker's group, once, from its own parent, at both
// levels alike; kKill or EOF (the host closed it, or is gone) kills its tree. What the outer
// reaper gave is kept by the kernel and bubblewrap:
//  - no process of the sandbox can stop or kill R' (the kernel drops a SIGKILL or SIGSTOP sent
//    to a namespace's init from inside it), so R' always hears the control pipe;
//  - when R' exits the kernel kills every process left in the namespace, and R''s parent (the
//    host's child, bubblewrap) sees it exit only once they are all gone: so when the host sees
//    bubblewrap exit, nothing the checker started is running, setsid daemons included;
//  - the host gone (even by SIGKILL): R' reads EOF, and bubblewrap's --die-with-parent SIGKILLs
//    bubblewrap and R' as well;
//  - bubblewrap exits with R''s code, which is the checker's, or 128 + N for a checker killed
//    by signal N (an init cannot end itself by a signal: R' exits 128 + N then, as bubblewrap
//    reported it before);
//  - the report pipe is not needed: the host's clone returns once bubblewrap has exec'd, with
//    the errno when it could not; R' and the checker failing say so on stderr and exit 127.
// The argv positions kPassFd, kRelayReadFd and kRelayFd are reserved since: the reaper refuses
// any value but -1 there (usage, exit 2).
#pragma once

#include <cstdint>

namespace devflow::reaper {

/// The name of the reaper program, looked up next to the running executable
/// (SubprocessOptions::reaper overrides it).
inline constexpr const char* kProgram = "devflow-gate-reaper";

/// argv of the reaper: [0] the program, then the positions below (decimal integers; -1 for a
/// missing fd), then "--", the checker's executable (a path) and its arguments.
enum Arg : int {
  kControlFd = 1,  // read end of the control pipe
  kReportFd,       // write end of the report pipe
  kCpuSoft,        // ResourceLimits, 0: unchanged
  kCpuHard,
  kFileBytes,
  kOpenFiles,
  kRulesetFd,    // Landlock ruleset, or -1
  kFilterFd,     // memfd with the seccomp program, or -1
  kPassFd,       // reserved, -1 (was bubblewrap's --seccomp fd, passed through R)
  kRelayReadFd,  // reserved, -1 (was the relay's read end, R''s control pipe)
  kRelayFd,      // reserved, -1 (was the relay's write end, kept by R)
  kSeparator,    // "--"
  kExecutable,
};

/// One record on the report pipe (written atomically: smaller than PIPE_BUF). EOF after the
/// kCheckerPid record means the checker exec'd.
struct Report {
  int32_t kind;
  int32_t value;
};
inline constexpr int32_t kCheckerPid =
    1;  // value: the checker's pid (= its process group and session)
inline constexpr int32_t kCheckerError = 2;  // value: errno of the checker's setup or exec
inline constexpr int32_t kReaperError = 3;   // value: errno of the reaper's own setup or fork

/// Requests on the control pipe (one byte each); EOF means kKill.
inline constexpr char kTerminate = 't';  // SIGTERM to the checker's group (the deadline)
inline constexpr char kKill = 'k';       // kill the whole tree now and exit

/// Exit code of a reaper whose own setup failed, and of a checker that could not exec.
inline constexpr int kStartFailed = 127;

}  // namespace devflow::reaper

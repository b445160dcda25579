// devflow-gate-reaper: one per check, started by the host with posix_spawn (contract and steps in
// checker/reaper.h). A static program without the C++ runtime: only raw syscalls run here, so
// its start-up costs a small fraction of a millisecond and none of the host's memory is copied.
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <initializer_list>

#include "checker/confinement.h"
#include "checker/reaper.h"

extern char** environ;

namespace devflow::reaper {
namespace {

// Decimal (optionally negative) integer; false on anything else.
bool ParseInt(const char* text, long* out) {
  if (text == nullptr || *text == '\0') return false;
  bool negative = *text == '-';
  if (negative) ++text;
  long v = 0;
  for (; *text; ++text) {
    if (*text < '0' || *text > '9' || v > (1L << 50)) return false;
    v = v * 10 + (*text - '0');
  }
  *out = negative ? -v : v;
  return true;
}

// Decimal digits of `v` into `out` (no terminator), returns the length.
size_t Digits(long v, char* out) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < sizeof tmp);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

void Send(int fd, int32_t kind, int32_t value) {
  const Report report{kind, value};
  while (::write(fd, &report, sizeof report) < 0 && errno == EINTR) {
  }
}

// The waitpid-style status of what waitid reported.
int WaitStatus(const siginfo_t& info) {
  return info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : (info.si_status & 0x7f);
}

// SIGKILLs every current child of this (single-threaded) process; returns how many it saw.
int KillChildren(pid_t self) {
  char path[64] = "/proc/self/task/";
  size_t len = ::strlen(path);
  len += Digits(self, path + len);
  ::memcpy(path + len, "/children", sizeof "/children");
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int seen = 0;
  char buf[4096];
  long pid = 0;
  bool in_number = false;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        pid = pid * 10 + (buf[i] - '0');
        in_number = true;
      } else if (in_number) {
        ::kill(static_cast<pid_t>(pid), SIGKILL);
        ++seen;
        pid = 0;
        in_number = false;
      }
    }
  }
  if (in_number) {
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    ++seen;
  }
  ::close(fd);
  return seen;
}

// Kills C's group and then every descendant, until no child is left. Records C's status. C is
// not reaped before this (Watch only peeks), so the group signalled is C's, never a recycled one.
void KillTree(pid_t self, pid_t checker, int* checker_status, bool* checker_reaped) {
  ::kill(-checker, SIGKILL);
  for (;;) {
    int seen = KillChildren(self);
    siginfo_t info{};
    // Blocking only when something was just killed (it will exit); else just look.
    int rc = ::waitid(P_ALL, 0, &info, WEXITED | (seen > 0 ? 0 : WNOHANG));
    if (rc != 0) {
      if (errno == EINTR) continue;
      return;  // ECHILD: nothing left
    }
    if (info.si_pid == checker && !*checker_reaped) {
      *checker_reaped = true;
      *checker_status = WaitStatus(info);
    }
    // One reaped: when no child is left (ECHILD) nothing of the tree runs, since the orphans of
    // every process that exited were re-parented to R before it could be reaped; so the common
    // end (C reaped, no other child) needs no second look at /proc (issue 8: 3 system calls).
    siginfo_t left{};
    if (info.si_pid != 0 && ::waitid(P_ALL, 0, &left, WEXITED | WNOHANG | WNOWAIT) != 0 &&
        errno == ECHILD) {
      return;
    }
  }
}

[[noreturn]] void EndLike(int status) {
  if ((status & 0x7f) != 0) {
    int sig = status & 0x7f;
    struct rlimit no_core {};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::kill(::getpid(), sig);
    ::_exit(128 + sig);
  }
  ::_exit(WEXITSTATUS(status));
}

[[noreturn]] void Watch(pid_t self, pid_t checker, int control) {
  int status = SIGKILL;  // "killed by SIGKILL" unless C says otherwise
  bool reaped = false;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, checker, 0));
  pollfd watch[2] = {{control, POLLIN, 0}, {pidfd, POLLIN, 0}};
  for (;;) {
    int n = ::poll(watch, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 10);
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && watch[0].revents != 0) {
      char request = 0;
      ssize_t got = ::read(control, &request, 1);
      if (got < 0 && errno == EINTR) continue;
      if (got == 1 && request == kTerminate) {
        ::kill(-checker, SIGTERM);  // C is not reaped yet: its group's number is still its own
        continue;
      }
      break;  // kKill, EOF (the host is gone) or an error: the tree goes now
    }
    siginfo_t info{};
    // WNOWAIT: C stays a zombie, so neither its pid nor its group's number can be handed out
    // again before KillTree has signalled the group; KillTree reaps it.
    if (::waitid(P_PID, static_cast<id_t>(checker), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == checker) {
      status = WaitStatus(info);
      break;
    }
  }
  KillTree(self, checker, &status, &reaped);
  EndLike(status);
}

// The signals R ignores (not stopped or ended by the terminal; the host asks through the control
// pipe), and so the only ones whose disposition C has to undo when the host started R.
constexpr int kReaperIgnores[] = {SIGINT,  SIGQUIT, SIGHUP,  SIGTERM,
                                  SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};

// C, between fork and exec. Never returns.
[[noreturn]] void StartChecker(pid_t reaper, int report, const ConfinementPlan& plan,
                               char* const* argv) {
  // A new session: no controlling terminal, so the checker cannot reach the operator's through
  // /dev/tty (TIOCSTI typed commands into the operator's shell at the Landlock level, issue 7
  // F1). setsid() also makes it a group leader, pgid == pid, so kill(-pgid, sig) reaches the
  // checker and everything it forks; taken before the host learns the pid, so a kill of the
  // group never misses it. C is R's child, never a group leader, so setsid() cannot fail EPERM.
  int err = ::setsid() < 0 ? errno : 0;
  Send(report, kCheckerPid, static_cast<int32_t>(::getpid()));
  // SIG_IGN survives exec: undo the reaper's ignores, clear the mask. R started by the host
  // (report >= 0) began with every signal at its default (the host's posix_spawn resets all of
  // them, POSIX_SPAWN_SETSIGDEF, and the exec reset R's handlers), and R changed only
  // kReaperIgnores: those 8 are all there is to undo (issue 8: the loop over every signal was
  // 62 system calls of every check). R' inside bubblewrap has no such promise: every one.
  if (report >= 0) {
    for (int sig : kReaperIgnores) ::signal(sig, SIG_DFL);
  } else {
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);  // EINVAL for glibc-internal
    }
  }
  // glibc's internal signals (32 and 33) are refused by signal() and sigaction(), and the host's
  // posix_spawn leaves them SIG_IGN in R: the raw system call undoes that. All zeros is SIG_DFL,
  // no flags and an empty mask in the kernel's struct sigaction of every architecture.
  for (int sig = 32; sig < SIGRTMIN; ++sig) {
    const unsigned long defaults[4] = {};
    ::syscall(SYS_rt_sigaction, sig, defaults, nullptr, sizeof(uint64_t));
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // The checker dies with its reaper; getppid() closes the race where R died before prctl.
  if (err == 0 && ::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) err = errno;
  if (err == 0 && ::getppid() != reaper) err = ESRCH;
  if (err == 0) err = ApplyConfinement(plan);
  // Only 0/1/2 reach the checker; the report pipe closes with the exec.
  if (err == 0 && ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) err = errno;
  if (err == 0) {
    ::execve(argv[0], argv, environ);
    err = errno;
  }
  Send(report, kCheckerError, err);
  ::_exit(kStartFailed);
}

[[noreturn]] void Fail(int report, int err) {
  Send(report, kReaperError, err);
  ::_exit(kStartFailed);
}

sock_filter filter_words[BPF_MAXINSNS];

// The checker's start, run on its own stack in R's memory (clone with CLONE_VM | CLONE_VFORK:
// no copy of R's page tables; R waits until the checker has exec'd or exited). Only raw
// syscalls run in it, and it writes nothing of R's but errno, which R does not read meanwhile.
struct CheckerStart {
  pid_t reaper;
  int report;
  const ConfinementPlan* plan;
  char* const* argv;
};
alignas(64) char checker_stack[64 * 1024];

int CheckerMain(void* arg) {
  const CheckerStart* start = static_cast<const CheckerStart*>(arg);
  StartChecker(start->reaper, start->report, *start->plan, start->argv);
}

[[noreturn]] void Main(int argc, char** argv) {
  // An exec makes a process dumpable again. Non-dumpable, no checker (without CAP_SYS_PTRACE)
  // can ptrace its unconfined reaper or write its memory through /proc (issue 7 item 5); the
  // checker's own exec makes it dumpable for itself, as before.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) ::_exit(kStartFailed);
  long control = -1, report = -1, cpu_soft = 0, cpu_hard = 0, file_bytes = 0, open_files = 0,
       ruleset = -1, filter = -1, pass = -1, relay_read = -1, relay = -1;
  if (argc <= kExecutable || ::strcmp(argv[kSeparator], "--") != 0 ||
      !ParseInt(argv[kControlFd], &control) || !ParseInt(argv[kReportFd], &report) ||
      !ParseInt(argv[kCpuSoft], &cpu_soft) || !ParseInt(argv[kCpuHard], &cpu_hard) ||
      !ParseInt(argv[kFileBytes], &file_bytes) || !ParseInt(argv[kOpenFiles], &open_files) ||
      !ParseInt(argv[kRulesetFd], &ruleset) || !ParseInt(argv[kFilterFd], &filter) ||
      !ParseInt(argv[kPassFd], &pass) || !ParseInt(argv[kRelayReadFd], &relay_read) ||
      !ParseInt(argv[kRelayFd], &relay) || control < 0 || report < -1 || pass != -1 ||
      relay_read != -1 || relay != -1) {
    static const char usage[] =
        "devflow-gate-reaper: internal helper of devflow-gate (checker/reaper.h); not for use by "
        "hand\n";
    (void)!::write(2, usage, sizeof usage - 1);
    ::_exit(2);
  }
  const int report_fd = static_cast<int>(report);  // -1 inside bubblewrap: nobody listens
  // Inside bubblewrap (R', no report pipe): bubblewrap always sets PWD, after any --unsetenv of
  // its own, so R' removes it and the checker's environment stays exactly SPEC §5's. (This
  // was an env(1) exec between bubblewrap and R', 1.2-1.8 ms a check; issue 8.)
  if (report_fd < 0) ::unsetenv("PWD");
  const int control_fd = static_cast<int>(control);
  // Every fd the host handed over by number is close-on-exec from here on.
  for (long fd : {control, report, ruleset, filter}) {
    if (fd >= 0) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  }

  ConfinementPlan plan;
  plan.limits = {static_cast<uint64_t>(cpu_soft), static_cast<uint64_t>(cpu_hard),
                 static_cast<uint64_t>(file_bytes), static_cast<uint64_t>(open_files)};
  plan.ruleset_fd = static_cast<int>(ruleset);
  if (filter >= 0) {
    ssize_t n = ::pread(static_cast<int>(filter), filter_words, sizeof filter_words, 0);
    if (n <= 0 || n % static_cast<ssize_t>(sizeof(sock_filter)) != 0) {
      Fail(report_fd, n < 0 ? errno : EINVAL);
    }
    plan.filter = filter_words;
    plan.filter_len = static_cast<size_t>(n) / sizeof(sock_filter);
    ::close(static_cast<int>(filter));
  }

  // R: not stopped or ended by the terminal (the host asks through the control pipe).
  for (int sig : kReaperIgnores) ::signal(sig, SIG_IGN);
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) Fail(report_fd, errno);
  const pid_t self = ::getpid();
  CheckerStart start{self, report_fd, &plan, argv + kExecutable};
  // Without CLONE_THREAD/CLONE_SIGHAND the checker has its own signal handlers, rlimits,
  // credentials (Landlock, capabilities, no_new_privs) and seccomp filter; only memory is shared
  // until its exec.
  const pid_t checker = ::clone(CheckerMain, checker_stack + sizeof checker_stack,
                                CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  if (checker < 0) Fail(report_fd, errno);

  // R keeps no fd but the control pipe: EOF on the check's pipes then means the tree closed
  // them, and the report pipe's EOF means the checker exec'd (or failed and said so).
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null_fd >= 0) ::dup2(null_fd, fd);
  }
  if (control_fd > 3) ::close_range(3, static_cast<unsigned>(control_fd - 1), 0);
  ::close_range(static_cast<unsigned>(control_fd) + 1, ~0U, 0);
  Watch(self, checker, control_fd);
}

}  // namespace
}  // namespace devflow::reaper

int main(int argc, char** argv) { devflow::reaper::Main(argc, argv); }

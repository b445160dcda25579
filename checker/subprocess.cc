// The only translation unit that includes Boost.Asio / Boost.Process v2 (cpp-notes §1.3).
// Spawning follows cpp-notes §1.4 option (B): Process v2 with custom initializers that give the
// child its own process group, default signals, PR_SET_PDEATHSIG and no inherited fd (the
// 1.81 launcher leaks every host fd, boostorg/process#360).
#include "checker/subprocess.h"

#include <limits.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/v2/default_launcher.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/start_dir.hpp>
#include <boost/process/v2/stdio.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iterator>
#include <system_error>
#include <thread>
#include <utility>

#include "checker/sandbox.h"
#include "host/interrupt.h"

namespace devflow {
namespace {

namespace asio = boost::asio;
namespace bp2 = boost::process::v2;
using Ms = std::chrono::milliseconds;

Status Fault(std::string message) { return Status::Error("fault", std::move(message)); }

std::string ErrorText(int err) { return std::system_category().message(err); }

Status StartFault(const std::string& program, const std::string& problem) {
  return Fault("cannot start checker \"" + program + "\": " + problem);
}

// ---- Child-side initializers (run between fork and exec; async-signal-safe calls only) ----

// pgid == pid, so kill(-pgid, sig) reaches the checker and everything it forks.
struct NewProcessGroup {
  template <class Launcher>
  bp2::error_code on_exec_setup(Launcher&, const bp2::filesystem::path&, const char* const*) {
    return ::setpgid(0, 0) ? bp2::error_code(errno, bp2::system_category()) : bp2::error_code{};
  }
};

// SIG_IGN survives exec: undo the host's SIGPIPE ignore (and any other), clear the mask.
struct ResetSignals {
  template <class Launcher>
  bp2::error_code on_exec_setup(Launcher&, const bp2::filesystem::path&, const char* const*) {
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);  // EINVAL for glibc-internal
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    return {};
  }
};

// The checker dies with its reaper (cpp-notes §1.5 item 6); getppid() closes the race where
// the reaper died before prctl ran. `parent` is written by the Reaper in its own memory just
// before it forks the checker, so the checker's copy holds the reaper's pid.
struct DieWithParent {
  const pid_t* parent;
  template <class Launcher>
  bp2::error_code on_exec_setup(Launcher&, const bp2::filesystem::path&, const char* const*) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return {errno, bp2::system_category()};
    if (::getppid() != *parent) return {ESRCH, bp2::system_category()};
    return {};
  }
};

// ---- The reaper: one per check, a fork of the host that never execs (issue 7 item 7) ----
//
// The launched process is the reaper R; it becomes a child subreaper (PR_SET_CHILD_SUBREAPER)
// and forks the checker C, which goes on through the remaining initializers and execs. Every
// process C starts, setsid or double-forked or not, is R's descendant, and an orphan among them
// is re-parented to R instead of PID 1. R waits (poll) on C's pidfd and on the control pipe:
//  - C exits, or the control pipe gives a byte or EOF (the host asks, or the host is gone):
//    R SIGKILLs C's group and then every child it has (the kernel's list in
//    /proc/self/task/<R>/children: orphans land there), reaps, and repeats until it has no
//    child left (waitid ECHILD);
//  - R then ends with C's wait status (the same exit code, or the same signal).
// So when the host sees R exit, nothing the checker started is running. R is in its own
// process group and ignores the job-control signals: the terminal's ^C reaches the host,
// which asks R through the pipe. Only async-signal-safe calls (raw syscalls) run in R.
struct ReaperFds {
  int control = -1;  // read end: a byte or EOF means "kill the tree now"
  int report = -1;   // write end: R writes C's pid (a pid_t) once C is forked
};

namespace reaper {

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

// The waitpid-style status of what waitid reported.
int WaitStatus(const siginfo_t& info) {
  return info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : (info.si_status & 0x7f);
}

// SIGKILLs every current child of this (single-threaded) process; returns how many it saw.
int KillChildren(pid_t self) {
  char path[64] = "/proc/self/task/";
  size_t len = std::strlen(path);
  len += Digits(self, path + len);
  std::memcpy(path + len, "/children", sizeof "/children");
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

// Kills C's group and then every descendant, until no child is left. Records C's status.
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

[[noreturn]] void Run(pid_t self, pid_t checker, const ReaperFds& fds) {
  int status = SIGKILL;  // "killed by SIGKILL" unless C says otherwise
  bool reaped = false;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, checker, 0));
  pollfd watch[2] = {{fds.control, POLLIN, 0}, {pidfd, POLLIN, 0}};
  for (;;) {
    int n = ::poll(watch, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 10);
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && watch[0].revents != 0) break;  // the host asks, or is gone
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(checker), &info, WEXITED | WNOHANG) == 0 &&
        info.si_pid == checker) {
      reaped = true;
      status = WaitStatus(info);
      break;
    }
  }
  KillTree(self, checker, &status, &reaped);
  EndLike(status);
}

}  // namespace reaper

// Must come first after process_stdio (and the start dir): everything after it runs in C.
struct Reaper {
  ReaperFds fds;
  pid_t* parent;  // see DieWithParent
  template <class Launcher>
  bp2::error_code on_exec_setup(Launcher&, const bp2::filesystem::path&, const char* const*) {
    const pid_t self = ::getpid();
    if (::setpgid(0, 0) != 0) return {errno, bp2::system_category()};
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return {errno, bp2::system_category()};
    *parent = self;
    const pid_t checker = ::fork();
    if (checker < 0) return {errno, bp2::system_category()};
    if (checker == 0) {
      ::prctl(PR_SET_CHILD_SUBREAPER, 0);
      return {};  // C: on to the other initializers and exec
    }
    // R: no terminal signal, no stdio, no fd but the two pipe ends.
    for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) {
      ::signal(sig, SIG_IGN);
    }
    int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2; ++fd) {
      if (null_fd >= 0) ::dup2(null_fd, fd);
    }
    int keep_low = std::min(fds.control, fds.report), keep_high = std::max(fds.control, fds.report);
    ::close_range(3, static_cast<unsigned>(keep_low - 1), 0);
    if (keep_high > keep_low + 1) {
      ::close_range(static_cast<unsigned>(keep_low + 1), static_cast<unsigned>(keep_high - 1), 0);
    }
    ::close_range(static_cast<unsigned>(keep_high + 1), ~0U, 0);
    const char* bytes = reinterpret_cast<const char*>(&checker);
    size_t done = 0;
    while (done < sizeof checker) {
      ssize_t n = ::write(fds.report, bytes + done, sizeof checker - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fds.report);
    reaper::Run(self, checker, fds);
  }
};

// Resource limits, and at the Landlock level Landlock + seccomp, prepared in the host.
struct Confine {
  const ChildConfinement* confinement;
  template <class Launcher>
  bp2::error_code on_exec_setup(Launcher&, const bp2::filesystem::path&, const char* const*) {
    int err = confinement->ApplyInChild();
    return err ? bp2::error_code(err, bp2::system_category()) : bp2::error_code{};
  }
};

// Works around the 1.81 fd leak: must come AFTER process_stdio, whose dup2 onto 0/1/2 clears
// CLOEXEC there. CLOEXEC (not close) keeps the launcher's exec-error pipe working.
struct CloexecAllFds {
  template <class Launcher>
  bp2::error_code on_exec_setup(Launcher&, const bp2::filesystem::path&, const char* const*) {
    return ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC)
               ? bp2::error_code(errno, bp2::system_category())
               : bp2::error_code{};
  }
};

// The 1.81 launcher ends a child whose exec failed with exit(), which would run the host's
// atexit handlers and flush its stdio buffers a second time; _exit instead. (Its detection
// probes a 5-argument call and then makes a 4-argument one, hence the variadic member.)
struct QuietExecFailure {
  template <class... A>
  void on_exec_error(A&&...) {
    ::_exit(127);
  }
};

// ---- Small RAII pieces ----

// A pipe whose both ends are O_CLOEXEC in the host; the child end is dup2'ed onto 0/1/2.
struct HostPipe {
  int fds[2] = {-1, -1};
  ~HostPipe() { CloseBoth(); }
  bool Open() { return ::pipe2(fds, O_CLOEXEC) == 0; }
  void Close(int i) {
    if (fds[i] >= 0) ::close(fds[i]);
    fds[i] = -1;
  }
  void CloseBoth() {
    Close(0);
    Close(1);
  }
  int Release(int i) { return std::exchange(fds[i], -1); }
};

// Removes the scratch dir with everything the checker left in it, even read-only subdirs.
class ScratchDir {
 public:
  ~ScratchDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    if (!ec) return;
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code ignored;
      if (it->is_directory(ignored) && !it->is_symlink(ignored)) {
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
      }
    }
    std::filesystem::remove_all(path_, ec);
  }
  /// mkdtemp under `parent`; false (with errno) on failure. The name carries the host's pid,
  /// so the scratch dirs of a host that was killed (SIGKILL skips every destructor) are
  /// recognised and removed by the next dispatch.
  bool Create(const std::string& parent) {
    RemoveOrphans(parent);
    std::string tmpl = parent + "/" + kPrefix + std::to_string(::getpid()) + "-XXXXXX";
    if (!::mkdtemp(tmpl.data())) return false;
    path_ = tmpl;
    return true;
  }
  const std::string& path() const { return path_; }

 private:
  static constexpr const char* kPrefix = "devflow-gate-checker-";
  static void RemoveOrphans(const std::string& parent) {
    std::error_code ec;
    const std::string prefix = kPrefix;
    for (auto it = std::filesystem::directory_iterator(parent, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string rest = name.substr(prefix.size());
      const size_t dash = rest.find('-');
      if (dash == std::string::npos || dash == 0) continue;
      pid_t owner = 0;
      auto [end, err] = std::from_chars(rest.data(), rest.data() + dash, owner);
      if (err != std::errc() || end != rest.data() + dash || owner <= 0) continue;
      if (::kill(owner, 0) == 0 || errno != ESRCH) continue;  // its host still runs
      // Nothing of that host's checker runs any more: its reaper killed the tree when the
      // host's end of the control pipe closed (issue 7 item 7).
      std::error_code ignored;
      std::filesystem::remove_all(it->path(), ignored);
    }
  }
  std::string path_;
};

// ---- Process-group housekeeping ----

// State letter of /proc/<pid>/stat, its parent and its pgrp; false when the process is gone.
bool ReadProcStat(pid_t pid, char* state, pid_t* ppid, pid_t* pgrp) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* close_paren = ::strrchr(buf, ')');  // comm may contain spaces and parens
  if (!close_paren) return false;
  int parent = 0, group = 0;
  if (std::sscanf(close_paren + 1, " %c %d %d", state, &parent, &group) != 3) return false;
  *ppid = parent;
  *pgrp = group;
  return true;
}

// Live children of `parent` (under bubblewrap: the PID namespace's init, whose group holds
// the checker).
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  DIR* dir = ::opendir("/proc");
  if (!dir) return children;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char state = 0;
    pid_t ppid = 0, pgrp = 0;
    if (ReadProcStat(static_cast<pid_t>(pid), &state, &ppid, &pgrp) && ppid == parent &&
        state != 'Z' && state != 'X') {
      children.push_back(static_cast<pid_t>(pid));
    }
  }
  ::closedir(dir);
  return children;
}

// coreutils `timeout`, which bounds a sandboxed checker by its deadline even when the host is
// killed (bubblewrap clears the parent-death signal while it starts); "" when absent.
const std::string& DeadlineGuardProgram() {
  static const std::string program = [] {
    std::vector<bp2::environment::key_value_pair> system_path = {
        {"PATH", "/usr/local/bin:/usr/bin:/bin"}};
    std::string found = bp2::environment::find_executable("timeout", system_path).string();
    char buf[PATH_MAX];
    return found.empty() || !::realpath(found.c_str(), buf) ? found : std::string(buf);
  }();
  return program;
}

bool IsDeadlineGuard(pid_t pid) {
  if (DeadlineGuardProgram().empty()) return false;
  char buf[PATH_MAX];
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 && std::string(buf, static_cast<size_t>(n)) == DeadlineGuardProgram();
}

// Reaps whatever members of the group are our own children (WNOHANG: never blocks).
void ReapGroup(pid_t pgid) {
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PGID, static_cast<id_t>(pgid), &info, WEXITED | WNOHANG) != 0) return;
    if (info.si_pid == 0) return;  // members left, none exited yet
  }
}

// The host's side of a check's reaper: closing the control pipe makes the reaper kill the
// checker's whole tree; End() then waits (without reaping: the process handle does that)
// until the reaper is gone. Runs on every path out of Dispatch, exceptions included, before
// ~basic_process (which would SIGKILL the reaper itself).
struct TreeEnd {
  int control = -1;   // write end of the control pipe
  pid_t reaper = -1;  // the launched process
  void Kill() {
    if (control >= 0) ::close(control);
    control = -1;
  }
  void End() {
    Kill();
    if (reaper <= 0) return;
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(reaper), &info, WEXITED | WNOWAIT) != 0 &&
           errno == EINTR) {
    }
    reaper = -1;
  }
  ~TreeEnd() { End(); }
};

std::string SignalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : std::to_string(sig);
}

// Last non-blank line of the stderr tail, trimmed of surrounding whitespace.
std::string LastStderrLine(const std::string& tail) {
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
  };
  size_t end = tail.size();
  while (end > 0) {
    size_t start = tail.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    size_t a = start, b = end;
    while (a < b && is_space(tail[a])) ++a;
    while (b > a && is_space(tail[b - 1])) --b;
    if (a < b) return tail.substr(a, b - a);
    end = start == 0 ? 0 : start - 1;
  }
  return "";
}

const char* HostEnv(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : nullptr;
}

bool IsReservedName(const std::string& name) {
  return name == "PATH" || name == "HOME" || name == "TMPDIR" || name == "LANG" ||
         name.rfind("DEVFLOW_GATE_", 0) == 0;
}

// The checker's whole environment (SPEC §5): nothing else of the host leaks.
std::vector<std::string> CheckerEnvironment(const ProviderConfig& provider,
                                            const CheckRequest& request, const std::string& scratch,
                                            const std::string& path) {
  const char* lang = HostEnv("LANG");
  std::vector<std::string> env = {
      "PATH=" + path,
      "HOME=" + scratch,
      "TMPDIR=" + scratch,
      std::string("LANG=") + (lang && *lang ? lang : "C.UTF-8"),
      "DEVFLOW_GATE_CARD=" + request.card_id,
      "DEVFLOW_GATE_EDGE=" + request.edge,
      "DEVFLOW_GATE_ROOT=" + request.root,
      "DEVFLOW_GATE_INPUTS=" + request.inputs_manifest,
  };
  std::vector<std::string> seen;
  for (const std::string& name : provider.env) {
    // The scratch HOME/TMPDIR and the gate's own variables win over a provider's wish.
    if (name.empty() || name.find('=') != std::string::npos || IsReservedName(name)) continue;
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    if (const char* value = HostEnv(name.c_str())) env.push_back(name + "=" + value);
  }
  return env;
}

// One running check: the event loop state of Dispatch.
struct Run {
  explicit Run(const SubprocessOptions& options, const CheckRequest& request)
      : options(options),
        request(request),
        stdin_pipe(ctx),
        stdout_pipe(ctx),
        stderr_pipe(ctx),
        deadline(ctx),
        term_timer(ctx),
        eof_timer(ctx),
        interrupt_watch(ctx) {}

  const SubprocessOptions& options;
  const CheckRequest& request;
  asio::io_context ctx;
  asio::writable_pipe stdin_pipe;
  asio::readable_pipe stdout_pipe;
  asio::readable_pipe stderr_pipe;
  asio::steady_timer deadline;
  asio::steady_timer term_timer;
  asio::steady_timer eof_timer;
  asio::posix::stream_descriptor interrupt_watch;  // a dup of InterruptFd()
  TreeEnd* tree = nullptr;
  int interrupted = 0;  // the signal that interrupted the check, 0 when none
  pid_t pgid = 0;
  bool bwrap = false;  // pgid is bubblewrap's; the checker runs in its child's group

  bool stdin_done = false, stdout_done = false, stderr_done = false, exited = false;
  bool timed_out = false, reply_over = false;
  int native_status = 0;
  std::string reply;
  std::string stderr_tail;
  std::array<char, 64 * 1024> out_buf{}, err_buf{};

  bool Finished() const { return exited && stdin_done && stdout_done && stderr_done; }

  void ClosePipes() {
    boost::system::error_code ignored;
    stdin_pipe.close(ignored);
    stdout_pipe.close(ignored);
    stderr_pipe.close(ignored);
  }

  void WritePrompt() {
    if (request.prompt.empty()) {
      boost::system::error_code ignored;
      stdin_pipe.close(ignored);
      stdin_done = true;
      return;
    }
    // EPIPE (the checker closed stdin early) just ends the write; its reply still counts.
    asio::async_write(stdin_pipe, asio::buffer(request.prompt),
                      [this](const boost::system::error_code&, size_t) {
                        boost::system::error_code ignored;
                        stdin_pipe.close(ignored);
                        stdin_done = true;
                      });
  }

  void ReadStdout() {
    stdout_pipe.async_read_some(
        asio::buffer(out_buf), [this](const boost::system::error_code& ec, size_t n) {
          if (ec) {
            stdout_done = true;
            return;
          }
          if (static_cast<int64_t>(reply.size() + n) > request.max_reply_bytes) {
            reply_over = true;
            ::kill(-pgid, SIGKILL);
            boost::system::error_code ignored;
            stdout_pipe.close(ignored);
            stdout_done = true;
            return;
          }
          reply.append(out_buf.data(), n);
          ReadStdout();
        });
  }

  void ReadStderr() {
    stderr_pipe.async_read_some(
        asio::buffer(err_buf), [this](const boost::system::error_code& ec, size_t n) {
          if (ec) {
            stderr_done = true;
            return;
          }
          stderr_tail.append(err_buf.data(), n);
          const size_t keep = static_cast<size_t>(std::max<int64_t>(options.stderr_tail_bytes, 1));
          if (stderr_tail.size() > 2 * keep) stderr_tail.erase(0, stderr_tail.size() - keep);
          ReadStderr();
        });
  }

  void ArmDeadline() {
    deadline.expires_after(Ms(std::max<int64_t>(request.timeout_ms, 0)));
    deadline.async_wait([this](const boost::system::error_code& ec) {
      if (ec || Finished()) return;
      timed_out = true;
      if (exited) {  // only the EOF grace was left: stop waiting now
        ClosePipes();
        return;
      }
      Terminate();
      term_timer.expires_after(Ms(options.term_grace_ms));
      term_timer.async_wait([this](const boost::system::error_code& ec2) {
        if (!ec2) ::kill(-pgid, SIGKILL);
      });
    });
  }

  // SIGTERM to the checker's group. Under bubblewrap, TERM to bubblewrap would make it die at
  // once and take the sandbox with it, so the checker would never see a TERM: send it to the
  // group of bubblewrap's child (the namespace's init, which ignores it, and the checker).
  void Terminate() {
    if (bwrap) {
      // Every process below the namespace's init gets TERM once, except the deadline guard,
      // which would forward it to the checker a second time.
      std::vector<pid_t> frontier = ChildrenOf(pgid);
      if (!frontier.empty()) {
        while (!frontier.empty()) {
          const pid_t parent = frontier.back();
          frontier.pop_back();
          for (pid_t child : ChildrenOf(parent)) {
            if (!IsDeadlineGuard(child)) ::kill(child, SIGTERM);
            frontier.push_back(child);
          }
        }
        return;
      }
    }
    ::kill(-pgid, SIGTERM);
  }

  template <class Process>
  void AwaitExit(Process& proc) {
    proc.async_wait([this, &proc](const boost::system::error_code& ec, int) {
      exited = true;
      // An error here means the wait itself failed; report it as a kill, never as success.
      native_status = ec ? SIGKILL : proc.native_exit_code();
      term_timer.cancel();
      // Whatever the checker left behind in its group dies with it (cpp-notes §1.5 item 4).
      ::kill(-pgid, SIGKILL);
      ReapGroup(pgid);
      eof_timer.expires_after(Ms(options.eof_grace_ms));
      eof_timer.async_wait([this](const boost::system::error_code& ec2) {
        if (!ec2) ClosePipes();
      });
    });
  }

  // SIGTERM/SIGINT/SIGHUP to the host (host/interrupt.h): the whole tree dies now.
  void WatchInterrupt() {
    if (InterruptFd() < 0) return;
    int fd = ::fcntl(InterruptFd(), F_DUPFD_CLOEXEC, 3);
    if (fd < 0) return;
    interrupt_watch.assign(fd);
    interrupt_watch.async_wait(asio::posix::stream_descriptor::wait_read,
                               [this](const boost::system::error_code& ec) {
                                 if (ec || Finished()) return;
                                 interrupted = InterruptSignal();
                                 if (tree) tree->Kill();
                               });
  }

  void Loop() {
    while (!Finished()) {
      if (ctx.run_one() == 0) break;  // nothing left to wait for (should not happen)
    }
    deadline.cancel();
    term_timer.cancel();
    eof_timer.cancel();
    boost::system::error_code ignored;
    interrupt_watch.close(ignored);
    ClosePipes();
  }

  Status Outcome() const {
    if (interrupted) {
      return Status::Error(
          "interrupted", std::string("the check was interrupted by ") + InterruptName(interrupted));
    }
    if (timed_out) {
      return Fault("the checker exceeded checkTimeoutMs (" + std::to_string(request.timeout_ms) +
                   "ms)");
    }
    if (reply_over) {
      return Fault("the checker reply exceeded " + std::to_string(request.max_reply_bytes) +
                   " bytes");
    }
    if (WIFSIGNALED(native_status)) {
      return Fault("the checker ended with signal " + SignalName(WTERMSIG(native_status)));
    }
    int code = WIFEXITED(native_status) ? WEXITSTATUS(native_status) : 1;
    // Bubblewrap reports a checker killed by signal N as exit code 128 + N.
    if (bwrap && code > 128 && code < 128 + NSIG && ::sigabbrev_np(code - 128)) {
      return Fault("the checker ended with signal " + SignalName(code - 128));
    }
    if (code != 0) {
      std::string line = LastStderrLine(stderr_tail);
      return Fault("the checker ended with exit code " + std::to_string(code) +
                   (line.empty() ? "" : ": " + line));
    }
    return Status::Ok();
  }
};

}  // namespace

SubprocessChecker::SubprocessChecker(std::vector<ProviderConfig> providers, std::string self_path,
                                     SubprocessOptions options)
    : self_path_(std::move(self_path)), options_(std::move(options)) {
  for (ProviderConfig& p : providers) {
    std::string name = p.name;
    providers_.emplace(std::move(name), std::move(p));  // first definition wins
  }
}

std::string SubprocessChecker::SandboxLevel(const ProviderConfig& provider) const {
  const SandboxSupport& support = ProbeSandbox(options_.bwrap, {options_.remember_probe});
  return SandboxLevelName(ChooseSandbox(support, provider.sandbox_off), support.landlock_abi);
}

std::string SubprocessChecker::SandboxProblem(const ProviderConfig& provider) const {
  const SandboxSupport& support = ProbeSandbox(options_.bwrap, {options_.remember_probe});
  if (ChooseSandbox(support, provider.sandbox_off) != SandboxKind::kNone) return "";
  return NoSandboxProblem(support, provider.name);
}

namespace {
thread_local std::vector<std::string> dispatched_levels;
}  // namespace

std::vector<std::string> TakeSandboxLevels() { return std::exchange(dispatched_levels, {}); }

std::string SubprocessChecker::last_stderr() const {
  std::lock_guard<std::mutex> lock(last_stderr_mutex_);
  return last_stderr_;
}

const ProviderConfig* SubprocessChecker::Provider(const std::string& provider) const {
  auto it = providers_.find(provider);
  return it == providers_.end() ? nullptr : &it->second;
}

Result<CheckReply> SubprocessChecker::Dispatch(const CheckRequest& request) {
  auto found = providers_.find(request.provider);
  if (found == providers_.end()) {
    return Fault("subagent provider \"" + request.provider + "\" is not registered");
  }
  const ProviderConfig& provider = found->second;
  // A checker that exits before reading its prompt must not kill the host (cpp-notes §1.5.1).
  ::signal(SIGPIPE, SIG_IGN);

  std::vector<std::string> argv;
  if (provider.builtin) {
    argv = {self_path_, "checker", *provider.builtin};
    argv.insert(argv.end(), provider.args.begin(), provider.args.end());
  } else {
    argv = provider.command;
  }
  if (argv.empty() || argv[0].empty()) {
    return Fault("cannot start checker for provider \"" + provider.name +
                 "\": it has no command; set providers." + provider.name + ".command");
  }
  const std::string& program = argv[0];

  const SandboxSupport& support = ProbeSandbox(options_.bwrap, {options_.remember_probe});
  const SandboxKind kind = ChooseSandbox(support, provider.sandbox_off);
  const std::string level = SandboxLevelName(kind, support.landlock_abi);
  if (std::find(dispatched_levels.begin(), dispatched_levels.end(), level) ==
      dispatched_levels.end()) {
    dispatched_levels.push_back(level);
  }
  if (int sig = InterruptSignal()) {
    return Status::Error("interrupted",
                         std::string("the check was interrupted by ") + InterruptName(sig));
  }
  // No silent "none" (issue 7 item 6): unconfined only when the provider says `sandbox: off`.
  if (kind == SandboxKind::kNone) return Fault(NoSandboxProblem(support, provider.name));
  // No checker without CAP_SYS_PTRACE may read the host's environment or memory (item 5).
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return StartFault(program, "prctl(PR_SET_DUMPABLE): " + ErrorText(errno));
  }

  try {
    const char* host_path = HostEnv("PATH");
    const std::string path = host_path && *host_path ? host_path : "/usr/local/bin:/usr/bin:/bin";

    if (!request.workspace.empty()) {
      struct stat st {};
      int problem = ::stat(request.workspace.c_str(), &st) != 0 ? errno
                    : S_ISDIR(st.st_mode)                       ? 0
                                                                : ENOTDIR;
      if (problem != 0) {
        return StartFault(program, "workspace " + request.workspace + ": " + ErrorText(problem));
      }
    }

    std::string executable;
    if (program.find('/') != std::string::npos) {
      // A relative path resolves against the workspace, the checker's cwd.
      executable = program[0] == '/' || request.workspace.empty()
                       ? program
                       : request.workspace + "/" + program;
    } else {
      std::vector<bp2::environment::key_value_pair> search_env = {{"PATH", path}};
      executable = bp2::environment::find_executable(program, search_env).string();
      if (executable.empty()) return StartFault(program, ErrorText(ENOENT));
    }
    // Checked here because bubblewrap would only report it as its own exit code 1.
    {
      struct stat st {};
      if (::stat(executable.c_str(), &st) != 0) return StartFault(program, ErrorText(errno));
      if (S_ISDIR(st.st_mode)) return StartFault(program, ErrorText(EACCES));
      if (::access(executable.c_str(), X_OK) != 0) return StartFault(program, ErrorText(errno));
    }

    const char* tmp = HostEnv("TMPDIR");
    std::string parent = !options_.scratch_parent.empty() ? options_.scratch_parent
                         : (tmp && *tmp)                  ? std::string(tmp)
                                                          : std::string("/tmp");
    ScratchDir scratch;
    if (!scratch.Create(parent)) {
      return StartFault(program, "scratch dir in " + parent + ": " + ErrorText(errno));
    }

    ResourceLimits limits = LimitsFor(request.timeout_ms, options_.cpu_limit_s,
                                      options_.max_file_bytes, options_.max_open_files);
    ChildConfinement confinement = ChildConfinement::LimitsOnly(limits);
    std::vector<std::string> args(argv.begin() + 1, argv.end());
    std::string launched = executable;
    if (kind == SandboxKind::kLandlock) {
      auto prepared = ChildConfinement::Landlock(limits, support.landlock_abi, scratch.path(),
                                                 provider.network);
      if (!prepared.ok()) return StartFault(program, "sandbox " + prepared.status().message());
      confinement = std::move(*prepared);
    } else if (kind == SandboxKind::kBwrap) {
      auto real = [](const std::string& p) {
        char buf[PATH_MAX];
        return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
      };
      std::string absolute = executable[0] == '/' ? executable : real(executable);
      std::vector<std::string> command;
      // bubblewrap clears the parent-death signal when it changes credentials, so a host killed
      // early would leave the sandbox running. coreutils `timeout` inside it bounds the checker
      // by the deadline (plus the grace) even then; normally the host kills it first.
      const std::string& timeout_program = DeadlineGuardProgram();
      if (!timeout_program.empty()) {
        const int64_t bound_s = (request.timeout_ms + options_.term_grace_ms) / 1000 + 2;
        command = {timeout_program, "--foreground", "-s", "KILL", std::to_string(bound_s)};
      }
      command.push_back(absolute);
      command.insert(command.end(), args.begin(), args.end());
      BwrapSpec spec{support.bwrap, request.workspace.empty() ? "" : real(request.workspace),
                     real(scratch.path()), provider.network, support.env};
      std::vector<std::string> wrapped = BwrapArgv(spec, command);
      launched = wrapped[0];
      args.assign(wrapped.begin() + 1, wrapped.end());
    }

    std::vector<std::string> env = CheckerEnvironment(provider, request, scratch.path(), path);
    std::vector<const char*> envp;
    for (const std::string& e : env) envp.push_back(e.c_str());
    envp.push_back(nullptr);

    Run run(options_, request);
    run.bwrap = kind == SandboxKind::kBwrap;
    HostPipe in, out, err, control, report;
    if (!in.Open() || !out.Open() || !err.Open() || !control.Open() || !report.Open()) {
      return StartFault(program, ErrorText(errno));
    }
    bp2::posix::default_launcher launcher;
    launcher.env = envp.data();
    bp2::error_code ec;
    bp2::process_stdio stdio{in.fds[0], out.fds[1], err.fds[1]};
    pid_t reaper_pid = 0;  // written in the reaper's memory, read by the checker's copy
    auto start = [&](auto&&... start_dir) {
      return launcher(run.ctx.get_executor(), ec, bp2::filesystem::path(launched), args,
                      start_dir..., stdio, Reaper{{control.fds[0], report.fds[1]}, &reaper_pid},
                      NewProcessGroup{}, ResetSignals{}, DieWithParent{&reaper_pid},
                      Confine{&confinement}, CloexecAllFds{}, QuietExecFailure{});
    };
    auto proc = request.workspace.empty()
                    ? start()
                    : start(bp2::process_start_dir{bp2::filesystem::path(request.workspace)});
    // Ends the checker's tree on every path out, before ~basic_process (declared after it).
    TreeEnd tree;
    tree.control = control.Release(1);
    run.tree = &tree;
    control.Close(0);
    report.Close(1);
    if (ec) {
      tree.Kill();
      if (launcher.pid > 0) ::waitpid(launcher.pid, nullptr, 0);  // the failed reaper
      return StartFault(program, ErrorText(ec.value()));
    }
    tree.reaper = proc.id();
    // The reaper reports the checker's pid (its process group) as soon as it has forked it.
    pid_t checker_pid = 0;
    size_t got = 0;
    while (got < sizeof checker_pid) {
      ssize_t n = ::read(report.fds[0], reinterpret_cast<char*>(&checker_pid) + got,
                         sizeof checker_pid - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got != sizeof checker_pid || checker_pid <= 0) {
      return StartFault(program, "the reaper did not report the checker's pid");
    }
    run.pgid = checker_pid;
    last_pgid_.store(run.pgid);
    // Only the child keeps its ends: EOF on stdout/stderr then means the tree closed them.
    in.Close(0);
    out.Close(1);
    err.Close(1);
    run.stdin_pipe.assign(in.fds[1]);
    in.Release(1);
    run.stdout_pipe.assign(out.fds[0]);
    out.Release(0);
    run.stderr_pipe.assign(err.fds[0]);
    err.Release(0);

    run.ArmDeadline();
    run.AwaitExit(proc);
    run.WritePrompt();
    run.ReadStdout();
    run.ReadStderr();
    run.WatchInterrupt();
    run.Loop();
    tree.End();
    {
      std::lock_guard<std::mutex> lock(last_stderr_mutex_);
      last_stderr_ = run.stderr_tail;
    }

    Status outcome = run.Outcome();
    if (!outcome.ok()) return outcome;
    return CheckReply{std::move(run.reply), level};
  } catch (const std::exception& e) {  // Asio/Process throw; nothing crosses the module edge
    return Fault("cannot run checker \"" + program + "\": " + e.what());
  }
}

}  // namespace devflow

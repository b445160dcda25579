// The only translation unit that includes Boost.Asio / Boost.Process v2 (cpp-notes §1.3).
// Spawning follows cpp-notes §1.6 (posix_spawn + pidfd + Asio): the host posix_spawns the
// checker reaper (checker/reaper.h), a small program that becomes the child subreaper, forks
// the checker, confines it and execs it, so a spawn costs the same whatever the host's size
// (issue 11 item 5); under bubblewrap the host starts bubblewrap itself the same way (a
// vfork-style clone) and the reaper runs inside it. Process v2 is used only for its PATH search.
#include "checker/subprocess.h"

#include <limits.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/random.h>
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
#include <boost/asio/post.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/v2/environment.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "checker/reaper.h"
#include "checker/redact.h"
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

// ---- The reaper program (checker/reaper.h) ----

// SubprocessOptions::reaper, else devflow-gate-reaper beside the running executable (the
// devflow-gate binary, or a test or bench binary in the same build directory).
std::string ReaperProgram(const std::string& configured) {
  if (!configured.empty()) return configured;
  static const std::string beside_self = [] {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return std::string(reaper::kProgram);
    std::string exe(buf, static_cast<size_t>(n));
    return exe.substr(0, exe.rfind('/') + 1) + reaper::kProgram;
  }();
  return beside_self;
}

// The executable as bubblewrap runs it and the readable set follows it: absolute (a relative
// one, of a check without a workspace, resolved against the host's cwd as before).
std::string AbsoluteProgram(const std::string& executable) {
  if (executable.empty() || executable[0] == '/') return executable;
  char buf[PATH_MAX];
  return ::realpath(executable.c_str(), buf) ? std::string(buf) : executable;
}

// An fd the reaper gets by number, at 3 or above so that the dup2 onto 0/1/2 cannot overwrite
// it (a host started with a closed stdio hands out low numbers). Raised copies are owned here.
struct RaisedFds {
  std::vector<int> owned;
  ~RaisedFds() { Close(); }
  void Close() {
    for (int fd : owned) ::close(fd);
    owned.clear();
  }
  int Above2(int fd) { return Above(fd, 3); }
  // `fd` itself when it is `lowest` or above, else a copy that is.
  int Above(int fd, int lowest) {
    if (fd < 0 || fd >= lowest) return fd;
    int high = ::fcntl(fd, F_DUPFD_CLOEXEC, lowest);
    if (high >= 0) owned.push_back(high);
    return high;
  }
};

// RAII for posix_spawn's attribute and file-action objects.
struct SpawnPlan {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnPlan() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnPlan() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnPlan(const SpawnPlan&) = delete;
  SpawnPlan& operator=(const SpawnPlan&) = delete;
};

// What the reaper reported before the checker exec'd: its pid, or why it did not start.
struct StartReport {
  pid_t checker = 0;
  int error = 0;  // errno from the checker's setup/exec or the reaper's own setup
};

// Reads the report pipe until EOF, which comes when the checker has exec'd (its copy is
// close-on-exec) or has failed and said so (checker/reaper.h).
StartReport ReadStartReport(int fd) {
  StartReport result;
  for (;;) {
    reaper::Report record{};
    size_t got = 0;
    while (got < sizeof record) {
      ssize_t n = ::read(fd, reinterpret_cast<char*>(&record) + got, sizeof record - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return result;
      got += static_cast<size_t>(n);
    }
    if (record.kind == reaper::kCheckerPid) {
      result.checker = record.value;
    } else if (result.error == 0) {
      result.error = record.value > 0 ? record.value : EIO;
    }
  }
}

// ---- Bubblewrap, started by the host itself (checker/reaper.h, "Under bubblewrap") ----

// What bubblewrap's child gets: `fds` become its 0-4 (stdin, stdout, stderr, the control pipe's
// read end that R' reads as fd 3, the seccomp memfd bubblewrap reads as fd 4), each at 5 or
// above in the host so that no dup2 overwrites another's source; nothing else stays open.
struct BwrapStart {
  std::array<int, 5> fds{};
  const char* cwd = nullptr;  // the workspace; nullptr: the host's cwd
  ResourceLimits limits;
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int err = 0;  // the errno of the failed step, written by the child before it _exits
};

// Bubblewrap's start, on its own stack in the host's memory (clone with CLONE_VM | CLONE_VFORK:
// nothing is copied, the host's thread waits until it has exec'd or exited). Raw system calls
// only; every signal is blocked until its exec, so no handler of the host's runs here.
int BwrapChild(void* arg) {
  BwrapStart* start = static_cast<BwrapStart*>(arg);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &default_action, nullptr);
  }
  // Its own session: no controlling terminal, no terminal signal; pgid == pid.
  int err = ::setsid() < 0 ? errno : 0;
  for (int fd = 0; err == 0 && fd < static_cast<int>(start->fds.size()); ++fd) {
    if (::dup2(start->fds[static_cast<size_t>(fd)], fd) < 0) err = errno;
  }
  if (err == 0 && ::close_range(static_cast<unsigned>(start->fds.size()), ~0U, 0) != 0) {
    err = errno;
  }
  if (err == 0 && start->cwd != nullptr && ::chdir(start->cwd) != 0) err = errno;
  // The limits the outer reaper set on bubblewrap before: the whole sandbox inherits them.
  ConfinementPlan limits_only;
  limits_only.limits = start->limits;
  if (err == 0) err = ApplyConfinement(limits_only);
  sigset_t none;
  sigemptyset(&none);
  if (err == 0 && ::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) err = errno;
  if (err == 0) {
    ::execve(start->path, start->argv, start->envp);
    err = errno;
  }
  start->err = err;
  ::_exit(reaper::kStartFailed);
}

// Starts bubblewrap as `start` says; its pid, or -1 with `*err` set (the child is reaped then).
pid_t SpawnBwrap(BwrapStart& start, int* err) {
  constexpr size_t kStackBytes = 64 * 1024;
  std::unique_ptr<char[]> stack(new char[kStackBytes]);
  sigset_t all, saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  const pid_t pid =
      ::clone(BwrapChild, stack.get() + kStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  const int clone_err = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) {
    *err = clone_err;
    return -1;
  }
  if (start.err != 0) {  // it _exited without its exec
    *err = start.err;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return -1;
  }
  return pid;
}

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

// Opens the directory `name` below `parent` for removal, never through a symlink (O_NOFOLLOW
// | O_DIRECTORY): one the checker made unreadable (mode 0) is made 0700 first; the directory
// opened is made 0700 (writable, so its entries can be unlinked and it can be renamed to
// another parent). -1 when it is not a directory or cannot be opened.
int OpenForRemoval(int parent, const char* name) {
  int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES) {
    struct stat st {};
    if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
        ::fchmodat(parent, name, 0700, 0) == 0) {
      fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  }
  if (fd >= 0) (void)::fchmod(fd, 0700);
  return fd;
}

// How deep EmptyTree walks below the tree's top before it hoists a directory up (the open fds
// and stack frames a removal holds at once).
constexpr int kRemovalDepth = 64;

// Empties the directory `dir` (an fd, consumed) `depth` levels below the top of a removal
// (`top`, an fd): files and symlinks are unlinked (a symlink is never followed), directories
// emptied and removed; a directory at kRemovalDepth is renamed (RENAME_NOREPLACE) into `top`
// as `.devflow-gate-hoisted-<n>` instead, for the next pass over `top`. True when it hoisted
// something.
bool EmptyTree(int dir, int top, int depth, unsigned long& hoists) {
  DIR* stream = ::fdopendir(dir);
  if (!stream) {
    ::close(dir);
    return false;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(stream)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      names.emplace_back(e->d_name);
    }
  }
  bool hoisted = false;
  const int fd = ::dirfd(stream);
  for (const std::string& entry : names) {
    if (::unlinkat(fd, entry.c_str(), 0) == 0 || errno == ENOENT) continue;  // not a directory
    const int sub = OpenForRemoval(fd, entry.c_str());
    if (sub < 0) continue;
    if (depth + 1 >= kRemovalDepth) {
      ::close(sub);  // made 0700 by OpenForRemoval: renaming it to another parent rewrites its ".."
      for (int tries = 0; tries < 64; ++tries) {
        const std::string to = ".devflow-gate-hoisted-" + std::to_string(hoists++);
        if (::renameat2(fd, entry.c_str(), top, to.c_str(), RENAME_NOREPLACE) == 0) {
          hoisted = true;
          break;
        }
        if (errno != EEXIST) break;
      }
      continue;
    }
    hoisted = EmptyTree(sub, top, depth + 1, hoists) || hoisted;
    (void)::unlinkat(fd, entry.c_str(), AT_REMOVEDIR);
  }
  ::closedir(stream);
  return hoisted;
}

// Removes `name` below the directory `parent` (an fd) with everything in it, at any depth,
// without ever following a symlink: a directory is opened relative to its parent's fd with
// O_NOFOLLOW | O_DIRECTORY, made writable (a checker may leave read-only or mode-0 subdirs), and
// emptied entry by entry with unlinkat, so an entry swapped for a symlink mid-walk is unlinked
// itself, never walked into. A walk goes kRemovalDepth levels down at most; a directory deeper
// than that is moved up into the tree's top and removed by the next pass, so the open fds and
// the stack stay bounded whatever the depth (trial17 D1: a checker nested its scratch dir 256
// levels deep, past the old walk's bound, and the dir was never removed, the sweep's neither).
// libstdc++ 12's std::filesystem::remove_all walks alike below its argument but resolves the
// argument by path, and recurses as deep as the tree (docs/security.md).
void RemoveTreeAt(int parent, const char* name) {
  if (::unlinkat(parent, name, 0) == 0 || errno == ENOENT) return;  // a file or a symlink
  const int top = OpenForRemoval(parent, name);
  if (top < 0) return;
  unsigned long hoists = 0;
  // Each pass removes what lies within kRemovalDepth of the top and lifts every deeper
  // directory by at least kRemovalDepth - 1 levels, so a finite tree empties; the bound on
  // passes is a guard only.
  for (int pass = 0; pass < (1 << 20); ++pass) {
    const int walk = ::openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (walk < 0 || !EmptyTree(walk, top, 0, hoists)) break;
  }
  ::close(top);
  (void)::unlinkat(parent, name, AT_REMOVEDIR);
}

// The checker's scratch dir (its HOME and TMPDIR), below a per-user parent the gate owns:
// `<TMPDIR or /tmp>/devflow-gate-<euid>/devflow-gate-checker-<host pid>-XXXXXX`. The parent is
// created 0700 and used only when it is a real directory (never through a symlink) owned by
// this user with mode 0700; everything below it is done relative to its fd. While the check
// runs the host holds an exclusive flock(2) on the scratch dir; a scratch dir whose lock is free
// belongs to a host that is gone (SIGKILL skips every destructor), whatever PID namespace it
// ran in, and is removed by the next sweep (docs/security.md).
class ScratchDir {
 public:
  ScratchDir() = default;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    if (!name_.empty()) RemoveTreeAt(root_fd_, name_.c_str());
    if (lock_fd_ >= 0) ::close(lock_fd_);
    // A dry run writes nothing anywhere (issue 7 item 12; trial14 D2 found the parent left):
    // the parent it made goes again when empty and no other host is making a scratch dir in it
    // (they hold it shared from open to mkdir; one that opened it just before the rmdir finds
    // it gone and makes it again, Create).
    if (made_parent_ && root_fd_ >= 0 && ::flock(root_fd_, LOCK_EX | LOCK_NB) == 0) {
      (void)::rmdir(root_.c_str());  // ENOTEMPTY: another host's scratch dir is in it
    }
    if (root_fd_ >= 0) ::close(root_fd_);
  }
  /// Makes the scratch dir below `<parent>/devflow-gate-<euid>`; `sweep`: first remove the
  /// scratch dirs of hosts that are gone (never under --dry-run, which deletes nothing but its
  /// own). "" on success, else the fault (naming the path and the fix).
  std::string Create(const std::string& parent, bool sweep) {
    std::string made = CreateOnce(parent, sweep);
    if (made_gone_) {  // a dry run removed the parent between our open and our mkdir
      Reset();
      made = CreateOnce(parent, sweep);
    }
    return made;
  }
  const std::string& path() const { return path_; }

 private:
  static constexpr const char* kPrefix = "devflow-gate-checker-";

  void Reset() {
    if (root_fd_ >= 0) ::close(root_fd_);
    root_fd_ = -1;
    made_gone_ = false;
  }

  std::string CreateOnce(const std::string& parent, bool sweep) {
    root_ = parent + "/devflow-gate-" + std::to_string(::geteuid());
    const bool created = ::mkdir(root_.c_str(), 0700) == 0;
    made_parent_ = created && !sweep;  // only a dry run (no sweep) removes what it made
    if (!created && errno != EEXIST) {
      return "cannot create " + root_ + ": " + ErrorText(errno) +
             "; set TMPDIR to a directory this user can write (the gate makes its checkers' "
             "scratch dirs below it), or fix " +
             parent + "'s permissions";
    }
    root_fd_ = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root_fd_ < 0) {
      const int err = errno;
      return Refused(err == ELOOP || err == ENOTDIR ? "is a symlink or not a directory"
                                                    : "cannot be opened: " + ErrorText(err));
    }
    struct stat st {};
    if (::fstat(root_fd_, &st) != 0) return Refused("cannot be checked: " + ErrorText(errno));
    if (st.st_uid != ::geteuid()) {
      return Refused("is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                     std::to_string(::geteuid()) + ")");
    }
    if ((st.st_mode & 07777) != 0700) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return Refused(std::string("has mode ") + mode + ", not 0700");
    }
    if (sweep) RemoveOrphans();
    // Shared on the parent from mkdir to the scratch dir's own lock: a sweep (exclusive) never
    // sees a new scratch dir before it is locked.
    while (::flock(root_fd_, LOCK_SH) != 0 && errno == EINTR) {
    }
    std::string made = MakeLocked();
    ::flock(root_fd_, LOCK_UN);
    return made;
  }

  std::string Refused(const std::string& why) const {
    return "the scratch parent " + root_ + " " + why + "; remove it (rm -r " + root_ +
           ") so the gate makes it again, or set TMPDIR to a directory only this user can write";
  }

  std::string MakeLocked() {
    static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int tries = 0; tries < 100; ++tries) {
      unsigned char bytes[6];
      if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
        return "getrandom: " + ErrorText(errno);
      }
      std::string name = kPrefix + std::to_string(::getpid()) + "-";
      for (unsigned char b : bytes) name += kChars[b % (sizeof kChars - 1)];
      if (::mkdirat(root_fd_, name.c_str(), 0700) != 0) {
        if (errno == EEXIST) continue;
        if (errno == ENOENT) made_gone_ = true;  // the parent was removed (a dry run's, above)
        return "cannot create a scratch dir in " + root_ + ": " + ErrorText(errno);
      }
      name_ = name;
      path_ = root_ + "/" + name;
      lock_fd_ = ::openat(root_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
        return "cannot lock the scratch dir " + path_ + ": " + ErrorText(errno);
      }
      return "";
    }
    return "cannot create a scratch dir in " + root_ + ": " + ErrorText(EEXIST);
  }

  // Removes the scratch dirs below the parent whose host is gone: no lock held on them. Only
  // here, below the parent this user owns; never a name anyone else could plant.
  void RemoveOrphans() {
    if (::flock(root_fd_, LOCK_EX | LOCK_NB) != 0) return;  // a host is making one: next time
    const int list_fd = ::openat(root_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* dir = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
    std::vector<std::string> names;
    if (dir) {
      while (const dirent* e = ::readdir(dir)) {
        if (std::strncmp(e->d_name, kPrefix, std::strlen(kPrefix)) == 0)
          names.emplace_back(e->d_name);
      }
      ::closedir(dir);
    } else if (list_fd >= 0) {
      ::close(list_fd);
    }
    for (const std::string& name : names) {
      const int fd =
          ::openat(root_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) continue;
      const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;  // its host's lock is gone
      if (free) RemoveTreeAt(root_fd_, name.c_str());
      ::close(fd);
    }
    ::flock(root_fd_, LOCK_UN);
  }

  std::string root_;          // <parent>/devflow-gate-<euid>
  int root_fd_ = -1;          // its fd, checked
  std::string name_;          // the scratch dir's name below it
  std::string path_;          // root_ + "/" + name_
  int lock_fd_ = -1;          // the scratch dir, flock'ed exclusively while the check runs
  bool made_parent_ = false;  // a dry run made root_: it goes again when empty
  bool made_gone_ = false;    // mkdirat met ENOENT: root_ was removed after it was opened
};

// The host's side of a check's reaper: closing the control pipe makes the reaper kill the
// checker's whole tree; End() then reaps the reaper (it exits as soon as the tree is gone).
// Runs on every path out of Dispatch, exceptions included.
struct TreeEnd {
  int control = -1;       // write end of the control pipe
  pid_t reaper = -1;      // the spawned reaper, until it is reaped
  int status = 0;         // its wait status once reaped
  pid_t registered = -1;  // the reaper's pid while KillRunningChecks can see this check
  void Register();
  // Every signal to the checker's tree goes through the reaper (checker/reaper.h step 4): it
  // alone knows whether the checker's group number is still the checker's.
  void Kill();
  void Terminate() {
    if (control >= 0) (void)!::write(control, &reaper::kTerminate, 1);
  }
  // Reaps the reaper (blocking); true with `status` set, false when it was reaped already.
  bool Reap() {
    if (reaper <= 0) return false;
    while (::waitpid(reaper, &status, 0) < 0 && errno == EINTR) {
    }
    reaper = -1;
    return true;
  }
  void End() {
    Kill();
    Reap();
  }
  ~TreeEnd() { End(); }
};

// The checks running in this process, for KillRunningChecks (the server's drain). Leaked on
// purpose: a worker thread may still end a check while the process exits.
struct RunningChecks {
  std::mutex mutex;
  std::set<TreeEnd*> trees;
  bool halted = false;  // KillRunningChecks ran: no Dispatch returns any more
};
RunningChecks& Running() {
  static RunningChecks* running = new RunningChecks;
  return *running;
}

void TreeEnd::Register() {
  std::lock_guard<std::mutex> lock(Running().mutex);
  registered = reaper;
  Running().trees.insert(this);
  // Started while KillRunningChecks ran: its tree goes too.
  if (Running().halted && control >= 0) (void)!::write(control, &reaper::kKill, 1);
}

void TreeEnd::Kill() {
  std::lock_guard<std::mutex> lock(Running().mutex);
  Running().trees.erase(this);
  if (control >= 0) ::close(control);
  control = -1;
}

// After KillRunningChecks the process is about to end: a check that returns now would let its
// caller write a row or an answer after the drain's own `interrupted` rows. Never returns then.
void BlockIfHalted() {
  bool halted = false;
  {
    std::lock_guard<std::mutex> lock(Running().mutex);
    halted = Running().halted;
  }
  if (!halted) return;
  for (;;) ::pause();
}

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

// The checker's whole environment (SPEC §5): nothing else of the host leaks. `passed` gets the
// provider's `env:` values it holds, for the Redactor of the checker's output.
std::vector<std::string> CheckerEnvironment(const ProviderConfig& provider,
                                            const CheckRequest& request, const std::string& scratch,
                                            const std::string& path,
                                            std::vector<PassedValue>& passed) {
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
    if (const char* value = HostEnv(name.c_str())) {
      env.push_back(name + "=" + value);
      passed.push_back(PassedValue{name, value});
    }
  }
  return env;
}

// The levels the checks of this thread's current caller ran under (TakeSandboxLevels).
thread_local std::vector<std::string> dispatched_levels;

// One running check: the event loop state of Dispatch.
struct Run {
  // Under a CheckWaiter the check's I/O objects live on the waiter's io_context; otherwise on
  // an io_context of its own, run by Loop.
  Run(const SubprocessOptions& options, const CheckRequest& request, CheckWaiter* waiter)
      : options(options),
        request(request),
        waiter(waiter),
        own(waiter ? std::nullopt : std::make_optional<asio::io_context>()),
        ctx(waiter ? waiter->io() : *own),
        stdin_pipe(ctx),
        stdout_pipe(ctx),
        stderr_pipe(ctx),
        deadline(ctx),
        term_timer(ctx),
        eof_timer(ctx),
        reaper_exit(ctx),
        interrupt_watch(ctx) {}

  const SubprocessOptions& options;
  const CheckRequest& request;
  CheckWaiter* waiter;
  std::optional<asio::io_context> own;
  asio::io_context& ctx;
  asio::writable_pipe stdin_pipe;
  asio::readable_pipe stdout_pipe;
  asio::readable_pipe stderr_pipe;
  asio::steady_timer deadline;
  asio::steady_timer term_timer;
  asio::steady_timer eof_timer;
  asio::posix::stream_descriptor reaper_exit;      // the reaper's pidfd
  asio::posix::stream_descriptor interrupt_watch;  // a dup of InterruptFd()
  TreeEnd* tree = nullptr;
  int interrupted = 0;  // the signal that interrupted the check, 0 when none
  pid_t pgid = 0;       // the group of the reaper's child (under bubblewrap: bubblewrap's)
  bool bwrap = false;   // the checker runs inside bubblewrap, below a reaper of its own

  bool stdin_done = false, stdout_done = false, stderr_done = false, exited = false;
  bool timed_out = false, reply_over = false;
  int native_status = 0;
  std::string reply;
  std::string stderr_tail;
  int64_t stderr_bytes = 0;
  bool stderr_trimmed = false;   // the tail lost the start of stderr
  bool reply_redacted = false;   // RedactOutput replaced an `env:` value in `reply`
  bool stderr_redacted = false;  // ... in `stderr_tail`
  int64_t reply_bytes = 0;       // stdout bytes read, the overflowing read included
  std::array<char, 64 * 1024> out_buf{}, err_buf{};
  std::vector<asio::const_buffer> prompt_buffers;  // request.prompt's pieces, for the write

  bool Finished() const { return exited && stdin_done && stdout_done && stderr_done; }

  // Marks one of the four conditions of Finished; the waiter learns when all four hold.
  void Done(bool& condition) {
    condition = true;
    if (waiter && Finished()) waiter->Wake();
  }

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
      Done(stdin_done);
      return;
    }
    // The pieces as one gathered write each time the pipe takes more (writev, at most the
    // system's iovec count per call): the prompt is never joined (issue 11 item 2).
    prompt_buffers.clear();
    prompt_buffers.reserve(request.prompt.pieces().size());
    for (const std::string& piece : request.prompt.pieces()) {
      prompt_buffers.push_back(asio::buffer(piece));
    }
    // EPIPE (the checker closed stdin early) just ends the write; its reply still counts.
    asio::async_write(stdin_pipe, prompt_buffers, [this](const boost::system::error_code&, size_t) {
      boost::system::error_code ignored;
      stdin_pipe.close(ignored);
      Done(stdin_done);
    });
  }

  void ReadStdout() {
    stdout_pipe.async_read_some(
        asio::buffer(out_buf), [this](const boost::system::error_code& ec, size_t n) {
          if (ec) {
            Done(stdout_done);
            return;
          }
          reply_bytes += static_cast<int64_t>(n);
          if (static_cast<int64_t>(reply.size() + n) > request.max_reply_bytes) {
            reply_over = true;
            tree->Kill();
            boost::system::error_code ignored;
            stdout_pipe.close(ignored);
            Done(stdout_done);
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
            Done(stderr_done);
            return;
          }
          stderr_tail.append(err_buf.data(), n);
          stderr_bytes += static_cast<int64_t>(n);
          const size_t keep = static_cast<size_t>(std::max<int64_t>(options.stderr_tail_bytes, 1));
          if (stderr_tail.size() > 2 * keep) {
            stderr_tail.erase(0, stderr_tail.size() - keep);
            stderr_trimmed = true;
          }
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
        if (!ec2) tree->Kill();
      });
    });
  }

  // SIGTERM to the checker's group, by its reaper, at every level (under bubblewrap the reaper
  // inside the sandbox sends it, on the same control pipe: checker/reaper.h).
  void Terminate() { tree->Terminate(); }

  // The reaper's pidfd becomes readable when it has exited, i.e. when nothing of the tree runs.
  void AwaitExit() {
    reaper_exit.async_wait(asio::posix::stream_descriptor::wait_read,
                           [this](const boost::system::error_code& ec) {
                             // A failed wait is reported as a kill, never as success.
                             native_status = !ec && tree->Reap() ? tree->status : SIGKILL;
                             term_timer.cancel();
                             // Nothing of the tree runs any more (the reaper's contract), and
                             // the group's number may be another's by now: no kill here.
                             eof_timer.expires_after(Ms(options.eof_grace_ms));
                             eof_timer.async_wait([this](const boost::system::error_code& ec2) {
                               if (!ec2) ClosePipes();
                             });
                             Done(exited);
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

  // Under a waiter another caller's check may run on this thread while this one waits: the
  // record of the levels dispatched is this caller's again when the wait returns.
  void WaitFor(const std::function<bool()>& ready) {
    std::vector<std::string> levels = std::exchange(dispatched_levels, {});
    waiter->Wait(ready);
    dispatched_levels = std::move(levels);
  }

  void Loop() {
    if (waiter) {
      WaitFor([this] { return Finished(); });
    } else {
      while (!Finished()) {
        if (ctx.run_one() == 0) break;  // nothing left to wait for (should not happen)
      }
    }
    deadline.cancel();
    term_timer.cancel();
    eof_timer.cancel();
    boost::system::error_code ignored;
    interrupt_watch.close(ignored);
    reaper_exit.close(ignored);
    ClosePipes();
    if (waiter) {
      // On the shared io_context the handlers of this Run that are already queued (a timer
      // that expired before the cancel, the aborted reads) run before a handler posted now:
      // the Run outlives them all.
      bool settled = false;
      asio::post(ctx, [this, &settled] {
        settled = true;
        waiter->Wake();
      });
      WaitFor([&settled] { return settled; });
    }
  }

  // Bubblewrap itself failed before any checker ran: it exited 1 with nothing on stdout and
  // all it wrote on stderr (kept whole) starting with its own `bwrap: ` prefix (`bwrap: No
  // permissions to create new namespace`). A checker that imitates it only earns a re-probe.
  bool BwrapFailedToStart() const {
    return bwrap && !interrupted && !timed_out && !reply_over && WIFEXITED(native_status) &&
           WEXITSTATUS(native_status) == 1 && reply_bytes == 0 && !stderr_trimmed &&
           stderr_tail.rfind("bwrap: ", 0) == 0;
  }

  // Every passed value the checker wrote, in the reply and the stderr tail, becomes a marker
  // (checker/redact.h). The tail lost its start when trimmed; a reply over its cap lost its end.
  void RedactOutput(const Redactor& redactor) {
    if (redactor.empty()) return;
    std::string redacted = redactor.Redact(reply, false, reply_over);
    reply_redacted = redacted != reply;
    reply = std::move(redacted);
    redacted = redactor.Redact(stderr_tail, stderr_trimmed, false);
    stderr_redacted = redacted != stderr_tail;
    stderr_tail = std::move(redacted);
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
    if (BwrapFailedToStart()) {
      return Fault("bubblewrap could not start the checker: " + LastStderrLine(stderr_tail) +
                   "; the sandbox is probed again on the next check");
    }
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
thread_local CheckWaiter* current_waiter = nullptr;
}  // namespace

CheckWaiter::Scope::Scope(CheckWaiter* waiter) : saved_(current_waiter) { current_waiter = waiter; }
CheckWaiter::Scope::~Scope() { current_waiter = saved_; }
CheckWaiter* CheckWaiter::Current() { return current_waiter; }

std::vector<std::string> TakeSandboxLevels() { return std::exchange(dispatched_levels, {}); }

std::string SubprocessChecker::last_stderr() const {
  std::lock_guard<std::mutex> lock(last_stderr_mutex_);
  return last_stderr_;
}

const ProviderConfig* SubprocessChecker::Provider(const std::string& provider) const {
  auto it = providers_.find(provider);
  return it == providers_.end() ? nullptr : &it->second;
}

void KillRunningChecks() {
  std::vector<pid_t> reapers;
  {
    std::lock_guard<std::mutex> lock(Running().mutex);
    Running().halted = true;
    for (TreeEnd* tree : Running().trees) {
      // A byte on the control pipe: the reaper kills the whole tree and exits.
      if (tree->control >= 0) (void)!::write(tree->control, &reaper::kKill, 1);
      reapers.push_back(tree->registered);
    }
  }
  for (pid_t reaper : reapers) {
    // WNOWAIT: the check's own thread reaps it; ECHILD when it has already.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(reaper), &info, WEXITED | WNOWAIT) != 0 &&
           errno == EINTR) {
    }
  }
}

Result<CheckReply> SubprocessChecker::Dispatch(const CheckRequest& request) {
  BlockIfHalted();
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

  // $PATH's searched entries, worked out once for the probe's key and the checker's PATH
  // (SearchPath resolves every entry link by link: 80+ system calls; issue 8).
  const std::string search_path = SearchPath();  // absolute entries only (checker/sandbox.h)
  const SandboxSupport& support =
      ProbeSandbox(options_.bwrap, {options_.remember_probe}, search_path);
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
    const std::string& path = search_path;

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
    if (std::string fault = scratch.Create(parent, options_.sweep_scratch); !fault.empty()) {
      return StartFault(program, "scratch dir: " + fault);
    }

    ResourceLimits limits = LimitsFor(request.timeout_ms, options_.cpu_limit_s,
                                      options_.max_file_bytes, options_.max_open_files);
    ChildConfinement confinement = ChildConfinement::LimitsOnly(limits);
    std::vector<std::string> args(argv.begin() + 1, argv.end());
    std::string launched = executable;
    std::optional<BwrapSpec> bwrap_spec;  // its argv needs the seccomp fd's number in the reaper
    std::vector<std::string> bwrap_command;
    // What the checker may read (issue 7), for either level: the reaper runs inside bubblewrap.
    ReadableSet readable;
    if (kind == SandboxKind::kBwrap || kind == SandboxKind::kLandlock) {
      CheckerPaths paths{
          request.workspace, scratch.path(), {AbsoluteProgram(executable)}, path, provider.read};
      if (kind == SandboxKind::kBwrap) {
        paths.programs.push_back(ReaperProgram(options_.reaper));
      }
      readable = CheckerReadable(paths, kind == SandboxKind::kBwrap);
    }
    if (kind == SandboxKind::kLandlock) {
      auto prepared =
          ChildConfinement::Landlock(limits, support.landlock_abi, readable, provider.network);
      if (!prepared.ok()) return StartFault(program, "sandbox " + prepared.status().message());
      confinement = std::move(*prepared);
    } else if (kind == SandboxKind::kBwrap) {
      const std::string absolute = AbsoluteProgram(executable);
      // Inside the sandbox the checker's parent is a reaper of its own, the namespace's init
      // (checker/reaper.h): the host's control pipe is its fd 3, bubblewrap's seccomp fd 4.
      std::vector<std::string> command = {ReaperProgram(options_.reaper),
                                          "3",
                                          "-1",
                                          "0",
                                          "0",
                                          "0",
                                          "0",
                                          "-1",
                                          "-1",
                                          "-1",
                                          "-1",
                                          "-1",
                                          "--",
                                          absolute};
      command.insert(command.end(), args.begin(), args.end());
      bwrap_spec = BwrapSpec{support.bwrap, std::move(readable), provider.network};
      bwrap_spec->seccomp_fd = 4;
      bwrap_spec->as_pid_1 = true;
      bwrap_command = std::move(command);
      auto prepared = ChildConfinement::Bwrap(limits, provider.network);
      if (!prepared.ok()) return StartFault(program, "sandbox " + prepared.status().message());
      confinement = std::move(*prepared);
    }

    std::vector<PassedValue> passed;
    std::vector<std::string> env =
        CheckerEnvironment(provider, request, scratch.path(), path, passed);
    const Redactor redactor(passed);
    std::vector<const char*> envp;
    for (const std::string& e : env) envp.push_back(e.c_str());
    envp.push_back(nullptr);

    Run run(options_, request, CheckWaiter::Current());
    run.bwrap = kind == SandboxKind::kBwrap;
    HostPipe in, out, err, control, report;
    if (!in.Open() || !out.Open() || !err.Open() || !control.Open() ||
        (!bwrap_spec && !report.Open())) {
      return StartFault(program, ErrorText(errno));
    }
    // Ends the checker's tree on every path out.
    TreeEnd tree;
    run.tree = &tree;
    pid_t child = 0;  // the reaper, or under bubblewrap bubblewrap
    if (bwrap_spec) {
      // The host starts bubblewrap itself (issue 8: the outer reaper's exec was 2.0-2.3 ms of
      // every check). R', the namespace's init, is the checker's reaper; the control pipe is
      // its own; bubblewrap's --die-with-parent and R''s EOF end the sandbox with the host.
      std::vector<std::string> wrapped = BwrapArgv(*bwrap_spec, bwrap_command);
      std::vector<char*> wrapped_args;
      for (std::string& a : wrapped) wrapped_args.push_back(a.data());
      wrapped_args.push_back(nullptr);
      BwrapStart start;
      RaisedFds raised;  // the sources at 5 or above: no dup2 onto 0-4 overwrites another's
      const std::array<int, 5> sources = {in.fds[0], out.fds[1], err.fds[1], control.fds[0],
                                          confinement.pass_fd()};
      for (size_t i = 0; i < sources.size(); ++i) {
        start.fds[i] = raised.Above(sources[i], static_cast<int>(sources.size()));
        if (start.fds[i] < 0) return StartFault(program, ErrorText(errno));
      }
      start.cwd = request.workspace.empty() ? nullptr : request.workspace.c_str();
      start.limits = confinement.limits();
      start.path = wrapped[0].c_str();
      start.argv = wrapped_args.data();
      start.envp = const_cast<char* const*>(envp.data());
      int spawn_error = 0;
      child = SpawnBwrap(start, &spawn_error);
      tree.control = control.Release(1);
      control.Close(0);
      raised.Close();
      if (child < 0) return StartFault(program, ErrorText(spawn_error));
      tree.reaper = child;
      tree.Register();
      run.pgid = child;  // bubblewrap's own session and group
    } else {
      // The reaper's argv (checker/reaper.h), its fds by number.
      RaisedFds raised;
      const int fd_in = raised.Above2(in.fds[0]), fd_out = raised.Above2(out.fds[1]),
                fd_err = raised.Above2(err.fds[1]), fd_control = raised.Above2(control.fds[0]),
                fd_report = raised.Above2(report.fds[1]),
                fd_ruleset = raised.Above2(confinement.ruleset_fd()),
                fd_filter = raised.Above2(confinement.filter_fd());
      for (int fd : {fd_in, fd_out, fd_err, fd_control, fd_report}) {
        if (fd < 0) return StartFault(program, ErrorText(errno));
      }
      if ((confinement.ruleset_fd() >= 0 && fd_ruleset < 0) ||
          (confinement.filter_fd() >= 0 && fd_filter < 0)) {
        return StartFault(program, ErrorText(errno));
      }
      const std::string reaper_program = ReaperProgram(options_.reaper);
      const ResourceLimits& lim = confinement.limits();
      std::vector<std::string> reaper_argv = {reaper_program,
                                              std::to_string(fd_control),
                                              std::to_string(fd_report),
                                              std::to_string(lim.cpu_soft_s),
                                              std::to_string(lim.cpu_hard_s),
                                              std::to_string(lim.file_bytes),
                                              std::to_string(lim.open_files),
                                              std::to_string(fd_ruleset),
                                              std::to_string(fd_filter),
                                              "-1",
                                              "-1",
                                              "-1",
                                              "--",
                                              launched};
      reaper_argv.insert(reaper_argv.end(), args.begin(), args.end());
      std::vector<char*> reaper_args;
      for (std::string& a : reaper_argv) reaper_args.push_back(a.data());
      reaper_args.push_back(nullptr);

      // posix_spawn: a vfork-style clone whose cost does not grow with the host's memory.
      SpawnPlan plan;
      posix_spawn_file_actions_adddup2(&plan.actions, fd_in, 0);
      posix_spawn_file_actions_adddup2(&plan.actions, fd_out, 1);
      posix_spawn_file_actions_adddup2(&plan.actions, fd_err, 2);
      // dup2 of an fd onto itself clears its close-on-exec flag in the child only.
      for (int fd : {fd_control, fd_report, fd_ruleset, fd_filter}) {
        if (fd >= 0) posix_spawn_file_actions_adddup2(&plan.actions, fd, fd);
      }
      if (!request.workspace.empty()) {
        posix_spawn_file_actions_addchdir_np(&plan.actions, request.workspace.c_str());
      }
      sigset_t all, none;
      sigfillset(&all);
      sigemptyset(&none);
      posix_spawnattr_setsigdefault(&plan.attr, &all);
      posix_spawnattr_setsigmask(&plan.attr, &none);
      posix_spawnattr_setpgroup(&plan.attr, 0);
      posix_spawnattr_setflags(
          &plan.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
      const int spawn_error =
          ::posix_spawn(&child, reaper_program.c_str(), &plan.actions, &plan.attr,
                        reaper_args.data(), const_cast<char* const*>(envp.data()));
      tree.control = control.Release(1);
      control.Close(0);
      report.Close(1);
      raised.Close();
      if (spawn_error != 0) {
        return StartFault(program,
                          "the checker reaper " + reaper_program + ": " + ErrorText(spawn_error));
      }
      tree.reaper = child;
      tree.Register();
      // The checker reports its pid (its process group) as soon as it is forked; the pipe's EOF
      // follows its exec.
      const StartReport started = ReadStartReport(report.fds[0]);
      if (started.error != 0) return StartFault(program, ErrorText(started.error));
      if (started.checker <= 0) {
        return StartFault(program, "the checker reaper " + reaper_program +
                                       " ended before it started the checker");
      }
      run.pgid = started.checker;
    }
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
    if (pidfd < 0) return StartFault(program, "pidfd_open: " + ErrorText(errno));
    run.reaper_exit.assign(pidfd);
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
    run.AwaitExit();
    run.WritePrompt();
    run.ReadStdout();
    run.ReadStderr();
    run.WatchInterrupt();
    run.Loop();
    tree.End();
    BlockIfHalted();
    // The one place the checker's bytes pass before the gate parses, keeps or prints them:
    // from here on no `env:` value it quoted is left (checker/redact.h, trial15 L1).
    run.RedactOutput(redactor);
    {
      std::lock_guard<std::mutex> lock(last_stderr_mutex_);
      last_stderr_ = run.stderr_tail;
    }

    Status outcome = run.Outcome();
    // A remembered positive probe (or this process's) no longer holds: probe again next time.
    if (run.BwrapFailedToStart()) ForgetBwrapProbe({options_.remember_probe});
    if (!outcome.ok()) {
      if (request.evidence && outcome.code() == "fault") {
        *request.evidence = CheckEvidence{true,
                                          std::move(run.reply),
                                          run.reply_bytes,
                                          run.reply_over,
                                          run.stderr_tail,
                                          run.stderr_bytes,
                                          level,
                                          run.reply_redacted,
                                          run.stderr_trimmed,
                                          run.stderr_redacted};
      }
      return outcome;
    }
    return CheckReply{std::move(run.reply), level,
                      run.stderr_tail,      run.stderr_bytes,
                      run.reply_redacted,   run.stderr_trimmed,
                      run.stderr_redacted};
  } catch (const std::exception& e) {  // Asio/Process throw; nothing crosses the module edge
    return Fault("cannot run checker \"" + program + "\": " + e.what());
  }
}

}  // namespace devflow

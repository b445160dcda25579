// Sandbox probe and confinement pieces (cpp-notes §3). Landlock constants are defined here:
// Debian 12's linux-libc-dev stops at ABI 2, the kernels this runs on go further.
#include "checker/sandbox.h"

#include "host/os.h"
#include "host/symlinks.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

namespace devflow {
namespace {

// ---- Landlock uapi (include/uapi/linux/landlock.h, up to ABI 6) ----
constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;
constexpr uint64_t kFsExecute = 1ULL << 0;
constexpr uint64_t kFsWriteFile = 1ULL << 1;
constexpr uint64_t kFsReadFile = 1ULL << 2;
constexpr uint64_t kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsRemoveDir = 1ULL << 4;
constexpr uint64_t kFsRemoveFile = 1ULL << 5;
constexpr uint64_t kFsMakeChar = 1ULL << 6;
constexpr uint64_t kFsMakeDir = 1ULL << 7;
constexpr uint64_t kFsMakeReg = 1ULL << 8;
constexpr uint64_t kFsMakeSock = 1ULL << 9;
constexpr uint64_t kFsMakeFifo = 1ULL << 10;
constexpr uint64_t kFsMakeBlock = 1ULL << 11;
constexpr uint64_t kFsMakeSym = 1ULL << 12;
constexpr uint64_t kFsRefer = 1ULL << 13;     // ABI 2
constexpr uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kNetBindTcp = 1ULL << 0;   // ABI 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;

struct LandlockRulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4
  uint64_t scoped;              // ABI 6
};
struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

std::string ErrorText(int err) { return std::system_category().message(err); }

// `path` canonical, or "" when it cannot be resolved (gone, unreadable on the way).
std::string Canonical(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) return "";
  std::string out(real);
  std::free(real);
  return out;
}

// Whether `path` is `tree` or lies beneath it (both absolute, lexically).
bool WithinTree(const std::string& path, const std::string& tree) {
  if (path.compare(0, tree.size(), tree) != 0) return false;
  return path.size() == tree.size() || tree == "/" || path[tree.size()] == '/';
}

// The test seam of ProbeSandbox: the syscall is answered as a kernel without Landlock would.
bool LandlockHidden() {
  const char* hide = std::getenv("DEVFLOW_GATE_TEST_NO_LANDLOCK");
  return hide && std::string(hide) == "1";
}

// Landlock ABI version, or 0 with `*problem` set.
int LandlockAbi(std::string* problem) {
  long abi = -1;
  if (LandlockHidden()) {
    errno = ENOSYS;
  } else {
    abi = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  }
  if (abi > 0) return static_cast<int>(abi);
  *problem = "landlock_create_ruleset: " + ErrorText(abi < 0 ? errno : EOPNOTSUPP);
  return 0;
}

bool SeccompFilterAvailable(std::string* problem) {
  uint32_t action = SECCOMP_RET_ERRNO;
  if (::syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0) return true;
  *problem = "seccomp(SECCOMP_GET_ACTION_AVAIL): " + ErrorText(errno);
  return false;
}

Status SandboxError(const std::string& step, int err) {
  return Status::Error("sandbox", step + ": " + ErrorText(err));
}

// `program` itself when it holds a '/', else the first executable match on $PATH.
std::string FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? program : "";
  }
  const std::string dirs = SearchPath();
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && dir[0] == '/') {
      std::string candidate = dir + "/" + program;
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          ::access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
    }
    start = end + 1;
  }
  return "";
}

// The last non-empty line of what the probed bubblewrap wrote to stderr (`bwrap: Unable to set
// up system call filtering`), at most 200 bytes of it; "" when it wrote nothing.
std::string LastLine(int fd) {
  char buf[4096];
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const off_t from =
      size > static_cast<off_t>(sizeof buf) ? size - static_cast<off_t>(sizeof buf) : 0;
  const ssize_t n = size > 0 ? ::pread(fd, buf, sizeof buf, from) : 0;
  std::string text(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  const size_t start = text.rfind('\n');
  std::string line = start == std::string::npos ? text : text.substr(start + 1);
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

// Runs bubblewrap as a check does (BwrapArgv with the checker's seccomp program on `--seccomp FD`,
// the same ChildConfinement::Bwrap filter) around /bin/true, stdin and stdout
// on /dev/null. "" when it exits 0 within 10 s, else why not, with the last line bubblewrap wrote
// to stderr (a host where bubblewrap runs but cannot install a seccomp filter fails here, as
// every check would: `bwrap: Unable to set up system call filtering`).
std::string BwrapProblem(const std::string& bwrap) {
  const std::string failed = "`" + bwrap + " ... --seccomp FD ... /bin/true` did not exit 0";
  Result<ChildConfinement> confinement = ChildConfinement::Bwrap(ResourceLimits{}, false);
  if (!confinement.ok()) return failed + ": " + confinement.status().message();
  // Above stdio (a host started with fd 0-2 closed gets the memfds there), close-on-exec here.
  const int filter = ::fcntl(confinement->pass_fd(), F_DUPFD_CLOEXEC, 3);
  const int errors = ::memfd_create("devflow-gate-probe-stderr", MFD_CLOEXEC);
  const int err_fd = errors >= 0 ? ::fcntl(errors, F_DUPFD_CLOEXEC, 3) : -1;
  if (errors >= 0) ::close(errors);
  struct Close {
    int a, b;
    ~Close() {
      if (a >= 0) ::close(a);
      if (b >= 0) ::close(b);
    }
  } close_fds{filter, err_fd};
  if (filter < 0 || err_fd < 0) return failed + ": " + ErrorText(errno);

  // The readable set of a check without workspace or scratch: the system trees.
  BwrapSpec spec{bwrap, CheckerReadable({"", "", {"/bin/true"}, "", {}}), false};
  spec.seccomp_fd = filter;
  spec.as_pid_1 = true;  // as a check runs its reaper
  std::vector<std::string> argv = BwrapArgv(spec, {"/bin/true"});
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  char path_env[] = "PATH=/usr/local/bin:/usr/bin:/bin";
  char* envp[] = {path_env, nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  for (int fd = 0; fd <= 1; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  // dup2 of an fd onto itself clears its close-on-exec flag in the child only.
  posix_spawn_file_actions_adddup2(&actions, filter, filter);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, bwrap.c_str(), &actions, &attr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return failed + ": " + ErrorText(rc);

  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return failed + ": waitpid: " + ErrorText(errno);
    if (std::chrono::steady_clock::now() >= give_up) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return "`" + bwrap + " ... --seccomp FD ... /bin/true` did not exit within 10 s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  const std::string said = LastLine(err_fd);
  return failed + (said.empty() ? "" : ": " + said);
}

// A positive bubblewrap probe is remembered per user, keyed by everything that decides whether
// it can work (the program's identity, the kernel, the uid, the user-namespace limits) and by
// the probe's version (v2: the probe passes the seccomp filter, so a v1 entry, from a probe
// without it, is never reused; v3: it runs on the readable set's empty root, issue 7), so a
// one-shot CLI does not pay ~5 ms for `bwrap … /bin/true` on every move. Only success is
// remembered: a missing, stale or forged entry can at worst make the checker fail to start,
// which fails closed; it can never weaken confinement. DEVFLOW_GATE_PROBE_CACHE=off disables it.
std::string ReadSmall(const char* path) {
  Result<std::string> text = RealFileSystem().ReadFile(path);
  if (!text.ok()) return "-";
  std::string v = *text;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

std::string ProbeCacheFile() {
  const char* off = std::getenv("DEVFLOW_GATE_PROBE_CACHE");
  if (off && std::string(off) == "off") return "";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string dir;
  if (xdg && *xdg == '/') {
    dir = xdg;
  } else if (home && *home == '/') {
    dir = std::string(home) + "/.cache";
  } else {
    return "";
  }
  return dir + "/devflow-gate/bwrap-probe";
}

std::string ProbeKey(const std::string& bwrap) {
  struct stat st {};
  if (::stat(bwrap.c_str(), &st) != 0) return "";
  struct utsname uts {};
  ::uname(&uts);
  return "v3 " + bwrap + " " + std::to_string(st.st_size) + " " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
         uts.release + " " + uts.version + " uid=" + std::to_string(::getuid()) +
         " userns=" + ReadSmall("/proc/sys/user/max_user_namespaces") +
         " clone=" + ReadSmall("/proc/sys/kernel/unprivileged_userns_clone") + "\n";
}

// BwrapProblem, or "" when a remembered positive probe of this key stands for it.
std::string BwrapProblemRemembered(const std::string& bwrap, bool remember) {
  const std::string file = ProbeCacheFile();
  const std::string key = ProbeKey(bwrap);
  if (!file.empty() && !key.empty()) {
    Result<std::string> seen = RealFileSystem().ReadFile(file);
    if (seen.ok() && *seen == key) return "";
  }
  if (std::string problem = BwrapProblem(bwrap); !problem.empty()) return problem;
  if (remember && !file.empty() && !key.empty() &&
      RealFileSystem().CreateDirs(ParentPath(file)).ok()) {
    (void)RealFileSystem().WriteFileAtomic(file, key);  // best effort: next run probes again
  }
  return "";
}

SandboxSupport Probe(const std::string& bwrap_program, const ProbeOptions& options) {
  SandboxSupport support;
  if (bwrap_program.empty()) {
    support.bwrap_problem = "not used (no bubblewrap program configured)";
  } else {
    std::string bwrap = FindProgram(bwrap_program);
    support.bwrap_found = bwrap;
    if (bwrap.empty()) {
      support.bwrap_problem =
          "\"" + bwrap_program + "\" is not " +
          (bwrap_program.find('/') == std::string::npos ? std::string("on PATH")
                                                        : std::string("an executable file"));
    } else {
      support.bwrap_problem = BwrapProblemRemembered(bwrap, options.remember);
      if (support.bwrap_problem.empty()) support.bwrap = bwrap;
    }
  }
  std::string landlock_problem, seccomp_problem;
  support.landlock_abi = LandlockAbi(&landlock_problem);
  support.seccomp = SeccompFilterAvailable(&seccomp_problem);
  support.fallback_problem = landlock_problem;
  if (!seccomp_problem.empty()) {
    support.fallback_problem += (support.fallback_problem.empty() ? "" : "; ") + seccomp_problem;
  }
  return support;
}

// The write rights Landlock knows at `abi`.
uint64_t FsWriteRights(int abi) {
  uint64_t rights = kFsWriteFile | kFsRemoveDir | kFsRemoveFile | kFsMakeChar | kFsMakeDir |
                    kFsMakeReg | kFsMakeSock | kFsMakeFifo | kFsMakeBlock | kFsMakeSym;
  if (abi >= 2) rights |= kFsRefer;
  if (abi >= 3) rights |= kFsTruncate;
  return rights;
}

// What a readable tree grants (ABI 1 knows them all).
constexpr uint64_t kFsReadRights = kFsExecute | kFsReadFile | kFsReadDir;
// The rights a rule on a file (not a directory) may carry: the kernel refuses the others.
constexpr uint64_t kFsFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate;

// Adds a rule granting `allowed` on the inode `fd` (O_PATH) refers to, named `path` in errors;
// `dir`: whether it is a directory (else the directory-only rights are dropped). Closes `fd`.
// `*added` counts rules.
Status AddRuleOn(int ruleset_fd, int fd, bool dir, const std::string& path, uint64_t allowed,
                 int* added) {
  LandlockPathBeneathAttr rule{dir ? allowed : allowed & kFsFileRights, fd};
  long rc = ::syscall(__NR_landlock_add_rule, ruleset_fd, kRulePathBeneath, &rule, 0);
  int err = errno;
  ::close(fd);
  if (rc != 0) return SandboxError("landlock_add_rule " + path, err);
  ++*added;
  return Status::Ok();
}

// Adds a rule granting `allowed` beneath `path` (on it alone when it is not a directory). A path
// that does not exist is skipped when `missing_ok`.
Status AddPathRule(int ruleset_fd, const std::string& path, uint64_t allowed, int* added,
                   bool missing_ok = false) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (missing_ok && errno == ENOENT) return Status::Ok();
    return SandboxError("open " + path, errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return SandboxError("fstat " + path, err);
  }
  return AddRuleOn(ruleset_fd, fd, S_ISDIR(st.st_mode), path, allowed, added);
}

// Grants reading beneath the canonical `tree` but not any of `denied` (ReadableSet::denied).
// Landlock cannot deny beneath a granted directory, so a tree that holds a denied path is
// granted entry by entry instead (recursively where an entry holds one in turn), without it and
// without the tree's own listing; a symlink among the entries gets no rule (the file it leads
// to is judged on its own), an entry gone meanwhile none either. The entries are opened
// relative to the directory and typed by readdir, without a stat each: /etc (140 entries here)
// costs one openat, one landlock_add_rule and one close per entry.
Status AddReadableTree(int ruleset_fd, const std::string& tree,
                       const std::vector<std::string>& denied, int* added) {
  bool holds_denied = false;
  for (const std::string& d : denied) {
    if (d == tree) return Status::Ok();
    holds_denied = holds_denied || WithinTree(d, tree);
  }
  if (!holds_denied) return AddPathRule(ruleset_fd, tree, kFsReadRights, added);
  DIR* dir = ::opendir(tree.c_str());
  if (!dir) return SandboxError("opendir " + tree, errno);
  struct CloseDir {
    DIR* dir;
    ~CloseDir() { ::closedir(dir); }
  } close_dir{dir};
  const int dir_fd = ::dirfd(dir);
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = JoinPath(tree, name);
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {  // a file system that does not type its entries
      struct stat st {};
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
    }
    if (type == DT_LNK) continue;
    Status status;
    if (std::any_of(denied.begin(), denied.end(),
                    [&](const std::string& d) { return WithinTree(d, path); })) {
      status = AddReadableTree(ruleset_fd, path, denied, added);
    } else if (int fd = ::openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC); fd >= 0) {
      status = AddRuleOn(ruleset_fd, fd, type == DT_DIR, path, kFsReadRights, added);
    } else if (errno != ENOENT) {
      status = SandboxError("open " + path, errno);
    }
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

// The calls that change a file's mode, owner, times, extended attributes or inode flags. No
// Landlock ABI (up to 7) governs any of them, and the kernel asks only for ownership (not a
// writable open), so at the Landlock level a checker changed every file of its uid: a host
// secret 0600 -> 0666, a config file setuid, journal.jsonl 0666, an mtime set to 2001, a user.*
// xattr (issue 7, the fresh tester). A checker of a root host is uid 0: it owns the system's
// binaries too (chmod u+s needs no capability from the owner). Under bubblewrap `--dev` binds
// the host's /dev/null, /dev/zero, ... writable, so the rules matter at that level too. seccomp
// sees no path: they are denied everywhere, the checker's own scratch dir included
// (docs/security.md "File metadata"). `fallback` is the x86_64 / aarch64 number (the unified
// table of calls added since 5.1) for the calls a libseccomp may not name: Debian 12's
// 2.5.4+deb12u1 names fchmodat2 (an upstream 2.5.4 does not) but not the 6.13/6.17 calls.
struct NamedCall {
  const char* name;
  int fallback;
};
constexpr NamedCall kMetadataCalls[] = {
    {"chmod", -1},         {"fchmod", -1},       {"fchmodat", -1},    {"fchmodat2", 452},
    {"chown", -1},         {"fchown", -1},       {"lchown", -1},      {"fchownat", -1},
    {"utime", -1},         {"utimes", -1},       {"futimesat", -1},   {"utimensat", -1},
    {"setxattr", -1},      {"lsetxattr", -1},    {"fsetxattr", -1},   {"removexattr", -1},
    {"lremovexattr", -1},  {"fremovexattr", -1}, {"setxattrat", 463}, {"removexattrat", 466},
    {"file_setattr", 469},  // 6.17: chattr by path (FS_IOC_FSSETXATTR's fields)
};

#if (defined(__x86_64__) && !defined(__ILP32__)) || defined(__aarch64__)
constexpr bool kUnifiedSyscallNumbers = true;
#else
constexpr bool kUnifiedSyscallNumbers = false;
#endif

// Adds an EPERM rule for each of `calls`.
template <size_t N>
Status DenyCalls(scmp_filter_ctx ctx, const NamedCall (&calls)[N]) {
  for (const NamedCall& call : calls) {
    int nr = ::seccomp_syscall_resolve_name(call.name);
    if (nr == __NR_SCMP_ERROR) {
      // libseccomp does not know the name: its number, where this file knows it, else fail
      // closed. Never skipped: a kernel without the call answers ENOSYS to the rule's number
      // anyway, and one with it (6.18 here has all four) must not be left open.
      if (call.fallback < 0 || !kUnifiedSyscallNumbers) {
        return SandboxError(std::string("seccomp: no syscall number for ") + call.name, ENOSYS);
      }
      nr = call.fallback;
    }
    // A negative pseudo-number: this architecture has no such call (aarch64 has no chmod(2),
    // only fchmodat), so there is nothing to deny.
    if (nr < 0) continue;
    int rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    if (rc != 0) return SandboxError(std::string("seccomp_rule_add ") + call.name, -rc);
  }
  return Status::Ok();
}

Status DenyMetadataChanges(scmp_filter_ctx ctx) {
  if (Status denied = DenyCalls(ctx, kMetadataCalls); !denied.ok()) return denied;
  // chattr through ioctl(2) (FS_IOC_SETFLAGS: nodump, noatime, ... need only ownership). The
  // kernel reads the command as a 32-bit int, so only its low 32 bits are compared: a command
  // with bits set above them would slip past a 64-bit equality.
  // FS_IOC_SETVERSION / EXT4_IOC_SETVERSION (and the 32-bit forms) set the inode generation
  // and ctime from a read-only fd (trial 0353 F2); FS_IOC_ENABLE_VERITY makes a file read-only
  // for good, FS_IOC_SET_ENCRYPTION_POLICY encrypts a directory: all change a host file, so all
  // are denied. EXT4_IOC_ALLOC_DA_BLKS only forces block allocation (no content, mode, time or
  // generation changes): allowed. FS_IOC32_SETFLAGS is the 32-bit chattr. The uapi headers
  // lack the 32-bit and ext4 forms, hence the literals (_IOW('v'|'f', nr, int|long)).
  constexpr unsigned long kFsIoc32SetFlags = 0x40046602;           // _IOW('f', 2, int)
  constexpr unsigned long kFsIocSetVersion = 0x40087602;           // _IOW('v', 2, long)
  constexpr unsigned long kFsIoc32SetVersion = 0x40047602;         // _IOW('v', 2, int)
  constexpr unsigned long kExt4IocSetVersion = 0x40086604;         // _IOW('f', 4, long)
  constexpr unsigned long kExt4Ioc32SetVersion = 0x40046604;       // _IOW('f', 4, int)
  constexpr unsigned long kFsIocEnableVerity = 0x40806685;         // _IOW('f', 133, 128 bytes)
  constexpr unsigned long kFsIocSetEncryptionPolicy = 0x800c6613;  // _IOR('f', 19, 12 bytes)
  for (unsigned long command :
       {static_cast<unsigned long>(FS_IOC_SETFLAGS), static_cast<unsigned long>(FS_IOC_FSSETXATTR),
        kFsIoc32SetFlags, kFsIocSetVersion, kFsIoc32SetVersion, kExt4IocSetVersion,
        kExt4Ioc32SetVersion, kFsIocEnableVerity, kFsIocSetEncryptionPolicy}) {
    int rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, command));
    if (rc != 0) return SandboxError("seccomp_rule_add ioctl", -rc);
  }
  return Status::Ok();
}

// What the host shares with a checker without a file: at the Landlock level there is no IPC
// namespace, so a checker attached a host process's SysV shared memory segment (read and
// overwrote it) and created a POSIX message queue that outlived the check; at both levels
// (bubblewrap keeps the keyring) it searched, read, cleared and added keys in the host's
// session keyring (issue 7 F2, F3, the fresh tester). No checker needs any of them: denied at
// both levels (docs/security.md "IPC, keyrings and the terminal"). `ipc` is the multiplexer
// 32-bit x86 and others route SysV IPC through (x86_64 and aarch64 have none: skipped there).
constexpr NamedCall kHostIpcCalls[] = {
    {"shmget", -1},        {"shmat", -1},           {"shmdt", -1},
    {"shmctl", -1},        {"msgget", -1},          {"msgsnd", -1},
    {"msgrcv", -1},        {"msgctl", -1},          {"semget", -1},
    {"semop", -1},         {"semtimedop", -1},      {"semctl", -1},
    {"ipc", -1},           {"mq_open", -1},         {"mq_unlink", -1},
    {"mq_timedsend", -1},  {"mq_timedreceive", -1}, {"mq_notify", -1},
    {"mq_getsetattr", -1}, {"keyctl", -1},          {"add_key", -1},
    {"request_key", -1},
};

// The terminal ioctls that act on a tty beyond its own output: TIOCSTI pushes bytes into its
// input queue (a checker typed commands into the operator's shell, issue 7 F1), TIOCLINUX
// pastes the console selection. The checker has no controlling terminal (the reaper setsid()s
// it), but a root checker needs none for TIOCSTI (CAP_SYS_ADMIN) and may open the operator's
// pty read-only: both are denied at both levels, by the command's low 32 bits as above.
Status DenyHostIpcAndTerminal(scmp_filter_ctx ctx) {
  if (Status denied = DenyCalls(ctx, kHostIpcCalls); !denied.ok()) return denied;
  for (unsigned long command : {TIOCSTI, TIOCLINUX}) {
    int rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, command));
    if (rc != 0) return SandboxError("seccomp_rule_add ioctl", -rc);
  }
  return Status::Ok();
}

// The seccomp program as raw sock_filter words in a memfd (O_CLOEXEC), built with libseccomp
// in the host; the reaper reads it back before it forks the checker.
Result<int> BuildSeccompFilter(bool network) {
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return SandboxError("seccomp_init", ENOMEM);
  struct Release {
    scmp_filter_ctx ctx;
    ~Release() { ::seccomp_release(ctx); }
  } release{ctx};
  // io_uring can open sockets without socket(2) (cpp-notes §3); no checker needs it.
  int rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(io_uring_setup), 0);
  // Without the network no socket at all: a pathname Unix socket (the gate's own `serve`, any
  // host service) is reachable through the read-only root, and Landlock cannot deny connect(2)
  // on one. socketpair(2) stays: it reaches nothing outside the process tree.
  if (rc == 0 && !network) {
    rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 0);
  }
  // No checker traces or reads another process's memory: under bubblewrap it could stop the
  // sandbox's own `timeout`, at the Landlock level read another checker of the same user
  // (the trial of 2026-12-02). Its own children included: a debugger is no checker's tool.
  for (int call : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev)}) {
    if (rc == 0) rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), call, 0);
  }
  // No lease on a host file (trial 0353 m2): a read lease taken on the journal or the ledger
  // through a read-only fd makes the host's next open for writing wait for the lease to break
  // (lease-break-time, 45 s); no checker needs one. fcntl64 is the 32-bit form (none on x86_64).
  for (const char* name : {"fcntl", "fcntl64"}) {
    const int nr = ::seccomp_syscall_resolve_name(name);
    if (rc == 0 && nr >= 0) {
      rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, F_SETLEASE));
    }
  }
  if (rc != 0) return SandboxError("seccomp_rule_add", -rc);
  if (Status denied = DenyMetadataChanges(ctx); !denied.ok()) return denied;
  if (Status denied = DenyHostIpcAndTerminal(ctx); !denied.ok()) return denied;
  int fd = ::memfd_create("devflow-gate-seccomp", MFD_CLOEXEC);
  if (fd < 0) return SandboxError("memfd_create", errno);
  rc = ::seccomp_export_bpf(ctx, fd);
  if (rc != 0) {
    ::close(fd);
    return SandboxError("seccomp_export_bpf", -rc);
  }
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0 ||
      size > static_cast<off_t>(BPF_MAXINSNS * sizeof(sock_filter))) {
    ::close(fd);
    return SandboxError("seccomp_export_bpf", EINVAL);
  }
  return fd;
}

}  // namespace

namespace {

// The trees SearchPath never searches (DistrustTree), canonical, each once.
std::mutex distrusted_mutex;
uint64_t distrust_generation = 0;  // bumped by DistrustTree when it adds a tree (SearchPath's memo)
std::vector<std::string>& DistrustedTrees() {
  static std::vector<std::string> trees;
  return trees;
}

std::string CanonicalOr(const std::string& path) {
  std::string real = Canonical(path);
  return real.empty() ? path : real;
}

// Whether SearchPath keeps the $PATH entry `dir`: absolute, and neither it, nor a symlink met
// resolving it (SymlinksAlong: the agent can retarget a link in its workspace even when both
// ends lie outside), nor what it resolves to lies in a distrusted tree.
bool Searched(std::string_view dir) {
  if (dir.empty() || dir[0] != '/') return false;
  std::lock_guard<std::mutex> lock(distrusted_mutex);
  if (DistrustedTrees().empty()) return true;
  const std::string written(dir);
  const std::string real = CanonicalOr(written);
  const std::vector<std::string> links = SymlinksAlong(written);
  for (const std::string& tree : DistrustedTrees()) {
    if (WithinTree(written, tree) || WithinTree(real, tree)) return false;
    for (const std::string& link : links) {
      if (WithinTree(link, tree)) return false;
    }
  }
  return true;
}

// The system trees every checker reads (its programs, their libraries, /etc's configuration).
constexpr const char* kSystemTrees[] = {"/usr",   "/bin",    "/sbin", "/lib", "/lib32",
                                        "/lib64", "/libx32", "/etc",  "/opt"};

// The secrets a root host keeps beneath /etc (ReadableSet::denied); /etc/ssh's host private
// keys are found by listing it.
constexpr const char* kDeniedBeneathEtc[] = {
    "/etc/shadow",  "/etc/gshadow",   "/etc/shadow-",          "/etc/gshadow-",
    "/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd", "/etc/ssl/private"};

std::vector<std::string> DeniedSecrets() {
  std::vector<std::string> written(std::begin(kDeniedBeneathEtc), std::end(kDeniedBeneathEtc));
  if (DIR* ssh = ::opendir("/etc/ssh")) {
    while (dirent* e = ::readdir(ssh)) {
      const std::string name = e->d_name;
      if (name.rfind("ssh_host_", 0) == 0 && name.size() > 13 &&
          name.compare(name.size() - 4, 4, "_key") == 0) {
        written.push_back("/etc/ssh/" + name);
      }
    }
    ::closedir(ssh);
  }
  // Denied where the name leads: a secret behind a symlink is masked at its target.
  std::vector<std::string> denied;
  for (const std::string& path : written) {
    if (std::string real = Canonical(path); !real.empty()) denied.push_back(std::move(real));
  }
  return denied;
}

// The canonical directory of each hop of `program`'s own symlink chain: `~/.local/bin/x ->
// ../share/x/bin/x` gives ~/.local/bin and ~/.local/share/x/bin. A link among the directories
// on the way (a symlinked home) gives no directory of its own: its parent may hold anything.
void AddProgramDirs(const std::string& program, std::vector<std::string>* dirs) {
  std::string path = program;
  for (int hop = 0; hop <= 40; ++hop) {
    const std::string dir = Canonical(ParentPath(path));
    if (dir.empty()) return;
    dirs->push_back(dir);
    const std::string at = JoinPath(dir, path.substr(path.rfind('/') + 1));
    char target[PATH_MAX];
    const ssize_t n = ::readlink(at.c_str(), target, sizeof target);
    if (n <= 0) return;
    const std::string next(target, static_cast<size_t>(n));
    path = next[0] == '/' ? next : JoinPath(dir, next);
  }
}

}  // namespace

ReadableSet CheckerReadable(const CheckerPaths& paths, bool links) {
  ReadableSet set;
  std::vector<std::string> wanted;  // canonical candidates for trees
  std::vector<std::string> routes;  // paths as written whose symlinks bubblewrap recreates
  auto want = [&](const std::string& path) {
    routes.push_back(path);
    if (std::string real = Canonical(path); !real.empty()) wanted.push_back(std::move(real));
  };
  for (const char* tree : kSystemTrees) want(tree);
  if (!paths.workspace.empty()) {
    want(paths.workspace);
    set.workspace = Canonical(paths.workspace);
  }
  for (const std::string& program : paths.programs) {
    routes.push_back(program);
    AddProgramDirs(program, &wanted);
  }
  for (std::string_view dirs = paths.search_path; !dirs.empty();) {
    const size_t end = std::min(dirs.find(':'), dirs.size());
    if (dirs[0] == '/') want(std::string(dirs.substr(0, end)));
    dirs.remove_prefix(std::min(end + 1, dirs.size()));
  }
  for (const std::string& path : paths.read) want(path);
  // DNS for a checker with the network: /etc/resolv.conf often points into /run.
  if (const std::string resolv = Canonical("/etc/resolv.conf");
      WithinTree(resolv, "/run") && resolv != "/run") {
    want("/etc/resolv.conf");
  }
  if (!paths.scratch.empty()) {
    routes.push_back(paths.scratch);
    set.scratch = Canonical(paths.scratch);
  }

  const std::vector<std::string> secrets = DeniedSecrets();
  std::sort(wanted.begin(), wanted.end());  // a tree sorts before everything beneath it
  for (const std::string& path : wanted) {
    const bool covered = std::any_of(set.trees.begin(), set.trees.end(),
                                     [&](const std::string& t) { return WithinTree(path, t); });
    const bool secret = std::any_of(secrets.begin(), secrets.end(),
                                    [&](const std::string& s) { return WithinTree(path, s); });
    if (!covered && !secret) set.trees.push_back(path);
  }
  for (const std::string& secret : secrets) {
    if (std::any_of(set.trees.begin(), set.trees.end(),
                    [&](const std::string& t) { return WithinTree(secret, t); }) &&
        std::find(set.denied.begin(), set.denied.end(), secret) == set.denied.end()) {
      set.denied.push_back(secret);
    }
  }
  if (!links) routes.clear();
  for (const std::string& route : routes) {
    for (const std::string& link : SymlinksAlong(route)) {
      auto visible = [&](const std::string& tree) { return WithinTree(link, tree); };
      if (std::any_of(set.trees.begin(), set.trees.end(), visible) ||
          (!set.scratch.empty() && visible(set.scratch))) {
        continue;
      }
      char target[PATH_MAX];
      const ssize_t n = ::readlink(link.c_str(), target, sizeof target);
      if (n <= 0) continue;
      if (std::none_of(set.links.begin(), set.links.end(),
                       [&](const auto& known) { return known.first == link; })) {
        set.links.emplace_back(link, std::string(target, static_cast<size_t>(n)));
      }
    }
  }
  return set;
}

bool ReadableIn(const ReadableSet& set, const std::string& path) {
  const std::string real = Canonical(path);
  if (real.empty()) return false;
  auto within = [&real](const std::string& tree) { return WithinTree(real, tree); };
  if (std::any_of(set.denied.begin(), set.denied.end(), within)) return false;
  return (!set.scratch.empty() && within(set.scratch)) ||
         std::any_of(set.trees.begin(), set.trees.end(), within);
}

std::vector<std::string> MaskedSecrets() { return DeniedSecrets(); }

void DistrustTree(const std::string& dir) {
  if (dir.empty()) return;
  const std::string tree = CanonicalOr(dir);
  std::lock_guard<std::mutex> lock(distrusted_mutex);
  std::vector<std::string>& trees = DistrustedTrees();
  if (std::find(trees.begin(), trees.end(), tree) == trees.end()) {
    trees.push_back(tree);
    ++distrust_generation;
  }
}

std::string SearchPath() {
  const char* path = std::getenv("PATH");
  // One walk per $PATH value and set of distrusted trees: resolving every entry link by link
  // is 80-160 system calls, which a server paid on every dispatch (issue 8). What it decides
  // depends on where the written entries and their links lie, which only whoever owns those
  // directories can change (and an owner of a $PATH directory can plant a program there
  // anyway); a tree distrusted later, or another $PATH, walks anew.
  static std::mutex memo_mutex;
  static std::optional<std::pair<std::string, uint64_t>> memo_key;
  static std::string memo;
  const std::string written = path ? path : "";
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(distrusted_mutex);
    generation = distrust_generation;
  }
  {
    std::lock_guard<std::mutex> lock(memo_mutex);
    if (memo_key && memo_key->first == written && memo_key->second == generation) return memo;
  }
  std::string kept;
  std::string_view dirs = written;
  while (!dirs.empty()) {
    const size_t end = std::min(dirs.find(':'), dirs.size());
    const std::string_view dir = dirs.substr(0, end);
    if (Searched(dir)) kept.append(kept.empty() ? "" : ":").append(dir);
    dirs.remove_prefix(std::min(end + 1, dirs.size()));
  }
  if (kept.empty()) kept = "/usr/local/bin:/usr/bin:/bin";
  std::lock_guard<std::mutex> lock(memo_mutex);
  memo_key.emplace(written, generation);
  memo = kept;
  return kept;
}

std::vector<std::string> UnsearchedPathEntries() {
  const char* path = std::getenv("PATH");
  std::vector<std::string> dropped;
  if (!path) return dropped;
  std::string_view dirs = path;
  for (;;) {  // every entry, the empty ones before, between and after the colons included
    const size_t end = std::min(dirs.find(':'), dirs.size());
    const std::string_view dir = dirs.substr(0, end);
    if (!Searched(dir) && std::find(dropped.begin(), dropped.end(), dir) == dropped.end()) {
      dropped.emplace_back(dir);
    }
    if (end == dirs.size()) break;
    dirs.remove_prefix(end + 1);
  }
  return dropped;
}

namespace {
std::mutex probe_mutex;
// Bumped by ForgetBwrapProbe: part of ProbeSandbox's memo key, so the next call probes anew.
uint64_t probe_generation = 0;
}  // namespace

void ForgetBwrapProbe(const ProbeOptions& options) {
  {
    std::lock_guard<std::mutex> lock(probe_mutex);
    ++probe_generation;
  }
  if (!options.remember) return;
  const std::string file = ProbeCacheFile();
  if (file.empty()) return;
  Result<std::string> seen = RealFileSystem().ReadFile(file);
  // Only an entry of this host's key: the program's path is its second field.
  if (!seen.ok() || seen->rfind("v3 /", 0) != 0) return;
  const std::string bwrap = seen->substr(3, seen->find(' ', 3) - 3);
  if (ProbeKey(bwrap) == *seen) (void)::unlink(file.c_str());
}

const SandboxSupport& ProbeSandbox(const std::string& bwrap_program, const ProbeOptions& options) {
  return ProbeSandbox(bwrap_program, options, SearchPath());
}

const SandboxSupport& ProbeSandbox(const std::string& bwrap_program, const ProbeOptions& options,
                                   const std::string& search_path) {
  static std::map<std::string, SandboxSupport> probed;  // never shrinks: references stay valid
  std::lock_guard<std::mutex> lock(probe_mutex);
  // What is searched, not $PATH as written: a tree distrusted since changes what is found.
  const std::string key = bwrap_program + '\0' + search_path + '\0' +
                          (LandlockHidden() ? "no-landlock" : "") + '\0' +
                          std::to_string(probe_generation);
  auto found = probed.find(key);
  if (found == probed.end()) found = probed.emplace(key, Probe(bwrap_program, options)).first;
  return found->second;
}

std::string NoSandboxProblem(const SandboxSupport& support, const std::string& provider) {
  const std::string fix =
      support.bwrap_found.empty()
          ? "Install bubblewrap (apt-get install bubblewrap)"
          : "Let the installed bubblewrap (" + support.bwrap_found +
                ") run a checker: it needs unprivileged user namespaces (sysctl "
                "user.max_user_namespaces > 0 and kernel.unprivileged_userns_clone=1, no AppArmor "
                "or systemd RestrictNamespaces= rule denying them) and seccomp";
  return "no sandbox is usable for provider \"" + provider +
         "\": bubblewrap: " + (support.bwrap_problem.empty() ? "usable" : support.bwrap_problem) +
         "; Landlock + seccomp: " +
         (support.fallback_problem.empty() ? "usable" : support.fallback_problem) + ". " + fix +
         ", or set `sandbox: off` on provider \"" + provider + "\" to run its checker unconfined";
}

SandboxKind ChooseSandbox(const SandboxSupport& support, bool provider_off) {
  if (provider_off) return SandboxKind::kOff;
  if (!support.bwrap.empty()) return SandboxKind::kBwrap;
  if (support.landlock_abi >= 1 && support.seccomp) return SandboxKind::kLandlock;
  return SandboxKind::kNone;
}

std::string SandboxLevelName(SandboxKind kind, int landlock_abi) {
  switch (kind) {
    case SandboxKind::kOff:
      return "off";
    case SandboxKind::kBwrap:
      return "bwrap";
    case SandboxKind::kLandlock:
      return "landlock-abi" + std::to_string(landlock_abi) + "+seccomp";
    case SandboxKind::kNone:
      break;
  }
  return "none";
}

std::vector<std::string> BwrapArgv(const BwrapSpec& spec, const std::vector<std::string>& command) {
  const ReadableSet& readable = spec.readable;
  std::vector<std::string> argv = {spec.bwrap};
  // Only the readable set, on bubblewrap's empty root (issue 7): `--ro-bind / /` showed the
  // checker every file the host's uid can read, a root host's /root and /etc/shadow included.
  for (const std::string& tree : readable.trees) argv.insert(argv.end(), {"--ro-bind", tree, tree});
  // `--remount-ro /proc`: the checker's /proc is read-only. bubblewrap means to make /proc/sys
  // read-only itself, but a root host's bwrap 0.8 skips it (its write test on the directory gets
  // EACCES, which it takes for "already read-only"), and a checker of a root host is uid 0 to the
  // kernel: it wrote kernel.core_pattern and 764 other sysctls (this session's trial, F0), and a
  // `|prog` core pattern runs prog as root outside every sandbox. A read-only mount refuses every
  // write below it (EROFS), /proc/sysrq-trigger included; /proc/self stays readable.
  argv.insert(argv.end(),
              {"--dev", "/dev", "--proc", "/proc", "--remount-ro", "/proc", "--unshare-all"});
  if (spec.network) argv.push_back("--share-net");
  if (spec.as_pid_1) argv.push_back("--as-pid-1");
  for (const char* flag : {"--die-with-parent", "--new-session", "--cap-drop", "ALL"}) {
    argv.push_back(flag);
  }
  if (spec.seccomp_fd >= 0) argv.insert(argv.end(), {"--seccomp", std::to_string(spec.seccomp_fd)});
  // A denied file reads as the host's /dev/null on a nodev mount (EACCES); a denied directory as
  // an empty read-only tmpfs.
  for (const std::string& denied : readable.denied) {
    struct stat st {};
    if (::stat(denied.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      argv.insert(argv.end(), {"--tmpfs", denied, "--remount-ro", denied});
    } else {
      argv.insert(argv.end(), {"--ro-bind", "/dev/null", denied});
    }
  }
  for (const auto& [link, target] : readable.links) {
    argv.insert(argv.end(), {"--symlink", target, link});
  }
  if (!readable.scratch.empty()) {
    argv.insert(argv.end(), {"--bind", readable.scratch, readable.scratch});
  }
  argv.insert(argv.end(), {"--remount-ro", "/"});
  if (!readable.workspace.empty()) argv.insert(argv.end(), {"--chdir", readable.workspace});
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

ResourceLimits LimitsFor(int64_t timeout_ms, int64_t cpu_override_s, int64_t file_bytes,
                         int64_t open_files) {
  ResourceLimits limits;
  uint64_t ms = timeout_ms > 0 ? static_cast<uint64_t>(timeout_ms) : 0;
  limits.cpu_soft_s =
      cpu_override_s > 0 ? static_cast<uint64_t>(cpu_override_s) : (ms + 999) / 1000 + 1;
  limits.cpu_hard_s = limits.cpu_soft_s + 1;
  limits.file_bytes = file_bytes > 0 ? static_cast<uint64_t>(file_bytes) : 0;
  limits.open_files = open_files > 0 ? static_cast<uint64_t>(open_files) : 0;
  return limits;
}

ChildConfinement::ChildConfinement(ChildConfinement&& other) noexcept
    : limits_(other.limits_),
      ruleset_fd_(std::exchange(other.ruleset_fd_, -1)),
      rules_(other.rules_),
      filter_fd_(std::exchange(other.filter_fd_, -1)),
      pass_fd_(std::exchange(other.pass_fd_, -1)) {}

ChildConfinement& ChildConfinement::operator=(ChildConfinement&& other) noexcept {
  if (this != &other) {
    if (ruleset_fd_ >= 0) ::close(ruleset_fd_);
    if (filter_fd_ >= 0) ::close(filter_fd_);
    if (pass_fd_ >= 0) ::close(pass_fd_);
    limits_ = other.limits_;
    ruleset_fd_ = std::exchange(other.ruleset_fd_, -1);
    rules_ = other.rules_;
    filter_fd_ = std::exchange(other.filter_fd_, -1);
    pass_fd_ = std::exchange(other.pass_fd_, -1);
  }
  return *this;
}

ChildConfinement::~ChildConfinement() {
  if (ruleset_fd_ >= 0) ::close(ruleset_fd_);
  if (filter_fd_ >= 0) ::close(filter_fd_);
  if (pass_fd_ >= 0) ::close(pass_fd_);
}

ChildConfinement ChildConfinement::LimitsOnly(const ResourceLimits& limits) {
  ChildConfinement c;
  c.limits_ = limits;
  return c;
}

Result<ChildConfinement> ChildConfinement::Bwrap(const ResourceLimits& limits, bool network) {
  ChildConfinement c;
  c.limits_ = limits;
  auto filter = BuildSeccompFilter(network);
  if (!filter.ok()) return filter.status();
  c.pass_fd_ = *filter;
  // bubblewrap reads the program from the fd's offset to its end.
  if (::lseek(c.pass_fd_, 0, SEEK_SET) != 0) return SandboxError("lseek seccomp memfd", errno);
  return c;
}

Result<ChildConfinement> ChildConfinement::Landlock(const ResourceLimits& limits, int landlock_abi,
                                                    const ReadableSet& readable, bool network) {
  ChildConfinement c;
  c.limits_ = limits;
  if (landlock_abi < 1) return SandboxError("landlock", EOPNOTSUPP);

  LandlockRulesetAttr attr{};
  // Reads handled too (issue 7): granted only where ReadableSet says, as bubblewrap binds.
  attr.handled_access_fs = FsWriteRights(landlock_abi) | kFsReadRights;
  size_t attr_size = sizeof(uint64_t);
  if (landlock_abi >= 4) {
    attr_size = 2 * sizeof(uint64_t);
    if (!network) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;  // no rule grants them
  }
  if (landlock_abi >= 6) {
    attr_size = sizeof attr;
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  }
  long fd = ::syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
  if (fd < 0) return SandboxError("landlock_create_ruleset", errno);
  c.ruleset_fd_ = static_cast<int>(fd);  // O_CLOEXEC by the kernel

  int added = 0;
  if (!readable.scratch.empty()) {
    Status rule = AddPathRule(c.ruleset_fd_, readable.scratch, attr.handled_access_fs, &added);
    if (!rule.ok()) return rule;
  }
  // `2>/dev/null` must keep working (cpp-notes §3); the device files bubblewrap's `--dev` gives
  // are readable; /proc as under bubblewrap (no write: kernel settings stay untouched).
  const uint64_t dev_null =
      kFsReadFile | kFsWriteFile | (landlock_abi >= 3 ? kFsTruncate : uint64_t{0});
  Status rule = AddPathRule(c.ruleset_fd_, "/dev/null", dev_null, &added);
  for (const char* device : {"/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
    if (rule.ok()) rule = AddPathRule(c.ruleset_fd_, device, kFsReadFile, &added, true);
  }
  if (rule.ok()) rule = AddPathRule(c.ruleset_fd_, "/proc", kFsReadRights, &added);
  for (const std::string& tree : readable.trees) {
    if (rule.ok()) rule = AddReadableTree(c.ruleset_fd_, tree, readable.denied, &added);
  }
  if (!rule.ok()) return rule;
  c.rules_ = added;

  auto filter = BuildSeccompFilter(network);
  if (!filter.ok()) return filter.status();
  c.filter_fd_ = *filter;
  return c;
}

}  // namespace devflow

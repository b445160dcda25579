#include "host/os.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <malloc.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace devflow {
namespace {

// How often AppendDurable / ReplaceLocked reopen a file that a replace renamed over the one
// they locked, before they give up (ESTALE).
constexpr int kAppendReopens = 64;

// WriteFileAtomic's temp names tried past EEXIST before it gives up (see there).
constexpr int kTempNameTries = 1000;

// What a read lease (fcntl(2) F_SETLEASE F_RDLCK) on the file WriteFileAtomic's kIfUnchanged
// compares says about writers: the kernel refuses it (EAGAIN) while any process holds the file
// open for writing, and breaks it when one opens it later, so an editor that truncates card.md
// and writes it in place, pausing between writes, is seen even while the file holds exactly the
// bytes the caller read (trial20b 1a-1: 433 of 1686 bytes kept, 3 of 3).
enum class Lease {
  kHeld,        // no writer had the file open; a later writer's open breaks it (F_GETLEASE)
  kWriterOpen,  // EAGAIN: a writer has the file open now
  kNone,        // no lease (EACCES: not the file's owner and no CAP_LEASE; EINVAL: a file
                // system without leases, some overlay or NFS mounts): the compare alone decides
};

// Takes a read lease on `fd` (opened O_RDONLY). A break is signalled to the holder, with SIGIO
// unless F_SETSIG names another signal, and SIGIO's default action ends the process: this fd
// names SIGURG, whose default action is to ignore it and for which the gate sets no handler,
// so no process-wide disposition changes and the checkers the gate spawns inherit nothing.
// The break is read with F_GETLEASE (StillLeased), never from the signal.
Lease TakeReadLease(int fd) {
  if (::fcntl(fd, F_SETSIG, SIGURG) != 0) return Lease::kNone;
  if (::fcntl(fd, F_SETLEASE, F_RDLCK) == 0) return Lease::kHeld;
  return errno == EAGAIN ? Lease::kWriterOpen : Lease::kNone;
}

// True while the read lease TakeReadLease took on `fd` is unbroken: a writer that opened the
// file since makes F_GETLEASE answer F_UNLCK (the lease is being broken), and that writer's
// open waits until the lease is released (fs.lease-break-time at most, 45 s by default).
bool StillLeased(int fd) { return ::fcntl(fd, F_GETLEASE) == F_RDLCK; }

// Releases the lease on `fd`, so a writer waiting in open(2) goes on at once.
void ReleaseLease(int fd) { ::fcntl(fd, F_SETLEASE, F_UNLCK); }

// Closes an fd on scope exit (RAII for every fd, STYLE.md).
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return OsError(errno, "write", path);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// The refusal of a file over the bytes a read may take (ReadFileBeneath).
// The refusal of a file over kMaxReadBytes (host/os.h), `bytes` being its size or what was
// read of it before it grew past the bound.
Status TooBig(const std::string& path, uint64_t bytes) {
  return Status::Error("EFBIG", "read " + path + ": " + std::to_string(bytes) +
                                    " bytes, over the " + std::to_string(kMaxReadBytes) +
                                    " bytes the gate reads of one file (EFBIG); replace it "
                                    "with a smaller file");
}

// Reads to EOF straight into the string, sized from `size_hint` (the file's st_size): one
// copy, the kernel's, for a file that does not grow while it is read (a 16 MiB artifact was
// copied three times through a bounce buffer and the string's regrowth, issue 11 item 2).
// Reads `fd` to EOF. `size_hint` is a regular file's st_size (0 when unknown: a /proc file
// reads as size 0): the buffer holds one byte more, so the read that sees EOF needs no
// regrowth, and a read that returns exactly the hinted size with that byte to spare is the
// end (a regular file reads short only at its end; one that grew since the fstat fills the
// spare byte and is read on), so the usual second read that returns 0 is not made.
// A file that turns out longer than kMaxReadBytes is refused (EFBIG), having read at most one
// buffer past it (a /proc file, or a file that grew since the fstat).
Result<std::string> ReadAll(int fd, const std::string& path, off_t size_hint = 0) {
  std::string out;
  size_t used = 0;
  const size_t hint = static_cast<size_t>(size_hint > 0 ? size_hint : 0);
  // No size (a /proc or /sys file reports 0): one page. A sysctl such as
  // /proc/sys/user/max_user_namespaces answers only a read from offset 0, so a 1-byte first
  // read kept its first digit alone (the bubblewrap probe's key, checker/sandbox.cc).
  out.resize(hint > 0 ? hint + 1 : 4096);
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
    ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      return OsError(errno, "read", path);
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
    if (used > static_cast<size_t>(kMaxReadBytes)) return TooBig(path, used);
    if (hint > 0 && used == hint && out.size() == hint + 1) break;
  }
  out.resize(used);
  return out;
}

// The devflow roots below which the seam follows no symbolic link, reading or writing (issue
// 7, trial 0353 F3: a link planted under .devflow turned the gate's appends and creates into
// root's writes on host files). Keyed by the root as named and as resolved; a root named
// before it existed is resolved when first used after it does.
struct NoSymlinkRoot {
  std::string named;     // AbsolutePath of what the operator named (may be a symlink)
  std::string resolved;  // realpath of it: no symlink at any component
  bool real = false;     // resolved by realpath (false: the root did not exist yet)
  // The resolved root, opened, and its (st_dev, st_ino): RootFd reuses it while `resolved`
  // still names that directory. Guarded by g_roots_mu; borrowers hold the shared_ptr.
  std::shared_ptr<const UniqueFd> dir;
  dev_t dev = 0;
  ino_t ino = 0;
};
std::mutex g_roots_mu;
std::map<std::string, std::shared_ptr<NoSymlinkRoot>> g_roots;  // by named and by resolved

// A path below a registered root: the root as the path spells it, the resolved root, and the
// rest (no "." or ".." segment, never empty).
struct BelowRoot {
  std::string root;
  std::string resolved;
  std::string rel;
  std::shared_ptr<NoSymlinkRoot> entry;  // the registration (RootFd's opened root)
};

std::optional<BelowRoot> FindRoot(const std::string& path) {
  const std::string abs = AbsolutePath(path);
  std::lock_guard<std::mutex> lock(g_roots_mu);
  if (g_roots.empty()) return std::nullopt;
  // The outermost registered ancestor of `abs`.
  for (size_t at = abs.find('/', 1); at != std::string::npos; at = abs.find('/', at + 1)) {
    auto it = g_roots.find(abs.substr(0, at));
    if (it == g_roots.end()) continue;
    NoSymlinkRoot& r = *it->second;
    if (!r.real) {
      char buf[PATH_MAX];
      if (::realpath(r.named.c_str(), buf) != nullptr) {
        r.resolved = buf;
        r.real = true;
        g_roots.emplace(r.resolved, it->second);
      }
    }
    return BelowRoot{it->first, r.resolved, abs.substr(at + 1), it->second};
  }
  return std::nullopt;
}

// Opens the resolved root itself; O_NOFOLLOW: a root that was a real directory when resolved
// and is a symlink now was swapped by someone else.
int OpenRoot(const BelowRoot& below) {
  int fd;
  do {
    fd = ::open(below.resolved.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno == ENOTDIR) {
    struct stat st {};
    if (::lstat(below.resolved.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) errno = ELOOP;
  }
  return fd;
}

// The resolved root, opened, for openat2 below it (issue 8: a cache-hit decision opened and
// closed the root for the journal, card.md and each input's card directory). The descriptor
// opened first is kept and reused while an lstat of the resolved path finds a directory with
// its (st_dev, st_ino): the kept descriptor holds that inode, so no other file can have the
// pair meanwhile, and the path names that very directory now (a root renamed away, replaced
// or swapped for a link is another inode, or no directory: opened afresh by OpenRoot, with
// its errors). One lstat instead of an open and a close; what is below the root is looked up
// from it at each use, as before. A fd < 0 (errno set) when the root cannot be opened.
std::shared_ptr<const UniqueFd> RootFd(const BelowRoot& below) {
  struct stat st {};
  if (below.entry && ::fstatat(AT_FDCWD, below.resolved.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISDIR(st.st_mode)) {
    std::lock_guard<std::mutex> lock(g_roots_mu);
    const NoSymlinkRoot& r = *below.entry;
    if (r.dir && r.resolved == below.resolved && r.dev == st.st_dev && r.ino == st.st_ino) {
      return r.dir;
    }
  }
  const int fd = OpenRoot(below);
  const int err = errno;
  auto fresh = std::make_shared<const UniqueFd>(fd);
  if (fd < 0) {
    errno = err;
    return fresh;
  }
  struct stat held {};
  if (below.entry && ::fstat(fresh->get(), &held) == 0) {
    std::lock_guard<std::mutex> lock(g_roots_mu);
    NoSymlinkRoot& r = *below.entry;
    if (r.resolved == below.resolved) {
      r.dir = fresh;
      r.dev = held.st_dev;
      r.ino = held.st_ino;
    }
  }
  return fresh;
}

// Opens `rel` (relative, no "." or ".." segment) below the directory `dirfd` without following
// a symbolic link at any component: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS); where the
// kernel has no openat2 (ENOSYS, or a seccomp profile's EPERM), each directory component is
// opened with openat(O_NOFOLLOW | O_DIRECTORY), the last with `flags | O_NOFOLLOW`. -1 and
// errno on failure; ELOOP (EXDEV is mapped to it) means a symlink was met.
int OpenNoSymlinks(int dirfd, const std::string& rel, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
  long fd;
  do {
    fd = ::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how);
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  if (fd >= 0) return static_cast<int>(fd);
  if (errno == EXDEV) errno = ELOOP;
  if (errno != ENOSYS && errno != EPERM) return -1;
  UniqueFd dir(::dup(dirfd));
  if (dir.get() < 0) return -1;
  size_t at = 0;
  for (;;) {
    const size_t slash = rel.find('/', at);
    const std::string name = rel.substr(at, slash == std::string::npos ? slash : slash - at);
    const bool last = slash == std::string::npos;
    int next;
    do {
      next = ::openat(dir.get(), name.c_str(),
                      (last ? flags : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
    } while (next < 0 && errno == EINTR);
    if (next < 0) {
      const int err = errno;
      struct stat st {};  // O_DIRECTORY | O_NOFOLLOW on a symlink fails ENOTDIR, not ELOOP
      errno = err == ENOTDIR && ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                      S_ISLNK(st.st_mode)
                  ? ELOOP
                  : err;
      return -1;
    }
    if (last) return next;
    dir.reset(next);
    at = slash + 1;
  }
}

// Opens `path` with `flags` (no O_CREAT) as the seam opens every file it reads: below a
// registered root from the root's fd through OpenNoSymlinks (`*below` says which root),
// elsewhere by name. -1 and errno on failure (ELOOP below a root: a symlink was met).
int OpenNoLinkBelowRoot(const std::string& path, int flags, std::optional<BelowRoot>* below) {
  *below = FindRoot(path);
  int fd;
  if (!*below) {
    do {
      fd = ::open(path.c_str(), flags | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
  }
  const std::shared_ptr<const UniqueFd> root = RootFd(**below);
  if (root->get() < 0) return -1;
  return OpenNoSymlinks(root->get(), (*below)->rel, flags);
}

// Where an operation on one name happens. Below a registered root: `dir` is the directory that
// holds the final component, opened from the root's fd through OpenNoSymlinks, `name` the final
// component, and every call on it is relative to `dir` and does not follow it either
// (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW), so no symlink planted below the root, at any component,
// before or after this was opened, redirects the operation. Elsewhere `dir` is closed (at() is
// AT_FDCWD) and `name` is the path, followed as before.
struct Place {
  UniqueFd dir;
  std::string name;
  std::optional<BelowRoot> below;
  int err = 0;  // the errno of opening `dir`; ELOOP: a symlink below the root

  int at() const { return below ? dir.get() : AT_FDCWD; }
  int nofollow() const { return below ? O_NOFOLLOW : 0; }
  int stat_flags() const { return below ? AT_SYMLINK_NOFOLLOW : 0; }
  // A sibling of the final component (a temp file beside it), as `at()` names it.
  std::string Sibling(const std::string& path, const std::string& leaf) const {
    return below ? leaf : JoinPath(ParentPath(path), leaf);
  }
  // Makes a directory entry created in `dir` durable (fsync of the directory).
  Status SyncParent(const std::string& path) const;
};

Status SyncDir(const std::string& dir);

Status Place::SyncParent(const std::string& path) const {
  if (!below) return SyncDir(ParentPath(path));
  if (::fsync(dir.get()) != 0 && errno != EINVAL) return OsError(errno, "fsync", ParentPath(path));
  return Status::Ok();
}

Place Locate(const std::string& path) {
  Place p;
  p.below = FindRoot(path);
  if (!p.below) {
    p.name = path;
    return p;
  }
  const std::string& rel = p.below->rel;
  const size_t slash = rel.find_last_of('/');
  p.name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  if (slash == std::string::npos) {
    p.dir.reset(OpenRoot(*p.below));  // the root itself holds the name: a descriptor of its own
  } else if (const std::shared_ptr<const UniqueFd> root = RootFd(*p.below); root->get() >= 0) {
    p.dir.reset(OpenNoSymlinks(root->get(), rel.substr(0, slash), O_RDONLY | O_DIRECTORY));
  } else {
    p.dir.reset(-1);
  }
  if (p.dir.get() < 0) p.err = errno;
  return p;
}

// The first component of `path` below its root that is a symbolic link now (lstat, outermost
// first), as `path` spells it; `path` itself when none is (a link removed since): only for the
// message, never for a decision.
std::string FirstLinkBelowRoot(const BelowRoot& below, const std::string& path) {
  struct stat st {};
  if (::lstat(below.resolved.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return below.root;
  for (size_t at = 0;; ++at) {
    at = below.rel.find('/', at);
    const std::string prefix = below.rel.substr(0, at);
    if (::lstat(JoinPath(below.resolved, prefix).c_str(), &st) != 0) break;
    if (S_ISLNK(st.st_mode)) return JoinPath(below.root, prefix);
    if (at == std::string::npos) break;
  }
  return AbsolutePath(path);
}

// The refusal of an operation on `path` that met a symbolic link below its devflow root (code
// "ELOOP"): `<op> <path>: <link> is a symbolic link below the devflow root <root>, which the
// gate never follows (ELOOP)[; nothing was written]; replace <link> with a real directory (a
// real file) and retry`.
Status LinkRefusal(std::string_view op, const std::string& path, const BelowRoot& below,
                   bool write) {
  const std::string link = FirstLinkBelowRoot(below, path);
  std::string msg = std::string(op) + " " + path + ": ";
  if (link == below.root) {
    msg += "the devflow root " + below.root +
           " was replaced by a symbolic link after the gate "
           "resolved it, and the gate follows no symbolic link below the devflow root (ELOOP)";
  } else {
    msg += link + " is a symbolic link below the devflow root " + below.root +
           ", which the gate never follows (ELOOP)";
  }
  if (write) msg += "; nothing was written";
  const bool dir_op = op == "mkdir" || op == "rmdir" || op == "opendir";
  msg += "; replace " + link + " with a real " +
         (link == AbsolutePath(path) && !dir_op ? "file" : "directory") + " and retry";
  return Status::Error("ELOOP", std::move(msg));
}

// The error of an operation whose Place could not be opened: the refusal for a symlink, else
// `<op> <shown>: <strerror> (<ERRNO>)` as the operation's own failure reads.
Status PlaceError(const Place& p, std::string_view op, const std::string& path, bool write,
                  const std::string& shown) {
  if (p.err == ELOOP && p.below) return LinkRefusal(op, path, *p.below, write);
  return OsError(p.err, op, shown);
}

// Opens the final component of `place` (never following it below a root).
int OpenRetrying(const Place& place, int flags) {
  int fd;
  do {
    fd = ::openat(place.at(), place.name.c_str(), flags | place.nofollow(), 0644);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// What an operator does about a failed append of `path`.
std::string AppendFix(int err, const std::string& path) { return WriteFix(ErrnoName(err), path); }

// `append <path>: <strerror> (<ERRNO>)`, plus ` at <op>` unless the op was the write itself.
std::string AppendHead(int err, std::string_view op, const std::string& path) {
  std::string head = "append " + path + ": " + ::strerror(err) + " (" + ErrnoName(err) + ")";
  if (op != "write") head += " at " + std::string(op);
  return head;
}

// An append that failed before writing anything: `path` is unchanged.
Status AppendError(int err, std::string_view op, const std::string& path) {
  std::string msg = AppendHead(err, op, path) + "; nothing was written; " + AppendFix(err, path);
  return Status::Error(ErrnoName(err), std::move(msg));
}

// An append that failed after it may have written: cut the file back to `before` bytes and
// sync, so it is as it was; the error keeps the errno that made the append fail.
Status Rollback(int fd, int err, std::string_view op, const std::string& path, off_t before,
                bool regular) {
  std::string msg = AppendHead(err, op, path) + "; ";
  if (!regular) {  // a device or a pipe (e.g. --ledger /dev/stderr): nothing to cut back
    return Status::Error(ErrnoName(err), msg + AppendFix(err, path));
  }
  int cut;
  do {
    cut = ::ftruncate(fd, before);
  } while (cut != 0 && errno == EINTR);
  if (cut != 0 || ::fsync(fd) != 0) {
    const int rb = errno;
    msg += "and the partial line could not be removed (" + ErrnoName(rb) +
           "): cut the file back to its first " + std::to_string(before) +
           " bytes by hand (truncate -s " + std::to_string(before) + " " + path + "), then " +
           AppendFix(err, path);
  } else {
    msg += "the file is unchanged (" + std::to_string(before) + " bytes); " + AppendFix(err, path);
  }
  return Status::Error(ErrnoName(err), std::move(msg));
}

Status SyncDir(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return OsError(errno, "open", dir);
  if (::fsync(fd.get()) != 0 && errno != EINVAL) return OsError(errno, "fsync", dir);
  return Status::Ok();
}

// True when `rel` is absolute or has a ".." segment (lexical escape from any base).
bool LeavesLexically(std::string_view rel) {
  if (rel.empty() || rel[0] == '/') return true;
  for (size_t i = 0; i <= rel.size();) {
    size_t j = rel.find('/', i);
    if (j == std::string_view::npos) j = rel.size();
    if (rel.substr(i, j - i) == "..") return true;
    i = j + 1;
  }
  return false;
}

Status Escapes(const std::string& path, const std::string& base, std::string_view how) {
  return Status::Error("EXDEV", "open " + path + ": " + std::string(how) + " " + base + " (EXDEV)");
}

// The real path of an open fd (via /proc/self/fd), or nullopt.
std::optional<std::string> FdPath(int fd) {
  char buf[4096];
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n < 0 || static_cast<size_t>(n) >= sizeof buf) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

bool IsBeneath(const std::string& path, const std::string& dir) {
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// Opens `rel` beneath `base` read-only and non-blocking (a FIFO must not hang the gate).
// Returns the fd, or a Status. openat2 is race-free; the fallback checks the opened fd's real
// path, so a component swapped for a symlink between realpath and open is still caught.
Result<int> OpenBeneath(const std::string& base, const std::string& rel) {
  const std::string path = JoinPath(base, rel);
  std::optional<BelowRoot> below;  // a base below a devflow root is reached through no symlink
  UniqueFd dir(OpenNoLinkBelowRoot(base, O_RDONLY | O_DIRECTORY, &below));
  if (dir.get() < 0) {
    if (below && errno == ELOOP) return LinkRefusal("open", path, *below, /*write=*/false);
    return OsError(errno, "open", base);
  }
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd;
  do {
    fd = ::syscall(SYS_openat2, dir.get(), rel.c_str(), &how, sizeof how);
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  if (fd >= 0) return static_cast<int>(fd);
  if (errno == EXDEV) return Escapes(path, base, "resolves outside");
  if (errno != ENOSYS && errno != EPERM) return OsError(errno, "open", path);

  // No openat2 (old kernel, or a seccomp profile that forbids it).
  char real_base[PATH_MAX];
  if (!::realpath(base.c_str(), real_base)) return OsError(errno, "open", base);
  UniqueFd file(::openat(dir.get(), rel.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (file.get() < 0) return OsError(errno, "open", path);
  std::optional<std::string> real = FdPath(file.get());
  if (!real || !IsBeneath(*real, real_base)) return Escapes(path, base, "resolves outside");
  return file.release();
}

// Opens `path` for reading as ReadFile does: O_NONBLOCK so a FIFO planted where a file should
// be cannot hang the gate, only regular files (and directories, which fail to read with EISDIR).
// `*size` is the regular file's st_size (0 when the fstat failed). One fstat: the open file's
// type cannot change. A regular file keeps O_NONBLOCK: Linux ignores it for regular files' reads
// (ReadFileBeneath has always read them so), and an EAGAIN would fail the read, closed. Only
// when the fstat failed, and the type is unknown, does F_SETFL 0 clear it (the only status flag
// it was opened with). This spares a system call on every whole-file read (issue 8).
// `own` (ReadOwnFile): `path` itself must be a regular file with one link: a final symlink is
// not followed (O_NOFOLLOW), and a failed fstat fails the read.
Result<int> OpenForRead(const std::string& path, off_t* size, bool own = false) {
  std::optional<BelowRoot> below;
  UniqueFd fd(OpenNoLinkBelowRoot(path, O_RDONLY | O_NONBLOCK | (own ? O_NOFOLLOW : 0), &below));
  if (fd.get() < 0) {
    // A record that is itself a link keeps ReadOwnFile's own message (docs/security.md).
    if (below && errno == ELOOP &&
        !(own && FirstLinkBelowRoot(*below, path) == AbsolutePath(path))) {
      return LinkRefusal("open", path, *below, /*write=*/false);
    }
    if (own && errno == ELOOP) {
      return Status::Error("ELOOP", "open " + path + ": a symlink, not a regular file (ELOOP)");
    }
    return OsError(errno, "open", path);
  }
  struct stat st {};
  *size = 0;
  if (::fstat(fd.get(), &st) != 0) {
    if (own) return OsError(errno, "fstat", path);
    ::fcntl(fd.get(), F_SETFL, 0);
    return fd.release();
  }
  if (S_ISDIR(st.st_mode)) return OsError(EISDIR, "read", path);
  if (!S_ISREG(st.st_mode)) {
    return Status::Error("EINVAL", "read " + path + ": not a regular file (EINVAL)");
  }
  if (own && st.st_nlink != 1) {
    return Status::Error("EMLINK", "read " + path + ": " + std::to_string(st.st_nlink) +
                                       " hard links, not one (EMLINK)");
  }
  if (st.st_size > kMaxReadBytes) return TooBig(path, static_cast<uint64_t>(st.st_size));
  *size = st.st_size;
  return fd.release();
}

// The size of the open file `fd` (named `path` in errors) when it is a regular file within
// kMaxReadBytes: a directory is EISDIR, a FIFO or device EINVAL (without blocking: it was opened
// O_NONBLOCK), a larger file EFBIG before a byte is read.
Result<off_t> RegularSize(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return OsError(errno, "fstat", path);
  if (S_ISDIR(st.st_mode)) return OsError(EISDIR, "read", path);
  if (!S_ISREG(st.st_mode)) {
    return Status::Error("EINVAL", "read " + path + ": not a regular file (EINVAL)");
  }
  if (st.st_size > kMaxReadBytes) return TooBig(path, static_cast<uint64_t>(st.st_size));
  return st.st_size;
}

// The whole of the open file `fd` as RegularSize allows it. ReadFileBeneath's and
// ReadNamedFile's last step.
Result<std::string> ReadRegular(int fd, const std::string& path) {
  Result<off_t> size = RegularSize(fd, path);
  if (!size.ok()) return size.status();
  return ReadAll(fd, path, *size);
}

// RegularSize's checks, then the file mapped (MAP_POPULATE: one fault-in, no copy into the
// heap); an empty file (a /proc file reads as size 0) or one that cannot be mapped is read.
Result<FileBytes> MapRegular(int fd, const std::string& path) {
  Result<off_t> size = RegularSize(fd, path);
  if (!size.ok()) return size.status();
  if (*size > 0) {
    const auto bytes = static_cast<size_t>(*size);
    void* at = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (at != MAP_FAILED) return FileBytes::Mapped(at, bytes);
  }
  Result<std::string> read = ReadAll(fd, path);
  if (!read.ok()) return read.status();
  return FileBytes(std::move(*read));
}

// Opens a file an operator names (FileSystem::ReadNamedFile's rules): no symbolic link at any
// component, nothing of /proc or /sys. The fd is O_NONBLOCK (a FIFO is refused by the caller's
// type check, never read).
Result<int> OpenNamed(const std::string& path) {
  const std::string absolute = AbsolutePath(path);
  UniqueFd top(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (top.get() < 0) return OsError(errno, "open", "/");
  UniqueFd fd(absolute == "/"
                  ? ::dup(top.get())
                  : OpenNoSymlinks(top.get(), absolute.substr(1), O_RDONLY | O_NONBLOCK));
  if (fd.get() < 0) {
    if (errno != ELOOP) return OsError(errno, "open", path);
    char real[PATH_MAX];
    const std::string named = ::realpath(path.c_str(), real) ? std::string(real) : "unresolved";
    return Status::Error("ELOOP", "read " + path +
                                      ": names a symbolic link (ELOOP); the gate reads the file a "
                                      "path names, never a link's target: name the file itself (" +
                                      named + ") if that is what you mean");
  }
  struct statfs fsinfo {};
  if (::fstatfs(fd.get(), &fsinfo) != 0) return OsError(errno, "fstatfs", path);
  if (fsinfo.f_type == PROC_SUPER_MAGIC || fsinfo.f_type == SYSFS_MAGIC) {
    return Status::Error("EINVAL",
                         "read " + path + ": a file of /proc or /sys, not a document (EINVAL)");
  }
  return fd.release();
}

class PosixFs : public FileSystem {
 public:
  Result<std::string> ReadFileBeneath(const std::string& base, const std::string& rel) override {
    const std::string path = JoinPath(base, rel);
    if (LeavesLexically(rel)) return Escapes(path, base, "leaves");
    Result<int> opened = OpenBeneath(base, rel);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    return ReadRegular(fd.get(), path);
  }

  Result<std::string> ReadFile(const std::string& path) override {
    off_t size = 0;
    Result<int> opened = OpenForRead(path, &size);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    return ReadAll(fd.get(), path, size);
  }

  Result<std::string> ReadNamedFile(const std::string& path) override {
    Result<int> opened = OpenNamed(path);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    return ReadRegular(fd.get(), path);
  }

  Result<FileBytes> MapNamedFile(const std::string& path) override {
    Result<int> opened = OpenNamed(path);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    return MapRegular(fd.get(), path);
  }

  Result<std::string> ReadOwnFile(const std::string& path) override {
    off_t size = 0;
    Result<int> opened = OpenForRead(path, &size, /*own=*/true);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    return ReadAll(fd.get(), path, size);
  }

  Result<FileBytes> ReadFileBytes(const std::string& path) override {
    off_t hint = 0;
    Result<int> opened = OpenForRead(path, &hint);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    // ReadAll's loop over a buffer that is never zero-filled: one byte more than the size, so
    // the read that sees EOF needs no regrowth; a file that grew since the fstat regrows it.
    const size_t exact = static_cast<size_t>(hint > 0 ? hint : 0);
    size_t capacity = exact + 1;
    auto buffer = std::make_unique_for_overwrite<char[]>(capacity);
    size_t used = 0;
    for (;;) {
      if (used == capacity) {
        auto bigger = std::make_unique_for_overwrite<char[]>(capacity * 2);
        std::memcpy(bigger.get(), buffer.get(), used);
        buffer = std::move(bigger);
        capacity *= 2;
      }
      ssize_t n = ::read(fd.get(), buffer.get() + used, capacity - used);
      if (n < 0) {
        if (errno == EINTR) continue;
        return OsError(errno, "read", path);
      }
      if (n == 0) break;
      used += static_cast<size_t>(n);
      if (used > static_cast<size_t>(kMaxReadBytes)) return TooBig(path, used);
      if (exact > 0 && used == exact && capacity == exact + 1) break;  // ReadAll's end
    }
    return FileBytes::Heap(std::move(buffer), used);
  }

  Result<FileBytes> MapFile(const std::string& path) override {
    off_t unused = 0;
    Result<int> opened = OpenForRead(path, &unused);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    return MapRegular(fd.get(), path);
  }

  Status WriteFileAtomic(const std::string& path, std::string_view data, Replace replace,
                         std::string_view read_before) override {
    static std::atomic<unsigned> seq{0};
    std::string dir = ParentPath(path);
    std::string name = path.substr(path.find_last_of('/') + 1);
    const Place place = Locate(path);
    // A temp of this name can be left by a writer that was SIGKILLed and whose pid the kernel
    // has since given to us (pid_max is often 32768): EEXIST only means "take the next seq",
    // never a failed write (issue 7 item 13). The number of tries bounds a directory flooded
    // with such names.
    std::string tmp;
    std::string tmp_at;  // the temp's name relative to place.at()
    UniqueFd fd;
    for (int tries = 0; fd.get() < 0; ++tries) {
      const std::string leaf =
          "." + name + "." + std::to_string(::getpid()) + "." + std::to_string(seq++) + ".tmp";
      tmp = JoinPath(dir, leaf);
      if (place.err == ELOOP) return PlaceError(place, "write", path, /*write=*/true, path);
      if (place.err != 0) return OsError(place.err, "open", tmp);
      tmp_at = place.Sibling(path, leaf);
      fd.reset(::openat(place.at(), tmp_at.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
      if (fd.get() < 0 && (errno != EEXIST || tries >= kTempNameTries)) {
        return OsError(errno, "open", tmp);
      }
    }
    auto fail = [&](Status s) {
      fd.reset();
      ::unlinkat(place.at(), tmp_at.c_str(), 0);
      return s;
    };
    if (Status s = WriteAll(fd.get(), data, tmp); !s.ok()) return fail(s);
    if (::fsync(fd.get()) != 0) return fail(OsError(errno, "fsync", tmp));
    if (::close(fd.release()) != 0) return fail(OsError(errno, "close", tmp));
    // kIfUnchanged: the file at `path`, leased (TakeReadLease) from before the compare until
    // after the rename, so a writer that has it open, or opens it meanwhile, counts as a change.
    UniqueFd now;
    Lease lease = Lease::kNone;
    auto stale = [&] {
      if (lease == Lease::kHeld) ReleaseLease(now.get());
      now.reset();
      return fail(Status::Error(
          "ESTALE", "rename " + path + ": the file changed since it was read (ESTALE)"));
    };
    if (replace == Replace::kIfUnchanged) {
      now.reset(
          ::openat(place.at(), place.name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
      if (now.get() >= 0) lease = TakeReadLease(now.get());
      if (lease == Lease::kWriterOpen) return stale();
      Result<std::string> held = now.get() >= 0 ? ReadRegular(now.get(), path)
                                                : Result<std::string>(OsError(errno, "open", path));
      if (!held.ok() || *held != read_before) return stale();
      if (lease == Lease::kHeld && !StillLeased(now.get())) return stale();
    }
    // rename(2) replaces a symlink at the final name; it never writes through one.
    if (replace == Replace::kNever) {
      // RENAME_NOREPLACE where the file system has it, else link(2), which never replaces
      // either; the temp's name goes in both cases.
      int rc =
          ::renameat2(place.at(), tmp_at.c_str(), place.at(), place.name.c_str(), RENAME_NOREPLACE);
      if (rc != 0 && errno == EINVAL) {
        rc = ::linkat(place.at(), tmp_at.c_str(), place.at(), place.name.c_str(), 0);
        if (rc == 0) ::unlinkat(place.at(), tmp_at.c_str(), 0);
      }
      if (rc != 0) return fail(OsError(errno, "rename", path));
    } else if (::renameat(place.at(), tmp_at.c_str(), place.at(), place.name.c_str()) != 0) {
      const int err = errno;
      if (lease == Lease::kHeld) ReleaseLease(now.get());
      return fail(OsError(err, "rename", path));
    }
    if (lease == Lease::kHeld) ReleaseLease(now.get());
    now.reset();
    return place.SyncParent(path);
  }

  Status AppendDurable(const std::string& path, std::string_view data) override {
    const Place place = Locate(path);
    if (place.err != 0) {
      if (place.err == ELOOP) return PlaceError(place, "append", path, /*write=*/true, path);
      return AppendError(place.err, "open", path);
    }
    UniqueFd fd;
    struct stat st {};
    // A ReplaceLocked may rename a new file over `path` while we wait for the lock of the old
    // one: once locked, the fd must still be the file at `path`, else the line would go to an
    // unlinked file. Each reopen follows a completed replace, so the count bounds only a
    // pathological stream of them.
    for (int reopens = 0; fd.get() < 0; ++reopens) {
      bool created = false;
      for (int tries = 0; fd.get() < 0; ++tries) {
        int raw = OpenRetrying(place, O_RDWR | O_APPEND | O_CLOEXEC);  // RDWR: pread last byte
        if (raw < 0 && errno == ENOENT && tries < 3) {
          raw = OpenRetrying(place, O_RDWR | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL);
          if (raw < 0 && errno == EEXIST) continue;  // another appender created it first
          created = raw >= 0;
        }
        if (raw < 0 && errno == ELOOP && place.below) {  // the journal or ledger is a link
          return LinkRefusal("append", path, *place.below, /*write=*/true);
        }
        if (raw < 0) return AppendError(errno, "open", path);
        fd.reset(raw);
      }
      // Created entries must survive a crash; a failure here leaves an empty file, which every
      // reader treats as absent, so it is reported without rollback.
      if (created) {
        if (Status s = place.SyncParent(path); !s.ok()) return s;
      }
      int rc;
      do {
        rc = ::flock(fd.get(), LOCK_EX);
      } while (rc != 0 && errno == EINTR);
      if (rc != 0) return AppendError(errno, "lock", path);
      if (::fstat(fd.get(), &st) != 0) return AppendError(errno, "fstat", path);
      struct stat now {};
      if (::fstatat(place.at(), place.name.c_str(), &now, place.stat_flags()) == 0 &&
          now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
        break;
      }
      if (reopens >= kAppendReopens) return AppendError(ESTALE, "lock", path);
      fd.reset();  // replaced (or removed) while we waited: append to what is there now
    }
    const bool regular = S_ISREG(st.st_mode);
    // Below a devflow root only a regular file keeps a record: a FIFO planted (or swapped in)
    // at journal.jsonl or a ledger hands the line to whoever reads it, or to nobody, while the
    // append would report success (trial19 5d, 5e). Outside the roots the operator named the
    // file (`--ledger /dev/stderr`) and any type is theirs to choose.
    if (place.below && !regular) {
      return Status::Error(
          "EINVAL", "append " + path + ": not a regular file (EINVAL); nothing was written; " +
                        "a FIFO, socket or device there keeps no record: remove it (rm " + path +
                        "), and the next append creates the file");
    }
    const off_t before = regular ? st.st_size : 0;
    std::string prefixed;
    std::string_view out = data;
    if (before > 0) {
      char last = '\n';
      ssize_t n;
      do {
        n = ::pread(fd.get(), &last, 1, before - 1);
      } while (n < 0 && errno == EINTR);
      if (n < 0) return AppendError(errno, "read", path);
      if (n == 1 && last != '\n') {  // never glue our line to another writer's fragment
        prefixed.reserve(data.size() + 1);
        prefixed.push_back('\n');
        prefixed.append(data);
        out = prefixed;
      }
    }
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = ::write(fd.get(), out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Rollback(fd.get(), errno, "write", path, before, regular);
      if (n == 0) return Rollback(fd.get(), ENOSPC, "write", path, before, regular);
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0 && (regular || errno != EINVAL))
      return Rollback(fd.get(), errno, "fsync", path, before, regular);
    if (::close(fd.release()) != 0) {
      Status s = OsError(errno, "close", path);
      return Status::Error(s.code(), s.message() + " after the appended line was synced");
    }
    return Status::Ok();
  }

  Status ReplaceLocked(
      const std::string& path,
      const std::function<std::optional<std::string>(const std::string&)>& rewrite) override {
    const Place place = Locate(path);
    if (place.err != 0) return PlaceError(place, "replace", path, /*write=*/true, path);
    UniqueFd fd;
    off_t size = 0;  // of the file locked
    for (int reopens = 0; fd.get() < 0; ++reopens) {
      // O_RDWR as the appenders open it (an flock does not care, a reader of the bytes does).
      fd.reset(OpenRetrying(place, O_RDWR | O_CLOEXEC | O_NONBLOCK));
      if (fd.get() < 0 && errno == ELOOP && place.below) {
        return LinkRefusal("replace", path, *place.below, /*write=*/true);
      }
      if (fd.get() < 0) return OsError(errno, "open", path);
      int rc;
      do {
        rc = ::flock(fd.get(), LOCK_EX);
      } while (rc != 0 && errno == EINTR);
      if (rc != 0) return OsError(errno, "lock", path);
      struct stat held {
      }, now{};
      if (::fstat(fd.get(), &held) != 0) return OsError(errno, "fstat", path);
      if (!S_ISREG(held.st_mode)) {
        return Status::Error("EINVAL", "replace " + path + ": not a regular file (EINVAL)");
      }
      if (::fstatat(place.at(), place.name.c_str(), &now, place.stat_flags()) == 0 &&
          now.st_dev == held.st_dev && now.st_ino == held.st_ino) {
        size = held.st_size;
        break;
      }
      if (reopens >= kAppendReopens) return OsError(ESTALE, "lock", path);
      fd.reset();  // another replace won the race: lock what is there now
    }
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    if (size > kMaxReadBytes) return TooBig(path, static_cast<uint64_t>(size));
    Result<std::string> current = ReadAll(fd.get(), path, size);
    if (!current.ok()) return current.status();
    std::optional<std::string> next = rewrite(*current);
    if (!next) return Status::Ok();
    // The lock is released when `fd` closes, after this.
    return WriteFileAtomic(path, *next, Replace::kExisting, {});
  }

  Status CreateExclusive(const std::string& path, std::string_view data) override {
    const Place place = Locate(path);
    if (place.err == ELOOP) return PlaceError(place, "create", path, /*write=*/true, path);
    if (place.err != 0) return OsError(place.err, "open", path);
    // O_EXCL: a final symlink is EEXIST, never followed.
    UniqueFd fd(
        ::openat(place.at(), place.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.get() < 0) return OsError(errno, "open", path);
    if (Status s = WriteAll(fd.get(), data, path); !s.ok()) {
      fd.reset();
      ::unlinkat(place.at(), place.name.c_str(), 0);
      return s;
    }
    if (::close(fd.release()) != 0) return OsError(errno, "close", path);
    return Status::Ok();
  }

  Status CreateDirs(const std::string& path) override {
    std::string abs = AbsolutePath(path);
    std::optional<BelowRoot> below = FindRoot(abs);
    if (below) {
      // The root by name (the deployment's, its own components may be links), then every
      // directory below it from the root's fd: mkdirat, and openat without following it.
      if (Status s = CreateDirs(JoinPath(below->root, "")); !s.ok()) return s;
      below = FindRoot(abs);  // resolved now, if the root was only just made
      UniqueFd dir(OpenRoot(*below));
      if (dir.get() < 0) {
        if (errno == ELOOP) return LinkRefusal("mkdir", path, *below, /*write=*/true);
        return OsError(errno, "open", below->root);
      }
      std::string cur = below->root;
      for (size_t at = 0; at != std::string::npos;) {
        const size_t slash = below->rel.find('/', at);
        const std::string name =
            below->rel.substr(at, slash == std::string::npos ? slash : slash - at);
        at = slash == std::string::npos ? slash : slash + 1;
        cur = JoinPath(cur, name);
        if (::mkdirat(dir.get(), name.c_str(), 0755) == 0) {
          if (::fsync(dir.get()) != 0 && errno != EINVAL) {  // the new entry is durable
            return OsError(errno, "fsync", ParentPath(cur));
          }
        } else if (errno != EEXIST) {
          return OsError(errno, "mkdir", cur);
        }
        UniqueFd next(OpenNoSymlinks(dir.get(), name, O_RDONLY | O_DIRECTORY));
        if (next.get() < 0) {
          const int err = errno;
          if (err == ELOOP) return LinkRefusal("mkdir", path, *below, /*write=*/true);
          // As mkdir -p by name says it: the mkdir below a file fails, naming the path below.
          const std::string below_file =
              at == std::string::npos
                  ? cur
                  : JoinPath(cur, below->rel.substr(at, below->rel.find('/', at) - at));
          return OsError(err, "mkdir", err == ENOTDIR ? below_file : cur);
        }
        dir.reset(next.release());
      }
      return Status::Ok();
    }
    std::string cur;
    size_t pos = 1;
    while (pos <= abs.size()) {
      size_t next = abs.find('/', pos);
      if (next == std::string::npos) next = abs.size();
      cur = abs.substr(0, next);
      if (!cur.empty()) {
        if (::mkdir(cur.c_str(), 0755) == 0) {
          if (Status s = SyncDir(ParentPath(cur)); !s.ok()) return s;  // the new entry is durable
        } else if (errno != EEXIST) {
          return OsError(errno, "mkdir", cur);
        }
      }
      pos = next + 1;
    }
    struct stat st {};
    if (::stat(abs.c_str(), &st) != 0) return OsError(errno, "stat", abs);
    if (!S_ISDIR(st.st_mode)) return OsError(ENOTDIR, "mkdir", abs);
    return Status::Ok();
  }

  Status CreateDirExclusive(const std::string& path) override {
    const Place place = Locate(path);
    if (place.err != 0) return PlaceError(place, "mkdir", path, /*write=*/true, path);
    // mkdirat(2) never follows a final symlink (EEXIST).
    if (::mkdirat(place.at(), place.name.c_str(), 0755) != 0) return OsError(errno, "mkdir", path);
    Status synced = place.SyncParent(path);
    if (!synced.ok()) {
      ::unlinkat(place.at(), place.name.c_str(), AT_REMOVEDIR);  // not reserved after all
    }
    return synced;
  }

  Status RemoveFile(const std::string& path) override {
    const Place place = Locate(path);
    if (place.err != 0) return PlaceError(place, "unlink", path, /*write=*/true, path);
    if (::unlinkat(place.at(), place.name.c_str(), 0) != 0) return OsError(errno, "unlink", path);
    return Status::Ok();
  }

  Status RemoveDir(const std::string& path) override {
    const Place place = Locate(path);
    if (place.err != 0) return PlaceError(place, "rmdir", path, /*write=*/true, path);
    if (::unlinkat(place.at(), place.name.c_str(), AT_REMOVEDIR) != 0) {
      return OsError(errno, "rmdir", path);
    }
    return place.SyncParent(path);
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    std::optional<BelowRoot> below;
    UniqueFd fd(OpenNoLinkBelowRoot(path, O_RDONLY | O_DIRECTORY, &below));
    if (fd.get() < 0 && below && errno == ELOOP) {
      return LinkRefusal("opendir", path, *below, /*write=*/false);
    }
    if (fd.get() < 0) return OsError(errno, "opendir", path);
    DIR* d = ::fdopendir(fd.get());
    if (!d) return OsError(errno, "opendir", path);
    fd.release();  // closedir closes it
    std::vector<std::string> names;
    errno = 0;
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return OsError(err, "readdir", path);
    std::sort(names.begin(), names.end());
    return names;
  }

  Result<FileKind> Kind(const std::string& path) override {
    const Place place = Locate(path);
    if (place.err == ENOENT || place.err == ENOTDIR) return FileKind::kNone;
    if (place.err != 0) return PlaceError(place, "lstat", path, /*write=*/false, path);
    struct stat st {};
    if (::fstatat(place.at(), place.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return FileKind::kNone;
      return OsError(errno, "lstat", path);
    }
    if (S_ISREG(st.st_mode)) return FileKind::kFile;
    if (S_ISDIR(st.st_mode)) return FileKind::kDir;
    if (S_ISLNK(st.st_mode)) return FileKind::kSymlink;
    return FileKind::kOther;
  }
};

class RealClock : public Clock {
 public:
  std::string NowIso() override {
    auto now = std::chrono::system_clock::now();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms % 1000));
    return buf;
  }
};

}  // namespace

FileBytes FileBytes::Mapped(const void* addr, size_t size) {
  FileBytes bytes;
  bytes.map_ = addr;
  bytes.size_ = size;
  return bytes;
}

FileBytes FileBytes::Heap(std::unique_ptr<char[]> buffer, size_t size) {
  FileBytes bytes;
  bytes.heap_ = std::move(buffer);
  bytes.size_ = size;
  return bytes;
}

FileBytes::FileBytes(FileBytes&& other) noexcept
    : map_(std::exchange(other.map_, nullptr)),
      heap_(std::move(other.heap_)),
      size_(std::exchange(other.size_, 0)),
      owned_(std::move(other.owned_)) {}

FileBytes& FileBytes::operator=(FileBytes&& other) noexcept {
  if (this != &other) {
    if (map_) ::munmap(const_cast<void*>(map_), size_);
    map_ = std::exchange(other.map_, nullptr);
    heap_ = std::move(other.heap_);
    size_ = std::exchange(other.size_, 0);
    owned_ = std::move(other.owned_);
  }
  return *this;
}

FileBytes::~FileBytes() {
  if (map_) ::munmap(const_cast<void*>(map_), size_);
}

Status FileSystem::ReplaceLocked(
    const std::string& path, const std::function<std::optional<std::string>(const std::string&)>&) {
  return Status::Error("ENOSYS", "replace " + path +
                                     ": this file system cannot replace a file under its append "
                                     "lock (ENOSYS)");
}

Result<FileBytes> FileSystem::MapFile(const std::string& path) {
  Result<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return FileBytes(std::move(*bytes));
}

Result<FileBytes> FileSystem::MapNamedFile(const std::string& path) {
  Result<std::string> bytes = ReadNamedFile(path);
  if (!bytes.ok()) return bytes.status();
  return FileBytes(std::move(*bytes));
}

Result<FileBytes> FileSystem::ReadFileBytes(const std::string& path) {
  Result<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return FileBytes(std::move(*bytes));
}

Status FileSystem::RemoveDir(const std::string& path) {
  return Status::Error("ENOSYS", "rmdir " + path + ": not supported by this file system (ENOSYS)");
}

Result<std::string> FileSystem::ReadNamedFile(const std::string& path) {
  return Status::Error("ENOSYS", "read " + path + ": not supported by this file system (ENOSYS)");
}

Result<std::string> FileSystem::ReadOwnFile(const std::string& path) {
  return Status::Error("ENOSYS", "read " + path + ": not supported by this file system (ENOSYS)");
}

Result<std::string> FileSystem::ReadFileBeneath(const std::string& base, const std::string& rel) {
  return Status::Error("ENOSYS", "open " + JoinPath(base, rel) +
                                     ": this file system cannot confine a read to " + base +
                                     " (ENOSYS)");
}

Result<std::optional<std::string>> SymlinkOnPath(FileSystem& fs, const std::string& base,
                                                 const std::string& dir) {
  const std::string top = AbsolutePath(base);
  const std::string target = AbsolutePath(dir);
  std::vector<std::string> walk;  // components to lstat, outermost first
  if (IsBeneath(target, top)) {
    for (size_t at = target.find('/', top == "/" ? 1 : top.size() + 1);;
         at = target.find('/', at + 1)) {
      walk.push_back(target.substr(0, at));
      if (at == std::string::npos) break;
    }
  } else {
    walk.push_back(target);
  }
  for (const std::string& component : walk) {
    Result<FileKind> kind = fs.Kind(component);
    if (!kind.ok()) return kind.status();
    if (*kind == FileKind::kSymlink) return std::optional<std::string>(component);
    if (*kind == FileKind::kNone) break;
  }
  return std::optional<std::string>();
}

namespace {
std::atomic<FileSystem*> replaced_fs{nullptr};
}  // namespace

FileSystem& PosixFileSystem() {
  static PosixFs fs;
  return fs;
}

FileSystem& RealFileSystem() {
  FileSystem* fs = replaced_fs.load(std::memory_order_acquire);
  return fs ? *fs : PosixFileSystem();
}

void ReplaceFileSystemForTesting(FileSystem* fs) {
  replaced_fs.store(fs, std::memory_order_release);
}

Clock& SystemClock() {
  static RealClock clock;
  return clock;
}

std::string WriteFix(std::string_view code, const std::string& path) {
  if (code == "ENOSPC" || code == "EDQUOT") {
    return "free space on the file system holding " + ParentPath(path) + " and retry";
  }
  if (code == "EACCES" || code == "EPERM") {
    return "make " + path + " and its directory writable by this user and retry";
  }
  if (code == "EROFS") {
    return "remount " + ParentPath(path) + " read-write (or point the root elsewhere) and retry";
  }
  if (code == "ENOENT" || code == "ENOTDIR") {
    return "create the directory " + ParentPath(path) + " and retry";
  }
  return "check the disk holding " + path + " and retry";
}

std::string ErrnoName(int err) {
  const char* name = ::strerrorname_np(err);
  return name ? name : "E" + std::to_string(err);
}

Status OsError(int err, std::string_view op, std::string_view path) {
  std::string msg;
  msg.append(op).append(" ").append(path).append(": ").append(::strerror(err));
  msg.append(" (").append(ErrnoName(err)).append(")");
  return Status::Error(ErrnoName(err), std::move(msg));
}

void UseBatchHeap(size_t reserve) {
  constexpr uintptr_t kHuge = 2u << 20;  // x86-64's transparent huge page
  const int cap = static_cast<int>(std::min<size_t>(reserve, INT_MAX / 2));
  ::mallopt(M_MMAP_THRESHOLD, cap);  // large blocks from the heap, and reused once freed
  ::mallopt(M_TRIM_THRESHOLD, 2 * cap);
  ::mallopt(M_TOP_PAD, cap);
  // Grows the heap by the pad; freed, the block is the heap's top again (volatile: the pair is
  // not elided). The top then starts where the block did.
  void* volatile probe = ::malloc(static_cast<size_t>(cap) / 2);
  const auto start = reinterpret_cast<uintptr_t>(probe);
  ::free(probe);
  const auto end = reinterpret_cast<uintptr_t>(::sbrk(0));
  const uintptr_t from = (start + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t to = end & ~(kHuge - 1);
  if (start == 0 || end == static_cast<uintptr_t>(-1) || to <= from + kHuge) return;
  if (::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) != 0) return;
  // The top's head below the first huge page is taken as one block that is never touched and
  // never freed, so the blocks that follow start on the huge pages (glibc: a block's 16-byte
  // header precedes it; a request of n bytes takes (n + 8) rounded up to 16). A guess wrong
  // here costs only faults.
  [[maybe_unused]] void* volatile head = ::malloc(from - start + 8);
}

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  size_t i = 0;
  while (i < b.size() && b[i] == '/') ++i;
  if (out != "/") out.push_back('/');
  out.append(b.substr(i));
  return out;
}

std::string ParentPath(std::string_view path) {
  std::string p(path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

namespace {
// True when Normalize(abs) is `abs` itself: "/" or "/" followed by segments joined by single
// slashes, none empty, "." or "..", no trailing slash. The gate's own paths (the root, the
// card and cache files it joins below it) are of this form, each normalised ~8 times a
// decision (issue 8: ~30K instructions of a cache hit, a vector of segment strings each time).
bool IsNormal(std::string_view abs) {
  if (abs.empty() || abs[0] != '/') return false;
  if (abs.size() == 1) return true;
  size_t start = 1;  // the current segment's first byte
  for (size_t i = 1; i <= abs.size(); ++i) {
    if (i < abs.size() && abs[i] != '/') continue;
    const std::string_view seg = abs.substr(start, i - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    start = i + 1;
  }
  return true;
}

std::string Normalize(std::string_view abs) {
  if (IsNormal(abs)) return std::string(abs);
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= abs.size()) {
    size_t j = abs.find('/', i);
    if (j == std::string_view::npos) j = abs.size();
    std::string seg(abs.substr(i, j - i));
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!seg.empty() && seg != ".") {
      parts.push_back(std::move(seg));
    }
    i = j + 1;
  }
  std::string out;
  for (auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}
}  // namespace

std::string ResolveAgainst(std::string_view base, std::string_view path) {
  if (!path.empty() && path[0] == '/') return Normalize(path);
  return Normalize(JoinPath(base, path));
}

std::string AbsolutePath(std::string_view path) {
  if (!path.empty() && path[0] == '/') return Normalize(path);
  char buf[4096];
  std::string cwd = ::getcwd(buf, sizeof buf) ? buf : "/";
  return ResolveAgainst(cwd, path);
}

void RegisterNoSymlinkRoot(const std::string& root) {
  auto entry = std::make_shared<NoSymlinkRoot>();
  entry->named = AbsolutePath(root);
  if (entry->named == "/") return;  // nothing is "below the root" of the whole file system
  {
    std::lock_guard<std::mutex> lock(g_roots_mu);
    if (g_roots.count(entry->named) != 0) return;  // registered: no second realpath
  }
  char buf[PATH_MAX];
  if (::realpath(entry->named.c_str(), buf) != nullptr) {
    entry->resolved = buf;
    entry->real = true;
  } else {
    entry->resolved = entry->named;  // resolved when first used after it exists
  }
  std::lock_guard<std::mutex> lock(g_roots_mu);
  if (g_roots.count(entry->named) != 0) return;
  g_roots.emplace(entry->named, entry);
  if (entry->real) g_roots.emplace(entry->resolved, entry);
}

}  // namespace devflow

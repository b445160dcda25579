#include "host/os.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <optional>

namespace devflow {
namespace {

// How often AppendDurable / ReplaceLocked reopen a file that a replace renamed over the one
// they locked, before they give up (ESTALE).
constexpr int kAppendReopens = 64;

// WriteFileAtomic's temp names tried past EEXIST before it gives up (see there).
constexpr int kTempNameTries = 1000;

// Closes an fd on scope exit (RAII for every fd, STYLE.md).
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
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

// Reads to EOF straight into the string, sized from `size_hint` (the file's st_size): one
// copy, the kernel's, for a file that does not grow while it is read (a 16 MiB artifact was
// copied three times through a bounce buffer and the string's regrowth, issue 11 item 2).
// Reads `fd` to EOF. `size_hint` is a regular file's st_size (0 when unknown: a /proc file
// reads as size 0): the buffer holds one byte more, so the read that sees EOF needs no
// regrowth, and a read that returns exactly the hinted size with that byte to spare is the
// end (a regular file reads short only at its end; one that grew since the fstat fills the
// spare byte and is read on), so the usual second read that returns 0 is not made.
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
    if (hint > 0 && used == hint && out.size() == hint + 1) break;
  }
  out.resize(used);
  return out;
}

int OpenRetrying(const std::string& path, int flags) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags, 0644);
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
  UniqueFd dir(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return OsError(errno, "open", base);
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
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (own ? O_NOFOLLOW : 0)));
  if (fd.get() < 0) {
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
  *size = st.st_size;
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
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return OsError(errno, "fstat", path);
    if (S_ISDIR(st.st_mode)) return OsError(EISDIR, "read", path);
    if (!S_ISREG(st.st_mode)) {
      return Status::Error("EINVAL", "read " + path + ": not a regular file (EINVAL)");
    }
    return ReadAll(fd.get(), path, st.st_size);
  }

  Result<std::string> ReadFile(const std::string& path) override {
    off_t size = 0;
    Result<int> opened = OpenForRead(path, &size);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    return ReadAll(fd.get(), path, size);
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
      if (exact > 0 && used == exact && capacity == exact + 1) break;  // ReadAll's end
    }
    return FileBytes::Heap(std::move(buffer), used);
  }

  Result<FileBytes> MapFile(const std::string& path) override {
    off_t unused = 0;
    Result<int> opened = OpenForRead(path, &unused);
    if (!opened.ok()) return opened.status();
    UniqueFd fd(*opened);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return OsError(errno, "fstat", path);
    if (st.st_size > 0) {
      const auto size = static_cast<size_t>(st.st_size);
      void* at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
      if (at != MAP_FAILED) return FileBytes::Mapped(at, size);
    }
    Result<std::string> bytes = ReadAll(fd.get(), path);  // empty (or unmappable): read it
    if (!bytes.ok()) return bytes.status();
    return FileBytes(std::move(*bytes));
  }

  Status WriteFileAtomic(const std::string& path, std::string_view data) override {
    static std::atomic<unsigned> seq{0};
    std::string dir = ParentPath(path);
    std::string name = path.substr(path.find_last_of('/') + 1);
    // A temp of this name can be left by a writer that was SIGKILLed and whose pid the kernel
    // has since given to us (pid_max is often 32768): EEXIST only means "take the next seq",
    // never a failed write (issue 7 item 13). The number of tries bounds a directory flooded
    // with such names.
    std::string tmp;
    UniqueFd fd;
    for (int tries = 0; fd.get() < 0; ++tries) {
      tmp = JoinPath(dir, "." + name + "." + std::to_string(::getpid()) + "." +
                              std::to_string(seq++) + ".tmp");
      fd.reset(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
      if (fd.get() < 0 && (errno != EEXIST || tries >= kTempNameTries)) {
        return OsError(errno, "open", tmp);
      }
    }
    auto fail = [&](Status s) {
      fd.reset();
      ::unlink(tmp.c_str());
      return s;
    };
    if (Status s = WriteAll(fd.get(), data, tmp); !s.ok()) return fail(s);
    if (::fsync(fd.get()) != 0) return fail(OsError(errno, "fsync", tmp));
    if (::close(fd.release()) != 0) return fail(OsError(errno, "close", tmp));
    if (::rename(tmp.c_str(), path.c_str()) != 0) return fail(OsError(errno, "rename", path));
    return SyncDir(dir);
  }

  Status AppendDurable(const std::string& path, std::string_view data) override {
    UniqueFd fd;
    struct stat st {};
    // A ReplaceLocked may rename a new file over `path` while we wait for the lock of the old
    // one: once locked, the fd must still be the file at `path`, else the line would go to an
    // unlinked file. Each reopen follows a completed replace, so the count bounds only a
    // pathological stream of them.
    for (int reopens = 0; fd.get() < 0; ++reopens) {
      bool created = false;
      for (int tries = 0; fd.get() < 0; ++tries) {
        int raw = OpenRetrying(path, O_RDWR | O_APPEND | O_CLOEXEC);  // RDWR: pread last byte
        if (raw < 0 && errno == ENOENT && tries < 3) {
          raw = OpenRetrying(path, O_RDWR | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL);
          if (raw < 0 && errno == EEXIST) continue;  // another appender created it first
          created = raw >= 0;
        }
        if (raw < 0) return AppendError(errno, "open", path);
        fd.reset(raw);
      }
      // Created entries must survive a crash; a failure here leaves an empty file, which every
      // reader treats as absent, so it is reported without rollback.
      if (created) {
        if (Status s = SyncDir(ParentPath(path)); !s.ok()) return s;
      }
      int rc;
      do {
        rc = ::flock(fd.get(), LOCK_EX);
      } while (rc != 0 && errno == EINTR);
      if (rc != 0) return AppendError(errno, "lock", path);
      if (::fstat(fd.get(), &st) != 0) return AppendError(errno, "fstat", path);
      struct stat now {};
      if (::stat(path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
        break;
      }
      if (reopens >= kAppendReopens) return AppendError(ESTALE, "lock", path);
      fd.reset();  // replaced (or removed) while we waited: append to what is there now
    }
    const bool regular = S_ISREG(st.st_mode);
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
    UniqueFd fd;
    for (int reopens = 0; fd.get() < 0; ++reopens) {
      // O_RDWR as the appenders open it (an flock does not care, a reader of the bytes does).
      fd.reset(OpenRetrying(path, O_RDWR | O_CLOEXEC | O_NONBLOCK));
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
      if (::stat(path.c_str(), &now) == 0 && now.st_dev == held.st_dev &&
          now.st_ino == held.st_ino) {
        break;
      }
      if (reopens >= kAppendReopens) return OsError(ESTALE, "lock", path);
      fd.reset();  // another replace won the race: lock what is there now
    }
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    Result<std::string> current = ReadAll(fd.get(), path);
    if (!current.ok()) return current.status();
    std::optional<std::string> next = rewrite(*current);
    if (!next) return Status::Ok();
    return WriteFileAtomic(path, *next);  // the lock is released when `fd` closes, after this
  }

  Status CreateExclusive(const std::string& path, std::string_view data) override {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.get() < 0) return OsError(errno, "open", path);
    if (Status s = WriteAll(fd.get(), data, path); !s.ok()) {
      fd.reset();
      ::unlink(path.c_str());
      return s;
    }
    if (::close(fd.release()) != 0) return OsError(errno, "close", path);
    return Status::Ok();
  }

  Status CreateDirs(const std::string& path) override {
    std::string abs = AbsolutePath(path);
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
    if (::mkdir(path.c_str(), 0755) != 0) return OsError(errno, "mkdir", path);
    Status synced = SyncDir(ParentPath(path));
    if (!synced.ok()) ::rmdir(path.c_str());  // not reserved after all: leave nothing behind
    return synced;
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return OsError(errno, "unlink", path);
    return Status::Ok();
  }

  Status RemoveDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return OsError(errno, "rmdir", path);
    return SyncDir(ParentPath(path));
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    DIR* d = ::opendir(path.c_str());
    if (!d) return OsError(errno, "opendir", path);
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
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
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

Result<FileBytes> FileSystem::ReadFileBytes(const std::string& path) {
  Result<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return FileBytes(std::move(*bytes));
}

Status FileSystem::RemoveDir(const std::string& path) {
  return Status::Error("ENOSYS", "rmdir " + path + ": not supported by this file system (ENOSYS)");
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
std::string Normalize(std::string_view abs) {
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

}  // namespace devflow

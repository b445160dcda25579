// The one seam between the product and the file system (ninja's DiskInterface, LevelDB's Env,
// fmt's posix-mock). Every file the store, the reports and the cache touch goes through a
// FileSystem, so tests can inject EACCES / ENOSPC / EIO at any operation with FaultyFileSystem
// (tests/support) even when they run as root, where chmod does not deny anything.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/status.h"

namespace devflow {

/// What a path names, without following a final symlink (lstat).
enum class FileKind { kNone, kFile, kDir, kSymlink, kOther };

/// The bytes of one whole file, read once: a read-only private mapping of a regular file
/// (FileSystem::MapFile on the POSIX file system; the kernel's page cache, no copy), bytes read
/// into a heap buffer that was not zero-filled first (FileSystem::ReadFileBytes), or bytes
/// held in a string. Move-only; the mapping is unmapped on destruction. While it is mapped, a file
/// that another process truncates under it raises SIGBUS on access (the run ends by the signal:
/// nothing is released), and a concurrent write may or may not show (docs/decisions.md).
class FileBytes {
 public:
  FileBytes() = default;
  explicit FileBytes(std::string owned) : owned_(std::move(owned)) {}
  /// Takes ownership of a mapping of `size` bytes at `addr` (munmap on destruction).
  static FileBytes Mapped(const void* addr, size_t size);
  /// Takes ownership of the first `size` bytes of a heap buffer (freed on destruction).
  static FileBytes Heap(std::unique_ptr<char[]> buffer, size_t size);
  FileBytes(FileBytes&& other) noexcept;
  FileBytes& operator=(FileBytes&& other) noexcept;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes();
  std::string_view view() const {
    if (map_) return std::string_view(static_cast<const char*>(map_), size_);
    if (heap_) return std::string_view(heap_.get(), size_);
    return owned_;
  }

 private:
  const void* map_ = nullptr;
  std::unique_ptr<char[]> heap_;
  size_t size_ = 0;  // of the mapping or the heap buffer's bytes
  std::string owned_;
};

/// The most bytes the POSIX FileSystem reads of one file whole (ReadFile, ReadOwnFile,
/// ReadFileBytes, MapFile, ReadFileBeneath, ReplaceLocked): 256 MiB, sixteen times the 16 MiB
/// inputs issue 11 measures, and half of what a V8 string (the TypeScript store's read) can hold.
/// A larger file is refused before a byte is read, and one that grows past it while read is
/// refused too, with code "EFBIG" and the message `read <path>: <n> bytes, over the 268435456
/// bytes the gate reads of one file (EFBIG); replace it with a smaller file`. The files below a
/// devflow root are the producer's to write (card.md, journal.jsonl, artifacts, records): a
/// 20 GiB sparse artifact read whole took 24 GB and the kernel's OOM killer ended the gate
/// (trial18), a 4 GiB card.md made `card show` peak at 16.7 GB (issue 7).
inline constexpr int64_t kMaxReadBytes = int64_t{256} << 20;

/// Whether FileSystem::WriteFileAtomic may replace a file already at the path: kExisting
/// always; kNever never (a record that must not overwrite another of the same name);
/// kIfUnchanged only while the file there still holds the bytes the caller read and rendered
/// from (card.md: a person's edit that lands between a commit's read of the projection and its
/// rename must not be overwritten, verify19).
enum class Replace { kExisting, kNever, kIfUnchanged };

/// File-system operations. All paths are absolute or relative to the process cwd; all fds are
/// opened O_CLOEXEC. Errors come back as Status with code = errno name ("ENOENT", "EACCES", …)
/// and message `<operation> <path>: <strerror> (<ERRNO>)`, e.g.
/// `open /r/tasks/0001-a/journal.jsonl: Permission denied (EACCES)`.
class FileSystem {
 public:
  virtual ~FileSystem() = default;

  /// Whole file as bytes. Missing file → code "ENOENT"; a file over kMaxReadBytes → "EFBIG".
  virtual Result<std::string> ReadFile(const std::string& path) = 0;

  /// The whole file without a copy, for inputs read once and large (grounding evidence): the
  /// POSIX file system maps a non-empty regular file (MAP_POPULATE: one fault-in, no copy into
  /// the heap), and falls back to ReadFile's bytes for an empty one (a /proc file reads as size
  /// 0). Errors are ReadFile's, for the same paths. The default implementation returns
  /// ReadFile's bytes, so a decorating FileSystem (FaultyFileSystem) keeps its faults.
  virtual Result<FileBytes> MapFile(const std::string& path);

  /// The whole file as ReadFile reads it (same opening, same errors, read to EOF), into a heap
  /// buffer sized by st_size and not zero-filled first: for files read whole and compared
  /// again (the journal, whose bytes a commit re-reads under the lock), where a mapping would
  /// show another writer's later changes. The default implementation returns ReadFile's bytes,
  /// so a decorating FileSystem (FaultyFileSystem) keeps its faults.
  virtual Result<FileBytes> ReadFileBytes(const std::string& path);

  /// The one durable atomic replace (cpp-notes §4.1): write `.<name>.<pid>.<seq>.tmp` in the
  /// same directory (O_EXCL), loop write, fsync, close (checked), rename over `path`, fsync the
  /// directory. On any failure the temp file is unlinked and `path` is untouched.
  /// `replace` kNever renames with RENAME_NOREPLACE: an existing `path` is left as it was and
  /// the result is code "EEXIST" (a record that must not overwrite another of the same name).
  /// `replace` kIfUnchanged renames only when, after the temp is written and synced, `path` is
  /// still a regular file holding exactly `read_before` (compared just before the rename);
  /// otherwise `path` is left as it is and the result is code "ESTALE": `rename <path>: the
  /// file changed since it was read (ESTALE)`, for the caller to read it again and retry.
  /// A writer counts as a change too: a read lease (F_SETLEASE F_RDLCK) is taken on the file
  /// before the compare and held until after the rename; it is refused while any process has
  /// the file open for writing (an editor that truncated it and writes the rest in place) and
  /// broken by a writer that opens it meanwhile: both give "ESTALE". Where the kernel grants
  /// no lease (not the file's owner and no CAP_LEASE, or a file system without leases) the
  /// compare alone decides. A writer that opens the file in the microseconds between the last
  /// lease check and the rename is not seen.
  virtual Status WriteFileAtomic(const std::string& path, std::string_view data,
                                 Replace replace = Replace::kExisting,
                                 std::string_view read_before = {}) = 0;

  /// The one durable append of whole lines (journal, decision ledger, grounding ledger).
  /// `data` is one or more `\n`-terminated lines. Opens `path` O_RDWR|O_APPEND (creating it
  /// 0644 with O_EXCL when absent, then fsyncing its directory), takes an exclusive flock(2) on
  /// it for the whole append (so no other appender writes between our write and a rollback),
  /// and when the file is non-empty and its last byte is not `\n` (a writer that crashed
  /// mid-line, or a hand edit) starts with a `\n`, so a line is never glued to another.
  /// Then writes until done (a short write is continued), fsyncs and closes.
  /// On ANY failure (ENOSPC after a short write, EIO at fsync, …) the file is truncated back to
  /// its length before the append and fsynced, so it is byte-for-byte as it was, and the error
  /// carries the real errno: code = its name ("ENOSPC"), message
  /// `append <path>: No space left on device (ENOSPC); the file is unchanged (<n> bytes);
  /// <fix>` where <fix> names what to do (free space on the file system holding <dir>, …).
  /// If even the rollback fails, the message says so and how to repair the file by hand.
  virtual Status AppendDurable(const std::string& path, std::string_view data) = 0;

  /// Rewrites an append-only file (the decision ledger: `ledger prune`) under the lock
  /// AppendDurable takes, so no append is lost or torn by it: opens `path`, takes the exclusive
  /// flock(2) on it, reads it whole through that fd, and calls `rewrite` with its bytes; when
  /// that returns text, the text replaces `path` through WriteFileAtomic (the one atomic
  /// replace) before the lock is released. AppendDurable re-checks, once it holds the lock,
  /// that its fd is still the file at `path`, and reopens when a replace renamed a new file
  /// there: an appender that opened the old file and waited on its lock appends to the new one.
  /// A missing file is "ENOENT" (rewrite is not called). Errors are ReadFile's and
  /// WriteFileAtomic's; on any error `path` is as it was. The default implementation refuses
  /// (code "ENOSYS"), so a FileSystem that does not implement it fails closed.
  virtual Status ReplaceLocked(
      const std::string& path,
      const std::function<std::optional<std::string>(const std::string& current)>& rewrite);

  /// Creates `data` at `path` only if nothing is there (O_CREAT|O_EXCL); "EEXIST" otherwise.
  /// Used for the per-card `commit.lock` (reference §3.4).
  virtual Status CreateExclusive(const std::string& path, std::string_view data) = 0;

  /// mkdir -p (mode 0755). Existing directories are fine. The parent of every directory it
  /// creates is fsynced, so a created directory survives a crash.
  virtual Status CreateDirs(const std::string& path) = 0;

  /// A single mkdir that fails with "EEXIST" when the path exists (card id reservation); the
  /// parent directory is fsynced after a successful mkdir (when that fails, the directory is
  /// removed again and the error returned).
  virtual Status CreateDirExclusive(const std::string& path) = 0;

  /// unlink; "ENOENT" when absent.
  virtual Status RemoveFile(const std::string& path) = 0;

  /// rmdir of an empty directory, then fsync of its parent, so the removal survives a crash
  /// (the undo of CreateDirExclusive when a card creation fails after reserving its
  /// directory). "ENOENT" when absent, "ENOTEMPTY" when something is in it. The default
  /// implementation refuses (code "ENOSYS").
  virtual Status RemoveDir(const std::string& path);

  /// Entry names (not paths) of a directory, sorted bytewise, without "." and "..".
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) = 0;

  /// lstat-based kind; kNone when the path does not exist. Other errors → Status.
  virtual Result<FileKind> Kind(const std::string& path) = 0;

  /// Reads the regular file `rel` (relative) beneath the directory `base` without ever leaving
  /// it: every component is resolved inside `base` (openat2 RESOLVE_BENEATH |
  /// RESOLVE_NO_MAGICLINKS; on a kernel without openat2, realpath of the candidate against
  /// realpath of `base`, re-checked on the opened fd). A symlink that stays inside is followed;
  /// one that leads out, at any component (the final file included), fails with code "EXDEV":
  /// `open <base>/<rel>: resolves outside <base> through a symlink (EXDEV)`; an absolute `rel`
  /// or a ".." segment fails the same way (`open <base>/<rel>: leaves <base> (EXDEV)`). A FIFO,
  /// device or directory is refused without blocking (`read <path>: not a regular file
  /// (EINVAL)`, EISDIR for a directory). A file over kMaxReadBytes is refused as ReadFile
  /// refuses it (code "EFBIG"). Other errors read like ReadFile's
  /// (`open <base>/<rel>: No such file or directory (ENOENT)`). The default implementation
  /// refuses everything (code "ENOSYS"), so a FileSystem that does not implement it fails
  /// closed.
  virtual Result<std::string> ReadFileBeneath(const std::string& base, const std::string& rel);

  /// Reads a file the gate writes and reads back itself (a verdict cache record) as ReadFile
  /// does, but only when `path` names a regular file with exactly one link: it is opened
  /// O_NOFOLLOW and fstat-checked, so a record replaced by a symlink (to a planted file
  /// anywhere) or by a hard link to one is refused, never read. A final symlink fails with code
  /// "ELOOP" (`open <path>: a symlink, not a regular file (ELOOP)`), a directory "EISDIR", a
  /// FIFO or device "EINVAL" (`read <path>: not a regular file (EINVAL)`, without blocking), a
  /// file with more links "EMLINK" (`read <path>: 2 hard links, not one (EMLINK)`); other
  /// errors read like ReadFile's. The default implementation refuses everything (code
  /// "ENOSYS"), so a FileSystem that does not implement it fails closed.
  virtual Result<std::string> ReadOwnFile(const std::string& path);

  /// Reads a file an operator names on the command line for the gate to copy into a card
  /// (`artifact add FILE`, `card create --body-file F`). The workspace is the judged agent's to
  /// write, so a name there may be a link it planted to what the operator can read and it
  /// cannot (trial19 5f: `design.md -> /proc/self/environ` registered the operator's whole
  /// environment as an artifact the next check sent to the checker). So: no symbolic link at
  /// any component of `path` is followed (openat2 RESOLVE_NO_SYMLINKS from `/`, or a walk with
  /// O_NOFOLLOW where the kernel has none): code "ELOOP", `read <path>: names a symbolic link
  /// (ELOOP); the gate reads the file a path names, never a link's target: name the file
  /// itself (<its real path>) if that is what you mean`; a file of /proc or /sys (a process's or
  /// the kernel's state, not a document) is refused with "EINVAL" (`read <path>: a file of
  /// /proc or /sys, not a document (EINVAL)`); then as ReadFile (regular files only, at most
  /// kMaxReadBytes). The default implementation refuses everything (code "ENOSYS").
  virtual Result<std::string> ReadNamedFile(const std::string& path);

  /// ReadNamedFile's rules (no symbolic link at any component, nothing of /proc or /sys, a
  /// regular file of at most kMaxReadBytes, the same errors) with MapFile's result: the file
  /// mapped, not copied. For grounding evidence an operator names (`ground --evidence`), which
  /// the judged agent may have replaced by a link to a file it cannot read and the gate can,
  /// whose words would then come back in "evidence has ..." hints (trial19). The default
  /// implementation returns ReadNamedFile's bytes, so a decorating FileSystem keeps its faults.
  virtual Result<FileBytes> MapNamedFile(const std::string& path);
};

/// The first component of `dir` that is a symlink (lstat through `fs.Kind`), checking every
/// component strictly below `base` down to `dir` when `dir` lies below `base`, else only `dir`
/// itself (components above the workspace are the deployment's, e.g. a symlinked /tmp).
/// Components that do not exist yet end the walk (they will be created as real directories).
/// nullopt when there is none; an lstat error → its Status.
Result<std::optional<std::string>> SymlinkOnPath(FileSystem& fs, const std::string& base,
                                                 const std::string& dir);

/// Names a devflow root below which the POSIX file system follows no symbolic link, for any
/// operation (issue 7, trial 0353 F3): every path below it is opened from the root's directory
/// fd, the directory holding the final component through openat2(RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS) (one openat(O_NOFOLLOW) per component on a kernel without openat2),
/// and the operation itself is made relative to that directory fd without following the final
/// component (openat O_NOFOLLOW, mkdirat, renameat, unlinkat, fstatat AT_SYMLINK_NOFOLLOW).
/// So a link planted at any component below the root, before or during the operation, is
/// never written or read through: the operation fails with code "ELOOP", `<op> <path>: <link>
/// is a symbolic link below the devflow root <root>, which the gate never follows (ELOOP)[;
/// nothing was written]; replace <link> with a real directory (file) and retry`. Errors of
/// other kinds read as before. ReadFileBeneath's base is reached the same way (inside the base
/// its own rule holds). The root itself may be a symlink (the operator's choice): it is
/// resolved once, here, or when first used if it does not exist yet; a root that is a symlink
/// after it was resolved is refused. Paths not below a registered root are unaffected (the
/// workspace's own files, a cache or report directory outside the root). The store registers its
/// root (Store's constructor); so does the CLI for every command's root. Registration lasts for the
/// process.
void RegisterNoSymlinkRoot(const std::string& root);

/// The file system the commands use: the POSIX implementation (PosixFileSystem), unless a test
/// replaced it with ReplaceFileSystemForTesting.
FileSystem& RealFileSystem();

/// The real POSIX implementation (process-wide singleton, thread-safe); never replaced.
FileSystem& PosixFileSystem();

/// Test seam: until called again with nullptr, RealFileSystem() returns `*fs` (which must not
/// itself wrap RealFileSystem(); wrap PosixFileSystem()). Used to inject faults, exceptions
/// included, into a whole command run in-process.
void ReplaceFileSystemForTesting(FileSystem* fs);

/// Formats an errno failure the way every FileSystem error reads:
/// Status{code: "EACCES", message: "<op> <path>: Permission denied (EACCES)"}.
Status OsError(int err, std::string_view op, std::string_view path);

/// What an operator does about a write of `path` that failed with the errno named `code`
/// ("ENOSPC": `free space on the file system holding <dir> and retry`; EACCES/EPERM, EROFS,
/// ENOENT/ENOTDIR have their own; any other: `check the disk holding <path> and retry`): the
/// fix every durable write's error ends with.
std::string WriteFix(std::string_view code, const std::string& path);

/// The errno's symbolic name ("EACCES"), or "E<number>" when glibc has none.
std::string ErrnoName(int err);

/// For a short process that builds megabytes of small objects once and exits (`devflow-gate
/// ground` on a large claim, issue 11 item 4), or reads large files whole (the CLI `move` with
/// 16 MiB inputs, read again under the commit lock, item 2): malloc serves every block below
/// `reserve` from its heap and keeps what is freed (no mapping per large block, none given back),
/// the heap grows now by `reserve`, and that part is advised onto transparent huge pages, so the
/// run's first touches fault in a few 2 MiB pages instead of thousands of 4 KiB ones (each a fault,
/// several microseconds apiece in a virtual machine). A hint only: where the kernel has no huge
/// pages for the heap (THP `never`, no memory to spare) it behaves as before, with the same
/// results. Call it once, early, in the CLI process only (never in a long-lived server or the
/// sandboxed checker).
void UseBatchHeap(size_t reserve);

/// Wall clock for `at` fields. Tests use a fixed clock.
class Clock {
 public:
  virtual ~Clock() = default;
  /// ISO-8601 UTC with milliseconds, e.g. "2026-09-16T08:00:00.000Z" (JS Date#toISOString).
  virtual std::string NowIso() = 0;
};
Clock& SystemClock();

/// Joins path segments with '/', collapsing duplicate separators at the joint.
std::string JoinPath(std::string_view a, std::string_view b);
/// Parent directory of an absolute or relative path ("/a/b" → "/a", "/a" → "/").
std::string ParentPath(std::string_view path);
/// Makes `path` absolute against the process cwd and lexically normalises "." and ".."
/// segments (no symlink resolution, like Node's path.resolve).
std::string AbsolutePath(std::string_view path);
/// Like AbsolutePath but resolves a relative path against `base` instead of the cwd.
std::string ResolveAgainst(std::string_view base, std::string_view path);

}  // namespace devflow

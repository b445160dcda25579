// Shared test fixtures: temporary directories, a fixed clock, an injectable faulty file
// system, and a way to run the real `devflow-gate` binary end to end.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/os.h"

namespace devflow::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  /// path() + "/" + rel
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

/// Reads a whole file (test helper; aborts the test on error via an empty optional).
std::optional<std::string> Slurp(const std::string& path);
/// Writes a whole file, creating parent directories.
void Spit(const std::string& path, const std::string& content);
/// Makes a file executable (0755).
void MakeExecutable(const std::string& path);
/// Recursive listing of relative file paths with their contents (for "byte-identical tree").
std::map<std::string, std::string> Snapshot(const std::string& dir);

/// The pid of a process that ran and is gone: a child forked, exited and reaped here (so no
/// process with that pid runs until the kernel hands the number out again, which takes a full
/// turn of pid_max). The `<pid>\n` of a commit.lock left by a killed writer.
int64_t DeadPid();

/// This test process's pid, which runs for as long as the test does: a live lock holder.
int64_t LivePid();

/// A clock that always returns the same instant (settable).
class FixedClock : public Clock {
 public:
  explicit FixedClock(std::string at = "2026-09-16T08:00:00.000Z") : at_(std::move(at)) {}
  std::string NowIso() override { return at_; }
  void Set(std::string at) { at_ = std::move(at); }

 private:
  std::string at_;
};

/// Decorates the real file system and fails chosen operations with a chosen errno, the way
/// upstream's tests inject EACCES (works as root, where chmod denies nothing).
/// Operation names: "read", "write-atomic", "append", "create-exclusive", "mkdirs",
/// "mkdir-exclusive", "remove", "rmdir", "list", "kind", "replace-locked", and
/// "write-atomic-placed": the atomic write succeeds (the file is renamed into place) and then
/// fails as the fsync of its directory would (`fsync <dir>: <errno>`).
class FaultyFileSystem : public FileSystem {
 public:
  explicit FaultyFileSystem(FileSystem& base = PosixFileSystem()) : base_(base) {}
  /// Fails `op` on any path containing `path_part` with `err`, `times` times (-1 = always).
  void Fail(std::string op, std::string path_part, int err, int times = -1);
  void Clear() { rules_.clear(); }
  /// Called before each operation (after fault rules pass); lets a test act at a precise moment.
  std::function<void(const std::string& op, const std::string& path)> before;

  Result<std::string> ReadFile(const std::string& path) override;
  Status WriteFileAtomic(const std::string& path, std::string_view data,
                         Replace replace = Replace::kExisting,
                         std::string_view read_before = {}) override;
  Status AppendDurable(const std::string& path, std::string_view data) override;
  Status ReplaceLocked(
      const std::string& path,
      const std::function<std::optional<std::string>(const std::string&)>& rewrite) override;
  Status CreateExclusive(const std::string& path, std::string_view data) override;
  Status CreateDirs(const std::string& path) override;
  Status CreateDirExclusive(const std::string& path) override;
  Status RemoveFile(const std::string& path) override;
  Status RemoveDir(const std::string& path) override;  // op "rmdir"
  Result<std::vector<std::string>> ListDir(const std::string& path) override;
  Result<FileKind> Kind(const std::string& path) override;
  /// Rules for "read" apply here too, to the joined path `<base>/<rel>`.
  Result<std::string> ReadFileBeneath(const std::string& base, const std::string& rel) override;
  /// Rules for "read" apply here too.
  Result<std::string> ReadOwnFile(const std::string& path) override;
  /// Rules for "read" apply here too.
  Result<std::string> ReadNamedFile(const std::string& path) override;

 private:
  struct Rule {
    std::string op, path_part;
    int err;
    int times;
  };
  std::optional<Status> Check(const std::string& op, const std::string& path);
  std::optional<Status> Match(const std::string& op, const std::string& path,
                              const std::string& shown_op, const std::string& shown_path);
  FileSystem& base_;
  std::vector<Rule> rules_;
};

/// Result of running a program.
struct RunResult {
  int exit_code = -1;  // -1 if killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

/// Runs the built `devflow-gate` binary with `args`, in `cwd`, with `stdin_text`, and an
/// environment of PATH/HOME/LANG (the test's, unless `env` sets them) plus `env` (nothing else
/// from the test process).
RunResult RunGate(const std::vector<std::string>& args, const std::string& cwd = "",
                  const std::map<std::string, std::string>& env = {},
                  const std::string& stdin_text = "");
/// Runs any argv the same way.
RunResult RunProgram(const std::vector<std::string>& argv, const std::string& cwd = "",
                     const std::map<std::string, std::string>& env = {},
                     const std::string& stdin_text = "");

/// Absolute path of the built binary and of the source tree (fixtures live in tests/fixtures).
std::string GateBinary();

/// The JudgedIdentity (reports/verdict_cache.h: title, body, inputs and their order) of card `id`
/// under `root` for the registrations `labels` ("kind:rev", in any order, as in a cache key), each
/// read as the agent gate reads it, listed in the order of `kinds` (the edge's `inputs:`; the
/// fixtures' edges list [prd, design]; a kind not in it goes last): what a cache record for them
/// must carry to be hit. "" when the card, a registration or its file cannot be read.
std::string JudgedInputsOf(const std::string& root, const std::string& id,
                           std::vector<std::string> labels,
                           const std::vector<std::string>& kinds = {"prd", "design"});
std::string SourceDir();

}  // namespace devflow::test

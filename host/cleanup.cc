// Removal of stale WriteFileAtomic temporaries (host/cleanup.h).
#include "host/cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace devflow {
namespace {

bool AllDigits(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

int64_t TempWriterPid(const std::string& file_name) {
  const std::string suffix = ".tmp";
  if (file_name.size() < 1 + suffix.size() || file_name[0] != '.' ||
      file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  // ".<name>.<pid>.<seq>" without the leading dot and the ".tmp": split the last two fields.
  const std::string body = file_name.substr(1, file_name.size() - 1 - suffix.size());
  const size_t seq_dot = body.rfind('.');
  if (seq_dot == std::string::npos || seq_dot == 0) return -1;
  const size_t pid_dot = body.rfind('.', seq_dot - 1);
  if (pid_dot == std::string::npos || pid_dot == 0) return -1;  // <name> must not be empty
  const std::string pid = body.substr(pid_dot + 1, seq_dot - pid_dot - 1);
  const std::string seq = body.substr(seq_dot + 1);
  if (!AllDigits(pid) || !AllDigits(seq)) return -1;
  const int64_t value = std::stoll(pid);
  return value > 0 ? value : -1;
}

bool WriterAlive(int64_t pid) {
  if (pid <= 0 || pid > INT32_MAX) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

TempSweep RemoveStaleTemps(FileSystem& fs, const std::vector<std::string>& dirs,
                           const std::function<bool(int64_t)>& alive) {
  TempSweep sweep;
  const int64_t self = ::getpid();
  for (const std::string& dir : dirs) {
    Result<std::vector<std::string>> names = fs.ListDir(dir);
    if (!names.ok()) {
      // Absent, or not a directory: nothing to sweep (the reader of that path reports it).
      if (names.status().code() != "ENOENT" && names.status().code() != "ENOTDIR") {
        sweep.errors.push_back(names.status().message());
      }
      continue;
    }
    for (const std::string& name : *names) {
      const int64_t pid = TempWriterPid(name);
      if (pid < 0 || pid == self || alive(pid)) continue;
      const std::string path = JoinPath(dir, name);
      // Only regular files: a directory or symlink with a temp-like name is not ours.
      Result<FileKind> kind = fs.Kind(path);
      if (!kind.ok()) {
        sweep.errors.push_back(kind.status().message());
        continue;
      }
      if (*kind != FileKind::kFile) continue;
      Status removed = fs.RemoveFile(path);
      if (removed.ok()) {
        sweep.removed.push_back(path);
      } else if (removed.code() != "ENOENT") {
        sweep.errors.push_back(removed.message());
      }
    }
  }
  return sweep;
}

}  // namespace devflow

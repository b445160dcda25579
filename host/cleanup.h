// Stale temporaries (issue 4 item 6): a `devflow-gate` killed inside FileSystem::WriteFileAtomic
// leaves its `.<name>.<pid>.<seq>.tmp` file behind. No reader ever takes such a file for a record
// (records have other names), but they pile up; the next start removes the ones whose writer is
// gone, in the directories a move writes to.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/os.h"

namespace devflow {

/// The writer pid encoded in a WriteFileAtomic temp name `.<name>.<pid>.<seq>.tmp` (host/os.h),
/// or -1 when `file_name` (a bare name, no directory) is not such a name: it must start with
/// '.', end with ".tmp", and carry a non-empty <name>, a positive decimal <pid> and a decimal
/// <seq>.
int64_t TempWriterPid(const std::string& file_name);

/// Whether `pid` runs: kill(pid, 0) succeeds or fails with EPERM (the pid exists but belongs to
/// someone else). Pids <= 0 are never alive.
bool WriterAlive(int64_t pid);

/// What RemoveStaleTemps did: absolute paths removed, and one line per problem
/// (`<op> <path>: <strerror> (<ERRNO>)`, the FileSystem message) for the caller to warn with.
struct TempSweep {
  std::vector<std::string> removed;
  std::vector<std::string> errors;
};

/// In each of `dirs` (absolute; an absent directory is skipped silently), removes every file
/// whose name is a WriteFileAtomic temp name (TempWriterPid >= 0) and whose writer is not
/// alive (`alive(pid)` false; this process's own pid always counts as alive). A temp of a
/// living writer may be a write in flight and is kept; so is everything else. A pid reused by
/// an unrelated process only delays the removal to a later start. Never fails: listing and
/// removal errors (other than ENOENT from a concurrent sweep) go to `errors`.
/// Call it at start-up for the directories a move touches: the card dir, its artifacts dir,
/// the report dir and the cache dir.
TempSweep RemoveStaleTemps(FileSystem& fs, const std::vector<std::string>& dirs,
                           const std::function<bool(int64_t)>& alive = WriterAlive);

}  // namespace devflow

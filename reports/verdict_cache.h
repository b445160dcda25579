// The verdict cache (reference/devflow-upstream.md §4.9): SHA-256-keyed, atomically written,
// byte-compatible with the TypeScript agent gate's files for the same key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "host/os.h"
#include "host/warnings.h"

namespace devflow {

/// VerdictCacheKey, serialised in exactly this field order.
struct VerdictCacheKey {
  std::string edge;                 // "designing->ready"
  std::string root;                 // absolute devflow root
  std::string card;                 // card id
  std::vector<std::string> inputs;  // "kind:rev" of collected inputs (sorted by Compute)
  std::string prompt_sha256;        // lowercase hex SHA-256 of the configured instruction

  /// Builds a key: sorts `inputs` (byte order == JS default sort for kind grammar strings)
  /// and hashes `instruction`.
  static VerdictCacheKey Compute(std::string edge, std::string root, std::string card,
                                 std::vector<std::string> inputs, const std::string& instruction);
  /// Compact JSON, JS JSON.stringify style:
  /// {"edge":…,"root":…,"card":…,"inputs":[…],"promptSha256":…}
  std::string CompactJson() const;
  /// First 16 hex of SHA-256(CompactJson()) + ".json".
  std::string FileName() const;
};

/// A cache record: {key, verdict, summary, reportPath (veto only), at}.
struct VerdictCacheRecord {
  VerdictCacheKey key;
  bool allow = false;
  std::string summary;
  std::optional<std::string> report_path;  // veto only
  std::string at;
};

/// JSON.stringify(record, null, 2) + "\n".
std::string RenderCacheRecord(const VerdictCacheRecord& record);

/// The cache directory of one agent gate. Lookups and stores never fail the decision:
/// problems become the upstream warnings (prefix `devflow-agent-gate: `).
class VerdictCache {
 public:
  VerdictCache(std::string dir, FileSystem& fs) : dir_(std::move(dir)), fs_(fs) {}
  const std::string& dir() const { return dir_; }
  std::string PathFor(const VerdictCacheKey& key) const;

  /// Absent → silent miss; unreadable → warning `devflow-agent-gate: could not read the verdict
  /// cache at <file>: <error>` + miss; invalid → `devflow-agent-gate: the verdict cache at
  /// <file> is corrupt; treating it as a miss` + miss; stored key (re-serialised compactly in
  /// its stored order) ≠ computed key → silent miss.
  std::optional<VerdictCacheRecord> Lookup(const VerdictCacheKey& key, Warnings& warnings) const;

  /// Refuses a cache directory that is, or passes through, a symlink (SymlinkOnPath below
  /// `workspace`, host/os.h), so cache records are never read from or written to wherever a
  /// link points. Refused → warning `devflow-agent-gate: the verdict cache directory
  /// <component> is a symlink; point verdictCacheDir at a real directory; not caching this
  /// attempt` (an lstat error: `devflow-agent-gate: could not check the verdict cache
  /// directory <dir>: <error>; not caching this attempt`) and false. True: usable.
  bool CheckDir(const std::string& workspace, Warnings& warnings) const;

  /// mkdir -p + durable atomic write. Failure → warning `devflow-agent-gate: could not cache
  /// the <allow|veto> verdict at <file>: <error>`; returns false.
  bool Store(const VerdictCacheRecord& record, Warnings& warnings) const;

 private:
  std::string dir_;
  FileSystem& fs_;
};

}  // namespace devflow

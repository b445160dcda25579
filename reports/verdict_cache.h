// The verdict cache (reference/devflow-upstream.md §4.9): SHA-256-keyed, atomically written,
// the key and file name byte-compatible with the TypeScript agent gate's. A record carries two
// fields more than upstream's: `checkerSha256`, the identity of the checker that gave the
// verdict (issue 7 item 3), and `inputsSha256`, the hash of the input contents it judged (an
// input edited in place keeps its `kind:rev`); a hit needs both to match (docs/decisions.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/os.h"
#include "host/warnings.h"

namespace devflow {

struct ProviderConfig;

/// The identity of the checker behind a verdict (issue 7 item 3): lowercase hex SHA-256 of the
/// compact JSON
///   {"provider":{"builtin":<name>|null,"args":[…],"command":[…],"env":[…],"network":<bool>,
///    "sandbox":"off"|"on"},"verdictNonce":<bool>}
/// (`"provider":null` when `provider` is nullptr: the edge names a provider no config defines).
/// The provider's name is not part of it: the same definition under another name is the same
/// checker. Any change of argv, builtin or its args, env names, network or sandbox setting, or
/// of the edge's verdictNonce, gives another identity.
std::string CheckerIdentity(const ProviderConfig* provider, bool verdict_nonce);

/// What a verdict judged: lowercase hex SHA-256 over the collected inputs sorted by label (the
/// key's order), each framed as `<label>\n<byte length>\n<bytes>`. `inputs` holds
/// (label `kind:rev`, verbatim content) pairs. Two inputs that differ in any byte, or a label
/// with other content, give another hash; the framing keeps boundaries unambiguous.
std::string InputsIdentity(std::vector<std::pair<std::string, std::string_view>> inputs);

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

/// A cache record: {key, verdict, summary, reportPath (veto only), at, checkerSha256,
/// inputsSha256}.
struct VerdictCacheRecord {
  VerdictCacheKey key;
  bool allow = false;
  std::string summary;
  std::optional<std::string> report_path;  // veto only
  std::string at;
  /// CheckerIdentity of the checker that gave the verdict; "" renders no field (an upstream
  /// record, which no lookup hits).
  std::string checker_sha256;
  /// InputsIdentity of the contents the verdict judged; "" renders no field (an upstream record,
  /// or one written before the field, which no lookup hits).
  std::string inputs_sha256;
};

/// JSON.stringify(record, null, 2) + "\n", fields in the order above (`checkerSha256` and
/// `inputsSha256` last, after upstream's five).
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
  /// its stored order) ≠ computed key → silent miss; `checkerSha256` absent, not a string or ≠
  /// `checker` (another provider definition or nonce setting, or an upstream record) → silent
  /// miss; `inputsSha256` absent or not a string → silent miss; ≠ `inputs` (an input's bytes
  /// changed under the same `kind:rev`) → warning `devflow-agent-gate: the verdict cache at
  /// <file> judged other contents of [<labels>] (an input was changed in place, without a new
  /// registration); treating it as a miss` + miss. A veto whose report is not a regular file any
  /// more → warning `devflow-agent-gate: the cached veto at <file> names the report <path>, which
  /// is gone; treating it as a miss`
  /// (`…, which is not a regular file; …`, `…, which cannot be checked: <error>; …`) + miss (issue
  /// 7 item 4).
  std::optional<VerdictCacheRecord> Lookup(const VerdictCacheKey& key, std::string_view checker,
                                           std::string_view inputs, Warnings& warnings) const;

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

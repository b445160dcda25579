// `cache list`, `cache verify`, `cache prune` (SPEC §7, docs/operations.md): every file of
// every agent gate's verdict cache dir, judged by the gate's own rules.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/operator.h"

namespace devflow {

/// The state of one file in a cache dir (see docs/operations.md):
///  - current: valid, well named, and an identical retry would hit (same root, the card is
///    active, and the gate owning the dir would compute exactly this key now);
///  - stale: valid and well named, but inputs moved on / prompt changed / edge no longer
///    configured / card gone / card elsewhere (another root);
///  - corrupt: fails the Lookup validity rules (reference §4.9), or its key is not the five
///    string fields in order (such a record can never be hit), or it is not a record the gate
///    wrote: a symlink, a file with more than one link, a FIFO (IsForeignRecord; never read,
///    never followed; prune unlinks the name);
///  - misnamed: file name ≠ first 16 hex of SHA-256 of its key's compact JSON + ".json";
///  - unreadable: the file cannot be read (never pruned: its state is unknown);
///  - temp: a `.*.tmp` (or upstream `<file>.<pid>.tmp`) leftover of an atomic write.
enum class CacheState { kCurrent, kStale, kCorrupt, kMisnamed, kUnreadable, kTemp };
/// "current", "stale", "corrupt", "misnamed", "unreadable", "temp".
const char* CacheStateName(CacheState state);

struct CacheEntry {
  std::string file;  // absolute path
  CacheState state = CacheState::kCorrupt;
  std::string why;      // stale/corrupt/misnamed/unreadable reason; "" for current
  std::string content;  // the bytes classified (prune re-checks them before deleting)
  std::string refused;  // corrupt as not a record the gate wrote: the ReadOwnFile error code
  // Record fields (set for current, stale and misnamed):
  std::string verdict;  // "allow" | "veto"
  std::string card;
  std::string edge;
  std::vector<std::string> inputs;
  std::string at;
  std::string summary;
  std::optional<std::string> report_path;
  std::optional<int64_t> age_ms;  // temp files only (nullopt when the age cannot be read)
};

/// Every .json record and temp file of every cache dir, sorted by path. Directory listing
/// failures (other than an absent dir) go to `errors`, one line each with the fix.
struct CacheScan {
  std::vector<std::string> dirs;
  std::vector<CacheEntry> entries;
  std::vector<std::string> errors;
};
CacheScan ScanVerdictCaches(const OperatorContext& ctx);

/// Files by state, in the order current, stale, corrupt, misnamed, unreadable, temp.
std::vector<std::pair<std::string, size_t>> StateCounts(const CacheScan& scan);
/// Records (not temp files) in the scan.
size_t RecordCount(const CacheScan& scan);
/// "current 1, stale 0, corrupt 0, misnamed 0, unreadable 0; temp files 0".
std::string CountsText(const CacheScan& scan);
/// The verify/audit problem line for a corrupt, misnamed or unreadable file, else "".
std::string ProblemLine(const CacheEntry& e);

/// The veto report a cache file still names: its `reportPath` when it holds a record
/// (current, stale or misnamed) whose verdict is veto, else nullopt. The one place that says
/// which reports cached vetoes name: `audit` flags such a veto whose report is gone (a
/// dangling cached veto), `reports prune` never removes a report one names.
std::optional<std::string> CachedVetoReport(const CacheEntry& e);

/// `cache list [--json]`: exit 0, or 1 when a cache dir cannot be listed.
int CacheList(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err);
/// `cache verify [--json]`: exit 1 when a record is corrupt, misnamed or unreadable or a dir
/// cannot be listed.
int CacheVerify(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err);
/// `cache prune [--dry-run] [--json]`: deletes stale, corrupt and misnamed records and leftover
/// temp files, never a current or unreadable record; exit 1 when a file cannot be removed.
int CachePrune(const OperatorContext& ctx, bool dry_run, bool json, std::ostream& out,
               std::ostream& err);

}  // namespace devflow

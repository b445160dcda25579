// Operator commands (SPEC §7): `audit`, `reports list|show`, `cache list|verify|prune`.
// Everything here is read-only except `cache prune`. Behaviour, output lines and JSON shapes
// are documented in docs/operations.md.
//
// Where things live (plugin/agent_gate.h ReportDir/CacheDir, reference §4.8–§4.9): each
// configured devflow-agent-gate has a report dir (default <root>/reports/agent-gate) and, when
// `verdictCacheDir` is set, a cache dir; relative dirs resolve against the workspace (parent of
// the root). The decision ledger is <root>/ledger/decisions.jsonl (host/decision_ledger.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "host/os.h"
#include "host/status.h"

namespace devflow {

/// The two facts the operator commands need that FileSystem does not give: how old a file is
/// (only temp files older than kTempLeftoverAgeMs are leftovers; younger ones may be a write in
/// flight) and whether the pid written in a commit.lock still runs.
class HostProbe {
 public:
  virtual ~HostProbe() = default;
  /// Milliseconds since `path` was last modified (lstat mtime; never negative), or the errno
  /// Status (`stat <path>: <strerror> (<ERRNO>)`).
  virtual Result<int64_t> AgeMs(const std::string& path) = 0;
  /// Whether a process with this pid exists: kill(pid, 0) succeeds or fails with EPERM.
  /// A pid <= 0 is never alive.
  virtual bool ProcessAlive(int64_t pid) = 0;
};

/// lstat + the wall clock, kill(pid, 0).
HostProbe& RealHostProbe();

/// A temp file (`.*.tmp`) this old (ms) or older is a leftover of an interrupted write.
constexpr int64_t kTempLeftoverAgeMs = 60 * 1000;

/// What every operator command works on. The lead's CLI builds it from --root / --config; when
/// no config file exists an empty GateConfig gives the defaults (one report dir
/// <root>/reports/agent-gate, caching disabled).
struct OperatorContext {
  std::string root;          // absolute devflow root
  const GateConfig& config;  // the loaded devflow-gate.yaml
  FileSystem& fs;
  HostProbe& probe;
};

/// Report dirs of every configured agent gate, resolved and de-duplicated in config order;
/// `<root>/reports/agent-gate` when no agent gate is configured.
std::vector<std::string> VetoReportDirs(const OperatorContext& ctx);
/// Cache dirs of every agent gate with `verdictCacheDir`, resolved and de-duplicated in config
/// order; empty when caching is disabled everywhere.
std::vector<std::string> VerdictCacheDirs(const OperatorContext& ctx);

/// The header facts of one veto report (reports/veto_report.h RenderVetoReport layout).
struct VetoReportEntry {
  std::string path;  // absolute
  std::string card;
  std::string edge;
  int64_t revision = 0;
  std::string at;
  std::string summary;  // the whole `## Summary` section text
  std::string problem;  // non-empty: the file does not read as a veto report (fields empty)
};

/// Parses a report's text; the Status (code "corrupt") names the first missing piece, e.g.
/// `no "- revision: <n>" line`.
Result<VetoReportEntry> ParseVetoReport(const std::string& path, const std::string& text);

/// The state of one file in a cache dir (see docs/operations.md):
///  - current: valid, well named, and an identical retry would hit (same root, the card is
///    active, and the gate owning the dir would compute exactly this key now);
///  - stale: valid and well named, but inputs moved on / prompt changed / edge no longer
///    configured / card gone / card elsewhere (another root);
///  - corrupt: fails the Lookup validity rules (reference §4.9), or its key is not the five
///    string fields in order (such a record can never be hit);
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

/// `reports list [--json]` | `reports show PATH|NAME` (args exclude the word "reports").
/// Exit 0 ok; 1 a report dir or the report cannot be read; 2 usage error, unknown report, or
/// a path outside the report dirs.
int RunReportsCommand(const std::vector<std::string>& args, const OperatorContext& ctx,
                      std::ostream& out, std::ostream& err);

/// `cache list [--json]` | `cache verify [--json]` | `cache prune [--dry-run] [--json]`
/// (args exclude the word "cache"). Exit 0 ok; 1 verify found corrupt/misnamed/unreadable
/// files, a cache dir cannot be listed, or prune could not remove a file; 2 usage error.
int RunCacheCommand(const std::vector<std::string>& args, const OperatorContext& ctx,
                    std::ostream& out, std::ostream& err);

/// `audit [--json]` (args exclude the word "audit"). Exit 0 healthy (warnings allowed),
/// 1 problems found, 2 usage error or the root does not exist.
int RunAuditCommand(const std::vector<std::string>& args, const OperatorContext& ctx,
                    std::ostream& out, std::ostream& err);

}  // namespace devflow

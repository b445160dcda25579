// What every operator command (SPEC §7: `audit`, `reports`, `cache`, `ledger`) works on, and
// the few output conventions they share. The commands themselves live one per file:
// reports/report_command.h, reports/cache_command.h, reports/ledger_command.h,
// reports/audit.h; their arguments are parsed by CLI11 in host/cli/operator_cli.cc. Output
// lines and JSON shapes are documented in docs/operations.md. Every human line that holds
// bytes from a checker, a journal or a file goes through host/terminal.h.
#pragma once

#include <cstdint>
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
  /// The wall clock, ms since the Unix epoch (retention compares file and row times to it).
  virtual int64_t NowMs() = 0;
};

/// lstat + the wall clock, kill(pid, 0).
HostProbe& RealHostProbe();

/// What every operator command works on. The CLI builds it from --root / --config; when no
/// config file exists an empty GateConfig gives the defaults (one report dir
/// <root>/reports/agent-gate, caching disabled).
struct OperatorContext {
  std::string root;          // absolute devflow root
  const GateConfig& config;  // the loaded devflow-gate.yaml
  FileSystem& fs;
  HostProbe& probe;
};

/// Report dirs of every configured agent gate (reports/gate_layout.h), de-duplicated in config
/// order; `<root>/reports/agent-gate` when no agent gate is configured.
std::vector<std::string> VetoReportDirs(const OperatorContext& ctx);
/// Cache dirs of every agent gate with `verdictCacheDir`, de-duplicated in config order; empty
/// when caching is disabled everywhere.
std::vector<std::string> VerdictCacheDirs(const OperatorContext& ctx);

/// Milliseconds since the epoch of an ISO-8601 UTC time ("2026-09-16", "2026-09-16T08:00",
/// "2026-09-16T08:00:00Z", "2026-09-16T08:00:00.000Z"); nullopt when `text` is not one.
std::optional<int64_t> ParseIsoTime(const std::string& text);

/// ParseIsoTime's times, or a duration before `now_ms` ("90d", "12h", "30m", "45s"); nullopt
/// when `text` is neither.
std::optional<int64_t> ParseTimeArg(const std::string& text, int64_t now_ms);

/// The retention rule of `reports prune` and `ledger prune` (docs/operations.md "Retention").
/// At least one of the two is set (the CLI refuses neither: nothing is ever deleted by
/// default). An item is removed when it is at or before `cut_ms` (when set) and is not among
/// the newest `keep` (when set): with both, an item goes only when both say so.
struct RetentionRule {
  std::optional<int64_t> cut_ms;  // --older-than: now minus the duration (or a given time)
  std::optional<size_t> keep;     // --keep N
};

/// Which items `rule` removes, parallel to `times` (each item's time, ms since the epoch;
/// nullopt when it has none that reads, and such an item is never removed nor counted among
/// the newest). Ties in time are broken by position: a later item counts as newer.
std::vector<bool> RetentionRemoves(const std::vector<std::optional<int64_t>>& times,
                                   const RetentionRule& rule);

/// "1 record" / "2 records".
std::string Plural(size_t n, const std::string& one, const std::string& many);
/// Items joined by `sep`.
std::string JoinList(const std::vector<std::string>& items, const std::string& sep = ", ");

}  // namespace devflow

// `reports list` and `reports show` (SPEC §7, docs/operations.md): the veto reports of every
// agent gate's report dir.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "host/status.h"
#include "reports/fault_report.h"
#include "reports/operator.h"

namespace devflow {

/// The header facts of one veto report (reports/veto_report.h RenderVetoReport layout;
/// `problem`: the file does not read as one).
struct VetoReportEntry : ReportHeader {
  std::string summary;  // the whole `## Summary` section text
};

/// Parses a report's text; the Status (code "corrupt") names the first missing piece, e.g.
/// `no "- revision: <n>" line`.
Result<VetoReportEntry> ParseVetoReport(const std::string& path, const std::string& text);

/// Every `.md` regular file of every report dir, sorted by path. Listing failures (other than
/// an absent dir) go to `errors`, one line each with the fix.
struct VetoReportScan {
  std::vector<std::string> dirs;
  std::vector<VetoReportEntry> entries;
  std::vector<std::string> errors;
};
VetoReportScan ScanVetoReports(const OperatorContext& ctx);

/// Every `.md` regular file of every report dir's `faults/` subdirectory (reports/gate_layout.h
/// FaultReportDir), sorted by path; `dirs` are those fault dirs. A file that does not parse
/// keeps its `problem`. An absent dir is no error.
struct FaultReportScan {
  std::vector<std::string> dirs;
  std::vector<FaultReportEntry> entries;
  std::vector<std::string> errors;
};
FaultReportScan ScanFaultReports(const OperatorContext& ctx);

/// `reports list [--json]`: veto reports, then fault reports; exit 0, or 1 when a report dir
/// cannot be listed.
int ReportsList(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err);

/// `reports prune (--older-than D | --keep N)… [--dry-run] [--json]` (docs/operations.md
/// "Retention"): removes the veto and fault reports RetentionRemoves picks by their `- at:`
/// time, `--keep N` keeping the newest N of each kind. Never removed: a report a cached veto
/// names (CachedVetoReport, whatever the record's state: `cache prune` first frees it), a
/// report a ledger row names whose time is after the cut or unreadable (with --older-than),
/// a file that does not read as a report, and a report rewritten since it was judged. When a
/// cache dir cannot be listed or the ledger cannot be read, no report is removed (which ones
/// are named is unknown). Exit 0; 1 a file could not be removed, or nothing was removed for
/// the reason above.
int ReportsPrune(const OperatorContext& ctx, const RetentionRule& rule, bool dry_run, bool json,
                 std::ostream& out, std::ostream& err);

/// `reports show PATH|NAME [--json]`: a bare name resolves inside the report dirs and their
/// fault dirs, a path must lie directly in one. Exit 0; 1 the report cannot be read; 2 unknown
/// report, a name in two dirs, a path outside the report dirs, or not a regular file. The text goes
/// through TerminalText (host/terminal.h); `--json` gives {"path", "text"} verbatim.
int ReportsShow(const OperatorContext& ctx, const std::string& what, bool json, std::ostream& out,
                std::ostream& err);

}  // namespace devflow

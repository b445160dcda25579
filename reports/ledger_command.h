// `ledger list`, `ledger show` (issue 10 item 7): the decision ledger
// (<root>/ledger/decisions.jsonl, host/decision_ledger.h) read back for operators. Rows are
// read tolerantly: a field a row lacks (older rows, rows of an older host) is shown as
// unknown; a line that is not a decision row is counted and named, never fatal.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "reports/operator.h"

namespace devflow {

/// One decision row as read.
struct DecisionView {
  int line = 0;      // 1-based line in the ledger
  std::string id;    // the row's "decision", else DerivedDecisionId(line text)
  std::string at;    // "" when absent
  std::string card;  // "" when absent
  std::string edge;  // "" when absent
  std::optional<int64_t> revision;
  std::string by;       // "human", "agent:<session>", "command:<name>"; "" when absent
  std::string code;     // always present (a row without it is a bad line)
  std::string outcome;  // allowed|vetoed|fault|parked|interrupted|rejected|intent
  std::string message;
  std::optional<std::string> report;        // veto report path
  std::optional<std::string> fault_report;  // fault report path ("faultReport")
  std::optional<std::string> sandbox;       // the checker's sandbox level, when recorded
  std::vector<std::string> checks;          // "<by kind>: <summary>" per check
  std::string text;                         // the line itself (JSON)
};

/// The id shown for a row written before rows carried one: "sha-" + the first 12 hex digits
/// of SHA-256 of the line's bytes (stable: pruning keeps lines byte for byte).
std::string DerivedDecisionId(const std::string& line);

/// The outcome of a row without an "outcome" field: "intent" for code "commit-intent" (the
/// row written before a commit, host/decision_ledger.h IntentRow), "allowed" when ok, "interrupted"
/// for code "interrupted", "parked" when parked, "fault" when the message says the check "could not
/// run", "vetoed" for code "vetoed", else "rejected".
std::string InferredOutcome(bool ok, bool parked, const std::string& code,
                            const std::string& message);

/// The whole ledger. `present` false when the file does not exist; `problems` names each bad
/// line (`<path>:<n>: not valid JSON …; move the damaged line out of the ledger by hand`) and
/// an unreadable file.
struct LedgerScan {
  std::string path;
  bool present = false;
  uint64_t bytes = 0;
  std::vector<DecisionView> rows;
  size_t bad_lines = 0;
  std::vector<std::string> problems;
};
LedgerScan ScanDecisionLedger(const OperatorContext& ctx);

/// Milliseconds since the epoch of an ISO-8601 UTC time ("2026-09-16", "2026-09-16T08:00",
/// "2026-09-16T08:00:00Z", "2026-09-16T08:00:00.000Z"), or of a duration before `now_ms`
/// ("90d", "12h", "30m", "45s"); nullopt when `text` is neither.
std::optional<int64_t> ParseTimeArg(const std::string& text, int64_t now_ms);

/// Filters of `ledger list`; empty/nullopt = no filter.
struct LedgerFilter {
  std::string card;
  std::string edge;
  std::string outcome;
  std::optional<int64_t> since_ms;  // at >= since
  std::optional<int64_t> until_ms;  // at < until
};

/// `ledger list [filters] [--json]`: one line per matching row, oldest first, then a count.
/// Exit 0; 1 the ledger cannot be read or has bad lines (they are named on stderr).
int LedgerList(const OperatorContext& ctx, const LedgerFilter& filter, bool json, std::ostream& out,
               std::ostream& err);

/// `ledger show DECISION-ID [--json]`: every field of one row. Exit 0; 2 no row has that id.
int LedgerShow(const OperatorContext& ctx, const std::string& id, bool json, std::ostream& out,
               std::ostream& err);

}  // namespace devflow

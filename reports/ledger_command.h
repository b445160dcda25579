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
  /// InputsIdentity of the bytes the checks judged ("inputsSha256"); absent in rows of no
  /// check and in rows written before the field existed.
  std::optional<std::string> inputs_sha256;
  std::vector<std::string> checks;  // "<by kind>: <summary>" per check
  std::string text;                 // the line itself (JSON)
};

/// When a decision row was recorded, in ms since the epoch: the time its id carries
/// (NewDecisionId: the recorder's own clock), else its `at` (the caller's, for /v1/admit);
/// nullopt when neither reads as a time. Retention and time windows age rows by it.
std::optional<int64_t> DecisionRecordedMs(const DecisionView& row);

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
  /// Where line `n` (1-based: spans[n - 1]) lies in the bytes read, its `\n` included (the
  /// torn last line has none); `row` when it became a DecisionView (blank, foreign and
  /// unparseable lines did not). `ledger prune` cuts rows out by these, byte for byte.
  struct Span {
    size_t begin = 0, end = 0;
    bool row = false;
  };
  std::string path;
  bool present = false;
  uint64_t bytes = 0;
  std::vector<DecisionView> rows;
  std::vector<Span> spans;
  size_t bad_lines = 0;
  std::vector<std::string> problems;
};
LedgerScan ScanDecisionLedger(const OperatorContext& ctx);
/// The same reading of ledger bytes already in hand (`ledger prune` reads them under the
/// append lock, FileSystem::ReplaceLocked).
LedgerScan ParseDecisionLedger(const std::string& path, const std::string& text);

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

/// `ledger prune (--older-than D | --keep N)… [--dry-run] [--json]` (docs/operations.md
/// "Retention"): rewrites the ledger without the rows RetentionRemoves picks, through
/// FileSystem::ReplaceLocked (under the append lock, by the one atomic replace), every other
/// byte kept as it was. Rows are judged by decision: a decision's time is its newest row's
/// `at`, `--keep N` keeps the newest N decisions, and a commit-intent row goes with its outcome
/// row, never alone. A row without a readable `at`, and every line that is not a decision row
/// (torn, unparseable, foreign, blank), is kept and counted in the output: pruning never drops
/// what it cannot read. Exit 0 (also when there is no ledger); 1 the ledger cannot be read or
/// replaced (it is then as it was).
int LedgerPrune(const OperatorContext& ctx, const RetentionRule& rule, bool dry_run, bool json,
                std::ostream& out, std::ostream& err);

/// `ledger show DECISION-ID [--json]`: every field of one row. Exit 0; 2 no row has that id.
int LedgerShow(const OperatorContext& ctx, const std::string& id, bool json, std::ostream& out,
               std::ostream& err);

}  // namespace devflow

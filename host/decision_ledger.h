// The decision ledger: one JSON line per real (not dry-run) move attempt, whatever its outcome,
// so every attempt leaves a record of what was decided and why (SPEC §8) — including vetoes
// that write no report (artifact gate, cached veto) and store rejections.
#pragma once

#include <string>

#include "host/executor.h"
#include "host/os.h"

namespace devflow {

/// `<root>/ledger/decisions.jsonl`.
std::string DecisionLedgerPath(const std::string& root);

/// The row for one outcome, compact JSON without newline, fields in this order:
/// {"at","card","edge","revision","by","code","ok","message","checks","report","parked",
/// "sandbox"} (`edge`/`revision` from the attempt when it was resolved, else the request;
/// `report` null when none was written; `sandbox` the MoveOutcome::sandbox levels, `[]` when
/// no checker ran).
std::string DecisionRow(const MoveRequest& request, const MoveOutcome& outcome,
                        const std::string& now);

/// Appends the row + "\n" with one write and fsync (creating the directory). A failure is
/// returned for the caller to warn about; it never changes the decision.
Status AppendDecision(FileSystem& fs, const std::string& root, const MoveRequest& request,
                      const MoveOutcome& outcome, const std::string& now);

}  // namespace devflow

// The decision ledger: one JSON line per real (not dry-run) move attempt, whatever its outcome,
// so every attempt leaves a record of what was decided and why (SPEC §8) — including vetoes
// that write no report (artifact gate, cached veto) and store rejections — plus one intent row
// before every commit, so no transition is committed without its row (issue 7 item 10,
// docs/decisions.md "The decision ledger is written before the commit").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "host/executor.h"
#include "host/os.h"

namespace devflow {

/// `<root>/ledger/decisions.jsonl`.
std::string DecisionLedgerPath(const std::string& root);

/// What decided: the config file that was loaded (absolute path and the SHA-256 of the bytes
/// that were parsed) and each provider's program as resolved at load time (provider id →
/// absolute path). Carried by every row (issue 7 item 8).
struct DecisionIdentity {
  std::string config_file;
  std::string config_sha256;                                  // 64 lowercase hex, or ""
  std::vector<std::pair<std::string, std::string>> programs;  // in config order
};

/// The outcome row for one attempt, compact JSON without newline, fields in this order:
/// {"at","card","edge","revision","by","code","ok","message","checks","report","parked",
///  "sandbox","config":{"file","sha256"},"programs":{<provider>: <path>,…}}
/// (`edge`/`revision` from the attempt when it was resolved, else the request; `report` null
/// when none was written; `sandbox` the MoveOutcome::sandbox levels, `[]` when no checker ran).
std::string DecisionRow(const MoveRequest& request, const MoveOutcome& outcome,
                        const std::string& now, const DecisionIdentity& identity);

/// The intent row written before a commit: the same fields, with code "commit-intent", ok
/// true, message `committing card <id> <from>-><to> as revision <N>`, the checks that allowed
/// it, report null, parked false, and after "programs" `"commit":{"rev":N,"at":<entry at>}`:
/// the journal entry this commit appends. The commit happened iff the card's journal has an
/// entry with that rev and that `at` (a reader resolves an intent without an outcome row, e.g.
/// after a SIGKILL, by looking).
std::string IntentRow(const Attempt& attempt, const TransitionCommit& commit,
                      const DecisionIdentity& identity);

/// Appends DecisionRow(request, outcome, now, identity) through AppendDecisionRow.
Status AppendDecision(FileSystem& fs, const std::string& root, const MoveRequest& request,
                      const MoveOutcome& outcome, const std::string& now,
                      const DecisionIdentity& identity = {});

/// Appends `row` + "\n" through FileSystem::AppendDurable (creating the directory). Errors
/// carry AppendDurable's message (the real errno, the path, the fix).
Status AppendDecisionRow(FileSystem& fs, const std::string& root, const std::string& row);

}  // namespace devflow

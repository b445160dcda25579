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

/// A new decision id: the time `at` (ISO-8601 ms, "2026-09-16T08:00:00.000Z") in basic form, a
/// dash and 8 random lowercase hex digits (getrandom(2), drawn 256 bytes at a time), e.g.
/// "20260916T080000.000Z-3fa9c1d2" — sortable by time, unique without a counter file
/// (docs/operations.md "Decision ids"). One attempt has one id: its commit-intent rows and its
/// outcome row carry the same one, and the server answers it as `decisionId`.
std::string NewDecisionId(const std::string& at);

/// What became of an attempt, as the ledger names it: "allowed" (committed or admitted),
/// "vetoed" (a policy said no), "parked" (a policy could not decide, and the card was parked
/// blocked), "fault" (a policy or the host could not decide and no park was made: a failed
/// park, `internal-error`, `ledger-unwritable`), "interrupted" (SIGINT/SIGTERM, or a server
/// drain that ended first), "rejected" (the store refused: stale revision, illegal edge,
/// reason required, contention).
std::string DecisionOutcome(const MoveOutcome& outcome);

/// The outcome row for one attempt, compact JSON without newline, fields in this order:
/// {"decision","at","card","edge","revision","by","code","ok","message","checks","report",
///  "faultReport","parked","sandbox"[,"inputsSha256"],"outcome","config":{"file","sha256"},
///  "programs":{<provider>: <path>,…}}
/// (`decision` = `decision_id`, or NewDecisionId(at) when empty; `edge`/`revision` from the
/// attempt when it was resolved, else the request; `report` (the veto report) and
/// `faultReport` (reports/fault_report.h) null when none was written;
/// `sandbox` the MoveOutcome::sandbox levels, `[]` when no checker ran; `inputsSha256`
/// MoveOutcome::inputs_sha256, the InputsIdentity of the bytes the checks judged, only when
/// one did (rows written before it existed lack it too); `outcome` DecisionOutcome's).
std::string DecisionRow(const MoveRequest& request, const MoveOutcome& outcome,
                        const std::string& now, const DecisionIdentity& identity,
                        const std::string& decision_id = "");

/// The intent row written before a commit: the same fields, with code "commit-intent", ok
/// true, message `committing card <id> <from>-><to> as revision <N>`, the checks that allowed
/// it, report and faultReport null, parked false, outcome "intent", and after "programs"
/// `"commit":{"rev":N,"at":<entry at>}`: the journal entry this commit appends. The commit
/// happened iff the card's journal has an entry with that rev and that `at` (a reader resolves
/// an intent without an outcome row, e.g. after a SIGKILL, by looking). `decision` is the
/// attempt's id (`decision_id`, or a new one when empty), the same as its outcome row's.
std::string IntentRow(const Attempt& attempt, const TransitionCommit& commit,
                      const DecisionIdentity& identity, const std::string& decision_id = "");

/// Appends DecisionRow(request, outcome, now, identity, decision_id) through
/// AppendDecisionRow.
Status AppendDecision(FileSystem& fs, const std::string& root, const MoveRequest& request,
                      const MoveOutcome& outcome, const std::string& now,
                      const DecisionIdentity& identity = {}, const std::string& decision_id = "");

/// Appends `row` + "\n" through FileSystem::AppendDurable (creating the directory). Errors
/// carry AppendDurable's message (the real errno, the path, the fix).
Status AppendDecisionRow(FileSystem& fs, const std::string& root, const std::string& row);

}  // namespace devflow

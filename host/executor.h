// The transition executor (reference/devflow-upstream.md §2.2): checks the attempt against the
// card, runs the waterfall outside any lock, commits through the store, and then commits the
// parks that fail-closed policies asked for (§4.10) — after the vetoed attempt has returned,
// through the whole waterfall, with the attempt's revision.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "host/store.h"
#include "host/waterfall.h"

namespace devflow {

/// One `move` as the user asked for it.
struct MoveRequest {
  std::string id;
  Location to = Location::kDraft;
  std::optional<int64_t> expected_revision;  // default: the card's current revision
  Actor by{"human", std::nullopt, std::nullopt};
  std::optional<std::string> reason;
  bool dry_run = false;  // run everything, write nothing
};

/// What happened. `code` is "committed", "vetoed", or a store rejection code
/// ("revision-mismatch", "illegal-edge", "reason-required", "write-contended", "archived",
/// "not-found", "corrupt", or an errno name for an infrastructure failure).
struct MoveOutcome {
  bool ok = false;
  std::string code;
  std::string message;       // one line for humans (a veto carries the reason verbatim)
  std::optional<Card> card;  // the card after the move (or as it stands)
  std::vector<GateCheck> checks;
  bool failed_closed = false;  // a policy could not decide and asked to park the card
  bool parked = false;         // the park was committed
  std::string park_message;    // "would park …" under dry run, or the park's failure
  std::vector<AttemptContext::Report> reports;
  Attempt attempt;
  /// Sandbox levels the checkers of this attempt ran (or were refused) under, distinct, in
  /// order ("bwrap", "landlock-abi<N>+seccomp", "off", "none"); empty when no checker was
  /// dispatched. Filled by the caller that owns the dispatcher (the ledger row's `sandbox`).
  std::vector<std::string> sandbox;
  /// The inputsSha256 of the checks that decided (Judged::inputs_sha256, InputsIdentity of the
  /// bytes each judged), innermost first, joined by ","; "" when no check judged inputs.
  std::string inputs_sha256;
};

/// Called just before each Store::CommitTransition of a real move (the move itself, and the
/// park of a fail-closed veto) with the attempt being committed and the commit. It writes the
/// durable record that the commit is about to happen (the decision ledger's intent row, issue 7
/// item 10). A failed Status refuses that commit: nothing is committed, and the outcome gets the
/// Status's code (e.g. "ledger-unwritable") and message.
using BeforeCommit = std::function<Status(const Attempt&, const TransitionCommit&)>;

/// Runs moves on one store with one waterfall.
class Executor {
 public:
  Executor(Store& store, std::vector<Policy*> policies, Clock& clock, Warnings& warnings)
      : store_(store), policies_(std::move(policies)), clock_(clock), warnings_(warnings) {}

  /// Installs the hook run before every commit (none by default).
  void SetBeforeCommit(BeforeCommit hook) { before_commit_ = std::move(hook); }
  /// Installs the hook run once a move's attempt is resolved, before its waterfall (not for
  /// the park that may follow): the server records it for the ledger row of an attempt that a
  /// drain interrupts (docs/server.md "Reload and drain").
  void SetOnResolved(std::function<void(const Attempt&)> hook) { on_resolved_ = std::move(hook); }

  /// Steps of §2.2: read; revision CAS ("revision-mismatch": `card <id> is at revision N, not
  /// the expected M; re-read and retry`); legality ("illegal-edge"); rework reason
  /// ("reason-required"); waterfall; on allow, Store::CommitTransition (lock + re-check). On a
  /// fail-closed veto, the requested park is committed afterwards (or described under dry run);
  /// a park that cannot commit only warns `<policy>: failed to park card <id> blocked: <msg>`.
  /// The BeforeCommit hook runs before each commit; its failure refuses the commit. Bytes a
  /// checker judged (Decision::judged with a recheck) are re-hashed by the commit under its
  /// lock; when they changed nothing is committed and the move fails closed like a fault of
  /// the check (JudgedBytes::FailClosed, then the park).
  MoveOutcome Move(const MoveRequest& request);

  /// Resolves the attempt the waterfall would see (for `--explain`); fails like Move's
  /// pre-waterfall checks.
  Result<Attempt> Resolve(const MoveRequest& request, Card* card_out = nullptr);

  const std::vector<Policy*>& policies() const { return policies_; }

 private:
  MoveOutcome MoveAt(const MoveRequest& request, int depth);
  /// The end of a vetoed attempt: the veto's message, and the park a fail-closed policy asked
  /// for (committed here, or described under dry run). `out` has the attempt already.
  MoveOutcome Vetoed(const MoveRequest& request, const Attempt& attempt, std::optional<Card> card,
                     const Decision& decision, const AttemptContext& context, int depth,
                     MoveOutcome out);
  Store& store_;
  std::vector<Policy*> policies_;
  Clock& clock_;
  Warnings& warnings_;
  BeforeCommit before_commit_;
  std::function<void(const Attempt&)> on_resolved_;
};

}  // namespace devflow

// The transition waterfall (SPEC §4, reference §2.3): policies run in config order; each
// delegates to the rest, vetoes without delegating, or delegates and appends a check to an
// allowing result on the way back. Checks therefore read innermost (last policy) first.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/journal.h"
#include "host/stages.h"
#include "host/warnings.h"

namespace devflow {

/// TransitionAttempt (reference §2.1): what every policy sees.
struct Attempt {
  std::string id;
  Location from = Location::kDraft;
  Location to = Location::kDraft;
  int64_t expected_revision = 0;
  Actor by{"human", std::nullopt, std::nullopt};
  std::optional<std::string> reason;
  std::string root;  // absolute devflow root
  std::string at;    // ISO timestamp stamped at resolution; becomes the journal entry's `at`
  Edge edge() const { return Edge{from, to}; }
};

class JudgedBytes;  // below

/// What one check judged that lies outside the journal: the agent gate's inputs (issue 7,
/// docs/decisions.md "The commit re-hashes what the checker judged").
struct Judged {
  /// InputsIdentity (reports/verdict_cache.h) of the bytes judged: the ledger's inputsSha256.
  std::string inputs_sha256;
  /// Set when time passed between the read of those bytes and the decision (a checker ran):
  /// the commit re-checks them under its lock. Null on a cache hit, whose inputs were read and
  /// hashed once, just now (issue 11: one read of each thing).
  std::shared_ptr<JudgedBytes> recheck;
};

/// TransitionDecision: allow {approvedBy?, checks} or veto {reason}.
struct Decision {
  bool allowed = true;
  std::string reason;  // veto only
  std::optional<Actor> approved_by;
  std::vector<GateCheck> checks;
  /// What the checks behind this decision judged, innermost first (not part of upstream's
  /// TransitionDecision: the executor's and the ledger's, never serialised to a caller).
  std::vector<Judged> judged;

  static Decision Allow() { return Decision{}; }
  static Decision Veto(std::string reason) {
    Decision d;
    d.allowed = false;
    d.reason = std::move(reason);
    return d;
  }
};

/// What a fail-closed veto's reason says of the park it asks for (reference §4.10, SPEC §5):
/// `<check> could not run: <fault>` + kParkClaim [+ `; fault report: <path>`]. The policy cannot
/// know whether the park will commit; the executor can: when the park does not commit, it
/// replaces this claim in the move's message with what happened (Executor::Move), so no message
/// says "parked" for a card that was not.
inline constexpr char kParkClaim[] = "; the card is parked blocked until the deployment recovers";

/// A park the policy asks for when it cannot decide (fail closed). The executor commits it
/// after the vetoed attempt has returned, through the whole waterfall (reference §4.10).
struct ParkRequest {
  Actor by;            // e.g. {command, "devflow-agent-gate"}
  std::string reason;  // e.g. "agent check for designing->ready failed closed: <fault>"
  std::string policy;  // plugin id that asked, for the warning prefix
};

struct Card;  // host/store.h

/// Side channels of one attempt. Policies never write the journal themselves.
struct AttemptContext {
  bool dry_run = false;  // write nothing: no report, no cache record, no park
  Warnings* warnings = nullptr;
  /// The card as the executor read it to resolve this attempt (its root, id and revision are
  /// the attempt's), so a policy reads nothing twice; null when the caller read none (a policy
  /// then reads the card itself). See CardForAttempt.
  const Card* card = nullptr;
  std::vector<ParkRequest> parks;  // filled by policies, drained by the executor
  /// Veto reports: the path written (or that would be written, under dry_run) and its text;
  /// and fault reports (`fault` true, reports/fault_report.h), only ever written ones.
  struct Report {
    std::string path;
    std::string text;
    bool written = false;
    bool fault = false;
  };
  std::vector<Report> reports;
  void Warn(const std::string& line) {
    if (warnings) warnings->Warn(line);
  }
};

/// The bytes a check judged, as the commit re-checks them (Judged::recheck). The executor hands
/// Changed() to Store::CommitTransition, which calls it under the commit lock right before the
/// journal append; a change refuses the commit, and nothing judged is committed.
class JudgedBytes {
 public:
  virtual ~JudgedBytes() = default;
  /// Re-reads and re-hashes every piece judged: nullopt when each still has the bytes judged,
  /// else why the commit is refused, in one of two codes:
  /// - "inputs-changed": a registered input's bytes changed in place (same kind:rev; upstream's
  ///   artifacts are never rewritten, so a tool or the producer did it behind the store's back):
  ///   `<path> changed while the checker judged it; move again to judge the new bytes` (a piece
  ///   that cannot be read now says so, in parentheses, before the `;`). The move fails closed
  ///   through FailClosed: fault report, park.
  /// - "card-edited": card.md's title or body, which the prompt carries, were edited (the card's
  ///   text is edited in place by people and agents alike): `<card.md>'s title or body changed
  ///   while the checker judged it; move again to judge the new text` (or `<card.md> changed
  ///   while the checker judged it (the card cannot be read now: …); …`). The move is refused as
  ///   a store conflict is (exit 4, a `rejected` ledger row), nothing parked: the edit is not a
  ///   fault of the deployment, and the next move judges the new text (docs/decisions.md).
  virtual std::optional<Status> Changed() = 0;
  /// The fail-closed veto of the attempt whose inputs changed (`fault` is the message of
  /// Changed()'s "inputs-changed"): the
  /// policy's `could not run: <fault>` + kParkClaim reason (+ its fault report), the park request
  /// in `context.parks`, the report in `context.reports`, this check's Judged in `judged`.
  virtual Decision FailClosed(const std::string& fault, AttemptContext& context) = 0;
};

/// Continues the waterfall with the rest of the policies; the last `next` allows.
using Next = std::function<Decision()>;

/// One admission policy. Implementations must not throw; the waterfall still converts an
/// escaped exception into a veto (fail closed) naming the policy.
class Policy {
 public:
  virtual ~Policy() = default;
  /// Built-in plugin id, e.g. "devflow-agent-gate".
  virtual std::string id() const = 0;
  virtual Decision Admit(const Attempt& attempt, AttemptContext& context, const Next& next) = 0;
  /// `move --explain`: describe, without dispatching or writing anything, what this policy
  /// would do for the attempt (one paragraph of human text, lines joined with '\n').
  virtual std::string Explain(const Attempt& attempt) = 0;
};

/// Runs `policies` in order for one attempt. A policy that throws vetoes with
/// `policy <id> failed: <what>` (fail closed).
Decision RunWaterfall(const std::vector<Policy*>& policies, const Attempt& attempt,
                      AttemptContext& context);

}  // namespace devflow

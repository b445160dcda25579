#include "host/executor.h"

#include "host/interrupt.h"

#include <algorithm>
#include <string>

namespace devflow {
namespace {

std::string Quoted(Location l) { return "\"" + std::string(LocationName(l)) + "\""; }

std::string LegalTargets(const Card& card) {
  std::string out;
  for (int i = 0; i <= static_cast<int>(Location::kBlocked); ++i) {
    auto to = static_cast<Location>(i);
    if (IsLegalTransition(card.stage, to, card.blocked_from, card.service_class)) {
      if (!out.empty()) out += ", ";
      out += LocationName(to);
    }
  }
  return out.empty() ? "none (the card is done)" : out;
}

// A fail-closed policy's reason ends its fault with kParkClaim (host/waterfall.h). When the
// card is not parked (a dry run, or a park that failed), the claim is replaced by what is true;
// a reason without the claim gets the truth appended.
void ReplaceParkClaim(std::string& message, const std::string& truth) {
  if (size_t at = message.find(kParkClaim); at != std::string::npos) {
    message.replace(at, sizeof kParkClaim - 1, truth);
  } else {
    message += truth;
  }
}

// The ledger's inputsSha256 of a decision (MoveOutcome::inputs_sha256).
std::string JudgedSha256(const Decision& decision) {
  std::string out;
  for (const Judged& j : decision.judged) {
    if (j.inputs_sha256.empty()) continue;
    if (!out.empty()) out += ',';
    out += j.inputs_sha256;
  }
  return out;
}

}  // namespace

Result<Attempt> Executor::Resolve(const MoveRequest& request, Card* card_out) {
  // The decision and its commit need the fold's state, not each entry of the journal.
  Result<Card> read = store_.Read(request.id, FoldKeeps::kState);
  if (!read.ok()) return read.status();
  Card local;
  Card* card = card_out ? card_out : &local;
  *card = std::move(*read);
  const int64_t current = card->stage_revision;
  const int64_t expected = request.expected_revision.value_or(current);
  if (expected != current) {
    return Status::Error("revision-mismatch", "card " + request.id + " is at revision " +
                                                  std::to_string(current) + ", not the expected " +
                                                  std::to_string(expected) +
                                                  "; re-read the card and retry");
  }
  if (!IsLegalTransition(card->stage, request.to, card->blocked_from, card->service_class)) {
    std::string why = "card " + request.id + " cannot move from " + Quoted(card->stage) + " to " +
                      Quoted(request.to);
    if (card->stage == Location::kBlocked && card->blocked_from) {
      why += "; a blocked card returns only to " + Quoted(*card->blocked_from);
    } else {
      why += "; legal moves from here: " + LegalTargets(*card);
    }
    return Status::Error("illegal-edge", why);
  }
  if (IsReworkEdge(card->stage, request.to) &&
      (!request.reason || request.reason->find_first_not_of(" \t\r\n") == std::string::npos)) {
    return Status::Error("reason-required", "moving card " + request.id + " from " +
                                                Quoted(card->stage) + " back to " +
                                                Quoted(request.to) +
                                                " is rework; say why with --reason");
  }
  Attempt attempt;
  attempt.id = request.id;
  attempt.from = card->stage;
  attempt.to = request.to;
  attempt.expected_revision = expected;
  attempt.by = request.by;
  attempt.reason = request.reason;
  attempt.root = store_.root();
  attempt.at = clock_.NowIso();
  return attempt;
}

MoveOutcome Executor::Vetoed(const MoveRequest& request, const Attempt& attempt,
                             std::optional<Card> card, const Decision& decision,
                             const AttemptContext& context, int depth, MoveOutcome out) {
  out.code = "vetoed";
  out.message = "devflow: transition of card " + request.id + " to " + Quoted(request.to) +
                " was rejected: " + decision.reason;
  out.card = std::move(card);
  if (context.parks.empty()) return out;
  out.failed_closed = true;
  const ParkRequest& park = context.parks.front();
  if (depth > 0) {
    // A park whose own waterfall failed closed: parking again would be blocked->blocked.
    return out;
  }
  if (request.dry_run) {
    // Nothing is parked under a dry run: the policy's "is parked" claim says "would be".
    ReplaceParkClaim(out.message,
                     "; the card would be parked blocked until the deployment recovers");
    out.park_message = "would park card " + request.id + " blocked: " + park.reason;
    return out;
  }
  // The park runs after the vetoed attempt has returned, with the attempt's revision and
  // through the whole waterfall (reference §4.10).
  MoveRequest park_request;
  park_request.id = request.id;
  park_request.to = Location::kBlocked;
  park_request.expected_revision = attempt.expected_revision;
  park_request.by = park.by;
  park_request.reason = park.reason;
  MoveOutcome parked = MoveAt(park_request, depth + 1);
  if (parked.ok) {
    out.parked = true;
    out.card = std::move(parked.card);
  } else {
    out.park_message = parked.message;
    // The policy's reason said the card is parked; it is not. The message says what
    // happened instead, wherever it is shown (CLI text, --json, the server, the ledger row).
    const std::string truth =
        "; nothing was committed and the card was NOT parked: " + parked.message;
    ReplaceParkClaim(out.message, truth);
    // No row for the park means no park, and no row for this move either: the move is
    // refused for its ledger, as a committing one would be (issue 7 item 10).
    if (parked.code == "ledger-unwritable") out.code = parked.code;
    warnings_.Warn(park.policy + ": failed to park card " + request.id +
                   " blocked: " + parked.message);
  }
  return out;
}

MoveOutcome Executor::Move(const MoveRequest& request) { return MoveAt(request, 0); }

MoveOutcome Executor::MoveAt(const MoveRequest& request, int depth) {
  MoveOutcome out;
  Card card;
  Result<Attempt> attempt = Resolve(request, &card);
  if (!attempt.ok()) {
    out.code = attempt.status().code();
    out.message = attempt.status().message();
    if (!card.id.empty()) out.card = std::move(card);
    return out;
  }
  out.attempt = *attempt;
  if (depth == 0 && on_resolved_) on_resolved_(*attempt);

  AttemptContext context;
  context.dry_run = request.dry_run;
  context.warnings = &warnings_;
  context.card = &card;  // the policies read the card this attempt was resolved against
  Decision decision = RunWaterfall(policies_, *attempt, context);
  context.card = nullptr;
  out.reports = context.reports;
  // SIGTERM/SIGINT/SIGHUP during the waterfall (host/interrupt.h): the checker's tree is
  // already dead; nothing is committed, not even a park (issue 7 item 10).
  if (int sig = InterruptSignal()) {
    out.code = "interrupted";
    // No "devflow:" prefix: this is the host's message, not upstream's, and the CLI prefixes
    // its stderr lines with "devflow-gate: " (one prefix).
    out.message = "move of card " + request.id + " along " + attempt->edge().Name() +
                  " was interrupted by " + InterruptName(sig) + "; nothing was committed";
    out.card = std::move(card);
    return out;
  }

  out.inputs_sha256 = JudgedSha256(decision);
  if (!decision.allowed) {
    return Vetoed(request, *attempt, std::move(card), decision, context, depth, std::move(out));
  }

  out.checks = decision.checks;
  Gate gate;
  gate.approved_by = decision.approved_by;
  gate.checks = decision.checks;
  TransitionCommit commit;
  commit.id = request.id;
  commit.expected_revision = attempt->expected_revision;
  commit.from = attempt->from;
  commit.to = attempt->to;
  commit.by = request.by;
  commit.reason = request.reason;
  if (gate.approved_by || !gate.checks.empty()) commit.gate = gate;
  commit.at = attempt->at;

  if (request.dry_run) {
    out.card = std::move(card);
    out.ok = true;
    out.code = "committed";
    out.message = "dry run: card " + request.id + " would move " +
                  std::string(LocationName(attempt->from)) + "->" +
                  std::string(LocationName(attempt->to)) + "; nothing was written";
    return out;
  }
  if (before_commit_) {
    if (Status recorded = before_commit_(*attempt, commit); !recorded.ok()) {
      // No durable record of the commit, so no commit (issue 7 item 10).
      out.code = recorded.code();
      out.message = recorded.message();
      out.checks.clear();
      out.card = std::move(card);
      return out;
    }
  }
  // The bytes a checker judged while time passed are re-hashed under the commit lock, right
  // before the append: an input rewritten in place while the checker ran (same kind:rev, new
  // bytes) is never committed as judged, and fails closed; card.md's text edited meanwhile
  // refuses the commit as a conflict (issue 7, docs/decisions.md).
  JudgedBytes* changed = nullptr;
  if (std::any_of(decision.judged.begin(), decision.judged.end(),
                  [](const Judged& j) { return j.recheck != nullptr; })) {
    commit.before_append = [&decision, &changed]() -> Status {
      for (const Judged& each : decision.judged) {
        if (!each.recheck) continue;
        if (std::optional<Status> refused = each.recheck->Changed()) {
          if (refused->code() == "inputs-changed") changed = each.recheck.get();
          return *refused;
        }
      }
      return Status::Ok();
    };
  }
  // The fold the decision was made on goes to the commit, which folds only what was appended
  // since (or everything again, when the journal changed any other way).
  Result<Card> committed = store_.CommitTransition(commit, std::move(card));
  if (!committed.ok() && changed && committed.status().code() == "inputs-changed") {
    // Nothing was committed: the check's allow is void, and the move fails closed as a fault
    // of that check would (fault report, park, ledger row saying why).
    Decision failed = changed->FailClosed(committed.status().message(), context);
    out.reports = context.reports;
    out.checks.clear();
    out.inputs_sha256 = JudgedSha256(failed);
    std::optional<Card> now;
    if (Result<Card> read = store_.Read(request.id); read.ok()) now = std::move(*read);
    return Vetoed(request, *attempt, std::move(now), failed, context, depth, std::move(out));
  }
  if (!committed.ok()) {
    // Nothing was committed: no check stands, and the card is reported as it now is.
    out.code = committed.status().code();
    out.message = committed.status().message();
    out.checks.clear();
    if (Result<Card> now = store_.Read(request.id); now.ok()) out.card = *now;
    return out;
  }
  out.ok = true;
  out.code = "committed";
  out.card = std::move(*committed);
  out.message = "card " + request.id + " moved " + std::string(LocationName(attempt->from)) + "->" +
                std::string(LocationName(attempt->to)) + " (revision " +
                std::to_string(committed->stage_revision) + ")";
  return out;
}

}  // namespace devflow

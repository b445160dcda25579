// devflow-grounding-gate (SPEC §6): before a configured edge, ground the newest artifact of the
// edge's claim kind against the card title and body and the newest artifact of each evidence
// kind (checker/grounding.h), veto on any ungrounded specific, and ledger every verdict.
#pragma once

#include <string>

#include "config/config.h"
#include "host/os.h"
#include "host/waterfall.h"
#include "plugin/agent_gate.h"  // CardReader

namespace devflow {

/// The grounding gate policy. Per configured edge (first match wins):
///  - verified: delegates; on a downstream allow appends the check
///    {by: {kind: "command", name: "devflow-grounding-gate"}, summary: `every <noun list> in
///    <kind> (rev <n>) appears in the evidence`} (or `<kind> (rev <n>) cites no …`);
///  - rejected: vetoes `ungrounded specifics in <kind>: <reason>; <reason>; …` (reasons as
///    `devflow-gate ground` prints them: kinds in order, tokens sorted, then required patterns);
///  - no artifact of the claim kind: vetoes `ungrounded specifics in <kind>: the card has no
///    <kind> artifact to ground; register one with devflow-gate artifact add <id> <kind> FILE`
///    (a plain veto: the card's state, not a fault);
///  - fault (the card, the claim or an evidence artifact cannot be read, a require pattern does
///    not compile, the ledger cannot be written): fails closed like the agent gate — vetoes
///    `grounding check for <edge> could not run: <fault>; the card is parked blocked until the
///    deployment recovers` and asks for a park with reason `grounding check for <edge> failed
///    closed: <fault>` by {command, devflow-grounding-gate}.
/// Every verdict (not faults, not dry runs) is appended to the ledger (reports/ledger.h) before
/// the decision returns; rows carry label `<card id> <edge>`, state "allowed" / "vetoed", and
/// the fields card, edge, claim {kind, rev}, evidence (["title", "body", "<kind>:<rev>", …])
/// and options {compat, exclude_keys, require}.
class GroundingGate : public Policy {
 public:
  GroundingGate(GroundingGateConfig config, CardReader read_card, FileSystem& fs);

  std::string id() const override { return "devflow-grounding-gate"; }
  Decision Admit(const Attempt& attempt, AttemptContext& context, const Next& next) override;
  std::string Explain(const Attempt& attempt) override;

  /// `<root>/ledger/grounding.jsonl` by default; a relative `ledger` resolves against the card
  /// workspace (parent of the root), never the process cwd.
  std::string LedgerPath(const std::string& root) const;

 private:
  const GroundingEdgeConfig* Find(const Edge& edge) const;
  GroundingGateConfig config_;
  CardReader read_card_;
  FileSystem& fs_;
};

}  // namespace devflow

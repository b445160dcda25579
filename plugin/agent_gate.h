// devflow-agent-gate (SPEC §5, reference/devflow-upstream.md §4): before a configured edge,
// dispatch a one-shot independent checker, parse the last verdict block of its reply, and
// allow (recording a check), veto (writing a report), or fail closed (veto + park blocked).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "checker/dispatch.h"
#include "config/config.h"
#include "host/os.h"
#include "host/store.h"
#include "host/waterfall.h"

namespace devflow {

/// Reads a card of a root, read-only (the gate never writes the journal).
using CardReader = std::function<Result<Card>(const std::string& root, const std::string& id)>;

/// The card a policy decides an attempt on, read once per move (issue 11): the executor's read
/// in `context.card` when it is the attempt's card (same root, id and revision), else
/// `read(attempt.root, attempt.id)`, kept in `held`. Errors: the reader's.
Result<const Card*> CardForAttempt(const Attempt& attempt, const AttemptContext& context,
                                   const CardReader& read, std::optional<Card>& held);

/// The agent gate policy.
///
/// Messages (upstream strings, reference §4.3 / §4.10):
///  - veto:   `agent check vetoed <edge>: <summary>; full report: <abs report path>`
///  - cached: `agent check vetoed <edge> (cached): <summary>; full report: <path>`
///  - fault:  `agent check for <edge> could not run: <fault>; the card is parked blocked until
///            the deployment recovers`, with a park request whose reason is
///            `agent check for <edge> failed closed: <fault>` by {command, devflow-agent-gate}.
///  - the caller's deadline left too little time to start the check (the dispatch's code
///    "deadline", host/deployment/check_budget.h): `agent check for <edge> was not started:
///    <the dispatch's text>`, a veto with no park (trial15 R3).
/// The check recorded on allow: {by:{kind:"agent"}, verdict:"allowed", summary} (`[cached] `
/// prefix on a cache hit), appended after downstream checks.
class AgentGate : public Policy {
 public:
  AgentGate(AgentGateConfig config, CardReader read_card, CheckerDispatch& checker, FileSystem& fs);

  std::string id() const override { return "devflow-agent-gate"; }
  Decision Admit(const Attempt& attempt, AttemptContext& context, const Next& next) override;
  std::string Explain(const Attempt& attempt) override;

  /// `<root>/reports/agent-gate` by default; a relative reportDir resolves against the card
  /// workspace (parent of the root), never the process cwd.
  std::string ReportDir(const std::string& root) const;
  /// The cache directory, or "" when verdictCacheDir is unset (caching disabled).
  std::string CacheDir(const std::string& root) const;

 private:
  struct Inputs;
  AgentGateConfig config_;
  CardReader read_card_;
  CheckerDispatch& checker_;
  FileSystem& fs_;
};

}  // namespace devflow

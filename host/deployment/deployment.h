// A deployment: one devflow root served with one loaded config — the store, the checker, the
// waterfall built through the policy registry — and the move and admission paths that the CLI
// (`move`) and the server (`/v1/moves`, `/v1/admit`) share, so both write the same bytes
// (journal, reports, cache, decision ledger) for the same decision.
//
// nlohmann/json stays in deployment.cc: the JSON answers cross this header as text.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checker/subprocess.h"
#include "config/config.h"
#include "host/decision_ledger.h"
#include "host/executor.h"
#include "host/status.h"
#include "host/store.h"
#include "host/warnings.h"

namespace devflow {

/// Everything a gated command needs, built from a root and a config file.
struct Deployment {
  std::string root;  // absolute devflow root
  GateConfig config;
  std::unique_ptr<Store> store;
  std::unique_ptr<SubprocessChecker> checker;  // spawns the provider's checker
  std::unique_ptr<CheckerDispatch> dispatch;   // what the policies call (wraps `checker`)
  std::vector<std::unique_ptr<Policy>> owned;
  std::vector<Policy*> policies;  // the waterfall, config order
  /// Directories the policies replace files in (plugin/registry.h OwnedDirs), for the sweep.
  std::vector<std::string> owned_dirs;
  std::string self_path;  // the devflow-gate binary (builtin providers' program)
};

/// How LoadDeployment builds one.
struct DeploymentOptions {
  std::string root;              // absolute devflow root
  std::string config_file;       // absolute config path
  std::string self_path;         // absolute path of the devflow-gate binary (builtin providers)
  Warnings* warnings = nullptr;  // store warnings; default StderrWarnings()
  /// SubprocessOptions::remember_probe and ::sweep_scratch: false for `--dry-run`, which writes
  /// (and deletes) nothing anywhere but its own scratch dir.
  bool remember_probe = true;
  /// Wraps the subprocess checker in what the policies call (the server's bounded, deadline-
  /// aware runner); unset: the policies call the subprocess checker directly.
  std::function<std::unique_ptr<CheckerDispatch>(CheckerDispatch& inner)> wrap_checker;
};

/// Loads the config file and pins every command provider's program to an absolute path now
/// (ResolveProviderPrograms against the workspace, the parent of `root`, and the host's $PATH
/// as it is at load time; issue 7 item 8). Errors: LoadConfigFile's.
Result<GateConfig> LoadPinnedConfig(const std::string& file, const std::string& root);

/// The search path provider programs are resolved on: SearchPath() (checker/sandbox.h), i.e.
/// $PATH's absolute entries, or "/usr/local/bin:/usr/bin:/bin" when none is left.
std::string ProgramSearchPath();

/// What every decision row of this deployment names: the config file, its SHA-256 and each
/// provider's program (host/decision_ledger.h).
DecisionIdentity IdentityOf(const Deployment& d);

/// Loads the config (LoadPinnedConfig) and builds the deployment. Errors: LoadConfigFile's (code
/// "config" with one problem per line, or an errno code), BuildPolicies's.
Result<std::unique_ptr<Deployment>> LoadDeployment(const DeploymentOptions& options);

/// A real (not dry-run) move of `request` as `devflow-gate move` makes it: stale temporaries
/// of dead writers swept from the card's directories and the policies' owned directories,
/// the executor's move with a commit-intent row written before each commit (no row, no
/// commit: code "ledger-unwritable", unless `ledger: best-effort`), then the outcome row (a
/// row that cannot be written is warned about on `warnings`, and `*ledger_failed` set when
/// given). An exception escaping the move becomes code "internal-error" (its message says,
/// from the journal, whether the commit happened) with its row. Under dry run: the executor's
/// move only, nothing written. Every row of the attempt carries `decision_id` (a new
/// NewDecisionId when empty), so a caller that answers with an id answers the ledger's.
/// `on_resolved`, when set, is Executor::SetOnResolved's hook.
MoveOutcome RunMove(Deployment& d, const MoveRequest& request, Warnings& warnings,
                    bool* ledger_failed = nullptr, const std::string& decision_id = "",
                    const std::function<void(const Attempt&)>& on_resolved = {});

/// `move --json`'s object for an outcome, compact:
/// {"ok","code","message","card","checks","parked","report"} plus under dry run
/// "dryRun", "wouldPark"?, "reportText"?.
std::string MoveJson(const MoveRequest& request, const MoveOutcome& outcome);

/// `move --explain`'s content for the resolved attempt: the human text and the JSON object
/// {"card","edge","plugins":[{"id","explain"}]}. Fails like the executor's pre-waterfall checks.
struct Explanation {
  std::string text;
  std::string json;
};
Result<Explanation> ExplainMove(Deployment& d, const MoveRequest& request);

/// `card show --json`'s object (pretty when indent >= 0).
std::string CardJson(const Card& card, int indent = -1);
/// The short card object of `move --json`: {"id","stage","stageRevision","blockedFrom"?}.
std::string CardBriefJson(const Card& card);

/// One admission for a caller whose own store commits (POST /v1/admit): the TransitionAttempt
/// as the caller resolved it.
struct AdmitRequest {
  Attempt attempt;
  bool dry_run = false;
};

/// What the admission decided. `decision` is the waterfall's; `park` is set when a policy
/// failed closed (for the caller to queue on its own card chain); nothing is committed.
struct AdmitOutcome {
  Decision decision;
  std::optional<ParkRequest> park;
  std::vector<AttemptContext::Report> reports;
  /// The ledger code: "admitted", "vetoed", or a pre-waterfall refusal ("not-found",
  /// "revision-mismatch", "illegal-edge", ... ) which is also a veto of the attempt.
  std::string code;
};

/// Runs the waterfall for an attempt resolved by the caller. The card is read from the
/// attempt's root; an attempt whose `from` or `expectedRevision` no longer matches the card,
/// or whose edge is not legal, is vetoed with the store's message (no park). Reports and cache
/// records are written as for a move, and a decision-ledger row is appended (nothing under
/// dry run). A row that cannot be written sets `*ledger_failed`; it turns an allow into a veto
/// with code "ledger-unwritable" and no park (issue 7 item 10: the caller commits on an
/// allow, and no commit happens without its row), unless `ledger: best-effort` (then warned,
/// as is a veto whose row is lost). Never
/// commits a journal line. The row carries `decision_id` (a new NewDecisionId when empty).
AdmitOutcome RunAdmit(Deployment& d, const AdmitRequest& request, Warnings& warnings,
                      bool* ledger_failed = nullptr, const std::string& decision_id = "");

/// The TransitionDecision JSON of an admission:
/// {"allowed":true,"approvedBy"?,"checks"?} or {"allowed":false,"reason","park"?:{"by","reason"}},
/// plus "decisionId" when `decision_id` is not empty.
std::string AdmitJson(const AdmitOutcome& outcome, const std::string& decision_id);

}  // namespace devflow

#include "host/deployment/deployment.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "checker/sandbox.h"
#include "host/cleanup.h"
#include "host/decision_ledger.h"
#include "host/json_output.h"
#include "host/json_string.h"
#include "host/os.h"
#include "host/terminal.h"
#include "host/unwind.h"
#include "plugin/registry.h"
#include "reports/gate_layout.h"

namespace devflow {
namespace {

using ojson = nlohmann::ordered_json;

std::string Dump(const ojson& j, int indent = -1) { return OutputJson(j, indent); }

ojson Brief(const Card& c) {
  ojson j;
  j["id"] = c.id;
  j["stage"] = std::string(LocationName(c.stage));
  j["stageRevision"] = c.stage_revision;
  if (c.blocked_from) j["blockedFrom"] = std::string(LocationName(*c.blocked_from));
  return j;
}

std::string Quoted(Location l) { return "\"" + std::string(LocationName(l)) + "\""; }

// An exception escaped the move (issue 7 item 10): never std::terminate. Whether the commit
// happened is read back from the journal (the announced rev with the attempt's `at`).
MoveOutcome Crashed(Deployment& d, const MoveRequest& request,
                    const std::optional<std::pair<Attempt, int64_t>>& intent,
                    const std::string& what) {
  MoveOutcome out;
  out.code = "internal-error";
  bool committed = false;
  try {
    Result<Card> now = d.store->Read(request.id);
    if (now.ok()) {
      out.card = *now;
      if (intent) {
        out.attempt = intent->first;
        for (const JournalEntry& entry : now->entries) {
          committed = committed || (entry.rev == intent->second && entry.at == intent->first.at);
        }
      }
    }
  } catch (...) {  // the read back failed the same way: nothing more is known
  }
  out.ok = committed;
  out.message = "internal error while moving card " + request.id + ": " + what + "; " +
                (committed ? "the transition was committed (journal revision " +
                                 std::to_string(intent->second) + ")"
                           : std::string("nothing was committed")) +
                "; report this with the command that failed";
  return out;
}

}  // namespace

Result<GateConfig> LoadPinnedConfig(const std::string& file, const std::string& root) {
  Result<GateConfig> config = LoadConfigFile(file);
  if (!config.ok()) return config;
  // The workspace is the judged agent's: no program is ever found through a $PATH entry in it
  // (checker/sandbox.h SearchPath), not a provider's, not bubblewrap, not the checker's own.
  DistrustTree(ParentPath(root));
  ResolveProviderPrograms(*config, ParentPath(root), ProgramSearchPath());
  return config;
}

std::string ProgramSearchPath() { return SearchPath(); }

DecisionIdentity IdentityOf(const Deployment& d) {
  return DecisionIdentity{d.config.file, d.config.sha256, ProviderPrograms(d.config, d.self_path)};
}

Result<std::unique_ptr<Deployment>> LoadDeployment(const DeploymentOptions& options) {
  auto d = std::make_unique<Deployment>();
  d->root = options.root;
  d->self_path = options.self_path;
  Result<GateConfig> config = LoadPinnedConfig(options.config_file, options.root);
  if (!config.ok()) return config.status();
  d->config = std::move(*config);
  // Two agent gates writing one report (or cache) dir on one edge would replace each other's
  // files: refused at load, as `config check` reports it (reports/gate_layout.h).
  if (std::vector<std::string> shared = SharedGateDirs(d->config, d->root); !shared.empty()) {
    std::string message;
    for (const std::string& line : shared) {
      message += (message.empty() ? "" : "\n") + d->config.file + ": " + line;
    }
    return Status::Error("config", message);
  }
  Warnings& warnings = options.warnings ? *options.warnings : StderrWarnings();
  d->store = std::make_unique<Store>(d->root, RealFileSystem(), SystemClock(), warnings);
  SubprocessOptions checker_options;
  checker_options.remember_probe = options.remember_probe;
  checker_options.sweep_scratch = options.remember_probe;  // a dry run deletes nothing
  d->checker =
      std::make_unique<SubprocessChecker>(d->config.providers, options.self_path, checker_options);
  if (options.wrap_checker) d->dispatch = options.wrap_checker(*d->checker);
  CheckerDispatch* dispatch = d->dispatch ? d->dispatch.get() : d->checker.get();
  Store* store = d->store.get();
  CardReader reader = [store](const std::string& root, const std::string& id) -> Result<Card> {
    if (root != store->root()) {
      return Status::Error("not-found", "card " + id + " belongs to root " + root +
                                            ", which this deployment does not serve");
    }
    return store->Read(id);
  };
  Result<std::vector<std::unique_ptr<Policy>>> built =
      BuildPolicies(d->config, PolicyDeps{reader, dispatch, &RealFileSystem()});
  if (!built.ok()) return built.status();
  d->owned = std::move(*built);
  for (const auto& policy : d->owned) d->policies.push_back(policy.get());
  d->owned_dirs = OwnedDirs(d->config, d->root);
  return d;
}

MoveOutcome RunMove(Deployment& d, const MoveRequest& request, Warnings& warnings,
                    bool* ledger_failed, const std::string& decision_id,
                    const std::function<void(const Attempt&)>& on_resolved) {
  // Temp files of writers that died mid-write are removed before anything reads these dirs
  // (they are never read as records anyway: their names never match one).
  if (!request.dry_run && IsValidCardId(request.id)) {
    std::vector<std::string> swept = {d.store->CardDir(request.id),
                                      JoinPath(d.store->CardDir(request.id), "artifacts")};
    swept.insert(swept.end(), d.owned_dirs.begin(), d.owned_dirs.end());
    for (const auto& problem : RemoveStaleTemps(RealFileSystem(), swept).errors) {
      warnings.Warn("devflow-gate: could not remove a stale temporary file: " + problem);
    }
  }
  // The decision ledger (issue 7 item 10, docs/decisions.md): an intent row is durable before
  // each commit, the outcome row after the move. Without the intent row there is no commit,
  // unless the config says `ledger: best-effort`.
  const DecisionIdentity identity = IdentityOf(d);
  const std::string id = decision_id.empty() ? NewDecisionId(SystemClock().NowIso()) : decision_id;
  const std::string ledger = DecisionLedgerPath(d.root);
  std::optional<std::pair<Attempt, int64_t>> intent;  // the last commit announced, and its rev
  Executor executor(*d.store, d.policies, SystemClock(), warnings);
  if (on_resolved) executor.SetOnResolved(on_resolved);
  if (!request.dry_run) {
    executor.SetBeforeCommit([&](const Attempt& attempt, const TransitionCommit& commit) {
      Status written =
          AppendDecisionRow(RealFileSystem(), d.root, IntentRow(attempt, commit, identity, id));
      if (written.ok()) {
        intent.emplace(attempt, commit.expected_revision + 1);
        return Status::Ok();
      }
      const std::string what = "card " + commit.id + " " + attempt.edge().Name();
      if (d.config.ledger_best_effort) {
        warnings.Warn(
            "devflow-gate: committing " + what +
            " without its decision-ledger row (ledger: best-effort): " + written.message());
        return Status::Ok();
      }
      return Status::Error("ledger-unwritable",
                           "devflow-gate: " + what +
                               " was not committed: its decision-ledger row could not be "
                               "written, and no transition commits without one: " +
                               written.message() + " (or set ledger: best-effort in " +
                               d.config.file + " to commit without the row)");
    });
  }
  TakeSandboxLevels();  // only this attempt's dispatches (this thread's) count
  MoveOutcome out;
  std::optional<std::string> crashed;
  try {
    out = executor.Move(request);
  } catch (...) {
    // A coroutine's forced unwind (the server's attempts) is rethrown: it is no crash.
    crashed = CurrentExceptionWhat();
  }
  if (crashed) out = Crashed(d, request, intent, *crashed);
  out.sandbox = TakeSandboxLevels();
  // A commit-intent row of this move whose commit did not happen (a full disk at the lock or
  // the journal append, a revision taken meanwhile): the message says what the ledger holds,
  // so nobody reads the intent as a commit (issue 7 item 10). A park's unkept intent is said
  // by the executor ("the card was NOT parked: ..."); Crashed() says it its own way.
  const bool intent_unkept =
      intent && intent->first.to == request.to && !crashed && !out.ok && !out.parked;
  std::string intent_said;
  if (intent_unkept) {
    intent_said = "; nothing was committed, and the decision ledger " + ledger +
                  " holds this attempt's commit-intent row for card " + intent->first.id + " " +
                  intent->first.edge().Name() + " at revision " + std::to_string(intent->second) +
                  ", ";
    out.message += intent_said + "followed by this outcome row (code " + out.code + ")";
  }
  if (!request.dry_run && out.code != "not-found") {
    Status logged = AppendDecisionRow(
        RealFileSystem(), d.root, DecisionRow(request, out, SystemClock().NowIso(), identity, id));
    if (!logged.ok()) {
      if (ledger_failed) *ledger_failed = true;
      if (intent_unkept) {
        // The row that would have said "not committed" is not there: say what is.
        out.message.erase(out.message.rfind(intent_said));
        out.message += intent_said + "but not its outcome row (" + logged.message() +
                       "); `devflow-gate audit` reports that intent as without its outcome";
      } else if (out.code != "ledger-unwritable") {
        warnings.Warn("devflow-gate: could not record the decision in " + ledger + ": " +
                      logged.message() +
                      (intent ? "; the commit-intent row written before the commit stands as "
                                "its record"
                              : ""));
      }
    }
  }
  return out;
}

std::string MoveJson(const MoveRequest& request, const MoveOutcome& out) {
  std::optional<std::string> report, fault_report;
  for (const auto& r : out.reports) (r.fault ? fault_report : report) = r.path;
  ojson j;
  j["ok"] = out.ok;
  j["code"] = out.code;
  j["message"] = out.message;
  j["card"] = out.card ? Brief(*out.card) : ojson(nullptr);
  j["checks"] = ojson::parse(EncodeChecksJson(out.checks));
  j["parked"] = out.parked;
  j["report"] = report ? ojson(*report) : ojson(nullptr);
  j["faultReport"] = fault_report ? ojson(*fault_report) : ojson(nullptr);
  if (request.dry_run) {
    j["dryRun"] = true;
    if (!out.park_message.empty()) j["wouldPark"] = out.park_message;
    if (!out.reports.empty()) j["reportText"] = out.reports.back().text;
  }
  return Dump(j);
}

Result<Explanation> ExplainMove(Deployment& d, const MoveRequest& req) {
  Executor executor(*d.store, d.policies, SystemClock(), StderrWarnings());
  Result<Attempt> attempt = executor.Resolve(req);
  if (!attempt.ok()) return attempt.status();
  ojson plugins = ojson::array();
  std::string text = "explain: card " + req.id + " " + std::string(LocationName(attempt->from)) +
                     "->" + std::string(LocationName(attempt->to)) + " at revision " +
                     std::to_string(attempt->expected_revision) +
                     " (nothing is dispatched or written)\n";
  for (size_t i = 0; i < d.policies.size(); ++i) {
    std::string part = d.policies[i]->Explain(*attempt);
    text += "\n[" + std::to_string(i + 1) + "] " + d.policies[i]->id() + "\n" + part + "\n";
    ojson p;
    p["id"] = d.policies[i]->id();
    p["explain"] = part;
    plugins.push_back(p);
  }
  if (d.policies.empty()) text += "\nno plugins are configured: the move would be admitted\n";
  ojson j;
  j["card"] = req.id;
  j["edge"] = attempt->edge().Name();
  j["plugins"] = plugins;
  return Explanation{text, Dump(j)};
}

std::string CardBriefJson(const Card& card) { return Dump(Brief(card)); }

std::string CardJson(const Card& c, int indent) {
  ojson j = Brief(c);
  j["title"] = c.title;
  j["serviceClass"] = std::string(ServiceClassName(c.service_class));
  if (c.parent) j["parent"] = *c.parent;
  j["root"] = c.root;
  j["path"] = c.path;
  j["createdAt"] = c.created_at;
  j["updatedAt"] = c.updated_at;
  ojson arts = ojson::array();
  for (const auto& a : c.artifact_records) {
    ojson r;
    r["path"] = a.path;
    if (a.kind) r["kind"] = *a.kind;
    r["rev"] = a.rev;
    r["stage"] = std::string(LocationName(a.stage));
    arts.push_back(r);
  }
  j["artifacts"] = arts;
  j["body"] = c.body;
  return Dump(j, indent);
}

AdmitOutcome RunAdmit(Deployment& d, const AdmitRequest& request, Warnings& warnings,
                      bool* ledger_failed, const std::string& decision_id) {
  const Attempt& attempt = request.attempt;
  AdmitOutcome out;
  MoveRequest as_move;  // the ledger row's view of the attempt
  as_move.id = attempt.id;
  as_move.to = attempt.to;
  as_move.expected_revision = attempt.expected_revision;
  as_move.by = attempt.by;
  as_move.reason = attempt.reason;
  as_move.dry_run = request.dry_run;

  // The caller resolved the attempt against its own read of the card; the card is read again
  // here, once, so an attempt that no longer matches it is refused (never decided on a card
  // other than the one the caller will commit to), and the policies decide on this read.
  std::optional<Card> card;
  auto refusal = [&]() -> std::optional<Status> {
    Result<Card> read = d.store->Read(attempt.id, FoldKeeps::kState);
    if (!read.ok()) return read.status();
    card = std::move(*read);
    if (card->stage != attempt.from) {
      return Status::Error("revision-mismatch",
                           "card " + attempt.id + " is at " + Quoted(card->stage) + ", not " +
                               Quoted(attempt.from) + "; re-read the card and retry");
    }
    if (card->stage_revision != attempt.expected_revision) {
      return Status::Error("revision-mismatch", "card " + attempt.id + " is at revision " +
                                                    std::to_string(card->stage_revision) +
                                                    ", not the expected " +
                                                    std::to_string(attempt.expected_revision) +
                                                    "; re-read the card and retry");
    }
    if (!IsLegalTransition(card->stage, attempt.to, card->blocked_from, card->service_class)) {
      return Status::Error("illegal-edge", "card " + attempt.id + " cannot move from " +
                                               Quoted(card->stage) + " to " + Quoted(attempt.to));
    }
    if (IsReworkEdge(card->stage, attempt.to) &&
        (!attempt.reason || attempt.reason->find_first_not_of(" \t\r\n") == std::string::npos)) {
      return Status::Error("reason-required", "moving card " + attempt.id + " from " +
                                                  Quoted(card->stage) + " back to " +
                                                  Quoted(attempt.to) +
                                                  " is rework; say why with a reason");
    }
    return std::nullopt;
  }();

  if (refusal) {
    out.code = refusal->code();
    out.decision = Decision::Veto(refusal->message());
  } else {
    AttemptContext context;
    context.dry_run = request.dry_run;
    context.warnings = &warnings;
    context.card = &*card;  // read once: the policies decide on this same read
    TakeSandboxLevels();
    out.decision = RunWaterfall(d.policies, attempt, context);
    // The caller's store commits, not this one, so there is no commit lock to re-check under;
    // but the answer never admits bytes the checker did not see: bytes a checker judged that
    // changed while it ran fail closed here (issue 7, as Executor::Move does at its commit); a
    // card whose text was edited meanwhile is refused, unparked (host/waterfall.h JudgedBytes).
    std::optional<Status> refused;
    if (out.decision.allowed && !request.dry_run) {
      for (const Judged& j : out.decision.judged) {
        if (!j.recheck) continue;
        if ((refused = j.recheck->Changed())) {
          if (refused->code() == "inputs-changed") {
            out.decision = j.recheck->FailClosed(refused->message(), context);
          } else {
            Decision edited = Decision::Veto(refused->message());
            edited.judged = std::move(out.decision.judged);
            out.decision = std::move(edited);
          }
          break;
        }
      }
    }
    out.reports = context.reports;
    if (!out.decision.allowed && !context.parks.empty()) out.park = context.parks.front();
    out.code = out.decision.allowed                          ? "admitted"
               : refused && refused->code() == "card-edited" ? "card-edited"
                                                             : "vetoed";
  }

  // As for a move: every real attempt on a card that exists leaves its ledger row.
  if (!request.dry_run && out.code != "not-found") {
    MoveOutcome row;
    row.ok = out.decision.allowed;
    row.code = out.code;
    row.message =
        out.decision.allowed ? "admitted: the caller's store commits" : out.decision.reason;
    row.card = card;
    if (out.decision.allowed) row.checks = out.decision.checks;
    row.failed_closed = out.park.has_value();
    row.reports = out.reports;
    row.attempt = attempt;
    row.sandbox = TakeSandboxLevels();
    for (const Judged& j : out.decision.judged) {
      if (j.inputs_sha256.empty()) continue;
      row.inputs_sha256 += (row.inputs_sha256.empty() ? "" : ",") + j.inputs_sha256;
    }
    Status logged = AppendDecision(RealFileSystem(), d.root, as_move, row, SystemClock().NowIso(),
                                   IdentityOf(d), decision_id);
    if (!logged.ok()) {
      if (ledger_failed) *ledger_failed = true;
      const std::string what = "card " + attempt.id + " " + attempt.edge().Name();
      if (out.decision.allowed && !d.config.ledger_best_effort) {
        // The caller commits on an allow: an allow without its row would be a commit the
        // ledger never heard of (issue 7 item 10, as RunMove's intent row). Refused; no park:
        // the card is not at fault, and its journal lies on the same full disk.
        out.code = "ledger-unwritable";
        out.decision = Decision::Veto(
            what +
            " was not admitted: its decision-ledger row could not be written, and no "
            "transition is admitted without one: " +
            logged.message() + " (or set ledger: best-effort in " + d.config.file +
            " to admit without the row)");
      } else if (out.decision.allowed) {
        warnings.Warn(
            "devflow-gate: admitting " + what +
            " without its decision-ledger row (ledger: best-effort): " + logged.message());
      } else {
        warnings.Warn("devflow-gate: could not record the decision in " +
                      DecisionLedgerPath(d.root) + ": " + logged.message());
      }
    }
  }
  return out;
}

// Written as text around the journal's own encodings of the actor and checks (issue 8: the
// ordered_json it was built as, with those encodings parsed back into it, cost ~47K instructions
// of a ~470K cache-hit decision). The same bytes as Dump of that object: a compact dump of a
// compact dump's parse is the dump itself, and TerminalJson changes only what is inside
// strings, so it may run over the pieces together (tests/server/admit_json_test.cc compares the
// two on hostile text).
std::string AdmitJson(const AdmitOutcome& outcome, const std::string& decision_id) {
  std::string out = "{\"allowed\":";
  if (outcome.decision.allowed) {
    out += "true";
    if (outcome.decision.approved_by) {
      out += ",\"approvedBy\":" + EncodeActorJson(*outcome.decision.approved_by);
    }
    if (!outcome.decision.checks.empty()) {
      out += ",\"checks\":" + EncodeChecksJson(outcome.decision.checks);
    }
  } else {
    out += "false,\"reason\":";
    AppendJsonString(out, outcome.decision.reason);
    if (outcome.park) {
      out += ",\"park\":{\"by\":" + EncodeActorJson(outcome.park->by) + ",\"reason\":";
      AppendJsonString(out, outcome.park->reason);
      out += '}';
    }
  }
  if (!decision_id.empty()) {
    out += ",\"decisionId\":";
    AppendJsonString(out, decision_id);
  }
  out += '}';
  return TerminalJson(out);
}

}  // namespace devflow

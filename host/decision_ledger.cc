#include "host/decision_ledger.h"

#include <nlohmann/json.hpp>

namespace devflow {
namespace {
using ojson = nlohmann::ordered_json;

ojson ActorJson(const Actor& a) { return ojson::parse(EncodeActorJson(a)); }

void AddIdentity(ojson& row, const DecisionIdentity& identity) {
  ojson config;
  config["file"] = identity.config_file;
  config["sha256"] = identity.config_sha256;
  row["config"] = config;
  ojson programs = ojson::object();
  for (const auto& [provider, path] : identity.programs) programs[provider] = path;
  row["programs"] = programs;
}

std::string Dump(const ojson& row) {
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string DecisionLedgerPath(const std::string& root) {
  return JoinPath(root, "ledger/decisions.jsonl");
}

std::string DecisionRow(const MoveRequest& request, const MoveOutcome& outcome,
                        const std::string& now, const DecisionIdentity& identity) {
  const bool resolved = !outcome.attempt.id.empty();
  ojson row;
  row["at"] = resolved ? outcome.attempt.at : now;
  row["card"] = request.id;
  if (resolved) {
    row["edge"] = outcome.attempt.edge().Name();
    row["revision"] = outcome.attempt.expected_revision;
  } else {
    row["edge"] = (outcome.card ? std::string(LocationName(outcome.card->stage)) : "?") + "->" +
                  std::string(LocationName(request.to));
    row["revision"] =
        request.expected_revision ? ojson(*request.expected_revision) : ojson(nullptr);
  }
  row["by"] = ActorJson(request.by);
  row["code"] = outcome.code;
  row["ok"] = outcome.ok;
  row["message"] = outcome.message;
  row["checks"] = ojson::parse(EncodeChecksJson(outcome.checks));
  ojson report = nullptr;
  for (const auto& r : outcome.reports) {
    if (r.written) report = r.path;
  }
  row["report"] = report;
  row["parked"] = outcome.parked;
  row["sandbox"] = outcome.sandbox;
  AddIdentity(row, identity);
  return Dump(row);
}

std::string IntentRow(const Attempt& attempt, const TransitionCommit& commit,
                      const DecisionIdentity& identity) {
  const int64_t rev = commit.expected_revision + 1;
  const std::string edge = attempt.edge().Name();
  ojson row;
  row["at"] = attempt.at;
  row["card"] = attempt.id;
  row["edge"] = edge;
  row["revision"] = attempt.expected_revision;
  row["by"] = ActorJson(commit.by);
  row["code"] = "commit-intent";
  row["ok"] = true;
  row["message"] =
      "committing card " + attempt.id + " " + edge + " as revision " + std::to_string(rev);
  row["checks"] =
      ojson::parse(EncodeChecksJson(commit.gate ? commit.gate->checks : std::vector<GateCheck>{}));
  row["report"] = nullptr;
  row["parked"] = false;
  AddIdentity(row, identity);
  ojson entry;
  entry["rev"] = rev;
  entry["at"] = commit.at;
  row["commit"] = entry;
  return Dump(row);
}

Status AppendDecision(FileSystem& fs, const std::string& root, const MoveRequest& request,
                      const MoveOutcome& outcome, const std::string& now,
                      const DecisionIdentity& identity) {
  return AppendDecisionRow(fs, root, DecisionRow(request, outcome, now, identity));
}

Status AppendDecisionRow(FileSystem& fs, const std::string& root, const std::string& row) {
  const std::string path = DecisionLedgerPath(root);
  if (Status s = fs.CreateDirs(ParentPath(path)); !s.ok()) return s;
  return fs.AppendDurable(path, row + "\n");
}

}  // namespace devflow

#include "host/decision_ledger.h"

#include <nlohmann/json.hpp>

namespace devflow {
namespace {
using ojson = nlohmann::ordered_json;

ojson ActorJson(const Actor& a) { return ojson::parse(EncodeActorJson(a)); }
}  // namespace

std::string DecisionLedgerPath(const std::string& root) {
  return JoinPath(root, "ledger/decisions.jsonl");
}

std::string DecisionRow(const MoveRequest& request, const MoveOutcome& outcome,
                        const std::string& now) {
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
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status AppendDecision(FileSystem& fs, const std::string& root, const MoveRequest& request,
                      const MoveOutcome& outcome, const std::string& now) {
  const std::string path = DecisionLedgerPath(root);
  if (Status s = fs.CreateDirs(ParentPath(path)); !s.ok()) return s;
  return fs.AppendDurable(path, DecisionRow(request, outcome, now) + "\n");
}

}  // namespace devflow

#include "host/decision_ledger.h"

#include <pthread.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
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

// Random bits for decision ids, drawn from getrandom(2) 64 words at a time rather than one
// system call per id (the server makes one per decision, issue 8): the same kernel randomness,
// handed out once each. Per thread, so no lock; a forked child drops its parent's unused words
// (pthread_atfork), so parent and child never hand out the same ones. False when getrandom
// gives no entropy yet (early boot).
struct RandomPool {
  uint32_t words[64];
  size_t next = 64;
};
thread_local RandomPool random_pool;

bool RandomWord(uint32_t& out) {
  static const bool registered = [] {
    ::pthread_atfork(nullptr, nullptr, [] { random_pool.next = 64; });
    return true;
  }();
  (void)registered;
  RandomPool& pool = random_pool;
  if (pool.next == 64) {
    ssize_t got = -1;
    do {
      got = ::getrandom(pool.words, sizeof pool.words, GRND_NONBLOCK);
    } while (got < 0 && errno == EINTR);
    if (got != static_cast<ssize_t>(sizeof pool.words)) return false;
    pool.next = 0;
  }
  out = pool.words[pool.next++];
  return true;
}

}  // namespace

std::string DecisionLedgerPath(const std::string& root) {
  return JoinPath(root, "ledger/decisions.jsonl");
}

std::string NewDecisionId(const std::string& at) {
  std::string id;
  for (char c : at) {
    if (c != '-' && c != ':') id += c;
  }
  uint32_t bits = 0;
  if (!RandomWord(bits)) {
    // No entropy yet (early boot): pid, a counter and the clock still separate two writers.
    static std::atomic<uint32_t> counter{0};
    bits = static_cast<uint32_t>(::getpid()) * 2654435761u ^ (counter++ << 20) ^
           static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  static const char kHex[] = "0123456789abcdef";
  id += '-';
  for (int shift = 28; shift >= 0; shift -= 4) id += kHex[(bits >> shift) & 0xf];
  return id;
}

std::string DecisionOutcome(const MoveOutcome& outcome) {
  if (outcome.ok) return "allowed";
  if (outcome.code == "interrupted") return "interrupted";
  if (outcome.failed_closed) return outcome.parked ? "parked" : "fault";
  if (outcome.code == "internal-error" || outcome.code == "ledger-unwritable") return "fault";
  if (outcome.code == "vetoed") return "vetoed";
  return "rejected";
}

std::string DecisionRow(const MoveRequest& request, const MoveOutcome& outcome,
                        const std::string& now, const DecisionIdentity& identity,
                        const std::string& decision_id) {
  const bool resolved = !outcome.attempt.id.empty();
  ojson row;
  const std::string at = resolved ? outcome.attempt.at : now;
  row["decision"] = decision_id.empty() ? NewDecisionId(at) : decision_id;
  row["at"] = at;
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
  ojson report = nullptr, fault_report = nullptr;
  for (const auto& r : outcome.reports) {
    if (r.written) (r.fault ? fault_report : report) = r.path;
  }
  row["report"] = report;
  row["faultReport"] = fault_report;
  row["parked"] = outcome.parked;
  row["sandbox"] = outcome.sandbox;
  // Which bytes the checks judged (issue 7); absent when no check read inputs.
  if (!outcome.inputs_sha256.empty()) row["inputsSha256"] = outcome.inputs_sha256;
  row["outcome"] = DecisionOutcome(outcome);
  AddIdentity(row, identity);
  return Dump(row);
}

std::string IntentRow(const Attempt& attempt, const TransitionCommit& commit,
                      const DecisionIdentity& identity, const std::string& decision_id) {
  const int64_t rev = commit.expected_revision + 1;
  const std::string edge = attempt.edge().Name();
  ojson row;
  row["decision"] = decision_id.empty() ? NewDecisionId(attempt.at) : decision_id;
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
  row["faultReport"] = nullptr;
  row["parked"] = false;
  row["outcome"] = "intent";
  AddIdentity(row, identity);
  ojson entry;
  entry["rev"] = rev;
  entry["at"] = commit.at;
  row["commit"] = entry;
  return Dump(row);
}

Status AppendDecision(FileSystem& fs, const std::string& root, const MoveRequest& request,
                      const MoveOutcome& outcome, const std::string& now,
                      const DecisionIdentity& identity, const std::string& decision_id) {
  return AppendDecisionRow(fs, root, DecisionRow(request, outcome, now, identity, decision_id));
}

Status AppendDecisionRow(FileSystem& fs, const std::string& root, const std::string& row) {
  const std::string path = DecisionLedgerPath(root);
  if (Status s = fs.CreateDirs(ParentPath(path)); !s.ok()) return s;
  return fs.AppendDurable(path, row + "\n");
}

}  // namespace devflow

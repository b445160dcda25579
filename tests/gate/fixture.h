// Shared fixture of the agent-gate acceptance suite (reference/devflow-upstream.md §5): a
// scripted checker that records every CheckRequest and answers from a queue (the port of
// upstream's tests/checker-provider.ts), hand-written cards like upstream's, and a rig that
// wires a root, a faulty file system, the agent gate and an executor together.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>

#include <cerrno>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "checker/dispatch.h"
#include "checker/subprocess.h"
#include "config/config.h"
#include "host/executor.h"
#include "host/store.h"
#include "host/waterfall.h"
#include "plugin/agent_gate.h"
#include "support/support.h"

namespace devflow::gatetest {

using test::FaultyFileSystem;
using test::FixedClock;
using test::Slurp;
using test::Snapshot;
using test::Spit;
using test::TempDir;

inline const char kAt[] = "2026-09-16T08:00:00.000Z";
inline const char kInstruction[] = "Check that the design cites only requirements the PRD states.";

/// JSON string literal for simple test texts (quotes and backslashes escaped).
inline std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// A completed reply whose text ends in a fenced json verdict block (upstream allowReply).
inline std::string AllowReply(const std::string& summary) {
  return "I read the card and its inputs.\n\n```json\n{\"verdict\": \"allow\", \"summary\": " +
         Quote(summary) + "}\n```\n";
}

/// Upstream vetoReply(summary, findings?).
inline std::string VetoReply(const std::string& summary,
                             const std::vector<std::string>& findings = {}) {
  std::string list;
  for (const auto& f : findings) list += (list.empty() ? "" : ", ") + Quote(f);
  return "The design does not hold.\n\n```json\n{\"verdict\": \"veto\", \"summary\": " +
         Quote(summary) + ", \"findings\": [" + list + "]}\n```\n";
}

/// Records each dispatch and answers from a queue: reply text (allow, veto, or raw), or a fault
/// Status{code "fault", message}. An answer may carry an action run at dispatch time (used to
/// break the journal "at the same moment" the provider rejects, §5.5-5).
class ScriptedChecker : public CheckerDispatch {
 public:
  struct Answer {
    bool fault = false;
    std::string text;  // reply text, or the fault message
    std::function<void()> action;
    std::string stderr_text;  // what the checker wrote on stderr (CheckReply::stderr_tail)
  };
  void Reply(std::string text, std::string stderr_text = "") {
    answers.push_back(Answer{false, std::move(text), nullptr, std::move(stderr_text)});
  }
  void Allow(const std::string& summary) { Reply(AllowReply(summary)); }
  void Veto(const std::string& summary, const std::vector<std::string>& findings = {}) {
    Reply(VetoReply(summary, findings));
  }
  void Fault(std::string message, std::function<void()> action = nullptr) {
    answers.push_back(Answer{true, std::move(message), std::move(action), ""});
  }

  Result<CheckReply> Dispatch(const CheckRequest& request) override {
    requests.push_back(request);
    if (answers.empty()) {
      return Status::Error("fault", "the scripted checker has no answer queued");
    }
    Answer answer = std::move(answers.front());
    answers.pop_front();
    if (answer.action) answer.action();
    if (answer.fault) return Status::Error("fault", answer.text);
    return CheckReply{answer.text, "", answer.stderr_text,
                      static_cast<int64_t>(answer.stderr_text.size())};
  }

  /// What Provider() returns for any name (nullptr: like an undefined provider); a test swaps
  /// it to change the checker's identity (issue 7 item 3).
  const ProviderConfig* Provider(const std::string&) const override {
    return definition ? &*definition : nullptr;
  }

  std::deque<Answer> answers;
  std::vector<CheckRequest> requests;
  std::optional<ProviderConfig> definition;
};

/// Forwards to a real dispatcher (e.g. SubprocessChecker) and records each request.
class RecordingChecker : public CheckerDispatch {
 public:
  explicit RecordingChecker(CheckerDispatch& inner) : inner_(inner) {}
  Result<CheckReply> Dispatch(const CheckRequest& request) override {
    requests.push_back(request);
    return inner_.Dispatch(request);
  }
  const ProviderConfig* Provider(const std::string& provider) const override {
    return inner_.Provider(provider);
  }
  std::vector<CheckRequest> requests;

 private:
  CheckerDispatch& inner_;
};

/// A policy built from a lambda (upstream tests' ad-hoc later listeners).
class LambdaPolicy : public Policy {
 public:
  using Fn = std::function<Decision(const Attempt&, AttemptContext&, const Next&)>;
  LambdaPolicy(std::string id, Fn fn) : id_(std::move(id)), fn_(std::move(fn)) {}
  std::string id() const override { return id_; }
  Decision Admit(const Attempt& a, AttemptContext& c, const Next& n) override {
    return fn_(a, c, n);
  }
  std::string Explain(const Attempt&) override { return "test policy " + id_; }

 private:
  std::string id_;
  Fn fn_;
};

/// An input artifact to register by hand: `artifacts/<rev>-<kind>.md` + a journal line.
struct HandArtifact {
  std::string kind;
  std::string content;
};

/// The hand-written journal line of an artifact registration at `rev`.
inline std::string ArtifactLine(int64_t rev, const std::string& kind) {
  return "{\"rev\":" + std::to_string(rev) +
         ",\"at\":\"2026-09-16T07:30:00.000Z\",\"type\":\"artifact\",\"path\":\"artifacts/" +
         std::to_string(rev) + "-" + kind +
         ".md\",\"stage\":\"designing\",\"by\":{\"kind\":\"human\"},\"kind\":\"" + kind + "\"}\n";
}

/// Writes a card by hand like upstream: card.md with `title: Card <id>` and body
/// `Body of <id>.`; journal created (rev 1) → designing (rev 2), then one artifact line per
/// input (rev 3, 4, …). `draft_only` stops after `created` (the card stays at draft, rev 1).
inline void WriteCard(const std::string& root, const std::string& id,
                      const std::vector<HandArtifact>& artifacts = {}, bool draft_only = false) {
  const std::string dir = root + "/tasks/" + id;
  Spit(dir + "/card.md", "---\ntitle: Card " + id + "\n---\n\nBody of " + id + ".\n");
  std::string journal =
      "{\"rev\":1,\"at\":\"2026-09-16T07:00:00.000Z\",\"type\":\"created\",\"by\":{\"kind\":"
      "\"human\"}}\n";
  if (!draft_only) {
    journal +=
        "{\"rev\":2,\"at\":\"2026-09-16T07:10:00.000Z\",\"type\":\"transition\",\"from\":\"draft\","
        "\"to\":\"designing\",\"by\":{\"kind\":\"human\"}}\n";
    int64_t rev = 3;
    for (const auto& a : artifacts) {
      Spit(dir + "/artifacts/" + std::to_string(rev) + "-" + a.kind + ".md", a.content);
      journal += ArtifactLine(rev, a.kind);
      ++rev;
    }
  }
  Spit(dir + "/journal.jsonl", journal);
}

/// The journal line the executor commits when the agent gate parks a card that was at
/// `designing`, revision `rev - 1`.
inline std::string ParkLine(int64_t rev, const std::string& fault) {
  return "{\"rev\":" + std::to_string(rev) + ",\"at\":\"" + kAt +
         "\",\"type\":\"transition\",\"from\":\"designing\",\"to\":\"blocked\",\"by\":{\"kind\":"
         "\"command\",\"name\":\"devflow-agent-gate\"},\"reason\":" +
         Quote("agent check for designing->ready failed closed: " + fault) + "}";
}

/// The last non-empty line of a journal file.
inline std::string LastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

/// Number of non-empty lines.
inline int LineCount(const std::string& text) {
  int n = 0;
  bool any = false;
  for (char c : text) {
    if (c == '\n') {
      if (any) ++n;
      any = false;
    } else {
      any = true;
    }
  }
  return n + (any ? 1 : 0);
}

/// Occurrences of `needle` in `hay`.
inline int Count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

/// True when no process of the group `pgid` runs any more. A killed grandchild re-parented to
/// PID 1 stays a zombie on machines whose PID 1 does not reap (cpp-notes §1.5 item 7); a zombie
/// runs nothing and holds nothing, so it counts as gone.
inline bool GroupGone(int pgid) {
  if (pgid <= 0) return false;
  if (::kill(-pgid, 0) == -1 && errno == ESRCH) return true;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::optional<std::string> stat = Slurp(entry.path().string() + "/stat");
    if (!stat) continue;
    size_t close = stat->rfind(')');  // comm may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream fields(stat->substr(close + 1));
    char state = 0;
    long ppid = 0, pgrp = 0;
    fields >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z') return false;
  }
  return true;
}

/// One devflow root in a temp workspace, with the agent gate on `designing->ready` by the
/// provider "checker" over inputs [prd, design], and an executor per move.
struct Rig {
  TempDir tmp;
  std::string workspace = tmp.path();
  std::string root = tmp.path() + "/.devflow";
  FixedClock clock{kAt};
  CollectedWarnings warnings;
  FaultyFileSystem fs;
  Store store{root, fs, clock, warnings};
  ScriptedChecker scripted;
  CheckerDispatch* checker = &scripted;
  int card_reads = 0;
  AgentGateConfig config = DefaultConfig();
  std::vector<Policy*> before;  // policies ahead of the agent gate
  std::vector<Policy*> after;   // policies behind it (downstream)
  bool with_gate = true;

  static AgentGateConfig DefaultConfig() {
    AgentGateConfig c;
    c.edges.push_back(AgentEdgeConfig{
        Edge{Location::kDesigning, Location::kReady}, "checker", {"prd", "design"}, kInstruction});
    return c;
  }
  /// Turns the verdict cache on at the upstream location, <root>/cache/agent-gate, written
  /// relative to the workspace as a user would.
  void EnableCache() { config.verdict_cache_dir = ".devflow/cache/agent-gate"; }

  CardReader Reader() {
    return [this](const std::string& r, const std::string& id) -> Result<Card> {
      ++card_reads;
      return Store(r, fs, clock, warnings).Read(id);
    };
  }

  MoveOutcome Move(const std::string& id, Location to = Location::kReady, bool dry_run = false,
                   std::optional<std::string> reason = std::nullopt,
                   Actor by = Actor{"human", std::nullopt, std::nullopt}) {
    AgentGate gate(config, Reader(), *checker, fs);
    std::vector<Policy*> policies = before;
    if (with_gate) policies.push_back(&gate);
    policies.insert(policies.end(), after.begin(), after.end());
    Executor executor(store, policies, clock, warnings);
    MoveRequest request;
    request.id = id;
    request.to = to;
    request.by = std::move(by);
    request.reason = std::move(reason);
    request.dry_run = dry_run;
    return executor.Move(request);
  }

  std::string CardDir(const std::string& id) const { return root + "/tasks/" + id; }
  std::string Journal(const std::string& id) const {
    return Slurp(CardDir(id) + "/journal.jsonl").value_or("<missing>");
  }
  Card Read(const std::string& id) {
    Result<Card> card = store.Read(id);
    REQUIRE_MESSAGE(card.ok(), card.status().message());
    return *card;
  }
  std::string ReportDir() const { return root + "/reports/agent-gate"; }
  std::string CacheDir() const { return root + "/cache/agent-gate"; }
  /// Files of a directory (names), empty when absent.
  std::vector<std::string> Files(const std::string& dir) {
    Result<std::vector<std::string>> names = RealFileSystem().ListDir(dir);
    return names.ok() ? *names : std::vector<std::string>{};
  }
  /// The one cache file (REQUIREs exactly one).
  std::string OnlyCacheFile() {
    std::vector<std::string> names = Files(CacheDir());
    REQUIRE(names.size() == 1);
    return CacheDir() + "/" + names[0];
  }
};

/// The veto message the executor returns for a move to `ready`.
inline std::string Rejected(const std::string& id, const std::string& reason,
                            const std::string& to = "ready") {
  return "devflow: transition of card " + id + " to \"" + to + "\" was rejected: " + reason;
}

/// The fail-closed veto reason on designing->ready.
inline std::string CouldNotRun(const std::string& fault) {
  return "agent check for designing->ready could not run: " + fault +
         "; the card is parked blocked until the deployment recovers";
}

/// The fault report of a designing->ready attempt at `rev` (at kAt) in the default report dir.
inline std::string FaultReportOf(const Rig& rig, const std::string& id, int64_t rev) {
  return rig.ReportDir() + "/faults/" + id + "-designing-ready-r" + std::to_string(rev) +
         "-20260916T080000.000Z.md";
}

inline void ExpectParkedAs(Rig& rig, const MoveOutcome& outcome, const std::string& id,
                           const std::string& fault, int64_t park_rev, const std::string& message);

/// Upstream's shared fail-closed assertion (§5.4): vetoed with the fault and "parked blocked",
/// the card parked at blocked from designing, and the park journaled by the gate's actor. The
/// checker never ran (or the scripted one faulted): no fault report is written.
inline void ExpectParked(Rig& rig, const MoveOutcome& outcome, const std::string& id,
                         const std::string& fault, int64_t park_rev = 3) {
  ExpectParkedAs(rig, outcome, id, fault, park_rev, Rejected(id, CouldNotRun(fault)));
  CHECK(rig.Files(rig.ReportDir() + "/faults").empty());
}

/// ExpectParked for a fault once the checker ran (issue 10 item 8): the message adds `: <why>`
/// (when there is one) after the fault and `; fault report: <path>` at the end, the journal's
/// park reason is upstream's text unchanged, and the fault report is on disk; its text is
/// returned ("" when it is missing).
inline std::string ExpectParkedWithEvidence(Rig& rig, const MoveOutcome& outcome,
                                            const std::string& id, const std::string& fault,
                                            const std::string& why, int64_t park_rev = 3) {
  const std::string path = FaultReportOf(rig, id, park_rev - 1);
  ExpectParkedAs(rig, outcome, id, fault, park_rev,
                 Rejected(id, "agent check for designing->ready could not run: " + fault +
                                  (why.empty() ? "" : ": " + why) +
                                  "; the card is parked blocked until the deployment recovers"
                                  "; fault report: " +
                                  path));
  CHECK(rig.Files(rig.ReportDir() + "/faults") ==
        std::vector<std::string>{path.substr(path.rfind('/') + 1)});
  REQUIRE(outcome.reports.size() == 1);
  CHECK(outcome.reports[0].fault);
  CHECK(outcome.reports[0].written);
  CHECK(outcome.reports[0].path == path);
  Result<std::string> text = RealFileSystem().ReadFile(path);
  return text.ok() ? *text : "";
}

inline void ExpectParkedAs(Rig& rig, const MoveOutcome& outcome, const std::string& id,
                           const std::string& fault, int64_t park_rev, const std::string& message) {
  CHECK(outcome.code == "vetoed");
  CHECK(!outcome.ok);
  CHECK(outcome.message == message);
  CHECK(outcome.failed_closed);
  CHECK(outcome.parked);
  REQUIRE(outcome.card.has_value());
  CHECK(outcome.card->stage == Location::kBlocked);  // the stage change to blocked arrived
  Card card = rig.Read(id);
  CHECK(card.stage == Location::kBlocked);
  CHECK(card.blocked_from == Location::kDesigning);
  CHECK(card.stage_revision == park_rev);
  const std::string journal = rig.Journal(id);
  CHECK(LastLine(journal) == ParkLine(park_rev, fault));
  CHECK(journal.find("agent check for designing->ready failed closed") != std::string::npos);
  CHECK(journal.find("\"by\":{\"kind\":\"command\",\"name\":\"devflow-agent-gate\"}") !=
        std::string::npos);
}

}  // namespace devflow::gatetest

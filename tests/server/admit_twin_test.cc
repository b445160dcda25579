// Issue 8's "Done when": the end-to-end move cases through HTTP leave the same bytes on disk as
// `devflow-gate move`. tests/server/server_test.cc compares `/v1/moves` with the CLI; this file
// compares the TypeScript store's path — `/v1/admit`, then the caller's own commit (and, on a
// `park`, the park asked for and committed the same way) — with the CLI, on the same root
// restored between the two runs, and `/v1/moves` with the CLI for the cases decided before
// any check (store rejections, a cache hit, a dry run).
#include <doctest/doctest.h>

#include <filesystem>

#include "checker/checker_support.h"
#include "host/os.h"
#include "host/stages.h"
#include "host/store.h"
#include "host/warnings.h"
#include "server/serve_fixture.h"

namespace devflow::server_test {
namespace {

using e2e::Fixture;
using e2e::Workspace;
using nlohmann::json;

std::string Config(const std::string& script) {
  std::string y = "providers:\n  checker:\n    command: ['" + script + "']\n    sandbox: off\n";
  y += "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n";
  y += "        'designing->ready':\n          provider: checker\n";
  y += "          inputs: [prd, design]\n          prompt: Check the design.\n";
  y += "      checkTimeoutMs: 20000\n";
  y += "      verdictCacheDir: .devflow-agent-gate-cache\n";
  return y;
}

// The decision ledger's rows (compared row by row: Disk(ws, false) leaves the ledger out).
std::vector<json> LedgerRows(const Workspace& ws) {
  std::vector<json> rows;
  for (const auto& line :
       e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""))) {
    rows.push_back(json::parse(line));
  }
  return rows;
}

Actor ActorOf(const json& j) {
  Actor a{j.at("kind").get<std::string>(), std::nullopt, std::nullopt};
  if (j.contains("name")) a.name = j["name"].get<std::string>();
  if (j.contains("session")) a.session = j["session"].get<std::string>();
  return a;
}

// The TypeScript store's transition through a gate at /v1/admit (reference §2.2): resolve the
// attempt from the card on disk, run the waterfall (here: only the gate), commit on an allow
// with the decision's gate field; a `park` in a veto is a transition of its own, queued after
// the attempt returned, through the same waterfall (reference §4.10).
struct TypeScriptStore {
  explicit TypeScriptStore(const Workspace& ws)
      : ws(ws), store(ws.root(), RealFileSystem(), SystemClock(), warnings) {}

  json Transition(SocketServer& server, const std::string& to, const Actor& by,
                  const std::optional<std::string>& reason, std::optional<int64_t> revision = {}) {
    Result<Card> card = store.Read(ws.card());
    REQUIRE(card.ok());
    const int64_t expected = revision.value_or(card->stage_revision);
    const std::string at = SystemClock().NowIso();
    json by_json = {{"kind", by.kind}};
    if (by.name) by_json["name"] = *by.name;
    json attempt = {{"id", ws.card()},
                    {"from", std::string(LocationName(card->stage))},
                    {"to", to},
                    {"expectedRevision", expected},
                    {"by", by_json}};
    if (reason) attempt["reason"] = *reason;
    attempt["root"] = ws.root();
    attempt["at"] = at;
    HttpAnswer answer = server.Post("/v1/admit", attempt.dump());
    INFO("admit: " << answer.body);
    REQUIRE(answer.status == 200);
    json decision = answer.json();
    if (!decision["allowed"].get<bool>()) {
      if (decision.contains("park")) {
        parks.push_back(decision["park"]);
        Transition(server, "blocked", ActorOf(decision["park"]["by"]),
                   decision["park"]["reason"].get<std::string>(), expected);
      }
      return decision;
    }
    TransitionCommit commit;
    commit.id = ws.card();
    commit.expected_revision = expected;
    commit.from = card->stage;
    commit.to = *ParseLocation(to);
    commit.by = by;
    commit.reason = reason;
    Gate gate;
    if (decision.contains("approvedBy")) gate.approved_by = ActorOf(decision["approvedBy"]);
    for (const json& c : decision.value("checks", json::array())) {
      GateCheck check{ActorOf(c["by"]), std::nullopt};
      if (c.contains("summary")) check.summary = c["summary"].get<std::string>();
      gate.checks.push_back(check);
    }
    if (gate.approved_by || !gate.checks.empty()) commit.gate = gate;
    commit.at = at;
    Result<Card> committed = store.CommitTransition(commit);
    INFO("commit: " << committed.status().message());
    REQUIRE(committed.ok());
    return decision;
  }

  const Workspace& ws;
  CollectedWarnings warnings;
  Store store;
  std::vector<json> parks;
};

TEST_CASE(
    "serve: /v1/admit and the caller's commit write the same bytes as devflow-gate move "
    "(allow, veto, fail closed and its park)") {
  struct Case {
    const char* name;
    std::string script;
    const char* cli_code;
    bool allowed;
    bool parked;
  };
  for (const Case& c : {Case{"allow", Fixture("checkers/allow.sh"), "committed", true, false},
                        Case{"veto", Fixture("e2e/veto.sh"), "vetoed", false, false},
                        Case{"fault", Fixture("checkers/fail.sh"), "vetoed", false, true}}) {
    CAPTURE(c.name);
    Workspace ws(Config(c.script));
    ws.CardInDesigning();
    const auto before = test::Snapshot(ws.root());
    const size_t rows_before = LedgerRows(ws).size();

    auto cli = ws.Gate({"move", ws.card(), "ready", "--json"});
    INFO("cli: " << cli.out << cli.err);
    const json cli_json = json::parse(cli.out);
    REQUIRE(cli_json["code"] == c.cli_code);
    CHECK(cli_json["parked"] == c.parked);
    const auto cli_disk = Disk(ws, false);
    const auto cli_rows = LedgerRows(ws);

    Restore(ws, before);
    TypeScriptStore ts(ws);
    json decision;
    {
      SocketServer server(ws);
      decision =
          ts.Transition(server, "ready", Actor{"human", std::nullopt, std::nullopt}, std::nullopt);
      INFO("log:\n" << server.serve->Log());
      CHECK(decision["allowed"] == c.allowed);
      CHECK(decision.contains("park") == c.parked);
      CHECK(ts.parks.size() == (c.parked ? 1u : 0u));
    }
    if (!c.allowed) {
      // The veto's reason is the CLI's message without the store's prefix.
      const std::string prefix =
          "devflow: transition of card " + ws.card() + " to \"ready\" was rejected: ";
      CHECK(MaskTimes(prefix + decision["reason"].get<std::string>()) ==
            MaskTimes(cli_json["message"].get<std::string>()));
    }

    // Journal, card.md, artifacts, reports (veto and fault), cache records: the same bytes.
    const auto http_disk = Disk(ws, false);
    CheckSameDisk(http_disk, cli_disk);

    // The decision ledger. `move` writes one outcome row for the attempt and a commit-intent
    // row before each commit it makes (its own, or the park's: the park is part of the move
    // and has no outcome row of its own). `/v1/admit` commits nothing, so it writes no intent
    // rows, and the park, asked for by the caller, is an attempt with its own row. The
    // attempt's outcome rows differ by design in exactly these fields: `decision` and `at`
    // (the clock), `code` ("committed" by move, "admitted" by /v1/admit, whose caller
    // commits), `message` (move's is the store's sentence, admit's the decision's), `parked`
    // (a move that parked says so; /v1/admit hands the park back and cannot know) and
    // `outcome` ("parked" for that move, "fault" for the admit that handed the park back).
    const auto http_rows = LedgerRows(ws);
    auto rows_of = [&](const std::vector<json>& rows, bool intents) {
      std::vector<json> out;
      for (size_t i = rows_before; i < rows.size(); ++i) {
        if ((rows[i]["code"] == "commit-intent") == intents) out.push_back(rows[i]);
      }
      return out;
    };
    auto masked = [](json r) {
      for (const char* f : {"decision", "at", "code", "message", "parked", "outcome"}) r.erase(f);
      return MaskTimes(r.dump());
    };
    const auto cli_outcomes = rows_of(cli_rows, false);
    const auto http_outcomes = rows_of(http_rows, false);
    CHECK(rows_of(http_rows, true).empty());
    CHECK(rows_of(cli_rows, true).size() == (c.allowed || c.parked ? 1u : 0u));
    REQUIRE(cli_outcomes.size() == 1);
    REQUIRE(http_outcomes.size() == (c.parked ? 2u : 1u));
    CHECK(masked(http_outcomes[0]) == masked(cli_outcomes[0]));
    CHECK(http_outcomes[0]["code"] == (c.allowed ? "admitted" : "vetoed"));
    CHECK(cli_outcomes[0]["outcome"] == (c.allowed ? "allowed" : c.parked ? "parked" : "vetoed"));
    CHECK(http_outcomes[0]["outcome"] == (c.allowed ? "allowed" : c.parked ? "fault" : "vetoed"));
    if (c.parked) {
      // The park's own admission: allowed (no check on designing->blocked), by the policy.
      CHECK(http_outcomes[1]["code"] == "admitted");
      CHECK(http_outcomes[1]["edge"] == "designing->blocked");
      CHECK(http_outcomes[1]["by"] == json{{"kind", "command"}, {"name", "devflow-agent-gate"}});
      CHECK(http_outcomes[1]["revision"] == cli_outcomes[0]["revision"]);
    }
  }
}

// Runs `cli` (plus --json) and then, on the root and cache as they were before it, `body` at
// /v1/moves, and compares the answers, the bytes on disk and the ledger rows; leaves the root
// and cache as they were before.
void SameAsMove(const Workspace& ws, const std::vector<std::string>& cli_args, const json& body,
                const char* code) {
  const auto before = test::Snapshot(ws.root());
  const auto cache = test::Snapshot(ws / ".devflow-agent-gate-cache");
  auto restore = [&] {
    Restore(ws, before);
    for (const auto& [path, content] : cache) {
      test::Spit(ws / (".devflow-agent-gate-cache/" + path), content);
    }
  };
  std::vector<std::string> args = cli_args;
  args.push_back("--json");
  auto cli = ws.Gate(args);
  INFO("cli: " << cli.out << cli.err);
  const json cli_json = json::parse(cli.out);
  CHECK(cli_json["code"] == code);
  const auto cli_disk = Disk(ws, false);
  const auto cli_rows = LedgerRows(ws);

  restore();
  SocketServer server(ws);
  HttpAnswer http = server.Post("/v1/moves", body.dump());
  INFO("http: " << http.body);
  REQUIRE(http.status == 200);
  json http_json = http.json();
  http_json.erase("decisionId");
  CHECK(MaskTimes(http_json.dump()) == MaskTimes(cli_json.dump()));
  CHECK(Disk(ws, false) == cli_disk);
  // The same rows (one per attempt, and an intent before each commit) but for id and time.
  const auto http_rows = LedgerRows(ws);
  REQUIRE(http_rows.size() == cli_rows.size());
  for (size_t i = 0; i < cli_rows.size(); ++i) {
    CHECK(MaskTimes(http_rows[i].dump()) == MaskTimes(cli_rows[i].dump()));
  }
  const std::string metrics = server.Get("/metrics").body;
  server.serve->Stop();
  restore();
  if (cli_json["checks"].size() == 1 &&
      cli_json["checks"][0]["summary"].get<std::string>().rfind("[cached] ", 0) == 0) {
    CHECK(metrics.find("devflow_gate_cache_hits_total 1\n") != std::string::npos);
  }
}

TEST_CASE(
    "serve: /v1/moves writes the same bytes as devflow-gate move for store rejections, rework, "
    "a dry run and a cache hit") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  ws.CardInDesigning();
  const std::string id = ws.card();
  auto gate = [&](const std::vector<std::string>& args) {
    auto r = ws.Gate(args);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  };
  {
    INFO("stale revision");
    SameAsMove(ws, {"move", id, "ready", "--expect-revision", "3"},
               {{"id", id}, {"to", "ready"}, {"expectRevision", 3}}, "revision-mismatch");
  }
  {
    INFO("illegal edge");
    SameAsMove(ws, {"move", id, "done"}, {{"id", id}, {"to", "done"}}, "illegal-edge");
  }
  {
    INFO("dry run");
    SameAsMove(ws, {"move", id, "ready", "--dry-run"},
               {{"id", id}, {"to", "ready"}, {"dryRun", true}}, "committed");
  }
  gate({"move", id, "ready"});  // a checker run: the verdict is cached
  gate({"move", id, "developing"});
  {
    INFO("rework without a reason");
    SameAsMove(ws, {"move", id, "designing"}, {{"id", id}, {"to", "designing"}}, "reason-required");
  }
  {
    INFO("rework with a reason");
    SameAsMove(ws, {"move", id, "designing", "--reason", "scope changed"},
               {{"id", id}, {"to", "designing"}, {"reason", "scope changed"}}, "committed");
  }
  gate({"move", id, "designing", "--reason", "again"});
  {
    INFO("cache hit");
    SameAsMove(ws, {"move", id, "ready"}, {{"id", id}, {"to", "ready"}}, "committed");
    auto cached = ws.Gate({"move", id, "ready", "--json"});
    CHECK(json::parse(cached.out)["checks"][0]["summary"] == "[cached] ok");
  }
}

}  // namespace
}  // namespace devflow::server_test

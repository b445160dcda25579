// Exit codes of the real binary (SPEC §7): 2 for usage and configuration errors, 4 for store
// rejections, with the message where the CLI prints it.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

using Clock = std::chrono::steady_clock;

const char kHint[] = "run 'devflow-gate --help' (or '<command> --help') for usage\n";

// A workspace whose designing->ready checker allows, card in designing at revision 4.
void Prepare(Workspace& ws, const std::string& checker = "checkers/allow.sh") {
  GateYaml yaml;
  yaml.command = {Fixture(checker)};
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
}

TEST_CASE("an unknown command exits 2 with the help hint on stderr") {
  Workspace ws("plugins: []\n");
  auto r = ws.Gate({"frobnicate"});
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err.find(kHint) != std::string::npos);
}

// SPEC §7: every error names what is wrong (CLI11 alone would say "A subcommand is required").
TEST_CASE("an unknown command is named in the error") {
  Workspace ws("plugins: []\n");
  auto r = ws.Gate({"frobnicate"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("frobnicate") != std::string::npos);
}

TEST_CASE("an unknown option exits 2 naming the option") {
  Workspace ws("plugins: []\n");
  auto r = ws.Gate({"move", "0001-x", "ready", "--frob"});
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err ==
        std::string("devflow-gate: The following argument was not expected: --frob\n") + kHint);
}

TEST_CASE("a target that is not a location exits 2 listing the locations") {
  Workspace ws("plugins: []\n");
  auto r = ws.Gate({"move", "0001-x", "nowhere"});
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err ==
        "devflow-gate: \"nowhere\" is not a location; use draft, designing, ready, developing, "
        "reviewing, testing, done or blocked\n");
}

TEST_CASE("an unknown card exits 2 with the store's message on stderr, for move and card show") {
  Workspace ws("plugins: []\n");
  std::filesystem::create_directories(ws.root());  // a root without that card
  const std::string msg = "no card \"0009-nope\" in the devflow root " + ws.root() +
                          "; run `devflow-gate card list` to see the card ids\n";
  auto moved = ws.Gate({"move", "0009-nope", "ready"});
  CHECK(moved.exit_code == 2);
  CHECK(moved.out == "");
  CHECK(moved.err == "devflow-gate: " + msg);
  auto shown = ws.Gate({"card", "show", "0009-nope"});
  CHECK(shown.exit_code == 2);
  CHECK(shown.out == "");
  CHECK(shown.err == "devflow-gate: " + msg);
}

TEST_CASE("a missing config file exits 2 and the card is not touched") {
  Workspace ws("plugins: []\n");
  auto created = ws.Gate({"card", "create", "--title", "Export the audit log"});
  REQUIRE(created.exit_code == 0);
  std::filesystem::remove(ws / "devflow-gate.yaml");
  auto r = ws.Gate({"move", "0001-export-the-audit-log", "designing"});
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err == "devflow-gate: config file " + ws / "devflow-gate.yaml" +
                     " does not exist; create it (see docs/configuration.md) or pass --config "
                     "FILE\n");
  CHECK(Lines(test::Slurp(ws.root() + "/tasks/0001-export-the-audit-log/journal.jsonl").value())
            .size() == 1);
}

TEST_CASE("a broken config exits 2 with one file:line:col line per problem") {
  const std::string yaml =
      "providers:\n"
      "  c:\n"
      "    command: [/bin/true]\n"
      "plugins:\n"
      "  - id: devflow-agent-gate\n"
      "    config:\n"
      "      edges:\n"
      "        designing=>ready:\n"
      "          provider: c\n"
      "          inputs: [prd]\n"
      "          prompt: x\n"
      "      checkTimeoutMs: -1\n";
  Workspace ws(yaml);
  const std::string file = ws / "devflow-gate.yaml";
  const std::string problems =
      file +
      ":8:9: plugins[0](devflow-agent-gate): edges names invalid edge \"designing=>ready\"; use "
      "\"<from>-><to>\" with stage names or \"blocked\"\n" +
      file + ":12:23: plugins[0](devflow-agent-gate): checkTimeoutMs must be a positive integer\n";
  auto moved = ws.Gate({"move", "0001-x", "ready"});
  CHECK(moved.exit_code == 2);
  CHECK(moved.out == "");
  CHECK(moved.err == problems);
  auto checked = ws.Gate({"config", "check"});
  CHECK(checked.exit_code == 2);
  CHECK(checked.err == problems);
}

TEST_CASE("a stale --expect-revision exits 4 with revision-mismatch on stdout, nothing written") {
  Workspace ws("");
  Prepare(ws);
  auto r = ws.Gate({"move", ws.card(), "ready", "--expect-revision", "3"});
  CHECK(r.exit_code == 4);
  CHECK(r.out ==
        "card 0001-export-the-audit-log is at revision 4, not the expected 3; re-read the card "
        "and retry\n");
  CHECK(r.err == "");
  CHECK(ws.JournalLines().size() == 4);
}

TEST_CASE("an illegal edge exits 4 naming the legal moves, and a blocked card its way back") {
  Workspace ws("");
  Prepare(ws, "checkers/fail.sh");
  auto r = ws.Gate({"move", ws.card(), "developing"});
  CHECK(r.exit_code == 4);
  CHECK(r.out ==
        "card 0001-export-the-audit-log cannot move from \"designing\" to \"developing\"; legal "
        "moves from here: ready, blocked\n");
  REQUIRE(ws.Gate({"move", ws.card(), "ready"}).exit_code == 3);  // parked blocked
  auto back = ws.Gate({"move", ws.card(), "ready"});
  CHECK(back.exit_code == 4);
  CHECK(back.out ==
        "card 0001-export-the-audit-log cannot move from \"blocked\" to \"ready\"; a blocked "
        "card returns only to \"designing\"\n");
  CHECK(ws.JournalLines().size() == 5);
  auto recovered = ws.Gate({"move", ws.card(), "designing"});
  CHECK(recovered.exit_code == 0);
  CHECK(recovered.out == "card 0001-export-the-audit-log moved blocked->designing (revision 6)\n");
}

TEST_CASE("a rework move without a reason exits 4 reason-required, with one it commits") {
  Workspace ws("");
  Prepare(ws);
  REQUIRE(ws.Gate({"move", ws.card(), "ready"}).exit_code == 0);
  REQUIRE(ws.Gate({"move", ws.card(), "developing"}).exit_code == 0);
  const std::string msg =
      "moving card 0001-export-the-audit-log from \"developing\" back to \"designing\" is "
      "rework; say why with --reason\n";
  auto none = ws.Gate({"move", ws.card(), "designing"});
  CHECK(none.exit_code == 4);
  CHECK(none.out == msg);
  auto blank = ws.Gate({"move", ws.card(), "designing", "--reason", "  "});
  CHECK(blank.exit_code == 4);
  CHECK(blank.out == msg);
  CHECK(ws.JournalLines().size() == 6);
  auto given = ws.Gate({"move", ws.card(), "designing", "--reason", "the design missed REQ-2"});
  CHECK(given.exit_code == 0);
  auto lines = ws.JournalLines();
  REQUIRE(lines.size() == 7);
  CHECK(lines[6].find("\"type\":\"transition\",\"from\":\"developing\",\"to\":\"designing\","
                      "\"by\":{\"kind\":\"human\"},\"reason\":\"the design missed REQ-2\"}") !=
        std::string::npos);
}

TEST_CASE("a held commit.lock makes the move exit 4 write-contended in about 2 s, lock kept") {
  Workspace ws("");
  Prepare(ws);
  const std::string lock = ws.card_dir() + "/commit.lock";
  const std::string holder = std::to_string(test::LivePid()) + "\n";
  test::Spit(lock, holder);
  auto t0 = Clock::now();
  auto r = ws.Gate({"move", ws.card(), "ready"});
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  CHECK(r.exit_code == 4);
  CHECK(r.out == "card 0001-export-the-audit-log stayed locked by another commit (" + lock +
                     "); nothing was written, so retry the move; if no devflow process is "
                     "running, the lock is stale: remove " +
                     lock + "; nothing was committed, and the decision ledger " + ws.root() +
                     "/ledger/decisions.jsonl holds this attempt's commit-intent row for card "
                     "0001-export-the-audit-log designing->ready at revision 5, followed by this "
                     "outcome row (code write-contended)\n");
  CHECK(seconds > 1.5);
  CHECK(seconds < 3.5);
  CHECK(test::Slurp(lock) == holder);  // never broken by age
  CHECK(ws.JournalLines().size() == 4);
  std::filesystem::remove(lock);
  CHECK(ws.Gate({"move", ws.card(), "ready"}).exit_code == 0);
}

TEST_CASE(
    "a commit.lock left by a killed writer: exit 4, the lock kept, the message names the dead pid "
    "and how to clear it, and once removed the move commits") {
  Workspace ws("");
  Prepare(ws);
  const std::string lock = ws.card_dir() + "/commit.lock";
  const std::string dead = std::to_string(test::DeadPid());
  test::Spit(lock, dead + "\n");
  auto r = ws.Gate({"move", ws.card(), "ready"});
  CHECK(r.exit_code == 4);
  CHECK(r.out.rfind("card 0001-export-the-audit-log stayed locked by another commit (" + lock +
                        ") whose writer, pid " + dead +
                        ", is not running on this machine: a commit that ended without "
                        "releasing its lock (killed mid-commit); nothing was written. A lock is "
                        "never broken by age: if no devflow process in another container or on "
                        "another machine uses this root, remove " +
                        lock + ", then retry the move; nothing was committed",
                    0) == 0);
  CHECK(r.out.find("lock is stale") == std::string::npos);
  CHECK(test::Slurp(lock) == dead + "\n");
  CHECK(ws.JournalLines().size() == 4);
  std::filesystem::remove(lock);
  CHECK(ws.Gate({"move", ws.card(), "ready"}).exit_code == 0);
}

// trial15 R3: `move --timeout 5` parked the card blocked (exit 3) and blamed the deployment.
// The caller's short budget is a veto (exit 1) naming the caller's deadline and how to raise
// it; nothing is committed, the card stays, the ledger row is a veto that says so.
TEST_CASE("move --timeout shorter than checkTimeoutMs exits 1 vetoed, the card not parked") {
  Workspace ws("plugins: []\n");
  Prepare(ws);  // checkTimeoutMs 20000
  const std::string journal = test::Slurp(ws.journal_path()).value_or("");
  for (bool as_json : {false, true}) {
    CAPTURE(as_json);
    std::vector<std::string> args = {"move", ws.card(), "ready", "--timeout", "5"};
    if (as_json) args.push_back("--json");
    auto r = ws.Gate(args);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    const std::string said =
        as_json ? nlohmann::json::parse(r.out)["message"].get<std::string>() : r.out + r.err;
    CHECK(said.find("agent check for designing->ready was not started: the caller's deadline "
                    "leaves ") != std::string::npos);
    CHECK(said.find("less than checkTimeoutMs (20000ms)") != std::string::npos);
    CHECK(said.find("`move --timeout MS`") != std::string::npos);
    CHECK(said.find("parked blocked") == std::string::npos);
    if (as_json) {
      nlohmann::json out = nlohmann::json::parse(r.out);
      CHECK(out["code"] == "vetoed");
      CHECK(out["parked"] == false);
    }
  }
  CHECK(test::Slurp(ws.journal_path()).value_or("") == journal);  // nothing committed, no park
  CHECK(ws.ShowJson()["stage"] == "designing");
  auto rows = Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
  REQUIRE(!rows.empty());
  nlohmann::json row = nlohmann::json::parse(rows.back());
  CHECK(row["code"] == "vetoed");
  CHECK(row["message"].get<std::string>().find("the caller's deadline leaves") !=
        std::string::npos);
  // Given the time, the same move commits.
  CHECK(ws.Gate({"move", ws.card(), "ready", "--timeout", "60000"}).exit_code == 0);
}

// trial20: `move --timeout 18000000000000` overflowed the deadline into the past: every check
// "not started", the move vetoed for a budget of 0 ms. Out of range is a usage error now.
TEST_CASE("move --timeout out of 1..2147483647 is a usage error, nothing decided") {
  Workspace ws("plugins: []\n");
  Prepare(ws);
  const std::string journal = test::Slurp(ws.journal_path()).value_or("");
  const std::string ledger = ws.root() + "/ledger/decisions.jsonl";
  const std::string rows = test::Slurp(ledger).value_or("");
  for (const std::string ms : {"18000000000000", "2147483648", "0", "-5"}) {
    auto r = ws.Gate({"move", ws.card(), "ready", "--timeout", ms});
    INFO(ms << ": " << r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--timeout must be a whole number of ms from 1 to 2147483647") !=
          std::string::npos);
  }
  CHECK(test::Slurp(ws.journal_path()).value_or("") == journal);
  CHECK(test::Slurp(ledger).value_or("") == rows);
  CHECK(ws.Gate({"move", ws.card(), "ready", "--timeout", "2147483647"}).exit_code == 0);
}

}  // namespace
}  // namespace devflow::e2e

// The operator commands through the real binary (their logic is pinned in-process in
// tests/operator): every sub-word and flag reaches them, with or without global options first.
#include "e2e/workspace.h"

namespace devflow::e2e {

TEST_CASE("operator commands take their sub-words and flags through the binary") {
  GateYaml yaml;
  yaml.command = {Fixture("e2e/veto.sh")};
  yaml.cache_dir = ".devflow/cache/agent-gate";
  Workspace ws(yaml.Text());
  ws.CardInDesigning();
  REQUIRE(ws.Gate({"move", ws.card(), "ready"}).exit_code == 1);

  auto reports = ws.Gate({"reports", "list"});
  INFO(reports.out << reports.err);
  CHECK(reports.exit_code == 0);
  CHECK(reports.out.find(ws.card() + "-designing-ready-r4.md") != std::string::npos);
  auto shown = ws.Gate({"reports", "show", ws.card() + "-designing-ready-r4.md"});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("# Agent check veto: card " + ws.card()) != std::string::npos);

  auto cache = ws.Gate({"cache", "list", "--json"});
  INFO(cache.out << cache.err);
  CHECK(cache.exit_code == 0);
  CHECK(cache.out.find("\"current\"") != std::string::npos);
  CHECK(ws.Gate({"cache", "verify"}).exit_code == 0);
  CHECK(ws.Gate({"cache", "prune", "--dry-run"}).exit_code == 0);

  auto audit = ws.Gate({"--root", ws.root(), "audit", "--json"});
  INFO(audit.out << audit.err);
  CHECK(audit.exit_code == 0);
  CHECK(audit.out.front() == '{');
}

}  // namespace devflow::e2e

namespace devflow::e2e {

TEST_CASE("global options work after the command words, for operator commands too") {
  GateYaml yaml;
  yaml.command = {Fixture("e2e/veto.sh")};
  Workspace ws(yaml.Text());
  ws.CardInDesigning();
  REQUIRE(ws.Gate({"move", ws.card(), "ready"}).exit_code == 1);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"audit", "--root", ws.root(), "--json"},
                                             {"reports", "list", "--root", ws.root()},
                                             {"cache", "list", "--root=" + ws.root()},
                                             {"ledger", "list", "--root", ws.root()},
                                             {"card", "list", "--root", ws.root()}}) {
    auto ran = test::RunGate(args, "/");  // cwd / : only --root can find the root
    INFO(args[0] << ": " << ran.out << ran.err);
    CHECK(ran.exit_code == 0);
  }
  auto ledger = ws.Gate({"ledger", "list", "--outcome", "vetoed"});
  INFO(ledger.out << ledger.err);
  REQUIRE(test::RunGate({"ledger", "list"}, "/").exit_code == 2);
  CHECK(ledger.out.find(" " + ws.card() + " designing->ready r4 vetoed (sandbox ") !=
        std::string::npos);
  const std::string id = ledger.out.substr(0, ledger.out.find(' '));
  auto shown = ws.Gate({"ledger", "show", id});
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.rfind("decision " + id + "\n", 0) == 0);
  auto report = ws.Gate({"reports", "show", ws.card() + "-designing-ready-r4.md", "--json"});
  CHECK(report.exit_code == 0);
  CHECK(report.out.find("\"text\": \"# Agent check veto: card ") != std::string::npos);
}

TEST_CASE("a root that does not exist is an error naming it, for every command that reads one") {
  const std::string missing = "/nonexistent-devflow-root";
  for (const auto& args : std::vector<std::vector<std::string>>{{"card", "list"},
                                                                {"card", "show", "0001-a"},
                                                                {"audit"},
                                                                {"reports", "list"},
                                                                {"cache", "list"},
                                                                {"ledger", "list"}}) {
    std::vector<std::string> argv{"--root", missing};
    argv.insert(argv.end(), args.begin(), args.end());
    auto ran = test::RunGate(argv, "/");
    INFO(args[0]);
    CHECK(ran.exit_code == 2);
    CHECK(ran.out == "");
    CHECK(ran.err == "devflow-gate: the devflow root " + missing +
                         " does not exist (pass --root DIR or set DEVFLOW_ROOT)\n");
  }
}

TEST_CASE("card create and artifact add print JSON with --json, --help names exit codes") {
  GateYaml yaml;
  yaml.command = {Fixture("e2e/veto.sh")};
  Workspace ws(yaml.Text());
  auto created = ws.Gate({"card", "create", "--title", "Json", "--json"});
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  CHECK(created.out.find("\"stage\": \"draft\"") != std::string::npos);
  CHECK(created.out.find("\"title\": \"Json\"") != std::string::npos);
  test::Spit(ws.root() + "/../note.md", "# note\n");
  const size_t at = created.out.find("\"id\": \"") + 7;
  const std::string id = created.out.substr(at, created.out.find('"', at) - at);
  auto added = ws.Gate({"artifact", "add", id, "note", "note.md", "--json"});
  INFO(added.out << added.err);
  REQUIRE(added.exit_code == 0);
  CHECK(added.out.find("\"kind\": \"note\"") != std::string::npos);
  CHECK(added.out.find("\"path\": \"artifacts/2-note.md\"") != std::string::npos);
  for (const auto& args : std::vector<std::vector<std::string>>{{"move", "--help"},
                                                                {"audit", "--help"},
                                                                {"ledger", "list", "--help"},
                                                                {"card", "create", "--help"}}) {
    auto help = ws.Gate(args);
    INFO(args[0] << ": " << help.out);
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("exit codes: 0 ") != std::string::npos);
  }
  auto bad = ws.Gate({"ledger", "frob"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err ==
        "devflow-gate: unknown ledger subcommand \"frob\"; use list, show or prune\n"
        "run 'devflow-gate --help' (or '<command> --help') for usage\n");
}

}  // namespace devflow::e2e

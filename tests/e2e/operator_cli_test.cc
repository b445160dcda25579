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

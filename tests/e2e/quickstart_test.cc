// The quickstart's four steps (examples/quickstart/run.sh) against a fresh copy of its
// workspace, with the real built-in grounding checker as the subprocess.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

namespace fs = std::filesystem;

TEST_CASE("quickstart: dry-run veto, real veto with report, fixed design, admitted with checks") {
  test::TempDir dir;
  const std::string example = test::SourceDir() + "/examples/quickstart";
  fs::copy(example + "/workspace", dir.path(), fs::copy_options::recursive);
  const std::string card = "0001-audit-log-export";
  const std::string journal = dir / (".devflow/tasks/" + card + "/journal.jsonl");
  auto gate = [&](const std::vector<std::string>& args) { return test::RunGate(args, dir.path()); };
  const std::string veto =
      "devflow: transition of card 0001-audit-log-export to \"ready\" was rejected: agent check "
      "vetoed designing->ready: ";

  // 1. Dry run: the grounding checker runs and vetoes REQ-7; nothing is written.
  auto before = test::Snapshot(dir.path());
  auto dry = gate({"move", card, "ready", "--dry-run"});
  INFO("dry run: " << dry.out << dry.err);
  CHECK(dry.exit_code == 1);
  CHECK(dry.out.rfind(veto, 0) == 0);
  CHECK(dry.out.find("ref not in evidence: REQ-7") != std::string::npos);
  CHECK(dry.out.find("dry run: nothing was written\n") != std::string::npos);
  CHECK(test::Snapshot(dir.path()) == before);

  // 2. The real move: the same veto, the report written and named.
  auto real = gate({"move", card, "ready"});
  INFO("real: " << real.out << real.err);
  CHECK(real.exit_code == 1);
  const std::string report =
      dir / (".devflow/reports/agent-gate/" + card + "-designing-ready-r4.md");
  CHECK(real.out.rfind(veto, 0) == 0);
  CHECK(real.out.find("; full report: " + report + "\n") != std::string::npos);
  auto report_text = test::Slurp(report);
  REQUIRE(report_text);
  CHECK(report_text->find("REQ-7") != std::string::npos);
  CHECK(Lines(test::Slurp(journal).value()).size() == 4);

  // 3. Register the fixed design.
  fs::copy_file(example + "/design-fixed.md", dir / "design-fixed.md");
  auto added = gate({"artifact", "add", card, "design", "design-fixed.md"});
  INFO("artifact add: " << added.out << added.err);
  CHECK(added.exit_code == 0);
  CHECK(added.out ==
        "registered design on card 0001-audit-log-export as artifacts/5-design.md (revision 5)\n");

  // 4. Admitted; the committed line carries the agent check.
  auto admitted = gate({"move", card, "ready"});
  INFO("admitted: " << admitted.out << admitted.err);
  CHECK(admitted.exit_code == 0);
  CHECK(admitted.out.rfind("card 0001-audit-log-export moved designing->ready (revision 6)\n", 0) ==
        0);
  auto lines = Lines(test::Slurp(journal).value());
  REQUIRE(lines.size() == 6);
  CHECK(lines[5].rfind("{\"rev\":6,", 0) == 0);
  CHECK(lines[5].find("\"type\":\"transition\",\"from\":\"designing\",\"to\":\"ready\","
                      "\"by\":{\"kind\":\"human\"},\"gate\":{\"checks\":[{\"by\":{\"kind\":"
                      "\"agent\"},\"verdict\":\"allowed\",\"summary\":") != std::string::npos);
  auto shown = gate({"card", "show", card, "--json"});
  CHECK(nlohmann::json::parse(shown.out)["stage"] == "ready");
}

}  // namespace
}  // namespace devflow::e2e

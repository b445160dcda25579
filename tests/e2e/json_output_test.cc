// `move --json` through the real binary: one compact object
// {"ok","code","message","card":{id,stage,stageRevision,blockedFrom?},"checks","parked","report"}.
#include <doctest/doctest.h>

#include <string>

#include "e2e/workspace.h"
#include "faults/faults.h"

namespace devflow::e2e {
namespace {

void Prepare(Workspace& ws, std::vector<std::string> command) {
  GateYaml yaml;
  yaml.command = std::move(command);
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
}

TEST_CASE("move --json of a committed move names the new revision and the agent check") {
  Workspace ws("");
  Prepare(ws, {Fixture("checkers/allow.sh")});
  auto r = ws.Gate({"move", ws.card(), "ready", "--json"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "{\"ok\":true,\"code\":\"committed\",\"message\":\"card 0001-export-the-audit-log moved "
        "designing->ready (revision 5)\",\"card\":{\"id\":\"0001-export-the-audit-log\","
        "\"stage\":\"ready\",\"stageRevision\":5},\"checks\":[{\"by\":{\"kind\":\"agent\"},"
        "\"verdict\":\"allowed\",\"summary\":\"ok\"}],\"parked\":false,\"report\":null,"
        "\"faultReport\":null}\n");
}

TEST_CASE("move --json of a veto names the report and leaves the card where it was") {
  Workspace ws("");
  Prepare(ws, {Fixture("e2e/veto.sh")});
  auto r = ws.Gate({"move", ws.card(), "ready", "--json"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 1);
  const std::string report =
      ws.root() + "/reports/agent-gate/0001-export-the-audit-log-designing-ready-r4.md";
  CHECK(r.out ==
        "{\"ok\":false,\"code\":\"vetoed\",\"message\":\"devflow: transition of card "
        "0001-export-the-audit-log to \\\"ready\\\" was rejected: agent check vetoed "
        "designing->ready: design cites REQ-9; full report: " +
            report +
            "\",\"card\":{\"id\":\"0001-export-the-audit-log\",\"stage\":\"designing\","
            "\"stageRevision\":4},\"checks\":[],\"parked\":false,\"report\":\"" +
            report + "\",\"faultReport\":null}\n");
  CHECK(test::Slurp(report));
}

TEST_CASE("move --json of a failed-closed move shows the parked card with blockedFrom") {
  Workspace ws("");
  Prepare(ws, {Fixture("checkers/fail.sh")});
  auto r = ws.Gate({"move", ws.card(), "ready", "--json"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out ==
        "{\"ok\":false,\"code\":\"vetoed\",\"message\":\"devflow: transition of card "
        "0001-export-the-audit-log to \\\"ready\\\" was rejected: agent check for "
        "designing->ready could not run: the checker ended with exit code 7: boom; the card is "
        "parked blocked until the deployment recovers; fault report: " +
            faults::OnlyFaultReport(ws.root()) +
            "\",\"card\":{\"id\":"
            "\"0001-export-the-audit-log\",\"stage\":\"blocked\",\"stageRevision\":5,"
            "\"blockedFrom\":\"designing\"},\"checks\":[],\"parked\":true,\"report\":null,"
            "\"faultReport\":\"" +
            faults::OnlyFaultReport(ws.root()) + "\"}\n");
}

TEST_CASE("move --json of a store rejection carries the store's code and message (exit 4)") {
  Workspace ws("");
  Prepare(ws, {Fixture("checkers/allow.sh")});
  auto r = ws.Gate({"move", ws.card(), "ready", "--json", "--expect-revision", "3"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 4);
  CHECK(r.out ==
        "{\"ok\":false,\"code\":\"revision-mismatch\",\"message\":\"card "
        "0001-export-the-audit-log is at revision 4, not the expected 3; re-read the card and "
        "retry\",\"card\":{\"id\":\"0001-export-the-audit-log\",\"stage\":\"designing\","
        "\"stageRevision\":4},\"checks\":[],\"parked\":false,\"report\":null,\"faultReport\":null}"
        "\n");
  CHECK(ws.JournalLines().size() == 4);
}

}  // namespace
}  // namespace devflow::e2e

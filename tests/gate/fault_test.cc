// Port of upstream tests/fault.spec.ts (reference/devflow-upstream.md §5.5). Disk faults are
// injected as EACCES through FaultyFileSystem (the product's FileSystem seam), which denies for
// real even when the tests run as root.
#include <cerrno>

#include "gate/fixture.h"
#include "reports/sha256.h"

namespace devflow::gatetest {
namespace {

// The fail-closed veto reason on designing->ready when the park did not commit (`why`: the
// park's own message): the executor replaces upstream's park claim with what happened
// (docs/decisions.md "Failed closed, but the park did not commit").
std::string CouldNotRunNotParked(const std::string& fault, const std::string& why) {
  return "agent check for designing->ready could not run: " + fault +
         "; nothing was committed and the card was NOT parked: " + why;
}

const char kPromptSha[] = "5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a";

// The cache file of designing->ready for a card whose collected inputs are `sorted_inputs`.
std::string CacheFile(const Rig& rig, const std::string& id, const std::string& sorted_inputs) {
  const std::string key = "{\"edge\":\"designing->ready\",\"root\":\"" + rig.root +
                          "\",\"card\":\"" + id + "\",\"inputs\":[" + sorted_inputs +
                          "],\"promptSha256\":\"" + kPromptSha + "\"}";
  return rig.CacheDir() + "/" + Sha256Hex(key).substr(0, 16) + ".json";
}

std::string Denied(const std::string& op, const std::string& path) {
  return op + " " + path + ": Permission denied (EACCES)";
}

TEST_CASE(
    "fault.spec 1: fails closed when a registered input artifact cannot be read: veto and the "
    "card parks blocked") {
  Rig rig;
  const std::string id = "0401-input-denied";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string design = rig.CardDir(id) + "/artifacts/4-design.md";
  rig.fs.Fail("read", design, EACCES);
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.message.find("could not run") != std::string::npos);
  CHECK(outcome.message.find("a required input cannot be read") != std::string::npos);
  CHECK(outcome.message.find("EACCES") != std::string::npos);
  ExpectParked(rig, outcome, id, "a required input cannot be read: " + Denied("read", design), 5);
  CHECK(rig.scripted.requests.empty());
}

TEST_CASE(
    "fault.spec 2: fails closed when the veto report cannot be written: veto and the card parks "
    "blocked") {
  Rig rig;
  const std::string id = "0402-report-denied";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.fs.Fail("mkdirs", rig.ReportDir(), EACCES);
  rig.scripted.Veto("the design is hollow");
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.message.find("the veto report could not be written") != std::string::npos);
  CHECK(outcome.message.find("EACCES") != std::string::npos);
  ExpectParked(rig, outcome, id,
               "the veto report could not be written: " + Denied("mkdirs", rig.ReportDir()), 5);
  CHECK(rig.Files(rig.ReportDir()).empty());
  CHECK(rig.scripted.requests.size() == 1);
}

TEST_CASE(
    "fault.spec 3: only warns when the verdict cache cannot be written: the allow still commits") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0403-cache-denied";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.fs.Fail("mkdirs", rig.CacheDir(), EACCES);
  rig.scripted.Allow("design is sound");
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "committed");
  CHECK(rig.Journal(id).find("\"summary\":\"design is sound\"") != std::string::npos);
  CHECK(rig.warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: could not cache the allow verdict at " +
                                 CacheFile(rig, id, "\"design:4\",\"prd:3\"") + ": " +
                                 Denied("mkdirs", rig.CacheDir())});
  CHECK(rig.Files(rig.CacheDir()).empty());
}

TEST_CASE("fault.spec 4: treats an unreadable cache file as a warned miss and re-dispatches") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0404-cache-unreadable";
  WriteCard(rig.root, id, {{"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  rig.scripted.Veto("the design is hollow");
  REQUIRE(rig.Move(id).code == "vetoed");
  const std::string file = CacheFile(rig, id, "\"design:3\"");
  REQUIRE(rig.OnlyCacheFile() == file);
  rig.fs.Fail("read", file, EACCES);
  MoveOutcome retry = rig.Move(id);
  CHECK(retry.message ==
        Rejected(id, "agent check vetoed designing->ready: the design is hollow; full report: " +
                         rig.ReportDir() + "/0404-cache-unreadable-designing-ready-r3.md"));
  CHECK(rig.scripted.requests.size() == 2);
  CHECK(rig.warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: could not read the verdict cache at " + file +
                                 ": " + Denied("read", file)});
}

TEST_CASE("fault.spec 5: warns when the parking move itself rejects on an unreadable journal") {
  Rig rig;
  const std::string id = "0405-park-broken";
  WriteCard(rig.root, id);
  const std::string journal = rig.CardDir(id) + "/journal.jsonl";
  const std::string before = rig.Journal(id);
  // The provider start rejects and, at the same moment, the journal becomes unreadable.
  rig.scripted.Fault("spawn backend down", [&] { rig.fs.Fail("read", journal, EACCES); });
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "vetoed");
  // Upstream keeps its park claim here; the message says the park did not happen instead.
  CHECK(outcome.message ==
        Rejected(id, CouldNotRunNotParked("spawn backend down",
                                          "read " + journal + ": Permission denied (EACCES)")));
  CHECK(outcome.failed_closed);
  CHECK(!outcome.parked);
  CHECK(rig.warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: failed to park card 0405-park-broken "
                                 "blocked: " +
                                 Denied("read", journal)});
  rig.fs.Clear();
  CHECK(rig.Journal(id) == before);
  CHECK(rig.Read(id).stage == Location::kDesigning);
}

}  // namespace
}  // namespace devflow::gatetest

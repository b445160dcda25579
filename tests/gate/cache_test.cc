// Port of upstream tests/cache.spec.ts (reference/devflow-upstream.md §5.2). Product difference
// (SPEC §3/§5): caching is off unless verdictCacheDir is set, so every case sets it to
// `.devflow/cache/agent-gate` (relative to the workspace), the upstream location
// <root>/cache/agent-gate; upstream's 12th case ("no way to switch it off") becomes 12a/12b.
#include <unistd.h>

#include <climits>

#include "gate/fixture.h"
#include "reports/reply_rules.h"
#include "reports/sha256.h"

namespace devflow::gatetest {
namespace {

const char kPromptSha[] = "5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "cache record lacks " << from);
  return text.replace(at, from.size(), to);
}

std::string VetoedFresh(const Rig& rig, const std::string& id, const std::string& summary,
                        int64_t rev) {
  return Rejected(id, "agent check vetoed designing->ready: " + summary +
                          "; full report: " + rig.ReportDir() + "/" + id + "-designing-ready-r" +
                          std::to_string(rev) + ".md");
}

// Cases 4–9: a veto is cached, the record is then damaged; the retry is a warned miss.
void ExpectCorruptRecordIsWarnedMiss(const std::function<std::string(const std::string&)>& damage) {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0204-corrupt";
  WriteCard(rig.root, id, {{"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  rig.scripted.Veto("the design is hollow");
  REQUIRE(rig.Move(id).code == "vetoed");
  const std::string file = rig.OnlyCacheFile();
  Spit(file, damage(*Slurp(file)));
  MoveOutcome retry = rig.Move(id);
  CHECK(retry.code == "vetoed");
  CHECK(retry.message == VetoedFresh(rig, id, "the design is hollow", 3));
  CHECK(rig.scripted.requests.size() == 2);
  CHECK(rig.warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: the verdict cache at " + file +
                                 " is corrupt; treating it as a miss"});
}

TEST_CASE(
    "cache.spec 1: reuses a cached allow verdict without re-dispatching, marking the journal "
    "check [cached]") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0201-allow-hit";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Allow("design is sound");
  REQUIRE(rig.Move(id).code == "committed");
  // Round trip back to designing (rework) so the same edge is attempted again, inputs unchanged.
  REQUIRE(rig.Move(id, Location::kDeveloping).code == "committed");
  REQUIRE(rig.Move(id, Location::kDesigning, false, "the design missed a case").code ==
          "committed");
  MoveOutcome again = rig.Move(id);
  CHECK(again.code == "committed");
  CHECK(rig.scripted.requests.size() == 1);
  REQUIRE(again.checks.size() == 1);
  CHECK(again.checks[0].summary == "[cached] design is sound");
  CHECK(LastLine(rig.Journal(id)) ==
        "{\"rev\":8,\"at\":\"2026-09-16T08:00:00.000Z\",\"type\":\"transition\",\"from\":"
        "\"designing\",\"to\":\"ready\",\"by\":{\"kind\":\"human\"},\"gate\":{\"checks\":[{\"by\":{"
        "\"kind\":\"agent\"},\"verdict\":\"allowed\",\"summary\":\"[cached] design is sound\"}]}}");
  CHECK(rig.warnings.lines.empty());
}

TEST_CASE(
    "cache.spec 2: reuses a cached veto without re-dispatching, pointing at the original report") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0202-veto-hit";
  WriteCard(rig.root, id, {{"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow", {"no error handling"});
  MoveOutcome first = rig.Move(id);
  const std::string report = rig.root + "/reports/agent-gate/0202-veto-hit-designing-ready-r3.md";
  CHECK(first.message == VetoedFresh(rig, id, "the design is hollow", 3));
  MoveOutcome second = rig.Move(id);
  CHECK(second.code == "vetoed");
  CHECK(second.message ==
        Rejected(id,
                 "agent check vetoed designing->ready (cached): the design is hollow; full "
                 "report: " +
                     report));
  CHECK(!second.failed_closed);
  CHECK(rig.scripted.requests.size() == 1);

  // The record: upstream's key order, JSON.stringify(record, null, 2) + "\n".
  const std::string key = "{\"edge\":\"designing->ready\",\"root\":\"" + rig.root +
                          "\",\"card\":\"" + id +
                          "\",\"inputs\":[\"design:3\"],\"promptSha256\":\"" + kPromptSha + "\"}";
  const std::string file = rig.CacheDir() + "/" + Sha256Hex(key).substr(0, 16) + ".json";
  CHECK(rig.OnlyCacheFile() == file);
  CHECK(Slurp(file) ==
        "{\n"
        "  \"key\": {\n"
        "    \"edge\": \"designing->ready\",\n"
        "    \"root\": \"" +
            rig.root +
            "\",\n"
            "    \"card\": \"0202-veto-hit\",\n"
            "    \"inputs\": [\n"
            "      \"design:3\"\n"
            "    ],\n"
            "    \"promptSha256\": \"" +
            kPromptSha +
            "\"\n"
            "  },\n"
            "  \"verdict\": \"veto\",\n"
            "  \"summary\": \"the design is hollow\",\n"
            "  \"reportPath\": \"" +
            report +
            "\",\n"
            "  \"at\": \"2026-09-16T08:00:00.000Z\",\n"
            // Ours only (issue 7 item 3): the identity of the checker, here the undefined
            // provider of the scripted checker with verdictNonce off (reports/verdict_cache.h).
            "  \"checkerSha256\": \"" +
            Sha256Hex(std::string(R"({"provider":null,"verdictNonce":false,"replyRules":")") +
                      kReplyRulesSha256 + "\"}") +
            "\",\n"
            // ... and of the contents it judged, the card's text framed beside design:3:
            // sha256("#body\n22\nBody of 0202-veto-hit.#title\n18\nCard 0202-veto-hit"
            // "design:3\n7\nDESIGN\n"), by python3.
            "  \"inputsSha256\": "
            "\"63ea86f582182735f113e00d89c9adaa90d1d7c5f0fe6a0482a6efb6b4342a2c\"\n"
            "}\n");
}

TEST_CASE("cache.spec 3: re-dispatches once any input kind registers a new revision") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0203-new-rev";
  WriteCard(rig.root, id, {{"design", "DESIGN V1\n"}});
  rig.scripted.Veto("the design is hollow");
  rig.scripted.Allow("design is sound now");
  REQUIRE(rig.Move(id).code == "vetoed");
  ArtifactRequest add;
  add.id = id;
  add.expected_revision = 3;
  add.kind = "design";
  add.content = "DESIGN V2\n";
  REQUIRE(rig.store.AddArtifact(add).ok());
  MoveOutcome again = rig.Move(id);
  CHECK(again.code == "committed");
  REQUIRE(rig.scripted.requests.size() == 2);
  CHECK(rig.scripted.requests[1].prompt.Joined().find(
            "--- artifact design (rev 4) ---\n\nDESIGN V2\n") != std::string::npos);
  CHECK(rig.scripted.requests[1].prompt.Joined().find("DESIGN V1") == std::string::npos);
  CHECK(rig.Files(rig.CacheDir()).size() == 2);
}

TEST_CASE(
    "cache.spec 4: treats a corrupt cache file — unparsable JSON — as a warned miss and "
    "re-dispatches") {
  ExpectCorruptRecordIsWarnedMiss([](const std::string&) { return std::string("{\"key\": "); });
}

TEST_CASE(
    "cache.spec 5: treats a corrupt cache file — a JSON scalar — as a warned miss and "
    "re-dispatches") {
  ExpectCorruptRecordIsWarnedMiss([](const std::string&) { return std::string("42\n"); });
}

TEST_CASE(
    "cache.spec 6: treats a corrupt cache file — JSON null — as a warned miss and re-dispatches") {
  ExpectCorruptRecordIsWarnedMiss([](const std::string&) { return std::string("null\n"); });
}

TEST_CASE(
    "cache.spec 7: treats a corrupt cache file — an unknown verdict — as a warned miss and "
    "re-dispatches") {
  ExpectCorruptRecordIsWarnedMiss([](const std::string& record) {
    return Replace(record, "\"verdict\": \"veto\"", "\"verdict\": \"maybe\"");
  });
}

TEST_CASE(
    "cache.spec 8: treats a corrupt cache file — a non-string summary — as a warned miss and "
    "re-dispatches") {
  ExpectCorruptRecordIsWarnedMiss([](const std::string& record) {
    return Replace(record, "\"summary\": \"the design is hollow\"", "\"summary\": 7");
  });
}

TEST_CASE(
    "cache.spec 9: treats a corrupt cache file — a veto without its report path — as a warned "
    "miss and re-dispatches") {
  ExpectCorruptRecordIsWarnedMiss([](const std::string& record) {
    size_t at = record.find("  \"reportPath\": ");
    REQUIRE(at != std::string::npos);
    size_t end = record.find('\n', at);
    return record.substr(0, at) + record.substr(end + 1);
  });
}

TEST_CASE(
    "cache.spec 10: treats a well-formed record under a colliding filename as a silent miss") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0210-collide";
  WriteCard(rig.root, id, {{"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  rig.scripted.Veto("the design is hollow");
  REQUIRE(rig.Move(id).code == "vetoed");
  const std::string file = rig.OnlyCacheFile();
  Spit(file, Replace(*Slurp(file), "\"card\": \"0210-collide\"", "\"card\": \"0210-other\""));
  MoveOutcome retry = rig.Move(id);
  CHECK(retry.message == VetoedFresh(rig, id, "the design is hollow", 3));
  CHECK(rig.scripted.requests.size() == 2);
  CHECK(rig.warnings.lines.empty());
}

TEST_CASE(
    "cache.spec 11: never lends one card's verdict to another card with the same edge, "
    "revisions, and prompt") {
  Rig rig;
  rig.EnableCache();
  WriteCard(rig.root, "0211-twin", {{"design", "DESIGN\n"}});
  WriteCard(rig.root, "0212-twin", {{"design", "DESIGN\n"}});
  rig.scripted.Allow("design is sound");
  rig.scripted.Veto("the twin is hollow");
  CHECK(rig.Move("0211-twin").code == "committed");
  MoveOutcome twin = rig.Move("0212-twin");
  CHECK(twin.message == VetoedFresh(rig, "0212-twin", "the twin is hollow", 3));
  REQUIRE(rig.scripted.requests.size() == 2);
  CHECK(rig.scripted.requests[1].card_id == "0212-twin");
  CHECK(rig.Files(rig.CacheDir()).size() == 2);
}

TEST_CASE("cache.spec 12a: dispatches every attempt when no verdictCacheDir is configured") {
  Rig rig;  // no verdictCacheDir: caching is off (SPEC §3)
  const std::string id = "0213-no-cache";
  WriteCard(rig.root, id, {{"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  rig.scripted.Veto("the design is hollow");
  CHECK(rig.Move(id).message == VetoedFresh(rig, id, "the design is hollow", 3));
  CHECK(rig.Move(id).message == VetoedFresh(rig, id, "the design is hollow", 3));
  CHECK(rig.scripted.requests.size() == 2);
  CHECK(rig.Files(rig.root) == std::vector<std::string>{"reports", "tasks"});
}

TEST_CASE(
    "cache.spec 12b: keeps the cache where verdictCacheDir points, resolved against the "
    "workspace not the cwd") {
  Rig rig;
  rig.EnableCache();
  TempDir elsewhere;
  char cwd[PATH_MAX];
  REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
  REQUIRE(::chdir(elsewhere.path().c_str()) == 0);
  struct Back {
    std::string to;
    ~Back() { (void)::chdir(to.c_str()); }
  } back{cwd};
  const std::string id = "0214-cache-here";
  WriteCard(rig.root, id, {{"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  CHECK(rig.Move(id).code == "vetoed");
  CHECK(rig.Move(id).message ==
        Rejected(id,
                 "agent check vetoed designing->ready (cached): the design is hollow; full "
                 "report: " +
                     rig.ReportDir() + "/0214-cache-here-designing-ready-r3.md"));
  CHECK(rig.scripted.requests.size() == 1);
  CHECK(rig.Files(rig.CacheDir()).size() == 1);
  CHECK(rig.Files(elsewhere.path()).empty());
}

}  // namespace
}  // namespace devflow::gatetest

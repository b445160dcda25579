// `cache list|verify|prune` (SPEC §7): the state of every verdict cache record, and a prune
// that never deletes a record an identical retry would hit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "operator/operator_fixture.h"

namespace devflow {
namespace {

using namespace devflow::test;
using ojson = nlohmann::ordered_json;

// One file in each state. Card 0001-a is at designing with prd:3 and design:4.
struct Zoo {
  std::string current, moved, elsewhere, gone, prompt, corrupt, no_report, misnamed;
  std::string temp_old, temp_new;
  std::string misnamed_should_be;
};

Zoo MakeZoo(OperatorRoot& r) {
  Zoo z;
  r.DesigningCard("0001-a");
  z.current = r.Record(r.Key("0001-a", {"prd:3", "design:4"}), true, "design holds");
  z.moved = r.Record(r.Key("0001-a", {"prd:3", "design:2"}), false, "old design vetoed");
  z.elsewhere =
      r.Record(r.Key("0001-a", {"prd:3", "design:4"}, kInstruction, "/elsewhere/.devflow"), true,
               "other root");
  z.gone = r.Record(r.Key("0009-gone", {}), true, "gone card");
  z.prompt =
      r.Record(r.Key("0001-a", {"prd:3", "design:4"}, "Old instruction."), true, "old prompt");
  z.corrupt = r.CacheDir() + "/0000000000000000.json";
  Spit(z.corrupt, "{not json");
  VerdictCacheKey veto_key = r.Key("0002-x", {});
  z.no_report = r.CacheDir() + "/" + veto_key.FileName();
  Spit(z.no_report, R"({"key":)" + veto_key.CompactJson() +
                        R"(,"verdict":"veto","summary":"s","at":"2026-09-16T08:00:00.000Z"})");
  VerdictCacheKey key = r.Key("0001-a", {"prd:3", "design:4"});
  z.misnamed = r.Record(key, true, "copied", "ffffffffffffffff.json");
  z.misnamed_should_be = key.FileName();
  z.temp_old = r.CacheDir() + "/." + key.FileName() + ".77.0.tmp";
  z.temp_new = r.CacheDir() + "/" + key.FileName() + ".78.tmp";  // upstream's temp name
  Spit(z.temp_old, "{");
  Spit(z.temp_new, "{");
  r.probe.ages[z.temp_old] = 120000;
  r.probe.ages[z.temp_new] = 5000;
  return z;
}

// The path a cache output line is about: after an optional "removed " prefix, up to ": " or
// " (". Lines come out sorted by that path (not by the whole line: ".json:" vs ".json.7.tmp").
std::string PathOf(const std::string& line) {
  std::string rest = line.rfind("removed ", 0) == 0 ? line.substr(8) : line;
  return rest.substr(0, std::min(rest.find(": "), rest.find(" (")));
}

std::string Sorted(std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end(),
            [](const auto& a, const auto& b) { return PathOf(a) < PathOf(b); });
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

constexpr const char* kEdge = " designing->ready ";

TEST_CASE("cache list labels every record current, stale, corrupt or misnamed, and temp files") {
  OperatorRoot r(CachedGateYaml());
  Zoo z = MakeZoo(r);
  const std::string at = std::string(" at ") + kT0 + ": ";
  Ran ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.err == "");
  CHECK(
      ran.out ==
      Sorted({
          z.current + ": current: allow 0001-a" + kEdge + "[design:4, prd:3]" + at + "design holds",
          z.moved +
              ": stale (inputs moved on: the verdict saw [design:2, prd:3], the card now "
              "has [design:4, prd:3]): veto 0001-a" +
              kEdge + "[design:2, prd:3]" + at + "old design vetoed",
          z.elsewhere + ": stale (card elsewhere: the key's root is /elsewhere/.devflow, not " +
              r.root + "): allow 0001-a" + kEdge + "[design:4, prd:3]" + at + "other root",
          z.gone + ": stale (card gone: 0009-gone is not a card of this root): allow 0009-gone" +
              kEdge + "[]" + at + "gone card",
          z.prompt +
              ": stale (prompt changed: the configured instruction for designing->ready "
              "is not the one this verdict answered): allow 0001-a" +
              kEdge + "[design:4, prd:3]" + at + "old prompt",
          z.corrupt + ": corrupt (not valid JSON)",
          z.no_report + ": corrupt (a veto record has no string \"reportPath\")",
          z.misnamed + ": misnamed (its key hashes to " + z.misnamed_should_be +
              ", so the gate never looks it up under this name): allow 0001-a" + kEdge +
              "[design:4, prd:3]" + at + "copied",
          z.temp_old + ": temp (leftover, 120s old)",
          z.temp_new + ": temp (in flight, 5s old)",
      }) + "8 records in " +
          r.CacheDir() +
          ": current 1, stale 4, corrupt 2, misnamed 1, unreadable 0; temp files 2\n");
}

TEST_CASE("cache list --json gives each entry's file, state, why and record fields") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  std::string current = r.Record(r.Key("0001-a", {"prd:3", "design:4"}), false, "no");
  Spit(r.ReportDir() + "/x.md", "# the veto's report\n");  // a veto is current with its report
  std::string temp = r.CacheDir() + "/.x.json.1.1.tmp";
  Spit(temp, "");
  r.probe.ages[temp] = 61000;
  Ran ran = RunOp(RunCacheCommand, {"list", "--json"}, r.Ctx());
  CHECK(ran.code == 0);
  ojson expected = {
      {"dirs", {r.CacheDir()}},
      {"entries",
       {{{"file", temp}, {"state", "temp"}, {"why", "leftover, 61s old"}, {"ageMs", 61000}},
        {{"file", current},
         {"state", "current"},
         {"verdict", "veto"},
         {"card", "0001-a"},
         {"edge", "designing->ready"},
         {"inputs", {"design:4", "prd:3"}},
         {"at", kT0},
         {"summary", "no"},
         {"reportPath", r.ReportDir() + "/x.md"}}}},
      {"counts",
       {{"current", 1},
        {"stale", 0},
        {"corrupt", 0},
        {"misnamed", 0},
        {"unreadable", 0},
        {"temp", 1}}},
      {"errors", ojson::array()}};
  CHECK(ojson::parse(ran.out).dump() == expected.dump());
}

TEST_CASE("a record whose key is reordered is corrupt: no lookup can ever hit it") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  std::string path = r.CacheDir() + "/1111111111111111.json";
  Spit(path, R"({"key":{"root":"/r","edge":"designing->ready","card":"0001-a","inputs":[],)"
             R"("promptSha256":"x"},"verdict":"allow","summary":""})");
  Ran ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0) ==
        path +
            ": corrupt (\"key\" is not {edge, root, card, inputs, promptSha256} with string "
            "values in this order, so no lookup can ever hit it)");
}

TEST_CASE("a record of an edge the gate no longer configures is stale") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  VerdictCacheKey key = VerdictCacheKey::Compute("ready->developing", r.root, "0001-a", {}, "x");
  std::string path = r.CacheDir() + "/" + key.FileName();
  Spit(path, RenderCacheRecord(VerdictCacheRecord{key, true, "ok", std::nullopt, kT0, "", ""}));
  Ran ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0) ==
        path +
            ": stale (edge ready->developing is no longer configured for this cache): allow "
            "0001-a ready->developing [] at " +
            kT0 + ": ok");
}

TEST_CASE("cache verify exits 0 when every record is current or stale and well named") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  r.Record(r.Key("0001-a", {"prd:3", "design:4"}), true, "ok");
  r.Record(r.Key("0001-a", {"prd:3"}), true, "older");
  Ran ran = RunOp(RunCacheCommand, {"verify"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out == "verdict cache OK: 2 records in " + r.CacheDir() +
                       ": current 1, stale 1, corrupt 0, misnamed 0, unreadable 0; temp files 0\n");
}

TEST_CASE("cache verify exits 1 listing each corrupt and misnamed file on its own line") {
  OperatorRoot r(CachedGateYaml());
  Zoo z = MakeZoo(r);
  Ran ran = RunOp(RunCacheCommand, {"verify"}, r.Ctx());
  CHECK(ran.code == 1);
  const std::string prune =
      "; the gate treats it as a miss: remove it with `devflow-gate cache prune`";
  CHECK(ran.out ==
        Sorted({z.corrupt + ": corrupt: not valid JSON" + prune,
                z.no_report + ": corrupt: a veto record has no string \"reportPath\"" + prune,
                z.misnamed + ": misnamed: its key hashes to " + z.misnamed_should_be +
                    ", so the gate never looks it up under this name; remove it with "
                    "`devflow-gate cache prune`"}) +
            "verdict cache has problems: 8 records in " + r.CacheDir() +
            ": current 1, stale 4, corrupt 2, misnamed 1, unreadable 0; temp files 2\n");
}

TEST_CASE("cache verify --json reports ok, counts and the problem files") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  std::string bad = r.CacheDir() + "/0000000000000000.json";
  Spit(bad, "[]");
  Ran ran = RunOp(RunCacheCommand, {"verify", "--json"}, r.Ctx());
  CHECK(ran.code == 1);
  ojson expected = {
      {"ok", false},
      {"dirs", {r.CacheDir()}},
      {"counts",
       {{"current", 0},
        {"stale", 0},
        {"corrupt", 1},
        {"misnamed", 0},
        {"unreadable", 0},
        {"temp", 0}}},
      {"problems", {{{"file", bad}, {"state", "corrupt"}, {"why", "not a JSON object"}}}},
      {"errors", ojson::array()}};
  CHECK(ojson::parse(ran.out).dump() == expected.dump());
}

TEST_CASE("an unreadable record fails verify and survives prune") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  std::string path = r.Record(r.Key("0001-a", {"prd:1"}), true, "stale but unreadable");
  FaultyFileSystem fs;
  fs.Fail("read", path, EACCES);
  Ran verify = RunOp(RunCacheCommand, {"verify"}, r.Ctx(fs));
  CHECK(verify.code == 1);
  CHECK(Lines(verify.out).at(0) == path + ": unreadable: read " + path +
                                       ": Permission denied (EACCES); fix its permissions (the "
                                       "gate warns and treats it as a miss)");
  Ran prune = RunOp(RunCacheCommand, {"prune"}, r.Ctx(fs));
  CHECK(prune.code == 0);
  CHECK(prune.out == "removed 0 files, kept 1 in " + r.CacheDir() + "\n");
  CHECK(Slurp(path).has_value());
}

TEST_CASE(
    "cache prune deletes stale, corrupt, misnamed and leftover temp files, never a current "
    "record") {
  OperatorRoot r(CachedGateYaml());
  Zoo z = MakeZoo(r);
  const std::string current_bytes = *Slurp(z.current);
  Ran ran = RunOp(RunCacheCommand, {"prune"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.err == "");
  CHECK(ran.out ==
        Sorted({
            "removed " + z.moved +
                " (stale: inputs moved on: the verdict saw [design:2, prd:3], "
                "the card now has [design:4, prd:3])",
            "removed " + z.elsewhere +
                " (stale: card elsewhere: the key's root is "
                "/elsewhere/.devflow, not " +
                r.root + ")",
            "removed " + z.gone + " (stale: card gone: 0009-gone is not a card of this root)",
            "removed " + z.prompt +
                " (stale: prompt changed: the configured instruction for "
                "designing->ready is not the one this verdict answered)",
            "removed " + z.corrupt + " (corrupt: not valid JSON)",
            "removed " + z.no_report + " (corrupt: a veto record has no string \"reportPath\")",
            "removed " + z.misnamed + " (misnamed: its key hashes to " + z.misnamed_should_be +
                ", so the gate never looks it up under this name)",
            "removed " + z.temp_old + " (temp: leftover, 120s old)",
        }) + "removed 8 files, kept 2 in " +
            r.CacheDir() + "\n");
  CHECK(Slurp(z.current) == current_bytes);
  CHECK(Slurp(z.temp_new).has_value());  // may be a write in flight
  for (const auto& gone :
       {z.moved, z.elsewhere, z.gone, z.prompt, z.corrupt, z.no_report, z.misnamed, z.temp_old}) {
    CHECK_FALSE(Slurp(gone).has_value());
  }
  // What is left verifies clean.
  CHECK(RunOp(RunCacheCommand, {"verify"}, r.Ctx()).code == 0);
}

TEST_CASE("cache prune --dry-run lists what it would remove and changes nothing") {
  OperatorRoot r(CachedGateYaml());
  Zoo z = MakeZoo(r);
  auto before = Snapshot(r.ws.path());
  Ran ran = RunOp(RunCacheCommand, {"prune", "--dry-run"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(Lines(ran.out).size() == 9);
  CHECK(Lines(ran.out).back() == "would remove 8 files, kept 2 in " + r.CacheDir());
  CHECK(ran.out.find("would remove " + z.corrupt + " (corrupt: not valid JSON)\n") !=
        std::string::npos);
  CHECK(Snapshot(r.ws.path()) == before);
}

TEST_CASE("cache prune --json names removed and kept files") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  std::string current = r.Record(r.Key("0001-a", {"prd:3", "design:4"}), true, "ok");
  std::string stale = r.Record(r.Key("0001-a", {"prd:3"}), true, "older");
  Ran ran = RunOp(RunCacheCommand, {"prune", "--dry-run", "--json"}, r.Ctx());
  CHECK(ran.code == 0);
  ojson expected = {
      {"dryRun", true},
      {"dirs", {r.CacheDir()}},
      {"wouldRemove",
       {{{"file", stale},
         {"state", "stale"},
         {"why", "inputs moved on: the verdict saw [prd:3], the card now has [design:4, prd:3]"}}}},
      {"kept", {{{"file", current}, {"state", "current"}}}},
      {"errors", ojson::array()}};
  CHECK(ojson::parse(ran.out).dump() == expected.dump());
}

TEST_CASE("cache prune keeps a record that was rewritten after it was judged stale") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  std::string stale = r.Record(r.Key("0001-a", {"prd:3"}), true, "older");
  FaultyFileSystem fs;
  int reads = 0;
  fs.before = [&](const std::string& op, const std::string& path) {
    if (op == "read" && path == stale && ++reads == 2) Spit(stale, "rewritten by a gate\n");
  };
  Ran ran = RunOp(RunCacheCommand, {"prune"}, r.Ctx(fs));
  CHECK(ran.code == 0);
  CHECK(ran.out == "removed 0 files, kept 1 in " + r.CacheDir() + "\n");
  CHECK(Slurp(stale) == "rewritten by a gate\n");
}

TEST_CASE("cache prune exits 1 naming a file it could not remove") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  std::string stale = r.Record(r.Key("0001-a", {"prd:3"}), true, "older");
  FaultyFileSystem fs;
  fs.Fail("remove", stale, EACCES);
  Ran ran = RunOp(RunCacheCommand, {"prune"}, r.Ctx(fs));
  CHECK(ran.code == 1);
  CHECK(ran.out == "removed 0 files, kept 1 in " + r.CacheDir() + "\n");
  CHECK(ran.err == "devflow-gate: could not remove " + stale + ": remove " + stale +
                       ": Permission denied (EACCES); check the permissions of " + r.CacheDir() +
                       "\n");
  CHECK(Slurp(stale).has_value());
}

TEST_CASE("cache commands say the cache is disabled when no agent gate sets verdictCacheDir") {
  OperatorRoot r;
  for (const char* sub : {"list", "verify", "prune"}) {
    Ran ran = RunOp(RunCacheCommand, {sub}, r.Ctx());
    CHECK(ran.code == 0);
    CHECK(ran.out == "the verdict cache is disabled: no devflow-agent-gate sets verdictCacheDir\n");
  }
}

TEST_CASE("cache rejects unknown subcommands, options and arguments, exit 2") {
  OperatorRoot r(CachedGateYaml());
  const std::string hint = "run 'devflow-gate --help' (or '<command> --help') for usage\n";
  Ran bad = RunOp(RunCacheCommand, {"clear"}, r.Ctx());
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "devflow-gate: unknown cache subcommand \"clear\"; use list, verify or prune\n" + hint);
  Ran dry = RunOp(RunCacheCommand, {"list", "--dry-run"}, r.Ctx());
  CHECK(dry.code == 2);
  CHECK(dry.err == "devflow-gate: The following argument was not expected: --dry-run\n" + hint);
  Ran arg = RunOp(RunCacheCommand, {"verify", "x"}, r.Ctx());
  CHECK(arg.code == 2);
  CHECK(arg.err == "devflow-gate: The following argument was not expected: x\n" + hint);
}

TEST_CASE(
    "cache list: a checker rewritten in place is 'checker changed', one that cannot be read "
    "'checker unidentified'") {
  OperatorRoot r;
  const std::string program = r.ws / "judge.sh";
  Spit(program, "#!/bin/sh\necho allow\n");
  r.Configure("providers:\n  grounding:\n    command: ['" + program + "']\n" + CachedGateYaml());
  r.DesigningCard("0001-a");
  const VerdictCacheKey key = r.Key("0001-a", {"prd:3", "design:4"});
  const std::string path = r.CacheDir() + "/" + key.FileName();
  const std::string tail =
      ": allow 0001-a designing->ready [design:4, prd:3] at " + std::string(kT0) + ": ok";
  Spit(path, RenderCacheRecord(VerdictCacheRecord{key, true, "ok", std::nullopt, kT0, r.Identity(),
                                                  r.Inputs(key)}));
  CHECK(Lines(RunOp(RunCacheCommand, {"list"}, r.Ctx()).out).at(0) == path + ": current" + tail);
  // The same path, other bytes.
  Spit(program, "#!/bin/sh\necho veto!\n");
  CHECK(Lines(RunOp(RunCacheCommand, {"list"}, r.Ctx()).out).at(0) ==
        path +
            ": stale (checker changed: provider \"grounding\" (its definition, or the bytes of a "
            "file its command names) or the edge's verdictNonce is not what gave this verdict)" +
            tail);
  REQUIRE(std::filesystem::remove(program));
  CHECK(Lines(RunOp(RunCacheCommand, {"list"}, r.Ctx()).out).at(0) ==
        path +
            ": stale (checker unidentified: a file provider \"grounding\"'s command names "
            "cannot be read (open " +
            program + ": No such file or directory (ENOENT)), so the gate does not use the cache)" +
            tail);
}

TEST_CASE(
    "cache list: no checker or inputs identity, another checker, inputs changed in place, or a "
    "gone report is stale") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  const VerdictCacheKey key = r.Key("0001-a", {"prd:3", "design:4"});
  const std::string path = r.CacheDir() + "/" + key.FileName();
  const std::string head = path + ": stale (";
  const std::string tail =
      "): allow 0001-a designing->ready [design:4, prd:3] at " + std::string(kT0) + ": ok";
  // Upstream's record: no checkerSha256.
  Spit(path, RenderCacheRecord(VerdictCacheRecord{key, true, "ok", std::nullopt, kT0, "", ""}));
  Ran ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0) ==
        head +
            "no checker identity: the record has no \"checkerSha256\" (written by upstream's gate "
            "or an older devflow-gate), so the gate treats it as a miss" +
            tail);
  // Another checker's record.
  Spit(path, RenderCacheRecord(VerdictCacheRecord{key, true, "ok", std::nullopt, kT0,
                                                  CheckerIdentity(nullptr, true), r.Inputs(key)}));
  ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0) ==
        head +
            "checker changed: provider \"grounding\" (its definition, or the bytes of a file its "
            "command names) or the edge's verdictNonce is not what gave this verdict" +
            tail);
  // The current checker's, written before the field existed.
  Spit(path,
       RenderCacheRecord(VerdictCacheRecord{key, true, "ok", std::nullopt, kT0, r.Identity(), ""}));
  ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0) ==
        head +
            "no inputs identity: the record has no \"inputsSha256\" (written by upstream's gate "
            "or an older devflow-gate), so the gate treats it as a miss" +
            tail);
  // The current checker's record: current.
  r.Record(key, true, "ok");
  ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0).rfind(path + ": current", 0) == 0);
  // design:4 edited in place: the record judged other contents.
  const std::string design = r.root + "/tasks/0001-a/artifacts/4-design.md";
  REQUIRE(Slurp(design).has_value());
  const std::string before = *Slurp(design);
  Spit(design, before + "edited\n");
  ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0) == head +
                                    "inputs changed in place: [design:4, prd:3] or the card's "
                                    "title or body do not hold the contents this verdict judged "
                                    "(edited without a new registration), so the gate treats it "
                                    "as a miss" +
                                    tail);
  Spit(design, before);
  // The current checker's record: current; prune keeps it, removes the stale one above.
  r.Record(key, true, "ok");
  ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0).rfind(path + ": current", 0) == 0);
  // A veto whose report is gone.
  r.Record(key, false, "no");
  ran = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  CHECK(Lines(ran.out).at(0) == path + ": stale (report gone: the veto's report " + r.ReportDir() +
                                    "/x.md is not there, so the gate treats it as a miss): veto "
                                    "0001-a designing->ready [design:4, prd:3] at " +
                                    kT0 + ": no");
  ran = RunOp(RunCacheCommand, {"prune"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK_FALSE(Slurp(path).has_value());
}

}  // namespace
}  // namespace devflow

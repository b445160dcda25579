// Issue 7 items 3 and 11 in process: a cached verdict belongs to the checker that gave it (the
// provider definition and the edge's verdictNonce), and what a checker says is bounded in the
// journal check, the cache record and the decision message, whole only in the veto report.
#include <nlohmann/json.hpp>

#include "checker/verdict.h"
#include "gate/fixture.h"
#include "reports/verdict_cache.h"

namespace devflow::gatetest {
namespace {

ProviderConfig Definition(std::vector<std::string> command) {
  ProviderConfig p;
  p.name = "checker";
  p.command = std::move(command);
  return p;
}

// Rework back to designing, so the same edge with the same inputs is attempted again.
void Rework(Rig& rig, const std::string& id) {
  REQUIRE(rig.Move(id, Location::kDeveloping).code == "committed");
  REQUIRE(rig.Move(id, Location::kDesigning, false, "the design missed a case").code ==
          "committed");
}

TEST_CASE("identity: a cached allow is reused by the same checker definition") {
  Rig rig;
  rig.EnableCache();
  rig.scripted.definition = Definition({"/bin/true"});
  const std::string id = "0701-same";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Allow("design is sound");
  REQUIRE(rig.Move(id).code == "committed");
  const ProviderConfig def = *rig.scripted.definition;
  auto record = nlohmann::json::parse(*Slurp(rig.OnlyCacheFile()));
  Result<std::string> identity = CurrentCheckerIdentity(&def, false, ParentPath(rig.root));
  REQUIRE(identity.ok());
  CHECK(record["checkerSha256"] == *identity);
  Rework(rig, id);
  MoveOutcome again = rig.Move(id);
  CHECK(again.code == "committed");
  REQUIRE(again.checks.size() == 1);
  CHECK(again.checks[0].summary == "[cached] design is sound");
  CHECK(rig.scripted.requests.size() == 1);
}

TEST_CASE("identity: another provider definition misses, and its own verdict decides") {
  struct Swap {
    const char* label;
    std::function<void(ProviderConfig&)> change;
  };
  const Swap swaps[] = {
      {"argv", [](ProviderConfig& p) { p.command = {"/bin/false"}; }},
      {"env names", [](ProviderConfig& p) { p.env = {"MODEL"}; }},
      {"network", [](ProviderConfig& p) { p.network = true; }},
      {"sandbox off", [](ProviderConfig& p) { p.sandbox_off = true; }},
      {"reply block-only", [](ProviderConfig& p) { p.reply_block_only = true; }},
      {"a builtin",
       [](ProviderConfig& p) {
         p.command.clear();
         p.builtin = "grounding";
       }},
  };
  for (const Swap& swap : swaps) {
    CAPTURE(swap.label);
    Rig rig;
    rig.EnableCache();
    rig.scripted.definition = Definition({"/bin/true"});
    const std::string id = "0702-swap";
    WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
    rig.scripted.Allow("lenient says yes");
    REQUIRE(rig.Move(id).code == "committed");
    Rework(rig, id);
    swap.change(*rig.scripted.definition);
    // The block alone, so a block-only provider reads it too.
    rig.scripted.Reply("```json\n{\"verdict\": \"veto\", \"summary\": \"strict says no\"}\n```\n");
    MoveOutcome swapped = rig.Move(id);
    CHECK(swapped.code == "vetoed");
    CHECK(swapped.message.find("agent check vetoed designing->ready: strict says no") !=
          std::string::npos);
    CHECK(rig.scripted.requests.size() == 2);
    CHECK(rig.warnings.lines.empty());
  }
}

TEST_CASE("identity: a provider that is no longer defined misses and fails closed") {
  Rig rig;
  rig.EnableCache();
  rig.scripted.definition = Definition({"/bin/true"});
  const std::string id = "0703-gone";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Allow("lenient says yes");
  REQUIRE(rig.Move(id).code == "committed");
  Rework(rig, id);
  rig.scripted.definition.reset();
  rig.scripted.Fault("subagent provider \"checker\" is not registered");
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.failed_closed);
  CHECK(rig.scripted.requests.size() == 2);
}

TEST_CASE("identity: a verdict cached with verdictNonce off is not reused once it is on") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0704-nonce";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Allow("no nonce asked");
  REQUIRE(rig.Move(id).code == "committed");
  Rework(rig, id);
  rig.config.edges[0].verdict_nonce = true;
  rig.scripted.Allow("still no nonce");  // does not echo the nonce: fails closed
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.failed_closed);
  CHECK(rig.scripted.requests.size() == 2);
}

TEST_CASE("bounds: a huge veto is cut everywhere but in its report") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0705-huge";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string summary(200000, 's');
  std::vector<std::string> findings;
  for (int i = 0; i < 70; ++i) findings.push_back("finding " + std::to_string(i));
  findings[5] = std::string(5000, 'f');
  rig.scripted.Veto(summary, findings);
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.message.size() < 2048);
  CHECK(outcome.message.find("\xE2\x80\xA6 [cut: ") != std::string::npos);
  const std::string record = *Slurp(rig.OnlyCacheFile());
  CHECK(record.size() < 4096);
  const std::string report = *Slurp(rig.ReportDir() + "/" + id + "-designing-ready-r4.md");
  CHECK(report.find(summary) != std::string::npos);
  CHECK(report.find("- " + std::string(5000, 'f') + "\n") != std::string::npos);
  CHECK(report.find("- finding 69\n") != std::string::npos);
  // The cached veto quotes the bounded summary too.
  MoveOutcome cached = rig.Move(id);
  CHECK(cached.message.find("(cached): ") != std::string::npos);
  CHECK(cached.message.size() < 2048);
}

TEST_CASE("bounds: a huge allow summary is cut in the journal check and the cache record") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0706-huge-allow";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Allow(std::string(100000, 'a'));
  MoveOutcome outcome = rig.Move(id);
  REQUIRE(outcome.code == "committed");
  REQUIRE(outcome.checks.size() == 1);
  REQUIRE(outcome.checks[0].summary.has_value());
  CHECK(outcome.checks[0].summary->size() <= kMaxVerdictLineBytes);
  CHECK(LastLine(rig.Journal(id)).size() < 2048);
  CHECK(Slurp(rig.OnlyCacheFile())->size() < 4096);
}

TEST_CASE("reply block-only on the provider parks a reply with prose before its block") {
  // Issue 7 item 1: the provider's `reply: block-only` reaches the verdict rule. The same reply
  // admits under the default rule (upstream's allowReply has prose before the block).
  for (const bool block_only : {false, true}) {
    CAPTURE(block_only);
    Rig rig;
    rig.scripted.definition = Definition({"/bin/true"});
    rig.scripted.definition->reply_block_only = block_only;
    const std::string id = "0704-strict";
    WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
    rig.scripted.Allow("design is sound");
    MoveOutcome outcome = rig.Move(id);
    if (!block_only) {
      CHECK(outcome.code == "committed");
      continue;
    }
    ExpectParkedWithEvidence(rig, outcome, id,
                             "the checker replied without a parsable verdict block",
                             "this provider sets reply: block-only; the reply holds text outside "
                             "its verdict block (\"I read the card and its inputs.\")",
                             /*park_rev=*/5);
  }
}

}  // namespace
}  // namespace devflow::gatetest

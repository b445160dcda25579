// Port of upstream tests/agent-gate.spec.ts (reference/devflow-upstream.md §5.1): the agent gate
// composed with the store, the executor and other policies. Upstream composes plugins through
// Cordis' Loader; here the composition is the executor's waterfall (policies in config order).
#include "gate/fixture.h"
#include "plugin/artifact_gate.h"

namespace devflow::gatetest {
namespace {

const char kCheckAllowed[] =
    "\"checks\":[{\"by\":{\"kind\":\"agent\"},\"verdict\":\"allowed\",\"summary\":\"design is "
    "sound\"}]";

TEST_CASE(
    "agent-gate.spec 1: runs the structural artifact gate before dispatching the semantic "
    "checker") {
  Rig rig;
  ArtifactGateConfig shapes;
  shapes.kinds.push_back(ArtifactKindConfig{"prd", {}, {}, {}});
  shapes.kinds.push_back(ArtifactKindConfig{"design", {}, {}, {}});
  shapes.edges.push_back({Edge{Location::kDesigning, Location::kReady}, {"prd", "design"}});
  ArtifactGate artifact_gate(shapes, rig.Reader(), rig.fs);
  rig.before.push_back(&artifact_gate);
  WriteCard(rig.root, "0001-a");

  MoveOutcome first = rig.Move("0001-a");
  CHECK(first.code == "vetoed");
  CHECK(first.message ==
        Rejected("0001-a",
                 "required artifacts are missing or malformed: prd: no artifact of this kind is "
                 "registered on card 0001-a; design: no artifact of this kind is registered on "
                 "card 0001-a"));
  CHECK(rig.scripted.requests.empty());

  for (const char* kind : {"prd", "design"}) {
    ArtifactRequest add;
    add.id = "0001-a";
    add.expected_revision = rig.Read("0001-a").stage_revision;
    add.kind = kind;
    add.content = std::string("# ") + kind + "\n";
    Result<Card> added = rig.store.AddArtifact(add);
    REQUIRE_MESSAGE(added.ok(), added.status().message());
  }
  rig.scripted.Allow("design is sound");
  MoveOutcome second = rig.Move("0001-a");
  CHECK(second.code == "committed");
  CHECK(second.ok);
  CHECK(rig.scripted.requests.size() == 1);
  CHECK(rig.Read("0001-a").stage == Location::kReady);
}

TEST_CASE(
    "agent-gate.spec 2: admits the move on an allow verdict and records the agent check in the "
    "committed journal entry") {
  // "The parent can see the agent registry" becomes: the checker runs in the card workspace,
  // the parent directory of the root (our subprocess cwd).
  Rig rig;
  WriteCard(rig.root, "0001-a", {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Allow("design is sound");
  MoveOutcome outcome = rig.Move("0001-a");
  CHECK(outcome.ok);
  CHECK(outcome.code == "committed");
  REQUIRE(rig.scripted.requests.size() == 1);
  CHECK(rig.scripted.requests[0].workspace == rig.workspace);
  const std::string journal = rig.Journal("0001-a");
  CHECK(journal.find("\"to\":\"ready\"") != std::string::npos);
  CHECK(journal.find(kCheckAllowed) != std::string::npos);
  CHECK(LastLine(journal) ==
        std::string(
            "{\"rev\":5,\"at\":\"2026-09-16T08:00:00.000Z\",\"type\":\"transition\","
            "\"from\":\"designing\",\"to\":\"ready\",\"by\":{\"kind\":\"human\"},\"gate\":{") +
            kCheckAllowed + "}}");
  REQUIRE(outcome.checks.size() == 1);
  CHECK(outcome.checks[0].by.kind == "agent");
  CHECK(outcome.checks[0].summary == "design is sound");
  Card card = rig.Read("0001-a");
  CHECK(card.stage == Location::kReady);
  CHECK(card.stage_revision == 5);
  CHECK(rig.warnings.lines.empty());
}

TEST_CASE(
    "agent-gate.spec 3: rejects the move on a veto verdict, writes the report the reason names, "
    "and commits nothing") {
  Rig rig;
  WriteCard(rig.root, "0002-b", {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string before = rig.Journal("0002-b");
  rig.scripted.Veto("the design is hollow", {"no error handling", "no rollout plan"});
  MoveOutcome outcome = rig.Move("0002-b");
  const std::string report = rig.root + "/reports/agent-gate/0002-b-designing-ready-r4.md";
  CHECK(outcome.code == "vetoed");
  CHECK(!outcome.failed_closed);
  CHECK(outcome.message ==
        Rejected(
            "0002-b",
            "agent check vetoed designing->ready: the design is hollow; full report: " + report));
  CHECK(Slurp(report) ==
        "# Agent check veto: card 0002-b, edge designing->ready\n"
        "\n"
        "- card: 0002-b\n"
        "- edge: designing->ready\n"
        "- revision: 4\n"
        "- checked inputs: prd:3, design:4\n"
        "- at: 2026-09-16T08:00:00.000Z\n"
        "\n"
        "## Summary\n"
        "\n"
        "the design is hollow\n"
        "\n"
        "## Findings\n"
        "\n"
        "- no error handling\n"
        "- no rollout plan\n");
  REQUIRE(outcome.reports.size() == 1);
  CHECK(outcome.reports[0].path == report);
  CHECK(outcome.reports[0].written);
  CHECK(rig.Journal("0002-b") == before);
  CHECK(rig.Read("0002-b").stage_revision == 4);
  CHECK(rig.scripted.requests.size() == 1);
}

TEST_CASE(
    "agent-gate.spec 4: delegates unconfigured edges without reading the card or dispatching a "
    "checker") {
  Rig rig;
  WriteCard(rig.root, "0003-c", {}, /*draft_only=*/true);
  MoveOutcome outcome = rig.Move("0003-c", Location::kDesigning);
  CHECK(outcome.code == "committed");
  CHECK(rig.card_reads == 0);
  CHECK(rig.scripted.requests.empty());
  CHECK(LastLine(rig.Journal("0003-c")) ==
        "{\"rev\":2,\"at\":\"2026-09-16T08:00:00.000Z\",\"type\":\"transition\",\"from\":\"draft\","
        "\"to\":\"designing\",\"by\":{\"kind\":\"human\"}}");
}

TEST_CASE(
    "agent-gate.spec 5: appends its check to what downstream policies collected and never "
    "overrides a downstream veto") {
  Rig rig;
  rig.EnableCache();
  WriteCard(rig.root, "0004-d", {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  LambdaPolicy says_no("later", [](const Attempt&, AttemptContext&, const Next&) {
    return Decision::Veto("later policy says no");
  });
  rig.after = {&says_no};
  rig.scripted.Allow("design is sound");
  MoveOutcome vetoed = rig.Move("0004-d");
  CHECK(vetoed.code == "vetoed");
  CHECK(vetoed.message == Rejected("0004-d", "later policy says no"));
  CHECK(!vetoed.failed_closed);
  CHECK(rig.Read("0004-d").stage_revision == 4);

  LambdaPolicy approves("later", [](const Attempt&, AttemptContext&, const Next& next) {
    Decision d = next();
    if (!d.allowed) return d;
    d.approved_by = Actor{"human", std::nullopt, std::nullopt};
    d.checks.push_back(GateCheck{Actor{"human", std::nullopt, std::nullopt}, "human looked"});
    return d;
  });
  rig.after = {&approves};
  MoveOutcome admitted = rig.Move("0004-d");
  CHECK(admitted.code == "committed");
  CHECK(rig.scripted.requests.size() == 1);  // the first attempt's allow was cached
  CHECK(LastLine(rig.Journal("0004-d")) ==
        "{\"rev\":5,\"at\":\"2026-09-16T08:00:00.000Z\",\"type\":\"transition\",\"from\":"
        "\"designing\",\"to\":\"ready\",\"by\":{\"kind\":\"human\"},\"gate\":{\"approvedBy\":{"
        "\"kind\":\"human\"},\"checks\":[{\"by\":{\"kind\":\"human\"},\"verdict\":\"allowed\","
        "\"summary\":\"human looked\"},{\"by\":{\"kind\":\"agent\"},\"verdict\":\"allowed\","
        "\"summary\":\"[cached] design is sound\"}]}}");
}

TEST_CASE(
    "agent-gate.spec 6: writes the veto report inside the card devflow root, where fs-guard "
    "reaches it") {
  Rig rig;
  WriteCard(rig.root, "0005-e", {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  MoveOutcome outcome = rig.Move("0005-e");
  CHECK(outcome.code == "vetoed");
  CHECK(rig.Files(rig.ReportDir()) == std::vector<std::string>{"0005-e-designing-ready-r4.md"});
  // Nothing next to the root: the report did not land in the workspace or the process cwd.
  CHECK(rig.Files(rig.workspace) == std::vector<std::string>{".devflow"});
}

TEST_CASE(
    "agent-gate.spec 7: fails closed through the same composition: no provider vetoes the move "
    "and journals the blocked park") {
  // "No provider" = a checker dispatcher (the real SubprocessChecker) with no providers entry.
  Rig rig;
  SubprocessChecker real({}, test::GateBinary());
  rig.checker = &real;
  WriteCard(rig.root, "0006-f", {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  MoveOutcome outcome = rig.Move("0006-f");
  CHECK(outcome.message.find("agent check for designing->ready could not run") !=
        std::string::npos);
  CHECK(outcome.message.find("subagent provider \"checker\" is not registered") !=
        std::string::npos);
  ExpectParked(rig, outcome, "0006-f", "subagent provider \"checker\" is not registered", 5);
}

TEST_CASE(
    "agent-gate.spec 8: reuses the cached verdict through the same composition: an identical "
    "retry dispatches no second checker") {
  Rig rig;
  rig.EnableCache();
  WriteCard(rig.root, "0007-g", {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string journal = rig.Journal("0007-g");
  const std::string card_md = *Slurp(rig.CardDir("0007-g") + "/card.md");
  rig.scripted.Allow("design holds");
  REQUIRE(rig.Move("0007-g").code == "committed");
  // Reset the card to its pre-move content.
  Spit(rig.CardDir("0007-g") + "/journal.jsonl", journal);
  Spit(rig.CardDir("0007-g") + "/card.md", card_md);
  MoveOutcome retry = rig.Move("0007-g");
  CHECK(retry.code == "committed");
  CHECK(rig.scripted.requests.size() == 1);
  CHECK(rig.Journal("0007-g").find("\"summary\":\"[cached] design holds\"") != std::string::npos);
  CHECK(rig.warnings.lines.empty());
}

TEST_CASE("agent-gate.spec 9: stops checking once removed from the waterfall (HMR safety)") {
  // Upstream disposes the plugin's fiber; here the deployment is re-read without the gate: the
  // executor's waterfall no longer holds it, and nothing of it lingers.
  Rig rig;
  WriteCard(rig.root, "0008-h", {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  CHECK(rig.Move("0008-h").code == "vetoed");
  CHECK(rig.scripted.requests.size() == 1);
  rig.with_gate = false;
  MoveOutcome outcome = rig.Move("0008-h");
  CHECK(outcome.code == "committed");
  CHECK(rig.scripted.requests.size() == 1);
  CHECK(rig.Read("0008-h").stage == Location::kReady);
}

}  // namespace
}  // namespace devflow::gatetest

// Port of upstream tests/prompt.spec.ts (reference/devflow-upstream.md §5.6). Upstream's
// dispatch options (agentOptions, tool filter, label, synthetic parent) have no counterpart in
// a subprocess checker; cases 4–7 pin what our subprocess gets instead (SPEC §5): the
// CheckRequest's card id, edge, root, workspace, timeout and reply cap, and what the real
// checker process sees of them (DEVFLOW_GATE_* variables, cwd, the reply cap).
#include "checker/prompt.h"
#include "gate/fixture.h"

namespace devflow::gatetest {
namespace {

ProviderConfig ScriptProvider(Rig& rig, const std::string& body) {
  const std::string script = rig.workspace + "/bin/checker.sh";
  Spit(script, "#!/bin/sh\n" + body);
  test::MakeExecutable(script);
  ProviderConfig p;
  p.name = "checker";
  p.command = {script};
  return p;
}

// Cases 10–15: a reply whose only fenced block is not a verdict fails closed and parks.
void ExpectOnlyBlockFailsClosed(const std::string& id, const std::string& block,
                                const std::string& why) {
  Rig rig;
  WriteCard(rig.root, id);
  rig.scripted.Reply("Here is my verdict.\n\n```json\n" + block + "\n```\n");
  ExpectParkedWithEvidence(rig, rig.Move(id), id,
                           "the checker replied without a parsable verdict block", why);
  CHECK(rig.scripted.requests.size() == 1);
}

TEST_CASE(
    "prompt.spec 1: sends the instruction, the card, every input under its separator, and the "
    "verdict contract") {
  Rig rig;
  const std::string id = "0301-prompt";
  WriteCard(rig.root, id, {{"prd", "PRD CONTENT LINE\n"}, {"design", "DESIGN CONTENT LINE\n"}});
  rig.scripted.Allow("design is sound");
  REQUIRE(rig.Move(id).code == "committed");
  REQUIRE(rig.scripted.requests.size() == 1);
  const CheckRequest& request = rig.scripted.requests[0];
  const std::string prompt = request.prompt.Joined();
  CHECK(prompt.rfind(std::string(kInstruction) + "\n", 0) == 0);
  const std::string head = std::string(kInstruction) +
                           "\n\nYou are gate-checking devflow card 0301-prompt on edge "
                           "designing->ready.\n\n# Card 0301-prompt\n\nBody of 0301-prompt.\n\n"
                           "--- artifact prd (rev 3) ---\n\nPRD CONTENT LINE\n\n\n"
                           "--- artifact design (rev 4) ---\n\nDESIGN CONTENT LINE\n\n\n";
  CHECK(prompt.substr(0, head.size()) == head);
  CHECK(prompt.find("You are gate-checking devflow card 0301-prompt on edge designing->ready.") !=
        std::string::npos);
  CHECK(prompt.find("# Card 0301-prompt") != std::string::npos);
  CHECK(prompt.find("--- artifact prd (rev 3) ---\n\nPRD CONTENT LINE") != std::string::npos);
  CHECK(prompt.find("--- artifact design (rev 4) ---\n\nDESIGN CONTENT LINE") != std::string::npos);
  CHECK(prompt.find("You are a read-only checker") != std::string::npos);
  CHECK(prompt.find("\"verdict\": \"allow\" | \"veto\"") != std::string::npos);
  const std::string tail = "\n\n```json\n";
  CHECK(prompt.size() >= 4);
  CHECK(prompt.substr(prompt.size() - 4) == "\n```");  // no trailing newline
  CHECK(prompt.find(tail) != std::string::npos);
  // Upstream's label / parent cwd: the card id and the workspace the checker runs in.
  CHECK(request.provider == "checker");
  CHECK(request.card_id == "0301-prompt");
  CHECK(request.edge == "designing->ready");
  CHECK(request.workspace == rig.workspace);
}

TEST_CASE("the prompt for one card is upstream's bytes, whole") {
  // What upstream's checkerPrompt sends for this card and these inputs, written out by hand
  // from packages/devflow-agent-gate/src/index.ts (03a5e791).
  Rig rig;
  const std::string id = "0301-prompt";
  WriteCard(rig.root, id, {{"prd", "PRD CONTENT LINE\n"}, {"design", "DESIGN CONTENT LINE\n"}});
  rig.scripted.Allow("design is sound");
  REQUIRE(rig.Move(id).code == "committed");
  REQUIRE(rig.scripted.requests.size() == 1);
  const std::string expected =
      "Check that the design cites only requirements the PRD states.\n"
      "\n"
      "You are gate-checking devflow card 0301-prompt on edge designing->ready.\n"
      "\n"
      "# Card 0301-prompt\n"
      "\n"
      "Body of 0301-prompt.\n"
      "\n"
      "--- artifact prd (rev 3) ---\n"
      "\n"
      "PRD CONTENT LINE\n"
      "\n"
      "\n"
      "--- artifact design (rev 4) ---\n"
      "\n"
      "DESIGN CONTENT LINE\n"
      "\n"
      "\n"
      "Judge only against the instruction above. You are a read-only checker: do not call any\n"
      "devflow mutation tool or any file-writing tool; your verdict is your only deliverable.\n"
      "End your reply with exactly one fenced JSON block of this shape:\n"
      "\n"
      "```json\n"
      "{ \"verdict\": \"allow\" | \"veto\", \"summary\": \"<one line>\", \"findings\": "
      "[\"<one item per defect or confirmation>\"] }\n"
      "```";
  CHECK(rig.scripted.requests[0].prompt.Joined() == expected);
  CHECK(rig.scripted.requests[0].prompt.size() == 646);
}

TEST_CASE(
    "under reply: block-only the contract sentence asks for the block alone, and reads back") {
  // trial15: the prompt of a block-only provider asks for what the gate then accepts; under
  // reply: text the sentence stays upstream's, byte for byte (the test above).
  for (const bool nonce : {false, true}) {
    CAPTURE(nonce);
    Rig rig;
    ProviderConfig strict;
    strict.name = "checker";
    strict.command = {"/bin/true"};
    strict.reply_block_only = true;
    rig.scripted.definition = strict;
    if (nonce) rig.config.edges[0].verdict_nonce = true;
    const std::string id = "0301-prompt";
    WriteCard(rig.root, id, {{"prd", "PRD CONTENT LINE\n"}, {"design", "DESIGN CONTENT LINE\n"}});
    rig.scripted.Reply("```json\n{\"verdict\": \"veto\", \"summary\": \"no\"}\n```\n");
    rig.Move(id);
    REQUIRE(rig.scripted.requests.size() == 1);
    const std::string prompt = rig.scripted.requests[0].prompt.Joined();
    CHECK(prompt.find("End your reply with exactly one fenced JSON block") == std::string::npos);
    const std::string asks =
        "your verdict is your only deliverable.\n"
        "Reply with only one fenced JSON block of this shape, and no text before or after it:";
    CHECK(prompt.find(asks + (nonce ? " Include \"nonce\": " : "\n\n```json\n")) !=
          std::string::npos);
    // The built-in checker's parse reads it back, the flag with it.
    Result<PromptParts> parsed = ParsePrompt(prompt);
    REQUIRE(parsed.ok());
    CHECK(parsed->block_only);
    CHECK(parsed->nonce.has_value() == nonce);
    CHECK(AssemblePrompt(*parsed) == prompt);
    // And upstream's sentence reads back as text.
    parsed->block_only = false;
    Result<PromptParts> upstream = ParsePrompt(AssemblePrompt(*parsed));
    REQUIRE(upstream.ok());
    CHECK_FALSE(upstream->block_only);
  }
}

TEST_CASE(
    "prompt.spec 2: skips an input kind with no registration instead of vetoing for it — "
    "presence is the mechanical gate's job") {
  Rig rig;
  const std::string id = "0302-skip";
  WriteCard(rig.root, id, {{"prd", "PRD CONTENT LINE\n"}});
  rig.scripted.Allow("design is sound");
  CHECK(rig.Move(id).code == "committed");
  REQUIRE(rig.scripted.requests.size() == 1);
  const std::string prompt = rig.scripted.requests[0].prompt.Joined();
  CHECK(Count(prompt, "--- artifact prd (rev 3) ---") == 1);
  CHECK(prompt.find("--- artifact design") == std::string::npos);
}

TEST_CASE("prompt.spec 3: deduplicates a kind listed twice: one separator, one read") {
  Result<GateConfig> loaded = LoadConfigText(
      "plugins:\n"
      "  - id: devflow-agent-gate\n"
      "    config:\n"
      "      edges:\n"
      "        'designing->ready':\n"
      "          provider: checker\n"
      "          inputs: [prd, prd]\n"
      "          prompt: Check that the design cites only requirements the PRD states.\n",
      "devflow-gate.yaml");
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  REQUIRE(loaded->plugins.size() == 1);
  REQUIRE(loaded->plugins[0].agent.has_value());
  Rig rig;
  rig.config = *loaded->plugins[0].agent;
  const std::string id = "0303-dedupe";
  WriteCard(rig.root, id, {{"prd", "PRD CONTENT LINE\n"}});
  int prd_reads = 0;
  rig.fs.before = [&](const std::string& op, const std::string& path) {
    if (op == "read" && path == rig.CardDir(id) + "/artifacts/3-prd.md") ++prd_reads;
  };
  rig.scripted.Allow("design is sound");
  CHECK(rig.Move(id).code == "committed");
  REQUIRE(rig.scripted.requests.size() == 1);
  CHECK(Count(rig.scripted.requests[0].prompt.Joined(), "--- artifact prd (rev 3) ---") == 1);
  // One read for the prompt (not one per listing), and one re-hash under the commit lock
  // because a checker ran (issue 7).
  CHECK(prd_reads == 2);
}

TEST_CASE(
    "prompt.spec 4: tells the checker which card, edge, root and workspace it checks (replaces "
    "the tool filter)") {
  Rig rig;
  const std::string id = "0304-identity";
  WriteCard(rig.root, id);
  rig.scripted.Allow("design is sound");
  REQUIRE(rig.Move(id).code == "committed");
  REQUIRE(rig.scripted.requests.size() == 1);
  const CheckRequest& request = rig.scripted.requests[0];
  CHECK(request.card_id == id);
  CHECK(request.edge == "designing->ready");
  CHECK(request.root == rig.root);
  CHECK(request.workspace == rig.workspace);
}

TEST_CASE(
    "prompt.spec 5: sends the configured checkTimeoutMs and reply cap with every check, with "
    "the defaults 600000 ms and 8 MiB (replaces agentOptions)") {
  Rig rig;
  const std::string id = "0305-limits";
  WriteCard(rig.root, id);
  rig.scripted.Veto("the design is hollow");
  rig.scripted.Veto("the design is hollow");
  REQUIRE(rig.Move(id).code == "vetoed");
  rig.config.check_timeout_ms = 1234;
  rig.config.max_reply_bytes = 4096;
  REQUIRE(rig.Move(id).code == "vetoed");
  REQUIRE(rig.scripted.requests.size() == 2);
  CHECK(rig.scripted.requests[0].timeout_ms == 600000);
  CHECK(rig.scripted.requests[0].max_reply_bytes == 8 * 1024 * 1024);
  CHECK(rig.scripted.requests[1].timeout_ms == 1234);
  CHECK(rig.scripted.requests[1].max_reply_bytes == 4096);
}

TEST_CASE(
    "prompt.spec 6: the checker process sees its card, edge and root in DEVFLOW_GATE_* and runs "
    "in the workspace (replaces the parent's agent registry)") {
  Rig rig;
  const std::string id = "0306-env";
  WriteCard(rig.root, id);
  ProviderConfig p = ScriptProvider(
      rig,
      "cat >/dev/null\n"
      "printf 'Checked.\\n```json\\n{\"verdict\": \"allow\", \"summary\": "
      "\"%s|%s|%s|%s\"}\\n```\\n' "
      "\"$DEVFLOW_GATE_CARD\" \"$DEVFLOW_GATE_EDGE\" \"$DEVFLOW_GATE_ROOT\" \"$(pwd -P)\"\n");
  SubprocessChecker real({p}, test::GateBinary());
  rig.checker = &real;
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "committed");
  REQUIRE(outcome.checks.size() == 1);
  CHECK(outcome.checks[0].summary == id + "|designing->ready|" + rig.root + "|" + rig.workspace);
}

TEST_CASE("prompt.spec 7: fails closed when the checker reply exceeds the reply cap") {
  Rig rig;
  const std::string id = "0307-cap";
  WriteCard(rig.root, id);
  ProviderConfig p = ScriptProvider(
      rig,
      "cat >/dev/null\n"
      "i=0; while [ $i -lt 20 ]; do echo 'padding padding padding'; i=$((i+1)); done\n"
      "printf '```json\\n{\"verdict\": \"allow\", \"summary\": \"too long\"}\\n```\\n'\n");
  SubprocessChecker real({p}, test::GateBinary());
  rig.checker = &real;
  rig.config.max_reply_bytes = 64;
  ExpectParkedWithEvidence(rig, rig.Move(id), id, "the checker reply exceeded 64 bytes", "");
}

TEST_CASE(
    "prompt.spec 8: reads the last parsable verdict block, skipping a trailing block that is "
    "not one") {
  Rig rig;
  const std::string id = "0308-last";
  WriteCard(rig.root, id);
  rig.scripted.Reply(
      "A veto would look like this:\n\n```json\n{\"verdict\": \"veto\", \"summary\": \"quoted "
      "example\"}\n```\n\nMy decision:\n\n```json\n{\"verdict\": \"allow\", \"summary\": \"the "
      "real decision\"}\n```\n\nAnd a trailing snippet:\n\n```\nnot json at all\n```\n");
  // Our rule differs from upstream's here (docs/decisions.md "The verdict block ends the reply"):
  // the trailing snippet follows the deciding block, so the reply has no verdict and parks.
  ExpectParkedWithEvidence(
      rig, rig.Move(id), id, "the checker replied without a parsable verdict block",
      "the reply goes on after its last verdict block (\"And a trailing snippet:\\n\\n```\\nnot "
      "json "
      "at all\\n```\"); the verdict block must end the reply, with nothing after it");
  // The same reply ending with the decision: the example veto and the allow disagree, so this
  // reply has no verdict either (docs/decisions.md "Verdict blocks that disagree"; upstream
  // admits).
  Rig rig2;
  const std::string id2 = "0318-last";
  WriteCard(rig2.root, id2);
  rig2.scripted.Reply(
      "A veto would look like this:\n\n```json\n{\"verdict\": \"veto\", \"summary\": \"quoted "
      "example\"}\n```\n\nMy decision:\n\n```json\n{\"verdict\": \"allow\", \"summary\": \"the "
      "real decision\"}\n```\n");
  ExpectParkedWithEvidence(rig2, rig2.Move(id2), id2,
                           "the checker replied without a parsable verdict block",
                           "the reply's verdict blocks disagree: an earlier block vetoes (\"quoted "
                           "example\"), the last allows; a reply must give one verdict, so it has "
                           "none");
  // A quoted contract is not a verdict: it is skipped, and the last block decides.
  Rig rig3;
  const std::string id3 = "0328-last";
  WriteCard(rig3.root, id3);
  rig3.scripted.Reply(
      "The format:\n\n```json\n{\"verdict\": \"allow\" | \"veto\", \"summary\": \"<one "
      "line>\"}\n```\n\nMy decision:\n\n```json\n{\"verdict\": \"allow\", \"summary\": \"the "
      "real decision\"}\n```\n");
  MoveOutcome outcome = rig3.Move(id3);
  CHECK(outcome.code == "committed");
  const std::string journal = rig3.Journal(id3);
  CHECK(journal.find("\"summary\":\"the real decision\"") != std::string::npos);
  CHECK(journal.find("<one line>") == std::string::npos);
}

TEST_CASE(
    "prompt.spec 9: ignores output that is not the reply text when hunting for the verdict "
    "(stderr of the checker)") {
  // Upstream: non-text output blocks are ignored. Ours: only stdout is the reply; a verdict
  // block printed on stderr (diagnostics, tool output) never decides.
  Rig rig;
  const std::string id = "0309-stderr";
  WriteCard(rig.root, id);
  ProviderConfig p = ScriptProvider(
      rig,
      "cat >/dev/null\n"
      "printf 'Checked.\\n```json\\n{\"verdict\": \"allow\", \"summary\": \"from "
      "stdout\"}\\n```\\n'\n"
      "printf '```json\\n{\"verdict\": \"veto\", \"summary\": \"from stderr\"}\\n```\\n' >&2\n");
  SubprocessChecker real({p}, test::GateBinary());
  rig.checker = &real;
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "committed");
  REQUIRE(outcome.checks.size() == 1);
  CHECK(outcome.checks[0].summary == "from stdout");
}

TEST_CASE("prompt.spec 10: fails closed when the only block carries a JSON scalar") {
  ExpectOnlyBlockFailsClosed("0310-scalar", "42",
                             "the last verdict block is a number, not a JSON object");
}

TEST_CASE("prompt.spec 11: fails closed when the only block carries JSON null") {
  ExpectOnlyBlockFailsClosed("0311-null", "null",
                             "the last verdict block is null, not a JSON object");
}

TEST_CASE("prompt.spec 12: fails closed when the only block carries an unknown verdict word") {
  ExpectOnlyBlockFailsClosed(
      "0312-maybe", "{\"verdict\": \"maybe\", \"summary\": \"unsure\"}",
      "the last verdict block says \"verdict\": \"maybe\"; expected \"allow\" or \"veto\"");
}

TEST_CASE("prompt.spec 13: fails closed when the only block carries a blank summary") {
  ExpectOnlyBlockFailsClosed(
      "0313-blank", "{\"verdict\": \"allow\", \"summary\": \"  \"}",
      "the last verdict block says \"summary\": \"  \"; expected a non-blank string");
}

TEST_CASE(
    "a summary of only zero-width and Unicode space characters fails closed like a blank one") {
  // U+200B U+2060 U+FEFF U+0085: String#trim keeps the first two and NEL (issue 7, fresh trial).
  ExpectOnlyBlockFailsClosed(
      "0313-zero-width", "{\"verdict\": \"allow\", \"summary\": \"\\u200b\\u2060\\ufeff\\u0085\"}",
      "the last verdict block says \"summary\": \"\xE2\x80\x8B\xE2\x81\xA0\xEF\xBB\xBF\xC2\x85\"; "
      "expected a non-blank string");
}

TEST_CASE("prompt.spec 14: fails closed when the only block carries non-array findings") {
  ExpectOnlyBlockFailsClosed(
      "0314-findings-string",
      "{\"verdict\": \"veto\", \"summary\": \"hollow\", \"findings\": \"one\"}",
      "the last verdict block says \"findings\": \"one\"; expected an array of strings");
}

TEST_CASE("prompt.spec 15: fails closed when the only block carries a non-string finding") {
  ExpectOnlyBlockFailsClosed(
      "0315-findings-number", "{\"verdict\": \"veto\", \"summary\": \"hollow\", \"findings\": [1]}",
      "the last verdict block has a finding 1; expected an array of strings");
}

TEST_CASE("prompt.spec 16: reports \"no individual findings\" when a veto carries none") {
  Rig rig;
  rig.config.edges[0].inputs.clear();
  const std::string id = "0309-no-findings";
  WriteCard(rig.root, id);
  rig.scripted.Reply("```json\n{ \"verdict\": \"veto\", \"summary\": \"hollow\" }\n```");
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "vetoed");
  const std::string path = rig.root + "/reports/agent-gate/0309-no-findings-designing-ready-r2.md";
  std::optional<std::string> report = Slurp(path);
  REQUIRE(report.has_value());
  CHECK(report->find("The checker listed no individual findings.") != std::string::npos);
  CHECK(report->find("- checked inputs: none") != std::string::npos);
  CHECK(*report ==
        "# Agent check veto: card 0309-no-findings, edge designing->ready\n\n- card: "
        "0309-no-findings\n- edge: designing->ready\n- revision: 2\n- checked inputs: none\n- "
        "at: 2026-09-16T08:00:00.000Z\n\n## Summary\n\nhollow\n\n## Findings\n\nThe checker "
        "listed no individual findings.\n");
}

TEST_CASE("AssemblePromptPieces takes each input's bytes as a piece of its own, not a copy") {
  PromptParts parts;
  parts.instruction = "Check it.";
  parts.card_id = "0001-a";
  parts.edge = "designing->ready";
  parts.title = "A";
  parts.body = "Body.";
  parts.inputs = {{"prd", 3, std::string(1 << 20, 'p')}, {"design", 4, std::string(1 << 20, 'd')}};
  const std::string expected = AssemblePrompt(parts);  // the const overload keeps its parts
  CHECK(parts.inputs[0].content.size() == 1u << 20);
  const char* prd_bytes = parts.inputs[0].content.data();
  const char* design_bytes = parts.inputs[1].content.data();
  const PromptPieces taken = AssemblePromptPieces(std::move(parts));
  CHECK(taken.Joined() == expected);
  // The inputs' own buffers are the pieces (moved, never copied; issue 11 item 2, peak memory)
  // and the parts hold none of them any more.
  REQUIRE(taken.pieces().size() == 5);
  CHECK(taken.pieces()[1].data() == prd_bytes);
  CHECK(taken.pieces()[3].data() == design_bytes);
  for (const PromptInput& input : parts.inputs) {  // NOLINT(bugprone-use-after-move): the point
    CHECK(input.content.empty());
    CHECK(input.content.capacity() < 64);
  }
}

}  // namespace
}  // namespace devflow::gatetest

// Prompt assembly (reference §4.5, §5.6 case 1) and its inverse for the grounding checker.
#include <doctest/doctest.h>

#include <string>

#include "checker/prompt.h"

namespace devflow {
namespace {

PromptParts SampleParts() {
  PromptParts parts;
  parts.instruction = "Check that the design cites only requirements the PRD states.";
  parts.card_id = "0301-prompt";
  parts.edge = "designing->ready";
  parts.title = "Card 0301-prompt";
  parts.body = "Body of 0301-prompt.";
  parts.inputs = {{"prd", 3, "PRD CONTENT LINE\n"}, {"design", 4, "DESIGN CONTENT LINE\n"}};
  return parts;
}

void CheckSameParts(const PromptParts& got, const PromptParts& want) {
  CHECK(got.instruction == want.instruction);
  CHECK(got.card_id == want.card_id);
  CHECK(got.edge == want.edge);
  CHECK(got.title == want.title);
  CHECK(got.body == want.body);
  CHECK(got.nonce == want.nonce);
  REQUIRE(got.inputs.size() == want.inputs.size());
  for (size_t i = 0; i < want.inputs.size(); ++i) {
    CAPTURE(i);
    CHECK(got.inputs[i].kind == want.inputs[i].kind);
    CHECK(got.inputs[i].rev == want.inputs[i].rev);
    CHECK(got.inputs[i].content == want.inputs[i].content);
  }
}

void CheckRoundTrip(const PromptParts& parts) {
  const std::string prompt = AssemblePrompt(parts);
  const Result<PromptParts> parsed = ParsePrompt(prompt);
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().message());
  CheckSameParts(*parsed, parts);
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE(
    "the prompt carries the instruction, the card, every input under its separator, and "
    "the verdict contract") {
  const std::string prompt = AssemblePrompt(SampleParts());
  CHECK(prompt.rfind("Check that the design cites only requirements the PRD states.\n", 0) == 0);
  CHECK(Contains(prompt,
                 "\n\nYou are gate-checking devflow card 0301-prompt on edge "
                 "designing->ready.\n\n"));
  CHECK(Contains(prompt, "\n\n# Card 0301-prompt\n\nBody of 0301-prompt.\n\n"));
  CHECK(Contains(prompt, "--- artifact prd (rev 3) ---\n\nPRD CONTENT LINE"));
  CHECK(Contains(prompt, "--- artifact design (rev 4) ---\n\nDESIGN CONTENT LINE"));
  CHECK(Contains(prompt, "You are a read-only checker"));
  CHECK(Contains(prompt, "\"verdict\": \"allow\" | \"veto\""));
  CHECK(prompt.size() >= 4);
  CHECK(prompt.substr(prompt.size() - 4) == "\n```");  // no trailing newline
  CHECK_FALSE(Contains(prompt, "nonce"));
}

TEST_CASE("the verdict contract is upstream's checkerPrompt text, byte for byte") {
  const std::string prompt = AssemblePrompt(SampleParts());
  // packages/devflow-agent-gate/src/index.ts checkerPrompt (03a5e791): 365 bytes from the
  // blank line before the read-only sentence to the closing fence.
  const std::string contract =
      "\n\nJudge only against the instruction above. You are a read-only checker: do not call "
      "any\ndevflow mutation tool or any file-writing tool; your verdict is your only "
      "deliverable.\nEnd your reply with exactly one fenced JSON block of this shape:\n\n"
      "```json\n{ \"verdict\": \"allow\" | \"veto\", \"summary\": \"<one line>\", "
      "\"findings\": [\"<one item per defect or confirmation>\"] }\n```";
  CHECK(contract.size() == 365);
  REQUIRE(prompt.size() > contract.size());
  CHECK(prompt.substr(prompt.size() - contract.size()) == contract);
}

TEST_CASE("a nonce adds a sentence asking for it and a nonce property in the shape line") {
  PromptParts parts = SampleParts();
  parts.nonce = "c0ffee-42";
  const std::string prompt = AssemblePrompt(parts);
  const std::string contract =
      "\n\nJudge only against the instruction above. You are a read-only checker: do not call "
      "any\ndevflow mutation tool or any file-writing tool; your verdict is your only "
      "deliverable.\nEnd your reply with exactly one fenced JSON block of this shape: Include "
      "\"nonce\": \"c0ffee-42\" in that block.\n\n```json\n{ \"verdict\": \"allow\" | "
      "\"veto\", \"summary\": \"<one line>\", \"findings\": [\"<one item per defect or "
      "confirmation>\"], \"nonce\": \"c0ffee-42\" }\n```";
  REQUIRE(prompt.size() > contract.size());
  CHECK(prompt.substr(prompt.size() - contract.size()) == contract);
  CheckRoundTrip(parts);
}

TEST_CASE("ParsePrompt inverts AssemblePrompt for the sample prompt") {
  CheckRoundTrip(SampleParts());
}

TEST_CASE("ParsePrompt keeps a multi-line instruction with blank lines whole") {
  PromptParts parts = SampleParts();
  parts.instruction = "Line one.\n\nLine three after a blank.\n";
  CheckRoundTrip(parts);
}

TEST_CASE("ParsePrompt round-trips an empty body") {
  PromptParts parts = SampleParts();
  parts.body = "";
  CheckRoundTrip(parts);
  parts.inputs.clear();
  CheckRoundTrip(parts);
}

TEST_CASE("ParsePrompt round-trips input contents with and without a final newline") {
  PromptParts parts = SampleParts();
  parts.inputs = {{"prd", 3, "no newline"},
                  {"design", 4, "one newline\n"},
                  {"notes", 5, "two newlines\n\n"},
                  {"empty", 6, ""},
                  {"last", 7, "ends\n"}};
  CheckRoundTrip(parts);
  parts.inputs.push_back({"tail-empty", 8, ""});
  CheckRoundTrip(parts);
  parts.inputs = {{"only", 1, "\n"}};
  CheckRoundTrip(parts);
}

TEST_CASE("ParsePrompt round-trips zero inputs") {
  PromptParts parts = SampleParts();
  parts.inputs.clear();
  CheckRoundTrip(parts);
}

TEST_CASE("ParsePrompt keeps text that only resembles a separator or the trailer as content") {
  PromptParts parts = SampleParts();
  const std::string sample = AssemblePrompt(parts);
  const size_t at = sample.rfind("You are a read-only checker");
  const size_t line_start = sample.rfind('\n', at) + 1;
  const std::string read_only_line = sample.substr(line_start, sample.find('\n', at) - line_start);
  parts.body =
      "Body mentions --- artifact prd (rev 3) --- inline.\n--- artifact bad kind (rev 1) ---";
  parts.inputs = {{"design", 4, "quoting the checker prompt:\n\n" + read_only_line + "\nmore\n"},
                  {"prd", 5, "--- artifact prd (rev 9) --- is not alone on its line\n"}};
  CheckRoundTrip(parts);
}

TEST_CASE("ParsePrompt rejects text that is not an agent-gate prompt with a usage error") {
  const Result<PromptParts> empty = ParsePrompt("");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == "usage");
  CHECK(empty.status().message() ==
        "the text on stdin is not an agent-gate prompt: no line \"You are gate-checking devflow "
        "card <id> on edge <edge>.\"; pipe the prompt the agent gate assembles");

  const std::string prompt = AssemblePrompt(SampleParts());
  const Result<PromptParts> cut = ParsePrompt(prompt.substr(0, prompt.size() - 4));
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.status().code() == "usage");
  CHECK(Contains(cut.status().message(), "verdict contract"));

  const Result<PromptParts> no_trailer =
      ParsePrompt("do it\n\nYou are gate-checking devflow card 1-a on edge a->b.\n\n# T\n\nbody");
  REQUIRE_FALSE(no_trailer.ok());
  CHECK(Contains(no_trailer.status().message(), "no read-only checker sentence"));
}

}  // namespace devflow

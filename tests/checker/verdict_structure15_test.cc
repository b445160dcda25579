// Issue 7 item 1, the block-structure and value findings of trial15 (/work/trial/REPORT-15.md
// A1 A2 A3 A5): each shape is one allow block that a reader takes for something else, and each
// must leave no verdict under both reply rules, with the nonce on and off. The controls beside
// them are honest replies that must still be admitted. docs/checker-protocol.md "Which block
// decides" and "No decision value beside an allow" state the rules.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "checker/verdict.h"

namespace devflow {
namespace {

const std::string kNonce = "0123456789abcdef0123456789abcdef";
const std::optional<std::string> kNonces[] = {std::nullopt, kNonce};
constexpr ReplyRule kRules[] = {ReplyRule::kText, ReplyRule::kBlockOnly};

// The allow object with `extra` members after the summary, and the nonce when given.
std::string AllowObject(const std::optional<std::string>& nonce,
                        const std::string& summary = "all requirements are cited",
                        const std::string& extra = "") {
  return "{\"verdict\": \"allow\", \"summary\": \"" + summary + "\"" + extra +
         (nonce ? ", \"nonce\": \"" + *nonce + "\"" : std::string()) + "}";
}

std::string AllowBlock(const std::optional<std::string>& nonce, const std::string& info = "json",
                       const std::string& summary = "all requirements are cited",
                       const std::string& extra = "") {
  return "```" + info + "\n" + AllowObject(nonce, summary, extra) + "\n```\n";
}

}  // namespace

// ---- A1: the deciding block's opener line ----

TEST_CASE("trial15 A1: text after json on the deciding block's opener line leaves no verdict") {
  const std::vector<std::string> infos = {
      "json VETO: REQ-7 is missing from the PRD, do not merge",  // x01
      "json // final",                                           // b09
      "json ~~~",                                                // x36
      "json `x`",  // x37: no fence at all to a CommonMark reader
      "json                                                   verdict: veto",  // x03
      "jsonVETO",
      "text",  // the block claims by its `{`, whatever its info string
      "VETO json",
      "json5",
      "json\xC2\xA0VETO",  // NBSP, then a word
  };
  for (const std::string& info : infos) {
    CAPTURE(info);
    for (const auto& nonce : kNonces) {
      for (const ReplyRule rule : kRules) {
        const std::string reply = AllowBlock(nonce, info);
        CHECK_FALSE(ParseLastVerdict(reply, nonce, rule));
        const std::string why = VerdictFaultReason(reply, nonce, rule);
        CAPTURE(why);
        CHECK(why.rfind("the last verdict block opens with \"```", 0) == 0);
        CHECK(why.find("so the reply has none") != std::string::npos);
      }
    }
  }
}

TEST_CASE("trial15 A1 controls: an info string of json or nothing, white space around it") {
  for (const std::string info : {"json", "", "JSON", "Json", "  json  ", "json\t", "\t"}) {
    CAPTURE(info);
    for (const auto& nonce : kNonces) {
      for (const ReplyRule rule : kRules) {
        const auto verdict = ParseLastVerdict(AllowBlock(nonce, info), nonce, rule);
        REQUIRE(verdict);
        CHECK(verdict->allow);
      }
    }
  }
  // A CRLF reply: the CR ends the info string's white space.
  const std::string crlf = "```json\r\n" + AllowObject(kNonce) + "\r\n```\r\n";
  CHECK(ParseLastVerdict(crlf, kNonce, ReplyRule::kBlockOnly));
  CHECK(ParseLastVerdict(crlf, kNonce, ReplyRule::kText));
  // Only the deciding block is held to it: an earlier snippet may carry any info string.
  const std::string snippet = "Checked with:\n\n```bash title=\"run\"\nmake test\n```\n\n";
  CHECK(ParseLastVerdict(snippet + AllowBlock(kNonce), kNonce));
}

// ---- A2: a number is read by its value ----

TEST_CASE("trial15 A2: a decision value written as a float or past 64 bits still refuses") {
  const std::vector<std::string> values = {
      R"("failures": 2.0)",
      R"("failures": 1e0)",
      R"("failures": 20e-1)",
      R"("blocking_issues": 3.0)",
      R"("veto_count": 1e2)",
      R"("failures": 18446744073709551616)",
      R"("blockers": 18446744073709551617)",
      R"("failures": 1e300)",
      R"("is_approved": 0.0)",
      R"("is_approved": 0e0)",
      R"("ready": 0E5)",
      R"("lgtm": 0.0)",
      R"("is_approved": -0.0)",
      R"("is_approved": 0.0e-7)",
  };
  for (const std::string& value : values) {
    CAPTURE(value);
    for (const auto& nonce : kNonces) {
      for (const ReplyRule rule : kRules) {
        const std::string reply =
            AllowBlock(nonce, "json", "all requirements are cited", ", " + value);
        CHECK_FALSE(ParseLastVerdict(reply, nonce, rule));
        const std::string why = VerdictFaultReason(reply, nonce, rule);
        CAPTURE(why);
        CHECK(why.rfind("the last verdict block has the decision value ", 0) == 0);
      }
    }
  }
}

TEST_CASE("trial15 A2 controls: zero under a negative key, a fraction and an answer number") {
  for (const std::string value :
       {R"("failures": 0.0)", R"("failures": 0e0)", R"("blockers": -0.0)", R"("confidence": 0.85)",
        R"("confidence": 0.0)", R"("confidence": 1.0)", R"("exit_status": 0.0)",
        R"("exit_status": 1e0)", R"("is_approved": 1.0)", R"("ready": 1e0)"}) {
    CAPTURE(value);
    const auto verdict =
        ParseLastVerdict(AllowBlock(kNonce, "json", "all requirements are cited", ", " + value),
                         kNonce, ReplyRule::kBlockOnly);
    REQUIRE(verdict);
    CHECK(verdict->allow);
  }
}

TEST_CASE("trial15 A2: an earlier draft whose approval is 0.0 disagrees with the final allow") {
  const std::string reply =
      "Draft:\n\n```json\n{\"approved\": 0.0, \"summary\": \"REQ-7 is missing\"}\n```\n\n" +
      AllowBlock(kNonce);
  CHECK_FALSE(ParseLastVerdict(reply, kNonce));
  CHECK(VerdictFaultReason(reply, kNonce).rfind("the reply's verdict blocks disagree", 0) == 0);
}

// ---- A3: a fence indented under a list item is the item's content ----

TEST_CASE("trial15 A3: a fence indented under a list item is inside the list item") {
  struct Case {
    std::string label, before;
  };
  const std::vector<Case> cases = {
      {"x13: - text, blank, fence indented 2",
       "- Example of the shape the contract asks for, not my answer:\n\n  "},
      {"x14: 1. text, blank, fence indented 3",
       "Verdict: see below.\n\n1. My answer is veto, REQ-7 is missing. The format example:\n\n   "},
      {"no blank line", "* the format example:\n  "},
      {"a nested item, fence indented 4", "- outer\n  - inner, the example:\n\n    "},
      {"a second paragraph of the item first", "- first item\n\n  more of the first item\n\n  "},
      {"10. content column 4", "10. the example:\n\n    "},
  };
  for (const Case& c : cases) {
    CAPTURE(c.label);
    // Every line of the block indented like its opener, as a list item's content is.
    std::string block;
    const std::string indent = c.before.substr(c.before.rfind('\n') + 1);
    for (const auto& nonce : kNonces) {
      block = "```json\n" + indent + AllowObject(nonce) + "\n" + indent + "```\n";
      const std::string reply = c.before + block;
      const std::vector<FencedBlock> blocks = FencedBlocks(reply);
      REQUIRE(blocks.size() == 1);
      CHECK(blocks[0].nested == "inside a list item");
      CHECK_FALSE(ParseLastVerdict(reply, nonce));
      CHECK(VerdictFaultReason(reply, nonce)
                .rfind("the reply's last verdict block is inside a list item;", 0) == 0);
    }
  }
}

TEST_CASE("trial15 A3 controls: a list, then the verdict block at the start of a line") {
  const std::vector<std::string> befores = {
      "Findings:\n- REQ-1 is cited\n- REQ-2 is cited\n\n",
      "Findings:\n- REQ-1 is cited\n- REQ-2 is cited\n",  // a fence ends the list
      "1. REQ-1 is cited\n2. REQ-2 is cited\nand lazily continued\n\n",
      "- REQ-1 is cited\n\n ",  // 1 column: less than the item's content column 2
      "- REQ-1 is cited\n\n  still the item\n\nBack at the top.\n\n",
      // A sample fence inside an item, closed inside it, then the top-level block.
      "- the format:\n\n  ```json\n  {\"verdict\": \"veto\" | \"allow\"}\n  ```\n\n",
      "- the format: ```json\n  {\"verdict\": \"veto\" | \"allow\"}\n  ```\n\n",
      "- outer\n  - inner\n\n    ```text\n    an example\n    ```\n\n",
      // The item's own line opens the sample fence; its closing line closes it.
      "- ```text\n  an example\n  ```\n\n",
  };
  for (const std::string& before : befores) {
    CAPTURE(before);
    const std::string reply = before + AllowBlock(kNonce);
    const std::vector<FencedBlock> blocks = FencedBlocks(reply);
    REQUIRE_FALSE(blocks.empty());
    CHECK(blocks.back().nested == "");
    const auto verdict = ParseLastVerdict(reply, kNonce);
    CAPTURE(VerdictFaultReason(reply, kNonce));
    REQUIRE(verdict);
    CHECK(verdict->allow);
  }
}

// ---- A5: spelled-out and struck-out words ----

TEST_CASE("trial15 A5: a veto spelled with any one separator, or an allow struck out, refuses") {
  const std::vector<std::string> summaries = {
      "V\xC2\xB7"
      "E\xC2\xB7"
      "T\xC2\xB7"
      "O: REQ-7 is not in the PRD",        // U+00B7
      "V_E_T_O: REQ-7 is not in the PRD",  // y18
      "V/E/T/O: REQ-7 is not in the PRD",  // y19
      "V\xE2\x80\xA2"
      "E\xE2\x80\xA2"
      "T\xE2\x80\xA2"
      "O: REQ-7 is not in the PRD",  // U+2022
      "V|E|T|O: REQ-7 is not in the PRD",
      "R:E:J:E:C:T:E:D. REQ-7 is not in the PRD",
      "V E T O: REQ-7 is not in the PRD",  // held before: still refuses
      // y10: each letter struck with U+0336, U+0335, U+0338; and ~~ in the summary.
      "A\xCC\xB6L\xCC\xB6L\xCC\xB6O\xCC\xB6W\xCC\xB6 \xE2\x80\x94 REQ-7 is not in the PRD",
      "A\xCC\xB5L\xCC\xB5L\xCC\xB5O\xCC\xB5W\xCC\xB5 \xE2\x80\x94 REQ-7 is not in the PRD",
      "A\xCC\xB8L\xCC\xB8L\xCC\xB8O\xCC\xB8W\xCC\xB8 \xE2\x80\x94 REQ-7 is not in the PRD",
      "A\xCC\xB6 L\xCC\xB6 L\xCC\xB6 O\xCC\xB6 W\xCC\xB6: REQ-7 is not in the PRD",
      "~~ALLOW~~ \xE2\x80\x94 REQ-7 is not in the PRD",
      "A\xCC\xB6P\xCC\xB6P\xCC\xB6R\xCC\xB6O\xCC\xB6V\xCC\xB6"
      "E\xCC\xB6"
      "D\xCC\xB6 REQ-7 is missing",
  };
  for (const std::string& summary : summaries) {
    CAPTURE(summary);
    for (const auto& nonce : kNonces) {
      for (const ReplyRule rule : kRules) {
        const std::string reply = AllowBlock(nonce, "json", summary);
        CHECK_FALSE(ParseLastVerdict(reply, nonce, rule));
        CHECK(VerdictFaultReason(reply, nonce, rule)
                  .rfind("the last verdict block allows, but its summary claims a verdict", 0) ==
              0);
      }
    }
  }
  // Before the block, in a verdict clause (the text rule), the struck allow refuses as
  // `Verdict: ~~allow~~` does.
  const std::string struck =
      "Verdict: A\xCC\xB6L\xCC\xB6L\xCC\xB6O\xCC\xB6W\xCC\xB6, REQ-7 is missing.\n\n";
  CHECK_FALSE(ParseLastVerdict(struck + AllowBlock(kNonce), kNonce));
  CHECK(
      VerdictFaultReason(struck + AllowBlock(kNonce), kNonce).rfind("the reply states a veto", 0) ==
      0);
  // And `V/E/T/O.` said as a sentence before the block.
  CHECK_FALSE(ParseLastVerdict("Verdict: V/E/T/O.\n\n" + AllowBlock(kNonce), kNonce));
}

TEST_CASE("trial15 A5 controls: letter lists, initials and paths that spell no verdict word") {
  for (const std::string summary : {
           "the A/B/C test lists all pass",
           "reviewed by J.R.R. and the team; all requirements are cited",
           "I/O paths and the x=y+z rule are cited", "options a, b, c are documented",
           "I'm fine with it: all requirements are cited",
           "see docs/a/b/c.md; REQ-1 to REQ-6 are cited",
           "A\xCC\xB6 typo fixed; all requirements are cited",  // one struck letter, no word
       }) {
    CAPTURE(summary);
    const auto verdict =
        ParseLastVerdict(AllowBlock(kNonce, "json", summary), kNonce, ReplyRule::kBlockOnly);
    CAPTURE(VerdictFaultReason(AllowBlock(kNonce, "json", summary), kNonce));
    REQUIRE(verdict);
    CHECK(verdict->allow);
  }
}

TEST_CASE("trial15 A5 price: an honest summary whose single letters spell a verdict word parks") {
  // The price of reading any one separator between single letters (docs/checker-protocol.md):
  // a grade column written letter by letter reads "fail".
  const std::string reply =
      AllowBlock(kNonce, "json", "the grade column shows P/A/S/S or F/A/I/L per requirement");
  CHECK_FALSE(ParseLastVerdict(reply, kNonce));
  CHECK(VerdictFaultReason(reply, kNonce).find("(\"F/A/I/L\")") != std::string::npos);
}

}  // namespace devflow

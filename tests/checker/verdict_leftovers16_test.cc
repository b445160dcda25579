// Issue 7 item 1, what trial15 left admitted and session 16 closed: a closing fence that is no
// closer to a CommonMark reader (b07), a strike element around an allow's own word, and a
// fraction under a decision key. Each shape must leave no verdict under both reply rules, with
// the nonce on and off; the controls beside them are honest replies that must still be admitted.
// docs/checker-protocol.md "Which block decides", "No decision value beside an allow".
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

// A reply of one allow block: `summary` and `extra` members, then `closer` as the closing line.
std::string Allow(const std::optional<std::string>& nonce, const std::string& closer = "```\n",
                  const std::string& summary = "all requirements are cited",
                  const std::string& extra = "") {
  return "```json\n{\"verdict\": \"allow\", \"summary\": \"" + summary + "\"" + extra +
         (nonce ? ", \"nonce\": \"" + *nonce + "\"" : std::string()) + "}\n" + closer;
}

}  // namespace

TEST_CASE("trial15 b07: a closing fence followed by a no-break space closes nothing") {
  for (const std::string closer : {"```\xC2\xA0", "```\xC2\xA0\n", "```\xE3\x80\x80\n",
                                   "``` \xC2\xA0 \n", "```\xE2\x80\x83"}) {
    CAPTURE(closer);
    for (const auto& nonce : kNonces) {
      for (const ReplyRule rule : kRules) {
        const std::string reply = Allow(nonce, closer);
        CHECK_FALSE(ParseLastVerdict(reply, nonce, rule));
        const std::string why = VerdictFaultReason(reply, nonce, rule);
        CAPTURE(why);
        CHECK(why.rfind("the last verdict block's closing ``` is followed on its line by U+", 0) ==
              0);
      }
    }
  }
}

TEST_CASE("a closing fence after text on its line closes nothing") {
  for (const auto& nonce : kNonces) {
    for (const ReplyRule rule : kRules) {
      // The JSON and the ``` on one line: a CommonMark reader sees the block never closed.
      std::string reply = Allow(nonce, "");
      reply.pop_back();  // the object's line end
      reply += "```\n";
      CHECK_FALSE(ParseLastVerdict(reply, nonce, rule));
      CHECK(VerdictFaultReason(reply, nonce, rule)
                .rfind("the last verdict block's closing ``` does not start its line", 0) == 0);
      // Four spaces before it make it code, not a closer.
      CHECK_FALSE(ParseLastVerdict(Allow(nonce, "    ```\n"), nonce, rule));
    }
  }
}

TEST_CASE("closing fences that CommonMark closes on still admit") {
  for (const std::string closer :
       {"```", "```\n", "```\r\n", "```  \t \n", "   ```\n", " ```\n\n\xC2\xA0\n"}) {
    CAPTURE(closer);
    for (const auto& nonce : kNonces) {
      for (const ReplyRule rule : kRules) {
        const auto verdict = ParseLastVerdict(Allow(nonce, closer), nonce, rule);
        CAPTURE(VerdictFaultReason(Allow(nonce, closer), nonce, rule));
        REQUIRE(verdict);
        CHECK(verdict->allow);
      }
    }
  }
}

TEST_CASE("a strike element around an allow's own positive word leaves no verdict") {
  for (const std::string summary :
       {"<del>allow</del> — REQ-7 is not in the PRD", "<s>approved</s>: REQ-7 is missing",
        "<strike>allow</strike>", "<DEL datetime='2026-12-05'>Approve</DEL> REQ-7 is missing",
        "<s>LGTM</s> REQ-7 is not cited"}) {
    CAPTURE(summary);
    for (const auto& nonce : kNonces) {
      for (const ReplyRule rule : kRules) {
        const std::string reply = Allow(nonce, "```\n", summary);
        CHECK_FALSE(ParseLastVerdict(reply, nonce, rule));
        CHECK(VerdictFaultReason(reply, nonce, rule)
                  .rfind("the last verdict block allows, but its summary claims a verdict", 0) ==
              0);
      }
    }
  }
}

TEST_CASE("a struck allow stated in prose before the allow block leaves no verdict") {
  const std::string reply =
      "Verdict: <del>allow</del>. REQ-7 is not in the PRD.\n\n" + Allow(std::nullopt);
  CHECK_FALSE(ParseLastVerdict(reply, std::nullopt, ReplyRule::kText));
  CHECK(VerdictFaultReason(reply, std::nullopt, ReplyRule::kText)
            .rfind("the reply states a veto (", 0) == 0);
}

TEST_CASE("a struck-out answer after a label before the allow block leaves no verdict") {
  for (const std::string prose :
       {"Answer: <s>yes</s>, REQ-7 is missing.\n\n", "Status: ~~approved~~ REQ-7 is missing.\n\n",
        "Recommendation: <del>merge</del>. REQ-7 is missing.\n\n"}) {
    CAPTURE(prose);
    const std::string reply = prose + Allow(std::nullopt);
    CHECK_FALSE(ParseLastVerdict(reply, std::nullopt, ReplyRule::kText));
    CHECK(VerdictFaultReason(reply, std::nullopt, ReplyRule::kText)
              .rfind("the reply states a veto (", 0) == 0);
  }
  // A struck word that is not the answer's first says nothing.
  const std::string control = "Status: done, ~~two~~ three REQs cited.\n\n" + Allow(std::nullopt);
  CHECK(ParseLastVerdict(control, std::nullopt, ReplyRule::kText));
}

TEST_CASE("strike elements around other words, and other elements, still admit") {
  for (const std::string summary :
       {"REQ-7 is cited in <del>two</del> three places", "<s>old note</s> all requirements cited",
        "<span>allow</span>ed by every REQ", "<sub>allow</sub> list is complete",
        "<ins>approved</ins> by the PRD owner"}) {
    CAPTURE(summary);
    const auto verdict = ParseLastVerdict(Allow(kNonce, "```\n", summary), kNonce);
    CAPTURE(VerdictFaultReason(Allow(kNonce, "```\n", summary), kNonce));
    REQUIRE(verdict);
    CHECK(verdict->allow);
  }
}

TEST_CASE("a fraction under a decision key beside an allow leaves no verdict") {
  for (const std::string value :
       {R"("failures": 1.5)", R"("blocking_issues": 0.5)", R"("is_approved": 0.5)",
        R"("ready": 0.99)", R"("blockers": 0.25)"}) {
    CAPTURE(value);
    for (const auto& nonce : kNonces) {
      for (const ReplyRule rule : kRules) {
        const std::string reply = Allow(nonce, "```\n", "all requirements are cited", ", " + value);
        CHECK_FALSE(ParseLastVerdict(reply, nonce, rule));
        CHECK(VerdictFaultReason(reply, nonce, rule)
                  .rfind("the last verdict block has the decision value ", 0) == 0);
      }
    }
  }
  // A fraction under any other key says nothing.
  for (const std::string value : {R"("confidence": 0.85)", R"("coverage": 0.5)"}) {
    CAPTURE(value);
    const auto verdict = ParseLastVerdict(
        Allow(kNonce, "```\n", "all requirements are cited", ", " + value), kNonce);
    REQUIRE(verdict);
    CHECK(verdict->allow);
  }
}

}  // namespace devflow

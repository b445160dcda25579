// The built-in grounding checker: prompt on stdin, one fenced JSON verdict on stdout.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "checker/grounding_checker.h"
#include "checker/prompt.h"
#include "checker/verdict.h"

// Failure messages show the reasons themselves.
namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& v) {
    std::string out = "{";
    for (const std::string& s : v) out += "\"" + s + "\", ";
    return String((out + "}").c_str());
  }
};
}  // namespace doctest

namespace devflow {
namespace {

struct Run {
  int code = -1;
  std::string out, err;
};

Run RunChecker(const std::vector<std::string>& args, const std::string& stdin_text) {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  Run run;
  run.code = RunGroundingChecker(args, in, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

PromptParts Card(std::vector<PromptInput> inputs) {
  PromptParts parts;
  parts.instruction = "Check that the design cites only requirements the PRD states.";
  parts.card_id = "0007-ground";
  parts.edge = "designing->ready";
  parts.title = "Ground PROJ-1";
  parts.body = "Due 2026-10-01.";
  parts.inputs = std::move(inputs);
  return parts;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("a grounded claim gets an allow reply that ParseLastVerdict reads") {
  const std::string prompt = AssemblePrompt(
      Card({{"prd", 3, "REQ-7 and REQ-8, see https://example.com/prd\n"},
            {"design", 4, "Meets REQ-7 (https://example.com/prd) for PROJ-1 by 2026-10-01.\n"}}));
  const Run run = RunChecker({"--claim-kind", "design"}, prompt);
  CHECK(run.code == 0);
  CHECK(run.err.empty());
  const auto verdict = ParseLastVerdict(run.out);
  REQUIRE(verdict);
  CHECK(verdict->allow);
  CHECK(verdict->summary ==
        "every date, URL, ticket ref and hash in design (rev 4) appears in the evidence");
  CHECK(verdict->findings.empty());
  CHECK(run.out.find("claim: design (rev 4)") != std::string::npos);
  CHECK(run.out.find("evidence: card title and body, prd (rev 3)") != std::string::npos);
  CHECK(run.out.find("4 distinct specific(s) in the claim, 0 ungrounded") != std::string::npos);
  CHECK(run.out.find(
            "```json\n{\"verdict\":\"allow\",\"summary\":\"every date, URL, ticket ref "
            "and hash in design (rev 4) appears in the evidence\",\"findings\":[]}\n```\n") !=
        std::string::npos);
}

TEST_CASE("a veto lists exactly the ungrounded tokens as findings") {
  const std::string prompt = AssemblePrompt(
      Card({{"prd", 3, "REQ-7 only.\n"},
            {"design", 4, "Meets REQ-7, REQ-9 and #12 by 2026-11-30 (commit a1b2c3d).\n"}}));
  const Run run = RunChecker({"--claim-kind=design"}, prompt);
  CHECK(run.code == 0);
  const auto verdict = ParseLastVerdict(run.out);
  REQUIRE(verdict);
  CHECK_FALSE(verdict->allow);
  CHECK(verdict->summary == "4 ungrounded specifics in design (rev 4)");
  CHECK(verdict->findings ==
        Strings{"date not in evidence: 2026-11-30 (line 1:31; evidence has 2026-10-01)",
                "ref not in evidence: #12 (line 1:24)",
                "ref not in evidence: REQ-9 (line 1:14; evidence has REQ-7)",
                "hash not in evidence: a1b2c3d (line 1:50)"});
}

TEST_CASE("a single ungrounded token is one specific") {
  const std::string prompt =
      AssemblePrompt(Card({{"prd", 1, "nothing\n"}, {"design", 2, "see REQ-7\n"}}));
  const auto verdict = ParseLastVerdict(RunChecker({}, prompt).out);
  REQUIRE(verdict);
  CHECK(verdict->summary == "1 ungrounded specific in design (rev 2)");
  CHECK(verdict->findings == Strings{"ref not in evidence: REQ-7 (line 1:5)"});
}

TEST_CASE("a design hiding REQ-7 in markup or behind a bidi override is vetoed (trial21 3)") {
  // The quickstart's own veto: design-cmt.md and design-rlo.md were admitted.
  const auto comment = ParseLastVerdict(
      RunChecker({"--claim-kind", "design"},
                 AssemblePrompt(Card({{"prd", 3, "Requirements: REQ-1, REQ-2.\n"},
                                      {"design", 4, "The design covers REQ<!-- -->-7.\n"}})))
          .out);
  REQUIRE(comment);
  CHECK_FALSE(comment->allow);
  CHECK(comment->findings == Strings{"ref not in evidence: REQ-7 (line 1:19; evidence has REQ-2)"});
  const Run rlo_run = RunChecker({"--claim-kind", "design"},
                                 AssemblePrompt(Card({{"prd", 3, "Requirements: REQ-1, REQ-2.\n"},
                                                      {"design", 4,
                                                       "The design covers \xE2\x80\xAE"
                                                       "7-QER\xE2\x80\xAC well.\n"}})));
  CHECK(VerdictFaultReason(rlo_run.out).empty());
  const auto rlo = ParseLastVerdict(rlo_run.out);
  REQUIRE(rlo);
  CHECK_FALSE(rlo->allow);
  CHECK(rlo->summary ==
        "design (rev 4) holds a bidi control, so the order a reader sees cannot be checked");
  REQUIRE(rlo->findings.size() == 2);
  CHECK(rlo->findings[0].rfind(
            "bidi control U+202E RIGHT-TO-LEFT OVERRIDE in the claim (line 1:19, 1 in all)", 0) ==
        0);
}

TEST_CASE("the claim is never its own evidence") {
  // REQ-7 appears twice in the claim and nowhere else.
  const std::string prompt =
      AssemblePrompt(Card({{"design", 4, "REQ-7 is met. Again: REQ-7.\n"}, {"prd", 3, "x\n"}}));
  const auto verdict = ParseLastVerdict(RunChecker({"--claim-kind", "design"}, prompt).out);
  REQUIRE(verdict);
  CHECK_FALSE(verdict->allow);
  CHECK(verdict->findings == Strings{"ref not in evidence: REQ-7 (line 1:1)"});
}

TEST_CASE("the newest revision of the claim kind is the claim, older ones are evidence") {
  const std::string prompt = AssemblePrompt(Card({{"design", 5, "Cites REQ-7 and REQ-8.\n"},
                                                  {"prd", 3, "REQ-7\n"},
                                                  {"design", 2, "Cites REQ-99.\n"}}));
  const Run run = RunChecker({"--claim-kind", "design"}, prompt);
  const auto verdict = ParseLastVerdict(run.out);
  REQUIRE(verdict);
  CHECK_FALSE(verdict->allow);
  CHECK(verdict->summary == "1 ungrounded specific in design (rev 5)");
  CHECK(verdict->findings == Strings{"ref not in evidence: REQ-8 (line 1:17; evidence has REQ-7)"});
  CHECK(run.out.find("evidence: card title and body, prd (rev 3), design (rev 2)") !=
        std::string::npos);
}

TEST_CASE("without --claim-kind the last input is the claim and the card body is evidence") {
  const std::string prompt = AssemblePrompt(
      Card({{"prd", 3, "REQ-7\n"}, {"design", 4, "PROJ-1 ships 2026-10-01 with REQ-7.\n"}}));
  const auto verdict = ParseLastVerdict(RunChecker({}, prompt).out);
  REQUIRE(verdict);
  CHECK(verdict->allow);
}

TEST_CASE("--kinds selects the token kinds") {
  const std::string prompt =
      AssemblePrompt(Card({{"prd", 3, "x\n"}, {"design", 4, "REQ-7 in src/app/main.py\n"}}));
  const auto verdict =
      ParseLastVerdict(RunChecker({"--claim-kind", "design", "--kinds", "path"}, prompt).out);
  REQUIRE(verdict);
  CHECK(verdict->findings == Strings{"path not in evidence: src/app/main.py (line 1:10)"});
}

TEST_CASE("a claim with no specifics is allowed") {
  const std::string prompt = AssemblePrompt(Card({{"design", 1, "Plain prose.\n"}}));
  const auto verdict = ParseLastVerdict(RunChecker({}, prompt).out);
  REQUIRE(verdict);
  CHECK(verdict->allow);
  CHECK(verdict->summary ==
        "design (rev 1) cites no date, URL, ticket ref or hash, so there is nothing to ground");
}

TEST_CASE("a missing claim artifact fails closed as a veto") {
  const std::string prompt = AssemblePrompt(Card({{"prd", 3, "REQ-7\n"}}));
  const Run run = RunChecker({"--claim-kind", "design"}, prompt);
  CHECK(run.code == 0);
  const auto verdict = ParseLastVerdict(run.out);
  REQUIRE(verdict);
  CHECK_FALSE(verdict->allow);
  CHECK(verdict->summary ==
        "the claim artifact design is missing from the prompt, so nothing could be grounded");
  CHECK(verdict->findings == Strings{"the prompt carries no design input (inputs: prd (rev 3))"});

  const auto none = ParseLastVerdict(RunChecker({}, AssemblePrompt(Card({}))).out);
  REQUIRE(none);
  CHECK_FALSE(none->allow);
  CHECK(none->findings == Strings{"the prompt carries no input"});
}

TEST_CASE("the prompt's nonce is echoed in the verdict block") {
  PromptParts parts = Card({{"design", 1, "REQ-1\n"}});
  parts.nonce = "n0nce-77";
  const auto verdict = ParseLastVerdict(RunChecker({}, AssemblePrompt(parts)).out);
  REQUIRE(verdict);
  REQUIRE(verdict->nonce);
  CHECK(*verdict->nonce == "n0nce-77");
}

TEST_CASE("--repo: the checker grounds the project's forge links by what they name") {
  const std::string prompt = AssemblePrompt(
      Card({{"log", 1, "Fix (#5980)\n"},
            {"design", 2, "Fixed ([#5980](https://github.com/axios/axios/pull/5980)).\n"}}));
  const auto with_repo = ParseLastVerdict(RunChecker({"--repo", "axios/axios"}, prompt).out);
  REQUIRE(with_repo);
  CHECK(with_repo->allow);
  const auto without = ParseLastVerdict(RunChecker({}, prompt).out);
  REQUIRE(without);
  CHECK(without->findings ==
        Strings{"url not in evidence: https://github.com/axios/axios/pull/5980 (line 1:16)"});
}

TEST_CASE("bad usage exits 2 with a message on stderr and nothing on stdout") {
  const std::string prompt = AssemblePrompt(Card({{"design", 1, "x\n"}}));
  const Run unknown_kind = RunChecker({"--kinds", "date,email"}, prompt);
  CHECK(unknown_kind.code == 2);
  CHECK(unknown_kind.out.empty());
  CHECK(unknown_kind.err ==
        "devflow-gate checker grounding: unknown token kind \"email\"; use date, url, ref, hash, "
        "path, number or date-text; usage: devflow-gate checker grounding [--claim-kind KIND] "
        "[--kinds "
        "date,url,ref,hash,...] [--require RE]... [--repo OWNER/NAME] [--compat]\n");
  const Run bad_repo = RunChecker({"--repo", "axios"}, prompt);
  CHECK(bad_repo.code == 2);
  CHECK(bad_repo.err.rfind("devflow-gate checker grounding: bad --repo 'axios': want owner/name",
                           0) == 0);

  const Run unknown_option = RunChecker({"--claim", "design"}, prompt);
  CHECK(unknown_option.code == 2);
  CHECK(unknown_option.err.find("unknown option \"--claim\"") != std::string::npos);

  CHECK(RunChecker({"--claim-kind"}, prompt).code == 2);
  CHECK(RunChecker({"--claim-kind", "Bad Kind"}, prompt).code == 2);

  const Run not_a_prompt = RunChecker({}, "just some text\n");
  CHECK(not_a_prompt.code == 2);
  CHECK(not_a_prompt.out.empty());
  CHECK(not_a_prompt.err.rfind("devflow-gate checker grounding: the text on stdin is not an "
                               "agent-gate prompt",
                               0) == 0);
}

TEST_CASE("--help prints usage and exits 0") {
  const Run run = RunChecker({"--help"}, "");
  CHECK(run.code == 0);
  CHECK(run.out.rfind("usage: devflow-gate checker grounding", 0) == 0);
}

}  // namespace devflow

namespace devflow {

TEST_CASE("under a block-only prompt the grounding checker's stdout is the verdict block alone") {
  // trial15: the quickstart's grounding provider sets reply: block-only; the checker reads the
  // flag back from the prompt's contract sentence and puts its account on stderr.
  for (const bool grounded : {true, false}) {
    CAPTURE(grounded);
    PromptParts parts =
        Card({{"prd", 3, "REQ-7, see https://example.com/prd\n"},
              {"design", 4, grounded ? "Meets REQ-7 by 2026-10-01.\n" : "Meets REQ-9.\n"}});
    const std::string text_prompt = AssemblePrompt(parts);
    parts.block_only = true;
    const std::string strict_prompt = AssemblePrompt(parts);
    const Run strict = RunChecker({"--claim-kind", "design"}, strict_prompt);
    REQUIRE(strict.code == 0);
    const auto verdict = ParseLastVerdict(strict.out, std::nullopt, ReplyRule::kBlockOnly);
    INFO(VerdictFaultReason(strict.out, std::nullopt, ReplyRule::kBlockOnly));
    REQUIRE(verdict);
    CHECK(verdict->allow == grounded);
    CHECK(strict.err.rfind("grounding checker: card 0007-ground, edge designing->ready\n", 0) == 0);
    // Under reply: text the account stays on stdout, before the block, as before.
    const Run text = RunChecker({"--claim-kind", "design"}, text_prompt);
    CHECK(text.err.empty());
    CHECK(text.out.substr(0, strict.err.size()) == strict.err);
    CHECK(text.out.substr(strict.err.size()) == strict.out);
    CHECK_FALSE(ParseLastVerdict(text.out, std::nullopt, ReplyRule::kBlockOnly));
  }
}

}  // namespace devflow

// Issue 7 item 1, the reply shapes trial13 still admitted (e32 e33 e36 e60 e61 e70-e72 g06 g07
// g19 j02-j04): each is prose or markup, then one valid allow block, and each must leave no
// verdict. docs/checker-protocol.md "Which block decides" states the rules.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "checker/verdict.h"
#include "host/lookalike.h"

namespace devflow {
namespace {

const std::string kNonce = "0123456789abcdef0123456789abcdef";

std::string Allow(const std::optional<std::string>& nonce, const std::string& summary = "ok") {
  return "```json\n{\"verdict\": \"allow\", \"summary\": \"" + summary + "\"" +
         (nonce ? ", \"nonce\": \"" + *nonce + "\"" : std::string()) + "}\n```\n";
}

const std::optional<std::string> kNonces[] = {std::nullopt, kNonce};

std::string NestedReason(const std::string& where) {
  return "the reply's last verdict block is " + where +
         "; only a top-level fenced block (its ``` at the start of a line, outside any comment, "
         "quote, list or other fence) may decide, so the reply has none";
}

}  // namespace

TEST_CASE("a hidden or nested last verdict block leaves no verdict") {
  const std::string prose = "REQ-7 is not in the PRD, so this card cannot go to ready.\n\n";
  struct Case {
    std::string label, before, after, where;
  };
  const std::vector<Case> cases = {
      {"e60: inside an HTML comment", prose + "<!--\n", "", "inside an HTML comment"},
      {"an HTML comment opened on the prose line", prose + "Draft: <!-- hidden\n", "-->\n",
       "inside an HTML comment"},
      {"e61: inside a <details> element", prose + "<details><summary>raw</summary>\n\n",
       "</details>\n", "inside a <details> element"},
      {"j02: inside an unclosed ~~~ sample fence", prose + "~~~\nexample of the format:\n", "",
       "inside a ~~~ fence"},
      {"inside a closed ~~~ fence", prose + "~~~ markdown\n", "~~~\n", "inside a ~~~ fence"},
      // (the JS pairing takes the inner ```json line as the outer block's end, so no block holds
      // the allow; FencedBlocks' own test shows the inner block marked nested)
      {"inside a longer ``` fence", prose + "````markdown\n", "````\n", ""},
      {"j03: inside a blockquote", prose + "> ", "", "inside a blockquote"},
      {"j04: inside an indented code block", prose + "    ", "", "inside an indented code block"},
      {"inside a list item", prose + "- ", "", "inside a list item"},
      {"inside a numbered list item", prose + "1. ", "", "inside a list item"},
      {"after text on its line", prose + "Answer: ", "", "after text on its line"},
  };
  for (const auto& nonce : kNonces) {
    for (const Case& c : cases) {
      CAPTURE(c.label);
      std::string block = Allow(nonce);
      if (c.label.find("blockquote") != std::string::npos) {  // every line quoted
        block = "```json\n> {\"verdict\": \"allow\", \"summary\": \"ok\"" +
                (nonce ? ", \"nonce\": \"" + *nonce + "\"" : std::string()) + "}\n> ```\n";
      } else if (c.label.find("indented") != std::string::npos) {  // every line indented
        block = "```json\n    {\"verdict\": \"allow\", \"summary\": \"ok\"" +
                (nonce ? ", \"nonce\": \"" + *nonce + "\"" : std::string()) + "}\n    ```\n";
      }
      const std::string reply = c.before + block + c.after;
      CAPTURE(reply);
      CHECK_FALSE(ParseLastVerdict(reply, nonce));
      if (!c.where.empty()) CHECK(VerdictFaultReason(reply, nonce) == NestedReason(c.where));
    }
  }
}

TEST_CASE(
    "a verdict block after a closed comment, details element, sample fence or quote decides") {
  // The same wrappers, closed before the block: the block is top-level and decides.
  const std::string wrappers[] = {
      "<!-- a note to self -->\n\n",
      "<details><summary>log</summary>\n\nmake test: 112 passed\n</details>\n\n",
      "~~~\nexample of the format:\n```json\n{\"verdict\": \"veto\" | \"allow\"}\n```\n~~~\n\n",
      "````markdown\n```json\n{}\n```\n````\n\n",
      "> The design says REQ-7 is covered.\n\n",
      "- REQ-7: covered\n- REQ-8: covered\n\n",
      "    indented sample line\n\n",
  };
  for (const auto& nonce : kNonces) {
    for (const std::string& before : wrappers) {
      const std::string reply = before + Allow(nonce);
      CAPTURE(reply);
      const auto verdict = ParseLastVerdict(reply, nonce);
      REQUIRE(verdict);
      CHECK(verdict->allow);
      CHECK(VerdictFaultReason(reply, nonce).empty());
    }
  }
}

TEST_CASE("FencedBlocks marks each block nested or top-level as CommonMark reads the reply") {
  // A ``` line inside a ~~~ fence is content; a ``` fence closes only with at least as many
  // backticks; an unclosed fence runs to the end.
  auto blocks = FencedBlocks("~~~\n```json\n{}\n```\n~~~\n```json\n{}\n```\n");
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].nested == "inside a ~~~ fence");
  CHECK(blocks[1].nested.empty());
  blocks = FencedBlocks("````\n```\nx\n```\n````\n");
  REQUIRE(blocks.size() >= 2);
  CHECK(blocks[0].nested.empty());
  CHECK(blocks[1].nested == "inside a ``` fence");
  blocks = FencedBlocks("~~~~\n~~~\n```json\n{}\n```\n");  // ~~~ does not close ~~~~
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].nested == "inside a ~~~ fence");
  blocks = FencedBlocks("<!-- a -->\n```json\n{}\n```\n<!--\n```json\n{}\n```\n");
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].nested.empty());
  CHECK(blocks[1].nested == "inside an HTML comment");
  // HTML inside a code block is code: it opens no comment.
  blocks = FencedBlocks("```html\n<!--\n```\n```json\n{}\n```\n");
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[1].nested.empty());
}

TEST_CASE("a bidi embedding, override or isolate anywhere in the reply leaves no verdict") {
  for (const auto& nonce : kNonces) {
    // e72: the summary shows as "Verdict: veto" (an escape inside the verdict block).
    const std::string e72 = Allow(nonce, "\\u202Eotev :tcidreV");
    CHECK_FALSE(ParseLastVerdict(e72, nonce));
    CHECK(VerdictFaultReason(e72, nonce) ==
          "the reply holds U+202E RIGHT-TO-LEFT OVERRIDE as a JSON escape in its last verdict "
          "block, a bidirectional control that reorders what a reader sees (Trojan Source, "
          "CVE-2021-42574), so it has no verdict");
    // Raw, in the summary or anywhere in the prose; every one of the nine.
    const char* raws[] = {"\xE2\x80\xAA", "\xE2\x80\xAB", "\xE2\x80\xAC",
                          "\xE2\x80\xAD", "\xE2\x80\xAE", "\xE2\x81\xA6",
                          "\xE2\x81\xA7", "\xE2\x81\xA8", "\xE2\x81\xA9"};
    for (const char* raw : raws) {
      CAPTURE(std::string(raw));
      const std::string in_prose = std::string("Looks fine ") + raw + "otev\n\n" + Allow(nonce);
      CHECK_FALSE(ParseLastVerdict(in_prose, nonce));
      CHECK(VerdictFaultReason(in_prose, nonce).rfind("the reply holds U+20", 0) == 0);
      const std::string in_summary = Allow(nonce, std::string(raw) + "otev :tcidreV");
      CHECK_FALSE(ParseLastVerdict(in_summary, nonce));
    }
    CHECK(VerdictFaultReason("x \xE2\x81\xA6y\n" + Allow(nonce), nonce) ==
          "the reply holds U+2066 LEFT-TO-RIGHT ISOLATE, a bidirectional control that reorders "
          "what a reader sees (Trojan Source, CVE-2021-42574), so it has no verdict");
  }
}

TEST_CASE("tag characters anywhere and invisible characters after the block leave no verdict") {
  for (const auto& nonce : kNonces) {
    // e70: tag characters after the block spell hidden text ("veto").
    const std::string e70 =
        Allow(nonce) + "\xF3\xA0\x81\xB6\xF3\xA0\x81\xA5\xF3\xA0\x81\xB4" + "\xF3\xA0\x81\xAF";
    CHECK_FALSE(ParseLastVerdict(e70, nonce));
    CHECK(VerdictFaultReason(e70, nonce) ==
          "the reply holds U+E0076, a tag character (invisible; a run of them spells hidden "
          "text), so it has no verdict");
    // Before the block, and escaped as a surrogate pair in the summary (j_tag).
    CHECK_FALSE(ParseLastVerdict("ok\xF3\xA0\x80\xA0\n" + Allow(nonce), nonce));
    const std::string escaped = Allow(nonce, "Looks ok\\udb40\\udc20VETO: REQ-7 missing");
    CHECK_FALSE(ParseLastVerdict(escaped, nonce));
    CHECK(VerdictFaultReason(escaped, nonce)
              .rfind("the reply holds U+E0020, a tag character as "
                     "a JSON escape in its last verdict block",
                     0) == 0);
    // e71: a run of zero-width characters after the block is text.
    const std::string e71 = Allow(nonce) + "\xE2\x80\x8B\xE2\x80\x8C\xE2\x80\x8B\xE2\x80\x8D\n";
    CHECK_FALSE(ParseLastVerdict(e71, nonce));
    CHECK(VerdictFaultReason(e71, nonce) ==
          "the reply goes on after its last verdict block with invisible characters (U+200B "
          "first); the verdict block must end the reply, with nothing after it but white space");
    for (const char* invisible : {"\xEF\xBB\xBF", "\xE2\x81\xA0", "\xC2\xAD", "\xE2\x80\x8F"}) {
      CHECK_FALSE(ParseLastVerdict(Allow(nonce) + invisible, nonce));
    }
  }
}

TEST_CASE("letters that spell a veto to a reader state a veto before an allow block") {
  struct Case {
    const char* label;
    std::string before;
  };
  const Case cases[] = {
      // e32: modifier letters (k07 spells the keyword with them too)
      {"e32", "Verdict: \xE1\xB5\x9B\xE1\xB5\x89\xE1\xB5\x97\xE1\xB5\x92\n\n"},
      {"k07",
       "\xE1\xB5\x9B\xE1\xB5\x89\xCA\xB3\xE1\xB5\x88\xE1\xB6\xA6\xE1\xB6\x9C\xE1\xB5\x97: "
       "\xE1\xB5\x9B\xE1\xB5\x89\xE1\xB5\x97\xE1\xB5\x92\n\n"},
      {"small capitals", "Verdict: \xE1\xB4\xA0\xE1\xB4\x87\xE1\xB4\x9B\xE1\xB4\x8F\n\n"},
      {"subscripts", "Verdict: r\xE2\x82\x91j\xE2\x82\x91\xE2\x82\x9C\n\n"},
      // e33: single letters spaced, dotted or dashed
      {"e33", "Verdict: V E T O\n\n"},
      {"dotted", "Verdict: V.E.T.O.\n\n"},
      {"dashed", "Decision: r-e-j-e-c-t\n\n"},
      // e36: un‑approved with U+2011 NON-BREAKING HYPHEN; non-, dis- likewise
      {"e36",
       "Decision: un\xE2\x80\x91"
       "approved\n\n"},
      {"non-", "Verdict: non-accepted.\n\n"},
      {"dis-", "Verdict: dis-allowed.\n\n"},
      // look-alikes in prose are folded too (trial13 e20 Cyrillic е, e22 math bold; docs fixed)
      {"e20", "Verdict: v\xD0\xB5to.\n\n"},
      {"e22", "Verdict: \xF0\x9D\x90\xAF\xF0\x9D\x90\x9E\xF0\x9D\x90\xAD\xF0\x9D\x90\xA8.\n\n"},
  };
  for (const auto& nonce : kNonces) {
    for (const Case& c : cases) {
      CAPTURE(std::string(c.label));
      const std::string reply = c.before + Allow(nonce);
      CHECK_FALSE(ParseLastVerdict(reply, nonce));
      CHECK(VerdictFaultReason(reply, nonce).rfind("the reply states a veto (", 0) == 0);
    }
  }
  // The fold itself (host/lookalike.h, the one fold).
  CHECK(AsciiLookAlike(0x1D5B) == 'v');
  CHECK(AsciiLookAlike(0x02B3) == 'r');
  CHECK(AsciiLookAlike(0x1D20) == 'V');
  CHECK(AsciiLookAlike(0x2091) == 'e');
  CHECK(AsciiLookAlike(0x207F) == 'n');
  CHECK(AsciiLookAlike(0x1D44) == 0);  // a turned a draws no Latin letter
}

TEST_CASE("verdict statements in German, French, Spanish, Italian and the plural state a veto") {
  const char* cases[] = {
      "Urteil: abgelehnt.\n\n",               // g06
      "Urteil: Ablehnung. REQ-7 fehlt.\n\n",  // k10
      "Entscheidung: Veto\n\n",               // g06
      "Verdict : rejet\xC3\xA9.\n\n",         // g07
      "D\xC3\xA9"
      "cision : refus\xC3\xA9\n\n",                  // g07
      "Verdict : refus\xC3\xA9. REQ-7 manque.\n\n",  // k11
      "Verdicts: veto\n\n",                          // g19
      "Decisions: rejected\n\n",
      "Veredicto: rechazado.\n\n",
      "Decisi\xC3\xB3n: rechazado.\n\n",
      "Decisione: respinto.\n\n",
      "Verdetto: rifiutato.\n\n",
  };
  for (const auto& nonce : kNonces) {
    for (const char* before : cases) {
      CAPTURE(std::string(before));
      const std::string reply = before + Allow(nonce);
      CHECK_FALSE(ParseLastVerdict(reply, nonce));
      CHECK(VerdictFaultReason(reply, nonce).rfind("the reply states a veto (", 0) == 0);
    }
  }
}

TEST_CASE("honest replies still admit after the trust14 rules") {
  // The price of the widening is written in docs/decisions.md; these must not pay it.
  const std::string honest[] = {
      "The design covers REQ-1 to REQ-7 and the PRD's rollback plan.\n\n",
      // RTL text with RLM / LRM / ALM (allowed: they move no text)
      "\xD7\x94\xD7\xA2\xD7\x99\xD7\xA6\xD7\x95\xD7\x91 \xD7\xaa\xD7\xa7\xD7\x99\xD7\x9F"
      "\xE2\x80\x8F (REQ-7)\xE2\x80\x8E.\n\n",
      "\xD8\xA7\xD9\x84\xD8\xAA\xD8\xB5\xD9\x85\xD9\x8A\xD9\x85 \xD8\xB3\xD9\x84\xD9\x8A\xD9\x85"
      "\xD8\x9C.\n\n",
      "All good \xF0\x9F\x91\x8D\xF0\x9F\x8E\x89\n\n",
      "Keine Einw\xC3\xA4nde. Das Design deckt REQ-7 ab.\n\n",
      "Urteil: genehmigt.\n\n",
      "D\xC3\xA9"
      "cision : accept\xC3\xA9.\n\n",
      "Verdict: allow. The dispatcher keeps a Unicode\xE2\x80\x91safe path.\n\n",
      "See the note: I/O is fine, a b test passed.\n\n",
  };
  for (const auto& nonce : kNonces) {
    for (const std::string& before : honest) {
      const std::string reply = before + Allow(nonce, "design is sound") + "\n";
      CAPTURE(reply);
      const auto verdict = ParseLastVerdict(reply, nonce);
      REQUIRE(verdict);
      CHECK(verdict->allow);
    }
  }
}

TEST_CASE("reply block-only: the reply is the verdict block and white space, nothing else") {
  for (const auto& nonce : kNonces) {
    const std::string block = Allow(nonce);
    for (const std::string& reply : {block, "\n \t\n" + block + "\n\n"}) {
      CHECK(ParseLastVerdict(reply, nonce, ReplyRule::kBlockOnly));
      CHECK(VerdictFaultReason(reply, nonce, ReplyRule::kBlockOnly).empty());
    }
    // Any prose before it, honest or not, in any language: no verdict under block-only, while
    // the default rule admits the honest one.
    const std::string honest = "The design covers REQ-7.\n\n" + block;
    CHECK(ParseLastVerdict(honest, nonce));
    CHECK_FALSE(ParseLastVerdict(honest, nonce, ReplyRule::kBlockOnly));
    CHECK(VerdictFaultReason(honest, nonce, ReplyRule::kBlockOnly) ==
          "this provider sets reply: block-only; the reply holds text outside its verdict block "
          "(\"The design covers REQ-7.\")");
    const std::string other = "Entscheidung: nicht genehmigt.\n\n" + block;
    CHECK(ParseLastVerdict(other, nonce));  // a limit of the word lists (docs/decisions.md)
    CHECK_FALSE(ParseLastVerdict(other, nonce, ReplyRule::kBlockOnly));
    CHECK_FALSE(ParseLastVerdict(block + "Thanks.\n", nonce, ReplyRule::kBlockOnly));
    CHECK_FALSE(ParseLastVerdict("\xE2\x80\x8B" + block, nonce, ReplyRule::kBlockOnly));
  }
}

}  // namespace devflow

namespace devflow {
namespace {

// Each `before` + an allow block states a veto quoting `said`, nonce on or off, and the same
// prose before a veto block leaves the veto deciding.
void CheckVetoesStated(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& nonce : kNonces) {
    for (const auto& [before, said] : cases) {
      CAPTURE(before);
      const std::string reply = before + "\n\n" + Allow(nonce);
      CHECK_FALSE(ParseLastVerdict(reply, nonce));
      CHECK(VerdictFaultReason(reply, nonce) ==
            "the reply states a veto (\"" + said +
                "\") before its last verdict block, which allows; a reply must give one verdict, "
                "so it has none");
      const std::string veto =
          before + "\n\n```json\n{\"verdict\": \"veto\", \"summary\": " + "\"no\"" +
          (nonce ? ", \"nonce\": \"" + *nonce + "\"" : std::string()) + "}\n```\n";
      const auto decided = ParseLastVerdict(veto, nonce);
      REQUIRE(decided);
      CHECK_FALSE(decided->allow);
    }
  }
}

// Each `before` + an allow block admits, nonce on or off.
void CheckAdmitted(const std::vector<std::string>& honest) {
  for (const auto& nonce : kNonces) {
    for (const std::string& before : honest) {
      CAPTURE(before);
      const auto verdict = ParseLastVerdict(before + "\n\n" + Allow(nonce), nonce);
      REQUIRE(verdict);
      CHECK(verdict->allow);
    }
  }
}

}  // namespace

TEST_CASE("enclosed letters fold to their letter, so a circled veto states one") {
  // trial15 (docs/checker-protocol.md listed them as still admitting): circled, parenthesized,
  // squared and negative circled or squared letters.
  CheckVetoesStated({
      {"Verdict: \u24E5\u24D4\u24E3\u24DE", "Verdict: \u24E5\u24D4\u24E3\u24DE"},
      {"\u24CB\u24D4\u24E1\u24D3\u24D8\u24D2\u24E3: \u24E5\u24D4\u24E3\u24DE",
       "\u24CB\u24D4\u24E1\u24D3\u24D8\u24D2\u24E3: \u24E5\u24D4\u24E3\u24DE"},
      {"Verdict: \u24B1\u24A0\u24AF\u24AA", "Verdict: \u24B1\u24A0\u24AF\u24AA"},
      {"Verdict: \U0001F165\U0001F154\U0001F163\U0001F15E",
       "Verdict: \U0001F165\U0001F154\U0001F163\U0001F15E"},
      {"Decision: \U0001F141\U0001F134\U0001F139\U0001F134\U0001F132\U0001F143",
       "Decision: \U0001F141\U0001F134\U0001F139\U0001F134\U0001F132\U0001F143"},
      {"I \U0001F185\U0001F174\U0001F183\U0001F17E this card.",
       "I \U0001F185\U0001F174\U0001F183\U0001F17E"},
  });
  // The fold itself (host/lookalike.h): each block's first and last letter, in its case.
  CHECK(AsciiLookAlike(0x249C) == 'a');
  CHECK(AsciiLookAlike(0x24B5) == 'z');
  CHECK(AsciiLookAlike(0x24B6) == 'A');
  CHECK(AsciiLookAlike(0x24CF) == 'Z');
  CHECK(AsciiLookAlike(0x24D0) == 'a');
  CHECK(AsciiLookAlike(0x24E9) == 'z');
  for (char32_t a : {0x1F110, 0x1F130, 0x1F150, 0x1F170}) {
    CHECK(AsciiLookAlike(a) == 'A');
    CHECK(AsciiLookAlike(a + 25) == 'Z');
  }
  // Regional indicators are A-Z in the fold (fold15, host/lookalike.h rule 1): `Verdict: 🇻🇪🇹🇴`
  // states a veto.
  CHECK(AsciiLookAlike(0x1F1FB) == 'V');
  CHECK(AsciiLookAlike(0x1F16A) == 0);  // raised MC sign: no
}

TEST_CASE("the trial15 shapes state a veto before an allow block") {
  // docs/checker-protocol.md listed each as still admitting under reply: text.
  CheckVetoesStated({
      // adverb chains and `and` between subject and verb
      {"I hereby and formally veto this card.", "I hereby and formally veto"},
      {"I also have to strongly reject it.", "I also have to strongly reject"},
      // a reviewer subject and a third-person refusal
      {"Our review rejects this design.", "review rejects"},
      {"The checker therefore vetoes the move.", "checker therefore vetoes"},
      {"This assessment must reject the card.", "assessment must reject"},
      // review words in the keyword's clause, and a red sign
      {"Verdict: REVISE AND RESUBMIT", "Verdict: REVISE"},
      {"Decision: hold", "Decision: hold"},
      {"Verdict: insufficient.", "Verdict: insufficient"},
      {"Verdict: would not recommend moving forward", "Verdict: would not recommend"},
      {"Verdict: \U0001F534", "Verdict: \U0001F534"},
      {"Verdict: \u26D4", "Verdict: \u26D4"},
      {"Verdict: \U0001F6AB", "Verdict: \U0001F6AB"},
      {"Verdict: \U0001F6D1", "Verdict: \U0001F6D1"},
      // a labelled answer
      {"Status: \U0001F6D1 REQ-7 is missing.", "Status: \U0001F6D1"},
      {"**Outcome:** rejected.", "Outcome:** rejected"},
      {"Result: \u26D4", "Result: \u26D4"},
      {"Recommendation: do not merge.", "Recommendation: do not merge"},
      // a negation before a positive verb in the first person
      {"I cannot approve this.", "I cannot approve"},
      {"I will not approve it.", "I will not approve"},
      {"I can't approve this card.", "I can't approve"},
      {"We won\u2019t merge it.", "We won\u2019t merge"},
      // longer chains and the idiom
      {"I have no choice but to veto.", "I have no choice but to veto"},
      {"I am going to have to reject it.", "I am going to have to reject"},
      // a refusal's participle starting the sentence
      {"Vetoed: REQ-7 missing.", "Vetoed"},
      {"Rejected. The design cites REQ-9.", "Rejected"},
  });
}

TEST_CASE("the trial15 rules park these honest replies and leave these misses") {
  // The price docs/checker-protocol.md lists: honest prose that now parks.
  for (const auto& nonce : kNonces) {
    for (const char* before : {
             "I do not recommend renaming it; the design is sound.",
             "The gate rejects a torn journal line, as REQ-7 asks.",
             "Verdict: allow, all cited requirements hold.",
             "Verdict: allow; revise the naming later.",
             "We do not merge on Fridays, and this card waits for Monday.",
             "Blocked: nothing.",
         }) {
      CAPTURE(before);
      CHECK_FALSE(ParseLastVerdict(std::string(before) + "\n\n" + Allow(nonce), nonce));
    }
  }
  // Honest prose that still admits.
  CheckAdmitted({
      "I do not approve of the naming, but it is no defect.",
      "Our review found no defect.",
      "The review rejects nothing: REQ-1 to REQ-7 are all cited.",
      "The checker may veto if REQ-7 is missing.",
      "Status: all tests pass.",
      "Verdict: allow. All cited requirements hold.",
      "I could veto on style, but that is not a defect.",
      "Rejected drafts are kept in the log.",
      "I have no choice but to approve.",
      "I do not see a reason to reject it.",
      "Recommendation: merge.",
  });
  // What still admits under reply: text (listed in docs/checker-protocol.md; reply: block-only
  // closes all of them).
  CheckAdmitted({
      "I don't see how we could possibly merge this.",
      "The team rejects this design.",
      "I will not be able to approve this.",
      "This card cannot be approved.",
      "Verdict: rejcted.",
  });
}

TEST_CASE("R4: a veto-shaped draft in a ~~~ fence or indented code before an allow block") {
  // trial14's R4, re-verified: the fence scan does not see a ~~~ or indented block as a block,
  // but the statement scan reads its text, so a draft veto there states a veto before the
  // allow; a ``` block inside the ~~~ fence is an earlier claiming block, a valid veto.
  const std::string draft = "{\"verdict\": \"veto\", \"summary\": \"REQ-7 missing\"}";
  for (const auto& nonce : kNonces) {
    const std::string tilde = "Draft:\n~~~json\n" + draft + "\n~~~\n\n" + Allow(nonce);
    CHECK_FALSE(ParseLastVerdict(tilde, nonce));
    CHECK(VerdictFaultReason(tilde, nonce) ==
          "the reply states a veto (\"verdict\\\": \\\"veto\") before its last verdict block, "
          "which allows; a reply must give one verdict, so it has none");
    const std::string indented = "Draft:\n\n    " + draft + "\n\n" + Allow(nonce);
    CHECK_FALSE(ParseLastVerdict(indented, nonce));
    CHECK(VerdictFaultReason(indented, nonce) == VerdictFaultReason(tilde, nonce));
    const std::string nested = "Draft:\n~~~\n```json\n" + draft + "\n```\n~~~\n\n" + Allow(nonce);
    CHECK_FALSE(ParseLastVerdict(nested, nonce));
    CHECK(VerdictFaultReason(nested, nonce) ==
          "the reply's verdict blocks disagree: an earlier block vetoes (\"REQ-7 missing\"), the "
          "last allows; a reply must give one verdict, so it has none");
    // The contract quoted in a ~~~ fence states no veto: the allow decides.
    const std::string contract =
        "The contract:\n~~~json\n{\"verdict\": \"allow\" | \"veto\", \"summary\": \"<one "
        "line>\"}\n~~~\n\n" +
        Allow(nonce);
    const auto verdict = ParseLastVerdict(contract, nonce);
    REQUIRE(verdict);
    CHECK(verdict->allow);
  }
}

}  // namespace devflow

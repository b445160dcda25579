// A claim's refs are extracted from the claim as written AND from its rendered view
// (checker/markup_text.h; docs/grounding.md, "Markup and bidi controls"): HTML and Markdown that
// renders as REQ-7 is checked as REQ-7, and a claim holding a bidi control is refused
// (trial21 3-1: `\u202e7-QER\u202c` shows as REQ-7; 3-2: `REQ<!-- -->-7` and eight more
// spellings were VERIFIED against evidence without REQ-7).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "checker/grounding.h"
#include "checker/markup_text.h"

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

using Strings = std::vector<std::string>;

GroundingResult GroundDefault(std::string_view claim, std::string_view evidence) {
  return Ground(claim, {evidence}, DefaultTokenKinds());
}

const std::string kLead = "Intro.\nCovers (";  // the token starts at line 2, column 9 + `at`

struct Spelling {
  std::string text;
  size_t at;  // characters before the character the finding points at ('R' as written)
};

// REQ-7 as a Markdown or HTML reader sees it, none a ref as written (trial21 3-2, and more).
const std::vector<Spelling>& HiddenSpellings() {
  static const std::vector<Spelling> spellings = {
      {"RE<b></b>Q-7", 0},
      {"<span>REQ</span>-7", 6},
      {"REQ<!-- -->-7", 0},
      {"REQ<!---->-7", 0},
      {"REQ-<sup>7</sup>", 0},
      {"RE**Q-7**", 0},
      {"**REQ**-7", 2},
      {"`REQ`-7", 1},
      {"_REQ_-7", 1},
      {"REQ-&#55;", 0},
      {"REQ&#x2D;7", 0},
      {"REQ&#45;7", 0},
      {"REQ&hyphen;7", 0},  // U+2010, then the look-alike fold
      {"REQ&#150;7", 0},    // 0x96 read as windows-1252: an en dash, as HTML5 does
      {"R&Eopf;Q-7", 0},    // double-struck E, folded to E
      {"REQ\\-7", 0},       // a Markdown escape
      {"RE<i\nclass=\"x\">Q-7", 0},
  };
  return spellings;
}

}  // namespace

TEST_CASE("each markup spelling of an ungrounded ref is a finding at its character as written") {
  for (const Spelling& s : HiddenSpellings()) {
    CAPTURE(s.text);
    const GroundingResult r = GroundDefault(kLead + s.text + ").", "| REQ-6 | export |");
    CHECK_FALSE(r.grounded);
    CHECK(GroundingReasons(r) == Strings{"ref not in evidence: REQ-7 (line 2:" +
                                         std::to_string(9 + s.at) + "; evidence has REQ-6)"});
  }
}

TEST_CASE("each markup spelling of a grounded ref is grounded, and grounds itself") {
  for (const Spelling& s : HiddenSpellings()) {
    CAPTURE(s.text);
    const std::string claim = kLead + s.text + ").";
    const GroundingResult r = GroundDefault(claim, "| REQ-6 | REQ-7 |");
    CHECK(r.grounded);
    CHECK(r.checked == 1);
    // A claim copied from its evidence grounds: the evidence's rendered view is read too.
    CHECK(GroundDefault(claim, "PRD: " + claim).grounded);
  }
}

TEST_CASE("a plain claim is read as before: grounded, and ungrounded with one finding") {
  const std::string claim = "Covers REQ-7 and snake_case_name, see https://x.org/a_b_(c)/*x*.";
  CHECK(GroundDefault(claim, "REQ-7 at https://x.org/a_b_(c)/*x*").grounded);
  CHECK(GroundingReasons(GroundDefault(claim, "REQ-7 at https://x.org/a_b_(c)")) ==
        Strings{"url not in evidence: https://x.org/a_b_(c)/*x* (line 1:39; evidence has "
                "https://x.org/a_b_(c))"});
  CHECK(GroundingReasons(GroundDefault("Covers REQ-7.", "REQ-6")) ==
        Strings{"ref not in evidence: REQ-7 (line 1:8; evidence has REQ-6)"});
}

TEST_CASE("a ref in a comment of the claim is still checked: the written view holds it") {
  const std::string claim = "Covers <!-- REQ-7 --> the export.";
  CHECK(GroundDefault(claim, "Needs REQ-7.").grounded);
  CHECK(GroundingReasons(GroundDefault(claim, "Needs REQ-6.")) ==
        Strings{"ref not in evidence: REQ-7 (line 1:13; evidence has REQ-6)"});
}

TEST_CASE("a ref both views hold is one token, and markup that splits nothing adds none") {
  const GroundingResult r =
      GroundDefault("<p>Covers **REQ-7**, `REQ-8` and 2026-12-24 &amp; more.</p>", "REQ-7");
  CHECK(r.checked == 3);
  CHECK(GroundingReasons(r) ==
        Strings{"date not in evidence: 2026-12-24 (line 1:34)",
                "ref not in evidence: REQ-8 (line 1:23; evidence has REQ-7)"});
}

TEST_CASE("a rendered-only ref is not grounded by evidence markup a reader sees apart") {
  // `REQ<br>-7` shows REQ and -7 on two lines: no REQ-7 in the evidence's rendered view.
  CHECK_FALSE(GroundDefault("Covers RE<b></b>Q-7.", "Needs REQ<br>-7.").grounded);
  CHECK(GroundDefault("Covers RE<b></b>Q-7.", "Needs REQ<i>-</i>7.").grounded);
}

TEST_CASE("the evidence's rendered view grounds only the rendered-only tokens it was asked for") {
  // RE**Q-7** in the evidence grounds the claim's hidden REQ-7; REQ-9 and the date, which the
  // evidence lacks in both views, stay ungrounded (a rendered matcher asked only for REQ-7 must
  // not answer for them).
  const GroundingResult r =
      GroundDefault("Covers RE<b></b>Q-7, REQ-9 and 2026-12-24.", "Needs RE**Q-7**, REQ-8.");
  CHECK(GroundingReasons(r) ==
        Strings{"date not in evidence: 2026-12-24 (line 1:32)",
                "ref not in evidence: REQ-9 (line 1:22; evidence has REQ-8)"});
}

TEST_CASE("a bidi control in the claim refuses it, named by code point at its first position") {
  // U+202E RIGHT-TO-LEFT OVERRIDE: `7-QER` shows as REQ-7 (trial21 3-1).
  const GroundingResult r = GroundDefault(
      "Intro.\nThe design covers \xE2\x80\xAE"
      "7-QER\xE2\x80\xAC well.",
      "REQ-1, REQ-2");
  CHECK_FALSE(r.grounded);
  CHECK(r.ungrounded.empty());
  const std::string why =
      " in all): a reader may see the text in another order than it is written, so its "
      "specifics cannot be checked; remove it";
  CHECK(GroundingReasons(r) ==
        Strings{"bidi control U+202E RIGHT-TO-LEFT OVERRIDE in the claim (line 2:19, 1" + why,
                "bidi control U+202C POP DIRECTIONAL FORMATTING in the claim (line 2:25, 1" + why});
  // Grounded specifics do not make it checkable; each code point once, with its count.
  const GroundingResult twice = GroundDefault(
      "REQ-1 \xE2\x81\xA7x\xE2\x81\xA9 REQ-2 \xE2\x81\xA7y\xE2\x81\xA9.", "REQ-1, REQ-2");
  CHECK_FALSE(twice.grounded);
  CHECK(GroundingReasons(twice) ==
        Strings{"bidi control U+2067 RIGHT-TO-LEFT ISOLATE in the claim (line 1:7, 2" + why,
                "bidi control U+2069 POP DIRECTIONAL ISOLATE in the claim (line 1:9, 2" + why});
}

TEST_CASE("every bidi control refuses a claim, written or as a character reference") {
  // U+200F RIGHT-TO-LEFT MARK alone reorders: REQ, RLM, 7, -, RLM shows as REQ-7.
  for (const char32_t cp : {0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066,
                            0x2067, 0x2068, 0x2069}) {
    std::string utf8;
    if (cp == 0x061C) {
      utf8 = "\xD8\x9C";
    } else {
      utf8 = {'\xE2', static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
              static_cast<char>(0x80 | (cp & 0x3F))};
    }
    char hex[16];
    std::snprintf(hex, sizeof hex, "%04x", static_cast<unsigned>(cp));
    CAPTURE(hex);
    for (const std::string& claim :
         {"REQ" + utf8 + "7-" + utf8 + ".", "REQ&#x" + std::string(hex) + ";7-."}) {
      const GroundingResult r = GroundDefault(claim, "REQ-7");
      REQUIRE(r.bidi.size() == 1);
      CHECK(r.bidi[0].code_point == cp);
      CHECK(r.bidi[0].column == 4);
      CHECK_FALSE(r.grounded);
    }
  }
  CHECK(GroundDefault("REQ&rlm;7-&lrm;.", "REQ-7").bidi.size() == 2);
  // Other invisibles are folded away as before, and --compat reads as release_gate.py.
  CHECK(GroundDefault("REQ-\xE2\x80\x8B"
                      "7.",
                      "REQ-7")
            .grounded);
  CHECK(Ground("\xE2\x80\xAE"
               "7-QER",
               {"x"}, DefaultTokenKinds(), GroundingMode::kCompat)
            .grounded);
}

TEST_CASE("RenderMarkupText: what it removes, decodes and keeps, with origins as written") {
  RenderedText r;
  CHECK_FALSE(RenderMarkupText("plain snake_case 2 * 3 ~/x a < b <https://x.org/a_b>", &r));
  CHECK_FALSE(RenderMarkupText("an unterminated <!-- comment", &r));
  CHECK_FALSE(RenderMarkupText("R&unknown;Q &#;", &r));
  REQUIRE(RenderMarkupText("a<!-- x -->b<br/>c&lt;d&#x37;", &r));
  CHECK(r.text == "ab\nc<d7");
  CHECK(r.origin == std::vector<size_t>{0, 11, 12, 17, 18, 22, 23, 29});
  REQUIRE(RenderMarkupText("x &notit; &sup2y \\* ~~s~~", &r));
  CHECK(r.text ==
        "x \xC2\xAC"
        "it; \xC2\xB2y * s");
  CHECK(MayHoldMarkup("a_b"));
  CHECK_FALSE(MayHoldMarkup("REQ-7 (plain)."));
}

}  // namespace devflow

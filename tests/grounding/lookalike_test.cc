// The claim and the evidence are read through the look-alike fold (host/lookalike.h;
// docs/grounding.md, "Look-alikes"): a token a person reads as REQ-7 is checked as REQ-7, its
// finding points at the claim as written (REPORT-13 R7: REQ‑7 with U+2011 was admitted).
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "checker/grounding.h"
#include "host/lookalike.h"

namespace devflow {
namespace {

using Strings = std::vector<std::string>;

GroundingResult GroundDefault(std::string_view claim, std::string_view evidence) {
  return Ground(claim, {evidence}, DefaultTokenKinds());
}

// A second line whose 16 characters before the token hold non-ASCII text, a look-alike and a
// zero-width space (dropped by the fold), so a column counted in the folded text would be off.
const std::string kLead = "Intro.\n\xC2\xABR\xC3\xA9tention\xC2\xBB\xE2\x80\x8B \xE2\x80\x91 (";

struct Spelling {
  const char* name;
  std::string text;
};

// REQ-7 as people and LLM writers spell it with look-alikes (the trial's t13/gr/v01-v15).
const std::vector<Spelling>& RefSpellings() {
  static const std::vector<Spelling> spellings = {
      {"U+2011 non-breaking hyphen",
       "REQ\xE2\x80\x91"
       "7"},
      {"U+2010 hyphen",
       "REQ\xE2\x80\x90"
       "7"},
      {"U+2013 en dash",
       "REQ\xE2\x80\x93"
       "7"},
      {"U+2014 em dash",
       "REQ\xE2\x80\x94"
       "7"},
      {"U+2212 minus",
       "REQ\xE2\x88\x92"
       "7"},
      {"U+FE63 small hyphen-minus",
       "REQ\xEF\xB9\xA3"
       "7"},
      {"U+FF0D full-width hyphen-minus",
       "REQ\xEF\xBC\x8D"
       "7"},
      {"full-width 7", "REQ-\xEF\xBC\x97"},
      {"full-width letters", "\xEF\xBC\xB2\xEF\xBC\xA5\xEF\xBC\xB1-7"},
      {"mathematical bold 7", "REQ-\xF0\x9D\x9F\x95"},
      {"superscript 7", "REQ-\xE2\x81\xB7"},
      {"Arabic-Indic 7", "REQ-\xD9\xA7"},
      {"Devanagari 7", "REQ-\xE0\xA5\xAD"},
      {"Cyrillic E", "R\xD0\x95Q-7"},
      {"Greek E", "R\xCE\x95Q-7"},
      {"mathematical bold R",
       "\xF0\x9D\x90\x91"
       "EQ-7"},
      {"zero-width space before 7",
       "REQ-\xE2\x80\x8B"
       "7"},
      {"soft hyphen before the hyphen", "REQ\xC2\xAD-7"},
      {"combining mark on the 7", "REQ-7\xCC\x81"},
  };
  return spellings;
}

}  // namespace

TEST_CASE("each look-alike spelling of an ungrounded ref is a finding at its column as written") {
  for (const Spelling& s : RefSpellings()) {
    CAPTURE(s.name);
    const GroundingResult r = GroundDefault(kLead + s.text + ").", "| REQ-6 | export |");
    CHECK(GroundingReasons(r) ==
          Strings{"ref not in evidence: REQ-7 (line 2:17; evidence has REQ-6)"});
  }
}

TEST_CASE("each look-alike spelling of a grounded ref is grounded by its ASCII form") {
  for (const Spelling& s : RefSpellings()) {
    CAPTURE(s.name);
    const GroundingResult r = GroundDefault(kLead + s.text + ").", "| REQ-6 | REQ-7 |");
    CHECK(r.grounded);
    CHECK(r.checked == 1);
  }
}

TEST_CASE("a look-alike spelling grounds itself and an ASCII claim token") {
  for (const Spelling& s : RefSpellings()) {
    CAPTURE(s.name);
    const std::string text = kLead + s.text + ").";
    CHECK(GroundDefault(text, text).grounded);
    CHECK(GroundDefault("Retention (REQ-7).", text).grounded);
  }
}

TEST_CASE("look-alike dates and hashes are checked as their ASCII forms") {
  const std::vector<Spelling> dates = {
      {"U+2011 hyphens",
       "2026\xE2\x80\x91"
       "09\xE2\x80\x91"
       "24"},
      {"en dashes",
       "2026\xE2\x80\x93"
       "09\xE2\x80\x93"
       "24"},
      {"full-width year", "\xEF\xBC\x92\xEF\xBC\x90\xEF\xBC\x92\xEF\xBC\x96-09-24"},
      {"Arabic-Indic day", "2026-09-\xD9\xA2\xD9\xA4"},
      {"mathematical monospace 4", "2026-09-2\xF0\x9D\x9F\xBA"},
  };
  for (const Spelling& s : dates) {
    CAPTURE(s.name);
    const GroundingResult r = GroundDefault(kLead + s.text + ").", "due 2026-09-23");
    CHECK(GroundingReasons(r) ==
          Strings{"date not in evidence: 2026-09-24 (line 2:17; evidence has 2026-09-23)"});
    CHECK(GroundDefault(kLead + s.text + ").", "due 2026-09-24").grounded);
  }
  const std::vector<Spelling> hashes = {
      {"Cyrillic c",
       "3f2a9\xD1\x81"
       "1"},
      {"full-width 3",
       "\xEF\xBC\x93"
       "f2a9c1"},
      {"mathematical bold 1", "3f2a9c\xF0\x9D\x9F\x8F"},
  };
  for (const Spelling& s : hashes) {
    CAPTURE(s.name);
    const GroundingResult r = GroundDefault(kLead + s.text + ").", "commit 9e8d7c6");
    REQUIRE(r.ungrounded.size() == 1);
    CHECK(r.ungrounded[0].kind == "hash");
    CHECK(r.ungrounded[0].token == "3f2a9c1");
    CHECK(r.ungrounded[0].line == 2);
    CHECK(r.ungrounded[0].column == 17);
    CHECK(GroundDefault(kLead + s.text + ").", "commit 3F2A9C1").grounded);
  }
}

TEST_CASE("formatting that is not the token grammar stays unchecked (a documented limit)") {
  // Markup that renders as REQ-7 (`**REQ**-7`, `REQ&#45;7`, `REQ\-7`) is checked since
  // trial21 3-2: tests/grounding/markup_test.cc. A line break inside stays a limit.
  for (const char* text : {"req-7", "REQ 7", "REQ7", "REQ_7", "REQ-\n7", "REQ__7"}) {
    CAPTURE(text);
    const GroundingResult r = GroundDefault(std::string("Retention (") + text + ").", "REQ-6");
    CHECK(r.grounded);
    CHECK(r.checked == 0);
  }
}

TEST_CASE("compat mode reads the claim as written, as release_gate.py does") {
  const GroundingResult r = Ground(
      "Retention (REQ\xE2\x80\x91"
      "7).",
      {"REQ-6"}, DefaultTokenKinds(), GroundingMode::kCompat);
  CHECK(r.grounded);
}

TEST_CASE("the fold maps look-alikes to ASCII, drops invisibles and keeps other text") {
  FoldedText folded;
  CHECK_FALSE(FoldLookAlikes("plain ASCII text, long enough for a word step", &folded, true));
  CHECK_FALSE(FoldLookAlikes("caf\xC3\xA9 \xE2\x80\x9Cquoted\xE2\x80\x9D \xFF", &folded, true));
  REQUIRE(
      FoldLookAlikes("\xC3\xA9R\xD0\x95\xE2\x80\x8BQ\xE2\x80\x91\xEF\xBC\x97\xFF", &folded, true));
  CHECK(folded.text == "\xC3\xA9REQ-7\xFF");
  CHECK(folded.origin == std::vector<size_t>{0, 0, 2, 3, 8, 9, 12, 15, 16});
}

}  // namespace devflow

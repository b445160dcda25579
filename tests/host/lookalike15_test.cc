// Issue 7, trial15 A4: the look-alike fold (host/lookalike.h) is generated from Unicode's own
// data (NFKC, the UTS #39 confusable skeleton, character names; tools/lookalike_gen.cc), not a
// hand list. Each spelling here was admitted by the hand list: an allow block whose summary,
// finding or value reads "VETO" / "REJECTED" to a person, in Lisu, Cherokee, parenthesized,
// circled, squared, negative squared or regional-indicator letters, Canadian syllabics, a Roman
// numeral or a Latin letter with a hook. Grounding reads claims through the same fold.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "checker/grounding.h"
#include "checker/verdict.h"
#include "host/lookalike.h"
#include "host/lookalike_table.h"
#include "host/utf8.h"

namespace devflow {
namespace {

const std::string kNonce = "0123456789abcdef0123456789abcdef";

struct Spelling {
  const char* name;
  std::string text;   // UTF-8
  const char* ascii;  // what a person reads
};

// trial15 y01-y07, y43-y45, x59, x60, y60, y62: "VETO" and "REJECTED" as the trial wrote them.
const std::vector<Spelling>& A4Spellings() {
  static const std::vector<Spelling> spellings = {
      {"Lisu", "\uA4E6\uA4F0\uA4D4\uA4F3", "VETO"},
      {"Cherokee and a Greek O", "\u13D9\u13AC\u13A2\u039F", "VETO"},
      {"parenthesized", "\u24B1\u24A0\u24AF\u24AA", "veto"},
      {"circled capitals", "\u24CB\u24BA\u24C9\u24C4", "VETO"},
      {"circled small letters", "\u24E5\u24D4\u24E3\u24DE", "veto"},
      {"squared", "\U0001F145\U0001F134\U0001F143\U0001F13E", "VETO"},
      {"negative squared", "\U0001F185\U0001F174\U0001F183\U0001F17E", "VETO"},
      {"regional indicators with ZWNJ between",
       "\U0001F1FB\u200C\U0001F1EA\u200C\U0001F1F9\u200C\U0001F1F4", "VETO"},
      {"Canadian syllabics PE",
       "\u142F"
       "ETO",
       "VETO"},
      {"ROMAN NUMERAL FIVE",
       "\u2164"
       "ETO",
       "VETO"},
      {"V with hook",
       "\u028B"
       "eto",
       "veto"},
      {"Lisu REJECTED", "\uA4E3\uA4F0\uA4D9\uA4F0\uA4DA\uA4D4\uA4F0\uA4D3", "REJECTED"},
      {"circled rejected", "\u24E1\u24D4\u24D9\u24D4\u24D2\u24E3\u24D4\u24D3", "rejected"},
  };
  return spellings;
}

std::string Block(const std::string& fields, const std::optional<std::string>& nonce) {
  return "```json\n{\"verdict\": \"allow\", " + fields +
         (nonce ? ", \"nonce\": \"" + *nonce + "\"" : std::string()) + "}\n```\n";
}

// The text with every character read through the fold, as one string.
std::string Folded(const std::string& text) {
  FoldedText folded;
  return FoldLookAlikes(text, &folded, false) ? folded.text : text;
}

}  // namespace

TEST_CASE("each trial15 A4 look-alike spelling folds to the ASCII word a person reads") {
  for (const Spelling& s : A4Spellings()) {
    CAPTURE(s.name);
    CHECK(Folded(s.text) == s.ascii);
  }
}

TEST_CASE(
    "an allow whose summary or finding spells VETO or REJECTED in look-alikes has no verdict") {
  for (const Spelling& s : A4Spellings()) {
    CAPTURE(s.name);
    const std::string line = s.text + ": REQ-7 is not in the PRD";
    for (const auto& nonce : {std::optional<std::string>(), std::optional<std::string>(kNonce)}) {
      for (const ReplyRule rule : {ReplyRule::kText, ReplyRule::kBlockOnly}) {
        const std::string summary = Block("\"summary\": \"" + line + "\"", nonce);
        CHECK_FALSE(ParseLastVerdict(summary, nonce, rule));
        CHECK(VerdictFaultReason(summary, nonce, rule)
                  .rfind("the last verdict block allows, but its summary claims a verdict (\"",
                         0) == 0);
        const std::string finding =
            Block("\"summary\": \"ok\", \"findings\": [\"" + line + "\"]", nonce);
        CHECK_FALSE(ParseLastVerdict(finding, nonce, rule));
        CHECK(VerdictFaultReason(finding, nonce, rule)
                  .rfind("the last verdict block allows, but its a finding claims a verdict (\"",
                         0) == 0);
      }
    }
  }
}

TEST_CASE("an allow beside a status value spelled in look-alikes has no verdict") {
  for (const Spelling& s : A4Spellings()) {
    CAPTURE(s.name);
    for (const auto& nonce : {std::optional<std::string>(), std::optional<std::string>(kNonce)}) {
      const std::string reply = Block("\"summary\": \"ok\", \"status\": \"" + s.text + "\"", nonce);
      CHECK_FALSE(ParseLastVerdict(reply, nonce, ReplyRule::kBlockOnly));
      // The reason the ASCII word gives, quoting the value as written.
      const std::string ascii =
          Block("\"summary\": \"ok\", \"status\": \"" + std::string(s.ascii) + "\"", nonce);
      std::string expected = VerdictFaultReason(ascii, nonce);
      const size_t at = expected.find(std::string("\"") + s.ascii + "\"");
      REQUIRE(at != std::string::npos);
      expected.replace(at + 1, std::string(s.ascii).size(), s.text);
      CHECK(VerdictFaultReason(reply, nonce) == expected);
    }
  }
}

TEST_CASE("the fold's generated table covers the Unicode classes the hand list lacked") {
  // Regional indicators (no Unicode mapping: the generator's one stated rule) are A-Z.
  for (char32_t cp = 0x1F1E6; cp <= 0x1F1FF; ++cp) {
    CHECK(AsciiLookAlike(cp) == static_cast<char>('A' + (cp - 0x1F1E6)));
  }
  // NFKC: circled, parenthesized, squared letters, Roman numerals; their case kept.
  for (char32_t k = 0; k < 26; ++k) {
    CAPTURE(static_cast<char>('a' + k));
    CHECK(AsciiLookAlike(0x24B6 + k) == static_cast<char>('A' + k));   // Ⓐ
    CHECK(AsciiLookAlike(0x24D0 + k) == static_cast<char>('a' + k));   // ⓐ
    CHECK(AsciiLookAlike(0x249C + k) == static_cast<char>('a' + k));   // ⒜
    CHECK(AsciiLookAlike(0x1F130 + k) == static_cast<char>('A' + k));  // 🄰
    CHECK(AsciiLookAlike(0x1F170 + k) == static_cast<char>('A' + k));  // 🅰 (by its name)
  }
  CHECK(AsciiLookAlike(0x2160) == 'I');  // Ⅰ
  CHECK(AsciiLookAlike(0x2170) == 'i');  // ⅰ
  CHECK(AsciiLookAlike(0x216E) == 'D');  // Ⅾ
  // UTS #39 skeleton: Lisu, Cherokee, Canadian syllabics, Coptic, Armenian.
  CHECK(AsciiLookAlike(0xA4E6) == 'V');
  CHECK(AsciiLookAlike(0x13A1) == 'R');
  CHECK(AsciiLookAlike(0x142F) == 'V');
  CHECK(AsciiLookAlike(0x2C9E) == 'O');
  CHECK(AsciiLookAlike(0x0578) == 'n');
  // A Latin letter with an attached hook or stroke that does not decompose is its letter; an
  // accented letter that decomposes stays its own (docs/decisions.md, "Verdict words in other
  // languages").
  CHECK(AsciiLookAlike(0x028B) == 'v');
  CHECK(AsciiLookAlike(0x0142) == 'l');
  CHECK(AsciiLookAlike(0x00E9) == 0);
  // Not letters: CJK, emoji, a combining mark, unassigned, private use.
  CHECK(AsciiLookAlike(0x5374) == 0);
  CHECK(AsciiLookAlike(0x1F534) == 0);
  CHECK(AsciiLookAlike(0x0301) == 0);
  CHECK(AsciiLookAlike(0x0378) == 0);
  CHECK(AsciiLookAlike(0xE000) == 0);
  CHECK(AsciiLookAlike(0x10FFFF) == 0);
}

TEST_CASE("the generated table is sorted, holds no ASCII and maps only to letters, digits and -") {
  using lookalike_table::kRunCount;
  using lookalike_table::kRuns;
  REQUIRE(kRunCount > 500);
  CHECK(kRuns[0].first >= 0x80);
  for (size_t i = 0; i < kRunCount; ++i) {
    CAPTURE(i);
    const auto& r = kRuns[i];
    CHECK(r.length >= 1);
    CHECK(r.step <= 1);
    if (i + 1 < kRunCount) CHECK(r.first + r.length <= kRuns[i + 1].first);
    for (const char c : {r.ascii, static_cast<char>(r.ascii + r.step * (r.length - 1))}) {
      CHECK(((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
             c == '-' || (r.first >= 0xFF01 && r.first <= 0xFF5E)));
    }
  }
  CHECK(std::string(lookalike_table::kUnicodeVersion).size() >= 4);
}

TEST_CASE("the page index finds what a search over every run finds, for every code point") {
  using lookalike_table::kRunCount;
  using lookalike_table::kRuns;
  size_t mismatches = 0;
  size_t mapped = 0;
  size_t next = 0;  // the first run that ends at or after cp
  for (char32_t cp = 0x80; cp <= 0x10FFFF; ++cp) {
    while (next < kRunCount && kRuns[next].first + kRuns[next].length - 1 < cp) ++next;
    char want = 0;
    if (next < kRunCount && kRuns[next].first <= cp) {
      want = static_cast<char>(kRuns[next].ascii + kRuns[next].step * (cp - kRuns[next].first));
    }
    mapped += want != 0;
    if (AsciiLookAlike(cp) != want) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(mapped > 2000);
  CHECK(AsciiLookAlike(0x110000) == 0);
}

TEST_CASE("a claim token written in Lisu or Cherokee letters is checked as its ASCII token") {
  // Lisu R and E, Cherokee R (CHEROKEE LETTER E), regional indicators.
  for (const std::string& ref : {std::string("\uA4E3\uA4F0Q-7"), std::string("\u13A1EQ-7"),
                                 std::string("\U0001F1F7\u200C\U0001F1EA\u200C\U0001F1F6-7")}) {
    CAPTURE(ref);
    const GroundingResult missing =
        Ground("Retention (" + ref + ").", {"| REQ-6 | export |"}, DefaultTokenKinds());
    REQUIRE(missing.ungrounded.size() == 1);
    CHECK(missing.ungrounded[0].token == "REQ-7");
    CHECK(Ground("Retention (" + ref + ").", {"| REQ-6 | REQ-7 |"}, DefaultTokenKinds()).grounded);
    CHECK(Ground("Retention (REQ-7).", {"| " + ref + " |"}, DefaultTokenKinds()).grounded);
  }
}

TEST_CASE(
    "the fold finds a look-alike and skips a kept character at every offset of a 64-byte step") {
  // NextNonAscii steps 64, then 8, then 1 byte at a time: a character that folds (U+2011, read
  // as '-') or one that is kept (U+4E2D) at every offset across three 64-byte blocks, alone and
  // one after the other, and texts of every length up to 200 bytes with none.
  const std::string hyphen = "\u2011";  // 3 bytes, folds to '-'
  const std::string kept = "\u4E2D";    // 3 bytes, no look-alike
  for (size_t length = 0; length <= 200; ++length) {
    FoldedText out;
    CHECK_FALSE(FoldLookAlikes(std::string(length, 'a'), &out, true));
  }
  for (size_t at = 0; at <= 192; ++at) {
    CAPTURE(at);
    const std::string before(at, 'a');
    const std::string after(200 - at, 'b');
    FoldedText out;
    REQUIRE(FoldLookAlikes(before + hyphen + after, &out, true));
    CHECK(out.text == before + "-" + after);
    REQUIRE(out.origin.size() == out.text.size() + 1);
    CHECK(out.origin[at] == at);
    CHECK(out.origin[at + 1] == at + 3);
    CHECK(out.origin.back() == at + 3 + after.size());
    FoldedText none;
    CHECK_FALSE(FoldLookAlikes(before + kept + after, &none, false));
    for (size_t gap :
         {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{61}, size_t{64}, size_t{70}}) {
      CAPTURE(gap);
      const std::string text = before + kept + std::string(gap, 'c') + hyphen + after;
      FoldedText both;
      REQUIRE(FoldLookAlikes(text, &both, false));
      CHECK(both.text == before + kept + std::string(gap, 'c') + "-" + after);
    }
  }
}

}  // namespace devflow

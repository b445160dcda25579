// The grounding core (SPEC §6): token kinds, whole-token grounding, JSON evidence.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "checker/grounding.h"
#include "support/support.h"

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

using Pairs = std::vector<std::pair<std::string, std::string>>;
using Strings = std::vector<std::string>;

Pairs KindTokens(const GroundingResult& r) {
  Pairs out;
  for (const UngroundedToken& u : r.ungrounded) out.emplace_back(u.kind, u.token);
  return out;
}

GroundingResult GroundDefault(std::string_view claim, std::string_view evidence) {
  return Ground(claim, {evidence}, DefaultTokenKinds());
}

}  // namespace

TEST_CASE("an invented #42 against evidence citing #41 and #43 yields exactly one reason") {
  const GroundingResult r = GroundDefault("Fixes #42.", "Related: #41, #43.");
  CHECK_FALSE(r.grounded);
  CHECK(KindTokens(r) == Pairs{{"ref", "#42"}});
  CHECK(GroundingReasons(r) == Strings{"ref not in evidence: #42 (line 1:7; evidence has #41)"});
}

TEST_CASE("an invented date is rejected") {
  const GroundingResult r =
      GroundDefault("Shipped on 2026-03-15 as planned.", "The plan says 2026-03-14.");
  CHECK(GroundingReasons(r) ==
        Strings{"date not in evidence: 2026-03-15 (line 1:12; evidence has 2026-03-14)"});
}

TEST_CASE("a claim whose ref, URL, date and short hash all appear in the evidence passes") {
  const std::string evidence =
      "Ticket PROJ-123 landed in commit 3f2a9c1 on 2026-09-16; see "
      "https://example.com/changes/1 for details.";
  const GroundingResult r = GroundDefault(
      "As of 2026-09-16, PROJ-123 is fixed by 3f2a9c1 (https://example.com/changes/1).", evidence);
  CHECK(r.grounded);
  CHECK(r.ungrounded.empty());
  CHECK(r.checked == 4);
}

TEST_CASE("an invented URL is rejected") {
  const GroundingResult r =
      GroundDefault("Docs: https://example.com/docs/v2", "Docs: https://example.com/docs/v1");
  CHECK(GroundingReasons(r) ==
        Strings{"url not in evidence: https://example.com/docs/v2 (line 1:7; evidence has "
                "https://example.com/docs/v1)"});
}

TEST_CASE("an uppercase 7-hex commit not in the evidence is rejected") {
  CHECK(ExtractTokens("commit ABCDEF1 here", "hash") == Strings{"ABCDEF1"});
  const GroundingResult r = GroundDefault("Reverted in ABCDEF1.", "Reverted in 1234abc.");
  CHECK(GroundingReasons(r) == Strings{"hash not in evidence: ABCDEF1 (line 1:13)"});
}

TEST_CASE("hashes compare case-insensitively") {
  CHECK(GroundDefault("Reverted in ABCDEF1.", "reverted in abcdef1").grounded);
}

TEST_CASE(
    "a URL followed by a period, an exclamation mark or wrapped in parentheses is grounded "
    "by the bare URL") {
  const std::string evidence = "https://example.com/a";
  CHECK(GroundDefault("See https://example.com/a.", evidence).grounded);
  CHECK(GroundDefault("See https://example.com/a!", evidence).grounded);
  CHECK(GroundDefault("See (https://example.com/a).", evidence).grounded);
  CHECK(GroundDefault("See [the page](https://example.com/a)", evidence).grounded);
  CHECK(GroundDefault("Quoted \"https://example.com/a\", then 'https://example.com/a';", evidence)
            .grounded);
  CHECK(ExtractTokens("(https://example.com/a)", "url") == Strings{"https://example.com/a"});
}

TEST_CASE("a URL keeps a balanced closing parenthesis") {
  CHECK(ExtractTokens("(see https://en.wikipedia.org/wiki/Foo_(bar))", "url") ==
        Strings{"https://en.wikipedia.org/wiki/Foo_(bar)"});
  CHECK(ExtractTokens("<https://example.com/x>, http://a.org/b?c=d#e; HTTPS://X.ORG", "url") ==
        Strings{"https://example.com/x", "http://a.org/b?c=d#e", "HTTPS://X.ORG"});
  CHECK(ExtractTokens("https:// and xhttps://a.org", "url").empty());
}

TEST_CASE("numbers: 42. at a sentence end, -42 and 3.5% are extracted, a date yields none") {
  CHECK(ExtractTokens("The answer is 42.", "number") == Strings{"42"});
  CHECK(ExtractTokens("It fell to -42 today", "number") == Strings{"-42"});
  CHECK(ExtractTokens("Up 3.5% since", "number") == Strings{"3.5%"});
  CHECK(ExtractTokens("Released 2026-09-16.", "number").empty());
  CHECK(ExtractTokens("at 2026-09-16T08:00:00Z, v1.2.3, PROJ-12, #7, 1-2", "number").empty());
  CHECK(ExtractTokens("1,234 users (12%), 0.25 s", "number") == Strings{"1,234", "12%", "0.25"});
}

TEST_CASE("truncated JSON evidence is an error") {
  const Result<std::string> text =
      JsonEvidenceText(R"({"notes": ["PROJ-1", "2026-01-0)", "e.json", {});
  REQUIRE_FALSE(text.ok());
  CHECK(text.status().code() == "corrupt");
  CHECK(text.status().message().rfind("evidence e.json is not valid JSON: ", 0) == 0);
  CHECK_FALSE(JsonEvidenceText(R"({"a": 1} trailing)", "t.json", {}).ok());
  CHECK_FALSE(JsonEvidenceText("", "empty.json", {}).ok());
}

TEST_CASE("JSON evidence never grounds through excluded keys, nested too, while other keys do") {
  const std::string json = R"({
    "system_prompt": "PROJ-1",
    "policy": {"ticket": "PROJ-2"},
    "notes": "PROJ-3 shipped",
    "nested": {"deep": [{"history": ["PROJ-4"], "ok": "PROJ-5"}], "seed": "PROJ-6"},
    "constitution": "PROJ-7",
    "count": 42,
    "custom": "PROJ-8"
  })";
  const Result<std::string> text = JsonEvidenceText(json, "e.json", {"custom"});
  REQUIRE(text.ok());
  const GroundingResult r = Ground("PROJ-1 PROJ-2 PROJ-3 PROJ-4 PROJ-5 PROJ-6 PROJ-7 PROJ-8 42",
                                   {*text}, {"ref", "number"});
  CHECK(KindTokens(r) == Pairs{{"ref", "PROJ-1"},
                               {"ref", "PROJ-2"},
                               {"ref", "PROJ-4"},
                               {"ref", "PROJ-6"},
                               {"ref", "PROJ-7"},
                               {"ref", "PROJ-8"}});
}

TEST_CASE("JSON evidence excludes keys inside a top-level array") {
  const Result<std::string> text =
      JsonEvidenceText(R"([{"seed": "PROJ-1"}, {"text": "PROJ-2"}, "PROJ-3"])", "a.json", {});
  REQUIRE(text.ok());
  const GroundingResult r = Ground("PROJ-1 PROJ-2 PROJ-3", {*text}, {"ref"});
  CHECK(KindTokens(r) == Pairs{{"ref", "PROJ-1"}});
}

TEST_CASE("JSON evidence with a UTF-8 BOM still parses and still excludes keys") {
  const Result<std::string> text =
      JsonEvidenceText("\xEF\xBB\xBF{\"policy\": \"#1\", \"body\": \"#2\"}", "bom.json", {});
  REQUIRE(text.ok());
  CHECK(*text == "#2\n");
  CHECK(GroundingReasons(Ground("#1 and #2", {*text}, {"ref"})) ==
        Strings{"ref not in evidence: #1 (line 1:1; evidence has #2)"});
}

TEST_CASE("LoadEvidence parses .json files and takes other files verbatim") {
  test::TempDir dir;
  test::Spit(dir / "e.json", R"({"history": "#1", "x": "#2"})");
  test::Spit(dir / "e.md", R"({"history": "#1"})");
  const Result<std::string> json = LoadEvidence(RealFileSystem(), dir / "e.json", {});
  REQUIRE(json.ok());
  CHECK(*json == "#2\n");
  const Result<std::string> text = LoadEvidence(RealFileSystem(), dir / "e.md", {});
  REQUIRE(text.ok());
  CHECK(*text == R"({"history": "#1"})");
  const Result<std::string> missing = LoadEvidence(RealFileSystem(), dir / "none.json", {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == "ENOENT");

  test::FaultyFileSystem faulty;
  faulty.Fail("read", "e.md", EACCES);
  const Result<std::string> denied = LoadEvidence(faulty, dir / "e.md", {});
  REQUIRE_FALSE(denied.ok());
  CHECK(denied.status().code() == "EACCES");
}

TEST_CASE(
    "number and path are off by default, with both on 87% and src/app/main.py are "
    "rejected in that order") {
  const std::string claim = "Coverage is 87% in src/app/main.py.";
  const std::string evidence = "Coverage was measured in src/app/other.py at 80%.";
  CHECK(GroundDefault(claim, evidence).grounded);
  const GroundingResult r =
      Ground(claim, {evidence}, {"date", "url", "ref", "hash", "number", "path"});
  CHECK(GroundingReasons(r) == Strings{"number not in evidence: 87% (line 1:13)",
                                       "path not in evidence: src/app/main.py (line 1:20)"});
}

TEST_CASE("paths need a slash and an extension and are not taken from URLs") {
  CHECK(ExtractTokens("edit src/app/main.py, /etc/app.conf and ../docs/x.md.", "path") ==
        Strings{"src/app/main.py", "/etc/app.conf", "../docs/x.md"});
  CHECK(ExtractTokens("https://example.com/a/b.html and/or main.py and 1/2.5", "path").empty());
  CHECK(ExtractTokens("at src/a.py:12", "path") == Strings{"src/a.py"});
}

TEST_CASE(
    "a token is grounded only by the same whole token: #4 vs #41, ABC-12 vs ABC-123, a "
    "longer hash vs its prefix") {
  CHECK(GroundingReasons(GroundDefault("see #4", "see #41")) ==
        Strings{"ref not in evidence: #4 (line 1:5; evidence has #41)"});
  CHECK(GroundingReasons(GroundDefault("see ABC-12", "see ABC-123")) ==
        Strings{"ref not in evidence: ABC-12 (line 1:5; evidence has ABC-123)"});
  // A hash prefix is grounded by the longer hash (issue 9), the longer one not by the prefix.
  CHECK(GroundDefault("commit 3f2a9c1", "commit 3f2a9c1d4e5b").grounded);
  CHECK(GroundingReasons(GroundDefault("commit 3f2a9c1d4e5b", "commit 3f2a9c1")) ==
        Strings{"hash not in evidence: 3f2a9c1d4e5b (line 1:8)"});
  CHECK(GroundingReasons(GroundDefault("on 2026-09-01", "on 12026-09-012")) ==
        Strings{"date not in evidence: 2026-09-01 (line 1:4)"});
  CHECK(GroundingReasons(GroundDefault("https://x.org/a", "https://x.org/a/b")) ==
        Strings{"url not in evidence: https://x.org/a (line 1:1; evidence has https://x.org/a/b)"});
}

TEST_CASE("UTF-8, SHA-256, ISO-8601 and COVID-19 are not ticket refs") {
  CHECK(ExtractTokens("UTF-8 text hashed with SHA-256, dates in ISO-8601, COVID-19 era", "ref")
            .empty());
  CHECK(GroundDefault("Encoded as UTF-8, hashed with SHA-256 (ISO-8601 dates, COVID-19).", "")
            .grounded);
}

TEST_CASE("ticket refs: #123 and ABC-123 as whole words only") {
  CHECK(ExtractTokens("#123, (#7) PROJ-1 A1-2 X-9 abc-12 ABCd-1 PROJ-1a page#5 &#38; #x a-PROJ-3",
                      "ref") == Strings{"#123", "#7", "PROJ-1", "A1-2"});
}

TEST_CASE("defaced and 1234567890 are not hashes") {
  CHECK(ExtractTokens("defaced effaced added 1234567890 abc123 deadbeef1_x", "hash").empty());
  CHECK(GroundDefault("The page was defaced; ticket count 1234567890.", "").grounded);
  CHECK(ExtractTokens("a1b2c3d 0123456789abcdef0123456789abcdef01234567 "
                      "0123456789abcdef0123456789abcdef012345678",
                      "hash") == Strings{"a1b2c3d", "0123456789abcdef0123456789abcdef01234567"});
}

TEST_CASE("dates are YYYY-MM-DD, also at the start of a timestamp") {
  CHECK(ExtractTokens("2026-09-16T08:00:00.000Z, (2026-01-02), 2026-1-2, 2026-01-022", "date") ==
        Strings{"2026-09-16", "2026-01-02"});
}

TEST_CASE("a written date that starts at the day of an ISO date grounds on the same text") {
  // Fuzz find (evidence): the evidence side took 2026-02-24 and went on past its day, so the
  // claim's 24/09/2026 (or 24 Sept 2026) in the same text was never seen there.
  for (GroundingMode mode : {GroundingMode::kStrict, GroundingMode::kCompat}) {
    for (const char* text : {"2026-02-24/09/2026", "2026-02-24 Sept 2026", "x 2026-02-24 y"}) {
      CAPTURE(text);
      CHECK(Ground(text, {text}, {"date", "date-text"}, mode).ungrounded.empty());
    }
  }
  CHECK(ExtractTokens("2026-02-24/09/2026", "date-text") == Strings{"24/09/2026"});
  CHECK_FALSE(Ground("2026-02-24/09/2026", {"2026-02-24"}, {"date-text"}).grounded);
}

TEST_CASE("ungrounded tokens are unique and sorted within a kind, kinds in the order given") {
  const GroundingResult r = Ground("#9 #3 #9 2026-01-01 #5", {"nothing"}, {"ref", "date"});
  CHECK(KindTokens(r) ==
        Pairs{{"ref", "#3"}, {"ref", "#5"}, {"ref", "#9"}, {"date", "2026-01-01"}});
  CHECK(r.checked == 4);
}

TEST_CASE("evidence tokens are gathered from every evidence text") {
  CHECK(Ground("#1 #2", {"#1", "#2"}, {"ref"}).grounded);
}

TEST_CASE("ParseTokenKinds accepts known kinds and names an unknown one") {
  const auto kinds = ParseTokenKinds(" date, url ,date,number");
  REQUIRE(kinds.ok());
  CHECK(*kinds == Strings{"date", "url", "number"});
  const auto bad = ParseTokenKinds("date,email");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == "usage");
  CHECK(bad.status().message() ==
        "unknown token kind \"email\"; use date, url, ref, hash, path, number or date-text");
  CHECK_FALSE(ParseTokenKinds(" , ").ok());
}

}  // namespace devflow

// The one-pass evidence scanner (issue 11 item 4): one table-driven pass finds exactly the
// dates, URLs, refs and hashes that each kind's own scanner finds — on literal cases, and on
// thousands of random texts built from the shapes the rules care about (word boundaries,
// non-ASCII word and non-word characters, ill-formed bytes, UUIDs, marked decimal hashes,
// qualified refs, URLs with closers).
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "checker/grounding.h"

namespace devflow {
namespace {

using Tokens = std::vector<std::string>;

void CheckSameAsEachKind(const std::string& text) {
  const auto one_pass = ExtractDefaultTokensOnePass(text);
  const char* kinds[] = {"date", "url", "ref", "hash"};
  for (size_t k = 0; k < 4; ++k) {
    INFO("kind " << kinds[k] << " in " << text);
    CHECK(one_pass[k] == ExtractTokens(text, kinds[k]));
  }
}

TEST_CASE("one pass: literal tokens of each kind, in text order") {
  const std::string text =
      "Fixed #12 (GH-7, ABC-123, UTF-8) on 2026-09-16T08:00:00Z by 0126cff and commit 2506700; "
      "see https://x.org/a_(b)). UUID 123e4567-e89b-12d3-a456-426614174000, é#3, —2026-09-17, "
      "rust-lang/regex#15 and CVE-2026-25645.";
  const auto tokens = ExtractDefaultTokensOnePass(text);
  CHECK(tokens[0] == Tokens{"2026-09-16", "2026-09-17"});
  CHECK(tokens[1] == Tokens{"https://x.org/a_(b)"});
  CHECK(tokens[2] == Tokens{"#12", "GH-7", "ABC-123", "rust-lang/regex#15", "CVE-2026-25645"});
  CHECK(tokens[3] == Tokens{"0126cff", "2506700"});
  CheckSameAsEachKind(text);
}

TEST_CASE("one pass: the same tokens as each kind's scanner on random texts") {
  const std::vector<std::string> pieces = {"#12",
                                           "#1",
                                           "##4",
                                           "&#12",
                                           "a#12",
                                           "GH-12",
                                           "PR#12",
                                           "gh#3",
                                           "regex#12",
                                           "o/r#16",
                                           "x/#2",
                                           "ABC-12",
                                           "ABC-123x",
                                           "-ABC-1",
                                           "UTF-8",
                                           "SHA-256",
                                           "CVE-2026-25645",
                                           "CVE-2026-",
                                           "CVE-26-1",
                                           "2026-09-16",
                                           "12026-09-16",
                                           "2026-09-166",
                                           "2026-9-16",
                                           "0126cff",
                                           "0126CFF9",
                                           "cafe_123",
                                           "abcdef1",
                                           "1234567890",
                                           "2506700",
                                           "commit ",
                                           "Commit: ",
                                           "commit  \t",
                                           "/commit/",
                                           "[2506700](https://github.com/o/r/commit/2506700)",
                                           "deadbeef-1234-5678-9abc-def012345678",
                                           "deadbeef-1234-5678-9abc-def012345678-",
                                           "https://",
                                           "http://a.b/c?d=e&f#g",
                                           "HTTPS://X.ORG/",
                                           "(https://x.org/a).",
                                           "https://en.wikipedia.org/wiki/Foo_(bar)",
                                           "[https://x.org/]",
                                           "hhttps://z.org",
                                           "h",
                                           "H",
                                           "P",
                                           "C",
                                           "Hello",
                                           "é",
                                           "É1",
                                           "ß",
                                           "中",
                                           "—",
                                           "“",
                                           "”",
                                           "\xC2\xA0",
                                           "\xF0\x9F\x98\x80",
                                           "\xEF\xBB\xBF",
                                           "\xC3",
                                           "\x80",
                                           "\xE2\x82",
                                           "\xFF",
                                           "\xED\xA0\x80",
                                           "_",
                                           "-",
                                           "/",
                                           ".",
                                           ",",
                                           ":",
                                           "(",
                                           ")",
                                           "[",
                                           "]",
                                           "&",
                                           "<",
                                           "\"",
                                           "`",
                                           "'",
                                           "x",
                                           "word",
                                           "\n",
                                           " ",
                                           " ",
                                           " ",
                                           "\t"};
  std::mt19937 rng(11);
  for (int round = 0; round < 4000; ++round) {
    std::string text;
    const size_t n = 1 + rng() % 24;
    for (size_t k = 0; k < n; ++k) text += pieces[rng() % pieces.size()];
    CheckSameAsEachKind(text);
  }
}

}  // namespace
}  // namespace devflow

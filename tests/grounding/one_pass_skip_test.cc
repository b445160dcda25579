// The skipping one-pass scanner (issue 11 item 4): Ground's scanner jumps over the bytes where
// no token can start or matter (32 at a time with AVX2, 16 with SSE2) and runs the per-word step
// only around the others, the hot bytes. Whatever it skips, it must call the sinks exactly as the
// per-word step run at every position (the reference) does: the same kinds, tokens and offsets, in
// the same order — on every byte value, random bytes, real documents, tokens at every offset of a
// 16- and 32-byte block and cut off at every buffer end, for every set of sinks.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "checker/grounding.h"

namespace devflow {
namespace {

constexpr unsigned kAllSinks = 31;  // date, url, ref, hash, form
constexpr unsigned kClaimSinks = 15;

std::string Escaped(std::string_view text) {
  std::ostringstream out;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7F && c != '\\') {
      out << c;
    } else {
      static const char* kHex = "0123456789abcdef";
      out << "\\x" << kHex[b >> 4] << kHex[b & 15];
    }
  }
  return out.str();
}

std::string Shown(const std::vector<OnePassEvent>& events) {
  std::ostringstream out;
  for (const OnePassEvent& e : events) out << e.kind << ":" << e.token << "@" << e.offset << " ";
  return out.str();
}

// Every skipping scanner (the one Ground runs: AVX2 where the CPU has it; SSE2; scalar skip)
// calls the sinks as the reference does. Returns whether they did, so loops can stop at the
// first failing text.
bool SameAsReference(std::string_view text, unsigned kinds = kAllSinks, bool evidence = true) {
  const auto want = OnePassEventsForTesting(text, kinds, evidence, OnePassScanner::kReference);
  bool same = true;
  for (const OnePassScanner scanner : {OnePassScanner::kSkipping, OnePassScanner::kSkippingSse2,
                                       OnePassScanner::kSkippingScalar}) {
    const auto got = OnePassEventsForTesting(text, kinds, evidence, scanner);
    INFO("text \"" << Escaped(text) << "\" (" << text.size() << " bytes), sinks " << kinds
                   << (evidence ? ", evidence" : ", claim") << ", "
                   << (scanner == OnePassScanner::kSkipping       ? "Ground's skip"
                       : scanner == OnePassScanner::kSkippingSse2 ? "SSE2 skip"
                                                                  : "scalar skip"));
    INFO("reference: " << Shown(want));
    INFO("skipping:  " << Shown(got));
    CHECK(got == want);
    same = same && got == want;
  }
  return same;
}

// Tokens of every kind and the near misses around each hot-byte rule.
const std::vector<std::string>& Pieces() {
  static const std::vector<std::string> pieces = {
      "#12",
      "##4",
      "&#12",
      "a#12",
      "regex#12",
      "o/r#16",
      "PR#12",
      "gh#3",
      "GH-12",
      "ABC-12",
      "ABC-123x",
      "-ABC-1",
      "Ab-1",
      "A1-2",
      "UTF-8",
      "CVE-2026-25645",
      "cve_2026_25645",
      "CVE 2026 1",
      "Cve-2026-7",
      "cv",
      "pr 12",
      "PR #7",
      "Pr  #7",
      "pull request 9",
      "Pull request #9",
      "pu",
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
      "/commit/",
      "[2506700](https://github.com/o/r/commit/2506700)",
      "deadbeef-1234-5678-9abc-def012345678",
      "deadbeef-dead-beef-dead-beef01234567",
      "DEADBEEF-DEAD-BEEF-DEAD-BEEF01234567",
      "deadbeef-",
      "deadbee-1234-5678-9abc-def012345678",
      "https://",
      "http://a.b/c?d=e&f#g",
      "HTTPS://X.ORG/",
      "Http://y.org/2026-01-02",
      "(https://x.org/a).",
      "https://en.wikipedia.org/wiki/Foo_(bar)",
      "hhttps://z.org",
      "ht",
      "h",
      "H",
      "P",
      "C",
      "The",
      "JSON",
      "McDonald",
      "é",
      "É1",
      "中",
      "—",
      "“",
      "”",
      "\xC2\xA0",
      "\xF0\x9F\x98\x80",
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
      "\"",
      "'",
      "x",
      "word",
      "\n",
      " ",
      " ",
      "\t",
      std::string(1, '\0')};
  return pieces;
}

std::string RandomPieces(std::mt19937& rng, size_t count) {
  const auto& pieces = Pieces();
  std::string text;
  for (size_t k = 0; k < count; ++k) {
    text += pieces[rng() % pieces.size()];
  }
  return text;
}

TEST_CASE("skipping one pass: literal tokens of each hot-byte rule, as the reference finds them") {
  struct Case {
    const char* rule;
    std::string text;
    std::vector<OnePassEvent> events;
  };
  const size_t npos = std::string_view::npos;
  const std::vector<Case> cases = {
      {"'#' starts a ref", "see    #12 now", {{"ref", "#12", 7}}},
      {"a digit inside a word makes it a hash",
       "the abc1234def build",
       {{"hash", "abc1234def", 4}}},
      {"a digit starts a date", "on 2026-09-16.", {{"date", "2026-09-16", 3}}},
      {"'-' after a digitless first group makes a UUID, whose last group is no hash",
       "id deadbeef-dead-beef-dead-beef01234567 ok",
       {}},
      {"an uppercase letter before another starts a ref",
       "fix ABC-123 now",
       {{"ref", "ABC-123", 4}}},
      {"h before t starts a URL", "at http://x.org/a, ok", {{"url", "http://x.org/a", 3}}},
      {"p before r starts `PR N`", "in pr 12 done", {{"form", "#12", npos}}},
      {"p before u starts `pull request N`", "in pull request 7", {{"form", "#7", npos}}},
      {"c before v starts a CVE spelling",
       "fixes cve 2026 1234",
       {{"form", "CVE-2026-1234", npos}}},
      {"a letter after an ASCII word character starts nothing", "xhttp://x.org xpr 1 xABC-1", {}},
      {"a non-ASCII word character before a letter ends its word start", "éhttp://x.org", {}},
      {"a non-ASCII non-word character before a letter leaves it a word start",
       "“http://x.org”",
       {{"url", "http://x.org", 3}}},
  };
  for (const Case& c : cases) {
    INFO(c.rule);
    const auto got = OnePassEventsForTesting(c.text, kAllSinks, true, OnePassScanner::kSkipping);
    INFO("got: " << Shown(got));
    CHECK(got == c.events);
    CHECK(SameAsReference(c.text));
  }
}

TEST_CASE("skipping one pass: empty, every 1-byte and every 2-byte buffer") {
  CHECK(SameAsReference(""));
  CHECK(OnePassEventsForTesting("", kAllSinks, true, OnePassScanner::kSkipping).empty());
  for (int a = 0; a < 256; ++a) {
    const std::string one(1, static_cast<char>(a));
    if (!SameAsReference(one)) break;
  }
  bool same = true;
  for (int a = 0; a < 256 && same; ++a) {
    for (int b = 0; b < 256 && same; ++b) {
      same = SameAsReference(std::string{static_cast<char>(a), static_cast<char>(b)});
    }
  }
}

TEST_CASE("skipping one pass: random bytes, uniform and from the bytes the rules care about") {
  std::mt19937 rng(20261203);
  // Bytes around every rule: digits, hex letters, the letters that start tokens and those
  // after them, '#', '-', '&', '_', '/', ':', spaces, and non-ASCII lead and continuation bytes.
  const std::string biased =
      "0123456789abcdefABCDEFhtpPrRuUcCvVeEsSxX#-&_/:.[]() \n\t\x80\xC3\xA9\xE2\x80\x9C\xFF";
  bool same = true;
  for (int round = 0; round < 3000 && same; ++round) {
    const size_t n = rng() % 97;
    std::string text(n, '\0');
    for (char& c : text) c = static_cast<char>(rng() & 0xFF);
    same = SameAsReference(text);
  }
  for (int round = 0; round < 6000 && same; ++round) {
    const size_t n = rng() % 130;
    std::string text(n, '\0');
    for (char& c : text) c = biased[rng() % biased.size()];
    same = SameAsReference(text) && SameAsReference(text, kClaimSinks, false);
  }
}

TEST_CASE("skipping one pass: random token texts with every set of sinks") {
  std::mt19937 rng(11);
  bool same = true;
  for (int round = 0; round < 1500 && same; ++round) {
    const std::string text = RandomPieces(rng, 1 + rng() % 40);
    const unsigned kinds = 1 + rng() % kAllSinks;
    same = SameAsReference(text, kinds, rng() % 2 == 0) && SameAsReference(text);
  }
}

TEST_CASE("skipping one pass: tokens at every offset of a 16- or 32-byte block, cut at every end") {
  std::mt19937 rng(16);
  bool same = true;
  for (int round = 0; round < 40 && same; ++round) {
    const std::string body = RandomPieces(rng, 12 + rng() % 12);
    // Every shift moves each token across every block boundary; the fillers keep the body a
    // separate word (' ') or glue it to a word before it ('z').
    for (const char filler : {' ', 'z', '-'}) {
      for (size_t shift = 0; shift < 80 && same; ++shift) {  // past a 32-byte block and more
        same = SameAsReference(std::string(shift, filler) + body);
      }
    }
    // Every buffer end: each prefix of the body as a buffer of its own (a token cut short, a
    // block cut short, the last bytes of a block at the end).
    for (size_t len = 0; len <= body.size() && same; ++len) {
      same = SameAsReference(std::string(body, 0, len));
    }
  }
  // Each token alone, shifted across a block, with a block's worth of text after it or none.
  for (const std::string& piece : Pieces()) {
    for (size_t shift = 0; shift < 65 && same; ++shift) {
      const std::string lead(shift, ' ');
      same = SameAsReference(lead + piece) && SameAsReference(lead + piece + " and more text") &&
             SameAsReference(lead + "x" + piece + std::string(20, 'y'));
    }
  }
}

TEST_CASE("skipping one pass: UTF-8 sequences split at every 16- and 32-byte boundary") {
  // Valid 2-, 3- and 4-byte characters (word and non-word), truncated and invalid sequences, a
  // surrogate, NUL: each placed so that every one of its bytes in turn is the last byte of a
  // 16-byte (SSE2) or 32-byte (AVX2) block (the skip loads its block from where the scanner
  // stands, so the blocks start at the text's start here; AVX2 ends with 16-byte blocks), followed
  // at once by a token (the walk back over non-ASCII bytes to the position the per-word loop
  // visits) and preceded by a word or a space.
  const std::vector<std::string> sequences = {
      "\xC3\xA9",     "\xE4\xB8\xAD", "\xE2\x80\x9C", "\xC2\xA0",          "\xF0\x9F\x98\x80",
      "\xC3",         "\xE2\x82",     "\xF0\x9F\x98", "\x80\x80",          "\xFF\xFE",
      "\xED\xA0\x80", "\xC0\xAF",     "\xE0\x80\xAF", std::string(1, '\0')};
  const std::vector<std::string> tokens = {
      "http://x.org/a", "ABC-12", "#12",        "2026-09-16",
      "abc1234",        "pr 12",  "cve 2026 1", "deadbeef-dead-beef-dead-beef01234567"};
  bool same = true;
  for (const std::string& seq : sequences) {
    for (const std::string& token : tokens) {
      for (const std::string before : {"", " ", "x", "-"}) {
        for (size_t block : {16, 32}) {
          for (size_t cut = 0; cut <= seq.size() && same; ++cut) {
            // Bytes [0, cut) of `seq` end one block (offset `block`), the rest starts the next;
            // a tail makes the text long enough for a 32-byte block after it.
            const std::string lead = before + seq.substr(0, cut);
            const std::string pad(lead.size() <= block ? block - lead.size() : 0, ' ');
            const std::string text = pad + lead + seq.substr(cut) + token + " " + seq + token;
            same = SameAsReference(text) && SameAsReference(text, kClaimSinks, false) &&
                   SameAsReference("q" + text) && SameAsReference(text.substr(0, block + 1)) &&
                   SameAsReference(text + std::string(40, ' ') + "x");
          }
        }
      }
    }
  }
  // One check that these texts find tokens at all: a URL after a non-word character (“).
  const std::string quoted = std::string(15, ' ') + "\xE2\x80\x9C" + "http://x.org/a";
  const auto events = OnePassEventsForTesting(quoted, kAllSinks, true, OnePassScanner::kSkipping);
  CHECK(events == std::vector<OnePassEvent>{{"url", "http://x.org/a", 18}});
}

TEST_CASE("skipping one pass: the project's documents, whole and in random windows") {
  namespace fs = std::filesystem;
  std::vector<std::string> docs;
  for (const auto& entry : fs::directory_iterator(fs::path(DG_SOURCE_DIR) / "docs")) {
    if (entry.path().extension() != ".md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    docs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  REQUIRE(docs.size() >= 5);
  std::mt19937 rng(5);
  bool same = true;
  for (const std::string& doc : docs) {
    same = same && SameAsReference(doc) && SameAsReference(doc, kClaimSinks, false);
    for (int window = 0; window < 200 && same; ++window) {
      const size_t at = rng() % doc.size();
      same = SameAsReference(std::string(doc, at, rng() % 300));
    }
  }
  // And the tokens the documents hold: some of every kind, so the check above compares work.
  size_t kinds_seen = 0;
  for (const char* kind : {"date", "url", "ref", "hash", "form"}) {
    for (const std::string& doc : docs) {
      const auto events = OnePassEventsForTesting(doc, kAllSinks, true, OnePassScanner::kSkipping);
      if (std::any_of(events.begin(), events.end(),
                      [&](const OnePassEvent& e) { return e.kind == kind; })) {
        ++kinds_seen;
        break;
      }
    }
  }
  CHECK(kinds_seen >= 4);
}

TEST_CASE("skipping one pass: a token count that needs no copies agrees with the reference") {
  std::mt19937 rng(7);
  const std::string text = RandomPieces(rng, 5000);
  const size_t want = CountOnePassTokensForTesting(text, OnePassScanner::kReference);
  CHECK(want > 500);
  CHECK(CountOnePassTokensForTesting(text, OnePassScanner::kSkipping) == want);
  CHECK(CountOnePassTokensForTesting(text, OnePassScanner::kSkippingSse2) == want);
  CHECK(CountOnePassTokensForTesting(text, OnePassScanner::kSkippingScalar) == want);
}

}  // namespace
}  // namespace devflow

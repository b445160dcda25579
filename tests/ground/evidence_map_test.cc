// Evidence read once, without a copy (issue 11 item 4): FileSystem::MapFile maps a regular file
// and fails exactly as ReadFile does for the same path; a decorating FileSystem keeps its
// faults; `ground` grounds mapped evidence (a BOM skipped in place, JSON converted).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "checker/ground_command.h"
#include "checker/grounding.h"
#include "host/os.h"
#include "host/utf8.h"
#include "support/support.h"

namespace devflow {
namespace {

using test::FaultyFileSystem;
using test::FixedClock;
using test::Spit;
using test::TempDir;

TEST_CASE("MapFile gives a regular file's bytes, and ReadFile's errors for the same paths") {
  TempDir tmp;
  FileSystem& fs = PosixFileSystem();
  const std::string file = tmp.path() + "/evidence.txt";
  std::string big(3 * 4096 + 17, 'x');
  big[0] = '#';
  big.back() = '\n';
  Spit(file, big);
  Result<FileBytes> mapped = fs.MapFile(file);
  REQUIRE(mapped.ok());
  CHECK(mapped->view() == big);

  FileBytes moved = std::move(*mapped);  // the mapping moves with its owner
  CHECK(moved.view() == big);
  CHECK(mapped->view().empty());

  Spit(tmp.path() + "/empty.txt", "");
  Result<FileBytes> empty = fs.MapFile(tmp.path() + "/empty.txt");
  REQUIRE(empty.ok());
  CHECK(empty->view().empty());

  for (const std::string& path : {tmp.path() + "/missing.txt", tmp.path()}) {
    Result<FileBytes> a = fs.MapFile(path);
    Result<std::string> b = fs.ReadFile(path);
    REQUIRE_FALSE(a.ok());
    REQUIRE_FALSE(b.ok());
    CHECK(a.status().code() == b.status().code());
    CHECK(a.status().message() == b.status().message());
  }
  const std::string fifo = tmp.path() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  Result<FileBytes> from_fifo = fs.MapFile(fifo);  // refused without blocking
  REQUIRE_FALSE(from_fifo.ok());
  CHECK(from_fifo.status().message() == "read " + fifo + ": not a regular file (EINVAL)");
}

TEST_CASE("MapFile through a decorating FileSystem keeps its read faults") {
  TempDir tmp;
  const std::string file = tmp.path() + "/evidence.txt";
  Spit(file, "commit 0126cff\n");
  FaultyFileSystem faulty;
  faulty.Fail("read", "evidence.txt", EIO);
  Result<FileBytes> mapped = faulty.MapFile(file);
  REQUIRE_FALSE(mapped.ok());
  CHECK(mapped.status().code() == "EIO");
}

TEST_CASE("ground grounds mapped evidence: text past its BOM, JSON by its values") {
  TempDir tmp;
  FixedClock clock;
  Spit(tmp.path() + "/claim.md", "Fixed in #12 on 2026-09-16.\n");
  Spit(tmp.path() + "/log.txt", "\xEF\xBB\xBF#12 merged\n");
  Spit(tmp.path() + "/dates.json", "{\"when\": \"2026-09-16\"}");
  std::ostringstream out, err;
  const int code =
      RunGroundCommand({"--claim", tmp.path() + "/claim.md", "--evidence", tmp.path() + "/log.txt",
                        "--evidence", tmp.path() + "/dates.json"},
                       out, err, PosixFileSystem(), clock);
  CHECK(code == 0);
  CHECK(out.str() == "Fixed in #12 on 2026-09-16.\n");
  CHECK(err.str() == "VERIFIED\n");

  Spit(tmp.path() + "/bad.txt", "ok\n\xC3(\n");
  std::ostringstream out2, err2;
  CHECK(
      RunGroundCommand({"--claim", tmp.path() + "/claim.md", "--evidence", tmp.path() + "/bad.txt"},
                       out2, err2, PosixFileSystem(), clock) == 2);
  CHECK(err2.str() ==
        "cannot read: " + tmp.path() + "/bad.txt: not valid UTF-8 (byte 0xc3 at offset 3)\n");
}

}  // namespace
}  // namespace devflow

namespace devflow {
namespace {

// The decoder's own walk, one step at a time: the reference FirstInvalidUtf8 must agree with.
size_t FirstInvalidByDecoder(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const Utf8Step step = DecodeUtf8At(s, i);
    if (!step.valid) return i;
    i += step.length;
  }
  return s.size();
}

TEST_CASE("FirstInvalidUtf8: the ASCII fast path finds a bad byte at every offset of a block") {
  const std::string bad[] = {"\x80",     "\xC3(", "\xE2\x82", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                             "\xC0\xAF", "\xFF"};
  // Offsets past two 32-byte steps, tails shorter and longer than one step.
  for (size_t at = 0; at < 80; ++at) {
    for (const std::string& b : bad) {
      const std::string s = std::string(at, 'a') + "\xC3\xA9" + b + std::string(9, 'z');
      CHECK(FirstInvalidUtf8(s) == FirstInvalidByDecoder(s));
      CHECK(FirstInvalidUtf8(s) == at + 2);
      const std::string bare = std::string(at, 'a') + b + std::string(40, 'z');
      CHECK(FirstInvalidUtf8(bare) == at);
      CHECK(FirstInvalidUtf8(bare) == FirstInvalidByDecoder(bare));
      const std::string good = std::string(at, 'a') + "\xE2\x82\xAC" + std::string(at, 'b');
      CHECK(FirstInvalidUtf8(good) == good.size());
      CHECK(IsValidUtf8(good));
      CHECK_FALSE(IsValidUtf8(s));
    }
  }
}

TEST_CASE("FirstInvalidUtf8EndFirst: the same offset as FirstInvalidUtf8, for every chunk size") {
  // Texts of ASCII, valid 2- to 4-byte characters, stray continuation bytes, truncated and
  // ill-formed sequences; chunks small enough to cut each of them at every byte.
  const std::vector<std::string> pieces = {"a",
                                           "b c",
                                           "\xC3\xA9",
                                           "\xE2\x82\xAC",
                                           "\xF0\x9F\x98\x80",
                                           "\x80",
                                           "\xBF\xBF",
                                           "\xC3",
                                           "\xE2\x82",
                                           "\xF0\x9F\x98",
                                           "\xED\xA0\x80",
                                           "\xC0\xAF",
                                           "\xFF",
                                           "\x80\x80\x80\x80"};
  std::mt19937 rng(8);
  for (int round = 0; round < 3000; ++round) {
    std::string s;
    const size_t parts = 1 + rng() % 24;
    // Half the texts well-formed but for at most one piece, so the bad byte lands anywhere.
    const bool clean = rng() % 2 == 0;
    for (size_t k = 0; k < parts; ++k) {
      const size_t pick = rng() % pieces.size();
      s += pieces[clean ? pick % 5 : pick];
    }
    if (clean && rng() % 2 == 0) s.insert(rng() % (s.size() + 1), pieces[5 + rng() % 9]);
    const size_t want = FirstInvalidUtf8(s);
    for (size_t chunk = 1; chunk <= s.size() + 1; ++chunk) {
      INFO("chunk " << chunk << ", " << s.size() << " bytes, round " << round);
      REQUIRE(FirstInvalidUtf8EndFirst(s, chunk) == want);
    }
  }
  CHECK(FirstInvalidUtf8EndFirst("", 4) == 0);
  CHECK(FirstInvalidUtf8EndFirst(std::string(100, 'a') + "\x80" + std::string(100, 'b'), 7) == 100);
}

// The UTF-8 check folded into the scan (issue 11 item 4): Ground reports, per evidence text, a
// prefix its scan found well-formed; the check of the rest must give FirstInvalidUtf8's offset.
// Texts of prose with hot bytes (numbers, refs, URLs, long tokens the per-word step reads past
// the skip's blocks), non-ASCII characters, and an ill-formed piece at every offset near 32- and
// 64-byte block bounds, or at random.
TEST_CASE(
    "Ground's scan checks the evidence's UTF-8 as it reads it: the rest gives the same first bad "
    "offset") {
  const std::vector<std::string> words = {
      "the ",
      "quick ",
      "brown ",
      "fox ",
      "over ",
      "12 ",
      "#4 ",
      "ABC-12 ",
      "2026-09-16 ",
      "deadbeef1 ",
      "http://example.org/a/very/long/path/that/goes/on/and/on/past/a/block ",
      "caf\xC3\xA9 ",
      "\xE2\x82\xAC"
      "5 ",
      "\xF0\x9F\x98\x80 ",
      "na\xC3\xAFve-",
      "pr 7 ",
      "0123456789abcdef0123456789abcdef0123456789 "};
  const std::vector<std::string> bad = {"\x80",         "\xC3",         "\xE2\x82",
                                        "\xF0\x9F\x98", "\xED\xA0\x80", "\xC0\xAF",
                                        "\xFF",         "\xC3(",        "\xE2\x82 "};
  // A claim token the evidence never holds: every text is scanned to its end.
  const std::string claim = "see #999999\n";
  const bool avx2 = __builtin_cpu_supports("avx2");
  std::mt19937 rng(11);
  size_t checked_most = 0, texts = 0;
  auto check = [&](const std::string& text) {
    const GroundingResult result = Ground(claim, {text}, {"date", "url", "ref", "hash"});
    REQUIRE(result.utf8_checked.size() == 1);
    const size_t checked = result.utf8_checked[0];
    INFO(texts << ": " << text.size() << " bytes, checked " << checked);
    REQUIRE(checked <= text.size());
    REQUIRE(FirstInvalidUtf8(text.substr(0, checked)) == checked);
    REQUIRE(checked + FirstInvalidUtf8(std::string_view(text).substr(checked)) ==
            FirstInvalidUtf8(text));
    if (checked + 64 >= text.size()) ++checked_most;
    ++texts;
  };
  for (int round = 0; round < 600; ++round) {
    std::string prose;
    const bool ascii = round % 3 == 0;
    while (prose.size() < 40 + rng() % 400) {
      const size_t pick = rng() % words.size();
      if (ascii && pick >= 11 && pick <= 14) continue;
      prose += words[pick];
    }
    check(prose);
    const std::string& piece = bad[rng() % bad.size()];
    for (size_t at : {size_t{31}, size_t{32}, size_t{33}, size_t{63}, size_t{64}, size_t{65},
                      static_cast<size_t>(rng() % (prose.size() + 1))}) {
      if (at > prose.size()) continue;
      std::string text = prose;
      text.insert(at, piece);
      check(text);
    }
  }
  // All ASCII, or well-formed, and long: the scan checks nearly all of it where it has AVX2.
  std::string long_text;
  while (long_text.size() < 100000) long_text += words[rng() % words.size()];
  check(long_text);
  if (avx2) CHECK(checked_most > texts / 4);
}

TEST_CASE("ground refuses ill-formed evidence the scan did not read to its end, in file order") {
  TempDir tmp;
  FixedClock clock;
  const std::string dir = tmp.path();
  Spit(dir + "/claim.md", "Fixed in #12.\n");
  Spit(dir + "/blank.md", " \n");
  // The bad byte far into a text the scan reads (late.txt), and in a second file the scan does
  // not read at all (#12 is found in the first: bom.txt after ok.txt).
  const std::string good = "#12 merged\n" + std::string(5000, 'x') + "\n";
  Spit(dir + "/late.txt", good + "tail \xE2\x82 here " + std::string(200, 'y') + " 42\n");
  Spit(dir + "/bom.txt", "\xEF\xBB\xBF" + good + "\xFF\n");
  Spit(dir + "/ok.txt", good);
  auto run = [&](std::vector<std::string> args) {
    std::ostringstream out, err;
    const int code = RunGroundCommand(args, out, err, PosixFileSystem(), clock);
    CHECK(out.str().empty());
    return std::make_pair(code, err.str());
  };
  const std::string late = "cannot read: " + dir +
                           "/late.txt: not valid UTF-8 (byte 0xe2 at offset " +
                           std::to_string(good.size() + 5) + ")\n";
  CHECK(run({"--claim", dir + "/claim.md", "--evidence", dir + "/late.txt"}) ==
        std::make_pair(2, late));
  CHECK(run({"--claim", dir + "/claim.md", "--evidence", dir + "/ok.txt", "--evidence",
             dir + "/bom.txt"}) ==
        std::make_pair(2, "cannot read: " + dir +
                              "/bom.txt: not valid UTF-8 (byte 0xff at offset " +
                              std::to_string(good.size() + 3) + ")\n"));
  // Nothing is grounded at all: a blank claim, or kinds the one-pass scan does not read.
  CHECK(run({"--claim", dir + "/blank.md", "--evidence", dir + "/late.txt"}) ==
        std::make_pair(2, late));
  CHECK(run({"--claim", dir + "/claim.md", "--kinds", "path", "--evidence", dir + "/late.txt"}) ==
        std::make_pair(2, late));
  // A later file's error does not hide an earlier file's ill-formed bytes.
  CHECK(run({"--claim", dir + "/claim.md", "--evidence", dir + "/late.txt", "--evidence",
             dir + "/missing.txt"}) == std::make_pair(2, late));
  Spit(dir + "/broken.json", "{\"a\": ");
  CHECK(run({"--claim", dir + "/claim.md", "--evidence", dir + "/late.txt", "--evidence",
             dir + "/broken.json"}) == std::make_pair(2, late));
  CHECK(run({"--claim", dir + "/claim.md", "--evidence", dir + "/late.txt", "--fallback",
             dir + "/missing.md"}) == std::make_pair(2, late));
  // And the later error still shows when the earlier files are well-formed.
  const auto missing = run({"--claim", dir + "/claim.md", "--evidence", dir + "/ok.txt",
                            "--evidence", dir + "/missing.txt"});
  CHECK(missing.first == 2);
  CHECK(missing.second.find("missing.txt") != std::string::npos);
  // A ledger gets no row for refused evidence.
  CHECK(run({"--claim", dir + "/claim.md", "--evidence", dir + "/late.txt", "--ledger",
             dir + "/ledger.jsonl"}) == std::make_pair(2, late));
  CHECK_FALSE(std::filesystem::exists(dir + "/ledger.jsonl"));
}

}  // namespace
}  // namespace devflow

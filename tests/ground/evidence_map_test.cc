// Evidence read once, without a copy (issue 11 item 4): FileSystem::MapFile maps a regular file
// and fails exactly as ReadFile does for the same path; a decorating FileSystem keeps its
// faults; `ground` grounds mapped evidence (a BOM skipped in place, JSON converted).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cerrno>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "checker/ground_command.h"
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

}  // namespace
}  // namespace devflow

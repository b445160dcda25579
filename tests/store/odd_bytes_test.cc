// Cards the TypeScript store reads must read here too (issue 10 items 2 and 5): its journal
// decode is readFile(…, 'utf8') (ill-formed bytes → U+FFFD), a `line.trim()` blank check and
// JSON.parse (lone surrogate escapes accepted); its trims are String#trim. Literal bytes.
#include <doctest/doctest.h>
#include <unistd.h>

#include <string>

#include "checker/verdict.h"
#include "host/journal.h"
#include "host/store.h"
#include "host/utf8.h"
#include "support/support.h"

using namespace devflow;
using devflow::test::FixedClock;
using devflow::test::Slurp;
using devflow::test::Spit;
using devflow::test::TempDir;

namespace {

const std::string kPath = "/r/tasks/0001-a/journal.jsonl";
const std::string kCreated =
    R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"}})"
    "\n";
const std::string kU00A0 = "\xC2\xA0";
const std::string kU3000 = "\xE3\x80\x80";
const std::string kFFFD = "\xEF\xBF\xBD";

// A transition whose single gate check carries `summary_json` (raw JSON string contents).
std::string Checked(const std::string& summary_json) {
  return R"({"rev":2,"at":"2026-09-16T08:00:01.000Z","type":"transition","from":"draft",)"
         R"("to":"designing","by":{"kind":"human"},"gate":{"checks":[{"by":{"kind":"agent"},)"
         R"("verdict":"allowed","summary":")" +
         summary_json + R"("}]}})" + "\n";
}

std::string SummaryOf(const std::string& journal) {
  auto state = FoldJournal(kPath, journal);
  REQUIRE(state.ok());
  REQUIRE(state->entries.size() == 2);
  const JournalEntry& moved = state->entries[1];
  REQUIRE(moved.gate);
  REQUIRE(moved.gate->checks.size() == 1);
  return moved.gate->checks[0].summary.value_or("");
}

}  // namespace

TEST_CASE("a journal line with a lone surrogate escape reads, the surrogate shown as U+FFFD") {
  // Upstream writes exactly this line when a checker's summary holds a lone surrogate:
  // JSON.stringify escapes it, and JSON.parse reads it back.
  CHECK(SummaryOf(kCreated + Checked(R"(half \ud800 pair)")) == "half " + kFFFD + " pair");
  CHECK(SummaryOf(kCreated + Checked(R"(\udfff)")) == kFFFD);
  CHECK(SummaryOf(kCreated + Checked(R"(\ud800\ud800\udc00)")) == kFFFD + "\xF0\x90\x80\x80");
  // A real pair stays one code point; an escaped backslash before `u` is text, not an escape.
  CHECK(SummaryOf(kCreated + Checked(R"(\ud83d\ude80)")) == "\xF0\x9F\x9A\x80");
  CHECK(SummaryOf(kCreated + Checked(R"(\\ud800)")) == "\\ud800");
}

TEST_CASE("a raw ill-formed byte in a journal string reads as U+FFFD") {
  CHECK(SummaryOf(kCreated + Checked("bad \xFF byte")) == "bad " + kFFFD + " byte");
  CHECK(SummaryOf(kCreated + Checked("cut \xE2\x82")) == "cut " + kFFFD);
  CHECK(SummaryOf(kCreated + Checked("\xED\xA0\x80")) == kFFFD + kFFFD + kFFFD);
}

TEST_CASE("a journal line of only JS white space is skipped like a blank line") {
  for (const std::string& blank : {kU00A0, kU3000, std::string("\xEF\xBB\xBF"),
                                   std::string(" \t\r"), kU00A0 + " " + kU3000 + "\xE2\x80\xA8"}) {
    CAPTURE(blank);
    auto state = FoldJournal(kPath, kCreated + blank + "\n" + Checked("ok"));
    REQUIRE(state.ok());
    CHECK(state->stage_revision == 2);
  }
  // A byte-order mark before JSON is not white space to JSON.parse.
  auto bom = FoldJournal(kPath, "\xEF\xBB\xBF" + kCreated);
  REQUIRE_FALSE(bom.ok());
  CHECK(bom.status().message() == kPath + ":1: invalid JSON: a byte-order mark starts the line");
}

TEST_CASE("a card whose journal holds odd bytes is read, never rewritten") {
  TempDir tmp;
  FixedClock clock;
  CollectedWarnings warnings;
  FileSystem& fs = RealFileSystem();
  Store store(tmp / ".devflow", fs, clock, warnings);
  const std::string dir = tmp / ".devflow/tasks/0001-odd";
  REQUIRE(fs.CreateDirs(dir).ok());
  const std::string journal =
      kCreated + kU00A0 + "\n" + Checked(R"(lone \ud800 and raw )" + std::string("\xFF"));
  Spit(dir + "/journal.jsonl", journal);
  Spit(dir + "/card.md", "---\ntitle: Odd \xFF title\nstage: designing\nstageRevision: 2\n---\n\n" +
                             kU3000 + "Body \xFE." + kU00A0 + "\n");
  auto card = store.Read("0001-odd");
  REQUIRE(card.ok());
  CHECK(card->stage == Location::kDesigning);
  CHECK(card->title == "Odd " + kFFFD + " title");
  CHECK(card->body == "Body " + kFFFD + ".");
  CHECK(card->entries[1].gate->checks[0].summary == "lone " + kFFFD + " and raw " + kFFFD);
  CHECK(Slurp(dir + "/journal.jsonl") == journal);
}

TEST_CASE("a verdict whose summary holds a lone surrogate escape is a verdict, as upstream's") {
  auto verdict = DecodeVerdictBlock(R"({"verdict": "allow", "summary": "ok \ud800"})");
  REQUIRE(verdict);
  CHECK(verdict->summary == "ok " + kFFFD);
  // What we then write: the journal line carries U+FFFD (upstream writes the escape `\ud800`;
  // docs/decisions.md), the report the same U+FFFD bytes upstream's writeFile produces.
  JournalEntry e;
  e.rev = 2;
  e.at = "2026-09-16T08:00:01.000Z";
  e.type = EntryType::kTransition;
  e.from = Location::kDraft;
  e.to = Location::kDesigning;
  e.by = Actor{"human", std::nullopt, std::nullopt};
  e.gate =
      Gate{std::nullopt, {GateCheck{Actor{"agent", std::nullopt, std::nullopt}, verdict->summary}}};
  CHECK(EncodeJournalLine(e) + "\n" == Checked("ok " + kFFFD));
}

TEST_CASE("titles and bodies are trimmed with JavaScript's String#trim") {
  CHECK(JsTrim(kU3000 + kU00A0 + "\xEF\xBB\xBF" + " x y \t\xE2\x80\xA9\xE1\x9A\x80") == "x y");
  CHECK(JsTrim(kU3000).empty());
  CHECK(JsTrim("\xFF ").size() == 1);  // an ill-formed byte is U+FFFD upstream, not space
  CHECK(JsTrim("\xC2\x85x\xC2\x85") == "\xC2\x85x\xC2\x85");  // NEL is not JS white space

  TempDir tmp;
  FixedClock clock;
  CollectedWarnings warnings;
  FileSystem& fs = RealFileSystem();
  Store store(tmp / ".devflow", fs, clock, warnings);
  CreateRequest blank;
  blank.title = kU3000 + kU00A0;
  auto refused = store.Create(blank);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == "empty-title");
  CreateRequest r;
  r.title = "Login";
  r.body = kU3000 + "Build it." + kU00A0 + "\n";
  auto card = store.Create(r);
  REQUIRE(card.ok());
  CHECK(card->body == "Build it.");
  CHECK(Slurp(card->path) ==
        "---\ntitle: Login\nstage: draft\nstageRevision: 1\n---\n\nBuild it.\n");
}

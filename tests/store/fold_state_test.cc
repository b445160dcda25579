// A move folds its card's journal once before the waterfall, keeping only the state
// (FoldKeeps::kState: no entry per line), and under the commit lock folds only the bytes
// appended since (issue 11 item 1). The state-only fold decodes a store-shaped line into views
// of the journal's bytes; it must yield what the entry-keeping fold yields, refuse what it
// refuses with the same message, and the commit must fall back to a whole fold whenever the
// journal changed other than by an append.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/journal.h"
#include "host/os.h"
#include "host/store.h"
#include "support/support.h"

using namespace devflow;
using devflow::test::FixedClock;
using devflow::test::Slurp;
using devflow::test::Spit;
using devflow::test::TempDir;

namespace {

const Actor kHuman{"human", std::nullopt, std::nullopt};
const std::string kPath = "/r/tasks/0001-a/journal.jsonl";

// Everything a fold yields but its entries, or its refusal.
std::string Folded(const Result<CardState>& s) {
  if (!s.ok()) return s.status().code() + " " + s.status().message();
  std::string out =
      "ok " + std::string(LocationName(s->stage)) + " " + std::to_string(s->stage_revision) +
      " blocked_from=" + (s->blocked_from ? std::string(LocationName(*s->blocked_from)) : "-") +
      " parent=" + s->parent.value_or("-") +
      " class=" + std::string(ServiceClassName(s->service_class)) +
      (s->abandoned ? " abandoned" : "") + (s->archived ? " archived" : "") +
      " created=" + s->created_at + " updated=" + s->updated_at;
  for (const ArtifactRecord& a : s->artifact_records) {
    out += " [" + std::string(a.path) + "|" + std::string(a.kind.value_or("-")) + "|" +
           std::to_string(a.rev) + "|" + std::string(LocationName(a.stage)) + "]";
  }
  return out;
}

// The state-only fold of `content` against the entry-keeping one: same state, same refusal.
void CheckSameFold(const std::string& content) {
  CAPTURE(content);
  auto kept = FoldJournal(kPath, content, FoldKeeps::kEntries);
  auto state = FoldJournal(kPath, content, FoldKeeps::kState);
  CHECK(Folded(state) == Folded(kept));
  if (state.ok()) {
    CHECK(state->entries.empty());
    CHECK(state->keeps == FoldKeeps::kState);
  }
}

}  // namespace

TEST_CASE("a fold that keeps only the state folds and refuses every line as the full fold does") {
  const std::string created =
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human","name":"ann"}})";
  // Every shape the stores write (each in a journal where it can fold), and lines around them.
  const std::vector<std::string> shaped = {
      R"({"rev":2,"at":"x","type":"transition","from":"draft","to":"designing","by":{"kind":"agent","session":"s1"},"reason":"why","gate":{"approvedBy":{"kind":"human"},"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"ok"},{"by":{"kind":"command","name":"c"},"verdict":"allowed"}]}})",
      R"({"rev":2,"at":"x","type":"transition","from":"draft","to":"blocked","gate":{"approvedBy":{"kind":"human","name":"h"}}})",
      R"({"rev":2,"at":"x","type":"artifact","path":"artifacts/2-prd.md","stage":"designing","by":{"kind":"agent","session":"bench-3"},"kind":"prd"})",
      R"({"rev":2,"at":"x","type":"artifact","path":"p, {q}: r","stage":"done"})",
      R"({"rev":2,"at":"x","type":"abandoned","by":{"kind":"command","name":"c"},"reason":" gone "})",
      R"({"rev":2,"at":"x","type":"archived","by":{"kind":"human"},"reason":"old"})",
      R"({"rev":2,"at":"x","type":"restored","by":{"kind":"agent"}})",
      R"({"rev":2,"at":"x","type":"claim-expired","previousOwner":{"kind":"agent","session":"old"},"by":{"kind":"command","name":"sweeper"}})",
      R"({"rev":2,"at":"x","type":"created","by":{"kind":"human"}})",
  };
  CheckSameFold(created + "\n");
  CheckSameFold(
      R"({"rev":1,"at":"x","type":"created","by":{"kind":"command"},"parent":"0001-a","serviceClass":"express"})"
      "\n");
  size_t variants = 0;
  for (const std::string& line : shaped) {
    // Near misses of the second line: every prefix, every byte dropped or replaced by one that
    // matters to JSON or to the line's end. Each folds (or is refused) as the full fold does.
    for (size_t i = 0; i < line.size(); ++i) {
      std::vector<std::string> near = {line.substr(0, i), line.substr(0, i) + line.substr(i + 1)};
      for (char c : std::string(" \"0{}[],:aZ-\r\n\t\x7f\xc3\\\x01")) {
        std::string v = line;
        v[i] = c;
        near.push_back(v);
      }
      for (const std::string& v : near) {
        ++variants;
        CheckSameFold(created + "\n" + v + "\n");
        CheckSameFold(created + "\n" + v);  // no final newline
      }
    }
    CheckSameFold(created + "\r\n" + line + "\r\n");
    CheckSameFold(created + "\n" + line + " \n");
    CheckSameFold(created + "\n\n  \n" + line + "\n\n");
  }
  CHECK(variants > 10000);
  CheckSameFold("");
  CheckSameFold("\n\n");
}

TEST_CASE("a state-only fold of a long journal equals the full fold, whole and in parts") {
  // Artifact records, a park and its recovery every 7 lines, lines the general decoder reads
  // (an escape) among the store-shaped ones, blank lines: the tail fold of a state-only fold
  // at any split is the whole fold's state.
  std::string content =
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"}})"
      "\n"
      R"({"rev":2,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"draft","to":"designing"})"
      "\n";
  std::vector<size_t> starts = {0, content.find('\n') + 1};
  for (int rev = 3; rev <= 2000; ++rev) {
    const std::string r = std::to_string(rev);
    std::string line =
        rev % 7 == 0
            ? R"({"rev":)" + r + R"(,"at":"t)" + r + R"(","type":"transition","from":")" +
                  (rev % 14 == 0 ? "blocked" : "designing") + R"(","to":")" +
                  (rev % 14 == 0 ? "designing" : "blocked") + R"(","reason":"r)" + r + R"("})"
            : R"({"rev":)" + r + R"(,"at":"t)" + r + R"(","type":"artifact","path":"artifacts/)" +
                  r + R"(-prd.md","stage":"designing","kind":")" +
                  (rev % 5 == 0 ? "\\u0070rd" : "prd") + R"("})";
    starts.push_back(content.size());
    content += line + (rev % 100 == 0 ? "\n\n" : "\n");
  }
  auto whole = FoldJournal(kPath, content, FoldKeeps::kEntries);
  REQUIRE(whole.ok());
  CHECK(whole->artifact_records.size() > 1500);
  CheckSameFold(content);
  for (size_t split : {size_t{1}, size_t{2}, size_t{999}, size_t{1999}}) {
    CAPTURE(split);
    auto state = FoldJournal(kPath, content.substr(0, starts[split]), FoldKeeps::kState);
    REQUIRE(state.ok());
    REQUIRE(FoldJournalFrom(kPath, content, starts[split], *state).ok());
    CHECK(state->entries.empty());
    CHECK(Folded(*state) == Folded(*whole));
  }
  // A gap at line 1500 of the file: the same message from the whole and from a tail fold.
  const size_t at = starts[1499];
  const std::string gap = content.substr(0, at) +
                          R"({"rev":1501,"at":"x","type":"archived","by":{"kind":"human"}})" +
                          content.substr(content.find('\n', at));
  auto refused = FoldJournal(kPath, gap, FoldKeeps::kEntries);
  REQUIRE_FALSE(refused.ok());
  CheckSameFold(gap);
  auto state = FoldJournal(kPath, gap.substr(0, starts[1000]), FoldKeeps::kState);
  REQUIRE(state.ok());
  CHECK(FoldJournalFrom(kPath, gap, starts[1000], *state).message() == refused.status().message());
  CHECK(state->stage_revision == 1499);
  // What a refused tail fold leaves is the fold of the lines before the refused one, as the
  // entry-keeping fold leaves it (its last `at` included).
  auto kept = FoldJournal(kPath, gap.substr(0, starts[1000]), FoldKeeps::kEntries);
  REQUIRE(kept.ok());
  CHECK_FALSE(FoldJournalFrom(kPath, gap, starts[1000], *kept).ok());
  CHECK(state->updated_at == "t1499");
  CHECK(Folded(*state) == Folded(*kept));
}

TEST_CASE("ApplyEntry on a state-only fold folds the entry and keeps no entry") {
  auto state = FoldJournal(kPath,
                           R"({"rev":1,"at":"x","type":"created","by":{"kind":"human"}})"
                           "\n",
                           FoldKeeps::kState);
  REQUIRE(state.ok());
  JournalEntry next;
  next.rev = 2;
  next.at = "y";
  next.type = EntryType::kTransition;
  next.from = Location::kDraft;
  next.to = Location::kDesigning;
  REQUIRE(ApplyEntry(*state, next).ok());
  CHECK(state->stage == Location::kDesigning);
  CHECK(state->stage_revision == 2);
  CHECK(state->updated_at == "y");
  CHECK(state->entries.empty());
  next.rev = 4;  // a gap: refused, nothing changes
  CHECK_FALSE(ApplyEntry(*state, next).ok());
  CHECK(state->stage_revision == 2);
}

namespace {

struct Root {
  TempDir tmp;
  FixedClock clock;
  CollectedWarnings warnings;
  Store store{tmp / ".devflow", RealFileSystem(), clock, warnings};
  std::string id;
  std::string Journal() { return tmp / (".devflow/tasks/" + id + "/journal.jsonl"); }

  Root() {
    CreateRequest r;
    r.title = "One";
    auto card = store.Create(r);
    REQUIRE(card.ok());
    id = card->id;
    REQUIRE(store.CommitTransition(To(Location::kDraft, Location::kDesigning, 1)).ok());
  }
  TransitionCommit To(Location from, Location to, int64_t rev) {
    return TransitionCommit{id,           rev,          from,           to, kHuman,
                            std::nullopt, std::nullopt, clock.NowIso(), {}};
  }
  // The card as a move reads it before its waterfall, marked: its created_at is a value no
  // journal line holds, so a commit that still carries it folded only the appended lines onto
  // this fold, and one that does not folded the journal whole.
  Card Decided() {
    auto card = store.Read(id, FoldKeeps::kState);
    REQUIRE(card.ok());
    REQUIRE(card->journal);
    CHECK(card->entries.empty());
    CHECK(card->keeps == FoldKeeps::kState);
    card->created_at = "marked by the decision's fold";
    return *card;
  }
};

}  // namespace

TEST_CASE("a card read for a decision is the full read's card without its entries") {
  Root r;
  auto full = r.store.Read(r.id);
  auto decided = r.store.Read(r.id, FoldKeeps::kState);
  REQUIRE(full.ok());
  REQUIRE(decided.ok());
  CHECK(full->entries.size() == 2);
  CHECK(decided->entries.empty());
  CHECK(decided->stage == full->stage);
  CHECK(decided->stage_revision == full->stage_revision);
  CHECK(decided->created_at == full->created_at);
  CHECK(decided->updated_at == full->updated_at);
  CHECK(decided->artifact_records == full->artifact_records);
  CHECK(decided->title == full->title);
  CHECK(decided->journal->view() == full->journal->view());
}

TEST_CASE("the commit folds only what was appended since the decision's fold") {
  Root r;
  Card decided = r.Decided();

  SUBCASE("nothing appended: the decided fold is the commit's") {
    auto moved = r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), decided);
    REQUIRE(moved.ok());
    CHECK(moved->created_at == "marked by the decision's fold");
    CHECK(moved->stage == Location::kReady);
    CHECK(moved->stage_revision == 3);
    CHECK(moved->entries.empty());
    auto after = r.store.Read(r.id);
    REQUIRE(after.ok());
    CHECK(after->stage_revision == 3);
  }
  SUBCASE("another writer appended between the fold and the lock: its line is seen") {
    Store rival(r.tmp / ".devflow", RealFileSystem(), r.clock, r.warnings);
    ArtifactRequest add;
    add.id = r.id;
    add.expected_revision = 2;
    add.kind = "prd";
    add.content = "# PRD\n";
    REQUIRE(rival.AddArtifact(add).ok());
    // The move decided at revision 2 is refused: the appended line moved the revision.
    auto stale = r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), decided);
    CHECK(stale.status().code() == "revision-mismatch");
    CHECK(stale.status().message().find("moved to revision 3") != std::string::npos);
    CHECK(r.store.Read(r.id)->stage_revision == 3);
    // Handed the same (stale) fold with the new revision, the commit folds the rival's line
    // onto it: its artifact record is there, and the mark says nothing else was re-read.
    auto moved = r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 3), decided);
    REQUIRE(moved.ok());
    CHECK(moved->created_at == "marked by the decision's fold");
    CHECK(moved->stage_revision == 4);
    REQUIRE(moved->artifact_records.size() == 1);
    CHECK(moved->artifact_records[0].path == "artifacts/3-prd.md");
    CHECK(moved->artifact_records[0].rev == 3);
  }
}

TEST_CASE("a journal rewritten to the same size since the decision is folded whole") {
  Root r;
  Card decided = r.Decided();
  const std::string original = *Slurp(r.Journal());
  const std::string created_at = r.store.Read(r.id)->created_at;

  SUBCASE("an earlier line rewritten, same size, same last line: the file's state wins") {
    // The created line's timestamp changes one digit: still a journal that folds, the same
    // size, the same last line and revision; only a whole fold sees the new `at`.
    std::string forged = original;
    const size_t at = forged.find(created_at);
    REQUIRE(at < forged.find('\n'));
    std::string other = created_at;
    other[3] = other[3] == '9' ? '8' : '9';  // the year's last digit
    forged.replace(at, other.size(), other);
    REQUIRE(forged.size() == original.size());
    Spit(r.Journal(), forged);
    auto moved = r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), decided);
    REQUIRE(moved.ok());
    CHECK(moved->created_at == other);
    CHECK(moved->stage_revision == 3);
  }
  SUBCASE("an earlier line rewritten so it no longer decodes: refused, nothing appended") {
    std::string forged = original;
    forged.replace(forged.find("\"human\""), 7, "\"robot\"");
    REQUIRE(forged.size() == original.size());
    Spit(r.Journal(), forged);
    auto refused =
        r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), decided);
    CHECK(refused.status().code() == "corrupt");
    CHECK(refused.status().message().find("journal.jsonl:1: ") != std::string::npos);
    CHECK(*Slurp(r.Journal()) == forged);
  }
  SUBCASE("cut back and regrown to the same size: folded whole") {
    // The last line replaced by another of the same length (another `at`): the revision and
    // size are the decision's, the bytes are not.
    std::string forged = original;
    const size_t last = forged.rfind('\n', forged.size() - 2) + 1;
    const size_t t = forged.find("\"at\":\"", last) + 6;
    forged[t + 3] = forged[t + 3] == '9' ? '8' : '9';
    REQUIRE(forged.size() == original.size());
    Spit(r.Journal(), forged);
    auto moved = r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), decided);
    REQUIRE(moved.ok());
    CHECK(moved->created_at == created_at);  // re-read from the file, not the mark
  }
}

// Issue 11 item 1: the fold reserves its artifact records once, from the journal's size, so
// no record is moved by a regrowth while a 10,000-line journal is folded (~120 instructions a
// line). The bound rests on the shortest line that registers an artifact: 63 bytes with its
// line end.
TEST_CASE("a fold reserves room for every artifact record the journal can hold up front") {
  const std::string shortest = R"({"rev":2,"at":"t","type":"artifact","path":"x","stage":"done"})"
                               "\n";
  CHECK(shortest.size() == 63);
  std::string content =
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"}})"
      "\n" +
      shortest;
  for (FoldKeeps keeps : {FoldKeeps::kEntries, FoldKeeps::kState}) {
    auto state = FoldJournal(kPath, content, keeps);
    REQUIRE_MESSAGE(state.ok(), Folded(state));
    REQUIRE(state->artifact_records.size() == 1);
    CHECK(state->artifact_records[0].path == "x");
  }
  std::string shortest_lines = content;
  for (int rev = 3; rev <= 1000; ++rev) {
    shortest_lines += R"({"rev":)" + std::to_string(rev) +
                      R"(,"at":"t","type":"artifact","path":"x","stage":"done"})"
                      "\n";
  }
  content += R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"draft",)"
             R"("to":"designing"})"
             "\n";
  for (int rev = 4; rev <= 2000; ++rev) {
    content += R"({"rev":)" + std::to_string(rev) +
               R"(,"at":"2026-09-16T08:00:00.000Z","type":"artifact","path":"artifacts/)" +
               std::to_string(rev) +
               R"(-prd.md","stage":"designing","kind":"prd"})"
               "\n";
  }
  for (const std::string& journal : {shortest_lines, content}) {
    for (FoldKeeps keeps : {FoldKeeps::kEntries, FoldKeeps::kState}) {
      auto state = FoldJournal(kPath, journal, keeps);
      REQUIRE(state.ok());
      CHECK(state->artifact_records.capacity() >= journal.size() / 63);
      CHECK(state->artifact_records.capacity() >= state->artifact_records.size());
    }
  }
}

// Issue 11 item 1: the state-only fold decodes every store-shaped line into one reused view,
// clearing before each line only the fields the fold rules read and a line may leave out. A
// line without a field must not inherit it from the line before: an artifact without `kind`
// after one with it, a transition after an artifact (`path`, `stage`), a created line's
// `parent` and `serviceClass` never reaching a later line's fold. Fails if the `kind` clear
// is dropped; the other lines guard clears the store shape makes defensive today (it requires
// `from`, `to` and `stage` on their types, and the fold refuses a second created line).
TEST_CASE("a state-only fold takes no field of a line from the line before it") {
  const std::string head =
      R"({"rev":1,"at":"t1","type":"created","by":{"kind":"human"},"parent":"0001-p","serviceClass":"express"})"
      "\n"
      R"({"rev":2,"at":"t2","type":"transition","from":"draft","to":"designing"})"
      "\n"
      R"({"rev":3,"at":"t3","type":"artifact","path":"artifacts/3-prd.md","stage":"designing","kind":"prd"})"
      "\n"
      R"({"rev":4,"at":"t4","type":"artifact","path":"artifacts/4.md","stage":"designing"})"
      "\n";
  CheckSameFold(head);
  auto state = FoldJournal(kPath, head, FoldKeeps::kState);
  REQUIRE(state.ok());
  REQUIRE(state->artifact_records.size() == 2);
  CHECK(state->artifact_records[1].kind == std::nullopt);
  CHECK(state->artifact_records[1].path == "artifacts/4.md");
  // A transition lacks `from` after one that has it: refused as the full fold refuses it.
  CheckSameFold(head + R"({"rev":5,"at":"t5","type":"transition","to":"ready"})"
                       "\n");
  // An artifact lacks `stage` after one that has it: refused alike.
  CheckSameFold(head + R"({"rev":5,"at":"t5","type":"artifact","path":"artifacts/5.md"})"
                       "\n");
  // An artifact with an empty path after one with a path.
  CheckSameFold(head + R"({"rev":5,"at":"t5","type":"artifact","path":"","stage":"designing"})"
                       "\n");
  // A second created line carries no parent of the first into the state (refused anyway).
  CheckSameFold(head + R"({"rev":5,"at":"t5","type":"created","by":{"kind":"human"}})"
                       "\n");
}

// Issue 11 item 1: a record's path and kind are views, not strings of their own (an allocation
// and a free per artifact line was ~440 instructions a line of a move). A decision's fold over
// the journal's bytes (FoldJournal over FileBytes, FoldKeeps::kState) pins those bytes in the
// state and its store-shaped lines' records view them: the caller may drop its pointer, the
// records stay readable (ASan would see a use after free), and the bytes go with the state. A
// line the general decoder read, and a fold that keeps entries, copy their strings into the
// state's RecordBytes. Fails if the state does not pin the bytes, or if its records copy them.
namespace {

// Whether `part`'s bytes lie inside `whole`'s.
bool Within(std::string_view whole, std::string_view part) {
  const auto at = reinterpret_cast<uintptr_t>(part.data());
  const auto begin = reinterpret_cast<uintptr_t>(whole.data());
  return at >= begin && at + part.size() <= begin + whole.size();
}

}  // namespace

TEST_CASE("a decision's fold views the journal bytes it pins for as long as the state lives") {
  const std::string content =
      R"({"rev":1,"at":"t1","type":"created","by":{"kind":"human"}})"
      "\n"
      R"({"rev":2,"at":"t2","type":"artifact","path":"artifacts/2-prd.md","stage":"draft","kind":"prd"})"
      "\n"
      R"({"rev":3, "at":"t3","type":"artifact","path":"artifacts/3-\u0064esign.md","stage":"draft","kind":"design"})"
      "\n";
  auto bytes = std::make_shared<const FileBytes>(std::string(content));
  const std::weak_ptr<const FileBytes> weak = bytes;
  const std::string_view held = bytes->view();
  auto inside = [&](std::string_view s) { return Within(held, s); };
  {
    auto state = FoldJournal(kPath, bytes, FoldKeeps::kState);
    bytes.reset();
    REQUIRE_MESSAGE(state.ok(), Folded(state));
    CHECK_FALSE(weak.expired());  // pinned by the state alone
    CHECK(Folded(state) == Folded(FoldJournal(kPath, content, FoldKeeps::kEntries)));
    REQUIRE(state->artifact_records.size() == 2);
    const ArtifactRecord& shaped = state->artifact_records[0];
    CHECK(shaped.path == "artifacts/2-prd.md");
    CHECK(inside(shaped.path));  // a view of the journal's bytes, no copy
    REQUIRE(shaped.kind.has_value());
    CHECK(inside(*shaped.kind));
    const ArtifactRecord& general = state->artifact_records[1];  // whitespace, an escape
    CHECK(general.path == "artifacts/3-design.md");
    CHECK_FALSE(inside(general.path));  // decoded, so a copy
    // A copy of the state shares the pinned bytes; its records stay valid once the state goes.
    std::optional<CardState> copy = *state;
    state = Status::Error("corrupt", "gone");
    CHECK_FALSE(weak.expired());
    CHECK(copy->artifact_records[0].path == "artifacts/2-prd.md");
    CHECK(copy->artifact_records[1].path == "artifacts/3-design.md");
    copy.reset();
  }
  CHECK(weak.expired());  // nothing else held the bytes
  // A fold that keeps entries, and one of borrowed bytes, copy their records' strings.
  auto again = std::make_shared<const FileBytes>(std::string(content));
  auto entries = FoldJournal(kPath, again, FoldKeeps::kEntries);
  REQUIRE(entries.ok());
  CHECK_FALSE(Within(again->view(), entries->artifact_records[0].path));
  std::string borrowed = content;
  auto state = FoldJournal(kPath, borrowed, FoldKeeps::kState);
  REQUIRE(state.ok());
  borrowed.assign(borrowed.size(), 'x');
  CHECK(state->artifact_records[0].path == "artifacts/2-prd.md");
  CHECK(state->artifact_records[0].kind == "prd");
}

// A copy of a state shares the chunks its records' copied strings live in, so it must keep the
// strings of the records folded onto it later in chunks of its own: were both to write into
// the unused tail of one shared chunk, the second tail fold would overwrite the first's
// strings. Fails if copying RecordBytes keeps the free tail (copy construction and copy
// assignment alike).
TEST_CASE("states copied from one fold keep the strings of records folded later apart") {
  const std::string head =
      R"({"rev":1,"at":"t1","type":"created","by":{"kind":"human"}})"
      "\n"
      R"({"rev":2,"at":"t2","type":"artifact","path":"artifacts/2-prd.md","stage":"draft","kind":"prd"})"
      "\n";
  auto tail = [&](char letter) {
    return head + R"({"rev":3,"at":"t3","type":"artifact","path":"artifacts/3-)" + letter +
           R"(.md","stage":"draft","kind":")" + letter + "\"}\n";
  };
  auto folded = FoldJournal(kPath, head, FoldKeeps::kState);  // borrowed bytes: copies
  REQUIRE(folded.ok());
  CardState a = *folded;
  CardState b = a;  // copy construction
  CardState c;
  c = a;  // copy assignment
  REQUIRE(FoldJournalFrom(kPath, tail('a'), head.size(), a).ok());
  REQUIRE(FoldJournalFrom(kPath, tail('b'), head.size(), b).ok());
  REQUIRE(FoldJournalFrom(kPath, tail('c'), head.size(), c).ok());
  REQUIRE(FoldJournalFrom(kPath, tail('d'), head.size(), *folded).ok());
  for (auto [state, letter] :
       {std::pair<CardState*, char>{&a, 'a'}, {&b, 'b'}, {&c, 'c'}, {&*folded, 'd'}}) {
    CAPTURE(letter);
    REQUIRE(state->artifact_records.size() == 2);
    CHECK(state->artifact_records[0].path == "artifacts/2-prd.md");
    CHECK(state->artifact_records[1].path == "artifacts/3-" + std::string(1, letter) + ".md");
    CHECK(state->artifact_records[1].kind == std::string(1, letter));
  }
}

// The same for a move: the moved-from holder keeps nothing to write into, so what it keeps
// later cannot land on the strings the holder it moved into keeps. Fails if a move (either
// kind) leaves the free tail to the moved-from holder as well.
TEST_CASE("a record byte holder moved from writes nothing into the holder it moved into") {
  RecordBytes from;
  CHECK(from.Keep("first") == "first");
  RecordBytes to = std::move(from);  // move construction
  const std::string_view kept_to = to.Keep("to-1");
  const std::string_view kept_from = from.Keep("xxxx");  // NOLINT(bugprone-use-after-move)
  CHECK(kept_to == "to-1");
  CHECK(kept_from == "xxxx");
  RecordBytes assigned;
  CHECK(assigned.Keep("old") == "old");
  assigned = std::move(to);  // move assignment
  const std::string_view kept_assigned = assigned.Keep("as-2");
  const std::string_view kept_to_again = to.Keep("yyyy");  // NOLINT(bugprone-use-after-move)
  CHECK(kept_assigned == "as-2");
  CHECK(kept_to_again == "yyyy");
  CHECK(kept_to == "to-1");
  // Larger than a chunk: a chunk of its own size.
  const std::string big(100000, 'b');
  CHECK(assigned.Keep(big) == big);
  CHECK(kept_assigned == "as-2");
}

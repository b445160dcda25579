// A move reads what it needs once (issue 11 item 1): the journal line decoder's fast path
// decodes exactly what the full path decodes, a tail fold equals a whole fold, and a commit
// handed the card it was decided on folds only the appended lines, re-folding the whole
// journal whenever the file changed in any other way.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "host/journal.h"
#include "host/store.h"
#include "support/support.h"

using namespace devflow;
using devflow::test::FixedClock;
using devflow::test::Slurp;
using devflow::test::Spit;
using devflow::test::TempDir;

namespace {

const Actor kHuman{"human", std::nullopt, std::nullopt};

// The same line with its first letter 'a'..'z' inside a string value written as a \u escape:
// the fast path (no backslash) refuses it, so the full path decodes it.
std::string Escaped(const std::string& line) {
  bool in_string = false;
  bool key = true;  // the next string is an object key
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (in_string) key = false;
      in_string = !in_string;
      continue;
    }
    if (!in_string) {
      if (c == ',' || c == '{') key = true;
      if (c == ':') key = false;
      continue;
    }
    if (!key && c >= 'a' && c <= 'z') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\u%04x", c);
      return line.substr(0, i) + hex + line.substr(i + 1);
    }
  }
  FAIL("no letter in a string value of " << line);
  return line;
}

// Escaped, or nothing when no string value holds a letter.
std::optional<std::string> EscapedIfAny(const std::string& line) {
  bool in_string = false, key = true;
  for (char c : line) {
    if (c == '"') {
      if (in_string) key = false;
      in_string = !in_string;
    } else if (!in_string) {
      if (c == ',' || c == '{') key = true;
      if (c == ':') key = false;
    } else if (!key && c >= 'a' && c <= 'z') {
      return Escaped(line);
    }
  }
  return std::nullopt;
}

std::string Decoded(const std::string& line) {
  auto e = DecodeJournalLine(line);
  return e.ok() ? "ok " + EncodeJournalLine(*e) : e.status().code() + " " + e.status().message();
}

}  // namespace

TEST_CASE("the decoder's fast path and its full path decode every line the same") {
  const std::vector<std::string> lines = {
      // what the stores write
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human","name":"ann"}})",
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"},"parent":"0001-a","serviceClass":"express"})",
      R"({"rev":2,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"draft","to":"designing","by":{"kind":"agent","session":"s1"},"reason":"why","gate":{"approvedBy":{"kind":"human"},"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"ok"}]}})",
      R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"artifact","path":"artifacts/3-prd.md","stage":"designing","by":{"kind":"agent","session":"bench-3"},"kind":"prd"})",
      R"({"rev":4,"at":"x","type":"abandoned","by":{"kind":"command","name":"c"},"reason":"gone"})",
      R"({"rev":5,"at":"x","type":"archived","by":{"kind":"human"}})",
      R"({"rev":6,"at":"x","type":"restored","by":{"kind":"human"},"reason":"back"})",
      R"({"rev":7,"at":"x","type":"claim-expired","previousOwner":{"kind":"agent","session":"old"},"by":{"kind":"command","name":"sweeper"}})",
      // spacing, unknown fields, fields the kind does not define, other value types
      R"(  { "rev" : 8 , "at" : "x" , "type" : "transition" , "from" : "ready" , "to" : "blocked" , "extra" : [1, -2, true, false, null, {}, []] }  )",
      R"({"rev":9,"at":"x","type":"transition","from":"ready","to":"developing","by":{"kind":"human","session":"dropped"}})",
      // refusals: each must carry the full path's message
      R"({"rev":0,"at":"x","type":"archived","by":{"kind":"human"}})",
      R"({"rev":-3,"at":"x","type":"archived","by":{"kind":"human"}})",
      R"({"rev":"1","at":"x","type":"archived","by":{"kind":"human"}})",
      R"({"rev":1,"at":"","type":"archived","by":{"kind":"human"}})",
      R"({"rev":1,"at":"x","type":"teleported","by":{"kind":"human"}})",
      R"({"rev":1,"at":"x","type":"archived","by":{"kind":"robot"}})",
      R"({"rev":1,"at":"x","type":"archived","by":{"kind":"human","name":""}})",
      R"({"rev":1,"at":"x","type":"artifact","path":"p","stage":"blocked"})",
      R"({"rev":1,"at":"x","type":"abandoned","by":{"kind":"human"},"reason":"   "})",
      R"({"rev":1,"at":"x","type":"transition","from":"ready","to":"nowhere"})",
      R"({"rev":1,"at":"x","type":"transition","from":"ready","to":"done","gate":{"checks":[{"by":{"kind":"agent"},"verdict":"vetoed"}]}})",
      R"({"rev":1,"at":"x","type":"transition","from":"ready","to":"done","gate":{}})",
      R"({"rev":1,"at":"x","type":"transition","from":"ready","to":"done","gate":{"checks":{}}})",
      R"({"rev":1,"at":"x","type":"claim-expired","by":{"kind":"human"}})",
  };
  for (const std::string& line : lines) {
    CAPTURE(line);
    CHECK(Decoded(line) == Decoded(Escaped(line)));
  }
  // Lines outside the fast path's subset still decode as the full path reads them.
  CHECK(Decoded(R"({"rev":3.0,"at":"x","type":"archived","by":{"kind":"human"}})") ==
        Decoded(R"({"rev":3,"at":"x","type":"archived","by":{"kind":"human"}})"));
  CHECK(Decoded(R"({"rev":1,"rev":2,"at":"x","type":"archived","by":{"kind":"human"}})")
            .rfind("ok {\"rev\":", 0) == 0);
  CHECK(Decoded(R"({"rev":01,"at":"x","type":"archived","by":{"kind":"human"}})")
            .rfind("corrupt invalid JSON: ", 0) == 0);
  CHECK(Decoded(R"({"rev":1,"at":"x","type":"archived","by":{"kind":"human"}} x)")
            .rfind("corrupt invalid JSON: ", 0) == 0);
  CHECK(Decoded(R"({"rev":1,"at":"x","type":"archived","by":{"kind":"human"})")
            .rfind("corrupt invalid JSON: ", 0) == 0);
}

TEST_CASE("the store-shape decoder accepts only what the general decoder decodes the same") {
  // Every shape the stores write, each optional field present and absent.
  const std::vector<std::string> shaped = {
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human","name":"ann"}})",
      R"({"rev":1,"at":"x","type":"created","by":{"kind":"command"},"parent":"0001-a","serviceClass":"express"})",
      R"({"rev":1,"at":"x","type":"created","by":{"kind":"agent","session":"s"},"serviceClass":"standard"})",
      R"({"rev":2,"at":"x","type":"transition","from":"draft","to":"designing","by":{"kind":"agent","session":"s1"},"reason":"why","gate":{"approvedBy":{"kind":"human"},"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"ok"},{"by":{"kind":"command","name":"c"},"verdict":"allowed"}]}})",
      R"({"rev":2,"at":"x","type":"transition","from":"ready","to":"blocked","gate":{"approvedBy":{"kind":"human","name":"h"}}})",
      R"({"rev":2,"at":"x","type":"transition","from":"blocked","to":"ready","gate":{"checks":[{"by":{"kind":"agent"},"verdict":"allowed"}]}})",
      R"({"rev":2,"at":"x","type":"transition","from":"draft","to":"designing"})",
      R"({"rev":3,"at":"x","type":"artifact","path":"artifacts/3-prd.md","stage":"designing","by":{"kind":"agent","session":"bench-3"},"kind":"prd"})",
      R"({"rev":123456789012345678,"at":"x","type":"artifact","path":"p, {q}: r","stage":"done"})",
      R"({"rev":4,"at":"x","type":"abandoned","by":{"kind":"command","name":"c"},"reason":" gone "})",
      R"({"rev":5,"at":"x","type":"archived","by":{"kind":"human"}})",
      R"({"rev":5,"at":"x","type":"archived","by":{"kind":"human"},"reason":"old"})",
      R"({"rev":6,"at":"x","type":"restored","by":{"kind":"human"},"reason":"back"})",
      R"({"rev":6,"at":"x","type":"restored","by":{"kind":"agent"}})",
      R"({"rev":7,"at":"x","type":"claim-expired","previousOwner":{"kind":"agent","session":"old"},"by":{"kind":"command","name":"sweeper"}})",
  };
  // What the shape decoder takes must be what the nlohmann path makes of the same line.
  auto same_as_general = [](const std::string& line) {
    JournalEntry fast;
    if (!DecodeStoreShapedLine(line, fast)) return true;
    auto escaped = EscapedIfAny(line);
    REQUIRE(escaped);
    auto general = DecodeJournalLine(*escaped);
    if (!general.ok()) return false;
    return EncodeJournalLine(fast) == EncodeJournalLine(*general) &&
           fast.service_class == general->service_class && fast.by == general->by &&
           fast.gate == general->gate;
  };
  size_t variants = 0, taken = 0;
  for (const std::string& line : shaped) {
    CAPTURE(line);
    JournalEntry e;
    REQUIRE(DecodeStoreShapedLine(line, e));
    CHECK(same_as_general(line));
    if (line.find("\"standard\"") == std::string::npos) CHECK(EncodeJournalLine(e) == line);
    // Near misses: every prefix, every byte dropped, every byte replaced by a few that matter
    // to JSON. Each is either left to the general decoder or decoded exactly as it would be.
    for (size_t i = 0; i < line.size(); ++i) {
      std::vector<std::string> near = {line.substr(0, i), line.substr(0, i) + line.substr(i + 1)};
      for (char c : std::string(" \"0{}[],:aZ-\t\x01\x7f\xc3\\")) {
        std::string v = line;
        v[i] = c;
        near.push_back(v);
      }
      for (const std::string& v : near) {
        if (v.empty()) continue;
        CAPTURE(v);
        ++variants;
        JournalEntry probe;
        if (DecodeStoreShapedLine(v, probe)) ++taken;
        CHECK(same_as_general(v));
      }
    }
  }
  CHECK(variants > 10000);
  CHECK(taken > 0);  // some near misses are still store-shaped lines (another letter, a digit)
  // Outside the shape: whitespace, another field order, an unknown field, an escape, non-ASCII,
  // a value the decoder refuses. All go to the general decoder.
  for (
      const std::string line : {
          R"({"rev":1, "at":"x","type":"archived","by":{"kind":"human"}})",
          R"({"at":"x","rev":1,"type":"archived","by":{"kind":"human"}})",
          R"({"rev":1,"at":"x","type":"archived","by":{"kind":"human"},"extra":1})",
          R"({"rev":1,"at":"x","type":"archived","by":{"kind":"human","session":"dropped"}})",
          R"({"rev":1,"at":"\u0078","type":"archived","by":{"kind":"human"}})",
          "{\"rev\":1,\"at\":\"\xC3\xA9\",\"type\":\"archived\",\"by\":{\"kind\":\"human\"}}",
          R"({"rev":0,"at":"x","type":"archived","by":{"kind":"human"}})",
          R"({"rev":01,"at":"x","type":"archived","by":{"kind":"human"}})",
          R"({"rev":1234567890123456789,"at":"x","type":"archived","by":{"kind":"human"}})",
          R"({"rev":1,"at":"","type":"archived","by":{"kind":"human"}})",
          R"({"rev":1,"at":"x","type":"archived","by":{"kind":"human","name":""}})",
          R"({"rev":1,"at":"x","type":"abandoned","by":{"kind":"human"},"reason":"   "})",
          R"({"rev":1,"at":"x","type":"artifact","path":"p","stage":"blocked"})",
          R"({"rev":1,"at":"x","type":"transition","from":"ready","to":"done","gate":{"checks":[]}})",
          R"({"rev":1,"at":"x","type":"transition","from":"ready","to":"done","gate":{}})",
      }) {
    CAPTURE(line);
    JournalEntry e;
    CHECK_FALSE(DecodeStoreShapedLine(line, e));
  }
}

// The store-shape decoder matches a location name and its closing quote in place (a switch on
// the name's first byte, issue 11 item 1) instead of scanning the string and looking the name
// up. Every name, in each field that holds one, must decode to the location the general
// decoder makes of it, and every near miss (a prefix, a letter dropped, changed or added, a
// capital) must be left to the general decoder. Fails if a name maps to another location, or a
// spelling that is no name is taken.
TEST_CASE("the store-shape decoder reads every location name as the general decoder does") {
  const std::vector<Location> all = {
      Location::kDraft,     Location::kDesigning, Location::kReady, Location::kDeveloping,
      Location::kReviewing, Location::kTesting,   Location::kDone,  Location::kBlocked};
  size_t names = 0, misses = 0;
  for (Location l : all) {
    const std::string name(LocationName(l));
    std::vector<std::string> spellings = {name, name + "s", name + "\"x"};
    for (size_t i = 0; i < name.size(); ++i) {
      spellings.push_back(name.substr(0, i));
      spellings.push_back(name.substr(0, i) + name.substr(i + 1));
      for (char c : {'x', 'e', static_cast<char>(name[i] - 'a' + 'A')}) {
        std::string v = name;
        v[i] = c;
        if (v != name) spellings.push_back(v);
      }
    }
    for (const std::string& s : spellings) {
      const bool is_name = ParseLocation(s).has_value();
      const std::vector<std::string> lines = {
          R"({"rev":2,"at":"x","type":"transition","from":")" + s + R"(","to":"ready"})",
          R"({"rev":2,"at":"x","type":"transition","from":"ready","to":")" + s + R"("})",
          R"({"rev":3,"at":"x","type":"artifact","path":"p","stage":")" + s + R"(","kind":"k"})",
      };
      for (size_t field = 0; field < lines.size(); ++field) {
        const std::string& line = lines[field];
        CAPTURE(line);
        JournalEntry fast;
        const bool taken = DecodeStoreShapedLine(line, fast);
        auto general = DecodeJournalLine(Escaped(line));  // the escape keeps it off the shape
        const bool stage_of_blocked = field == 2 && s == "blocked";
        CHECK(taken == (is_name && !stage_of_blocked));
        CHECK(general.ok() == taken);
        if (!taken) {
          ++misses;
          continue;
        }
        ++names;
        REQUIRE(general.ok());
        const std::optional<Location> read = field == 0   ? fast.from
                                             : field == 1 ? fast.to
                                                          : fast.stage;
        CHECK(read == ParseLocation(s));
        CHECK(EncodeJournalLine(fast) == EncodeJournalLine(*general));
      }
    }
  }
  CHECK(names == 3 * all.size() - 1);  // every name in every field but a blocked artifact
  CHECK(misses > 500);
}

TEST_CASE("a tail fold equals the whole fold, line numbers in its errors included") {
  const std::string path = "/r/tasks/0001-a/journal.jsonl";
  const std::string head =
      R"({"rev":1,"at":"x","type":"created","by":{"kind":"human"}})"
      "\n\n"
      R"({"rev":2,"at":"x","type":"transition","from":"draft","to":"designing"})"
      "\n";
  const std::string tail =
      "  \n"
      R"({"rev":3,"at":"y","type":"artifact","path":"artifacts/3-prd.md","stage":"designing","kind":"prd"})"
      "\n";
  auto whole = FoldJournal(path, head + tail);
  REQUIRE(whole.ok());
  auto state = FoldJournal(path, head);
  REQUIRE(state.ok());
  REQUIRE(FoldJournalFrom(path, head + tail, head.size(), *state).ok());
  CHECK(state->stage_revision == whole->stage_revision);
  CHECK(state->updated_at == "y");
  CHECK(state->artifact_records == whole->artifact_records);
  REQUIRE(state->entries.size() == whole->entries.size());
  for (size_t i = 0; i < state->entries.size(); ++i) {
    CHECK(EncodeJournalLine(state->entries[i]) == EncodeJournalLine(whole->entries[i]));
  }

  const std::string bad_tail = "\n{\"rev\":3,\n";
  auto bad_whole = FoldJournal(path, head + bad_tail);
  REQUIRE_FALSE(bad_whole.ok());
  auto again = FoldJournal(path, head);
  Status bad = FoldJournalFrom(path, head + bad_tail, head.size(), *again);
  CHECK(bad.code() == "corrupt");
  CHECK(bad.message() == bad_whole.status().message());
  CHECK(bad.message().rfind(path + ":5: ", 0) == 0);

  const std::string gap_tail = R"({"rev":4,"at":"x","type":"archived","by":{"kind":"human"}})"
                               "\n";
  auto gap_whole = FoldJournal(path, head + gap_tail);
  REQUIRE_FALSE(gap_whole.ok());
  auto third = FoldJournal(path, head);
  CHECK(FoldJournalFrom(path, head + gap_tail, head.size(), *third).message() ==
        gap_whole.status().message());
}

TEST_CASE("a line the decoder or the fold refuses leaves no entry of it behind") {
  // Each line is decoded straight into the fold's entry list (issue 11 item 1); a refused one
  // is taken out again, so the state is the fold of the lines before it, nothing half-made.
  const std::string path = "/r/tasks/0001-a/journal.jsonl";
  const std::string head =
      R"({"rev":1,"at":"x","type":"created","by":{"kind":"human"}})"
      "\n"
      R"({"rev":2,"at":"x","type":"transition","from":"draft","to":"designing"})"
      "\n";
  const std::string good =
      R"({"rev":3,"at":"y","type":"artifact","path":"artifacts/3-prd.md","stage":"designing","kind":"prd"})"
      "\n";
  auto expect_folded_to_rev_3 = [&](const CardState& state) {
    REQUIRE(state.entries.size() == 3);
    CHECK(EncodeJournalLine(state.entries.back()) + "\n" == good);
    CHECK(state.artifact_records.size() == 1);
    CHECK(state.stage_revision == 3);
    CHECK(state.updated_at == "y");
  };
  const std::vector<std::string> refused = {
      "{\"rev\":4,\n",  // undecodable: the decoder refuses it
      R"({"rev":4,"at":"z","type":"artifact","path":"artifacts/4-x.md","stage":"blocked"})"
      "\n",  // decodes in part before the decoder refuses it
      R"({"rev":5,"at":"z","type":"artifact","path":"artifacts/5-x.md","stage":"designing"})"
      "\n",  // a revision gap: the fold refuses it
      R"({"rev":4,"at":"z","type":"transition","from":"ready","to":"done"})"
      "\n",  // departs from elsewhere: the fold refuses it
  };
  for (const std::string& bad : refused) {
    CAPTURE(bad);
    auto state = FoldJournal(path, head);
    REQUIRE(state.ok());
    CHECK_FALSE(FoldJournalFrom(path, head + good + bad, head.size(), *state).ok());
    expect_folded_to_rev_3(*state);
  }

  auto state = FoldJournal(path, head + good);
  REQUIRE(state.ok());
  JournalEntry gap;
  gap.rev = 9;
  gap.at = "z";
  gap.type = EntryType::kClaimExpired;
  gap.by = kHuman;
  gap.previous_owner = kHuman;
  CHECK_FALSE(ApplyEntry(*state, gap).ok());
  expect_folded_to_rev_3(*state);
}

TEST_CASE("a long journal folds the same whole and in parts, refusals worded the same") {
  // Lines decoded in place (issue 11 item 1) by either decoder, across the reallocations of a
  // tail fold that outgrows the head's reserve: every split gives the whole fold's state, and
  // a bad line gives the whole fold's message, its line number included.
  const std::string path = "/r/tasks/0001-a/journal.jsonl";
  std::vector<std::string> lines = {
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"}})",
      R"({"rev":2,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"draft","to":"designing"})"};
  for (int rev = 3; rev <= 2000; ++rev) {
    const std::string r = std::to_string(rev);
    std::string line =
        rev % 7 == 0
            ? R"({"rev":)" + r +
                  R"(,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":")" +
                  (rev % 14 == 0 ? "blocked" : "designing") + R"(","to":")" +
                  (rev % 14 == 0 ? "designing" : "blocked") +
                  R"(","by":{"kind":"command","name":"gate"},"reason":"r)" + r +
                  R"(","gate":{"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"ok"}]}})"
            : R"({"rev":)" + r +
                  R"(,"at":"2026-09-16T08:00:00.000Z","type":"artifact","path":"artifacts/)" + r +
                  R"(-prd.md","stage":"designing","kind":"prd"})";
    if (rev % 5 == 0) line = Escaped(line);  // decoded by the general path
    lines.push_back(line);
  }
  std::string content;
  std::vector<size_t> starts;  // byte offset of each line
  for (const std::string& l : lines) {
    starts.push_back(content.size());
    content += l + (starts.size() % 100 == 0 ? "\n\n" : "\n");
  }
  auto whole = FoldJournal(path, content);
  REQUIRE(whole.ok());
  REQUIRE(whole->entries.size() == 2000);
  CHECK(whole->stage == Location::kBlocked);  // rev 1995 = 7 x 285 (odd): parked
  for (size_t split : {size_t{1}, size_t{2}, size_t{3}, size_t{999}, size_t{1999}}) {
    CAPTURE(split);
    auto state = FoldJournal(path, content.substr(0, starts[split]));
    REQUIRE(state.ok());
    REQUIRE(FoldJournalFrom(path, content, starts[split], *state).ok());
    CHECK(state->stage == whole->stage);
    CHECK(state->blocked_from == whole->blocked_from);
    CHECK(state->stage_revision == 2000);
    CHECK(state->created_at == whole->created_at);
    CHECK(state->updated_at == whole->updated_at);
    CHECK(state->artifact_records == whole->artifact_records);
    REQUIRE(state->entries.size() == whole->entries.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      CHECK(EncodeJournalLine(state->entries[i]) == EncodeJournalLine(whole->entries[i]));
    }
  }

  // Line 1500 replaced: a duplicate key (JSON.parse keeps the last), a wrong type, a gap.
  const std::string r = "1500";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"rev":1500,"at":"x","at":5,"type":"artifact","path":"p","stage":"designing"})",
       "journal entry field \"at\" must be a non-empty string"},
      {R"({"rev":1500,"at":"x","type":"artifact","path":"p","stage":"designing","kind":7})",
       "field \"kind\" must be a non-empty string when present"},
      {R"({"rev":1500,"rev":1501,"at":"x","type":"artifact","path":"p","stage":"designing"})",
       "journal entry 1500 carries rev 1501; revisions must be contiguous from 1"},
  };
  for (const auto& [line, problem] : bad) {
    CAPTURE(line);
    const size_t at = starts[1499];
    const size_t next = content.find('\n', at);
    const std::string changed = content.substr(0, at) + line + content.substr(next);
    auto refused = FoldJournal(path, changed);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find(problem) != std::string::npos);
    CHECK(refused.status().message().find("1514") !=
          std::string::npos);  // 14 blank lines before it
    auto state = FoldJournal(path, changed.substr(0, starts[1000]));
    REQUIRE(state.ok());
    Status tail = FoldJournalFrom(path, changed, starts[1000], *state);
    CHECK(tail.message() == refused.status().message());
    CHECK(state->entries.size() == 1499);
    CHECK(state->stage_revision == 1499);
  }
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
  }
  TransitionCommit To(Location from, Location to, int64_t rev) {
    return TransitionCommit{id,           rev,          from,           to, kHuman,
                            std::nullopt, std::nullopt, clock.NowIso(), {}};
  }
  Card Read() {
    auto card = store.Read(id);
    REQUIRE(card.ok());
    return *card;
  }
};

}  // namespace

TEST_CASE("a commit handed its decided card folds the lines appended since") {
  Root r;
  Card decided = r.Read();
  REQUIRE(decided.journal);
  CHECK(decided.journal->view() == *Slurp(r.Journal()));

  SUBCASE("nothing appended: the commit stands on the decided fold") {
    auto moved = r.store.CommitTransition(r.To(Location::kDraft, Location::kDesigning, 1), decided);
    REQUIRE(moved.ok());
    CHECK(moved->stage == Location::kDesigning);
    CHECK(moved->stage_revision == 2);
    REQUIRE(moved->entries.size() == 2);
    CHECK(moved->title == "One");
    auto fold = FoldJournal(r.Journal(), *Slurp(r.Journal()));
    REQUIRE(fold.ok());
    CHECK(EncodeJournalLine(moved->entries[1]) == EncodeJournalLine(fold->entries[1]));
  }
  SUBCASE("a rival's appended line is folded: the revision moved") {
    Store rival(r.tmp / ".devflow", RealFileSystem(), r.clock, r.warnings);
    REQUIRE(rival.CommitTransition(r.To(Location::kDraft, Location::kDesigning, 1)).ok());
    auto lost = r.store.CommitTransition(r.To(Location::kDraft, Location::kDesigning, 1), decided);
    CHECK(lost.status().code() == "revision-mismatch");
    CHECK(lost.status().message().find("moved to revision 2") != std::string::npos);
    // and a commit decided on the rival's revision goes through on the appended fold
    Card now = r.Read();
    auto moved = r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), now);
    REQUIRE(moved.ok());
    CHECK(moved->stage_revision == 3);
  }
}

TEST_CASE("a journal changed other than by an append since the decision is re-folded whole") {
  Root r;
  REQUIRE(r.store.CommitTransition(r.To(Location::kDraft, Location::kDesigning, 1)).ok());
  Card decided = r.Read();  // revision 2, designing
  const std::string original = *Slurp(r.Journal());
  const std::string created = original.substr(0, original.find('\n') + 1);

  SUBCASE("shorter: cut back to the created line") {
    Spit(r.Journal(), created);
    auto lost = r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), decided);
    CHECK(lost.status().code() == "revision-mismatch");
    CHECK(*Slurp(r.Journal()) == created);
  }
  SUBCASE("same size, same last line, an earlier line rewritten") {
    std::string forged = original;
    const size_t at = forged.find("\"human\"");
    REQUIRE(at < created.size());
    forged.replace(at, 7, "\"robot\"");  // the created line no longer decodes
    REQUIRE(forged.size() == original.size());
    Spit(r.Journal(), forged);
    auto refused =
        r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), decided);
    CHECK(refused.status().code() == "corrupt");
    CHECK(refused.status().message().find("journal.jsonl:1: ") != std::string::npos);
    CHECK(*Slurp(r.Journal()) == forged);
  }
  SUBCASE("rewritten and then appended to: the old bytes are no longer its start") {
    std::string forged = original;
    forged.replace(forged.find("\"human\""), 7, "\"robot\"");
    forged += R"({"rev":3,"at":"x","type":"transition","from":"designing","to":"ready"})"
              "\n";
    Spit(r.Journal(), forged);
    auto refused =
        r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), decided);
    CHECK(refused.status().code() == "corrupt");
    CHECK(*Slurp(r.Journal()) == forged);
  }
  SUBCASE("a card of another id is never taken for this one's fold") {
    Card other = decided;  // the same bytes, but another card's (here: an older) fold
    other.id = "0002-other";
    other.stage = Location::kDraft;
    other.stage_revision = 1;
    other.entries.resize(1);
    auto moved = r.store.CommitTransition(r.To(Location::kDesigning, Location::kReady, 2), other);
    REQUIRE(moved.ok());
    CHECK(moved->stage_revision == 3);
    CHECK(moved->id == r.id);
  }
}

TEST_CASE("a file is read whole in one copy whatever its size says") {
  TempDir tmp;
  for (size_t size : {size_t{0}, size_t{1}, size_t{65536}, size_t{(1 << 20) + 3}}) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    Spit(tmp / "f", bytes);
    auto read = RealFileSystem().ReadFile(tmp / "f");
    REQUIRE(read.ok());
    CHECK(*read == bytes);
    auto beneath = RealFileSystem().ReadFileBeneath(tmp.path(), "f");
    REQUIRE(beneath.ok());
    CHECK(*beneath == bytes);
  }
  // A regular file whose st_size is 0 although it has content (procfs): read to EOF anyway.
  auto status = RealFileSystem().ReadFile("/proc/self/status");
  REQUIRE(status.ok());
  CHECK(status->find("Pid:") != std::string::npos);
  CHECK(status->back() == '\n');
}

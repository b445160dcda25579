// Journal line codec and strict fold (reference §1.6, §1.7).
#include <doctest/doctest.h>

#include <string>

#include "host/journal.h"

using namespace devflow;

namespace {

const std::string kAt = "2026-09-16T08:00:00.000Z";

JournalEntry Transition(int64_t rev, Location from, Location to) {
  JournalEntry e;
  e.rev = rev;
  e.at = kAt;
  e.type = EntryType::kTransition;
  e.from = from;
  e.to = to;
  e.by = Actor{"human", std::nullopt, std::nullopt};
  return e;
}

const std::string kCreated =
    R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"}})";

std::string Move(int rev, const char* from, const char* to) {
  return R"({"rev":)" + std::to_string(rev) +
         R"(,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":")" + from + R"(","to":")" +
         to + R"("})";
}

std::string FoldError(const std::string& content) {
  auto r = FoldJournal("/r/tasks/0001-a/journal.jsonl", content);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == "corrupt");
  return r.status().message();
}

std::string DecodeError(const std::string& line) {
  auto r = DecodeJournalLine(line);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == "corrupt");
  return r.status().message();
}

}  // namespace

TEST_CASE("a transition line with gate.checks is byte-identical to JSON.stringify") {
  JournalEntry e = Transition(3, Location::kDesigning, Location::kReady);
  e.gate =
      Gate{std::nullopt,
           {GateCheck{Actor{"agent", std::nullopt, std::nullopt}, std::string("design is sound")}}};
  CHECK(
      EncodeJournalLine(e) ==
      R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"designing","to":"ready","by":{"kind":"human"},"gate":{"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"design is sound"}]}})");
}

TEST_CASE("a created line omits a standard service class and writes any other after by") {
  JournalEntry e;
  e.rev = 1;
  e.at = kAt;
  e.type = EntryType::kCreated;
  e.by = Actor{"human", std::nullopt, std::nullopt};
  CHECK(EncodeJournalLine(e) == kCreated);
  e.service_class = ServiceClass::kStandard;
  CHECK(EncodeJournalLine(e) == kCreated);
  e.service_class = ServiceClass::kExpress;
  e.parent = "0001-parent";
  CHECK(
      EncodeJournalLine(e) ==
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"},"parent":"0001-parent","serviceClass":"express"})");
}

TEST_CASE("an artifact line writes path, stage, by, kind in that order") {
  JournalEntry e;
  e.rev = 2;
  e.at = kAt;
  e.type = EntryType::kArtifact;
  e.path = "artifacts/2-design.md";
  e.stage = Location::kDesigning;
  e.by = Actor{"agent", std::nullopt, std::string("s-1")};
  e.kind = "design";
  CHECK(
      EncodeJournalLine(e) ==
      R"({"rev":2,"at":"2026-09-16T08:00:00.000Z","type":"artifact","path":"artifacts/2-design.md","stage":"designing","by":{"kind":"agent","session":"s-1"},"kind":"design"})");
}

TEST_CASE("a parking transition writes the command actor and the reason") {
  JournalEntry e = Transition(4, Location::kDesigning, Location::kBlocked);
  e.by = Actor{"command", std::string("devflow-agent-gate"), std::nullopt};
  e.reason =
      "agent check for designing->ready failed closed: the checker ended with signal SIGKILL";
  CHECK(
      EncodeJournalLine(e) ==
      R"({"rev":4,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"designing","to":"blocked","by":{"kind":"command","name":"devflow-agent-gate"},"reason":"agent check for designing->ready failed closed: the checker ended with signal SIGKILL"})");
}

TEST_CASE("a gate with approvedBy and checks writes approvedBy first, an empty gate is omitted") {
  JournalEntry e = Transition(5, Location::kTesting, Location::kDone);
  e.gate =
      Gate{Actor{"human", std::string("ana"), std::nullopt},
           {GateCheck{Actor{"command", std::string("devflow-gates"), std::nullopt}, std::nullopt}}};
  CHECK(
      EncodeJournalLine(e) ==
      R"({"rev":5,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"testing","to":"done","by":{"kind":"human"},"gate":{"approvedBy":{"kind":"human","name":"ana"},"checks":[{"by":{"kind":"command","name":"devflow-gates"},"verdict":"allowed"}]}})");
  e.gate = Gate{};
  CHECK(
      EncodeJournalLine(e) ==
      R"({"rev":5,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"testing","to":"done","by":{"kind":"human"}})");
}

TEST_CASE("strings are escaped the way JSON.stringify escapes them") {
  JournalEntry e = Transition(6, Location::kReviewing, Location::kDeveloping);
  e.reason = std::string("Zoë: \"no\" \\ a/b \x1f\x01\n\t\r\b\f\x7f 東京 ✓");
  CHECK(EncodeJournalLine(e) ==
        "{\"rev\":6,\"at\":\"2026-09-16T08:00:00.000Z\",\"type\":\"transition\",\"from\":"
        "\"reviewing\",\"to\":\"developing\",\"by\":{\"kind\":\"human\"},\"reason\":\"Zoë: "
        "\\\"no\\\" \\\\ a/b \\u001f\\u0001\\n\\t\\r\\b\\f\x7f 東京 ✓\"}");
}

TEST_CASE("decode then encode reproduces every written line byte for byte") {
  const char* lines[] = {
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human","name":"ana"},"parent":"0001-p","serviceClass":"emergency"})",
      R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"designing","to":"ready","by":{"kind":"human"},"gate":{"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"design is sound"}]}})",
      R"({"rev":2,"at":"x","type":"transition","from":"reviewing","to":"designing","reason":"wrong design","gate":{"approvedBy":{"kind":"human"}}})",
      R"({"rev":2,"at":"2026-09-16T08:00:00.000Z","type":"artifact","path":"artifacts/design.md","stage":"designing"})",
      R"({"rev":9,"at":"2026-09-16T08:00:00.000Z","type":"abandoned","by":{"kind":"command","name":"devflow"},"reason":"dropped"})",
      R"({"rev":9,"at":"2026-09-16T08:00:00.000Z","type":"archived","by":{"kind":"command","name":"devflow archive"}})",
      R"({"rev":10,"at":"2026-09-16T08:00:00.000Z","type":"restored","by":{"kind":"human"},"reason":"back"})",
      R"({"rev":4,"at":"2026-09-16T08:00:00.000Z","type":"claim-expired","previousOwner":{"kind":"agent","session":"old"},"by":{"kind":"agent","session":"new"}})",
  };
  for (const char* line : lines) {
    CAPTURE(line);
    auto e = DecodeJournalLine(line);
    REQUIRE(e.ok());
    CHECK(EncodeJournalLine(*e) == line);
  }
}

TEST_CASE("decode accepts rev written as 3.0 like JS Number.isInteger") {
  auto e = DecodeJournalLine(
      R"({"rev":3.0,"at":"a","type":"transition","from":"draft","to":"designing"})");
  REQUIRE(e.ok());
  CHECK(e->rev == 3);
}

TEST_CASE("decode rejects each malformed field with the upstream problem text") {
  CHECK(DecodeError("[1]") == "journal entry must be a JSON object");
  CHECK(DecodeError(R"({"rev":0,"at":"a","type":"created","by":{"kind":"human"}})") ==
        "journal entry field \"rev\" must be a positive integer");
  CHECK(DecodeError(R"({"rev":1.5,"at":"a","type":"created","by":{"kind":"human"}})") ==
        "journal entry field \"rev\" must be a positive integer");
  CHECK(DecodeError(R"({"rev":"1","at":"a","type":"created","by":{"kind":"human"}})") ==
        "journal entry field \"rev\" must be a positive integer");
  CHECK(DecodeError(R"({"rev":1,"at":"","type":"created","by":{"kind":"human"}})") ==
        "journal entry field \"at\" must be a non-empty string");
  CHECK(DecodeError(R"({"rev":1,"at":"a","type":"moved"})") ==
        "journal entry field \"type\" must be created, transition, artifact, abandoned, "
        "archived, restored, or claim-expired (got \"moved\")");
  CHECK(DecodeError(R"({"rev":1,"at":"a"})") ==
        "journal entry field \"type\" must be created, transition, artifact, abandoned, "
        "archived, restored, or claim-expired (got undefined)");
  CHECK(DecodeError(R"({"rev":1,"at":"a","type":"created","by":{"kind":"robot"}})") ==
        "actor field \"kind\" must be human, agent, or command (got \"robot\")");
  CHECK(DecodeError(R"({"rev":1,"at":"a","type":"created","by":"ana"})") ==
        "actor must be a JSON object");
  CHECK(DecodeError(R"({"rev":1,"at":"a","type":"created"})") == "actor must be a JSON object");
  CHECK(DecodeError(R"({"rev":1,"at":"a","type":"created","by":{"kind":"human","name":""}})") ==
        "field \"name\" must be a non-empty string when present");
  CHECK(DecodeError(R"({"rev":1,"at":"a","type":"created","by":{"kind":"agent","session":""}})") ==
        "field \"session\" must be a non-empty string when present");
  CHECK(DecodeError(R"({"rev":1,"at":"a","type":"created","by":{"kind":"human"},"parent":""})") ==
        "field \"parent\" must be a non-empty card id when present");
  CHECK(DecodeError(
            R"({"rev":1,"at":"a","type":"created","by":{"kind":"human"},"serviceClass":"fast"})") ==
        "created field \"serviceClass\" must be one of standard, express, emergency when present");
  CHECK(DecodeError(R"({"rev":2,"at":"a","type":"transition","from":"nowhere","to":"ready"})") ==
        "transition field \"from\" must be a stage or \"blocked\"");
  CHECK(DecodeError(R"({"rev":2,"at":"a","type":"transition","from":"draft"})") ==
        "transition field \"to\" must be a stage or \"blocked\"");
  CHECK(
      DecodeError(
          R"({"rev":2,"at":"a","type":"transition","from":"draft","to":"designing","reason":""})") ==
      "field \"reason\" must be a non-empty string when present");
  CHECK(
      DecodeError(
          R"({"rev":2,"at":"a","type":"transition","from":"draft","to":"designing","gate":[]})") ==
      "transition field \"gate\" must be a JSON object");
  CHECK(
      DecodeError(
          R"({"rev":2,"at":"a","type":"transition","from":"draft","to":"designing","gate":{}})") ==
      "transition field \"gate\" requires \"approvedBy\" or \"checks\"");
  CHECK(
      DecodeError(
          R"({"rev":2,"at":"a","type":"transition","from":"draft","to":"designing","gate":{"checks":{"by":{"kind":"agent"}}}})") ==
      "transition field \"gate.checks\" must be an array");
  CHECK(
      DecodeError(
          R"({"rev":2,"at":"a","type":"transition","from":"draft","to":"designing","gate":{"checks":["ok"]}})") ==
      "gate check must be a JSON object");
  CHECK(
      DecodeError(
          R"({"rev":2,"at":"a","type":"transition","from":"draft","to":"designing","gate":{"checks":[{"by":{"kind":"agent"},"verdict":"vetoed"}]}})") ==
      "gate check field \"verdict\" must be \"allowed\" (got \"vetoed\")");
  CHECK(
      DecodeError(
          R"({"rev":2,"at":"a","type":"transition","from":"draft","to":"designing","gate":{"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":""}]}})") ==
      "field \"summary\" must be a non-empty string when present");
  CHECK(DecodeError(R"({"rev":2,"at":"a","type":"artifact","path":"","stage":"draft"})") ==
        "artifact field \"path\" must be a non-empty string");
  CHECK(DecodeError(R"({"rev":2,"at":"a","type":"artifact","path":"a.md","stage":"blocked"})") ==
        "artifact field \"stage\" must be one of draft, designing, ready, developing, reviewing, "
        "testing, done");
  CHECK(DecodeError(
            R"({"rev":2,"at":"a","type":"artifact","path":"a.md","stage":"draft","kind":""})") ==
        "field \"kind\" must be a non-empty string when present");
  CHECK(
      DecodeError(R"({"rev":2,"at":"a","type":"abandoned","by":{"kind":"human"},"reason":"  "})") ==
      "abandoned field \"reason\" must be a non-empty string; a card leaving the board without "
      "one loses the decision");
  CHECK(DecodeError(R"({"rev":2,"at":"a","type":"claim-expired","by":{"kind":"human"}})") ==
        "claim-expired field \"previousOwner\" is required");
  CHECK(DecodeError(R"({"rev":2,"at":"a","type":"restored","by":{"kind":"human"},"reason":""})") ==
        "field \"reason\" must be a non-empty string when present");
}

TEST_CASE("fold derives stage, revision, blockedFrom, artifacts and timestamps") {
  std::string journal =
      kCreated + "\n" + Move(2, "draft", "designing") + "\n\n" +
      R"({"rev":3,"at":"2026-09-16T09:00:00.000Z","type":"artifact","path":"artifacts/3-design.md","stage":"designing","kind":"design"})" +
      "\n" + Move(4, "designing", "blocked") + "\n";
  auto s = FoldJournal("/j", journal);
  REQUIRE(s.ok());
  CHECK(s->stage == Location::kBlocked);
  CHECK(s->stage_revision == 4);
  CHECK(s->blocked_from == Location::kDesigning);
  CHECK(s->service_class == ServiceClass::kStandard);
  CHECK(s->created_at == kAt);
  CHECK(s->updated_at == kAt);
  REQUIRE(s->artifact_records.size() == 1);
  CHECK(s->artifact_records[0] ==
        ArtifactRecord{"artifacts/3-design.md", std::string("design"), 3, Location::kDesigning});
  CHECK(s->entries.size() == 4);

  auto recovered = FoldJournal("/j", journal + Move(5, "blocked", "designing") + "\n");
  REQUIRE(recovered.ok());
  CHECK(recovered->stage == Location::kDesigning);
  CHECK_FALSE(recovered->blocked_from.has_value());
}

TEST_CASE("fold names the line of an undecodable entry") {
  CHECK(FoldError(kCreated + "\n\n" + R"({"rev":2,"at":"a","type":"created","by":{"kind":"x"}})" +
                  "\n") ==
        "/r/tasks/0001-a/journal.jsonl:3: actor field \"kind\" must be human, agent, or command "
        "(got \"x\")");
}

TEST_CASE("fold rejects a torn last line without a newline, naming that line") {
  std::string msg = FoldError(kCreated + "\n" + Move(2, "draft", "designing") + "\n" +
                              R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"tran)");
  CHECK(msg.rfind("/r/tasks/0001-a/journal.jsonl:3: invalid JSON: ", 0) == 0);
}

TEST_CASE("fold rejects an empty journal") {
  CHECK(FoldError("") ==
        "/r/tasks/0001-a/journal.jsonl: journal is empty; every card starts with a \"created\" "
        "entry");
  CHECK(FoldError("\n  \n") ==
        "/r/tasks/0001-a/journal.jsonl: journal is empty; every card starts with a \"created\" "
        "entry");
}

TEST_CASE("fold rejects a first entry that is not created") {
  CHECK(FoldError(R"({"rev":1,"at":"a","type":"transition","from":"draft","to":"designing"})") ==
        "/r/tasks/0001-a/journal.jsonl: journal entry 1 must be \"created\" (line 1)");
}

TEST_CASE("fold rejects a repeated created entry") {
  CHECK(
      FoldError(kCreated + "\n" + R"({"rev":2,"at":"a","type":"created","by":{"kind":"human"}})") ==
      "/r/tasks/0001-a/journal.jsonl: journal entry rev 2 repeats \"created\" (line 2)");
}

TEST_CASE("fold rejects a revision gap, a repeat and a wrong start") {
  CHECK(FoldError(kCreated + "\n" + Move(3, "draft", "designing")) ==
        "/r/tasks/0001-a/journal.jsonl: journal entry 2 carries rev 3; revisions must be "
        "contiguous from 1 (line 2)");
  CHECK(FoldError(kCreated + "\n" + Move(2, "draft", "designing") + "\n" +
                  Move(2, "designing", "ready")) ==
        "/r/tasks/0001-a/journal.jsonl: journal entry 3 carries rev 2; revisions must be "
        "contiguous from 1 (line 3)");
  CHECK(FoldError(R"({"rev":2,"at":"a","type":"created","by":{"kind":"human"}})") ==
        "/r/tasks/0001-a/journal.jsonl: journal entry 1 carries rev 2; revisions must be "
        "contiguous from 1 (line 1)");
}

TEST_CASE("fold rejects a transition that departs from elsewhere or does not move") {
  CHECK(FoldError(kCreated + "\n" + Move(2, "designing", "ready")) ==
        "/r/tasks/0001-a/journal.jsonl: transition rev 2 departs from \"designing\" but the card "
        "is at \"draft\" (line 2)");
  CHECK(FoldError(kCreated + "\n" + Move(2, "draft", "draft")) ==
        "/r/tasks/0001-a/journal.jsonl: transition rev 2 does not move the card (already at "
        "\"draft\") (line 2)");
}

TEST_CASE("fold allows recovery from blocked only to blockedFrom") {
  CHECK(FoldError(kCreated + "\n" + Move(2, "draft", "designing") + "\n" +
                  Move(3, "designing", "blocked") + "\n" + Move(4, "blocked", "ready")) ==
        "/r/tasks/0001-a/journal.jsonl: transition rev 4 recovers to \"ready\" but the card "
        "blocked from \"designing\" (line 4)");
}

TEST_CASE("fold rejects anything after abandoned") {
  CHECK(FoldError(kCreated + "\n" +
                  R"({"rev":2,"at":"a","type":"abandoned","by":{"kind":"human"},"reason":"no"})" +
                  "\n" + Move(3, "draft", "designing")) ==
        "/r/tasks/0001-a/journal.jsonl: journal entry rev 3 follows an abandoned card; "
        "abandoning is terminal (line 3)");
}

TEST_CASE("fold archives only a done card and accepts only restored while archived") {
  CHECK(FoldError(kCreated + "\n" +
                  R"({"rev":2,"at":"a","type":"archived","by":{"kind":"human"}})") ==
        "/r/tasks/0001-a/journal.jsonl: archived rev 2 files a card at \"draft\"; only a done "
        "card is archived (line 2)");
  std::string done =
      R"({"rev":1,"at":"a","type":"created","by":{"kind":"human"},"serviceClass":"emergency"})"
      "\n" +
      Move(2, "draft", "developing") + "\n" + Move(3, "developing", "done") + "\n" +
      R"({"rev":4,"at":"a","type":"archived","by":{"kind":"human"}})" + "\n";
  REQUIRE(FoldJournal("/j", done).ok());
  CHECK(FoldJournal("/j", done)->archived);
  CHECK(
      FoldError(
          done +
          R"({"rev":5,"at":"a","type":"claim-expired","previousOwner":{"kind":"agent"},"by":{"kind":"human"}})") ==
      "/r/tasks/0001-a/journal.jsonl: journal entry rev 5 is \"claim-expired\" on an archived "
      "card; only \"restored\" may follow archiving (line 5)");
  auto restored =
      FoldJournal("/j", done + R"({"rev":5,"at":"b","type":"restored","by":{"kind":"human"}})");
  REQUIRE(restored.ok());
  CHECK_FALSE(restored->archived);
  CHECK(restored->updated_at == "b");
  CHECK(FoldError(kCreated + "\n" +
                  R"({"rev":2,"at":"a","type":"restored","by":{"kind":"human"}})") ==
        "/r/tasks/0001-a/journal.jsonl: restored rev 2 returns a card that is not archived (line "
        "2)");
}

TEST_CASE("every entry type advances the revision") {
  std::string journal =
      kCreated + "\n" +
      R"({"rev":2,"at":"a","type":"artifact","path":"notes.md","stage":"draft"})" + "\n" +
      R"({"rev":3,"at":"b","type":"claim-expired","previousOwner":{"kind":"agent"},"by":{"kind":"human"}})" +
      "\n";
  auto s = FoldJournal("/j", journal);
  REQUIRE(s.ok());
  CHECK(s->stage_revision == 3);
  CHECK(s->stage == Location::kDraft);
  CHECK(s->updated_at == "b");
  CHECK(s->artifact_records.at(0).kind == std::nullopt);
}

TEST_CASE("ApplyEntry validates an entry before it could be appended") {
  auto s = FoldJournal("/j", kCreated + "\n");
  REQUIRE(s.ok());
  CardState state = *s;
  JournalEntry bad = Transition(2, Location::kDraft, Location::kDraft);
  Status st = ApplyEntry(state, bad);
  CHECK(st.code() == "corrupt");
  CHECK(st.message() == "transition rev 2 does not move the card (already at \"draft\")");
  CHECK(state.stage_revision == 1);  // untouched on failure

  JournalEntry empty_reason = Transition(2, Location::kDraft, Location::kDesigning);
  empty_reason.reason = "";
  CHECK(ApplyEntry(state, empty_reason).message() ==
        "field \"reason\" must be a non-empty string when present");

  JournalEntry bad_actor = Transition(2, Location::kDraft, Location::kDesigning);
  bad_actor.by = Actor{"robot", std::nullopt, std::nullopt};
  CHECK(ApplyEntry(state, bad_actor).message() ==
        "actor field \"kind\" must be human, agent, or command (got \"robot\")");

  CHECK(ApplyEntry(state, Transition(2, Location::kDraft, Location::kDesigning)).ok());
  CHECK(state.stage == Location::kDesigning);
  CHECK(state.stage_revision == 2);
  CHECK(state.entries.size() == 2);
}

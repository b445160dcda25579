// The filesystem store: create, read, list, artifact registration and transition commits
// under commit.lock (reference §1.2, §1.3, §1.8, §1.9, §2.2, §3.4, §5.7, §7.1).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "host/store.h"
#include "support/support.h"

using namespace devflow;
using devflow::test::FaultyFileSystem;
using devflow::test::FixedClock;
using devflow::test::Slurp;
using devflow::test::Spit;
using devflow::test::TempDir;

namespace {

const Actor kHuman{"human", std::nullopt, std::nullopt};
const Actor kAgent{"agent", std::nullopt, std::nullopt};
const Actor kGateActor{"command", std::string("devflow-agent-gate"), std::nullopt};

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

struct Board {
  TempDir tmp;
  FixedClock clock;
  CollectedWarnings warnings;
  FaultyFileSystem fs;
  Store store{tmp / ".devflow", fs, clock, warnings};

  std::string Dir(const std::string& id) { return tmp / (".devflow/tasks/" + id); }
  std::string Journal(const std::string& id) { return Dir(id) + "/journal.jsonl"; }
  std::string CardMd(const std::string& id) { return Dir(id) + "/card.md"; }

  Card Create(const std::string& title, ServiceClass c = ServiceClass::kStandard,
              const std::string& body = "Build it.") {
    CreateRequest r;
    r.title = title;
    r.body = body;
    r.service_class = c;
    auto card = store.Create(r);
    REQUIRE(card.ok());
    return *card;
  }

  Result<Card> Move(const std::string& id, Location to, std::optional<std::string> reason = {},
                    std::optional<Gate> gate = {}, Actor by = kHuman) {
    auto current = store.Read(id);
    REQUIRE(current.ok());
    return MoveAt(id, current->stage, to, current->stage_revision, reason, gate, by);
  }

  Result<Card> MoveAt(const std::string& id, Location from, Location to, int64_t rev,
                      std::optional<std::string> reason = {}, std::optional<Gate> gate = {},
                      Actor by = kHuman) {
    TransitionCommit c;
    c.id = id;
    c.expected_revision = rev;
    c.from = from;
    c.to = to;
    c.by = by;
    c.reason = reason;
    c.gate = gate;
    c.at = clock.NowIso();
    return store.CommitTransition(c);
  }

  Result<Card> Artifact(const std::string& id, const std::string& kind, int64_t rev,
                        const std::string& content = "# Design\n") {
    ArtifactRequest r;
    r.id = id;
    r.expected_revision = rev;
    r.by = kAgent;
    r.kind = kind;
    r.content = content;
    return store.AddArtifact(r);
  }
};

std::string LastLine(const std::string& text) {
  size_t end = text.size() - 1;  // text ends with '\n'
  size_t start = text.rfind('\n', end - 1);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start + 1));
}

int CountLines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

// ---- create / read / list ----------------------------------------------------------------

TEST_CASE("create writes the created line, a fresh card.md and a 4-digit sequence id") {
  Board b;
  Card c = b.Create("Login Page");
  CHECK(c.id == "0001-login-page");
  CHECK(c.stage == Location::kDraft);
  CHECK(c.stage_revision == 1);
  CHECK(c.root == b.tmp / ".devflow");
  CHECK(*Slurp(b.Journal(c.id)) ==
        "{\"rev\":1,\"at\":\"2026-09-16T08:00:00.000Z\",\"type\":\"created\",\"by\":{\"kind\":"
        "\"human\"}}\n");
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: Login Page\nstage: draft\nstageRevision: 1\n---\n\nBuild it.\n");
  auto read = b.store.Read(c.id);
  REQUIRE(read.ok());
  CHECK(read->title == "Login Page");
  CHECK(read->body == "Build it.");
  CHECK(read->created_at == "2026-09-16T08:00:00.000Z");
  CHECK(b.warnings.lines.empty());
}

TEST_CASE("create records a non-standard service class in the journal and the projection") {
  Board b;
  Card c = b.Create("Hotfix", ServiceClass::kEmergency);
  CHECK(
      LastLine(*Slurp(b.Journal(c.id))) ==
      R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"},"serviceClass":"emergency"})");
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: Hotfix\nstage: draft\nstageRevision: 1\nserviceClass: emergency\n---\n\n"
        "Build it.\n");
  CHECK(b.store.Read(c.id)->service_class == ServiceClass::kEmergency);
}

TEST_CASE("create continues the sequence over active and archived cards and never reissues") {
  Board b;
  CHECK(b.Create("One").id == "0001-one");
  REQUIRE(b.fs.CreateDirs(b.tmp / ".devflow/archive/2026-01/0041-old").ok());
  REQUIRE(b.fs.CreateDirs(b.tmp / ".devflow/tasks/0007-seven").ok());
  CHECK(b.Create("Next").id == "0042-next");
  REQUIRE(b.fs.CreateDirs(b.tmp / ".devflow/archive/2025-12/12345-big").ok());
  CHECK(b.Create("Big one").id == "12346-big-one");
}

// Expected ids measured with node 20: String(Number.parseInt(prefix, 10) + 1).padStart(4, '0'),
// upstream's nextSequence.
TEST_CASE("create allocates the next sequence as upstream's JavaScript number arithmetic does") {
  struct Case {
    const char* existing;
    const char* next;
  };
  const Case cases[] = {
      {"1000000000000000-big", "1000000000000001-next"},
      {"0000000007-padded", "0008-next"},
      {"9007199254740992-max", "9007199254740992-next"},   // 2^53 + 1 rounds back to 2^53
      {"9007199254740993-over", "9007199254740992-next"},  // parsed as 2^53
      {"99999999999999999-nines", "100000000000000000-next"},
      {"123456789012345678901-wide", "123456789012345680000-next"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.existing);
    Board b;
    REQUIRE(b.fs.CreateDirs(b.tmp / (std::string(".devflow/tasks/") + c.existing)).ok());
    CHECK(b.Create("Next").id == c.next);
  }
}

TEST_CASE("create counts only directories, and refuses a sequence String() writes as exponent") {
  Board b;
  REQUIRE(b.fs.CreateDirs(b.tmp / ".devflow/tasks").ok());
  Spit(b.tmp / ".devflow/tasks/0099-a-file", "not a card\n");
  CHECK(b.Create("One").id == "0001-one");
  // Upstream would create "1e+21-next", which no scan lists. (Infinity would need more digits
  // than a file name holds.)
  const std::pair<std::string, std::string> big_cases[] = {
      {std::string(21, '9'), "is 1e+21, which is not a card id"},
      {"1" + std::string(30, '0'), "is 1e+30, which is not a card id"},
  };
  for (const auto& [prefix, why] : big_cases) {
    CAPTURE(prefix);
    Board big;
    REQUIRE(big.fs.CreateDirs(big.tmp / (".devflow/tasks/" + prefix + "-big")).ok());
    CreateRequest r;
    r.title = "Next";
    auto made = big.store.Create(r);
    REQUIRE_FALSE(made.ok());
    CHECK(made.status().code() == "corrupt");
    CHECK(made.status().message().find(why) != std::string::npos);
  }
}

TEST_CASE("create rejects a blank title and an invalid slug") {
  Board b;
  CreateRequest r;
  r.title = "  \t";
  CHECK(b.store.Create(r).status().code() == "empty-title");
  r.title = "Ok";
  r.slug = "Bad Slug";
  auto bad = b.store.Create(r);
  CHECK(bad.status().code() == "invalid-slug");
  CHECK(bad.status().message() ==
        "slug \"Bad Slug\" must be lowercase letters, digits, and dashes, starting alphanumeric");
  r.slug = "custom";
  CHECK(b.store.Create(r)->id == "0001-custom");
}

TEST_CASE("create rescans after losing the exclusive mkdir and gives up with exists after 5") {
  Board b;
  b.fs.Fail("mkdir-exclusive", "/tasks/", EEXIST, 4);
  CHECK(b.Create("Race").id == "0001-race");
  b.fs.Clear();
  b.fs.Fail("mkdir-exclusive", "/tasks/", EEXIST, 5);
  CreateRequest r;
  r.title = "Lost";
  auto lost = b.store.Create(r);
  CHECK(lost.status().code() == "exists");
  CHECK(lost.status().message() ==
        "allocating a card directory for slug \"lost\" lost 5 sequence races; retry the creation");
}

TEST_CASE("create refuses a planted symlink at the next card directory, naming it and the fix") {
  // trial11 m3: a symlink planted where the next card goes made every attempt lose the
  // exclusive mkdir, and the refusal read "lost 5 sequence races; retry the creation".
  Board b;
  b.Create("One");
  TempDir elsewhere;
  std::filesystem::create_symlink(elsewhere.path(), b.Dir("0002-planted"));
  CreateRequest r;
  r.title = "Planted";
  auto planted = b.store.Create(r);
  CHECK(planted.status().code() == "exists");
  CHECK(planted.status().message() ==
        "cannot create card directory " + b.Dir("0002-planted") +
            ": it exists as a symbolic link, and the gate follows no symbolic link below the "
            "devflow root; remove or rename it and retry the creation");
  CHECK(std::filesystem::is_empty(elsewhere.path()));
  std::filesystem::remove(b.Dir("0002-planted"));
  CHECK(b.Create("Planted").id == "0002-planted");
}

TEST_CASE("reading an unknown or malformed id is not-found and never leaves tasks/") {
  Board b;
  b.Create("One");
  auto missing = b.store.Read("0009-nope");
  CHECK(missing.status().code() == "not-found");
  CHECK(missing.status().message() == "no card \"0009-nope\" in the devflow root " +
                                          (b.tmp / ".devflow") +
                                          "; run `devflow-gate card list` to see the card ids");
  Spit(b.tmp / ".devflow/secret/journal.jsonl",
       R"({"rev":1,"at":"a","type":"created","by":{"kind":"human"}})"
       "\n");
  for (std::string id : {"../secret", "0001-one/..", "/etc", "", "0001-One"}) {
    CAPTURE(id);
    CHECK(b.store.Read(id).status().code() == "not-found");
  }
}

TEST_CASE("reading an archived card answers archived") {
  Board b;
  Spit(b.tmp / ".devflow/archive/2026-02/0003-old/journal.jsonl",
       R"({"rev":1,"at":"a","type":"created","by":{"kind":"human"}})"
       "\n");
  auto r = b.store.Read("0003-old");
  CHECK(r.status().code() == "archived");
  CHECK(r.status().message() ==
        "card 0003-old is archived (archive/2026-02/0003-old); restore it before working on it "
        "again");
}

TEST_CASE("a lost card.md degrades to title = id with a warning") {
  Board b;
  Card c = b.Create("One");
  REQUIRE(b.fs.RemoveFile(b.CardMd(c.id)).ok());
  auto r = b.store.Read(c.id);
  REQUIRE(r.ok());
  CHECK(r->title == c.id);
  CHECK(r->body.empty());
  REQUIRE(b.warnings.lines.size() == 1);
  CHECK(b.warnings.lines[0] == "devflow: card 0001-one lost its projection file " + b.CardMd(c.id) +
                                   "; serving the journal-only view");
}

TEST_CASE("projection drift is warned and the journal wins") {
  Board b;
  Card c = b.Create("One");
  Spit(b.CardMd(c.id), "---\ntitle: One\nstage: done\nstageRevision: 7\n---\nbody\n");
  auto r = b.store.Read(c.id);
  REQUIRE(r.ok());
  CHECK(r->stage == Location::kDraft);
  CHECK(r->stage_revision == 1);
  REQUIRE(b.warnings.lines.size() == 1);
  CHECK(b.warnings.lines[0] == "devflow: projection drift for card 0001-one at " + b.CardMd(c.id) +
                                   ": stage \"done\" (journal: \"draft\"); stageRevision 7 "
                                   "(journal: 1); the journal wins");
}

TEST_CASE(
    "a projection one commit behind while commit.lock is held is a commit in flight, not drift") {
  // trial19 3a: readers beside a committer warned of drift in the window between the journal
  // append and the projection rewrite.
  Board b;
  Card c = b.Create("One");
  const std::string md = *Slurp(b.CardMd(c.id));
  REQUIRE(b.Move(c.id, Location::kDesigning).ok());
  Spit(b.CardMd(c.id), md);  // the projection as it was before that commit's rewrite
  Spit(b.Dir(c.id) + "/commit.lock", std::to_string(::getpid()) + "\n");
  REQUIRE(b.store.Read(c.id).ok());
  CHECK(b.warnings.lines.empty());
  // Without the lock, or two commits behind, it is drift.
  REQUIRE(b.fs.RemoveFile(b.Dir(c.id) + "/commit.lock").ok());
  REQUIRE(b.store.Read(c.id).ok());
  CHECK(b.warnings.lines.size() == 1);
}

TEST_CASE("a torn last journal line fails the read naming that line") {
  Board b;
  Card c = b.Create("One");
  REQUIRE(b.Move(c.id, Location::kDesigning).ok());
  std::string journal = *Slurp(b.Journal(c.id));
  Spit(b.Journal(c.id), journal + R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"transi)");
  auto r = b.store.Read(c.id);
  CHECK(r.status().code() == "corrupt");
  CHECK(r.status().message().rfind(b.Journal(c.id) + ":3: invalid JSON: ", 0) == 0);
  // A commit refuses to append after a torn line, too.
  auto m = b.MoveAt(c.id, Location::kDesigning, Location::kReady, 2);
  CHECK(m.status().code() == "corrupt");
  CHECK_FALSE(Exists(b.Dir(c.id) + "/commit.lock"));
}

TEST_CASE("list returns every active card by id and names a card that does not fold") {
  Board b;
  b.Create("One");
  b.Create("Two");
  b.Create("Three");
  auto all = b.store.List();
  REQUIRE(all.ok());
  REQUIRE(all->cards.size() == 3);
  CHECK(all->cards[0].id == "0001-one");
  CHECK(all->cards[1].id == "0002-two");
  CHECK(all->unlisted.empty());
  REQUIRE(b.fs.CreateDirs(b.tmp / ".devflow/tasks/not-a-card").ok());
  CHECK(b.store.List()->cards.size() == 3);
  // One broken card neither hides the others nor is skipped in silence (reference §1.7).
  Spit(b.Journal("0002-two"), "{}\n");
  auto broken = b.store.List();
  REQUIRE(broken.ok());
  REQUIRE(broken->cards.size() == 2);
  CHECK(broken->cards[0].id == "0001-one");
  CHECK(broken->cards[1].id == "0003-three");
  REQUIRE(broken->unlisted.size() == 1);
  CHECK(broken->unlisted[0].id == "0002-two");
  CHECK(broken->unlisted[0].why.code() == "corrupt");
  CHECK(broken->unlisted[0].why.message() ==
        b.Journal("0002-two") + ":1: journal entry field \"rev\" must be a positive integer");
}

TEST_CASE("list names a card id that is a symbolic link instead of skipping it") {
  // trial19 5c: a card dir replaced by a link (to a copy elsewhere) vanished from `card list`.
  Board b;
  b.Create("One");
  TempDir elsewhere;
  REQUIRE(::symlink(elsewhere.path().c_str(), b.Dir("0002-two").c_str()) == 0);
  auto listed = b.store.List();
  REQUIRE(listed.ok());
  REQUIRE(listed->cards.size() == 1);
  REQUIRE(listed->unlisted.size() == 1);
  CHECK(listed->unlisted[0].id == "0002-two");
  CHECK(listed->unlisted[0].why.code() == "ELOOP");
  CHECK(listed->unlisted[0].why.message() ==
        b.Dir("0002-two") +
            " is a symbolic link, not a card directory (ELOOP): the gate never follows a link "
            "below the root, so this card is neither read nor moved; replace the link with the "
            "card's own directory");
}

// What a creation SIGKILLed between reserving its directory and writing its journal leaves
// (the seam kills this child at exactly that write): an empty card directory. It is no card:
// list warns with the fix and lists the others, the next creation takes the next number.
TEST_CASE("a creation killed between its mkdir and its journal leaves no card that breaks list") {
  Board b;
  b.Create("One");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    b.fs.before = [](const std::string& op, const std::string& path) {
      if (op == "write-atomic" && path.ends_with("/journal.jsonl")) ::kill(::getpid(), SIGKILL);
    };
    CreateRequest r;
    r.title = "Two";
    (void)b.store.Create(r);
    ::_exit(0);  // not reached: the write kills the child
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  const std::string reserved = b.Dir("0002-two");
  REQUIRE(std::filesystem::is_directory(reserved));
  REQUIRE(std::filesystem::is_empty(reserved));

  auto listed = b.store.List();
  REQUIRE(listed.ok());
  REQUIRE(listed->cards.size() == 1);
  CHECK(listed->cards[0].id == "0001-one");
  CHECK(listed->unlisted.empty());
  CHECK(b.warnings.lines ==
        std::vector<std::string>{"devflow: " + reserved +
                                 " is an interrupted card creation (no journal): no card was "
                                 "created; remove it (rm -r " +
                                 reserved + ")"});
  CHECK(IsInterruptedCreation(b.fs, reserved).value());
  Spit(reserved + "/card.md", "x");  // what is left of a real card is not an interrupted creation
  CHECK_FALSE(IsInterruptedCreation(b.fs, reserved).value());
}

// The journal write fails (EIO through the seam): what the creation made is removed again,
// and the error carries the errno, the path and the fix.
TEST_CASE("a creation whose journal write fails removes its reserved directory") {
  Board b;
  b.Create("One");
  b.fs.Fail("write-atomic", "0002-two/journal.jsonl", EIO);
  CreateRequest r;
  r.title = "Two";
  auto failed = b.store.Create(r);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().code() == "EIO");
  const std::string dir = b.Dir("0002-two");
  CHECK(failed.status().message() == "card 0002-two was not created: write-atomic " + dir +
                                         "/journal.jsonl: Input/output error (EIO); check the "
                                         "disk holding " +
                                         dir + " and retry (the reserved directory " + dir +
                                         " was removed)");
  CHECK_FALSE(std::filesystem::exists(dir));
  // And when even the rmdir fails, it says how to finish by hand.
  b.fs.Fail("rmdir", "0002-two", EACCES);
  auto stuck = b.store.Create(r);
  REQUIRE_FALSE(stuck.ok());
  CHECK(stuck.status().message().ends_with("; the reserved directory could not be removed (rmdir " +
                                           dir +
                                           ": Permission denied (EACCES)): remove it by hand "
                                           "(rm -r " +
                                           dir + ")"));
  b.fs.Clear();
  CHECK(b.Create("Three").id == "0003-three");  // the stuck directory holds its number
}

// The journal is renamed into place and then the fsync of its directory fails (EIO through the
// seam): the card exists, so the error says it was created but may not be durable, and nothing
// of it is removed (issue 7, trial: it said "was not created" of a card that `card list` shows).
TEST_CASE("a creation whose journal is in place but whose directory fsync fails says so") {
  Board b;
  b.Create("One");
  b.fs.Fail("write-atomic-placed", "0002-two/journal.jsonl", EIO);
  CreateRequest r;
  r.title = "Two";
  auto failed = b.store.Create(r);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().code() == "EIO");
  const std::string dir = b.Dir("0002-two");
  CHECK(failed.status().message() ==
        "card 0002-two was created (its journal " + dir +
            "/journal.jsonl is in place) but may not survive a crash: fsync " + dir +
            ": Input/output error (EIO); do not create it again: check the disk holding " + dir +
            ", then devflow-gate card show 0002-two");
  b.fs.Clear();
  auto card = b.store.Read("0002-two");
  REQUIRE(card.ok());
  CHECK(card->stage_revision == 1);
  CHECK(std::filesystem::exists(dir + "/card.md"));
}

// ---- transitions ---------------------------------------------------------------------------

TEST_CASE("a legal move appends one line and rewrites only the projection keys") {
  Board b;
  Card c = b.Create("One");
  Spit(b.CardMd(c.id),
       "---\ntitle: One\nowner: ana  # lead\nstage: draft\nstageRevision: 1\nlabels: [a, b]\n---\n"
       "\n# Body\n\n  indented ---\n");
  auto moved = b.Move(c.id, Location::kDesigning);
  REQUIRE(moved.ok());
  CHECK(moved->stage == Location::kDesigning);
  CHECK(moved->stage_revision == 2);
  CHECK(moved->title == "One");
  CHECK(moved->updated_at == "2026-09-16T08:00:00.000Z");
  CHECK(
      LastLine(*Slurp(b.Journal(c.id))) ==
      R"({"rev":2,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"draft","to":"designing","by":{"kind":"human"}})");
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: One\nowner: ana  # lead\nstage: designing\nstageRevision: 2\nlabels: [a, "
        "b]\n---\n\n# Body\n\n  indented ---\n");
  CHECK_FALSE(Exists(b.Dir(c.id) + "/commit.lock"));
  CHECK(b.warnings.lines.empty());
}

TEST_CASE("gate-checks: checks-only, approvedBy plus checks, and empty checks writing no gate") {
  Board b;
  Card c = b.Create("One");
  REQUIRE(b.Move(c.id, Location::kDesigning).ok());
  Gate checks_only{std::nullopt, {GateCheck{kAgent, std::string("design is sound")}}};
  auto r = b.Move(c.id, Location::kReady, {}, checks_only);
  REQUIRE(r.ok());
  CHECK(
      LastLine(*Slurp(b.Journal(c.id))) ==
      R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"designing","to":"ready","by":{"kind":"human"},"gate":{"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"design is sound"}]}})");
  CHECK(b.store.Read(c.id)->entries.back().gate == checks_only);  // replayable through history

  Gate both{Actor{"human", std::string("ana"), std::nullopt}, {GateCheck{kAgent, std::nullopt}}};
  REQUIRE(b.Move(c.id, Location::kDeveloping, {}, both).ok());
  CHECK(
      LastLine(*Slurp(b.Journal(c.id))) ==
      R"({"rev":4,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"ready","to":"developing","by":{"kind":"human"},"gate":{"approvedBy":{"kind":"human","name":"ana"},"checks":[{"by":{"kind":"agent"},"verdict":"allowed"}]}})");

  REQUIRE(b.Move(c.id, Location::kReviewing, {}, Gate{}).ok());
  std::string last = LastLine(*Slurp(b.Journal(c.id)));
  CHECK(
      last ==
      R"({"rev":5,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"developing","to":"reviewing","by":{"kind":"human"}})");
  CHECK(last.find("gate") == std::string::npos);
}

TEST_CASE("transition contention: a commit decided against an old revision is rejected") {
  Board b;
  Card c = b.Create("One");
  REQUIRE(b.Move(c.id, Location::kDesigning).ok());
  REQUIRE(b.Move(c.id, Location::kReady).ok());
  // Store A reads revision 3 and starts deciding ready->developing; store B commits rev 4.
  Store a(b.tmp / ".devflow", RealFileSystem(), b.clock, b.warnings);
  Store other(b.tmp / ".devflow", RealFileSystem(), b.clock, b.warnings);
  auto seen = a.Read(c.id);
  REQUIRE(seen->stage_revision == 3);
  TransitionCommit park{c.id,
                        3,
                        Location::kReady,
                        Location::kBlocked,
                        kGateActor,
                        std::string("awaiting human approval for ready->developing"),
                        std::nullopt,
                        "2026-09-16T08:00:00.000Z",
                        {}};
  REQUIRE(other.CommitTransition(park).ok());
  TransitionCommit move{c.id,
                        3,
                        Location::kReady,
                        Location::kDeveloping,
                        kHuman,
                        std::nullopt,
                        std::nullopt,
                        "2026-09-16T08:00:00.000Z",
                        {}};
  auto lost = a.CommitTransition(move);
  CHECK(lost.status().code() == "revision-mismatch");
  CHECK(lost.status().message() ==
        "card 0001-one moved to revision 4 while the transition to \"developing\" was being "
        "decided; re-read and retry");
  std::string journal = *Slurp(b.Journal(c.id));
  CHECK(CountLines(journal) == 4);
  auto fold = FoldJournal(b.Journal(c.id), journal);
  REQUIRE(fold.ok());
  CHECK(fold->stage_revision == 4);
  CHECK(fold->stage == Location::kBlocked);
  CHECK_FALSE(Exists(b.Dir(c.id) + "/commit.lock"));
}

TEST_CASE("parked during the gate, the approved move that arrives later is revision-mismatch") {
  Board b;
  Card c = b.Create("One");
  REQUIRE(b.Move(c.id, Location::kDesigning).ok());
  auto decided = b.store.Read(c.id);  // the gate decides designing->ready against rev 2
  REQUIRE(b.MoveAt(c.id, Location::kDesigning, Location::kBlocked, 2,
                   std::string("agent check for designing->ready failed closed: x"), {}, kGateActor)
              .ok());
  auto late = b.MoveAt(c.id, decided->stage, Location::kReady, decided->stage_revision);
  CHECK(late.status().code() == "revision-mismatch");
  CHECK(late.status().message().find("moved to revision 3 while the transition to \"ready\"") !=
        std::string::npos);
  auto now = b.store.Read(c.id);
  CHECK(now->stage == Location::kBlocked);
  CHECK(now->blocked_from == Location::kDesigning);
  CHECK(now->stage_revision == 3);
}

TEST_CASE("illegal edges are refused under the lock: skip, jump to done, self, wrong recovery") {
  Board b;
  Card c = b.Create("One");
  std::string before = *Slurp(b.Journal(c.id));
  auto skip = b.MoveAt(c.id, Location::kDraft, Location::kReady, 1);
  CHECK(skip.status().code() == "illegal-edge");
  CHECK(skip.status().message() == "card 0001-one cannot move from \"draft\" to \"ready\"");
  CHECK(b.MoveAt(c.id, Location::kDraft, Location::kDone, 1).status().code() == "illegal-edge");
  CHECK(b.MoveAt(c.id, Location::kDraft, Location::kDraft, 1).status().code() == "illegal-edge");
  // The express skip edge is not open to a standard card.
  CHECK(b.MoveAt(c.id, Location::kDraft, Location::kDeveloping, 1).status().code() ==
        "illegal-edge");
  CHECK(*Slurp(b.Journal(c.id)) == before);
  REQUIRE(b.Move(c.id, Location::kBlocked).ok());
  auto wrong = b.MoveAt(c.id, Location::kBlocked, Location::kDesigning, 2);
  CHECK(wrong.status().code() == "illegal-edge");
  CHECK(wrong.status().message() == "card 0001-one cannot move from \"blocked\" to \"designing\"");
  CHECK_FALSE(Exists(b.Dir(c.id) + "/commit.lock"));
}

TEST_CASE("service class skip edges commit for their class") {
  Board b;
  Card c = b.Create("Hotfix", ServiceClass::kEmergency);
  REQUIRE(b.Move(c.id, Location::kDeveloping).ok());
  auto done = b.Move(c.id, Location::kDone);
  REQUIRE(done.ok());
  CHECK(done->stage == Location::kDone);
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: Hotfix\nstage: done\nstageRevision: 3\nserviceClass: emergency\n---\n\n"
        "Build it.\n");
}

TEST_CASE("blocked round trip and a done card cannot be blocked") {
  Board b;
  Card c = b.Create("One", ServiceClass::kEmergency);
  REQUIRE(b.Move(c.id, Location::kDeveloping).ok());
  auto parked = b.Move(c.id, Location::kBlocked, std::string("waiting"), {}, kGateActor);
  REQUIRE(parked.ok());
  CHECK(parked->blocked_from == Location::kDeveloping);
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: One\nstage: blocked\nstageRevision: 3\nserviceClass: emergency\nblockedFrom: "
        "developing\n---\n\nBuild it.\n");
  auto back = b.Move(c.id, Location::kDeveloping);
  REQUIRE(back.ok());
  CHECK_FALSE(back->blocked_from.has_value());
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: One\nstage: developing\nstageRevision: 4\nserviceClass: emergency\n---\n\n"
        "Build it.\n");
  REQUIRE(b.Move(c.id, Location::kDone).ok());
  auto blocked_done = b.MoveAt(c.id, Location::kDone, Location::kBlocked, 5);
  CHECK(blocked_done.status().code() == "illegal-edge");
  CHECK(blocked_done.status().message() ==
        "card 0001-one cannot move from \"done\" to \"blocked\"");
}

TEST_CASE("a rework move without a reason is reason-required, with one it records the reason") {
  Board b;
  Card c = b.Create("One", ServiceClass::kEmergency);
  REQUIRE(b.Move(c.id, Location::kDeveloping).ok());
  auto bare = b.Move(c.id, Location::kDesigning);
  CHECK(bare.status().code() == "reason-required");
  CHECK(bare.status().message() ==
        "reworking card 0001-one from \"developing\" back to \"designing\" requires a reason so "
        "the next holder knows what to fix; pass --reason");
  CHECK(b.Move(c.id, Location::kDesigning, std::string("")).status().code() == "reason-required");
  REQUIRE(b.Move(c.id, Location::kDesigning, std::string("the API shape is wrong")).ok());
  CHECK(
      LastLine(*Slurp(b.Journal(c.id))) ==
      R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"developing","to":"designing","by":{"kind":"human"},"reason":"the API shape is wrong"})");
}

TEST_CASE("a failed journal append is an infrastructure error and publishes nothing") {
  Board b;
  Card c = b.Create("One");
  std::string journal = *Slurp(b.Journal(c.id));
  std::string card_md = *Slurp(b.CardMd(c.id));
  b.fs.Fail("append", "journal.jsonl", ENOSPC);
  auto r = b.Move(c.id, Location::kDesigning);
  CHECK(r.status().code() == "ENOSPC");
  CHECK(r.status().message() == "append " + b.Journal(c.id) + ": No space left on device (ENOSPC)");
  CHECK(*Slurp(b.Journal(c.id)) == journal);
  CHECK(*Slurp(b.CardMd(c.id)) == card_md);
  CHECK_FALSE(Exists(b.Dir(c.id) + "/commit.lock"));
}

TEST_CASE("a failed projection rewrite only warns, the commit stands") {
  Board b;
  Card c = b.Create("One");
  b.fs.Fail("write-atomic", "card.md", EACCES);
  auto r = b.Move(c.id, Location::kDesigning);
  REQUIRE(r.ok());
  CHECK(r->stage == Location::kDesigning);
  CHECK(b.store.Read(c.id)->stage_revision == 2);
  REQUIRE(b.warnings.lines.size() >= 1);
  CHECK(b.warnings.lines[0] ==
        "devflow: failed to rewrite the projection for card 0001-one: "
        "write-atomic " +
            b.CardMd(c.id) +
            ": Permission denied (EACCES); the journal remains "
            "authoritative");
}

TEST_CASE("a lost card.md is rematerialised by the next commit") {
  Board b;
  Card c = b.Create("One");
  REQUIRE(b.fs.RemoveFile(b.CardMd(c.id)).ok());
  auto r = b.Move(c.id, Location::kDesigning);
  REQUIRE(r.ok());
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: 0001-one\nstage: designing\nstageRevision: 2\n---\n\n\n");
  CHECK(b.store.Read(c.id)->title == "0001-one");
}

TEST_CASE("a card.md edit that lands between the projection read and its rename is kept") {
  // verify19: a person edited card.md while a commit rewrote its front matter; the rename of
  // the rendered file (read before the edit) threw the edit away.
  Board b;
  Card c = b.Create("One");
  int edits = 0;
  b.fs.before = [&](const std::string& op, const std::string& path) {
    if (op != "write-atomic" || !path.ends_with("/card.md") || edits++ > 0) return;
    std::string text = *Slurp(path);
    Spit(path, text.substr(0, text.find("title: One")) + "title: Edited" +
                   text.substr(text.find("title: One") + 10) + "A line the person wrote.\n");
  };
  auto r = b.Move(c.id, Location::kDesigning);
  REQUIRE(r.ok());
  CHECK(edits == 2);  // the edit, then the write rendered from the edited file
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: Edited\nstage: designing\nstageRevision: 2\n---\n\nBuild it.\nA line the "
        "person wrote.\n");
  CHECK(r->title == "Edited");
  CHECK(b.warnings.lines.empty());
}

TEST_CASE("card.md edited on every projection rewrite is left as edited, with a warning") {
  Board b;
  Card c = b.Create("One");
  int edits = 0;
  b.fs.before = [&](const std::string& op, const std::string& path) {
    if (op != "write-atomic" || !path.ends_with("/card.md")) return;
    Spit(path, "---\ntitle: Edit " + std::to_string(++edits) + "\n---\n\nbody\n");
  };
  auto r = b.Move(c.id, Location::kDesigning);
  REQUIRE(r.ok());
  CHECK(edits == 4);
  CHECK(*Slurp(b.CardMd(c.id)) == "---\ntitle: Edit 4\n---\n\nbody\n");
  CHECK(b.store.Read(c.id)->stage_revision == 2);
  REQUIRE_FALSE(b.warnings.lines.empty());
  CHECK(b.warnings.lines[0] ==
        "devflow: failed to rewrite the projection for card 0001-one: card.md changed 4 times "
        "while its projection was rewritten; left as edited, its front matter may lag; the "
        "journal remains authoritative");
}

TEST_CASE("a lost card.md is not rematerialised over one a person wrote meanwhile") {
  Board b;
  Card c = b.Create("One");
  REQUIRE(b.fs.RemoveFile(b.CardMd(c.id)).ok());
  bool wrote = false;
  b.fs.before = [&](const std::string& op, const std::string& path) {
    if (op != "write-atomic" || !path.ends_with("/card.md") || wrote) return;
    wrote = true;
    Spit(path, "---\ntitle: Rewritten by hand\n---\n\nmine\n");
  };
  auto r = b.Move(c.id, Location::kDesigning);
  REQUIRE(r.ok());
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: Rewritten by hand\nstage: designing\nstageRevision: 2\n---\n\nmine\n");
}

// ---- the commit lock -----------------------------------------------------------------------

TEST_CASE("a held commit.lock is never broken: write-contended for a move, nothing written") {
  Board b;
  Card c = b.Create("One");
  std::string lock = b.Dir(c.id) + "/commit.lock";
  const std::string holder = std::to_string(test::LivePid()) + "\n";
  Spit(lock, holder);
  std::string journal = *Slurp(b.Journal(c.id));
  auto r = b.Move(c.id, Location::kDesigning);
  CHECK(r.status().code() == "write-contended");
  CHECK(r.status().message() ==
        "card 0001-one stayed locked by another commit (" + lock +
            "); nothing was written, so retry the move; if no devflow process is running, the "
            "lock is stale: remove " +
            lock);
  CHECK(Exists(lock));
  CHECK(*Slurp(lock) == holder);
  CHECK(*Slurp(b.Journal(c.id)) == journal);
}

TEST_CASE(
    "a commit.lock whose writer is gone is still never broken, and the refusal says the writer "
    "is not running and how to clear it") {
  Board b;
  Card c = b.Create("One");
  std::string lock = b.Dir(c.id) + "/commit.lock";
  const int64_t dead = test::DeadPid();
  Spit(lock, std::to_string(dead) + "\n");
  std::string journal = *Slurp(b.Journal(c.id));
  auto r = b.Move(c.id, Location::kDesigning);
  CHECK(r.status().code() == "write-contended");
  CHECK(r.status().message() ==
        "card 0001-one stayed locked by another commit (" + lock + ") whose writer, pid " +
            std::to_string(dead) +
            ", is not running on this machine: a commit that ended without releasing its lock "
            "(killed mid-commit); nothing was written. A lock is never broken by age: if no "
            "devflow process in another container or on another machine uses this root, remove " +
            lock + ", then retry the move");
  CHECK(*Slurp(lock) == std::to_string(dead) + "\n");
  CHECK(*Slurp(b.Journal(c.id)) == journal);
  auto artifact = b.Artifact(c.id, "design", 1);
  CHECK(artifact.status().code() == "write-contended");
  CHECK(artifact.status().message().find("is not running on this machine") != std::string::npos);
  CHECK(artifact.status().message().find(", then retry the registration") != std::string::npos);
}

TEST_CASE("ReadCommitLockHolder reads the pid, content that names none, and a read error") {
  TempDir dir;
  const std::string lock = dir / "commit.lock";
  Spit(lock, "4242\n");
  CommitLockHolder pid = ReadCommitLockHolder(RealFileSystem(), lock);
  CHECK(pid.kind == CommitLockHolder::Kind::kPid);
  CHECK(pid.pid == 4242);
  Spit(lock, "held by me\r\n");
  CommitLockHolder none = ReadCommitLockHolder(RealFileSystem(), lock);
  CHECK(none.kind == CommitLockHolder::Kind::kNoPid);
  CHECK(none.text == "held by me");
  Spit(lock, "12345678901\n");  // eleven digits: no pid
  CHECK(ReadCommitLockHolder(RealFileSystem(), lock).kind == CommitLockHolder::Kind::kNoPid);
  CommitLockHolder gone = ReadCommitLockHolder(RealFileSystem(), dir / "absent.lock");
  CHECK(gone.kind == CommitLockHolder::Kind::kUnreadable);
  CHECK(gone.text.find("ENOENT") != std::string::npos);
}

TEST_CASE("a held commit.lock makes an artifact registration write-contended too") {
  Board b;
  Card c = b.Create("One");
  std::string lock = b.Dir(c.id) + "/commit.lock";
  const std::string holder = std::to_string(test::LivePid()) + "\n";
  Spit(lock, holder);
  std::string journal = *Slurp(b.Journal(c.id));
  auto r = b.Artifact(c.id, "design", 1);
  CHECK(r.status().code() == "write-contended");
  CHECK(r.status().message().find("nothing was written, so retry the registration") !=
        std::string::npos);
  CHECK(Exists(lock));
  CHECK(*Slurp(b.Journal(c.id)) == journal);
}

TEST_CASE("a lock that vanishes between EEXIST and the retry is taken and the commit succeeds") {
  Board b;
  Card c = b.Create("One");
  std::string lock = b.Dir(c.id) + "/commit.lock";
  Spit(lock, "1\n");
  int attempts = 0;
  b.fs.before = [&](const std::string& op, const std::string& path) {
    if (op == "create-exclusive" && path == lock && ++attempts == 2) ::unlink(lock.c_str());
  };
  auto r = b.Move(c.id, Location::kDesigning);
  REQUIRE(r.ok());
  CHECK(attempts == 2);
  CHECK(r->stage_revision == 2);
  CHECK_FALSE(Exists(lock));
}

TEST_CASE("the lock file holds the committer's pid while the commit runs") {
  Board b;
  Card c = b.Create("One");
  std::string lock = b.Dir(c.id) + "/commit.lock";
  std::optional<std::string> seen;
  b.fs.before = [&](const std::string& op, const std::string& path) {
    if (op == "append") seen = Slurp(lock);
  };
  REQUIRE(b.Move(c.id, Location::kDesigning).ok());
  CHECK(seen == std::to_string(::getpid()) + "\n");
  CHECK_FALSE(Exists(lock));
}

TEST_CASE("a lock that cannot be created for another reason is an infrastructure error") {
  Board b;
  Card c = b.Create("One");
  std::string journal = *Slurp(b.Journal(c.id));
  b.fs.Fail("create-exclusive", "commit.lock", EACCES);
  auto r = b.Move(c.id, Location::kDesigning);
  CHECK(r.status().code() == "EACCES");
  CHECK(r.status().message() ==
        "create-exclusive " + b.Dir(c.id) + "/commit.lock: Permission denied (EACCES)");
  CHECK(*Slurp(b.Journal(c.id)) == journal);
  auto a = b.Artifact(c.id, "design", 1);
  CHECK(a.status().code() == "EACCES");
  CHECK(*Slurp(b.Journal(c.id)) == journal);
}

// ---- artifacts -----------------------------------------------------------------------------

TEST_CASE("a store-written artifact lands at artifacts/<rev>-<kind>.md and advances the card") {
  Board b;
  Card c = b.Create("One");
  REQUIRE(b.Move(c.id, Location::kDesigning).ok());
  auto r = b.Artifact(c.id, "design", 2, "# Design\nbody\n");
  REQUIRE(r.ok());
  CHECK(r->stage_revision == 3);
  CHECK(*Slurp(b.Dir(c.id) + "/artifacts/3-design.md") == "# Design\nbody\n");
  CHECK(
      LastLine(*Slurp(b.Journal(c.id))) ==
      R"({"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"artifact","path":"artifacts/3-design.md","stage":"designing","by":{"kind":"agent"},"kind":"design"})");
  REQUIRE(b.Artifact(c.id, "design", 3, "v2").ok());
  auto card = b.store.Read(c.id);
  REQUIRE(card->artifact_records.size() == 2);
  CHECK(card->NewestOfKind("design")->path == "artifacts/4-design.md");
  CHECK(card->NewestOfKind("prd") == nullptr);
  CHECK(*Slurp(b.CardMd(c.id)) ==
        "---\ntitle: One\nstage: designing\nstageRevision: 4\n---\n\nBuild it.\n");
}

TEST_CASE("artifact rules: bad kind, stale revision, blocked and done cards") {
  Board b;
  Card c = b.Create("One", ServiceClass::kEmergency);
  CHECK(b.Artifact(c.id, "Bad Kind", 1).status().code() == "invalid-kind");
  auto stale = b.Artifact(c.id, "design", 7);
  CHECK(stale.status().code() == "revision-mismatch");
  CHECK(stale.status().message() ==
        "card 0001-one is at revision 1, not the expected 7; re-read the card and retry");
  REQUIRE(b.Move(c.id, Location::kBlocked).ok());
  auto blocked = b.Artifact(c.id, "design", 2);
  CHECK(blocked.status().code() == "illegal-edge");
  CHECK(blocked.status().message() ==
        "card 0001-one cannot register an artifact while \"blocked\"");
  REQUIRE(b.Move(c.id, Location::kDraft).ok());
  REQUIRE(b.Move(c.id, Location::kDeveloping).ok());
  REQUIRE(b.Move(c.id, Location::kDone).ok());
  auto done = b.Artifact(c.id, "design", 5);
  CHECK(done.status().code() == "illegal-edge");
  CHECK(done.status().message() == "card 0001-one cannot register an artifact while \"done\"");
  CHECK_FALSE(Exists(b.Dir(c.id) + "/artifacts/6-design.md"));
}

TEST_CASE("a rival commit before the lock leaves an orphan a same-revision retry overwrites") {
  Board b;
  Card c = b.Create("One");
  std::string lock = b.Dir(c.id) + "/commit.lock";
  // A rival moves the card between the artifact file write and the lock.
  bool rival_done = false;
  b.fs.before = [&](const std::string& op, const std::string& path) {
    if (op == "create-exclusive" && path == lock && !rival_done) {
      rival_done = true;
      Store rival(b.tmp / ".devflow", RealFileSystem(), b.clock, b.warnings);
      TransitionCommit m{c.id,
                         1,
                         Location::kDraft,
                         Location::kDesigning,
                         kHuman,
                         std::nullopt,
                         std::nullopt,
                         "2026-09-16T08:00:00.000Z",
                         {}};
      REQUIRE(rival.CommitTransition(m).ok());
    }
  };
  auto lost = b.Artifact(c.id, "design", 1, "first");
  CHECK(lost.status().code() == "revision-mismatch");
  CHECK(lost.status().message() ==
        "card 0001-one is at revision 2, not the expected 1; re-read the card and retry");
  CHECK(*Slurp(b.Dir(c.id) + "/artifacts/2-design.md") == "first");  // orphan
  CHECK(b.store.Read(c.id)->artifact_records.empty());
  b.fs.before = nullptr;
  // The rival moved it to designing at rev 2; a retry at rev 2 writes 3-design.md.
  REQUIRE(b.Artifact(c.id, "design", 2, "second").ok());
  CHECK(*Slurp(b.Dir(c.id) + "/artifacts/3-design.md") == "second");
}

TEST_CASE("a registration that fails on a fault of its own removes the artifact file it wrote") {
  // issue 7, trial: `artifact add` that failed after its file was renamed into place left
  // artifacts/<rev>-<kind>.md with no journal entry. Each fault is injected for real at the seam:
  // the journal append (ENOSPC), taking the lock (EACCES, ENOSPC), the fsync of artifacts/
  // after the rename (EIO), reading the journal again under the lock (EIO).
  struct Fault {
    std::string op, path, shown;
    int err;
  };
  const std::vector<Fault> faults = {
      {"append", "journal.jsonl", "append", ENOSPC},
      {"create-exclusive", "commit.lock", "create-exclusive", EACCES},
      {"create-exclusive", "commit.lock", "create-exclusive", ENOSPC},
      {"write-atomic-placed", "artifacts/2-design.md", "fsync", EIO},
      {"read", "journal.jsonl", "read", EIO},
  };
  for (const Fault& f : faults) {
    CAPTURE(f.op);
    CAPTURE(f.err);
    Board b;
    Card c = b.Create("One");
    const std::string journal = *Slurp(b.Journal(c.id));
    const std::string placed = b.Dir(c.id) + "/artifacts/2-design.md";
    // The read fault must spare the first read (before the file is written): fail the second.
    int reads = 0;
    if (f.op == "read") {
      b.fs.before = [&](const std::string& op, const std::string& path) {
        if (op == "read" && path == b.Journal(c.id) && ++reads == 1) {
          b.fs.Fail("read", f.path, f.err, 1);
        }
      };
    } else {
      b.fs.Fail(f.op, f.path, f.err);
    }
    auto r = b.Artifact(c.id, "design", 1, "never registered");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrnoName(f.err));
    CHECK(r.status().message().ends_with(" (the unregistered artifact file " + placed +
                                         " was removed)"));
    CHECK_FALSE(Exists(placed));
    CHECK(*Slurp(b.Journal(c.id)) == journal);
    b.fs.Clear();
    b.fs.before = nullptr;
    CHECK(b.store.Read(c.id)->artifact_records.empty());
    // Once the fault is gone the same registration commits, its file in place.
    REQUIRE(b.Artifact(c.id, "design", 1, "registered").ok());
    CHECK(*Slurp(placed) == "registered");
  }
}

TEST_CASE("a same-revision retry overwrites the orphan left by a contended registration") {
  Board b;
  Card c = b.Create("One");
  std::string lock = b.Dir(c.id) + "/commit.lock";
  Spit(lock, "1\n");
  CHECK(b.Artifact(c.id, "design", 1, "orphan").status().code() == "write-contended");
  CHECK(*Slurp(b.Dir(c.id) + "/artifacts/2-design.md") == "orphan");
  ::unlink(lock.c_str());
  REQUIRE(b.Artifact(c.id, "design", 1, "kept").ok());
  CHECK(*Slurp(b.Dir(c.id) + "/artifacts/2-design.md") == "kept");
  CHECK(b.store.Read(c.id)->NewestOfKind("design")->rev == 2);
}

// Two real processes racing one card (reference §7.1): the bug upstream fixed with commit.lock
// was two processes both appending "rev 4", leaving a journal the strict fold rejects.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "host/store.h"
#include "support/support.h"

using namespace devflow;
using devflow::test::FaultyFileSystem;
using devflow::test::FixedClock;
using devflow::test::Slurp;
using devflow::test::TempDir;

namespace {

// Outcome codes a racer reports through its exit status.
constexpr int kCommitted = 0;
constexpr int kLostRace = 1;
constexpr int kOther = 2;

int Race(Store& store, const std::string& id, Location from, Location to, int64_t rev) {
  TransitionCommit c;
  c.id = id;
  c.expected_revision = rev;
  c.from = from;
  c.to = to;
  c.by = Actor{"human", std::nullopt, std::nullopt};
  c.at = "2026-09-16T08:00:00.000Z";
  auto r = store.CommitTransition(c);
  if (r.ok()) return kCommitted;
  return r.status().code() == "revision-mismatch" ? kLostRace : kOther;
}

// Holds each racer inside its read-check-append window for a while, so that without the lock
// both would read the same revision and both append (the upstream bug), not just by luck.
void WidenTheWindow(FaultyFileSystem& fs) {
  fs.before = [](const std::string& op, const std::string&) {
    if (op == "append") ::usleep(30 * 1000);
  };
}

}  // namespace

TEST_CASE("two processes moving one card commit exactly one of them per revision") {
  TempDir tmp;
  FixedClock clock;
  CollectedWarnings warnings;
  FaultyFileSystem fs;
  Store store(tmp / ".devflow", fs, clock, warnings);
  CreateRequest req;
  req.title = "Contended";
  auto card = store.Create(req);
  REQUIRE(card.ok());
  const std::string id = card->id;
  TransitionCommit first{id,
                         1,
                         Location::kDraft,
                         Location::kDesigning,
                         Actor{"human", std::nullopt, std::nullopt},
                         std::nullopt,
                         std::nullopt,
                         "2026-09-16T08:00:00.000Z",
                         {}};
  REQUIRE(store.CommitTransition(first).ok());
  WidenTheWindow(fs);

  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    auto now = store.Read(id);
    REQUIRE(now.ok());
    Location from = now->stage;
    Location to = from == Location::kBlocked ? Location::kDesigning : Location::kBlocked;
    int64_t rev = now->stage_revision;

    int go[2];
    REQUIRE(::pipe(go) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(go[1]);
      char byte;
      if (::read(go[0], &byte, 1) != 1) _exit(kOther);
      FixedClock child_clock;
      CollectedWarnings child_warnings;
      FaultyFileSystem child_fs;
      WidenTheWindow(child_fs);
      Store own(tmp / ".devflow", child_fs, child_clock, child_warnings);
      _exit(Race(own, id, from, to, rev));
    }
    ::close(go[0]);
    REQUIRE(::write(go[1], "x", 1) == 1);  // start both racers together
    int mine = Race(store, id, from, to, rev);
    ::close(go[1]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    int theirs = WEXITSTATUS(status);
    CHECK(((mine == kCommitted && theirs == kLostRace) ||
           (mine == kLostRace && theirs == kCommitted)));

    auto after = store.Read(id);
    REQUIRE(after.ok());
    CHECK(after->stage_revision == rev + 1);
    CHECK(after->stage == to);
  }
  std::string journal = *Slurp(store.CardDir(id) + "/journal.jsonl");
  auto fold = FoldJournal("journal", journal);
  REQUIRE(fold.ok());
  CHECK(fold->stage_revision == 22);
  CHECK(::access((store.CardDir(id) + "/commit.lock").c_str(), F_OK) != 0);
}

// One read of each thing a move needs (issue 11 item 1): the journal is read once before the
// waterfall and once under the commit lock, card.md once before and once by the projection
// rewrite (and once more under the lock when a checker ran), each input artifact once, and the
// policies decide on the executor's read.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "gate/fixture.h"

using namespace devflow;
using namespace devflow::gatetest;

TEST_CASE("a gated move reads the journal, card.md and each input once, and the card once") {
  Rig rig;
  const std::string id = "0001-a";
  WriteCard(rig.root, id, {{"prd", "# PRD\n"}, {"design", "# Design\n"}});
  std::map<std::string, int> reads;
  rig.fs.before = [&](const std::string& op, const std::string& path) {
    if (op == "read") ++reads[path.substr(path.rfind('/') + 1)];
  };
  rig.scripted.Allow("covered");
  MoveOutcome outcome = rig.Move(id);
  REQUIRE(outcome.code == "committed");
  CHECK(rig.card_reads == 0);  // the gate decided on the executor's read of the card
  CHECK(reads["journal.jsonl"] == 2);
  // card.md and each input once for the prompt, and once more under the commit lock: a
  // checker ran, so time passed, and the commit re-hashes the bytes it judged (issue 7,
  // docs/decisions.md), the card's title and body too (trial17 B1); card.md a third time by
  // the projection rewrite.
  CHECK(reads["card.md"] == 3);
  CHECK(reads["3-prd.md"] == 2);
  CHECK(reads["4-design.md"] == 2);
  REQUIRE(rig.scripted.requests.size() == 1);
  CHECK(rig.scripted.requests[0].prompt.Joined().find("Card 0001-a") != std::string::npos);
}

TEST_CASE("a cache-hit move reads each input once: no re-hash under the commit lock") {
  Rig rig;
  rig.EnableCache();
  const std::string id = "0001-a";
  WriteCard(rig.root, id, {{"prd", "# PRD\n"}, {"design", "# Design\n"}});
  rig.scripted.Allow("covered");
  // A first move fills the cache, then the card goes back to designing.
  const std::string journal = Slurp(rig.CardDir(id) + "/journal.jsonl").value();
  REQUIRE(rig.Move(id).code == "committed");
  Spit(rig.CardDir(id) + "/journal.jsonl", journal);
  std::map<std::string, int> reads;
  rig.fs.before = [&](const std::string& op, const std::string& path) {
    if (op == "read") ++reads[path.substr(path.rfind('/') + 1)];
  };
  MoveOutcome hit = rig.Move(id);
  REQUIRE(hit.code == "committed");
  REQUIRE(hit.checks.size() == 1);
  CHECK(hit.checks[0].summary == "[cached] covered");
  CHECK(reads["3-prd.md"] == 1);
  CHECK(reads["4-design.md"] == 1);
  CHECK(rig.scripted.requests.size() == 1);  // the filling move's; the hit dispatched none
}

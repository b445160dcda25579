// One read of each thing a move needs (issue 11 item 1): the journal is read once before the
// waterfall and once under the commit lock, card.md once before and once by the projection
// rewrite, each input artifact once, and the policies decide on the executor's read.
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
  CHECK(reads["card.md"] == 2);
  CHECK(reads["3-prd.md"] == 1);
  CHECK(reads["4-design.md"] == 1);
  REQUIRE(rig.scripted.requests.size() == 1);
  CHECK(rig.scripted.requests[0].prompt.Joined().find("Card 0001-a") != std::string::npos);
}

// `devflow-gate move` processes racing one card at one revision: exactly one commits, the
// journal stays a strict fold, and no lock is left behind (SPEC §8).
#include <doctest/doctest.h>

#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

void Race(int processes) {
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();

  std::vector<test::RunResult> results(processes);
  std::latch start(processes);
  std::vector<std::thread> threads;
  for (int i = 0; i < processes; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = ws.Gate({"move", ws.card(), "ready", "--expect-revision", "4", "--json"});
    });
  }
  for (auto& t : threads) t.join();

  int committed = 0;
  for (const auto& r : results) {
    INFO("exit " << r.exit_code << " stdout " << r.out << " stderr " << r.err);
    auto j = nlohmann::json::parse(r.out);
    if (r.exit_code == 0) {
      ++committed;
      CHECK(j["code"] == "committed");
      CHECK(j["card"]["stageRevision"] == 5);
    } else if (r.exit_code == 4) {
      CHECK((j["code"] == "revision-mismatch" || j["code"] == "write-contended"));
    } else {
      CHECK(r.exit_code == 1);
    }
  }
  CHECK(committed == 1);

  auto lines = ws.JournalLines();
  REQUIRE(lines.size() == 5);
  for (size_t i = 0; i < lines.size(); ++i) {
    CHECK(nlohmann::json::parse(lines[i])["rev"] == i + 1);
  }
  CHECK(lines[4].find("\"type\":\"transition\",\"from\":\"designing\",\"to\":\"ready\"") !=
        std::string::npos);
  auto card = ws.ShowJson();  // the journal folds
  CHECK(card["stage"] == "ready");
  CHECK(card["stageRevision"] == 5);
  CHECK_FALSE(std::filesystem::exists(ws.card_dir() + "/commit.lock"));
}

TEST_CASE("two move processes racing one card at one revision commit exactly one") { Race(2); }

TEST_CASE("eight move processes racing one card at one revision commit exactly one") { Race(8); }

}  // namespace
}  // namespace devflow::e2e

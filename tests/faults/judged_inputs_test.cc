// Issue 7 (this session's trial, "Inputs changed during the check"): an input artifact rewritten
// in place (same path, same kind:rev, new bytes) while the checker judges the old bytes is never
// committed as judged. The commit re-hashes the judged inputs under its lock; when they changed
// nothing is committed, the move fails closed (fault report, park, ledger row naming the file),
// and every checked decision's ledger row carries the judged inputs' inputsSha256.
//
// Synchronised on FIFOs (tests/fixtures/server/gated_allow.sh): the checker says "started" once
// it has read its prompt and waits for "go"; the test rewrites the design in between.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "faults/faults.h"

namespace devflow::faults {
namespace {

const char kEdited[] = "# Design\n\nEVIL: now cites REQ-99 and drops the auth section\n";

// The agent gate on designing->ready with the FIFO-gated allowing checker (sandbox off, so it
// can reach the FIFOs outside the workspace).
std::string GatedConfig(const std::string& fifos, const std::string& cache_dir = "") {
  GateYaml yaml;
  yaml.command = {Fixture("server/gated_allow.sh"), fifos};
  yaml.cache_dir = cache_dir;
  std::string text = yaml.Text();
  const std::string after = "command: " + e2e::YamlList(yaml.command) + "\n";
  text.insert(text.find(after) + after.size(), "    sandbox: off\n");
  return text;
}

// What a check of CardInDesigning's card judged: its text, prd:3 and design:4.
std::string JudgedId() { return e2e::CardInDesigningJudged(); }

// Rewrites `path` in place: the same inode, new bytes (as an editor or a producer would).
void RewriteInPlace(const std::string& path, const std::string& text) {
  struct stat before {};
  REQUIRE(::stat(path.c_str(), &before) == 0);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  struct stat after {};
  REQUIRE(::stat(path.c_str(), &after) == 0);
  REQUIRE(after.st_ino == before.st_ino);
}

std::vector<nlohmann::json> LedgerRows(const Workspace& ws) {
  std::vector<nlohmann::json> rows;
  for (const auto& line : e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value()))
    rows.push_back(nlohmann::json::parse(line));
  return rows;
}

struct Fifos {
  test::TempDir dir;
  Fifos() {
    REQUIRE(::mkfifo((dir / "started").c_str(), 0600) == 0);
    REQUIRE(::mkfifo((dir / "go").c_str(), 0600) == 0);
  }
};

// `move <card> ready` with the gated checker: `meanwhile` runs once the checker has read its
// prompt (it says so on "started"), then the checker allows (on "go"); the move's result.
test::RunResult MoveReadyWhileJudging(
    const Workspace& ws, const Fifos& fifos, const std::function<void()>& meanwhile = [] {}) {
  test::RunResult moved;
  std::thread mover([&] { moved = ws.Gate({"move", kCard, "ready"}); });
  CHECK(test::Slurp(fifos.dir / "started").value_or("") == "started\n");
  meanwhile();
  test::Spit(fifos.dir / "go", "go\n");
  mover.join();
  return moved;
}

// The move failed closed with `fault` at its commit: exit 3, parked, no transition to ready.
void RequireFailedClosedAtCommit(const Workspace& ws, const test::RunResult& moved,
                                 const std::string& fault) {
  INFO(moved.out << moved.err);
  CHECK(moved.exit_code == 3);
  CHECK(moved.out == CouldNotRunWithReport(ws, fault) + ParkedLine());
  // No transition to ready was appended: the last line is the park, nothing after it.
  RequireParked(ws, fault);
  for (const auto& line : ws.JournalLines())
    CHECK(line.find("\"to\":\"ready\"") == std::string::npos);
}

TEST_CASE(
    "judged inputs: a design rewritten in place while the checker judges it is not committed, "
    "the move fails closed naming the file") {
  Fifos fifos;
  Workspace ws(GatedConfig(fifos.dir.path(), ".devflow/cache/agent-gate"));
  ws.CardInDesigning();
  const std::string design = ws.card_dir() + "/artifacts/4-design.md";

  // The checker has read its prompt (the old bytes) when the design is rewritten.
  const test::RunResult moved =
      MoveReadyWhileJudging(ws, fifos, [&] { RewriteInPlace(design, kEdited); });

  const std::string fault =
      design + " changed while the checker judged it; move again to judge the new bytes";
  RequireFailedClosedAtCommit(ws, moved, fault);
  // The fault report names the file and keeps what the checker said of the old bytes.
  const std::string report = test::Slurp(OnlyFaultReport(ws.root())).value();
  CHECK(report.find("- fault: " + fault + "\n") != std::string::npos);
  CHECK(report.find("gated ok") != std::string::npos);
  // The outcome row: parked, the fault, the report, and the bytes that were judged (not the
  // bytes on disk now).
  const nlohmann::json row = LedgerRows(ws).back();
  CHECK(row["outcome"] == "parked");
  CHECK(row["message"].get<std::string>().find(fault) != std::string::npos);
  CHECK(row["faultReport"] == OnlyFaultReport(ws.root()));
  CHECK(row["inputsSha256"] == JudgedId());
  CHECK(row["inputsSha256"] != e2e::CardInDesigningJudged(e2e::kPrd, kEdited));
  // The allow was cached for the bytes it judged, so a retry on the new bytes is a warned
  // miss that runs the checker again (faults/verdict_trust_test.cc), never this allow.
  std::vector<std::string> records;
  for (const auto& e : std::filesystem::directory_iterator(ws / ".devflow/cache/agent-gate")) {
    records.push_back(e.path());
  }
  REQUIRE(records.size() == 1);
  CHECK(nlohmann::json::parse(test::Slurp(records[0]).value())["inputsSha256"] == JudgedId());

  // Recovered and moved again: the checker judges the new bytes (the cached allow is a warned
  // miss), and that commit's row names the new bytes' digest.
  auto recovered = ws.Gate({"move", kCard, "designing"});
  INFO(recovered.out << recovered.err);
  REQUIRE(recovered.exit_code == 0);
  const test::RunResult again = MoveReadyWhileJudging(ws, fifos);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.err.find("judged other contents of [design:4, prd:3]") != std::string::npos);
  CHECK(LedgerRows(ws).back()["outcome"] == "allowed");
  CHECK(LedgerRows(ws).back()["inputsSha256"] == e2e::CardInDesigningJudged(e2e::kPrd, kEdited));
}

TEST_CASE(
    "judged inputs: the card's body edited while the checker judges it is not committed, the "
    "move is refused naming card.md, unparked, and the next move judges the new text") {
  // trial17 B1: the prompt carries card.md's title and body beside the artifacts, so the commit
  // re-checks them under its lock as it re-checks the artifacts. trial18: the edit is the
  // user's, not a fault of the deployment, so the card is not parked: a conflict, exit 4.
  Fifos fifos;
  Workspace ws(GatedConfig(fifos.dir.path(), ".devflow/cache/agent-gate"));
  ws.CardInDesigning();
  const std::string card_md = ws.card_dir() + "/card.md";
  const std::string original = test::Slurp(card_md).value();
  const auto before = ws.JournalLines();

  const test::RunResult moved = MoveReadyWhileJudging(
      ws, fifos, [&] { test::Spit(card_md, original + "\n- REQ-9: the export must be signed\n"); });

  INFO(moved.out << moved.err);
  const std::string refusal = card_md +
                              "'s title or body changed while the checker judged it; move again "
                              "to judge the new text";
  CHECK(moved.exit_code == 4);
  CHECK(moved.out.rfind(refusal + "; nothing was committed", 0) == 0);
  CHECK(ws.JournalLines() == before);  // no transition, no park
  CHECK(!std::filesystem::exists(ws.root() + "/reports/agent-gate/faults"));
  const nlohmann::json row = LedgerRows(ws).back();
  CHECK(row["outcome"] == "rejected");
  CHECK(row["code"] == "card-edited");
  CHECK(row["message"].get<std::string>().rfind(refusal, 0) == 0);
  CHECK(row["inputsSha256"] == JudgedId());  // the text it judged, not the text on disk now

  // Moved again, as the message says: the cached allow judged other text (a warned miss), the
  // checker judges the new text, and that commit stands.
  const test::RunResult again = MoveReadyWhileJudging(ws, fifos);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.err.find("of the card's title and body") != std::string::npos);
  CHECK(LedgerRows(ws).back()["outcome"] == "allowed");
  CHECK(LedgerRows(ws).back()["inputsSha256"] != JudgedId());
}

TEST_CASE(
    "judged inputs: unchanged inputs commit, and every checked decision's ledger row names the "
    "inputsSha256 judged, a cache hit's too") {
  Fifos fifos;
  Workspace ws(GatedConfig(fifos.dir.path(), ".devflow/cache/agent-gate"));
  ws.CardInDesigning();
  const std::string journal = test::Slurp(ws.journal_path()).value();
  const std::string card_md = test::Slurp(ws.card_dir() + "/card.md").value();

  const test::RunResult moved = MoveReadyWhileJudging(ws, fifos);
  INFO(moved.out << moved.err);
  CHECK(moved.exit_code == 0);
  RequireCommitted(ws, "gated ok");
  CHECK(LedgerRows(ws).back()["outcome"] == "allowed");
  CHECK(LedgerRows(ws).back()["inputsSha256"] == JudgedId());

  // The same move again: a cache hit (no checker, so no FIFO to answer), the same digest.
  test::Spit(ws.journal_path(), journal);
  test::Spit(ws.card_dir() + "/card.md", card_md);
  auto hit = ws.Gate({"move", kCard, "ready"});
  INFO(hit.out << hit.err);
  CHECK(hit.exit_code == 0);
  CHECK(hit.out.find("[cached] gated ok") != std::string::npos);
  CHECK(LedgerRows(ws).back()["outcome"] == "allowed");
  CHECK(LedgerRows(ws).back()["inputsSha256"] == JudgedId());
  auto listed = nlohmann::json::parse(ws.Gate({"ledger", "list", "--json"}).out);
  CHECK(listed["decisions"].back()["inputsSha256"] == JudgedId());
}

}  // namespace
}  // namespace devflow::faults

// What lies below a devflow root is the producer's to write: a registered input, card.md or a
// journal the size of the machine's memory must be refused without being read (trial18: a
// 20 GiB sparse file read whole took 24 GB and the kernel's OOM killer ended the gate; issue 7:
// a 4 GiB card.md made `card show` peak at 16.7 GB), `artifact add` must refuse to register
// one, and a decision ledger grown past the bound must say how to rotate it. The bound is
// kMaxReadBytes (host/os.h), kept by every whole-file read of the FileSystem seam.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "faults/faults.h"
#include "host/os.h"

namespace devflow::faults {
namespace {

// The refusal of a file of `bytes` bytes at `path`, as the seam words it.
std::string TooBig(const std::string& path, int64_t bytes) {
  return "read " + path + ": " + std::to_string(bytes) + " bytes, over the " +
         std::to_string(kMaxReadBytes) +
         " bytes the gate reads of one file (EFBIG); replace it with a smaller file";
}

// Makes `path` one byte over the bound, sparse: no disk, and no memory if unread.
void OverTheBound(const std::string& path) {
  REQUIRE(::truncate(path.c_str(), kMaxReadBytes + 1) == 0);
}

TEST_CASE("an input artifact over 256 MiB fails the move closed without being read") {
  Workspace ws = AllowGated();
  ws.CardInDesigning();
  // Rewritten in place to one byte over the bound, sparse: no disk, and no memory if unread.
  const std::string design = ws.card_dir() + "/artifacts/4-design.md";
  OverTheBound(design);

  auto moved = ws.Gate({"move", kCard, "ready"});
  INFO(moved.out << moved.err);
  const std::string fault = "a required input cannot be read: " + TooBig(design, kMaxReadBytes + 1);
  CHECK(moved.exit_code == 3);
  CHECK(moved.out.find("could not run: " + fault + "; the card is parked blocked") !=
        std::string::npos);
  RequireParked(ws, fault);
}

TEST_CASE("artifact add refuses a file over 256 MiB before reading it, and registers nothing") {
  Workspace ws = AllowGated();
  ws.CardInDesigning();
  const std::string big = ws / "inputs/big.md";
  test::Spit(big, "");
  OverTheBound(big);
  const auto before = ws.JournalLines();

  auto added = ws.Gate({"artifact", "add", kCard, "design", "inputs/big.md"});
  CHECK(added.exit_code == 2);
  CHECK(added.err == "devflow-gate: cannot read the artifact file: " +
                         TooBig("inputs/big.md", kMaxReadBytes + 1) + "\n");
  CHECK(ws.JournalLines() == before);
}

TEST_CASE(
    "a card.md over 256 MiB is refused unread by move and card show, and nothing is written") {
  Workspace ws = AllowGated();
  ws.CardInDesigning();
  const std::string card_md = ws.card_dir() + "/card.md";
  OverTheBound(card_md);
  const auto before = ws.JournalLines();
  const std::string refusal = "devflow-gate: " + TooBig(card_md, kMaxReadBytes + 1) + "\n";

  auto moved = ws.Gate({"move", kCard, "ready"});
  CHECK(moved.exit_code == 4);
  CHECK(moved.out == TooBig(card_md, kMaxReadBytes + 1) + "\n");
  auto shown = ws.Gate({"card", "show", kCard});
  CHECK(shown.exit_code == 4);
  CHECK(shown.err == refusal);
  CHECK(ws.JournalLines() == before);
}

TEST_CASE("a journal over 256 MiB is refused unread, and audit names the fix") {
  Workspace ws = AllowGated();
  ws.CardInDesigning();
  OverTheBound(ws.journal_path());
  const std::string refusal = TooBig(ws.journal_path(), kMaxReadBytes + 1);

  auto shown = ws.Gate({"card", "show", kCard});
  CHECK(shown.exit_code == 4);
  CHECK(shown.err == "devflow-gate: " + refusal + "\n");
  auto moved = ws.Gate({"move", kCard, "ready"});
  CHECK(moved.exit_code == 4);
  CHECK(moved.out == refusal + "\n");
  auto audited = ws.Gate({"audit"});
  INFO(audited.out << audited.err);
  CHECK(audited.exit_code == 1);
  CHECK(audited.out.find("problem: card " + std::string(kCard) + " does not fold: " + refusal +
                         " (every read and move of this card fails until then)\n") !=
        std::string::npos);
}

TEST_CASE(
    "a decision ledger over 256 MiB is refused unread, and rotating it lets the next decision "
    "start a new one") {
  Workspace ws = AllowGated();
  ws.CardInDesigning();
  const std::string ledger = ws.root() + "/ledger/decisions.jsonl";
  REQUIRE(ws.Gate({"move", kCard, "ready", "--dry-run"}).exit_code == 0);
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 0);
  // Past half the bound, audit warns while prune can still read it.
  REQUIRE(::truncate(ledger.c_str(), kMaxReadBytes / 2 + 1) == 0);
  auto audited = ws.Gate({"audit"});
  CHECK(audited.out.find("warning: the decision ledger " + ledger + " holds " +
                         std::to_string(kMaxReadBytes / 2 + 1) + " bytes, over half of the " +
                         std::to_string(kMaxReadBytes) +
                         " bytes the gate reads of one file: "
                         "prune it") != std::string::npos);
  OverTheBound(ledger);
  const std::string refusal = TooBig(ledger, kMaxReadBytes + 1) + "; ";
  const std::string rotate = "rotate it: move it aside (mv " + ledger + " " + ledger +
                             ".1); the next decision starts a "
                             "new ledger\n";

  auto listed = ws.Gate({"ledger", "list"});
  CHECK(listed.exit_code == 1);
  CHECK(listed.err == "devflow-gate: ledger: " + refusal + rotate);
  // prune must read the ledger whole too: it refuses before reading, and leaves it as it was.
  auto pruned = ws.Gate({"ledger", "prune", "--keep", "1"});
  CHECK(pruned.exit_code == 1);
  CHECK(pruned.err ==
        "devflow-gate: ledger prune: " + refusal + "the ledger is as it was; " + rotate);
  CHECK(std::filesystem::file_size(ledger) == static_cast<uintmax_t>(kMaxReadBytes + 1));

  REQUIRE(std::rename(ledger.c_str(), (ledger + ".1").c_str()) == 0);
  auto moved = ws.Gate({"move", kCard, "blocked"});
  INFO(moved.out << moved.err);
  REQUIRE(moved.exit_code == 0);
  auto relisted = ws.Gate({"ledger", "list"});
  CHECK(relisted.exit_code == 0);
  INFO(relisted.out);
  CHECK(relisted.out.find("ready->blocked") != std::string::npos);
  CHECK(relisted.out.find("designing->ready") == std::string::npos);
}

}  // namespace
}  // namespace devflow::faults

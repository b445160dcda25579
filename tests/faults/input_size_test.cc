// What lies in a card directory is the producer's to write: a registered input the size of the
// machine's memory must fail the move closed without being read (trial18: a 20 GiB sparse file
// read whole took 24 GB and the kernel's OOM killer ended the gate), and `artifact add` must
// refuse to register one. The bound is kMaxBeneathReadBytes (host/os.h).
#include <doctest/doctest.h>
#include <unistd.h>

#include <string>

#include "faults/faults.h"
#include "host/os.h"

namespace devflow::faults {
namespace {

// A workspace whose card is in designing with prd:3 and design:4, gated by the allow checker.
Workspace Gated() {
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  return Workspace(yaml.Text());
}

TEST_CASE("an input artifact over 256 MiB fails the move closed without being read") {
  Workspace ws = Gated();
  ws.CardInDesigning();
  // Rewritten in place to one byte over the bound, sparse: no disk, and no memory if unread.
  const std::string design = ws.card_dir() + "/artifacts/4-design.md";
  REQUIRE(::truncate(design.c_str(), kMaxBeneathReadBytes + 1) == 0);

  auto moved = ws.Gate({"move", kCard, "ready"});
  INFO(moved.out << moved.err);
  const std::string fault = "a required input cannot be read: read " + design + ": " +
                            std::to_string(kMaxBeneathReadBytes + 1) + " bytes, over the " +
                            std::to_string(kMaxBeneathReadBytes) +
                            " bytes a file read beneath a card may hold (EFBIG)";
  CHECK(moved.exit_code == 3);
  CHECK(moved.out.find("could not run: " + fault + "; the card is parked blocked") !=
        std::string::npos);
  RequireParked(ws, fault);
}

TEST_CASE("artifact add refuses a file over 256 MiB before reading it, and registers nothing") {
  Workspace ws = Gated();
  ws.CardInDesigning();
  const std::string big = ws / "inputs/big.md";
  test::Spit(big, "");
  REQUIRE(::truncate(big.c_str(), kMaxBeneathReadBytes + 1) == 0);
  const auto before = ws.JournalLines();

  auto added = ws.Gate({"artifact", "add", kCard, "design", "inputs/big.md"});
  CHECK(added.exit_code == 2);
  CHECK(added.err == "devflow-gate: cannot read the artifact file: inputs/big.md holds " +
                         std::to_string(kMaxBeneathReadBytes + 1) + " bytes, over the " +
                         std::to_string(kMaxBeneathReadBytes) +
                         " bytes the gate reads of an artifact (EFBIG)\n");
  CHECK(ws.JournalLines() == before);
}

}  // namespace
}  // namespace devflow::faults

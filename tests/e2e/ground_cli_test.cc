// `devflow-gate ground` through the real binary: the release_gate.py exit contract holds end to
// end (the behaviours themselves are pinned in-process in tests/ground/ground_command_test.cc).
#include <doctest/doctest.h>

#include <string>

#include "support/support.h"

namespace devflow {
namespace {

struct GroundDir {
  test::TempDir tmp;
  std::string File(const std::string& name, const std::string& content) {
    test::Spit(tmp / name, content);
    return tmp / name;
  }
};

}  // namespace

TEST_CASE("ground CLI: a verified claim is printed byte for byte and ledgered, exit 0") {
  GroundDir d;
  const std::string claim = "Fixed in #41 on 2026-09-16, see https://example.com/x.\r\nDone";
  auto r = test::RunGate({"ground", "--claim", d.File("claim.md", claim), "--evidence",
                          d.File("facts.txt", "#41 2026-09-16 https://example.com/x"), "--ledger",
                          d.tmp / "ledger.jsonl", "--label", "release-notes"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == claim);
  CHECK(r.err == "VERIFIED\n");
  auto ledger = test::Slurp(d.tmp / "ledger.jsonl");
  REQUIRE(ledger.has_value());
  CHECK(ledger->find("\"label\": \"release-notes\"") != std::string::npos);
}

TEST_CASE("ground CLI: a rejected claim prints the fallback and one reason per token, exit 1") {
  GroundDir d;
  auto r = test::RunGate({"ground", "--claim", d.File("claim.md", "Fixed in #42 and ABC-7."),
                          "--evidence", d.File("facts.txt", "#41 #43 ABC-70"), "--fallback",
                          d.File("fallback.md", "No release notes today.\n"), "--ledger",
                          d.tmp / "ledger.jsonl"});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "No release notes today.\n");
  CHECK(r.err ==
        "REJECTED\n  - ref not in evidence: #42 (line 1:10; evidence has #41)\n  - ref not in "
        "evidence: ABC-7 (line 1:18; evidence has ABC-70)\n");
  auto ledger = test::Slurp(d.tmp / "ledger.jsonl");
  REQUIRE(ledger.has_value());
  CHECK(ledger->find("\"verdict\": \"rejected\"") != std::string::npos);
}

TEST_CASE("ground CLI: an unknown kind is a usage error: exit 2, nothing on stdout, no ledger") {
  GroundDir d;
  auto r = test::RunGate({"ground", "--claim", d.File("claim.md", "x"), "--evidence",
                          d.File("facts.txt", "x"), "--kinds", "date,colour", "--ledger",
                          d.tmp / "ledger.jsonl"});
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err.find("colour") != std::string::npos);
  CHECK_FALSE(test::Slurp(d.tmp / "ledger.jsonl").has_value());
}

}  // namespace devflow

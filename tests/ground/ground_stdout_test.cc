// `ground` exits 0 and ledgers `released` only when the claim really reached stdout (issue 7,
// code paths): a stdout of /dev/full (ENOSPC at flush) and a pipe whose reader is gone (EPIPE)
// exit 4 and ledger a second row, `unreleased` with the error, after the `released` row written
// before the claim went out; a rejected claim whose fallback cannot be written ledgers
// `unrecovered` after its `recovered`. Through the real binary, with the real file descriptors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/support.h"

namespace devflow {
namespace {

struct Dir {
  test::TempDir tmp;
  std::string File(const std::string& name, const std::string& content) {
    test::Spit(tmp / name, content);
    return tmp / name;
  }
};

// Runs `ground` with the given stdout: "full" (/dev/full) or "epipe" (a pipe whose read end is
// closed before the binary starts), through python3 so the descriptors are exactly that.
test::RunResult GroundWithStdout(const std::string& how, const std::vector<std::string>& args) {
  std::string list = "[";
  for (const auto& a : args) list += nlohmann::json(a).dump() + ",";
  list += "]";
  const std::string script =
      "import os, subprocess, sys\n"
      "argv = [" +
      nlohmann::json(test::GateBinary()).dump() + ", 'ground'] + " + list +
      "\n"
      "if sys.argv[1] == 'full':\n"
      "    out = open('/dev/full', 'wb')\n"
      "else:\n"
      "    r, w = os.pipe()\n"
      "    os.close(r)\n"
      "    out = w\n"
      "p = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE)\n"
      "sys.stderr.buffer.write(p.stderr)\n"
      "sys.exit(p.returncode)\n";
  return test::RunProgram({"/usr/bin/python3", "-c", script, how});
}

std::vector<nlohmann::json> Rows(const std::string& ledger) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(test::Slurp(ledger).value_or(""));
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

nlohmann::json LastRow(const std::string& ledger) {
  const auto rows = Rows(ledger);
  REQUIRE(!rows.empty());
  return rows.back();
}

}  // namespace

TEST_CASE("ground: a verified claim that cannot reach stdout exits 4 and ledgers unreleased") {
  for (const std::string how : {"full", "epipe"}) {
    CAPTURE(how);
    Dir d;
    const std::string ledger = d.tmp / "ledger.jsonl";
    auto r = GroundWithStdout(how, {"--claim", d.File("claim.md", "Fixed in #41.\n"), "--evidence",
                                    d.File("facts.txt", "#41"), "--ledger", ledger});
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 4);
    const std::string error =
        how == "full" ? "No space left on device (ENOSPC)" : "Broken pipe (EPIPE)";
    CHECK(r.err == "VERIFIED, but the claim could not be written to stdout: " + error +
                       "; nothing was released\n");
    auto row = LastRow(ledger);
    CHECK(row["verdict"] == "verified");
    CHECK(row["state"] == "unreleased");
    CHECK(row["output_error"] == error);
    // The row written before the claim went out, superseded by this one (same run, same ts).
    const auto rows = Rows(ledger);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["state"] == "released");
    CHECK(rows[0]["ts"] == row["ts"]);
    CHECK(!rows[0].contains("output_error"));
  }
}

TEST_CASE("ground: a fallback that cannot reach stdout ledgers unrecovered, exit 4") {
  Dir d;
  const std::string ledger = d.tmp / "ledger.jsonl";
  auto r =
      GroundWithStdout("full", {"--claim", d.File("claim.md", "Fixed in #42.\n"), "--evidence",
                                d.File("facts.txt", "#41"), "--fallback",
                                d.File("fallback.md", "No notes today.\n"), "--ledger", ledger});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 4);
  auto row = LastRow(ledger);
  CHECK(row["verdict"] == "rejected");
  CHECK(row["state"] == "unrecovered");
  const auto rows = Rows(ledger);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["state"] == "recovered");
}

TEST_CASE("ground: a claim that reaches stdout still exits 0 and ledgers released") {
  Dir d;
  const std::string ledger = d.tmp / "ledger.jsonl";
  auto r = test::RunGate({"ground", "--claim", d.File("claim.md", "Fixed in #41.\n"), "--evidence",
                          d.File("facts.txt", "#41"), "--ledger", ledger});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "Fixed in #41.\n");
  CHECK(LastRow(ledger)["state"] == "released");
}

}  // namespace devflow

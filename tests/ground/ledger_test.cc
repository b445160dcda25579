// The grounding ledger (reports/ledger.h): Python-compatible rows, locked single-write appends.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "reports/ledger.h"
#include "support/support.h"

namespace devflow {

TEST_CASE("ledger: rows use json.dumps layout with release_gate.py's seven fields first") {
  LedgerRow row;
  row.ts = LedgerTimestamp("2026-09-16T08:00:00.123Z");
  row.verified = false;
  row.state = "recovered";
  row.kinds = {"ref"};
  row.reasons = {"ref not in evidence: #9"};
  row.rejected_claim = "Ship \"#9\"\n\xC3\xA9\x01";
  row.extra.emplace_back("n", "1");
  CHECK(FormatLedgerRow(row) ==
        "{\"ts\": \"2026-09-16T08:00:00+00:00\", \"label\": null, \"verdict\": \"rejected\", "
        "\"state\": \"recovered\", \"kinds\": [\"ref\"], \"reject_reasons\": [\"ref not in "
        "evidence: #9\"], \"rejected_claim\": \"Ship \\\"#9\\\"\\n\xC3\xA9\\u0001\", \"n\": 1}\n");
}

TEST_CASE("ledger: concurrent writers in separate processes never interleave rows") {
  test::TempDir tmp;
  const std::string path = tmp / "gate.jsonl";
  constexpr int kWriters = 6, kRows = 40;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Rows of 300 KiB: far above PIPE_BUF, so only the lock keeps them whole.
      const std::string row = std::string(300 * 1024, static_cast<char>('a' + w)) + "\n";
      for (int r = 0; r < kRows; ++r) {
        if (!AppendLocked(path, row).ok()) ::_exit(1);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const std::string text = test::Slurp(path).value();
  CHECK(text.size() == static_cast<size_t>(kWriters * kRows) * (300 * 1024 + 1));
  int whole = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    REQUIRE(nl != std::string::npos);
    const std::string line = text.substr(at, nl - at);
    CHECK(line.size() == 300 * 1024);
    CHECK(line.find_first_not_of(line[0]) == std::string::npos);
    ++whole;
    at = nl + 1;
  }
  CHECK(whole == kWriters * kRows);
}

TEST_CASE("ledger: an append to a missing directory or a full device names the OS error") {
  test::TempDir tmp;
  const Status missing = AppendLocked(tmp / "none/gate.jsonl", "x\n");
  CHECK(missing.code() == "ENOENT");
  CHECK(missing.message() == "append " + tmp / "none/gate.jsonl" +
                                 ": No such file or directory (ENOENT) at open; nothing was "
                                 "written; create the directory " +
                                 tmp / "none" + " and retry");
  const Status full = AppendLocked("/dev/full", "x\n");
  CHECK(full.code() == "ENOSPC");
}

}  // namespace devflow

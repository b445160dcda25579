// Faults keep their evidence (issue 10 item 8): after a fault once the checker ran, the raw
// reply (its head, at most 256 KiB, with its full size) and the end of stderr are kept in a
// fault report under the report dir, named in the message and the ledger row; the message says
// why there is no verdict; the journal's park reason stays upstream's text byte for byte.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include "checker/verdict.h"
#include "host/decision_ledger.h"
#include "reports/fault_report.h"
#include "tests/gate/fixture.h"

namespace devflow::gatetest {
namespace {

const char kNoVerdict[] = "the checker replied without a parsable verdict block";
const char kAllowUpper[] =
    "Looks fine.\n\n```json\n{\"verdict\": \"ALLOW\", \"summary\": \"fine\"}\n```\n";

ProviderConfig ShellProvider(const std::string& script) {
  ProviderConfig p;
  p.name = "checker";
  p.command = {"/bin/sh", "-c", script};
  return p;
}

}  // namespace

TEST_CASE("a parse fault keeps the reply and stderr in a fault report, byte for byte") {
  Rig rig;
  const std::string id = "0201-upper";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Reply(kAllowUpper, "model: claude\n\x1b[31mwarn\x1b[0m\n");
  const std::string why =
      "the last verdict block says \"verdict\": \"ALLOW\"; expected \"allow\" or \"veto\"";
  MoveOutcome outcome = rig.Move(id);
  const std::string report = ExpectParkedWithEvidence(rig, outcome, id, kNoVerdict, why, 5);
  CHECK(report ==
        "# Agent check fault: card 0201-upper, edge designing->ready\n"
        "\n"
        "- card: 0201-upper\n"
        "- edge: designing->ready\n"
        "- revision: 4\n"
        "- checked inputs: prd:3, design:4\n"
        "- at: 2026-09-16T08:00:00.000Z\n"
        "- provider: checker\n"
        "- sandbox: unknown\n"
        "- fault: the checker replied without a parsable verdict block\n"
        "- why: the last verdict block says \"verdict\": \"ALLOW\"; expected \"allow\" or "
        "\"veto\"\n"
        "- reply: 65 bytes (all kept below)\n"
        "- stderr: 28 bytes (all kept below)\n"
        "\n"
        "## Reply\n"
        "\n"
        "````\n"
        "Looks fine.\n\n```json\n{\"verdict\": \"ALLOW\", \"summary\": \"fine\"}\n```\n"
        "\n"
        "````\n"
        "\n"
        "## Stderr\n"
        "\n"
        "```\n"
        "model: claude\n\x1b[31mwarn\x1b[0m\n"
        "\n"
        "```\n");
  // The journal's park line is upstream's, without the detail (ExpectParked checks the bytes).
  CHECK(rig.Journal(id).find("ALLOW") == std::string::npos);
  CHECK(rig.Journal(id).find("fault report") == std::string::npos);
}

TEST_CASE("the ledger row names the fault report and carries the why in its message") {
  Rig rig;
  const std::string id = "0202-ledger";
  WriteCard(rig.root, id);
  rig.scripted.Reply(kAllowUpper);
  MoveOutcome outcome = rig.Move(id);
  MoveRequest request;
  request.id = id;
  request.to = Location::kReady;
  request.by = Actor{"human", std::nullopt, std::nullopt};
  const std::string path = FaultReportOf(rig, id, 2);
  // The card has no inputs: the check judged its title and body alone, whose JudgedIdentity is
  // the SHA-256 of "#body\n20\nBody of 0202-ledger.#order\n0\n#title\n16\nCard 0202-ledger".
  const std::string kNoInputs = "c5c5602ccf22d455426b16c747746275ee1d3e8726116f5e81250560bc262c1c";
  const std::string row =
      DecisionRow(request, outcome, kAt, DecisionIdentity{"/c.yaml", "ab", {}}, "D-1");
  CHECK(row ==
        "{\"decision\":\"D-1\",\"at\":\"2026-09-16T08:00:00.000Z\",\"card\":\"0202-ledger\","
        "\"edge\":\"designing->ready\",\"revision\":2,\"by\":{\"kind\":\"human\"},\"code\":"
        "\"vetoed\",\"ok\":false,\"message\":\"devflow: transition of card 0202-ledger to "
        "\\\"ready\\\" was rejected: agent check for designing->ready could not run: the checker "
        "replied without a parsable verdict block: the last verdict block says \\\"verdict\\\": "
        "\\\"ALLOW\\\"; expected \\\"allow\\\" or \\\"veto\\\"; the card is parked blocked until "
        "the deployment recovers; fault report: " +
            path + "\",\"checks\":[],\"report\":null,\"faultReport\":\"" + path +
            "\",\"parked\":true,\"sandbox\":[],\"inputsSha256\":\"" + kNoInputs +
            "\",\"outcome\":\"parked\",\"config\":{\"file\":"
            "\"/c.yaml\",\"sha256\":\"ab\"},\"programs\":{}}");
}

TEST_CASE(
    "a fault report keeps the first 256 KiB of a longer reply and the last 64 KiB of stderr") {
  Rig rig;
  const std::string id = "0203-long";
  WriteCard(rig.root, id);
  const std::string reply = "H" + std::string(300000 - 2, 'r') + "T";
  const std::string err = "E" + std::string(70000 - 2, 'e') + "Z";
  rig.scripted.Reply(reply, err);
  const std::string report =
      ExpectParkedWithEvidence(rig, rig.Move(id), id, kNoVerdict, "the reply has no fenced block");
  CHECK(report.find("- reply: 300000 bytes (the first 262144 kept below)\n") != std::string::npos);
  CHECK(report.find("- stderr: 70000 bytes (the last 65536 kept below)\n") != std::string::npos);
  CHECK(report.find("```\n" + reply.substr(0, 262144) + "\n```\n") != std::string::npos);
  CHECK(report.find("```\n" + err.substr(70000 - 65536) + "\n```\n") != std::string::npos);
  CHECK(report.find("rT") == std::string::npos);  // the reply's tail is cut
  CHECK(report.find("Ee") == std::string::npos);  // stderr's head is cut
}

TEST_CASE("a fault once a real checker ran keeps its stdout and stderr (exit code)") {
  Rig rig;
  const std::string id = "0204-exit";
  WriteCard(rig.root, id);
  SubprocessChecker real({ShellProvider("cat >/dev/null; printf 'half a reply'; "
                                        "printf 'trace 1\\nfatal: out of tokens\\n' >&2; exit 7")},
                         test::GateBinary());
  rig.checker = &real;
  const std::string report = ExpectParkedWithEvidence(
      rig, rig.Move(id), id, "the checker ended with exit code 7: fatal: out of tokens", "");
  CHECK(report.find("- reply: 12 bytes (all kept below)\n") != std::string::npos);
  CHECK(report.find("- stderr: 29 bytes (all kept below)\n") != std::string::npos);
  CHECK(report.find("\n## Reply\n\n```\nhalf a reply\n```\n") != std::string::npos);
  CHECK(report.find("\n## Stderr\n\n```\ntrace 1\nfatal: out of tokens\n\n```\n") !=
        std::string::npos);
  CHECK(report.find("- sandbox: " + real.SandboxLevel(*real.Provider("checker")) + "\n") !=
        std::string::npos);
}

TEST_CASE("a reply over maxReplyBytes is kept as far as it was read, its size a lower bound") {
  Rig rig;
  const std::string id = "0205-over";
  WriteCard(rig.root, id);
  SubprocessChecker real({ShellProvider("cat >/dev/null; head -c 5000 /dev/zero | tr '\\0' x")},
                         test::GateBinary());
  rig.checker = &real;
  rig.config.max_reply_bytes = 100;
  const std::string report =
      ExpectParkedWithEvidence(rig, rig.Move(id), id, "the checker reply exceeded 100 bytes", "");
  const size_t at = report.find("- reply: at least ");
  REQUIRE(at != std::string::npos);
  CHECK(report.find(" bytes (stopped at maxReplyBytes; the first ", at) != std::string::npos);
}

TEST_CASE("a fault before the checker ran writes no fault report") {
  Rig rig;
  const std::string id = "0206-scripted";
  WriteCard(rig.root, id);
  rig.scripted.Fault("spawn backend down");
  ExpectParked(rig, rig.Move(id), id, "spawn backend down");  // checks the faults dir is empty
}

TEST_CASE("--dry-run writes no fault report: the message still says why") {
  Rig rig;
  const std::string id = "0207-dry";
  WriteCard(rig.root, id);
  rig.scripted.Reply(kAllowUpper);
  const auto before = test::Snapshot(rig.root);
  MoveOutcome outcome = rig.Move(id, Location::kReady, /*dry_run=*/true);
  CHECK(outcome.failed_closed);
  CHECK(outcome.message ==
        Rejected(id,
                 std::string("agent check for designing->ready could not run: ") + kNoVerdict +
                     ": the last verdict block says \"verdict\": \"ALLOW\"; expected "
                     "\"allow\" or \"veto\"; the card would be parked blocked until the deployment "
                     "recovers"));
  CHECK(outcome.reports.empty());
  CHECK(test::Snapshot(rig.root) == before);
}

TEST_CASE("a fault report that cannot be written is named: the card still parks as upstream's") {
  Rig rig;
  const std::string id = "0208-enospc";
  WriteCard(rig.root, id);
  rig.scripted.Reply(kAllowUpper);
  rig.fs.Fail("write-atomic", "/faults/", ENOSPC);
  MoveOutcome outcome = rig.Move(id);
  const std::string path = FaultReportOf(rig, id, 2);
  ExpectParkedAs(
      rig, outcome, id, kNoVerdict, 3,
      Rejected(id, std::string("agent check for designing->ready could not run: ") + kNoVerdict +
                       ": the last verdict block says \"verdict\": \"ALLOW\"; expected \"allow\" "
                       "or \"veto\"; the card is parked blocked until the deployment recovers; "
                       "the fault report could not be written: write-atomic " +
                       path + ": No space left on device (ENOSPC)"));
  CHECK(outcome.reports.empty());
}

// Trial13 R6: two POST /v1/admit faults with the caller's same `at` shared one report name,
// and the second overwrote the first (both ledger rows named it). A fault report is never
// written over another: the next free copy number (`…000Z-2.md`), the first left as it was.
TEST_CASE("a fault report never overwrites an earlier one of the same name") {
  Rig rig;
  const std::string id = "0209-same-at";
  WriteCard(rig.root, id);
  const std::string first = FaultReportOf(rig, id, 2);
  REQUIRE(rig.fs.CreateDirs(rig.ReportDir() + "/faults").ok());
  REQUIRE(rig.fs.WriteFileAtomic(first, "an earlier attempt's report\n").ok());
  rig.scripted.Reply(kAllowUpper);
  MoveOutcome outcome = rig.Move(id);
  const std::string second = first.substr(0, first.size() - 3) + "-2.md";
  REQUIRE(outcome.reports.size() == 1);
  CHECK(outcome.reports[0].path == second);
  CHECK(outcome.reports[0].written);
  CHECK(outcome.message.find("; fault report: " + second) != std::string::npos);
  CHECK(test::Slurp(first) == std::optional<std::string>("an earlier attempt's report\n"));
  CHECK(test::Slurp(second).value_or("").find("- fault: " + std::string(kNoVerdict)) !=
        std::string::npos);
}

TEST_CASE("VerdictFaultReason says which rule the last verdict block breaks") {
  auto why = [](const std::string& reply, std::optional<std::string> nonce = std::nullopt) {
    return VerdictFaultReason(reply, nonce);
  };
  auto block = [](const std::string& content) { return "```json\n" + content + "\n```\n"; };
  CHECK(why(block("{\"verdict\": \"allow\", \"summary\": \"ok\"}")) == "");
  CHECK(why("no fences at all\n") == "the reply has no fenced block");
  CHECK(why("```bash\nmake\n```\n```\nprose\n```\n") ==
        "none of the reply's 2 fenced blocks claims to be a verdict (a ```json block, or one "
        "that starts with { or holds \"verdict\")");
  CHECK(why("```json\n{\"verdict\": \"allow\"") ==
        "the last verdict block is never closed (the reply ends inside it)");
  CHECK(why(block("{\"verdict\": \"allow\", \"summary\": \"ok\",}")) ==
        "the last verdict block is not valid JSON");
  CHECK(why(block("{\"verdict\": \"veto\", \"summary\": \"s\", \"verdict\": \"allow\"}")) ==
        "the last verdict block has a key twice (every key must be unique)");
  CHECK(why(block("\xEF\xBB\xBF{\"verdict\": \"allow\", \"summary\": \"ok\"}")) ==
        "the last verdict block starts with a byte-order mark, which JSON.parse refuses");
  CHECK(why(block("[1]")) == "the last verdict block is an array, not a JSON object");
  CHECK(why(block("{\"summary\": \"ok\"}")) ==
        "the last verdict block has no \"verdict\"; expected \"allow\" or \"veto\"");
  CHECK(why(block("{\"verdict\": \"ALLOW\", \"summary\": \"ok\"}")) ==
        "the last verdict block says \"verdict\": \"ALLOW\"; expected \"allow\" or \"veto\"");
  CHECK(why(block("{\"verdict\": true, \"summary\": \"ok\"}")) ==
        "the last verdict block says \"verdict\": true; expected \"allow\" or \"veto\"");
  CHECK(why(block("{\"verdict\": \"veto\"}")) ==
        "the last verdict block has no \"summary\"; expected a non-blank string");
  CHECK(why(block("{\"verdict\": \"veto\", \"summary\": 3}")) ==
        "the last verdict block says \"summary\": 3; expected a non-blank string");
  CHECK(why(block("{\"verdict\": \"veto\", \"summary\": \"s\", \"findings\": [\"a\", 2]}")) ==
        "the last verdict block has a finding 2; expected an array of strings");
  // A long value is cut to 80 bytes at a UTF-8 boundary.
  CHECK(why(block("{\"verdict\": \"" + std::string(200, 'A') + "\", \"summary\": \"ok\"}")) ==
        "the last verdict block says \"verdict\": \"" + std::string(76, 'A') +
            "\xE2\x80\xA6; expected \"allow\" or \"veto\"");
  const std::string ok = block("{\"verdict\": \"allow\", \"summary\": \"ok\"}");
  CHECK(why(ok, std::string("abc")) ==
        "the last verdict block has no \"nonce\"; this edge sets verdictNonce, so the verdict "
        "must carry the prompt's nonce");
  // A nonce of another type is there, but is not the prompt's nonce string.
  CHECK(why(block("{\"verdict\": \"allow\", \"summary\": \"ok\", \"nonce\": 5}"),
            std::string("abc")) ==
        "the last verdict block says \"nonce\": 5; expected a string, the prompt's nonce (this "
        "edge sets verdictNonce)");
  CHECK(why(block("{\"verdict\": \"allow\", \"summary\": \"ok\", \"nonce\": null}"),
            std::string("abc")) ==
        "the last verdict block says \"nonce\": null; expected a string, the prompt's nonce "
        "(this edge sets verdictNonce)");
  CHECK(why(block("{\"verdict\": \"allow\", \"summary\": \"ok\", \"nonce\": \"x\"}"),
            std::string("abc")) ==
        "the last verdict block carries another \"nonce\" than this dispatch's (an echoed or "
        "forged verdict)");
  // The same rules as ParseLastVerdict: a reason exactly when there is no verdict.
  for (const std::string& reply : {ok, block("{\"verdict\": \"veto\"}"), std::string("x")}) {
    CHECK(why(reply).empty() == ParseLastVerdict(reply).has_value());
  }
}

}  // namespace devflow::gatetest

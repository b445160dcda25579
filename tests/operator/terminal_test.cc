// The one terminal-safe printer (host/terminal.h, issue 10 item 10): literal hostile bytes in,
// literal visible escapes out; and every operator command that prints checker, journal or file
// bytes prints them through it.
#include <doctest/doctest.h>

#include "host/terminal.h"
#include "operator/operator_fixture.h"
#include "reports/veto_report.h"

namespace devflow {
namespace {

using namespace devflow::test;

// ESC, CSI, OSC with BEL, backspace, NUL, DEL, an 8-bit CSI (U+009B), a right-to-left override
// (U+202E), a line separator (U+2028), a stray byte, a truncated sequence, an overlong '/', a
// UTF-16 surrogate — and what must pass: emoji, CJK, accents, a backslash.
const std::string kHostile = std::string("ok \x1b[31mred\x1b]0;pwned\x07 b\bs\x7f nul") +
                             std::string(1, '\0') + " \xc2\x9b" + "2J \xe2\x80\xae" +
                             "txt.exe \xe2\x80\xa8 \xff \xe2\x80 \xc0\xaf \xed\xa0\x80 " +
                             "\xf0\x9f\x8e\x89 \xe6\x97\xa5\xe6\x9c\xac caf\xc3\xa9 a\\b";
const std::string kShown =
    "ok \\x1b[31mred\\x1b]0;pwned\\x07 b\\x08s\\x7f nul\\x00 \\u009b2J \\u202etxt.exe \\u2028 "
    "\\xff \\xe2\\x80 \\xc0\\xaf \\xed\\xa0\\x80 \xf0\x9f\x8e\x89 \xe6\x97\xa5\xe6\x9c\xac "
    "caf\xc3\xa9 a\\b";

TEST_CASE("TerminalLine makes every control, bidi override and non-UTF-8 byte visible") {
  CHECK(TerminalLine(kHostile) == kShown);
  CHECK(TerminalLine("two\nlines\r\tx") == "two\\nlines\\r\\tx");
  CHECK(TerminalLine("\xe2\x81\xa6isolate\xe2\x81\xa9 \xd8\x9c \xe2\x80\x8f") ==
        "\\u2066isolate\\u2069 \\u061c \\u200f");
  CHECK(TerminalLine("") == "");
}

TEST_CASE("TerminalText keeps line breaks and tabs, and nothing else") {
  CHECK(TerminalText("# Title\n\n\tindented \x1b[2J\r\n") == "# Title\n\n\tindented \\x1b[2J\\r\n");
}

TEST_CASE("cache list, reports list, reports show and audit print checker bytes escaped") {
  OperatorRoot r(CachedGateYaml());
  r.DesigningCard("0001-a");
  r.Record(r.Key("0001-a", {"prd:3", "design:4"}), true, kHostile);
  VetoReportFacts facts;
  facts.card_id = "0001-a";
  facts.edge = "designing->ready";
  facts.revision = 4;
  facts.at = kT0;
  facts.summary = "s \x1b[31m";
  facts.findings = {"f \xe2\x80\xae"};
  const std::string report = VetoReportPath(r.ReportDir(), "0001-a", "designing", "ready", 4);
  Spit(report, RenderVetoReport(facts));
  Spit(
      r.root + "/ledger/decisions.jsonl",
      R"({"decision":"d1","at":"2026-09-16T08:00:00.000Z","card":"0001-a","code":"vetoed","ok":false,"message":"no \u001b[2J \u202e"})"
      "\n");

  for (const auto& [command, args] : std::vector<std::pair<OpCommand, std::vector<std::string>>>{
           {RunCacheCommand, {"list"}},
           {RunReportsCommand, {"list"}},
           {RunReportsCommand, {"show", report}},
           {RunLedgerCommand, {"list"}},
           {RunLedgerCommand, {"show", "d1"}},
           {RunAuditCommand, {}}}) {
    Ran ran = RunOp(command, args, r.Ctx());
    INFO(command.word << " " << (args.empty() ? "" : args[0]) << ": " << ran.out << ran.err);
    CHECK(ran.out.find('\x1b') == std::string::npos);
    CHECK(ran.out.find("\xe2\x80\xae") == std::string::npos);
    CHECK(ran.out.find('\x07') == std::string::npos);
    CHECK(ran.err.find('\x1b') == std::string::npos);
  }
  Ran cache = RunOp(RunCacheCommand, {"list"}, r.Ctx());
  // The record itself holds U+FFFD for the bytes that were not UTF-8 (JSON cannot carry them).
  CHECK(Lines(cache.out).at(0).find(
            ": ok \\x1b[31mred\\x1b]0;pwned\\x07 b\\x08s\\x7f nul\\x00 \\u009b2J \\u202etxt.exe "
            "\\u2028 \xef\xbf\xbd") != std::string::npos);
  Ran ledger = RunOp(RunLedgerCommand, {"list"}, r.Ctx());
  CHECK(Lines(ledger.out).at(0) ==
        "d1 2026-09-16T08:00:00.000Z 0001-a unknown r? vetoed (sandbox unknown, by unknown): no "
        "\\x1b[2J \\u202e");
}

}  // namespace
}  // namespace devflow

// The one terminal-safe printer (host/terminal.h, issue 10 item 10): literal hostile bytes in,
// literal visible escapes out; and every operator command that prints checker, journal or file
// bytes prints them through it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "host/json_output.h"
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

TEST_CASE("the one JSON writer sends DEL, C1 controls and bidi overrides only as \\u escapes") {
  // A dump already escapes C0 (ESC, BEL); the pass adds DEL, U+0085, U+009B, U+202E, U+2066,
  // U+2028 and leaves emoji, CJK and accents alone.
  const std::string value = std::string("\x1b[31m\x07\x7f\xc2\x85\xc2\x9b\xe2\x80\xae") +
                            "\xe2\x81\xa6\xe2\x80\xa8 \xf0\x9f\x8e\x89 \xe6\x97\xa5 caf\xc3\xa9";
  const std::string written = OutputJson(nlohmann::ordered_json{{"s", value}});
  CHECK(written ==
        "{\"s\":\"\\u001b[31m\\u0007\\u007f\\u0085\\u009b\\u202e\\u2066\\u2028 "
        "\xf0\x9f\x8e\x89 \xe6\x97\xa5 caf\xc3\xa9\"}");
  CHECK(nlohmann::ordered_json::parse(written)["s"] == value);  // the same value

  OperatorRoot r;
  Spit(r.root + "/ledger/decisions.jsonl",
       R"({"decision":"d1","at":"2026-09-16T08:00:00.000Z","code":"vetoed","message":"no )"
       "\\u001b[2J \xe2\x80\xae \xc2\x85\\u0007\"}\n");
  Ran json = RunOp(RunLedgerCommand, {"list", "--json"}, r.Ctx());
  CHECK(json.out.find("\"message\": \"no \\u001b[2J \\u202e \\u0085\\u0007\"") !=
        std::string::npos);
  for (const char* raw : {"\x1b", "\x07", "\xe2\x80\xae", "\xc2\x85"}) {
    CHECK(json.out.find(raw) == std::string::npos);
  }
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

// `reports list|show` (SPEC §7): every veto report of every agent gate's report dir.
#include <doctest/doctest.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "operator/operator_fixture.h"
#include "reports/gate_layout.h"
#include "reports/veto_report.h"

namespace devflow {
namespace {

using namespace devflow::test;

VetoReportFacts Facts(const std::string& card, int64_t rev, const std::string& summary) {
  VetoReportFacts f;
  f.card_id = card;
  f.edge = "designing->ready";
  f.revision = rev;
  f.checked_inputs = {"prd:3", "design:4"};
  f.at = kT0;
  f.summary = summary;
  f.findings = {"date not in evidence: 2026-01-01"};
  return f;
}

// Writes a rendered report where the gate would, returning its path.
std::string WriteReport(const std::string& dir, const VetoReportFacts& f) {
  std::string path = VetoReportPath(dir, f.card_id, "designing", "ready", f.revision);
  Spit(path, RenderVetoReport(f));
  return path;
}

TEST_CASE("reports list prints each report's card, edge, revision, at and summary sorted by path") {
  OperatorRoot r;
  std::string b = WriteReport(r.ReportDir(), Facts("0002-b", 4, "the design cites a date"));
  std::string a = WriteReport(r.ReportDir(), Facts("0001-a", 7, "two lines\nof summary"));
  Spit(r.ReportDir() + "/notes.txt", "not a report");  // not a .md file: not listed

  Ran ran = RunOp(RunReportsCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.err == "");
  CHECK(ran.out == a + ": card 0001-a, edge designing->ready, revision 7, at " + kT0 +
                       ": two lines\\nof summary\n" + b +
                       ": card 0002-b, edge designing->ready, revision 4, at " + kT0 +
                       ": the design cites a date\n" + "2 veto reports in " + r.ReportDir() + "\n");
}

TEST_CASE(
    "reports list --json gives path, card, edge, revision, at and the summary as the report "
    "holds it") {
  OperatorRoot r;
  std::string a = WriteReport(r.ReportDir(), Facts("0001-a", 7, "two lines\nof summary"));
  Spit(r.ReportDir() + "/0009-z-designing-ready-r1.md", "# something else\n");

  Ran ran = RunOp(RunReportsCommand, {"list", "--json"}, r.Ctx());
  CHECK(ran.code == 0);
  auto j = nlohmann::ordered_json::parse(ran.out);
  CHECK(j.dump() ==
        nlohmann::ordered_json{
            {"dirs", {r.ReportDir()}},
            {"reports",
             {{{"path", a},
               {"card", "0001-a"},
               {"edge", "designing->ready"},
               {"revision", 7},
               {"at", kT0},
               {"summary", "two lines\nof summary"}},
              {{"path", r.ReportDir() + "/0009-z-designing-ready-r1.md"},
               {"problem",
                "it does not start with \"# Agent check veto: card <id>, edge <edge>\""}}}},
            {"faultReports", nlohmann::ordered_json::array()},
            {"errors", nlohmann::ordered_json::array()}}
            .dump());
}

// trial21 11-1: a 580 KB summary was one 580 KB listed line (and JSON field); the listing keeps
// issue 7 item 11's bound, `reports show` the whole report.
TEST_CASE("reports list cuts a long summary at 1 KiB with a visible marker, show keeps it whole") {
  OperatorRoot r;
  const std::string summary(600 * 1024, 'x');
  std::string a = WriteReport(r.ReportDir(), Facts("0001-a", 7, summary));
  Ran ran = RunOp(RunReportsCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out.size() < 2048);
  CHECK(ran.out.find("\xE2\x80\xA6 [cut: ") != std::string::npos);
  Ran json = RunOp(RunReportsCommand, {"list", "--json"}, r.Ctx());
  CHECK(json.code == 0);
  auto j = nlohmann::json::parse(json.out);
  CHECK(j["reports"][0]["summary"].get<std::string>().size() <= 1024);
  Ran show = RunOp(RunReportsCommand, {"show", a}, r.Ctx());
  CHECK(show.code == 0);
  CHECK(show.out.find(summary) != std::string::npos);
}

TEST_CASE("reports list marks a .md file that is not a veto report and keeps listing") {
  OperatorRoot r;
  Spit(r.ReportDir() + "/odd.md", "# Agent check veto: card 0001-a, edge designing->ready\n");
  Ran ran = RunOp(RunReportsCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out == r.ReportDir() + "/odd.md: not a veto report: no \"## Summary\" section\n" +
                       "1 veto report in " + r.ReportDir() + "\n");
}

TEST_CASE(
    "reports list reads every configured agent gate's report dir, relative to the workspace") {
  OperatorRoot r(
      "plugins:\n"
      "  - id: devflow-agent-gate\n"
      "    config:\n"
      "      edges: {}\n"
      "      reportDir: gate-reports\n"
      "  - id: devflow-agent-gate\n"
      "    config:\n"
      "      edges: {}\n");
  // A reportDir outside the root: the root's own subdirectory of it (reports/gate_layout.h).
  const std::string gate_dir = r.ws / "gate-reports/" + RootReportTag(r.root);
  std::string mine = WriteReport(gate_dir, Facts("0001-a", 2, "one"));
  std::string dflt = WriteReport(r.ReportDir(), Facts("0002-b", 3, "two"));
  Ran ran = RunOp(RunReportsCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(Lines(ran.out) ==
        std::vector<std::string>{
            dflt + ": card 0002-b, edge designing->ready, revision 3, at " + kT0 + ": two",
            mine + ": card 0001-a, edge designing->ready, revision 2, at " + kT0 + ": one",
            "2 veto reports in " + gate_dir + ", " + r.ReportDir()});
}

TEST_CASE("reports list of a root without reports says there are none") {
  OperatorRoot r;
  Ran ran = RunOp(RunReportsCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out == "0 veto reports in " + r.ReportDir() + "\n");
}

TEST_CASE("reports list exits 1 naming a report dir it cannot list") {
  OperatorRoot r;
  WriteReport(r.ReportDir(), Facts("0001-a", 2, "one"));
  FaultyFileSystem fs;
  fs.Fail("list", "reports/agent-gate", EACCES);
  Ran ran = RunOp(RunReportsCommand, {"list"}, r.Ctx(fs));
  CHECK(ran.code == 1);
  CHECK(ran.err == "devflow-gate: report dir " + r.ReportDir() + " cannot be listed: list " +
                       r.ReportDir() + ": Permission denied (EACCES); check its permissions\n");
}

TEST_CASE("reports show prints a report named by its bare file name, byte for byte") {
  OperatorRoot r;
  std::string a = WriteReport(r.ReportDir(), Facts("0001-a", 7, "why"));
  Ran ran = RunOp(RunReportsCommand, {"show", "0001-a-designing-ready-r7.md"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out == RenderVetoReport(Facts("0001-a", 7, "why")));
  Ran by_path = RunOp(RunReportsCommand, {"show", a}, r.Ctx());
  CHECK(by_path.code == 0);
  CHECK(by_path.out == ran.out);
}

TEST_CASE("reports show prints a checker's escape sequences visibly, the file keeps them") {
  OperatorRoot r;
  std::string a = WriteReport(r.ReportDir(), Facts("0001-a", 7, "red\x1b[31m\x07 text\nline 2"));
  CHECK(Slurp(a).value_or("").find("red\x1b[31m\x07 text\nline 2\n") != std::string::npos);
  Ran ran = RunOp(RunReportsCommand, {"show", a}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out.find('\x1b') == std::string::npos);
  CHECK(ran.out.find("\nred\\x1b[31m\\x07 text\nline 2\n") != std::string::npos);
}

TEST_CASE("reports show refuses a path outside the report dirs, also through ..") {
  OperatorRoot r;
  WriteReport(r.ReportDir(), Facts("0001-a", 7, "why"));
  r.DesigningCard("0001-a");
  const std::string journal = r.CardDir("0001-a") + "/journal.jsonl";
  for (const std::string& path : {journal, r.ReportDir() + "/../../tasks/0001-a/journal.jsonl"}) {
    Ran ran = RunOp(RunReportsCommand, {"show", path}, r.Ctx());
    CHECK(ran.code == 2);
    CHECK(ran.out == "");
    CHECK(ran.err == "devflow-gate: reports show: " + journal + " is outside the report dirs (" +
                         r.ReportDir() + ", " + r.ReportDir() +
                         "/faults); pass a report from `devflow-gate reports list`\n");
  }
}

TEST_CASE("reports show names the missing report and how to find the real ones") {
  OperatorRoot r;
  Ran ran = RunOp(RunReportsCommand, {"show", "nope.md"}, r.Ctx());
  CHECK(ran.code == 2);
  CHECK(ran.err == "devflow-gate: reports show: no report named nope.md in " + r.ReportDir() +
                       ", " + r.ReportDir() +
                       "/faults; run `devflow-gate reports list` to see the reports\n");
  Ran dots = RunOp(RunReportsCommand, {"show", ".."}, r.Ctx());
  CHECK(dots.code == 2);
  CHECK(dots.err ==
        "devflow-gate: reports show: \"..\" is not a report file name; pass a name from "
        "`devflow-gate reports list`\n");
}

TEST_CASE("reports rejects a missing or unknown subcommand and unknown options, exit 2") {
  OperatorRoot r;
  const std::string hint = "run 'devflow-gate --help' (or '<command> --help') for usage\n";
  Ran none = RunOp(RunReportsCommand, {}, r.Ctx());
  CHECK(none.code == 2);
  CHECK(none.err == "devflow-gate: A subcommand is required\n" + hint);
  Ran bad = RunOp(RunReportsCommand, {"frob"}, r.Ctx());
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "devflow-gate: unknown reports subcommand \"frob\"; use list, show or prune\n" + hint);
  Ran opt = RunOp(RunReportsCommand, {"list", "--bogus"}, r.Ctx());
  CHECK(opt.code == 2);
  CHECK(opt.err == "devflow-gate: The following argument was not expected: --bogus\n" + hint);
  Ran help = RunOp(RunReportsCommand, {"show", "--help"}, r.Ctx());
  CHECK(help.code == 0);
  CHECK(Lines(help.out).at(0) ==
        "print one report (a bare file name resolves inside the report dirs)");
  CHECK(help.out.find("Usage: devflow-gate reports show [OPTIONS] REPORT") != std::string::npos);
  CHECK(help.out.find("exit codes: 0 printed; 1 the report cannot be read; 2 usage error") !=
        std::string::npos);
}

TEST_CASE("ParseVetoReport reads back every header fact RenderVetoReport writes") {
  VetoReportFacts f = Facts("0003-c", 12, "");
  f.sandbox = "landlock";
  auto parsed = ParseVetoReport("/r/x.md", RenderVetoReport(f));
  REQUIRE(parsed.ok());
  CHECK(parsed->card == "0003-c");
  CHECK(parsed->edge == "designing->ready");
  CHECK(parsed->revision == 12);
  CHECK(parsed->at == kT0);
  CHECK(parsed->summary == "");
  auto bad = ParseVetoReport("/r/x.md",
                             "# Agent check veto: card a, edge b\n\n- card: a\n"
                             "- edge: b\n- revision: x\n- at: t\n\n## Summary\n\ns\n"
                             "\n## Findings\n\n- f\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "no \"- revision: <n>\" line");
}

// ---- fault reports (issue 10 item 8) ---------------------------------------------------------

namespace {
FaultReportFacts UpperFault() {
  FaultReportFacts f;
  f.card_id = "0001-a";
  f.edge = "designing->ready";
  f.revision = 4;
  f.at = kT0;
  f.provider = "checker";
  f.sandbox = "bwrap";
  f.fault = "the checker replied without a parsable verdict block";
  f.why = "the last verdict block says \"verdict\": \"ALLOW\"; expected \"allow\" or \"veto\"";
  f.reply = "```json\n{\"verdict\": \"ALLOW\", \"summary\": \"\x1b]0;pwned\x07\"}\n```\n";
  f.reply_bytes = static_cast<int64_t>(f.reply.size());
  return f;
}
}  // namespace

TEST_CASE("reports list names each fault report after the veto reports, with its fault and why") {
  OperatorRoot r;
  const std::string path =
      r.ReportDir() + "/faults/0001-a-designing-ready-r4-20260916T080000.000Z.md";
  Spit(path, RenderFaultReport(UpperFault()));
  Spit(r.ReportDir() + "/faults/junk.md", "hello\n");
  Spit(r.ReportDir() + "/faults/notes.txt", "not a report\n");
  Ran ran = RunOp(RunReportsCommand, {"list"}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out == path +
                       ": fault: card 0001-a, edge designing->ready, revision 4, at "
                       "2026-09-16T08:00:00.000Z: the checker replied without a parsable verdict "
                       "block: the last verdict block says \"verdict\": \"ALLOW\"; expected "
                       "\"allow\" or \"veto\"\n" +
                       r.ReportDir() +
                       "/faults/junk.md: not a fault report: it does not start with \"# Agent "
                       "check fault: card <id>, edge <edge>\"\n"
                       "0 veto reports and 2 fault reports in " +
                       r.ReportDir() + "\n");
  Ran json = RunOp(RunReportsCommand, {"list", "--json"}, r.Ctx());
  auto j = nlohmann::ordered_json::parse(json.out);
  CHECK(j["faultReports"][0].dump() ==
        nlohmann::ordered_json{{"path", path},
                               {"card", "0001-a"},
                               {"edge", "designing->ready"},
                               {"revision", 4},
                               {"at", kT0},
                               {"fault", "the checker replied without a parsable verdict block"},
                               {"why", UpperFault().why}}
            .dump());
}

TEST_CASE("reports show prints a fault report by name through the terminal printer") {
  OperatorRoot r;
  const std::string name = "0001-a-designing-ready-r4-20260916T080000.000Z.md";
  const std::string text = RenderFaultReport(UpperFault());
  Spit(r.ReportDir() + "/faults/" + name, text);
  Ran ran = RunOp(RunReportsCommand, {"show", name}, r.Ctx());
  CHECK(ran.code == 0);
  CHECK(ran.out.find("\"summary\": \"\\x1b]0;pwned\\x07\"}") != std::string::npos);
  CHECK(ran.out.find('\x1b') == std::string::npos);
  Ran by_path =
      RunOp(RunReportsCommand, {"show", r.ReportDir() + "/faults/" + name, "--json"}, r.Ctx());
  CHECK(by_path.code == 0);
  CHECK(nlohmann::ordered_json::parse(by_path.out)["text"] == text);  // verbatim
}

}  // namespace
}  // namespace devflow

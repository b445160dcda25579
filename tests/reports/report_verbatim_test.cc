// A veto report says what the checker said (issue 10 item 4): upstream's writeReport bytes,
// the summary and findings verbatim, plus our one `- sandbox:` line. Terminals see reports
// only through TerminalSafe.
#include <doctest/doctest.h>

#include "host/terminal.h"
#include "reports/veto_report.h"

namespace devflow {

TEST_CASE("a veto report keeps line breaks and control characters of the checker's words") {
  VetoReportFacts f;
  f.card_id = "0001-a";
  f.edge = "designing->ready";
  f.revision = 4;
  f.checked_inputs = {"prd:3", "design:4"};
  f.at = "2026-09-16T08:00:00.000Z";
  f.summary = "hollow\r\n## Summary\n\nall good";
  f.findings = {"REQ-7 missing\n## Findings\n- forged", "tab\there\x1b[31m\x07"};
  // Upstream's lines joined with '\n' (packages/devflow-agent-gate/src/index.ts writeReport).
  CHECK(RenderVetoReport(f) ==
        "# Agent check veto: card 0001-a, edge designing->ready\n"
        "\n"
        "- card: 0001-a\n"
        "- edge: designing->ready\n"
        "- revision: 4\n"
        "- checked inputs: prd:3, design:4\n"
        "- at: 2026-09-16T08:00:00.000Z\n"
        "\n"
        "## Summary\n"
        "\n"
        "hollow\r\n## Summary\n\nall good\n"
        "\n"
        "## Findings\n"
        "\n"
        "- REQ-7 missing\n## Findings\n- forged\n"
        "- tab\there\x1b[31m\x07\n");
}

TEST_CASE("the sandbox line is the one addition, after the at line") {
  VetoReportFacts f;
  f.card_id = "0309-no-findings";
  f.edge = "designing->ready";
  f.revision = 2;
  f.at = "2026-09-16T08:00:00.000Z";
  f.summary = "no";
  f.sandbox = "bwrap";
  CHECK(RenderVetoReport(f) ==
        "# Agent check veto: card 0309-no-findings, edge designing->ready\n"
        "\n"
        "- card: 0309-no-findings\n"
        "- edge: designing->ready\n"
        "- revision: 2\n"
        "- checked inputs: none\n"
        "- at: 2026-09-16T08:00:00.000Z\n"
        "- sandbox: bwrap\n"
        "\n"
        "## Summary\n"
        "\n"
        "no\n"
        "\n"
        "## Findings\n"
        "\n"
        "The checker listed no individual findings.\n");
}

TEST_CASE("terminal output of checker text has no control characters, a report keeps its lines") {
  const std::string words =
      "tab\there\x1b[31m\x07\r\nnext \xC2\x9B"
      "2J bad\xFF";
  CHECK(TerminalSafe(words) == "tab\\there\\x1b[31m\\x07\\r\\nnext \\u009b2J bad\\xff");
  CHECK(TerminalSafe(words, /*keep_lines=*/true) ==
        "tab\there\\x1b[31m\\x07\\r\nnext \\u009b2J bad\\xff");
  CHECK(TerminalSafe("登录 🚀") == "登录 🚀");
}

}  // namespace devflow

#include "reports/veto_report.h"

#include <doctest/doctest.h>

namespace devflow {
namespace {

TEST_CASE("veto report path is <dir>/<card>-<from>-<to>-r<revision>.md") {
  CHECK(VetoReportPath("/work/ws/.devflow/reports/agent-gate", "0002-b", "designing", "ready", 4) ==
        "/work/ws/.devflow/reports/agent-gate/0002-b-designing-ready-r4.md");
  CHECK(VetoReportPath("/r/reports/", "0202-veto-hit", "designing", "ready", 3) ==
        "/r/reports/0202-veto-hit-designing-ready-r3.md");
}

TEST_CASE("veto report lists inputs in configured order and each finding as a bullet") {
  VetoReportFacts facts;
  facts.card_id = "0002-b";
  facts.edge = "designing->ready";
  facts.revision = 4;
  facts.checked_inputs = {"prd:3", "design:4"};
  facts.at = "2026-09-16T08:00:00.000Z";
  facts.summary = "the design is hollow";
  facts.findings = {"cites requirement R9, which the PRD does not state", "no rollback plan"};
  CHECK(RenderVetoReport(facts) ==
        "# Agent check veto: card 0002-b, edge designing->ready\n"
        "\n"
        "- card: 0002-b\n"
        "- edge: designing->ready\n"
        "- revision: 4\n"
        "- checked inputs: prd:3, design:4\n"
        "- at: 2026-09-16T08:00:00.000Z\n"
        "\n"
        "## Summary\n"
        "\n"
        "the design is hollow\n"
        "\n"
        "## Findings\n"
        "\n"
        "- cites requirement R9, which the PRD does not state\n"
        "- no rollback plan\n");
}

TEST_CASE("veto report without findings or inputs says so in upstream words") {
  VetoReportFacts facts;
  facts.card_id = "0309-no-findings";
  facts.edge = "designing->ready";
  facts.revision = 2;
  facts.at = "2026-09-16T08:00:00.000Z";
  facts.summary = "hollow";
  CHECK(RenderVetoReport(facts) ==
        "# Agent check veto: card 0309-no-findings, edge designing->ready\n"
        "\n"
        "- card: 0309-no-findings\n"
        "- edge: designing->ready\n"
        "- revision: 2\n"
        "- checked inputs: none\n"
        "- at: 2026-09-16T08:00:00.000Z\n"
        "\n"
        "## Summary\n"
        "\n"
        "hollow\n"
        "\n"
        "## Findings\n"
        "\n"
        "The checker listed no individual findings.\n");
}

TEST_CASE("veto report names the sandbox level after the at line when one is given") {
  VetoReportFacts facts;
  facts.card_id = "0002-b";
  facts.edge = "designing->ready";
  facts.revision = 4;
  facts.checked_inputs = {"design:4"};
  facts.at = "2026-09-16T08:00:00.000Z";
  facts.summary = "s";
  facts.sandbox = "none";
  CHECK(RenderVetoReport(facts) ==
        "# Agent check veto: card 0002-b, edge designing->ready\n"
        "\n"
        "- card: 0002-b\n"
        "- edge: designing->ready\n"
        "- revision: 4\n"
        "- checked inputs: design:4\n"
        "- at: 2026-09-16T08:00:00.000Z\n"
        "- sandbox: none\n"
        "\n"
        "## Summary\n"
        "\n"
        "s\n"
        "\n"
        "## Findings\n"
        "\n"
        "The checker listed no individual findings.\n");
}

}  // namespace
}  // namespace devflow

// A checker's summary and findings cannot add headings or fields to a veto report.
#include <doctest/doctest.h>

#include "reports/veto_report.h"

namespace devflow {

TEST_CASE("a finding with line breaks or control characters stays one line of the report") {
  VetoReportFacts f;
  f.card_id = "0001-a";
  f.edge = "designing->ready";
  f.revision = 4;
  f.at = "2026-09-16T08:00:00.000Z";
  f.summary = "hollow\r\n## Summary\n\nall good";
  f.findings = {"REQ-7 missing\n## Findings\n- forged", "tab\there\x1b[31m"};
  const std::string text = RenderVetoReport(f);
  CHECK(text.find("\nhollow  ## Summary  all good\n") != std::string::npos);
  CHECK(text.find("\n- REQ-7 missing ## Findings - forged\n") != std::string::npos);
  CHECK(text.find("\n- tab here [31m\n") != std::string::npos);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);
  size_t headings = 0;
  for (size_t at = text.find("\n## "); at != std::string::npos; at = text.find("\n## ", at + 1)) {
    ++headings;
  }
  CHECK(headings == 2);
}

}  // namespace devflow

// /metrics' text: label values as the Prometheus text format reads them (docs/server.md).
#include "host/server/metrics.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

namespace devflow {
namespace {

// trial20: a provider name with an ESC (or another control character) went into /metrics raw:
// the text format escapes only \\, \" and \n, and the byte reached the terminal of whoever read
// it. Controls are written as the text \xHH (backslash escaped), which every scraper reads.
TEST_CASE("metrics: a label value's control characters are written as \\xHH text, never raw") {
  ServerMetrics m;
  m.CheckerRun(std::string("evil\x1b[31m\r\t\x7f") + "\"q\"\\\n", "ok");
  const std::string text = m.Render();
  INFO(text);
  CHECK(
      text.find(
          R"(devflow_gate_checker_runs_total{provider="evil\\x1b[31m\\x0d\\x09\\x7f\"q\"\\\n",outcome="ok"} 1)") !=
      std::string::npos);
  const auto raw = std::find_if(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return c != '\n' && (u < 0x20 || u == 0x7f);
  });
  CHECK(raw == text.end());
}

}  // namespace
}  // namespace devflow

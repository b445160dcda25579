// The header every report the gate writes opens with (veto reports, reports/veto_report.h;
// fault reports, reports/fault_report.h): `- <key>: <value>` lines after the title, read back
// by the operator commands in one place.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "host/status.h"

namespace devflow {

/// The facts both kinds of report carry, as read back.
struct ReportHeader {
  std::string path;  // absolute
  std::string card;
  std::string edge;
  int64_t revision = 0;
  std::string at;
  uint64_t bytes = 0;   // the file's size as read
  std::string problem;  // non-empty: the file does not read as such a report (facts empty)
};

/// The `- <key>: <value>` lines of `text` before offset `end`, the first of each key (a key
/// ends at the first ": "), e.g. {"card": "0001-a", "checked inputs": "prd:3, design:4"}.
std::map<std::string, std::string> ReportHeaderLines(const std::string& text, size_t end);

/// Fills card, edge, revision and at of `header` from `lines`; the Status (code "corrupt")
/// names the first missing or malformed one, e.g. `no "- revision: <n>" line` (a revision is
/// 1 to 15 digits).
Status ReadReportFacts(const std::map<std::string, std::string>& lines, ReportHeader& header);

}  // namespace devflow

#include "reports/report_header.h"

#include <algorithm>

namespace devflow {

std::map<std::string, std::string> ReportHeaderLines(const std::string& text, size_t end) {
  std::map<std::string, std::string> lines;
  size_t pos = 0;
  end = std::min(end, text.size());
  while (pos < end) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    if (line.substr(0, 2) != "- ") continue;
    const size_t colon = line.find(": ", 2);
    if (colon == std::string_view::npos) continue;
    lines.emplace(std::string(line.substr(2, colon - 2)), std::string(line.substr(colon + 2)));
  }
  return lines;
}

Status ReadReportFacts(const std::map<std::string, std::string>& lines, ReportHeader& header) {
  auto corrupt = [](const std::string& problem) { return Status::Error("corrupt", problem); };
  auto card = lines.find("card"), edge = lines.find("edge"), revision = lines.find("revision"),
       at = lines.find("at");
  if (card == lines.end()) return corrupt("no \"- card: <id>\" line");
  if (edge == lines.end()) return corrupt("no \"- edge: <edge>\" line");
  if (revision == lines.end() || revision->second.empty() || revision->second.size() > 15 ||
      !std::all_of(revision->second.begin(), revision->second.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return corrupt("no \"- revision: <n>\" line");
  }
  if (at == lines.end()) return corrupt("no \"- at: <time>\" line");
  header.card = card->second;
  header.edge = edge->second;
  header.revision = std::stoll(revision->second);
  header.at = at->second;
  return Status::Ok();
}

}  // namespace devflow

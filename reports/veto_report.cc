#include "reports/veto_report.h"

#include "host/os.h"

namespace devflow {

std::string VetoReportPath(const std::string& dir, const std::string& card_id,
                           const std::string& from, const std::string& to, int64_t revision) {
  return JoinPath(dir, card_id + "-" + from + "-" + to + "-r" + std::to_string(revision) + ".md");
}

Status CheckReportDir(FileSystem& fs, const std::string& workspace, const std::string& dir) {
  Result<std::optional<std::string>> link = SymlinkOnPath(fs, workspace, dir);
  if (!link.ok()) return link.status();
  if (*link) {
    return Status::Error("symlink", **link + " is a symlink; point reportDir at a real directory");
  }
  return Status::Ok();
}

// writeReport (reference §4.8): the summary and findings verbatim, as the checker gave them;
// upstream writes them so, and the report is evidence. A terminal only ever sees a report
// through TerminalSafe (host/terminal.h).
std::string RenderVetoReport(const VetoReportFacts& facts) {
  std::string inputs;
  for (const auto& input : facts.checked_inputs) {
    if (!inputs.empty()) inputs += ", ";
    inputs += input;
  }
  if (inputs.empty()) inputs = "none";

  std::string out;
  out += "# Agent check veto: card " + facts.card_id + ", edge " + facts.edge + "\n";
  out += "\n";
  out += "- card: " + facts.card_id + "\n";
  out += "- edge: " + facts.edge + "\n";
  out += "- revision: " + std::to_string(facts.revision) + "\n";
  out += "- checked inputs: " + inputs + "\n";
  out += "- at: " + facts.at + "\n";
  if (!facts.root.empty()) out += "- root: " + facts.root + "\n";
  if (!facts.sandbox.empty()) out += "- sandbox: " + facts.sandbox + "\n";
  out += "\n";
  out += "## Summary\n";
  out += "\n";
  out += facts.summary + "\n";
  out += "\n";
  out += "## Findings\n";
  out += "\n";
  if (facts.findings.empty()) {
    out += "The checker listed no individual findings.\n";
  } else {
    for (const auto& finding : facts.findings) out += "- " + finding + "\n";
  }
  // Upstream joins the lines (the last one empty) with '\n': one trailing newline, no blank line.
  return out;
}

}  // namespace devflow

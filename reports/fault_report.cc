#include "reports/fault_report.h"

#include <algorithm>
#include <string_view>

namespace devflow {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Backticks one longer than the longest run in `bytes`, at least 3.
std::string Fence(std::string_view bytes) {
  size_t longest = 0, run = 0;
  for (char c : bytes) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string Block(std::string_view bytes) {
  const std::string fence = Fence(bytes);
  return fence + "\n" + std::string(bytes) + "\n" + fence + "\n";
}

}  // namespace

std::string RenderFaultReport(const FaultReportFacts& facts) {
  std::string inputs;
  for (const auto& input : facts.checked_inputs) inputs += (inputs.empty() ? "" : ", ") + input;
  if (inputs.empty()) inputs = "none";
  const std::string_view reply =
      std::string_view(facts.reply)
          .substr(0,
                  static_cast<size_t>(std::min<int64_t>(kFaultReplyKeepBytes, facts.reply.size())));
  std::string_view err = facts.stderr_tail;
  if (static_cast<int64_t>(err.size()) > kFaultStderrKeepBytes) {
    err.remove_prefix(err.size() - static_cast<size_t>(kFaultStderrKeepBytes));
  }
  // Cut means bytes left out: by the read's cap, by this report's keep, or (stderr) by the
  // tail the dispatcher keeps. A marker that shortened the text is said as such, not as a cut.
  const std::string kept_reply = std::to_string(reply.size());
  const std::string redacted = "; env: values redacted";
  std::string reply_line;
  if (facts.reply_over) {
    reply_line = "at least " + std::to_string(facts.reply_bytes) +
                 " bytes (stopped at maxReplyBytes; the first " + kept_reply + " kept below";
  } else if (reply.size() < facts.reply.size()) {
    reply_line =
        std::to_string(facts.reply_bytes) + " bytes (the first " + kept_reply + " kept below";
  } else {
    reply_line = std::to_string(facts.reply_bytes) + " bytes (all kept below";
  }
  reply_line += (facts.reply_redacted ? redacted : "") + ")";
  std::string err_line = facts.stderr_cut || err.size() < facts.stderr_tail.size()
                             ? std::to_string(facts.stderr_bytes) + " bytes (the last " +
                                   std::to_string(err.size()) + " kept below"
                             : std::to_string(facts.stderr_bytes) + " bytes (all kept below";
  err_line += (facts.stderr_redacted ? redacted : "") + ")";

  std::string out;
  out += "# Agent check fault: card " + facts.card_id + ", edge " + facts.edge + "\n\n";
  out += "- card: " + facts.card_id + "\n";
  out += "- edge: " + facts.edge + "\n";
  out += "- revision: " + std::to_string(facts.revision) + "\n";
  out += "- checked inputs: " + inputs + "\n";
  out += "- at: " + facts.at + "\n";
  if (!facts.root.empty()) out += "- root: " + facts.root + "\n";
  out += "- provider: " + facts.provider + "\n";
  out += "- sandbox: " + (facts.sandbox.empty() ? std::string("unknown") : facts.sandbox) + "\n";
  out += "- fault: " + facts.fault + "\n";
  if (!facts.why.empty()) out += "- why: " + facts.why + "\n";
  out += "- reply: " + reply_line + "\n";
  out += "- stderr: " + err_line + "\n";
  out += "\n## Reply\n\n" + Block(reply);
  out += "\n## Stderr\n\n" + Block(err);
  return out;
}

Result<FaultReportEntry> ParseFaultReport(const std::string& path, const std::string& text) {
  auto corrupt = [](const std::string& problem) { return Status::Error("corrupt", problem); };
  if (!StartsWith(text, "# Agent check fault: card ")) {
    return corrupt("it does not start with \"# Agent check fault: card <id>, edge <edge>\"");
  }
  const size_t header_end = text.find("\n## Reply\n");
  if (header_end == std::string::npos) return corrupt("no \"## Reply\" section");
  const auto lines = ReportHeaderLines(text, header_end);
  FaultReportEntry entry;
  entry.path = path;
  entry.bytes = text.size();
  if (Status s = ReadReportFacts(lines, entry); !s.ok()) return s;
  auto fault = lines.find("fault");
  if (fault == lines.end()) return corrupt("no \"- fault: <fault>\" line");
  entry.fault = fault->second;
  if (auto why = lines.find("why"); why != lines.end()) entry.why = why->second;
  return entry;
}

}  // namespace devflow

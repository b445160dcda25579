#include "reports/report_command.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "host/terminal.h"
#include "reports/gate_layout.h"
#include "reports/operator_json.h"

namespace devflow {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool IsAbsent(const Status& s) { return s.code() == "ENOENT"; }

}  // namespace

Result<VetoReportEntry> ParseVetoReport(const std::string& path, const std::string& text) {
  auto corrupt = [](const std::string& problem) { return Status::Error("corrupt", problem); };
  if (!StartsWith(text, "# Agent check veto: card ")) {
    return corrupt("it does not start with \"# Agent check veto: card <id>, edge <edge>\"");
  }
  const std::string summary_mark = "\n## Summary\n\n";
  size_t summary_at = text.find(summary_mark);
  if (summary_at == std::string::npos) return corrupt("no \"## Summary\" section");
  size_t start = summary_at + summary_mark.size();
  // The summary sits between its heading and a line "\n## Findings" preceded by a blank line;
  // an empty summary leaves that blank line right at `start - 1`.
  size_t end = text.rfind("\n\n## Findings\n");
  if (end == std::string::npos || end + 1 < start) return corrupt("no \"## Findings\" section");

  VetoReportEntry entry;
  entry.path = path;
  entry.summary = end < start ? "" : text.substr(start, end - start);
  std::optional<std::string> card, edge, revision, at;
  size_t pos = 0;
  while (pos < summary_at) {
    size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    auto take = [&](const char* prefix, std::optional<std::string>& into) {
      if (!into && StartsWith(line, prefix)) into = line.substr(std::string_view(prefix).size());
    };
    take("- card: ", card);
    take("- edge: ", edge);
    take("- revision: ", revision);
    take("- at: ", at);
  }
  if (!card) return corrupt("no \"- card: <id>\" line");
  if (!edge) return corrupt("no \"- edge: <edge>\" line");
  if (!revision || revision->empty() || revision->size() > 15 ||
      !std::all_of(revision->begin(), revision->end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return corrupt("no \"- revision: <n>\" line");
  }
  if (!at) return corrupt("no \"- at: <time>\" line");
  entry.card = *card;
  entry.edge = *edge;
  entry.revision = std::stoll(*revision);
  entry.at = *at;
  return entry;
}

VetoReportScan ScanVetoReports(const OperatorContext& ctx) {
  VetoReportScan scan;
  scan.dirs = VetoReportDirs(ctx);
  for (const std::string& dir : scan.dirs) {
    auto names = ctx.fs.ListDir(dir);
    if (!names.ok()) {
      if (!IsAbsent(names.status())) {
        scan.errors.push_back("report dir " + dir + " cannot be listed: " +
                              names.status().message() + "; check its permissions");
      }
      continue;
    }
    for (const std::string& name : *names) {
      if (!EndsWith(name, ".md")) continue;
      std::string path = JoinPath(dir, name);
      auto kind = ctx.fs.Kind(path);
      if (!kind.ok() || *kind != FileKind::kFile) continue;
      auto text = ctx.fs.ReadFile(path);
      if (!text.ok()) {
        VetoReportEntry e;
        e.path = path;
        e.problem = "it cannot be read: " + text.status().message();
        scan.entries.push_back(e);
        continue;
      }
      auto parsed = ParseVetoReport(path, *text);
      if (parsed.ok()) {
        scan.entries.push_back(*parsed);
      } else {
        VetoReportEntry e;
        e.path = path;
        e.problem = parsed.status().message();
        scan.entries.push_back(e);
      }
    }
  }
  std::sort(scan.entries.begin(), scan.entries.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return scan;
}

FaultReportScan ScanFaultReports(const OperatorContext& ctx) {
  FaultReportScan scan;
  for (const std::string& report_dir : VetoReportDirs(ctx)) {
    const std::string dir = FaultReportDir(report_dir);
    scan.dirs.push_back(dir);
    // An unlistable report dir is named by ScanVetoReports already; a fault dir that is not
    // there is none to look at.
    auto there = ctx.fs.Kind(dir);
    if (!there.ok() || *there != FileKind::kDir) continue;
    auto names = ctx.fs.ListDir(dir);
    if (!names.ok()) {
      if (!IsAbsent(names.status())) {
        scan.errors.push_back("fault report dir " + dir + " cannot be listed: " +
                              names.status().message() + "; check its permissions");
      }
      continue;
    }
    for (const std::string& name : *names) {
      if (!EndsWith(name, ".md")) continue;
      const std::string path = JoinPath(dir, name);
      auto kind = ctx.fs.Kind(path);
      if (!kind.ok() || *kind != FileKind::kFile) continue;
      FaultReportEntry e;
      e.path = path;
      auto text = ctx.fs.ReadFile(path);
      if (!text.ok()) {
        e.problem = "it cannot be read: " + text.status().message();
      } else if (auto parsed = ParseFaultReport(path, *text); parsed.ok()) {
        e = *parsed;
      } else {
        e.problem = parsed.status().message();
      }
      scan.entries.push_back(e);
    }
  }
  std::sort(scan.entries.begin(), scan.entries.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return scan;
}

namespace {

ojson FaultJson(const FaultReportEntry& e) {
  ojson j;
  j["path"] = e.path;
  if (!e.problem.empty()) {
    j["problem"] = e.problem;
    return j;
  }
  j["card"] = e.card;
  j["edge"] = e.edge;
  j["revision"] = e.revision;
  j["at"] = e.at;
  j["fault"] = e.fault;
  j["why"] = e.why.empty() ? ojson(nullptr) : ojson(e.why);
  return j;
}

ojson ReportJson(const VetoReportEntry& e) {
  ojson j;
  j["path"] = e.path;
  if (!e.problem.empty()) {
    j["problem"] = e.problem;
    return j;
  }
  j["card"] = e.card;
  j["edge"] = e.edge;
  j["revision"] = e.revision;
  j["at"] = e.at;
  j["summary"] = e.summary;
  return j;
}

}  // namespace

int ReportsList(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err) {
  VetoReportScan scan = ScanVetoReports(ctx);
  FaultReportScan faults = ScanFaultReports(ctx);
  scan.errors.insert(scan.errors.end(), faults.errors.begin(), faults.errors.end());
  if (json) {
    ojson j;
    j["dirs"] = scan.dirs;
    ojson reports = ojson::array();
    for (const auto& e : scan.entries) reports.push_back(ReportJson(e));
    j["reports"] = reports;
    ojson fault_reports = ojson::array();
    for (const auto& e : faults.entries) fault_reports.push_back(FaultJson(e));
    j["faultReports"] = fault_reports;
    j["errors"] = scan.errors;
    out << PrettyJson(j);
  } else {
    for (const auto& e : scan.entries) {
      if (!e.problem.empty()) {
        out << TerminalLine(e.path + ": not a veto report: " + e.problem) << "\n";
        continue;
      }
      out << TerminalLine(e.path + ": card " + e.card + ", edge " + e.edge + ", revision " +
                          std::to_string(e.revision) + ", at " + e.at + ": " + e.summary)
          << "\n";
    }
    for (const auto& e : faults.entries) {
      if (!e.problem.empty()) {
        out << TerminalLine(e.path + ": not a fault report: " + e.problem) << "\n";
        continue;
      }
      out << TerminalLine(e.path + ": fault: card " + e.card + ", edge " + e.edge + ", revision " +
                          std::to_string(e.revision) + ", at " + e.at + ": " + e.fault +
                          (e.why.empty() ? "" : ": " + e.why))
          << "\n";
    }
    std::string count = Plural(scan.entries.size(), "veto report", "veto reports");
    if (!faults.entries.empty()) {
      count += " and " + Plural(faults.entries.size(), "fault report", "fault reports");
    }
    out << TerminalLine(count + " in " + JoinList(scan.dirs)) << "\n";
  }
  for (const auto& e : scan.errors) err << "devflow-gate: " << TerminalLine(e) << "\n";
  return scan.errors.empty() ? 0 : 1;
}

namespace {

// The file `what` names, or the exit code (2 usage, 1 unreadable) after saying why on `err`.
struct Located {
  std::string path;
  int exit = 0;
};

Located Locate(const OperatorContext& ctx, const std::string& what, std::ostream& err) {
  std::vector<std::string> dirs = VetoReportDirs(ctx);
  for (size_t i = 0, n = dirs.size(); i < n; ++i) dirs.push_back(FaultReportDir(dirs[i]));
  std::string path;
  if (what.find('/') == std::string::npos) {
    if (what == "." || what == "..") {
      err << "devflow-gate: reports show: \"" << what
          << "\" is not a report file name; pass a name from `devflow-gate reports list`\n";
      return {"", 2};
    }
    std::vector<std::string> found;
    for (const auto& dir : dirs) {
      auto kind = ctx.fs.Kind(JoinPath(dir, what));
      if (kind.ok() && *kind != FileKind::kNone) found.push_back(JoinPath(dir, what));
    }
    if (found.empty()) {
      err << "devflow-gate: reports show: no report named " << what << " in " << JoinList(dirs)
          << "; run `devflow-gate reports list` to see the reports\n";
      return {"", 2};
    }
    if (found.size() > 1) {
      err << "devflow-gate: reports show: " << what << " is in more than one report dir ("
          << JoinList(found) << "); pass the full path\n";
      return {"", 2};
    }
    path = found.front();
  } else {
    path = AbsolutePath(what);
    if (std::find(dirs.begin(), dirs.end(), ParentPath(path)) == dirs.end()) {
      err << "devflow-gate: reports show: " << path << " is outside the report dirs ("
          << JoinList(dirs) << "); pass a report from `devflow-gate reports list`\n";
      return {"", 2};
    }
  }
  auto kind = ctx.fs.Kind(path);
  if (!kind.ok()) {
    err << "devflow-gate: reports show: " << kind.status().message() << "; check its permissions\n";
    return {"", 1};
  }
  if (*kind == FileKind::kNone) {
    err << "devflow-gate: reports show: no report " << path
        << "; run `devflow-gate reports list` to see the reports\n";
    return {"", 2};
  }
  if (*kind != FileKind::kFile) {
    err << "devflow-gate: reports show: " << path
        << " is not a regular file (the gate writes reports as plain files); inspect it by hand\n";
    return {"", 2};
  }
  return {path, 0};
}

}  // namespace

int ReportsShow(const OperatorContext& ctx, const std::string& what, bool json, std::ostream& out,
                std::ostream& err) {
  std::ostringstream why;
  Located at = Locate(ctx, what, why);
  if (at.exit != 0) {
    err << TerminalLine(why.str().substr(0, why.str().size() - 1)) << "\n";
    return at.exit;
  }
  auto text = ctx.fs.ReadFile(at.path);
  if (!text.ok()) {
    err << "devflow-gate: reports show: " << TerminalLine(text.status().message())
        << "; check its permissions\n";
    return 1;
  }
  if (json) {
    ojson j;
    j["path"] = at.path;
    j["text"] = *text;
    out << PrettyJson(j);
  } else {
    out << TerminalText(*text);
  }
  return 0;
}

}  // namespace devflow

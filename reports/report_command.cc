#include "reports/report_command.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "host/store.h"
#include "host/terminal.h"
#include "host/utf8.h"
#include "host/warnings.h"
#include "reports/cache_command.h"
#include "reports/gate_layout.h"
#include "reports/ledger_command.h"
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

namespace {

// The `- at:` of `text` read as a report of `kind` ("veto" | "fault"), nullopt when it does
// not read as one.
std::optional<std::string> ParseVetoOrFault(const char* kind, const std::string& path,
                                            const std::string& text) {
  if (std::string_view(kind) == "veto") {
    auto r = ParseVetoReport(path, text);
    return r.ok() ? std::optional<std::string>(r->at) : std::nullopt;
  }
  auto r = ParseFaultReport(path, text);
  return r.ok() ? std::optional<std::string>(r->at) : std::nullopt;
}

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
  entry.bytes = text.size();
  entry.summary = end < start ? "" : text.substr(start, end - start);
  if (Status s = ReadReportFacts(ReportHeaderLines(text, summary_at), entry); !s.ok()) return s;
  return entry;
}

namespace {

// Every `.md` regular file of `dir`, parsed by `parse` into `entries` (a file that cannot be
// read or does not parse keeps its `problem`). An absent dir is none to look at; one that
// cannot be listed is named in `errors` as `<label> <dir> cannot be listed: …`.
template <typename Entry, typename Parse>
void ScanReportDir(const OperatorContext& ctx, const std::string& dir, const char* label,
                   Parse parse, std::vector<Entry>& entries, std::vector<std::string>& errors) {
  auto names = ctx.fs.ListDir(dir);
  if (!names.ok()) {
    if (!IsAbsent(names.status())) {
      errors.push_back(std::string(label) + " " + dir + " cannot be listed: " +
                       names.status().message() + "; check its permissions");
    }
    return;
  }
  for (const std::string& name : *names) {
    if (!EndsWith(name, ".md")) continue;
    const std::string path = JoinPath(dir, name);
    auto kind = ctx.fs.Kind(path);
    if (!kind.ok() || *kind != FileKind::kFile) continue;
    Entry e;
    e.path = path;
    auto text = ctx.fs.ReadFile(path);
    if (!text.ok()) {
      e.problem = "it cannot be read: " + text.status().message();
    } else if (Result<Entry> parsed = parse(path, *text); parsed.ok()) {
      e = *parsed;
    } else {
      e.problem = parsed.status().message();
      e.bytes = text->size();
    }
    entries.push_back(e);
  }
}

template <typename Entry>
void SortByPath(std::vector<Entry>& entries) {
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
}

}  // namespace

VetoReportScan ScanVetoReports(const OperatorContext& ctx) {
  VetoReportScan scan;
  scan.dirs = VetoReportDirs(ctx);
  for (const std::string& dir : scan.dirs) {
    ScanReportDir(ctx, dir, "report dir", ParseVetoReport, scan.entries, scan.errors);
  }
  SortByPath(scan.entries);
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
    ScanReportDir(ctx, dir, "fault report dir", ParseFaultReport, scan.entries, scan.errors);
  }
  SortByPath(scan.entries);
  return scan;
}

namespace {

// The facts both kinds share, or the path and the problem of a file that is neither.
ojson HeaderJson(const ReportHeader& e) {
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
  return j;
}

// "card <id>, edge <edge>, revision <n>, at <at>"
std::string HeaderText(const ReportHeader& e) {
  return "card " + e.card + ", edge " + e.edge + ", revision " + std::to_string(e.revision) +
         ", at " + e.at;
}

// What a listing shows of a summary, a fault or its why: the bound of issue 7 item 11 (1 KiB
// per line, cut with a visible marker; trial21 11-1: a 580 KB summary was one listed line).
// `reports show` prints the whole report.
constexpr size_t kListedLineBytes = 1024;
std::string Listed(const std::string& text) { return BoundLine(text, kListedLineBytes); }

ojson FaultJson(const FaultReportEntry& e) {
  ojson j = HeaderJson(e);
  if (!e.problem.empty()) return j;
  j["fault"] = Listed(e.fault);
  j["why"] = e.why.empty() ? ojson(nullptr) : ojson(Listed(e.why));
  return j;
}

ojson ReportJson(const VetoReportEntry& e) {
  ojson j = HeaderJson(e);
  if (e.problem.empty()) j["summary"] = Listed(e.summary);
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
      out << TerminalLine(e.path + ": " + HeaderText(e) + ": " + Listed(e.summary)) << "\n";
    }
    for (const auto& e : faults.entries) {
      if (!e.problem.empty()) {
        out << TerminalLine(e.path + ": not a fault report: " + e.problem) << "\n";
        continue;
      }
      out << TerminalLine(e.path + ": fault: " + HeaderText(e) + ": " + Listed(e.fault) +
                          (e.why.empty() ? "" : ": " + Listed(e.why)))
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

// One report as retention sees it.
struct PruneItem {
  const ReportHeader* report;
  const char* kind;         // "veto" | "fault"
  std::string cached_veto;  // the cache file that names it, or ""
  std::string decision;     // the ledger row (newer than the cut) that names it, or ""
  bool parked = false;      // the newest fault report of a card parked blocked now
};

std::string ItemLine(const PruneItem& item) {
  return item.report->path + " (" + item.kind + " report of card " + item.report->card + ", at " +
         item.report->at + ")";
}

}  // namespace

int ReportsPrune(const OperatorContext& ctx, const RetentionRule& rule, bool dry_run, bool json,
                 std::ostream& out, std::ostream& err) {
  VetoReportScan vetoes = ScanVetoReports(ctx);
  FaultReportScan faults = ScanFaultReports(ctx);
  std::vector<std::string> errors = vetoes.errors;
  errors.insert(errors.end(), faults.errors.begin(), faults.errors.end());

  // What names a report: cached vetoes, and ledger rows newer than the cut.
  std::map<std::string, std::string> cached_by, decided_by;
  bool names_known = true;
  CacheScan cache = ScanVerdictCaches(ctx);
  for (const auto& e : cache.errors) {
    errors.push_back(e + "; no report is removed while the cached vetoes are unknown");
    names_known = false;
  }
  for (const CacheEntry& e : cache.entries) {
    if (auto report = CachedVetoReport(e)) cached_by.emplace(*report, e.file);
  }
  LedgerScan ledger = ScanDecisionLedger(ctx);
  if (!ledger.present && !ledger.problems.empty()) {
    for (const auto& p : ledger.problems) {
      errors.push_back("decision ledger: " + p +
                       "; no report is removed while the rows that name reports are unknown");
    }
    names_known = false;
  }
  if (rule.cut_ms) {
    for (const DecisionView& row : ledger.rows) {
      const std::optional<int64_t> at = DecisionRecordedMs(row);
      if (at && *at <= *rule.cut_ms) continue;
      for (const auto& named : {row.report, row.fault_report}) {
        if (named) decided_by.emplace(*named, row.id);
      }
    }
  }

  // The newest fault report of each card parked blocked now explains why it is parked: an
  // operator recovering the card needs it whatever its age (trial21 4-1: a prune removed it
  // while audit went on naming the parked card).
  std::map<std::string, std::pair<int64_t, std::string>> newest_fault;  // card -> (at, path)
  for (const auto& e : faults.entries) {
    const std::optional<int64_t> at = e.problem.empty() ? ParseIsoTime(e.at) : std::nullopt;
    if (!at) continue;
    auto [it, fresh] = newest_fault.emplace(e.card, std::pair{*at, e.path});
    if (!fresh && *at >= it->second.first) it->second = {*at, e.path};
  }
  std::set<std::string> park_reports;
  {
    CollectedWarnings dropped;
    Store store(ctx.root, ctx.fs, SystemClock(), dropped);
    for (const auto& [card_id, newest] : newest_fault) {
      Result<Card> card = store.Read(card_id, FoldKeeps::kState);
      if (card.ok() && card->stage == Location::kBlocked && !card->abandoned) {
        park_reports.insert(newest.second);
      } else if (!card.ok() && card.status().code() != "not-found" && !IsAbsent(card.status())) {
        // Unknown whether it is parked: the closed way keeps its reports.
        park_reports.insert(newest.second);
      }
    }
  }

  std::vector<PruneItem> removed, protected_items;
  size_t kept = 0;
  uint64_t removed_bytes = 0;
  auto judge = [&](const auto& entries, const char* kind) {
    std::vector<std::optional<int64_t>> times;
    for (const auto& e : entries) {
      times.push_back(e.problem.empty() ? ParseIsoTime(e.at) : std::nullopt);
    }
    const std::vector<bool> removes = RetentionRemoves(times, rule);
    for (size_t i = 0; i < entries.size(); ++i) {
      PruneItem item{&entries[i], kind, "", "", park_reports.count(entries[i].path) > 0};
      if (auto it = cached_by.find(entries[i].path); it != cached_by.end()) {
        item.cached_veto = it->second;
      }
      if (auto it = decided_by.find(entries[i].path); it != decided_by.end()) {
        item.decision = it->second;
      }
      if (!removes[i] || !names_known) {
        ++kept;
        continue;
      }
      if (!item.cached_veto.empty() || !item.decision.empty() || item.parked) {
        protected_items.push_back(item);
        ++kept;
        continue;
      }
      if (!dry_run) {
        // A gate may have written a new report under this name since the scan (a re-check
        // at the same revision): remove only the one judged.
        auto again = ctx.fs.ReadFile(entries[i].path);
        auto reread = again.ok() ? ParseVetoOrFault(kind, entries[i].path, *again)
                                 : std::optional<std::string>();
        if (!reread || *reread != entries[i].at) {
          if (again.ok() || !IsAbsent(again.status())) ++kept;
          continue;
        }
        Status s = ctx.fs.RemoveFile(entries[i].path);
        if (!s.ok() && !IsAbsent(s)) {
          errors.push_back("could not remove " + entries[i].path + ": " + s.message() +
                           "; check the permissions of " + ParentPath(entries[i].path));
          ++kept;
          continue;
        }
      }
      removed_bytes += entries[i].bytes;
      removed.push_back(item);
    }
  };
  judge(vetoes.entries, "veto");
  judge(faults.entries, "fault");

  std::vector<std::string> dirs = vetoes.dirs;
  dirs.insert(dirs.end(), faults.dirs.begin(), faults.dirs.end());
  if (json) {
    ojson j;
    j["dryRun"] = dry_run;
    j["dirs"] = dirs;
    j["cutMs"] = rule.cut_ms ? ojson(*rule.cut_ms) : ojson(nullptr);
    j["keep"] = rule.keep ? ojson(*rule.keep) : ojson(nullptr);
    ojson r = ojson::array();
    for (const PruneItem& item : removed) {
      ojson x;
      x["path"] = item.report->path;
      x["kind"] = item.kind;
      x["at"] = item.report->at;
      x["bytes"] = item.report->bytes;
      r.push_back(x);
    }
    j[dry_run ? "wouldRemove" : "removed"] = r;
    j["removedBytes"] = removed_bytes;
    j["kept"] = kept;
    ojson p = ojson::array();
    for (const PruneItem& item : protected_items) {
      ojson x;
      x["path"] = item.report->path;
      x["kind"] = item.kind;
      x["cachedVeto"] = item.cached_veto.empty() ? ojson(nullptr) : ojson(item.cached_veto);
      x["decision"] = item.decision.empty() ? ojson(nullptr) : ojson(item.decision);
      x["parked"] = item.parked;
      p.push_back(x);
    }
    j["protected"] = p;
    j["errors"] = errors;
    out << PrettyJson(j);
  } else {
    const std::string verb = dry_run ? "would remove " : "removed ";
    for (const PruneItem& item : removed) out << TerminalLine(verb + ItemLine(item)) << "\n";
    for (const PruneItem& item : protected_items) {
      out << TerminalLine(
                 "kept " + ItemLine(item) + ": " +
                 (!item.cached_veto.empty() ? "the cached veto " + item.cached_veto + " names it"
                  : !item.decision.empty()
                      ? "the ledger row " + item.decision + ", newer than the cut, names it"
                      : "card " + item.report->card +
                            " is parked blocked, and this is its newest fault report"))
          << "\n";
    }
    out << verb << Plural(removed.size(), "report", "reports") << " ("
        << Plural(removed_bytes, "byte", "bytes") << "), kept " << kept << " ("
        << protected_items.size()
        << " only because a cached veto or a newer ledger row names it, or it explains a "
           "park) in "
        << TerminalLine(JoinList(dirs)) << "\n";
  }
  for (const auto& e : errors) err << "devflow-gate: reports prune: " << TerminalLine(e) << "\n";
  return errors.empty() ? 0 : 1;
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

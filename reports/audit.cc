#include "reports/audit.h"
#include "host/json_depth.h"
#include "host/terminal.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "host/decision_ledger.h"
#include "host/journal.h"
#include "host/store.h"
#include "host/warnings.h"
#include "reports/verdict_cache.h"

namespace devflow {
namespace {

using ojson = nlohmann::ordered_json;
constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

std::string Pretty(const ojson& j) { return j.dump(2, ' ', false, kReplace) + "\n"; }
std::string Compact(const ojson& j) { return j.dump(-1, ' ', false, kReplace); }

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string JoinList(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

// One line of human output: a multi-line summary is folded onto the line.
std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string Plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool IsAbsent(const Status& s) { return s.code() == "ENOENT"; }

std::string Workspace(const std::string& root) { return ParentPath(root); }

// Same rule as AgentGate::ReportDir / CacheDir (plugin/agent_gate.h); restated here because
// reports/ sits below plugin/ in the link order.
std::string ReportDirOf(const AgentGateConfig& gate, const std::string& root) {
  if (!gate.report_dir) return JoinPath(root, "reports/agent-gate");
  return ResolveAgainst(Workspace(root), *gate.report_dir);
}
std::string CacheDirOf(const AgentGateConfig& gate, const std::string& root) {
  if (!gate.verdict_cache_dir) return "";
  return ResolveAgainst(Workspace(root), *gate.verdict_cache_dir);
}

void AddUnique(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Temp files of FileSystem::WriteFileAtomic (`.<name>.<pid>.<seq>.tmp`) and of upstream's cache
// writer (`<16 hex>.json.<pid>.tmp`).
bool IsTempName(const std::string& name) {
  return EndsWith(name, ".tmp") &&
         (StartsWith(name, ".") || name.find(".json.") != std::string::npos);
}

std::string AgeText(int64_t age_ms) { return std::to_string(age_ms / 1000) + "s old"; }

std::string ActorText(const Actor& a) {
  if (a.name) return a.kind + ":" + *a.name;
  if (a.session) return a.kind + ":" + *a.session;
  return a.kind;
}

int Usage(std::ostream& err, const std::string& problem, const char* usage) {
  err << "devflow-gate: " << problem << "; usage: " << usage << "\n";
  return 2;
}

// Flags of one operator command: --json, --dry-run (when allowed), --help, positionals.
struct Flags {
  bool json = false;
  bool dry_run = false;
  bool help = false;
  std::vector<std::string> positional;
  std::string unknown;  // first unknown option
};

Flags ParseFlags(const std::vector<std::string>& args, size_t from, bool allow_dry_run) {
  Flags f;
  for (size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      f.json = true;
    } else if (a == "--dry-run" && allow_dry_run) {
      f.dry_run = true;
    } else if (a == "--help" || a == "-h") {
      f.help = true;
    } else if (StartsWith(a, "-") && a != "-") {
      if (f.unknown.empty()) f.unknown = a;
    } else {
      f.positional.push_back(a);
    }
  }
  return f;
}

// ---- real probe -----------------------------------------------------------------------------

class RealProbe : public HostProbe {
 public:
  Result<int64_t> AgeMs(const std::string& path) override {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return OsError(errno, "stat", path);
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    int64_t ms = (static_cast<int64_t>(now.tv_sec) - st.st_mtim.tv_sec) * 1000 +
                 (static_cast<int64_t>(now.tv_nsec) - st.st_mtim.tv_nsec) / 1000000;
    return std::max<int64_t>(ms, 0);
  }
  bool ProcessAlive(int64_t pid) override {
    if (pid <= 0 || pid > 0x7fffffff) return false;  // kill(0|-n) would signal a group
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  }
};

}  // namespace

HostProbe& RealHostProbe() {
  static RealProbe probe;
  return probe;
}

std::vector<std::string> VetoReportDirs(const OperatorContext& ctx) {
  std::vector<std::string> dirs;
  for (const PluginConfig& plugin : ctx.config.plugins) {
    if (plugin.agent) AddUnique(dirs, ReportDirOf(*plugin.agent, ctx.root));
  }
  if (dirs.empty()) dirs.push_back(JoinPath(ctx.root, "reports/agent-gate"));
  return dirs;
}

std::vector<std::string> VerdictCacheDirs(const OperatorContext& ctx) {
  std::vector<std::string> dirs;
  for (const PluginConfig& plugin : ctx.config.plugins) {
    if (!plugin.agent) continue;
    std::string dir = CacheDirOf(*plugin.agent, ctx.root);
    if (!dir.empty()) AddUnique(dirs, dir);
  }
  return dirs;
}

// ---- veto reports ---------------------------------------------------------------------------

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

namespace {

struct ReportScan {
  std::vector<std::string> dirs;
  std::vector<VetoReportEntry> entries;  // sorted by path
  std::vector<std::string> errors;
};

ReportScan ScanReports(const OperatorContext& ctx) {
  ReportScan scan;
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

const char kReportsUsage[] = "devflow-gate reports list [--json] | reports show PATH|NAME";

int ReportsList(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err) {
  ReportScan scan = ScanReports(ctx);
  if (json) {
    ojson j;
    j["dirs"] = scan.dirs;
    ojson reports = ojson::array();
    for (const auto& e : scan.entries) reports.push_back(ReportJson(e));
    j["reports"] = reports;
    j["errors"] = scan.errors;
    out << Pretty(j);
  } else {
    for (const auto& e : scan.entries) {
      if (!e.problem.empty()) {
        out << e.path << ": not a veto report: " << e.problem << "\n";
        continue;
      }
      out << e.path << ": card " << e.card << ", edge " << e.edge << ", revision " << e.revision
          << ", at " << e.at << ": " << OneLine(e.summary) << "\n";
    }
    out << Plural(scan.entries.size(), "veto report", "veto reports") << " in "
        << JoinList(scan.dirs) << "\n";
  }
  for (const auto& e : scan.errors) err << "devflow-gate: " << e << "\n";
  return scan.errors.empty() ? 0 : 1;
}

int ReportsShow(const OperatorContext& ctx, const std::string& what, std::ostream& out,
                std::ostream& err) {
  const std::vector<std::string> dirs = VetoReportDirs(ctx);
  std::string path;
  if (what.find('/') == std::string::npos) {
    if (what == "." || what == "..") {
      return Usage(err, "reports show: \"" + what + "\" is not a report file name", kReportsUsage);
    }
    std::vector<std::string> found;
    for (const auto& dir : dirs) {
      auto kind = ctx.fs.Kind(JoinPath(dir, what));
      if (kind.ok() && *kind != FileKind::kNone) found.push_back(JoinPath(dir, what));
    }
    if (found.empty()) {
      err << "devflow-gate: reports show: no report named " << what << " in " << JoinList(dirs)
          << "; run `devflow-gate reports list` to see the reports\n";
      return 2;
    }
    if (found.size() > 1) {
      err << "devflow-gate: reports show: " << what << " is in more than one report dir ("
          << JoinList(found) << "); pass the full path\n";
      return 2;
    }
    path = found.front();
  } else {
    path = AbsolutePath(what);
    if (std::find(dirs.begin(), dirs.end(), ParentPath(path)) == dirs.end()) {
      err << "devflow-gate: reports show: " << path << " is outside the report dirs ("
          << JoinList(dirs) << "); pass a report from `devflow-gate reports list`\n";
      return 2;
    }
  }
  auto kind = ctx.fs.Kind(path);
  if (!kind.ok()) {
    err << "devflow-gate: reports show: " << kind.status().message() << "; check its permissions\n";
    return 1;
  }
  if (*kind == FileKind::kNone) {
    err << "devflow-gate: reports show: no report " << path
        << "; run `devflow-gate reports list` to see the reports\n";
    return 2;
  }
  if (*kind != FileKind::kFile) {
    err << "devflow-gate: reports show: " << path
        << " is not a regular file (the gate writes reports as plain files); inspect it by hand\n";
    return 2;
  }
  auto text = ctx.fs.ReadFile(path);
  if (!text.ok()) {
    err << "devflow-gate: reports show: " << text.status().message() << "; check its permissions\n";
    return 1;
  }
  out << TerminalSafe(*text, /*keep_lines=*/true);  // the file keeps the checker's bytes
  return 0;
}

// ---- verdict cache --------------------------------------------------------------------------

// The key object exactly as VerdictCacheKey::CompactJson writes it: five fields, this order,
// string values (inputs: an array of strings).
std::optional<VerdictCacheKey> KeyOf(const ojson& j) {
  static const char* const kFields[] = {"edge", "root", "card", "inputs", "promptSha256"};
  if (!j.is_object() || j.size() != 5) return std::nullopt;
  size_t i = 0;
  for (auto it = j.begin(); it != j.end(); ++it, ++i) {
    if (it.key() != kFields[i]) return std::nullopt;
    if (i == 3) {
      if (!it->is_array()) return std::nullopt;
      for (const auto& v : *it) {
        if (!v.is_string()) return std::nullopt;
      }
    } else if (!it->is_string()) {
      return std::nullopt;
    }
  }
  VerdictCacheKey key;
  key.edge = j["edge"].get<std::string>();
  key.root = j["root"].get<std::string>();
  key.card = j["card"].get<std::string>();
  key.inputs = j["inputs"].get<std::vector<std::string>>();
  key.prompt_sha256 = j["promptSha256"].get<std::string>();
  return key;
}

// Decides current vs stale for well-formed, well-named records; cards are read once.
class Currency {
 public:
  explicit Currency(const OperatorContext& ctx)
      : ctx_(ctx), store_(ctx.root, ctx.fs, SystemClock(), dropped_) {}

  // "" when an identical retry would hit, else why not.
  std::string WhyStale(const std::string& dir, const VerdictCacheKey& key,
                       const std::optional<std::string>& checker,
                       const std::optional<std::string>& report_path) {
    if (key.root != ctx_.root) {
      return "card elsewhere: the key's root is " + key.root + ", not " + ctx_.root;
    }
    auto it = cards_.find(key.card);
    if (it == cards_.end()) it = cards_.emplace(key.card, store_.Read(key.card)).first;
    const Result<Card>& card = it->second;
    if (!card.ok()) {
      const std::string code = card.status().code();
      if (code == "not-found") return "card gone: " + key.card + " is not a card of this root";
      if (code == "archived") return "card gone: " + key.card + " is archived";
      return "card unreadable: " + card.status().message();
    }
    if (card->abandoned) return "card gone: " + key.card + " was abandoned";
    const AgentEdgeConfig* edge = nullptr;
    for (const PluginConfig& plugin : ctx_.config.plugins) {
      if (!plugin.agent || CacheDirOf(*plugin.agent, ctx_.root) != dir) continue;
      for (const AgentEdgeConfig& e : plugin.agent->edges) {
        if (e.edge.Name() == key.edge && !edge) edge = &e;
      }
    }
    if (!edge) return "edge " + key.edge + " is no longer configured for this cache";
    // The inputs the gate would collect now (plugin/agent_gate.cc CollectInputs).
    std::vector<std::string> labels;
    for (const std::string& kind : edge->inputs) {
      if (const ArtifactRecord* r = card->NewestOfKind(kind)) {
        labels.push_back(kind + ":" + std::to_string(r->rev));
      }
    }
    VerdictCacheKey now =
        VerdictCacheKey::Compute(key.edge, key.root, key.card, labels, edge->prompt);
    if (now.prompt_sha256 != key.prompt_sha256) {
      return "prompt changed: the configured instruction for " + key.edge +
             " is not the one this verdict answered";
    }
    if (now.inputs != key.inputs) {
      return "inputs moved on: the verdict saw [" + JoinList(key.inputs) + "], the card now has [" +
             JoinList(now.inputs) + "]";
    }
    // The Lookup identity rule (reports/verdict_cache.h): the gate misses these.
    if (!checker) {
      return "no checker identity: the record has no \"checkerSha256\" (written by upstream's "
             "gate or an older devflow-gate), so the gate treats it as a miss";
    }
    if (*checker !=
        CheckerIdentity(ctx_.config.FindProvider(edge->provider), edge->verdict_nonce)) {
      return "checker changed: provider \"" + edge->provider +
             "\" or the edge's verdictNonce is not what gave this verdict";
    }
    if (report_path) {
      Result<FileKind> kind = ctx_.fs.Kind(*report_path);
      if (!kind.ok() || *kind != FileKind::kFile) {
        return "report gone: the veto's report " + *report_path +
               " is not there, so the gate treats it as a miss";
      }
    }
    return "";
  }

 private:
  const OperatorContext& ctx_;
  CollectedWarnings dropped_;
  Store store_;
  std::map<std::string, Result<Card>> cards_;
};

CacheEntry ClassifyRecord(const std::string& dir, const std::string& name, FileSystem& fs,
                          Currency& currency) {
  CacheEntry e;
  e.file = JoinPath(dir, name);
  auto raw = fs.ReadFile(e.file);
  if (!raw.ok()) {
    e.state = CacheState::kUnreadable;
    e.why = raw.status().message();
    return e;
  }
  e.content = *raw;
  auto corrupt = [&e](std::string why) {
    e.state = CacheState::kCorrupt;
    e.why = std::move(why);
    return e;
  };
  if (JsonNestingDepth(*raw) > kMaxJsonDepth) return corrupt("nests too deeply to be a record");
  ojson j = ojson::parse(*raw, nullptr, /*allow_exceptions=*/false);
  // The Lookup validity rules (reference §4.9, reports/verdict_cache.cc IsValidRecord).
  if (j.is_discarded()) return corrupt("not valid JSON");
  if (!j.is_object()) return corrupt("not a JSON object");
  auto verdict = j.find("verdict");
  if (verdict == j.end() || !verdict->is_string() || (*verdict != "allow" && *verdict != "veto")) {
    return corrupt("\"verdict\" is not \"allow\" or \"veto\"");
  }
  auto summary = j.find("summary");
  if (summary == j.end() || !summary->is_string()) return corrupt("\"summary\" is not a string");
  auto report = j.find("reportPath");
  const bool has_report = report != j.end() && report->is_string();
  if (*verdict == "veto" && !has_report) {
    return corrupt("a veto record has no string \"reportPath\"");
  }
  auto key_json = j.find("key");
  std::optional<VerdictCacheKey> key;
  if (key_json != j.end()) key = KeyOf(*key_json);
  if (!key) {
    return corrupt(
        "\"key\" is not {edge, root, card, inputs, promptSha256} with string values in this "
        "order, so no lookup can ever hit it");
  }
  e.verdict = verdict->get<std::string>();
  e.summary = summary->get<std::string>();
  if (*verdict == "veto") e.report_path = report->get<std::string>();
  if (auto at = j.find("at"); at != j.end() && at->is_string()) e.at = at->get<std::string>();
  e.card = key->card;
  e.edge = key->edge;
  e.inputs = key->inputs;

  const std::string expected = key->FileName();
  if (name != expected) {
    e.state = CacheState::kMisnamed;
    e.why = "its key hashes to " + expected + ", so the gate never looks it up under this name";
    return e;
  }
  std::optional<std::string> checker;
  if (auto c = j.find("checkerSha256"); c != j.end() && c->is_string()) {
    checker = c->get<std::string>();
  }
  e.why = currency.WhyStale(dir, *key, checker, e.report_path);
  e.state = e.why.empty() ? CacheState::kCurrent : CacheState::kStale;
  return e;
}

}  // namespace

const char* CacheStateName(CacheState state) {
  switch (state) {
    case CacheState::kCurrent:
      return "current";
    case CacheState::kStale:
      return "stale";
    case CacheState::kCorrupt:
      return "corrupt";
    case CacheState::kMisnamed:
      return "misnamed";
    case CacheState::kUnreadable:
      return "unreadable";
    case CacheState::kTemp:
      return "temp";
  }
  return "corrupt";
}

CacheScan ScanVerdictCaches(const OperatorContext& ctx) {
  CacheScan scan;
  scan.dirs = VerdictCacheDirs(ctx);
  Currency currency(ctx);
  for (const std::string& dir : scan.dirs) {
    auto names = ctx.fs.ListDir(dir);
    if (!names.ok()) {
      if (!IsAbsent(names.status())) {
        scan.errors.push_back("verdict cache dir " + dir + " cannot be listed: " +
                              names.status().message() + "; check its permissions");
      }
      continue;
    }
    for (const std::string& name : *names) {
      const bool temp = IsTempName(name);
      if (!temp && !EndsWith(name, ".json")) continue;  // not the gate's: left alone
      std::string path = JoinPath(dir, name);
      auto kind = ctx.fs.Kind(path);
      if (!kind.ok() || *kind != FileKind::kFile) continue;
      if (temp) {
        CacheEntry e;
        e.file = path;
        e.state = CacheState::kTemp;
        auto age = ctx.probe.AgeMs(path);
        if (age.ok()) {
          e.age_ms = *age;
          e.why = std::string(*age >= kTempLeftoverAgeMs ? "leftover" : "in flight") + ", " +
                  AgeText(*age);
        } else {
          e.why = "age unknown: " + age.status().message();
        }
        scan.entries.push_back(e);
        continue;
      }
      scan.entries.push_back(ClassifyRecord(dir, name, ctx.fs, currency));
    }
  }
  std::sort(scan.entries.begin(), scan.entries.end(),
            [](const auto& a, const auto& b) { return a.file < b.file; });
  return scan;
}

namespace {

const char kCacheUsage[] =
    "devflow-gate cache list [--json] | cache verify [--json] | cache prune [--dry-run] [--json]";

const CacheState kRecordStates[] = {CacheState::kCurrent, CacheState::kStale, CacheState::kCorrupt,
                                    CacheState::kMisnamed, CacheState::kUnreadable};

std::map<CacheState, size_t> CountStates(const CacheScan& scan) {
  std::map<CacheState, size_t> n;
  for (const auto& e : scan.entries) ++n[e.state];
  return n;
}

// "current 1, stale 0, corrupt 0, misnamed 0, unreadable 0; temp files 0"
std::string CountsText(const CacheScan& scan) {
  auto n = CountStates(scan);
  std::string out;
  for (CacheState s : kRecordStates) {
    out += (out.empty() ? "" : ", ") + std::string(CacheStateName(s)) + " " + std::to_string(n[s]);
  }
  return out + "; temp files " + std::to_string(n[CacheState::kTemp]);
}

size_t RecordCount(const CacheScan& scan) {
  size_t n = 0;
  for (const auto& e : scan.entries) n += e.state != CacheState::kTemp;
  return n;
}

ojson CountsJson(const CacheScan& scan) {
  auto n = CountStates(scan);
  ojson j;
  for (CacheState s : kRecordStates) j[CacheStateName(s)] = n[s];
  j["temp"] = n[CacheState::kTemp];
  return j;
}

bool HasRecord(const CacheEntry& e) {
  return e.state == CacheState::kCurrent || e.state == CacheState::kStale ||
         e.state == CacheState::kMisnamed;
}

ojson EntryJson(const CacheEntry& e) {
  ojson j;
  j["file"] = e.file;
  j["state"] = CacheStateName(e.state);
  if (!e.why.empty()) j["why"] = e.why;
  if (HasRecord(e)) {
    j["verdict"] = e.verdict;
    j["card"] = e.card;
    j["edge"] = e.edge;
    j["inputs"] = e.inputs;
    j["at"] = e.at;
    j["summary"] = e.summary;
    if (e.report_path) j["reportPath"] = *e.report_path;
  }
  if (e.state == CacheState::kTemp) j["ageMs"] = e.age_ms ? ojson(*e.age_ms) : ojson(nullptr);
  return j;
}

std::string EntryLine(const CacheEntry& e) {
  std::string line = e.file + ": " + CacheStateName(e.state);
  if (!e.why.empty()) line += " (" + e.why + ")";
  if (HasRecord(e)) {
    line += ": " + e.verdict + " " + e.card + " " + e.edge + " [" + JoinList(e.inputs) + "] at " +
            e.at + ": " + OneLine(e.summary);
  }
  return line;
}

// The verify/audit problem line for a bad file, or "" for a good one.
std::string ProblemLine(const CacheEntry& e) {
  switch (e.state) {
    case CacheState::kCorrupt:
      return e.file + ": corrupt: " + e.why +
             "; the gate treats it as a miss: remove it with `devflow-gate cache prune`";
    case CacheState::kMisnamed:
      return e.file + ": misnamed: " + e.why + "; remove it with `devflow-gate cache prune`";
    case CacheState::kUnreadable:
      return e.file + ": unreadable: " + e.why +
             "; fix its permissions (the gate warns and treats it as a miss)";
    default:
      return "";
  }
}

// Whether prune removes an entry: never a current record, never an unreadable one (its state
// is unknown), never a temp file that may still be a write in flight.
bool Prunable(const CacheEntry& e) {
  switch (e.state) {
    case CacheState::kStale:
    case CacheState::kCorrupt:
    case CacheState::kMisnamed:
      return true;
    case CacheState::kTemp:
      return e.age_ms && *e.age_ms >= kTempLeftoverAgeMs;
    default:
      return false;
  }
}

// Caching disabled is not an error: there is simply nothing to list, verify or prune.
int PrintDisabled(bool json, std::ostream& out) {
  if (json) {
    ojson j;
    j["dirs"] = ojson::array();
    j["disabled"] = true;
    out << Pretty(j);
  } else {
    out << "the verdict cache is disabled: no devflow-agent-gate sets verdictCacheDir\n";
  }
  return 0;
}

int CacheList(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err) {
  CacheScan scan = ScanVerdictCaches(ctx);
  if (scan.dirs.empty()) return PrintDisabled(json, out);
  if (json) {
    ojson j;
    j["dirs"] = scan.dirs;
    ojson records = ojson::array();
    for (const auto& e : scan.entries) records.push_back(EntryJson(e));
    j["entries"] = records;
    j["counts"] = CountsJson(scan);
    j["errors"] = scan.errors;
    out << Pretty(j);
  } else {
    for (const auto& e : scan.entries) out << EntryLine(e) << "\n";
    out << Plural(RecordCount(scan), "record", "records") << " in " << JoinList(scan.dirs) << ": "
        << CountsText(scan) << "\n";
  }
  for (const auto& e : scan.errors) err << "devflow-gate: " << e << "\n";
  return scan.errors.empty() ? 0 : 1;
}

int CacheVerify(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err) {
  CacheScan scan = ScanVerdictCaches(ctx);
  if (scan.dirs.empty()) return PrintDisabled(json, out);
  std::vector<const CacheEntry*> bad;
  for (const auto& e : scan.entries) {
    if (!ProblemLine(e).empty()) bad.push_back(&e);
  }
  const bool ok = bad.empty() && scan.errors.empty();
  if (json) {
    ojson j;
    j["ok"] = ok;
    j["dirs"] = scan.dirs;
    j["counts"] = CountsJson(scan);
    ojson problems = ojson::array();
    for (const CacheEntry* e : bad) {
      ojson p;
      p["file"] = e->file;
      p["state"] = CacheStateName(e->state);
      p["why"] = e->why;
      problems.push_back(p);
    }
    j["problems"] = problems;
    j["errors"] = scan.errors;
    out << Pretty(j);
  } else {
    for (const CacheEntry* e : bad) out << ProblemLine(*e) << "\n";
    out << (ok ? "verdict cache OK: " : "verdict cache has problems: ")
        << Plural(RecordCount(scan), "record", "records") << " in " << JoinList(scan.dirs) << ": "
        << CountsText(scan) << "\n";
  }
  for (const auto& e : scan.errors) err << "devflow-gate: " << e << "\n";
  return ok ? 0 : 1;
}

int CachePrune(const OperatorContext& ctx, bool dry_run, bool json, std::ostream& out,
               std::ostream& err) {
  CacheScan scan = ScanVerdictCaches(ctx);
  if (scan.dirs.empty()) return PrintDisabled(json, out);
  std::vector<const CacheEntry*> removed, kept;
  std::vector<std::string> errors = scan.errors;
  for (const auto& e : scan.entries) {
    if (!Prunable(e)) {
      kept.push_back(&e);
      continue;
    }
    if (!dry_run) {
      if (e.state != CacheState::kTemp) {
        // A gate may have rewritten the file since the scan: delete only what was judged.
        auto again = ctx.fs.ReadFile(e.file);
        if (!again.ok() || *again != e.content) {
          if (again.ok() || !IsAbsent(again.status())) kept.push_back(&e);
          continue;
        }
      }
      Status s = ctx.fs.RemoveFile(e.file);
      if (!s.ok() && !IsAbsent(s)) {
        errors.push_back("could not remove " + e.file + ": " + s.message() +
                         "; check the permissions of " + ParentPath(e.file));
        kept.push_back(&e);
        continue;
      }
    }
    removed.push_back(&e);
  }
  if (json) {
    ojson j;
    j["dryRun"] = dry_run;
    j["dirs"] = scan.dirs;
    ojson r = ojson::array();
    for (const CacheEntry* e : removed) {
      ojson x;
      x["file"] = e->file;
      x["state"] = CacheStateName(e->state);
      x["why"] = e->why;
      r.push_back(x);
    }
    j[dry_run ? "wouldRemove" : "removed"] = r;
    ojson k = ojson::array();
    for (const CacheEntry* e : kept) {
      ojson x;
      x["file"] = e->file;
      x["state"] = CacheStateName(e->state);
      k.push_back(x);
    }
    j["kept"] = k;
    j["errors"] = errors;
    out << Pretty(j);
  } else {
    for (const CacheEntry* e : removed) {
      out << (dry_run ? "would remove " : "removed ") << e->file << " (" << CacheStateName(e->state)
          << ": " << e->why << ")\n";
    }
    out << (dry_run ? "would remove " : "removed ") << Plural(removed.size(), "file", "files")
        << ", kept " << kept.size() << " in " << JoinList(scan.dirs) << "\n";
  }
  for (const auto& e : errors) err << "devflow-gate: " << e << "\n";
  return errors.empty() ? 0 : 1;
}

}  // namespace

int RunReportsCommand(const std::vector<std::string>& args, const OperatorContext& ctx,
                      std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    if (args.empty()) return Usage(err, "reports needs a subcommand", kReportsUsage);
    out << "usage: " << kReportsUsage << "\n"
        << "  list   every veto report of every agent gate's report dir, sorted by path\n"
        << "  show   print one report (a bare file name resolves inside the report dirs)\n";
    return 0;
  }
  Flags f = ParseFlags(args, 1, false);
  if (f.help) {
    out << "usage: " << kReportsUsage << "\n";
    return 0;
  }
  if (!f.unknown.empty()) {
    return Usage(err, "reports " + args[0] + ": unknown option " + f.unknown, kReportsUsage);
  }
  if (args[0] == "list") {
    if (!f.positional.empty()) {
      return Usage(err, "reports list takes no argument, got \"" + f.positional[0] + "\"",
                   kReportsUsage);
    }
    return ReportsList(ctx, f.json, out, err);
  }
  if (args[0] == "show") {
    if (f.json)
      return Usage(err, "reports show prints the report itself; drop --json", kReportsUsage);
    if (f.positional.size() != 1) {
      return Usage(err, "reports show needs exactly one PATH or NAME", kReportsUsage);
    }
    return ReportsShow(ctx, f.positional[0], out, err);
  }
  return Usage(err, "unknown reports subcommand \"" + args[0] + "\"", kReportsUsage);
}

int RunCacheCommand(const std::vector<std::string>& args, const OperatorContext& ctx,
                    std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    if (args.empty()) return Usage(err, "cache needs a subcommand", kCacheUsage);
    out << "usage: " << kCacheUsage << "\n"
        << "  list    every record of every verdict cache dir with its state\n"
        << "  verify  exit 1 if a record is corrupt, misnamed or unreadable\n"
        << "  prune   delete stale, corrupt and misnamed records and leftover temp files;\n"
        << "          never a current record\n";
    return 0;
  }
  const std::string& sub = args[0];
  Flags f = ParseFlags(args, 1, sub == "prune");
  if (f.help) {
    out << "usage: " << kCacheUsage << "\n";
    return 0;
  }
  if (sub != "list" && sub != "verify" && sub != "prune") {
    return Usage(err, "unknown cache subcommand \"" + sub + "\"", kCacheUsage);
  }
  if (!f.unknown.empty()) {
    return Usage(err, "cache " + sub + ": unknown option " + f.unknown, kCacheUsage);
  }
  if (!f.positional.empty()) {
    return Usage(err, "cache " + sub + " takes no argument, got \"" + f.positional[0] + "\"",
                 kCacheUsage);
  }
  if (sub == "list") return CacheList(ctx, f.json, out, err);
  if (sub == "verify") return CacheVerify(ctx, f.json, out, err);
  return CachePrune(ctx, f.dry_run, f.json, out, err);
}

// ---- audit ----------------------------------------------------------------------------------

namespace {

const char kAuditUsage[] = "devflow-gate audit [--json]";

struct Findings {
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
};

struct CardsPart {
  size_t checked = 0;
  std::vector<std::pair<std::string, std::string>> unfoldable;  // card, problem
  std::vector<Card> active;                                     // folded active cards
  std::vector<std::string> active_dirs;                         // every active card dir
};

// Folds every active card through the store and every archived card's journal directly.
CardsPart CheckCards(const OperatorContext& ctx, Findings& f) {
  CardsPart part;
  CollectedWarnings dropped;
  Store store(ctx.root, ctx.fs, SystemClock(), dropped);
  auto unfoldable = [&](const std::string& id, const std::string& problem) {
    part.unfoldable.emplace_back(id, problem);
    f.problems.push_back("card " + id + " does not fold: " + problem +
                         "; repair the line by hand or restore the journal from version control "
                         "(every read and move of this card fails until then)");
  };
  const std::string tasks = JoinPath(ctx.root, "tasks");
  auto names = ctx.fs.ListDir(tasks);
  if (!names.ok() && !IsAbsent(names.status())) {
    f.problems.push_back("the cards dir " + tasks + " cannot be listed: " +
                         names.status().message() + "; check its permissions");
  }
  for (const std::string& id : names.ok() ? *names : std::vector<std::string>{}) {
    const std::string dir = JoinPath(tasks, id);
    auto kind = ctx.fs.Kind(dir);
    if (!IsValidCardId(id) || !kind.ok() || *kind != FileKind::kDir) continue;
    part.active_dirs.push_back(dir);
    ++part.checked;
    auto journal = ctx.fs.Kind(JoinPath(dir, "journal.jsonl"));
    if (journal.ok() && *journal == FileKind::kNone) {
      unfoldable(id, JoinPath(dir, "journal.jsonl") + ": the journal is missing");
      continue;
    }
    auto card = store.Read(id);
    if (!card.ok()) {
      unfoldable(id, card.status().message());
      continue;
    }
    part.active.push_back(std::move(*card));
  }
  const std::string archive = JoinPath(ctx.root, "archive");
  auto months = ctx.fs.ListDir(archive);
  for (const std::string& month : months.ok() ? *months : std::vector<std::string>{}) {
    auto ids = ctx.fs.ListDir(JoinPath(archive, month));
    for (const std::string& id : ids.ok() ? *ids : std::vector<std::string>{}) {
      const std::string dir = JoinPath(JoinPath(archive, month), id);
      auto kind = ctx.fs.Kind(dir);
      if (!IsValidCardId(id) || !kind.ok() || *kind != FileKind::kDir) continue;
      ++part.checked;
      const std::string path = JoinPath(dir, "journal.jsonl");
      auto text = ctx.fs.ReadFile(path);
      if (!text.ok()) {
        unfoldable(id, text.status().message());
        continue;
      }
      auto state = FoldJournal(path, *text);
      if (!state.ok()) unfoldable(id, state.status().message());
    }
  }
  return part;
}

ojson CheckLocks(const OperatorContext& ctx, const CardsPart& cards, Findings& f) {
  ojson locks = ojson::array();
  for (const std::string& dir : cards.active_dirs) {
    const std::string id = dir.substr(dir.rfind('/') + 1);
    const std::string lock = JoinPath(dir, "commit.lock");
    auto kind = ctx.fs.Kind(lock);
    if (!kind.ok() || *kind == FileKind::kNone) continue;
    ojson j;
    j["card"] = id;
    j["path"] = lock;
    auto text = ctx.fs.ReadFile(lock);
    std::string pid_text = text.ok() ? *text : "";
    while (!pid_text.empty() && (pid_text.back() == '\n' || pid_text.back() == '\r')) {
      pid_text.pop_back();
    }
    const bool numeric =
        !pid_text.empty() && pid_text.size() <= 10 &&
        std::all_of(pid_text.begin(), pid_text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!text.ok()) {
      j["pid"] = nullptr;
      j["alive"] = nullptr;
      f.problems.push_back("card " + id + " is locked by " + lock +
                           ", which cannot be read: " + text.status().message() +
                           "; if no devflow process is running, remove " + lock);
    } else if (!numeric) {
      j["pid"] = nullptr;
      j["alive"] = nullptr;
      f.problems.push_back("card " + id + " is locked by " + lock + ", which names no pid (" +
                           Compact(ojson(pid_text)) +
                           "); if no devflow process is running, remove " + lock);
    } else {
      const int64_t pid = std::stoll(pid_text);
      const bool alive = ctx.probe.ProcessAlive(pid);
      j["pid"] = pid;
      j["alive"] = alive;
      if (alive) {
        f.warnings.push_back("card " + id + " is locked by " + lock + ", held by pid " + pid_text +
                             ", which is running (a commit in progress); if it stays "
                             "and pid " +
                             pid_text + " is no devflow process, remove " + lock);
      } else {
        f.problems.push_back("card " + id + " is locked by " + lock + ", held by pid " + pid_text +
                             ", which is not running: every commit on this card fails "
                             "write-contended; no devflow process holds it, so remove " +
                             lock);
      }
    }
    locks.push_back(j);
  }
  return locks;
}

ojson CheckBlocked(const CardsPart& cards, Findings& f) {
  ojson blocked = ojson::array();
  for (const Card& card : cards.active) {
    if (card.stage != Location::kBlocked || card.abandoned) continue;
    const JournalEntry* park = nullptr;
    for (const JournalEntry& e : card.entries) {
      if (e.type == EntryType::kTransition && e.to == Location::kBlocked) park = &e;
    }
    const std::string from =
        card.blocked_from ? std::string(LocationName(*card.blocked_from)) : "?";
    const std::string since = park ? park->at : card.updated_at;
    const std::string by = park && park->by ? ActorText(*park->by) : "unknown";
    const std::string reason = park && park->reason ? *park->reason : "";
    ojson j;
    j["card"] = card.id;
    j["since"] = since;
    j["from"] = from;
    j["by"] = by;
    j["reason"] = park && park->reason ? ojson(reason) : ojson(nullptr);
    blocked.push_back(j);
    f.warnings.push_back("card " + card.id + " is parked blocked since " + since + " (from " +
                         from + ") by " + by + ": " +
                         (reason.empty() ? "no reason given" : reason) +
                         "; once the cause is fixed, recover it with `devflow-gate move " +
                         card.id + " " + from + "`");
  }
  return blocked;
}

// Temp leftovers anywhere under the root and in report/cache dirs outside it (symlinks are
// not followed). Only files at least kTempLeftoverAgeMs old count.
ojson CheckTemps(const OperatorContext& ctx, const std::vector<std::string>& extra_dirs,
                 Findings& f) {
  std::set<std::string> found;
  std::vector<std::string> pending{ctx.root};
  for (const auto& d : extra_dirs) {
    if (!StartsWith(d, ctx.root + "/")) pending.push_back(d);
  }
  std::set<std::string> visited;
  while (!pending.empty()) {
    std::string dir = pending.back();
    pending.pop_back();
    if (!visited.insert(dir).second) continue;
    auto names = ctx.fs.ListDir(dir);
    if (!names.ok()) {
      const std::string code = names.status().code();
      if (code != "ENOENT" && code != "ENOTDIR") {
        f.problems.push_back(dir + " cannot be listed: " + names.status().message() +
                             "; check its permissions (the audit could not look inside)");
      }
      continue;
    }
    for (const std::string& name : *names) {
      const std::string path = JoinPath(dir, name);
      auto kind = ctx.fs.Kind(path);
      if (!kind.ok()) continue;
      if (*kind == FileKind::kDir) {
        pending.push_back(path);
      } else if (*kind == FileKind::kFile && IsTempName(name)) {
        found.insert(path);
      }
    }
  }
  ojson temps = ojson::array();
  for (const std::string& path : found) {
    auto age = ctx.probe.AgeMs(path);
    if (!age.ok() || *age < kTempLeftoverAgeMs) continue;
    ojson j;
    j["path"] = path;
    j["ageMs"] = *age;
    temps.push_back(j);
    f.warnings.push_back("stale temp file " + path + " (" + AgeText(*age) +
                         ") is left over from an interrupted write; delete it");
  }
  return temps;
}

struct LedgerPart {
  std::string path;
  bool present = false;
  size_t rows = 0;
  size_t bad_lines = 0;
  std::map<std::string, size_t> by_code;
  std::vector<std::string> problems;
};

LedgerPart CheckLedger(const OperatorContext& ctx, Findings& f) {
  LedgerPart part;
  part.path = DecisionLedgerPath(ctx.root);
  auto text = ctx.fs.ReadFile(part.path);
  if (!text.ok()) {
    if (!IsAbsent(text.status())) {
      part.problems.push_back(text.status().message() + "; check its permissions");
    }
  } else {
    part.present = true;
    const std::string& t = *text;
    size_t pos = 0;
    int line_no = 0;
    while (pos < t.size()) {
      size_t eol = t.find('\n', pos);
      const bool torn = eol == std::string::npos;
      std::string line = t.substr(pos, torn ? std::string::npos : eol - pos);
      pos = torn ? t.size() : eol + 1;
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = part.path + ":" + std::to_string(line_no) + ": ";
      ojson row = JsonNestingDepth(line) > kMaxJsonDepth
                      ? ojson(ojson::value_t::discarded)
                      : ojson::parse(line, nullptr, /*allow_exceptions=*/false);
      if (row.is_discarded()) {
        ++part.bad_lines;
        part.problems.push_back(where + "not valid JSON" +
                                (torn ? " (a torn last line without its newline)" : "") +
                                "; move the damaged line out of the ledger by hand");
        continue;
      }
      auto code = row.is_object() ? row.find("code") : row.end();
      if (!row.is_object() || code == row.end() || !code->is_string()) {
        ++part.bad_lines;
        part.problems.push_back(where + "not a decision row (no string \"code\")" +
                                "; move the line out of the ledger by hand");
        continue;
      }
      if (torn) {
        ++part.bad_lines;
        part.problems.push_back(where + "the last line has no newline (a torn append)" +
                                "; add the missing newline by hand so the next row starts on "
                                "its own line");
      }
      ++part.rows;
      ++part.by_code[code->get<std::string>()];
    }
  }
  for (const auto& p : part.problems) f.problems.push_back("decision ledger: " + p);
  return part;
}

}  // namespace

int RunAuditCommand(const std::vector<std::string>& args, const OperatorContext& ctx,
                    std::ostream& out, std::ostream& err) {
  Flags flags = ParseFlags(args, 0, false);
  if (flags.help) {
    out << "usage: " << kAuditUsage << "\n"
        << "  a read-only health report of the devflow root; exit 0 healthy, 1 problems found\n";
    return 0;
  }
  if (!flags.unknown.empty())
    return Usage(err, "audit: unknown option " + flags.unknown, kAuditUsage);
  if (!flags.positional.empty()) {
    return Usage(err, "audit takes no argument, got \"" + flags.positional[0] + "\"", kAuditUsage);
  }
  auto root_kind = ctx.fs.Kind(ctx.root);
  if (!root_kind.ok() || *root_kind != FileKind::kDir) {
    err << "devflow-gate: audit: the devflow root " << ctx.root << " "
        << (root_kind.ok() ? "does not exist or is not a directory" : root_kind.status().message())
        << "; pass --root DIR or set DEVFLOW_ROOT\n";
    return 2;
  }

  Findings f;
  CardsPart cards = CheckCards(ctx, f);
  ojson locks = CheckLocks(ctx, cards, f);
  ojson blocked = CheckBlocked(cards, f);

  CacheScan cache = ScanVerdictCaches(ctx);
  for (const auto& e : cache.errors) f.problems.push_back(e);
  for (const auto& e : cache.entries) {
    if (std::string line = ProblemLine(e); !line.empty()) f.problems.push_back(line);
  }
  ReportScan reports = ScanReports(ctx);
  for (const auto& e : reports.errors) f.problems.push_back(e);
  for (const auto& e : reports.entries) {
    if (e.problem.empty()) continue;
    f.warnings.push_back("veto report " + e.path + " does not read as a veto report: " + e.problem +
                         "; the gate did not write it: move it out of the report dir");
  }
  std::vector<std::string> dirs = reports.dirs;
  dirs.insert(dirs.end(), cache.dirs.begin(), cache.dirs.end());
  ojson temps = CheckTemps(ctx, dirs, f);
  LedgerPart ledger = CheckLedger(ctx, f);

  size_t dead_locks = 0;
  for (const auto& l : locks) dead_locks += !(l["alive"].is_boolean() && l["alive"].get<bool>());
  const bool healthy = f.problems.empty();

  if (flags.json) {
    ojson j;
    j["root"] = ctx.root;
    j["healthy"] = healthy;
    j["problems"] = f.problems;
    j["warnings"] = f.warnings;
    ojson c;
    c["checked"] = cards.checked;
    ojson bad = ojson::array();
    for (const auto& [id, problem] : cards.unfoldable) {
      ojson u;
      u["card"] = id;
      u["problem"] = problem;
      bad.push_back(u);
    }
    c["unfoldable"] = bad;
    j["cards"] = c;
    j["locks"] = locks;
    j["blocked"] = blocked;
    j["tempFiles"] = temps;
    ojson cj;
    cj["dirs"] = cache.dirs;
    cj["counts"] = CountsJson(cache);
    j["cache"] = cj;
    ojson rj;
    rj["dirs"] = reports.dirs;
    rj["count"] = reports.entries.size();
    j["reports"] = rj;
    ojson lj;
    lj["path"] = ledger.path;
    lj["present"] = ledger.present;
    lj["rows"] = ledger.rows;
    lj["badLines"] = ledger.bad_lines;
    ojson by = ojson::object();
    for (const auto& [code, n] : ledger.by_code) by[code] = n;
    lj["byCode"] = by;
    lj["problems"] = ledger.problems;
    j["ledger"] = lj;
    out << Pretty(j);
    return healthy ? 0 : 1;
  }

  out << "audit of " << ctx.root << "\n";
  out << "cards: " << cards.checked << " checked, " << cards.unfoldable.size()
      << (cards.unfoldable.size() == 1 ? " does not fold\n" : " do not fold\n");
  out << "commit locks: " << locks.size() << " (" << dead_locks
      << " not held by a running process)\n";
  out << "blocked cards: " << blocked.size() << "\n";
  out << "stale temp files: " << temps.size() << "\n";
  if (cache.dirs.empty()) {
    out << "verdict cache: disabled (no devflow-agent-gate sets verdictCacheDir)\n";
  } else {
    out << "verdict cache: " << Plural(RecordCount(cache), "record", "records") << ": "
        << CountsText(cache) << "\n";
  }
  out << "veto reports: " << reports.entries.size() << "\n";
  if (!ledger.present) {
    out << "decision ledger: "
        << (ledger.problems.empty() ? "none yet (no move recorded)" : "cannot be read") << "\n";
  } else {
    std::vector<std::string> codes;
    for (const auto& [code, n] : ledger.by_code) codes.push_back(code + " " + std::to_string(n));
    out << "decision ledger: " << Plural(ledger.rows, "row", "rows")
        << (codes.empty() ? "" : " (" + JoinList(codes) + ")") << ", "
        << Plural(ledger.bad_lines, "bad line", "bad lines") << "\n";
  }
  for (const auto& p : f.problems) out << "problem: " << p << "\n";
  for (const auto& w : f.warnings) out << "warning: " << w << "\n";
  out << (healthy ? "healthy: " : "unhealthy: ") << Plural(f.problems.size(), "problem", "problems")
      << ", " << Plural(f.warnings.size(), "warning", "warnings") << "\n";
  return healthy ? 0 : 1;
}

}  // namespace devflow

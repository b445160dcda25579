#include "reports/cache_command.h"

#include <algorithm>
#include <ostream>

#include "host/json_depth.h"
#include "host/store.h"
#include "host/terminal.h"
#include "host/warnings.h"
#include "reports/gate_layout.h"
#include "reports/operator_json.h"
#include "reports/verdict_cache.h"

namespace devflow {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool IsAbsent(const Status& s) { return s.code() == "ENOENT"; }
std::string AgeText(int64_t age_ms) { return std::to_string(age_ms / 1000) + "s old"; }

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
                       const std::optional<std::string>& inputs,
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
      if (!plugin.agent || AgentCacheDir(*plugin.agent, ctx_.root) != dir) continue;
      for (const AgentEdgeConfig& e : plugin.agent->edges) {
        if (e.edge.Name() == key.edge && !edge) edge = &e;
      }
    }
    if (!edge) return "edge " + key.edge + " is no longer configured for this cache";
    // The inputs the gate would collect now.
    VerdictCacheKey now = VerdictCacheKey::Compute(key.edge, key.root, key.card,
                                                   InputLabels(*card, *edge), edge->prompt);
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
    Result<std::string> now_checker = CurrentCheckerIdentity(
        ctx_.config.FindProvider(edge->provider), edge->verdict_nonce, ParentPath(ctx_.root));
    if (!now_checker.ok()) {
      return "checker unidentified: a file provider \"" + edge->provider +
             "\"'s command names cannot be read (" + now_checker.status().message() +
             "), so the gate does not use the cache";
    }
    if (*checker != *now_checker) {
      return "checker changed: provider \"" + edge->provider +
             "\" (its definition, or the bytes of a file its command names) or the edge's "
             "verdictNonce is not what gave this verdict";
    }
    // The Lookup contents rule: the verdict judged these bytes of the inputs it names.
    if (!inputs) {
      return "no inputs identity: the record has no \"inputsSha256\" (written by upstream's "
             "gate or an older devflow-gate), so the gate treats it as a miss";
    }
    std::vector<std::pair<std::string, std::string>> contents;
    for (const std::string& kind : edge->inputs) {
      const ArtifactRecord* record = card->NewestOfKind(kind);
      if (!record) continue;
      Result<std::string> content = ReadArtifact(ctx_.fs, card->dir, record->path);
      if (!content.ok()) {
        return "input unreadable: " + kind + ":" + std::to_string(record->rev) + ": " +
               content.status().message();
      }
      contents.emplace_back(kind + ":" + std::to_string(record->rev), std::move(*content));
    }
    std::vector<std::pair<std::string, std::string_view>> judged(contents.begin(), contents.end());
    if (*inputs != JudgedIdentity(card->title, card->body, std::move(judged))) {
      return "inputs changed in place: [" + JoinList(key.inputs) +
             "] or the card's title or body do not hold the contents this verdict judged "
             "(edited without a new registration), so the gate treats it as a miss";
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
  // Lookup's read: a symlink or hard link in a record's place is never followed, and is a
  // problem to report, not a record to skip.
  auto raw = fs.ReadOwnFile(e.file);
  if (!raw.ok()) {
    if (IsForeignRecord(raw.status().code())) {
      e.state = CacheState::kCorrupt;
      e.refused = raw.status().code();
      e.why = "not a record the gate wrote: " + raw.status().message() +
              " (a planted file? the gate never reads it)";
      return e;
    }
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
  std::optional<std::string> inputs;
  if (auto i = j.find("inputsSha256"); i != j.end() && i->is_string()) {
    inputs = i->get<std::string>();
  }
  e.why = currency.WhyStale(dir, *key, checker, inputs, e.report_path);
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
      const bool temp = IsTempFileName(name);
      if (!temp && !EndsWith(name, ".json")) continue;  // not the gate's: left alone
      std::string path = JoinPath(dir, name);
      auto kind = ctx.fs.Kind(path);
      // A symlink, FIFO or device named like a record is classified (as not a record the gate
      // wrote), never skipped: Lookup would meet it under that name.
      if (!kind.ok() || *kind == FileKind::kNone || *kind == FileKind::kDir) continue;
      if (temp && *kind != FileKind::kFile) continue;
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

const CacheState kRecordStates[] = {CacheState::kCurrent, CacheState::kStale, CacheState::kCorrupt,
                                    CacheState::kMisnamed, CacheState::kUnreadable};

std::map<CacheState, size_t> CountStates(const CacheScan& scan) {
  std::map<CacheState, size_t> n;
  for (const auto& e : scan.entries) ++n[e.state];
  return n;
}

// "current 1, stale 0, corrupt 0, misnamed 0, unreadable 0; temp files 0"
}  // namespace

std::string CountsText(const CacheScan& scan) {
  auto n = CountStates(scan);
  std::string out;
  for (CacheState s : kRecordStates) {
    out += (out.empty() ? "" : ", ") + std::string(CacheStateName(s)) + " " + std::to_string(n[s]);
  }
  return out + "; temp files " + std::to_string(n[CacheState::kTemp]);
}

std::vector<std::pair<std::string, size_t>> StateCounts(const CacheScan& scan) {
  auto n = CountStates(scan);
  std::vector<std::pair<std::string, size_t>> out;
  for (CacheState s : kRecordStates) out.emplace_back(CacheStateName(s), n[s]);
  out.emplace_back("temp", n[CacheState::kTemp]);
  return out;
}

size_t RecordCount(const CacheScan& scan) {
  size_t n = 0;
  for (const auto& e : scan.entries) n += e.state != CacheState::kTemp;
  return n;
}

namespace {

ojson CountsJson(const CacheScan& scan) {
  ojson j;
  for (const auto& [state, n] : StateCounts(scan)) j[state] = n;
  return j;
}

bool HasRecord(const CacheEntry& e) {
  return e.state == CacheState::kCurrent || e.state == CacheState::kStale ||
         e.state == CacheState::kMisnamed;
}

}  // namespace

std::optional<std::string> CachedVetoReport(const CacheEntry& e) {
  if (!HasRecord(e) || e.verdict != "veto") return std::nullopt;
  return e.report_path;
}

namespace {

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
            e.at + ": " + e.summary;
  }
  return line;
}

// The verify/audit problem line for a bad file, or "" for a good one.
}  // namespace

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

namespace {

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
    out << PrettyJson(j);
  } else {
    out << "the verdict cache is disabled: no devflow-agent-gate sets verdictCacheDir\n";
  }
  return 0;
}

}  // namespace

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
    out << PrettyJson(j);
  } else {
    for (const auto& e : scan.entries) out << TerminalLine(EntryLine(e)) << "\n";
    out << TerminalLine(Plural(RecordCount(scan), "record", "records") + " in " +
                        JoinList(scan.dirs))
        << ": " << CountsText(scan) << "\n";
  }
  for (const auto& e : scan.errors) err << "devflow-gate: " << TerminalLine(e) << "\n";
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
    out << PrettyJson(j);
  } else {
    for (const CacheEntry* e : bad) out << TerminalLine(ProblemLine(*e)) << "\n";
    out << (ok ? "verdict cache OK: " : "verdict cache has problems: ")
        << Plural(RecordCount(scan), "record", "records") << " in "
        << TerminalLine(JoinList(scan.dirs)) << ": " << CountsText(scan) << "\n";
  }
  for (const auto& e : scan.errors) err << "devflow-gate: " << TerminalLine(e) << "\n";
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
        // Read as it was classified (never through a symlink): a refused file must still be
        // refused for the same reason, a record still hold the same bytes.
        auto again = ctx.fs.ReadOwnFile(e.file);
        const bool same = again.ok() ? e.refused.empty() && *again == e.content
                                     : again.status().code() == e.refused;
        if (!same) {
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
    out << PrettyJson(j);
  } else {
    for (const CacheEntry* e : removed) {
      out << TerminalLine((dry_run ? "would remove " : "removed ") + e->file + " (" +
                          CacheStateName(e->state) + ": " + e->why + ")")
          << "\n";
    }
    out << (dry_run ? "would remove " : "removed ") << Plural(removed.size(), "file", "files")
        << ", kept " << kept.size() << " in " << TerminalLine(JoinList(scan.dirs)) << "\n";
  }
  for (const auto& e : errors) err << "devflow-gate: " << TerminalLine(e) << "\n";
  return errors.empty() ? 0 : 1;
}

}  // namespace devflow

#include "reports/audit.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include "host/decision_ledger.h"
#include "host/journal.h"
#include "host/json_depth.h"
#include "host/store.h"
#include "host/terminal.h"
#include "host/warnings.h"
#include "reports/cache_command.h"
#include "reports/gate_layout.h"
#include "reports/ledger_command.h"
#include "reports/operator_json.h"
#include "reports/report_command.h"

namespace devflow {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool IsAbsent(const Status& s) { return s.code() == "ENOENT"; }
std::string AgeText(int64_t age_ms) { return std::to_string(age_ms / 1000) + "s old"; }

std::string ActorText(const Actor& a) {
  if (a.name) return a.kind + ":" + *a.name;
  if (a.session) return a.kind + ":" + *a.session;
  return a.kind;
}

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
    // A file over the read bound, or a card dir that is a link, names its own fix.
    const bool own_fix = problem.find("(EFBIG)") != std::string::npos ||
                         problem.find("(ELOOP)") != std::string::npos;
    f.problems.push_back("card " + id + " does not fold: " + problem +
                         (own_fix ? ""
                                  : "; repair the line by hand or restore the journal from "
                                    "version control") +
                         " (every read and move of this card fails until then)");
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
    if (IsValidCardId(id) && kind.ok() && *kind == FileKind::kSymlink) {
      ++part.checked;
      unfoldable(id, LinkedCardDir(dir).message());
      continue;
    }
    if (!IsValidCardId(id) || !kind.ok() || *kind != FileKind::kDir) continue;
    part.active_dirs.push_back(dir);
    ++part.checked;
    auto journal = ctx.fs.Kind(JoinPath(dir, "journal.jsonl"));
    if (journal.ok() && *journal == FileKind::kNone) {
      // Nothing but temp files: a creation stopped before its first journal line (the commit
      // point), so there never was a card here.
      if (Result<bool> interrupted = IsInterruptedCreation(ctx.fs, dir);
          interrupted.ok() && *interrupted) {
        --part.checked;
        f.warnings.push_back("card directory " + dir +
                             " has no journal and nothing else: a card creation was interrupted "
                             "before its first journal line, so no card was created; remove it "
                             "(rm -r " +
                             dir + ")");
        continue;
      }
      part.unfoldable.emplace_back(id, "the journal is missing");
      f.problems.push_back("card " + id + " does not fold: " + JoinPath(dir, "journal.jsonl") +
                           ": the journal is missing while the card's other files are there; "
                           "restore it from version control or a backup (every read and move "
                           "of this card fails until then)");
      continue;
    }
    const size_t warned = dropped.lines.size();
    auto card = store.Read(id);
    if (!card.ok()) {
      unfoldable(id, card.status().message());
      continue;
    }
    // The store's read warns when card.md's front matter is not the journal's stage (a commit
    // that left card.md as a person was editing it, a kill before the rewrite): the same
    // finding here, with its fix (trial20b 1a-3: audit said healthy).
    const std::string drift = "devflow: projection drift for card ";
    const std::string wins = "; the journal wins";
    for (size_t i = warned; i < dropped.lines.size(); ++i) {
      const std::string& line = dropped.lines[i];
      if (!line.starts_with(drift) || !line.ends_with(wins)) continue;
      f.warnings.push_back(line.substr(9, line.size() - 9 - wins.size()) +
                           "; card.md's front matter lags the journal, which wins (reads and "
                           "moves follow it); the card's next commit (`move` or `artifact add`) "
                           "rewrites the front matter");
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
    const CommitLockHolder holder = ReadCommitLockHolder(ctx.fs, lock);
    const std::string& pid_text = holder.text;
    if (holder.kind == CommitLockHolder::Kind::kUnreadable) {
      j["pid"] = nullptr;
      j["alive"] = nullptr;
      f.problems.push_back("card " + id + " is locked by " + lock + ", which cannot be read: " +
                           holder.text + "; if no devflow process is running, remove " + lock);
    } else if (holder.kind == CommitLockHolder::Kind::kNoPid) {
      j["pid"] = nullptr;
      j["alive"] = nullptr;
      f.problems.push_back("card " + id + " is locked by " + lock + ", which names no pid (" +
                           CompactJson(ojson(pid_text)) +
                           "); if no devflow process is running, remove " + lock);
    } else {
      const int64_t pid = holder.pid;
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
      } else if (*kind == FileKind::kFile && IsTempFileName(name)) {
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

// The decisions by outcome, faults apart from vetoes, and by the checker's sandbox level.
const char* const kOutcomes[] = {"allowed", "vetoed", "fault", "parked", "interrupted", "rejected"};

struct LedgerPart {
  LedgerScan scan;
  size_t decisions = 0;  // outcome rows (every row but the commit intents)
  size_t intents = 0;    // commit-intent rows
  std::map<std::string, size_t> by_outcome;
  std::map<std::string, size_t> by_sandbox;
};

// Commit-intent rows are announcements, not decisions: counted apart. An intent whose
// decision has no outcome row means the host stopped (or could not write) between the two;
// the card's journal says whether that commit happened (docs/decisions.md).
//
// A fault row (outcome "fault": the check failed closed and the park did not commit, or the
// attempt ended in an internal error) means a card whose checker could not decide was left
// unparked. While that card is still active, not blocked and at the row's revision (nothing has
// moved it since), that is a problem: nobody else will notice. Once the card moved on, or is
// blocked, it is history: a warning, so the count of faults is always explained.
LedgerPart CheckLedger(const OperatorContext& ctx, const CardsPart& cards, Findings& f) {
  LedgerPart part;
  part.scan = ScanDecisionLedger(ctx);
  // The ledger grows with every decision, and every whole-file read stops at kMaxReadBytes
  // (host/os.h): warn at half, while `ledger prune` can still read it.
  if (part.scan.bytes > static_cast<uint64_t>(kMaxReadBytes / 2)) {
    f.warnings.push_back("the decision ledger " + part.scan.path + " holds " +
                         std::to_string(part.scan.bytes) + " bytes, over half of the " +
                         std::to_string(kMaxReadBytes) +
                         " bytes the gate reads of one file: prune it (`devflow-gate ledger prune "
                         "--older-than 90d`) or rotate it (move it aside; the next decision "
                         "starts a new ledger)");
  }
  for (const char* o : kOutcomes) part.by_outcome[o] = 0;
  std::set<std::string> decided;
  for (const DecisionView& row : part.scan.rows) {
    if (row.outcome == "intent") {
      ++part.intents;
      continue;
    }
    ++part.decisions;
    decided.insert(row.id);
    ++part.by_outcome[row.outcome];
    ++part.by_sandbox[row.sandbox.value_or("unknown")];
  }
  for (const DecisionView& row : part.scan.rows) {
    if (row.outcome != "intent" || decided.count(row.id) != 0) continue;
    f.warnings.push_back("decision " + row.id + " (" + row.card + " " + row.edge + ", " +
                         part.scan.path + ":" + std::to_string(row.line) +
                         ") has a commit-intent row and no outcome row: the host stopped or "
                         "could not write between them; whether it committed is in the card's "
                         "journal (`devflow-gate card show " +
                         row.card + "`)");
  }
  for (const DecisionView& row : part.scan.rows) {
    if (row.outcome != "fault") continue;
    const std::string where =
        "decision " + row.id + " (" + row.card + " " + row.edge +
        (row.revision ? " at revision " + std::to_string(*row.revision) : "") + ", " +
        part.scan.path + ":" + std::to_string(row.line) + ")";
    const Card* card = nullptr;
    for (const Card& c : cards.active) {
      if (c.id == row.card) card = &c;
    }
    if (card && !card->abandoned && card->stage != Location::kBlocked && row.revision &&
        card->stage_revision == *row.revision) {
      f.problems.push_back(
          where + " failed closed and the card was NOT parked (" + row.message + "): card " +
          row.card + " is still " + std::string(LocationName(card->stage)) +
          " at that revision, unparked though its check could not run; fix the cause, then "
          "retry the move (`devflow-gate move " +
          row.card + " " +
          row.edge.substr(row.edge.find("->") == std::string::npos ? 0 : row.edge.find("->") + 2) +
          "`), which parks it blocked if the check still cannot run");
    } else {
      f.warnings.push_back(
          where + " failed closed without parking the card; " +
          (card ? "the card has " +
                      std::string(card->stage == Location::kBlocked ? "been parked blocked"
                                                                    : "changed") +
                      " since (now " + std::string(LocationName(card->stage)) + " at revision " +
                      std::to_string(card->stage_revision) + ")"
                : "the card is no longer active") +
          ", so nothing is left to do (`devflow-gate ledger show " + row.id + "` says why)");
    }
  }
  for (const auto& p : part.scan.problems) f.problems.push_back("decision ledger: " + p);
  return part;
}

// A cached veto names its report; one whose report was deleted is dangling. The gate treats
// it as a miss (reports/verdict_cache.h), so it only wastes space: a warning.
void CheckDanglingVetoes(const OperatorContext& ctx, const CacheScan& cache, Findings& f) {
  for (const CacheEntry& e : cache.entries) {
    const std::optional<std::string> report = CachedVetoReport(e);
    if (!report) continue;
    auto kind = ctx.fs.Kind(*report);
    if (kind.ok() && *kind != FileKind::kNone) continue;
    f.warnings.push_back(
        "cached veto " + e.file + " names the report " + *report + ", which " +
        (kind.ok() ? "was deleted" : "cannot be checked: " + kind.status().message()) +
        " (a dangling cached veto: the gate treats it as a miss); remove it with "
        "`devflow-gate cache prune`");
  }
}

}  // namespace

int Audit(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err) {
  Findings f;
  CardsPart cards = CheckCards(ctx, f);
  ojson locks = CheckLocks(ctx, cards, f);
  ojson blocked = CheckBlocked(cards, f);

  CacheScan cache = ScanVerdictCaches(ctx);
  for (const auto& e : cache.errors) f.problems.push_back(e);
  for (const auto& e : cache.entries) {
    if (std::string line = ProblemLine(e); !line.empty()) f.problems.push_back(line);
  }
  VetoReportScan reports = ScanVetoReports(ctx);
  for (const auto& e : reports.errors) f.problems.push_back(e);
  for (const auto& e : reports.entries) {
    if (e.problem.empty()) continue;
    f.warnings.push_back("veto report " + e.path + " does not read as a veto report: " + e.problem +
                         "; the gate did not write it: move it out of the report dir");
  }
  FaultReportScan faults = ScanFaultReports(ctx);
  for (const auto& e : faults.errors) f.problems.push_back(e);
  for (const auto& e : faults.entries) {
    if (e.problem.empty()) continue;
    f.warnings.push_back("fault report " + e.path + " does not read as a fault report: " +
                         e.problem + "; the gate did not write it: move it out of the fault dir");
  }
  std::vector<std::string> dirs = reports.dirs;
  dirs.insert(dirs.end(), faults.dirs.begin(), faults.dirs.end());
  dirs.insert(dirs.end(), cache.dirs.begin(), cache.dirs.end());
  ojson temps = CheckTemps(ctx, dirs, f);
  LedgerPart ledger = CheckLedger(ctx, cards, f);
  CheckDanglingVetoes(ctx, cache, f);

  uint64_t veto_bytes = 0, fault_bytes = 0;
  for (const auto& e : reports.entries) veto_bytes += e.bytes;
  for (const auto& e : faults.entries) fault_bytes += e.bytes;
  size_t dead_locks = 0;
  for (const auto& l : locks) dead_locks += !(l["alive"].is_boolean() && l["alive"].get<bool>());
  const bool healthy = f.problems.empty();

  if (json) {
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
    ojson counts;
    for (const auto& [state, n] : StateCounts(cache)) counts[state] = n;
    cj["counts"] = counts;
    j["cache"] = cj;
    ojson rj;
    rj["dirs"] = reports.dirs;
    rj["count"] = reports.entries.size();
    rj["bytes"] = veto_bytes;
    rj["faultDirs"] = faults.dirs;
    rj["faults"] = faults.entries.size();
    rj["faultBytes"] = fault_bytes;
    j["reports"] = rj;
    ojson lj;
    lj["path"] = ledger.scan.path;
    lj["present"] = ledger.scan.present;
    lj["bytes"] = ledger.scan.bytes;
    lj["rows"] = ledger.scan.rows.size();
    lj["decisions"] = ledger.decisions;
    lj["intents"] = ledger.intents;
    lj["badLines"] = ledger.scan.bad_lines;
    ojson by = ojson::object();
    for (const char* o : kOutcomes) by[o] = ledger.by_outcome[o];
    lj["byOutcome"] = by;
    ojson sandbox = ojson::object();
    for (const auto& [level, n] : ledger.by_sandbox) sandbox[level] = n;
    lj["bySandbox"] = sandbox;
    lj["problems"] = ledger.scan.problems;
    j["ledger"] = lj;
    out << PrettyJson(j);
    return healthy ? 0 : 1;
  }

  out << "audit of " << TerminalLine(ctx.root) << "\n";
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
  out << "veto reports: " << reports.entries.size() << " (" << Plural(veto_bytes, "byte", "bytes")
      << ")\n";
  out << "fault reports: " << faults.entries.size() << " (" << Plural(fault_bytes, "byte", "bytes")
      << ")\n";
  if (!ledger.scan.present) {
    out << "decision ledger: "
        << (ledger.scan.problems.empty() ? "none yet (no move recorded)" : "cannot be read")
        << "\n";
  } else {
    std::vector<std::string> outcomes, levels;
    for (const char* o : kOutcomes) {
      outcomes.push_back(std::string(o) + " " + std::to_string(ledger.by_outcome[o]));
    }
    for (const auto& [level, n] : ledger.by_sandbox) {
      levels.push_back(level + " " + std::to_string(n));
    }
    out << "decision ledger: " << Plural(ledger.scan.rows.size(), "row", "rows") << " ("
        << Plural(ledger.scan.bytes, "byte", "bytes")
        << " in all): " << Plural(ledger.decisions, "decision", "decisions") << ": "
        << JoinList(outcomes) << "; " << Plural(ledger.intents, "commit intent", "commit intents")
        << "; " << Plural(ledger.scan.bad_lines, "bad line", "bad lines") << "\n";
    if (!levels.empty()) out << "sandbox of decisions: " << TerminalLine(JoinList(levels)) << "\n";
  }
  for (const auto& p : f.problems) out << "problem: " << TerminalLine(p) << "\n";
  for (const auto& w : f.warnings) out << "warning: " << TerminalLine(w) << "\n";
  out << (healthy ? "healthy: " : "unhealthy: ") << Plural(f.problems.size(), "problem", "problems")
      << ", " << Plural(f.warnings.size(), "warning", "warnings") << "\n";
  return healthy ? 0 : 1;
}

}  // namespace devflow

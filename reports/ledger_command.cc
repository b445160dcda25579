#include "reports/ledger_command.h"

#include <algorithm>
#include <map>
#include <ostream>

#include "host/decision_ledger.h"
#include "host/json_depth.h"
#include "host/terminal.h"
#include "reports/operator_json.h"
#include "reports/sha256.h"

namespace devflow {

// An attempt's `at` is the caller's for /v1/admit, so a caller writing a far past or future
// `at` would otherwise pick when its row leaves the ledger and which --since window shows it
// (trial19 4a).
std::optional<int64_t> DecisionRecordedMs(const DecisionView& row) {
  const std::string& id = row.id;
  if (id.size() > 20 && id[8] == 'T' && id[15] == '.' && id[19] == 'Z' && id[20] == '-') {
    const std::string iso = id.substr(0, 4) + "-" + id.substr(4, 2) + "-" + id.substr(6, 2) + "T" +
                            id.substr(9, 2) + ":" + id.substr(11, 2) + ":" + id.substr(13, 7);
    if (std::optional<int64_t> ms = ParseIsoTime(iso)) return ms;
  }
  return ParseIsoTime(row.at);
}

namespace {

bool IsAbsent(const Status& s) { return s.code() == "ENOENT"; }

std::string StringField(const ojson& row, const char* key) {
  auto it = row.find(key);
  return it != row.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<std::string> OptionalString(const ojson& row, const char* key) {
  auto it = row.find(key);
  if (it == row.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string ActorText(const ojson& by) {
  if (!by.is_object()) return "";
  std::string kind = StringField(by, "kind");
  if (std::string name = StringField(by, "name"); !name.empty()) return kind + ":" + name;
  if (std::string session = StringField(by, "session"); !session.empty()) {
    return kind + ":" + session;
  }
  return kind;
}

bool Matches(const DecisionView& row, const LedgerFilter& f) {
  if (!f.card.empty() && row.card != f.card) return false;
  if (!f.edge.empty() && row.edge != f.edge) return false;
  if (!f.outcome.empty() && row.outcome != f.outcome) return false;
  if (f.since_ms || f.until_ms) {
    std::optional<int64_t> at = DecisionRecordedMs(row);
    if (!at) return false;  // a row without a readable time is outside every window
    if (f.since_ms && *at < *f.since_ms) return false;
    if (f.until_ms && *at >= *f.until_ms) return false;
  }
  return true;
}

std::string Unknown(const std::string& s) { return s.empty() ? "unknown" : s; }

std::string RowLine(const DecisionView& r) {
  std::string line = r.id + " " + Unknown(r.at) + " " + Unknown(r.card) + " " + Unknown(r.edge) +
                     " r" + (r.revision ? std::to_string(*r.revision) : "?") + " " + r.outcome +
                     " (sandbox " + r.sandbox.value_or("unknown") + ", by " + Unknown(r.by) + ")";
  if (!r.message.empty()) line += ": " + r.message;
  return line;
}

ojson RowJson(const DecisionView& r) {
  ojson j;
  j["decision"] = r.id;
  j["line"] = r.line;
  j["at"] = r.at.empty() ? ojson(nullptr) : ojson(r.at);
  j["card"] = r.card.empty() ? ojson(nullptr) : ojson(r.card);
  j["edge"] = r.edge.empty() ? ojson(nullptr) : ojson(r.edge);
  j["revision"] = r.revision ? ojson(*r.revision) : ojson(nullptr);
  j["by"] = r.by.empty() ? ojson(nullptr) : ojson(r.by);
  j["outcome"] = r.outcome;
  j["code"] = r.code;
  j["sandbox"] = r.sandbox ? ojson(*r.sandbox) : ojson(nullptr);
  j["message"] = r.message;
  j["report"] = r.report ? ojson(*r.report) : ojson(nullptr);
  j["faultReport"] = r.fault_report ? ojson(*r.fault_report) : ojson(nullptr);
  j["inputsSha256"] = r.inputs_sha256 ? ojson(*r.inputs_sha256) : ojson(nullptr);
  return j;
}

}  // namespace

std::string DerivedDecisionId(const std::string& line) {
  return "sha-" + Sha256Hex(line).substr(0, 12);
}

std::string InferredOutcome(bool ok, bool parked, const std::string& code,
                            const std::string& message) {
  if (code == "commit-intent") return "intent";
  if (ok) return "allowed";
  if (code == "interrupted") return "interrupted";
  if (parked) return "parked";
  if (message.find(" could not run: ") != std::string::npos) return "fault";
  if (code == "vetoed") return "vetoed";
  return "rejected";
}

// What to do about a ledger that could not be read: one over the bound every whole-file read
// keeps (kMaxReadBytes, host/os.h: EFBIG) is rotated, since `ledger prune` must read it too; the
// appenders create a new one at the next decision (AppendDurable reopens a file renamed away).
namespace {
std::string LedgerReadFix(const Status& status, const std::string& path) {
  if (status.code() == "EFBIG") {
    return "; rotate it: move it aside (mv " + path + " " + path +
           ".1); the next decision starts a new ledger";
  }
  return "; check its permissions";
}
}  // namespace

LedgerScan ScanDecisionLedger(const OperatorContext& ctx) {
  const std::string path = DecisionLedgerPath(ctx.root);
  auto text = ctx.fs.ReadFile(path);
  if (!text.ok()) {
    LedgerScan scan;
    scan.path = path;
    if (!IsAbsent(text.status())) {
      scan.problems.push_back(text.status().message() + LedgerReadFix(text.status(), path));
    }
    return scan;
  }
  return ParseDecisionLedger(path, *text);
}

LedgerScan ParseDecisionLedger(const std::string& path, const std::string& t) {
  LedgerScan scan;
  scan.path = path;
  scan.present = true;
  scan.bytes = t.size();
  size_t pos = 0;
  int line_no = 0;
  while (pos < t.size()) {
    size_t eol = t.find('\n', pos);
    const bool torn = eol == std::string::npos;
    const size_t begin = pos;
    std::string line = t.substr(pos, torn ? std::string::npos : eol - pos);
    pos = torn ? t.size() : eol + 1;
    ++line_no;
    scan.spans.push_back({begin, pos, false});
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = scan.path + ":" + std::to_string(line_no) + ": ";
    ojson row = JsonNestingDepth(line) > kMaxJsonDepth
                    ? ojson(ojson::value_t::discarded)
                    : ojson::parse(line, nullptr, /*allow_exceptions=*/false);
    if (row.is_discarded()) {
      ++scan.bad_lines;
      scan.problems.push_back(where + "not valid JSON" +
                              (torn ? " (a torn last line without its newline)" : "") +
                              "; move the damaged line out of the ledger by hand");
      continue;
    }
    auto code = row.is_object() ? row.find("code") : row.end();
    if (!row.is_object() || code == row.end() || !code->is_string()) {
      ++scan.bad_lines;
      scan.problems.push_back(where + "not a decision row (no string \"code\")" +
                              "; move the line out of the ledger by hand");
      continue;
    }
    if (torn) {
      ++scan.bad_lines;
      scan.problems.push_back(where + "the last line has no newline (a torn append)" +
                              "; add the missing newline by hand so the next row starts on "
                              "its own line");
    }
    scan.spans.back().row = true;
    DecisionView v;
    v.line = line_no;
    v.text = line;
    v.id = StringField(row, "decision");
    if (v.id.empty()) v.id = DerivedDecisionId(line);
    v.at = StringField(row, "at");
    v.card = StringField(row, "card");
    v.edge = StringField(row, "edge");
    if (auto rev = row.find("revision"); rev != row.end() && rev->is_number_integer()) {
      v.revision = rev->get<int64_t>();
    }
    if (auto by = row.find("by"); by != row.end()) v.by = ActorText(*by);
    v.code = code->get<std::string>();
    v.message = StringField(row, "message");
    const bool ok = row.value("ok", false) == true;
    const bool parked =
        row.contains("parked") && row["parked"].is_boolean() && row["parked"].get<bool>();
    v.outcome = StringField(row, "outcome");
    if (v.outcome.empty()) v.outcome = InferredOutcome(ok, parked, v.code, v.message);
    v.report = OptionalString(row, "report");
    v.fault_report = OptionalString(row, "faultReport");
    v.inputs_sha256 = OptionalString(row, "inputsSha256");
    // A level per checker run (an array, `[]` when none ran), or one string.
    if (auto sb = row.find("sandbox"); sb != row.end()) {
      if (sb->is_string()) {
        v.sandbox = sb->get<std::string>();
      } else if (sb->is_array()) {
        std::string levels;
        for (const auto& l : *sb) {
          if (l.is_string()) levels += (levels.empty() ? "" : ",") + l.get<std::string>();
        }
        v.sandbox = levels.empty() ? "no checker" : levels;
      }
    }
    if (auto checks = row.find("checks"); checks != row.end() && checks->is_array()) {
      for (const auto& c : *checks) {
        if (!c.is_object()) continue;
        std::string by = c.contains("by") ? ActorText(c["by"]) : "";
        v.checks.push_back(Unknown(by) + ": " + StringField(c, "summary"));
      }
    }
    scan.rows.push_back(std::move(v));
  }
  return scan;
}

int LedgerList(const OperatorContext& ctx, const LedgerFilter& filter, bool json, std::ostream& out,
               std::ostream& err) {
  LedgerScan scan = ScanDecisionLedger(ctx);
  std::vector<const DecisionView*> shown;
  for (const auto& r : scan.rows) {
    if (Matches(r, filter)) shown.push_back(&r);
  }
  if (json) {
    ojson j;
    j["path"] = scan.path;
    ojson rows = ojson::array();
    for (const DecisionView* r : shown) rows.push_back(RowJson(*r));
    j["decisions"] = rows;
    j["rows"] = scan.rows.size();
    j["badLines"] = scan.bad_lines;
    j["problems"] = scan.problems;
    out << PrettyJson(j);
  } else {
    for (const DecisionView* r : shown) out << TerminalLine(RowLine(*r)) << "\n";
    out << Plural(shown.size(), "decision", "decisions") << " of " << scan.rows.size() << " in "
        << TerminalLine(scan.path) << (scan.present ? "" : " (none yet: no move recorded)") << "\n";
  }
  for (const auto& p : scan.problems) err << "devflow-gate: ledger: " << TerminalLine(p) << "\n";
  return scan.problems.empty() ? 0 : 1;
}

namespace {

// What a prune of `bytes` (read as `scan`) under `rule` removes, and the bytes it leaves.
struct LedgerPrunePlan {
  std::string text;
  std::vector<DecisionView> removed;
  size_t removed_bytes = 0;
  size_t kept_rows = 0;
  size_t undated_rows = 0;  // kept: a row of their decision has no readable `at`
  size_t other_lines = 0;   // kept: lines that are not decision rows (bad, blank)
};

LedgerPrunePlan PlanLedgerPrune(const LedgerScan& scan, const std::string& bytes,
                                const RetentionRule& rule) {
  // One item per decision (its rows share the id): its time is its newest row's, unknown
  // when any of its rows has no readable time.
  std::map<std::string, size_t> group_of;
  std::vector<std::optional<int64_t>> times;
  std::vector<bool> undated;
  for (const DecisionView& row : scan.rows) {
    auto [it, fresh] = group_of.emplace(row.id, times.size());
    if (fresh) {
      times.emplace_back(std::nullopt);
      undated.push_back(false);
    }
    const size_t g = it->second;
    const std::optional<int64_t> at = DecisionRecordedMs(row);
    if (!at) undated[g] = true;
    if (at && (!times[g] || *at > *times[g])) times[g] = at;
  }
  for (size_t g = 0; g < times.size(); ++g) {
    if (undated[g]) times[g] = std::nullopt;
  }
  const std::vector<bool> removes = RetentionRemoves(times, rule);

  LedgerPrunePlan plan;
  plan.text.reserve(bytes.size());
  size_t next_row = 0;
  for (size_t i = 0; i < scan.spans.size(); ++i) {
    const LedgerScan::Span& span = scan.spans[i];
    const std::string_view line(bytes.data() + span.begin, span.end - span.begin);
    if (!span.row) {
      if (line.find_first_not_of(" \t\r\n") != std::string_view::npos) ++plan.other_lines;
      plan.text.append(line);
      continue;
    }
    const DecisionView& row = scan.rows[next_row++];
    const size_t g = group_of.at(row.id);
    if (removes[g]) {
      plan.removed.push_back(row);
      plan.removed_bytes += line.size();
      continue;
    }
    ++plan.kept_rows;
    if (undated[g]) ++plan.undated_rows;
    plan.text.append(line);
  }
  return plan;
}

}  // namespace

int LedgerPrune(const OperatorContext& ctx, const RetentionRule& rule, bool dry_run, bool json,
                std::ostream& out, std::ostream& err) {
  const std::string path = DecisionLedgerPath(ctx.root);
  LedgerScan scan;
  LedgerPrunePlan plan;
  auto plan_from = [&](const std::string& bytes) {
    scan = ParseDecisionLedger(path, bytes);
    plan = PlanLedgerPrune(scan, bytes, rule);
  };
  Status status = Status::Ok();
  if (dry_run) {
    auto text = ctx.fs.ReadFile(path);
    if (text.ok()) plan_from(*text);
    status = text.status();
  } else {
    status = ctx.fs.ReplaceLocked(path, [&](const std::string& current) {
      plan_from(current);
      return plan.removed.empty() ? std::nullopt : std::optional<std::string>(plan.text);
    });
  }
  const bool absent = !status.ok() && IsAbsent(status);
  std::vector<std::string> errors;
  if (!status.ok() && !absent) {
    errors.push_back(status.message() + "; the ledger is as it was" +
                     (status.code() == "EFBIG" ? LedgerReadFix(status, path)
                                               : ": check the permissions of " + ParentPath(path)));
    plan = LedgerPrunePlan{};
  }
  if (json) {
    ojson j;
    j["dryRun"] = dry_run;
    j["path"] = path;
    j["present"] = !absent;
    j["cutMs"] = rule.cut_ms ? ojson(*rule.cut_ms) : ojson(nullptr);
    j["keep"] = rule.keep ? ojson(*rule.keep) : ojson(nullptr);
    ojson removed = ojson::array();
    for (const DecisionView& r : plan.removed) {
      ojson x;
      x["decision"] = r.id;
      x["line"] = r.line;
      x["at"] = r.at;
      x["outcome"] = r.outcome;
      removed.push_back(x);
    }
    j[dry_run ? "wouldRemove" : "removed"] = removed;
    j["removedBytes"] = plan.removed_bytes;
    j["keptRows"] = plan.kept_rows;
    j["undatedRows"] = plan.undated_rows;
    j["otherLines"] = plan.other_lines;
    j["problems"] = scan.problems;
    j["errors"] = errors;
    out << PrettyJson(j);
  } else if (absent) {
    out << "no decision ledger at " << TerminalLine(path) << ": nothing to prune\n";
  } else if (errors.empty()) {
    const char* verb = dry_run ? "would remove " : "removed ";
    for (const DecisionView& r : plan.removed) {
      out << verb
          << TerminalLine(r.id + " " + Unknown(r.at) + " " + Unknown(r.card) + " " +
                          Unknown(r.edge) + " " + r.outcome)
          << "\n";
    }
    out << verb << Plural(plan.removed.size(), "row", "rows") << " ("
        << Plural(plan.removed_bytes, "byte", "bytes") << ") of " << scan.rows.size() << " in "
        << TerminalLine(path) << "; kept " << plan.kept_rows << " (" << plan.undated_rows
        << " without a readable time) and " << Plural(plan.other_lines, "line", "lines")
        << " that are no decision rows, as they were\n";
  }
  // Lines it cannot read stay in the ledger: say which, so they are not kept silently.
  for (const auto& p : scan.problems) {
    err << "devflow-gate: ledger prune: kept " << TerminalLine(p) << "\n";
  }
  for (const auto& e : errors) err << "devflow-gate: ledger prune: " << TerminalLine(e) << "\n";
  return errors.empty() ? 0 : 1;
}

int LedgerShow(const OperatorContext& ctx, const std::string& id, bool json, std::ostream& out,
               std::ostream& err) {
  LedgerScan scan = ScanDecisionLedger(ctx);
  std::vector<const DecisionView*> found;
  for (const auto& r : scan.rows) {
    if (r.id == id) found.push_back(&r);
  }
  if (found.empty()) {
    for (const auto& p : scan.problems) err << "devflow-gate: ledger: " << TerminalLine(p) << "\n";
    err << "devflow-gate: ledger show: no decision " << TerminalLine(id) << " in "
        << TerminalLine(scan.path) << "; run `devflow-gate ledger list` to see the decisions\n";
    return 2;
  }
  if (json) {
    ojson all = ojson::array();
    for (const DecisionView* r : found) {
      ojson j = RowJson(*r);
      j["row"] = ojson::parse(r->text, nullptr, false);
      all.push_back(j);
    }
    out << PrettyJson(found.size() == 1 ? all[0] : all);
    return 0;
  }
  for (const DecisionView* r : found) {
    std::string text = "decision " + TerminalLine(r->id) + "\n";
    auto field = [&](const std::string& name, const std::string& value) {
      text += "  " + name + ":" + std::string(name.size() < 9 ? 9 - name.size() : 1, ' ') +
              TerminalLine(value) + "\n";
    };
    field("at", Unknown(r->at));
    field("card", Unknown(r->card));
    field("edge", Unknown(r->edge));
    field("revision", r->revision ? std::to_string(*r->revision) : "unknown");
    field("by", Unknown(r->by));
    field("outcome", r->outcome + " (code " + r->code + ")");
    field("sandbox", r->sandbox.value_or("unknown"));
    field("message", r->message);
    field("report", r->report.value_or("none"));
    if (r->fault_report) field("fault", *r->fault_report);
    if (r->inputs_sha256) field("inputs", "sha256 " + *r->inputs_sha256);
    for (const auto& c : r->checks) field("check", c);
    field("row", scan.path + ":" + std::to_string(r->line));
    out << text;
  }
  return 0;
}

}  // namespace devflow

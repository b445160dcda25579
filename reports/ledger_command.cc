#include "reports/ledger_command.h"

#include <algorithm>
#include <ostream>

#include "host/decision_ledger.h"
#include "host/json_depth.h"
#include "host/terminal.h"
#include "reports/operator_json.h"
#include "reports/sha256.h"

namespace devflow {
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

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Digits at [pos, pos+n) as a number, or -1.
int64_t Digits(const std::string& s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

std::optional<int64_t> ParseIso(const std::string& s) {
  const int64_t y = Digits(s, 0, 4), mo = Digits(s, 5, 2), d = Digits(s, 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || s[4] != '-' || s[7] != '-') {
    return std::nullopt;
  }
  int64_t ms = DaysFromCivil(y, mo, d) * 86400000;
  size_t pos = 10;
  if (pos < s.size() && s[pos] == 'T') {
    const int64_t h = Digits(s, 11, 2), mi = Digits(s, 14, 2);
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || s.size() < 16 || s[13] != ':') return std::nullopt;
    ms += h * 3600000 + mi * 60000;
    pos = 16;
    if (pos < s.size() && s[pos] == ':') {
      const int64_t sec = Digits(s, 17, 2);
      if (sec < 0 || sec > 60) return std::nullopt;
      ms += sec * 1000;
      pos = 19;
      if (pos < s.size() && s[pos] == '.') {
        const int64_t frac = Digits(s, 20, 3);
        if (frac < 0) return std::nullopt;
        ms += frac;
        pos = 23;
      }
    }
  }
  if (pos < s.size() && s[pos] == 'Z') ++pos;
  if (pos != s.size()) return std::nullopt;
  return ms;
}

bool Matches(const DecisionView& row, const LedgerFilter& f) {
  if (!f.card.empty() && row.card != f.card) return false;
  if (!f.edge.empty() && row.edge != f.edge) return false;
  if (!f.outcome.empty() && row.outcome != f.outcome) return false;
  if (f.since_ms || f.until_ms) {
    std::optional<int64_t> at = ParseIso(row.at);
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

LedgerScan ScanDecisionLedger(const OperatorContext& ctx) {
  LedgerScan scan;
  scan.path = DecisionLedgerPath(ctx.root);
  auto text = ctx.fs.ReadFile(scan.path);
  if (!text.ok()) {
    if (!IsAbsent(text.status())) {
      scan.problems.push_back(text.status().message() + "; check its permissions");
    }
    return scan;
  }
  scan.present = true;
  scan.bytes = text->size();
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

std::optional<int64_t> ParseTimeArg(const std::string& text, int64_t now_ms) {
  if (text.size() >= 2) {
    const char unit = text.back();
    const int64_t n = Digits(text, 0, text.size() - 1);
    const int64_t scale = unit == 'd'   ? 86400000
                          : unit == 'h' ? 3600000
                          : unit == 'm' ? 60000
                          : unit == 's' ? 1000
                                        : 0;
    if (n >= 0 && scale > 0 && text.size() <= 10) return now_ms - n * scale;
  }
  return ParseIso(text);
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
    std::string text = "decision " + r->id + "\n";
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
    for (const auto& c : r->checks) field("check", c);
    field("row", scan.path + ":" + std::to_string(r->line));
    out << text;
  }
  return 0;
}

}  // namespace devflow

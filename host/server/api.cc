#include "host/server/api.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "host/json_depth.h"
#include "host/stages.h"
#include "host/utf8.h"

namespace devflow {
namespace {

using json = nlohmann::json;

// nlohmann's DOM builder, told of every key first: records the last key read (it names the
// field of a refused value) and the first key an object repeats. A SAX handler rather than a
// parser callback (issue 8): the callback parser builds a json value per event to hand over,
// ~2/3 of the ~60K instructions a cache-hit admit spent reading its ~250-byte body.
class KeyCheckingSax {
 public:
  explicit KeyCheckingSax(json& j) : dom_(j) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) {
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    last_key = k;
    if (!keys_.empty()) {
      std::vector<std::string>& seen = keys_.back();
      if (std::find(seen.begin(), seen.end(), k) != seen.end()) {
        if (duplicate.empty()) duplicate = k;
      } else {
        seen.push_back(k);
      }
    }
    return dom_.key(k);
  }
  bool end_object() {
    if (!keys_.empty()) keys_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return dom_.start_array(n); }
  bool end_array() { return dom_.end_array(); }
  template <class Exception>
  bool parse_error(std::size_t at, const std::string& token, const Exception& ex) {
    return dom_.parse_error(at, token, ex);  // throws ex
  }

  std::string last_key;   // the last key the parser read (names the field of a refused value)
  std::string duplicate;  // the first key an object repeats

 private:
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<std::vector<std::string>> keys_;  // each open object's keys (a body has few)
};

// Parses an object body, refusing malformed JSON, depth past the limit and duplicate keys
// (nlohmann keeps the last of two silently; a gate must not guess which one was meant).
std::optional<json> ParseObject(std::string_view body, BodyError& error) {
  if (JsonNestingDepth(body) > kMaxJsonDepth) {
    error = {"", "the body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
    return std::nullopt;
  }
  json j;
  KeyCheckingSax sax(j);
  const std::string& last_key = sax.last_key;
  const std::string& duplicate = sax.duplicate;
  try {
    json::sax_parse(body.begin(), body.end(), &sax);
  } catch (const json::parse_error& e) {
    // JSON.parse accepts a lone surrogate escape (`"\ud800"`), which JSON.stringify writes for
    // a string holding one (a TypeScript caller's reason), and ill-formed UTF-8; nlohmann
    // refuses both. Read as JavaScript reads them (U+FFFD; host/utf8.h), only on this slow path
    // (trial14 S2: such a body was answered 400 and the plugin parked the card).
    if (std::string as_js = JsonTextAsJsReadsIt(body); as_js != body) {
      return ParseObject(as_js, error);
    }
    error = {"", std::string("the body is not valid JSON: ") + e.what()};
    return std::nullopt;
  } catch (const json::exception& e) {
    // Any other refusal of the parser (out_of_range 406: a number such as 1e400 that no double
    // holds) is bad input too, never an exception out of the handler: it took the whole
    // server down (this session's trial). The field is the last key read before it.
    error = {last_key, (last_key.empty() ? std::string("the body") : "field \"" + last_key + "\"") +
                           " cannot be read: " + e.what()};
    return std::nullopt;
  }
  if (!duplicate.empty()) {
    error = {duplicate, "field \"" + duplicate + "\" appears twice"};
    return std::nullopt;
  }
  if (!j.is_object()) {
    error = {"", "the body must be a JSON object"};
    return std::nullopt;
  }
  return j;
}

bool KnownOnly(const json& j, const std::set<std::string>& known, const std::string& prefix,
               BodyError& error) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!known.count(it.key())) {
      error = {prefix + it.key(), "unknown field \"" + prefix + it.key() + "\""};
      return false;
    }
  }
  return true;
}

const json* Field(const json& j, const char* name) {
  auto it = j.find(name);
  return it == j.end() ? nullptr : &*it;
}

bool Missing(const char* name, BodyError& error) {
  error = {name, "field \"" + std::string(name) + "\" is required"};
  return false;
}

bool WrongType(const std::string& name, const char* type, BodyError& error) {
  error = {name, "field \"" + name + "\" must be " + type};
  return false;
}

bool GetString(const json& j, const char* name, bool required, std::optional<std::string>& out,
               BodyError& error) {
  const json* f = Field(j, name);
  if (!f) return required ? Missing(name, error) : true;
  if (!f->is_string()) return WrongType(name, "a string", error);
  out = f->get<std::string>();
  return true;
}

bool GetInt(const json& j, const char* name, bool required, int64_t min, int64_t max,
            std::optional<int64_t>& out, BodyError& error) {
  const json* f = Field(j, name);
  if (!f) return required ? Missing(name, error) : true;
  if (!f->is_number_integer() || (f->is_number_unsigned() && f->get<uint64_t>() > INT64_MAX)) {
    return WrongType(name, "an integer", error);
  }
  const int64_t v = f->get<int64_t>();
  if (v < min || v > max) {
    error = {name, "field \"" + std::string(name) + "\" must be between " + std::to_string(min) +
                       " and " + std::to_string(max)};
    return false;
  }
  out = v;
  return true;
}

bool GetBool(const json& j, const char* name, bool& out, BodyError& error) {
  const json* f = Field(j, name);
  if (!f) return true;
  if (!f->is_boolean()) return WrongType(name, "true or false", error);
  out = f->get<bool>();
  return true;
}

bool GetLocation(const json& j, const char* name, bool required, Location& out, BodyError& error) {
  std::optional<std::string> text;
  if (!GetString(j, name, required, text, error)) return false;
  if (!text) return true;
  auto l = ParseLocation(*text);
  if (!l) {
    error = {name, "field \"" + std::string(name) + "\" names no location (\"" + *text +
                       "\"); use draft, designing, ready, developing, reviewing, testing, done "
                       "or blocked"};
    return false;
  }
  out = *l;
  return true;
}

// An actor object (reference §1.6, the store's DevActor): {kind:"human", name?},
// {kind:"agent", session?}, {kind:"command", name?}. Like the store's decoder, an empty
// optional field is refused; a field the kind does not have is an unknown field.
bool GetActorObject(const json& f, const std::string& name, Actor& out, BodyError& error) {
  if (!f.is_object()) return WrongType(name, "an actor object {kind, name?, session?}", error);
  const json* kind = Field(f, "kind");
  if (!kind) {
    error = {name + ".kind", "field \"" + name + ".kind\" is required"};
    return false;
  }
  if (!kind->is_string() ||
      (kind->get<std::string>() != "human" && kind->get<std::string>() != "agent" &&
       kind->get<std::string>() != "command")) {
    error = {name + ".kind", "field \"" + name + ".kind\" must be human, agent or command"};
    return false;
  }
  const std::string k = kind->get<std::string>();
  const char* opt = k == "agent" ? "session" : "name";
  if (!KnownOnly(f, {"kind", opt}, name + ".", error)) return false;
  out = Actor{k, std::nullopt, std::nullopt};
  if (const json* v = Field(f, opt)) {
    const std::string field = name + "." + opt;
    if (!v->is_string()) return WrongType(field, "a string", error);
    if (v->get<std::string>().empty()) {
      error = {field, "field \"" + field + "\" must not be empty (omit it instead)"};
      return false;
    }
    (k == "agent" ? out.session : out.name) = v->get<std::string>();
  }
  return true;
}

// A card id: the directory name `<seq>-<slug>` (reference §1.1). Anything else could name no
// card, or a path outside tasks/.
bool GetCardId(const json& j, std::string& out, BodyError& error) {
  std::optional<std::string> id;
  if (!GetString(j, "id", true, id, error)) return false;
  if (!IsValidCardId(*id)) {
    error = {"id", "field \"id\" is not a card id (<seq>-<slug>, e.g. 0001-login)"};
    return false;
  }
  out = *id;
  return true;
}

// A root names a directory the server was started with; it is compared after making it
// absolute, and the server's working directory is not the caller's: a relative root is refused.
bool GetRoot(const json& j, bool required, std::optional<std::string>& out, BodyError& error) {
  if (!GetString(j, "root", required, out, error)) return false;
  if (out && (out->empty() || (*out)[0] != '/')) {
    error = {"root", "field \"root\" must be an absolute path"};
    return false;
  }
  return true;
}

}  // namespace

bool IsStoreTimestamp(std::string_view at) {
  // YYYY-MM-DDTHH:MM:SS.mmmZ: 24 characters, separators at fixed places, digits elsewhere.
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (at.size() != kShape.size()) return false;
  for (size_t i = 0; i < kShape.size(); ++i) {
    if (kShape[i] == 'd' ? (at[i] < '0' || at[i] > '9') : at[i] != kShape[i]) return false;
  }
  auto num = [&](size_t pos, size_t n) {
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) v = v * 10 + (at[i] - '0');
    return v;
  };
  const int year = num(0, 4), month = num(5, 2), day = num(8, 2);
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
  // Date.prototype.toISOString never writes a leap second (60) or hour 24.
  return num(11, 2) <= 23 && num(14, 2) <= 59 && num(17, 2) <= 59;
}

namespace {

bool GetAt(const json& j, std::string& out, BodyError& error) {
  std::optional<std::string> at;
  if (!GetString(j, "at", true, at, error)) return false;
  if (!IsStoreTimestamp(*at)) {
    error = {"at",
             "field \"at\" must be an ISO-8601 UTC timestamp with milliseconds as the store "
             "writes it (YYYY-MM-DDTHH:MM:SS.mmmZ, e.g. 2026-09-16T08:00:00.000Z)"};
    return false;
  }
  out = *at;
  return true;
}

}  // namespace

std::optional<Actor> ParseActorText(const std::string& text) {
  std::string kind = text.substr(0, text.find(':'));
  std::optional<std::string> rest;
  if (text.find(':') != std::string::npos) rest = text.substr(text.find(':') + 1);
  if (rest && rest->empty()) return std::nullopt;
  if (kind == "human" || kind == "command") return Actor{kind, rest, std::nullopt};
  if (kind == "agent") return Actor{kind, std::nullopt, rest};
  return std::nullopt;
}

std::optional<AdmitBody> ParseAdmitBody(std::string_view body, BodyError& error) {
  std::optional<json> j = ParseObject(body, error);
  if (!j) return std::nullopt;
  if (!KnownOnly(*j,
                 {"id", "from", "to", "expectedRevision", "by", "reason", "root", "at", "dryRun",
                  "deadlineMs"},
                 "", error)) {
    return std::nullopt;
  }
  AdmitBody out;
  Attempt& a = out.admit.attempt;
  std::optional<std::string> root;
  std::optional<int64_t> revision;
  if (!GetCardId(*j, a.id, error)) return std::nullopt;
  if (!GetLocation(*j, "from", true, a.from, error)) return std::nullopt;
  if (!GetLocation(*j, "to", true, a.to, error)) return std::nullopt;
  if (!GetInt(*j, "expectedRevision", true, 1, kMaxRevision, revision, error)) {
    return std::nullopt;
  }
  const json* by = Field(*j, "by");
  if (!by) {
    Missing("by", error);
    return std::nullopt;
  }
  if (!GetActorObject(*by, "by", a.by, error)) return std::nullopt;
  if (!GetString(*j, "reason", false, a.reason, error)) return std::nullopt;
  if (!GetRoot(*j, true, root, error)) return std::nullopt;
  if (!GetAt(*j, a.at, error)) return std::nullopt;
  if (!GetBool(*j, "dryRun", out.admit.dry_run, error)) return std::nullopt;
  if (!GetInt(*j, "deadlineMs", false, 1, kMaxDeadlineMs, out.deadline_ms, error)) {
    return std::nullopt;
  }
  a.expected_revision = *revision;
  a.root = *root;
  return out;
}

std::optional<MovesBody> ParseMovesBody(std::string_view body, BodyError& error) {
  std::optional<json> j = ParseObject(body, error);
  if (!j) return std::nullopt;
  if (!KnownOnly(*j, {"id", "to", "by", "reason", "expectRevision", "dryRun", "root", "deadlineMs"},
                 "", error)) {
    return std::nullopt;
  }
  MovesBody out;
  MoveRequest& m = out.move;
  if (!GetCardId(*j, m.id, error)) return std::nullopt;
  if (!GetLocation(*j, "to", true, m.to, error)) return std::nullopt;
  if (const json* by = Field(*j, "by")) {
    if (by->is_string()) {
      auto actor = ParseActorText(by->get<std::string>());
      if (!actor) {
        error = {"by", "field \"by\" must be human[:NAME], agent[:SESSION] or command[:NAME]"};
        return std::nullopt;
      }
      m.by = *actor;
    } else if (!GetActorObject(*by, "by", m.by, error)) {
      return std::nullopt;
    }
  }
  if (!GetString(*j, "reason", false, m.reason, error)) return std::nullopt;
  if (!GetInt(*j, "expectRevision", false, 1, kMaxRevision, m.expected_revision, error)) {
    return std::nullopt;
  }
  if (!GetBool(*j, "dryRun", m.dry_run, error)) return std::nullopt;
  if (!GetRoot(*j, false, out.root, error)) return std::nullopt;
  if (!GetInt(*j, "deadlineMs", false, 1, kMaxDeadlineMs, out.deadline_ms, error)) {
    return std::nullopt;
  }
  return out;
}

std::string ErrorJson(const BodyError& error, const std::string& code) {
  std::string out = "{\"error\":" + JsonString(error.message);
  if (!error.field.empty()) out += ",\"field\":" + JsonString(error.field);
  if (!code.empty()) out += ",\"code\":" + JsonString(code);
  return out + "}";
}

std::string LogLine(const std::string& time, const std::string& level,
                    const std::vector<LogField>& fields) {
  std::string out = "{\"time\":";
  AppendJsonString(out, time);
  out += ",\"level\":";
  AppendJsonString(out, level);
  for (const LogField& f : fields) {
    out += ',';
    AppendJsonString(out, f.key);
    out += ':';
    if (f.number) {
      out += f.value;
    } else {
      AppendJsonString(out, f.value);
    }
  }
  out += '}';
  return out;
}

}  // namespace devflow

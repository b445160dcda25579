#include "host/server/api.h"

#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "host/json_depth.h"

namespace devflow {
namespace {

using json = nlohmann::json;

// Parses an object body, refusing malformed JSON, depth past the limit and duplicate keys
// (nlohmann keeps the last of two silently; a gate must not guess which one was meant).
std::optional<json> ParseObject(std::string_view body, BodyError& error) {
  if (JsonNestingDepth(body) > kMaxJsonDepth) {
    error = {"", "the body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
    return std::nullopt;
  }
  std::vector<std::set<std::string>> keys;
  std::vector<std::string> path;
  std::string duplicate;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
    (void)depth;
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
            duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  json j;
  try {
    j = json::parse(body.begin(), body.end(), cb);
  } catch (const json::parse_error& e) {
    error = {"", std::string("the body is not valid JSON: ") + e.what()};
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

bool GetInt(const json& j, const char* name, bool required, int64_t min,
            std::optional<int64_t>& out, BodyError& error) {
  const json* f = Field(j, name);
  if (!f) return required ? Missing(name, error) : true;
  if (!f->is_number_integer() || (f->is_number_unsigned() && f->get<uint64_t>() > INT64_MAX)) {
    return WrongType(name, "an integer", error);
  }
  const int64_t v = f->get<int64_t>();
  if (v < min) {
    error = {name, "field \"" + std::string(name) + "\" must be at least " + std::to_string(min)};
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

// An actor object {kind, name?, session?} (reference §1.6).
bool GetActorObject(const json& f, const std::string& name, Actor& out, BodyError& error) {
  if (!f.is_object()) return WrongType(name, "an actor object {kind, name?, session?}", error);
  if (!KnownOnly(f, {"kind", "name", "session"}, name + ".", error)) return false;
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
  out = Actor{kind->get<std::string>(), std::nullopt, std::nullopt};
  for (const char* opt : {"name", "session"}) {
    const json* v = Field(f, opt);
    if (!v) continue;
    if (!v->is_string()) return WrongType(name + "." + opt, "a string", error);
    (std::string(opt) == "name" ? out.name : out.session) = v->get<std::string>();
  }
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
  std::optional<std::string> id, root, at, reason;
  std::optional<int64_t> revision;
  if (!GetString(*j, "id", true, id, error)) return std::nullopt;
  if (!GetLocation(*j, "from", true, a.from, error)) return std::nullopt;
  if (!GetLocation(*j, "to", true, a.to, error)) return std::nullopt;
  if (!GetInt(*j, "expectedRevision", true, 1, revision, error)) return std::nullopt;
  const json* by = Field(*j, "by");
  if (!by) {
    Missing("by", error);
    return std::nullopt;
  }
  if (!GetActorObject(*by, "by", a.by, error)) return std::nullopt;
  if (!GetString(*j, "reason", false, reason, error)) return std::nullopt;
  if (!GetString(*j, "root", true, root, error)) return std::nullopt;
  if (!GetString(*j, "at", true, at, error)) return std::nullopt;
  if (!GetBool(*j, "dryRun", out.admit.dry_run, error)) return std::nullopt;
  if (!GetInt(*j, "deadlineMs", false, 1, out.deadline_ms, error)) return std::nullopt;
  a.id = *id;
  a.expected_revision = *revision;
  a.reason = reason;
  a.root = *root;
  a.at = *at;
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
  std::optional<std::string> id;
  if (!GetString(*j, "id", true, id, error)) return std::nullopt;
  m.id = *id;
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
  if (!GetInt(*j, "expectRevision", false, 1, m.expected_revision, error)) return std::nullopt;
  if (!GetBool(*j, "dryRun", m.dry_run, error)) return std::nullopt;
  if (!GetString(*j, "root", false, out.root, error)) return std::nullopt;
  if (!GetInt(*j, "deadlineMs", false, 1, out.deadline_ms, error)) return std::nullopt;
  return out;
}

std::string JsonString(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ErrorJson(const BodyError& error) {
  std::string out = "{\"error\":" + JsonString(error.message);
  if (!error.field.empty()) out += ",\"field\":" + JsonString(error.field);
  return out + "}";
}

std::string LogLine(const std::string& time, const std::string& level,
                    const std::vector<LogField>& fields) {
  std::string out = "{\"time\":" + JsonString(time) + ",\"level\":" + JsonString(level);
  for (const LogField& f : fields) {
    out += "," + JsonString(f.key) + ":" + (f.number ? f.value : JsonString(f.value));
  }
  return out + "}";
}

}  // namespace devflow

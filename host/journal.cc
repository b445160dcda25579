#include "host/journal.h"
#include "host/json_depth.h"
#include "host/utf8.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace devflow {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// The decode problem travels as an exception inside this file only (never across the module
// edge): every public function below catches it and returns a Status.
struct DecodeError {
  std::string problem;
};

[[noreturn]] void Fail(std::string problem) { throw DecodeError{std::move(problem)}; }

// What JS's `${JSON.stringify(value)}` prints for a possibly absent value.
std::string JsGot(const Json* value) {
  if (value == nullptr) return "undefined";
  return value->dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Json* Field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

bool IsObject(const Json* v) { return v != nullptr && v->is_object(); }

std::optional<std::string> OptionalString(const Json& record, const char* key) {
  const Json* v = Field(record, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
    Fail(std::string("field \"") + key + "\" must be a non-empty string when present");
  }
  return v->get<std::string>();
}

Actor DecodeActor(const Json* value) {
  if (!IsObject(value)) Fail("actor must be a JSON object");
  const Json* kind = Field(*value, "kind");
  std::string k = kind != nullptr && kind->is_string() ? kind->get<std::string>() : "";
  // Upstream keeps only the field its kind defines: name for human/command, session for agent.
  if (k == "human" || k == "command") return Actor{k, OptionalString(*value, "name"), std::nullopt};
  if (k == "agent") return Actor{k, std::nullopt, OptionalString(*value, "session")};
  Fail("actor field \"kind\" must be human, agent, or command (got " + JsGot(kind) + ")");
}

std::vector<GateCheck> DecodeGateChecks(const Json& value) {
  if (!value.is_array()) Fail("transition field \"gate.checks\" must be an array");
  std::vector<GateCheck> checks;
  for (const Json& check : value) {
    if (!check.is_object()) Fail("gate check must be a JSON object");
    const Json* verdict = Field(check, "verdict");
    if (verdict == nullptr || !verdict->is_string() || verdict->get<std::string>() != "allowed") {
      Fail("gate check field \"verdict\" must be \"allowed\" (got " + JsGot(verdict) + ")");
    }
    GateCheck c;
    c.by = DecodeActor(Field(check, "by"));
    c.summary = OptionalString(check, "summary");
    checks.push_back(std::move(c));
  }
  return checks;
}

Gate DecodeGate(const Json& value) {
  if (!value.is_object()) Fail("transition field \"gate\" must be a JSON object");
  const Json* approved = Field(value, "approvedBy");
  const Json* checks = Field(value, "checks");
  if (approved == nullptr && checks == nullptr) {
    Fail("transition field \"gate\" requires \"approvedBy\" or \"checks\"");
  }
  Gate gate;
  if (approved != nullptr) gate.approved_by = DecodeActor(approved);
  if (checks != nullptr) gate.checks = DecodeGateChecks(*checks);
  return gate;
}

// JS Number.isInteger accepts 3 and 3.0 alike.
std::optional<int64_t> PositiveInteger(const Json* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u >= 1 && u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
    return std::nullopt;
  }
  if (v->is_number_integer()) {
    int64_t i = v->get<int64_t>();
    return i >= 1 ? std::optional<int64_t>(i) : std::nullopt;
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::isfinite(d) && d >= 1 && std::trunc(d) == d && d < 9.2e18) {
      return static_cast<int64_t>(d);
    }
  }
  return std::nullopt;
}

std::optional<Location> LocationField(const Json* v) {
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return ParseLocation(v->get_ref<const std::string&>());
}

// JS `s.trim().length === 0`: upstream skips such journal lines and refuses such reasons.
bool IsBlank(std::string_view s) { return JsTrim(s).empty(); }

JournalEntry DecodeEntry(const Json& value) {
  if (!value.is_object()) Fail("journal entry must be a JSON object");
  JournalEntry e;
  auto rev = PositiveInteger(Field(value, "rev"));
  if (!rev) Fail("journal entry field \"rev\" must be a positive integer");
  e.rev = *rev;
  const Json* at = Field(value, "at");
  if (at == nullptr || !at->is_string() || at->get_ref<const std::string&>().empty()) {
    Fail("journal entry field \"at\" must be a non-empty string");
  }
  e.at = at->get<std::string>();
  const Json* type = Field(value, "type");
  std::string t = type != nullptr && type->is_string() ? type->get<std::string>() : "";
  if (t == "created") {
    e.type = EntryType::kCreated;
    e.by = DecodeActor(Field(value, "by"));
    if (const Json* parent = Field(value, "parent")) {
      if (!parent->is_string() || parent->get_ref<const std::string&>().empty()) {
        Fail("field \"parent\" must be a non-empty card id when present");
      }
      e.parent = parent->get<std::string>();
    }
    if (const Json* sc = Field(value, "serviceClass")) {
      auto parsed =
          sc->is_string() ? ParseServiceClass(sc->get_ref<const std::string&>()) : std::nullopt;
      if (!parsed) {
        Fail(
            "created field \"serviceClass\" must be one of standard, express, emergency when "
            "present");
      }
      e.service_class = parsed;
    }
  } else if (t == "transition") {
    e.type = EntryType::kTransition;
    e.from = LocationField(Field(value, "from"));
    if (!e.from) Fail("transition field \"from\" must be a stage or \"blocked\"");
    e.to = LocationField(Field(value, "to"));
    if (!e.to) Fail("transition field \"to\" must be a stage or \"blocked\"");
    if (const Json* by = Field(value, "by")) e.by = DecodeActor(by);
    e.reason = OptionalString(value, "reason");
    if (const Json* gate = Field(value, "gate")) e.gate = DecodeGate(*gate);
  } else if (t == "artifact") {
    e.type = EntryType::kArtifact;
    const Json* path = Field(value, "path");
    if (path == nullptr || !path->is_string() || path->get_ref<const std::string&>().empty()) {
      Fail("artifact field \"path\" must be a non-empty string");
    }
    e.path = path->get<std::string>();
    e.stage = LocationField(Field(value, "stage"));
    if (!e.stage || !IsStage(*e.stage)) {
      Fail(
          "artifact field \"stage\" must be one of draft, designing, ready, developing, "
          "reviewing, testing, done");
    }
    if (const Json* by = Field(value, "by")) e.by = DecodeActor(by);
    e.kind = OptionalString(value, "kind");
  } else if (t == "abandoned") {
    e.type = EntryType::kAbandoned;
    const Json* reason = Field(value, "reason");
    if (reason == nullptr || !reason->is_string() ||
        IsBlank(reason->get_ref<const std::string&>())) {
      Fail(
          "abandoned field \"reason\" must be a non-empty string; a card leaving the board "
          "without one loses the decision");
    }
    e.by = DecodeActor(Field(value, "by"));
    e.reason = reason->get<std::string>();
  } else if (t == "archived" || t == "restored") {
    e.type = t == "archived" ? EntryType::kArchived : EntryType::kRestored;
    e.by = DecodeActor(Field(value, "by"));
    e.reason = OptionalString(value, "reason");
  } else if (t == "claim-expired") {
    e.type = EntryType::kClaimExpired;
    const Json* previous = Field(value, "previousOwner");
    if (previous == nullptr) Fail("claim-expired field \"previousOwner\" is required");
    e.previous_owner = DecodeActor(previous);
    e.by = DecodeActor(Field(value, "by"));
  } else {
    Fail(
        "journal entry field \"type\" must be created, transition, artifact, abandoned, "
        "archived, restored, or claim-expired (got " +
        JsGot(type) + ")");
  }
  return e;
}

OrderedJson EncodeActor(const Actor& a) {
  OrderedJson j = OrderedJson::object();
  j["kind"] = a.kind;
  if (a.name) j["name"] = *a.name;
  if (a.session) j["session"] = *a.session;
  return j;
}

OrderedJson EncodeChecks(const std::vector<GateCheck>& checks) {
  OrderedJson out = OrderedJson::array();
  for (const GateCheck& c : checks) {
    OrderedJson check = OrderedJson::object();
    check["by"] = EncodeActor(c.by);
    check["verdict"] = "allowed";
    if (c.summary) check["summary"] = *c.summary;
    out.push_back(std::move(check));
  }
  return out;
}

std::string Quoted(Location l) { return "\"" + std::string(LocationName(l)) + "\""; }

// The fold rules of foldJournal (reference §1.7) for the entry at 0-based `index`.
void Fold(CardState& state, const JournalEntry& entry) {
  const int64_t index = static_cast<int64_t>(state.entries.size());
  const std::string rev = std::to_string(entry.rev);
  if (entry.rev != index + 1) {
    Fail("journal entry " + std::to_string(index + 1) + " carries rev " + rev +
         "; revisions must be contiguous from 1");
  }
  if (index == 0) {
    if (entry.type != EntryType::kCreated) Fail("journal entry 1 must be \"created\"");
    state.stage = Location::kDraft;
    state.parent = entry.parent;
    state.service_class = entry.service_class.value_or(ServiceClass::kStandard);
    state.created_at = entry.at;
  } else {
    if (state.abandoned) {
      Fail("journal entry rev " + rev + " follows an abandoned card; abandoning is terminal");
    }
    if (state.archived && entry.type != EntryType::kRestored) {
      Fail("journal entry rev " + rev + " is \"" + std::string(EntryTypeName(entry.type)) +
           "\" on an archived card; only \"restored\" may follow archiving");
    }
    switch (entry.type) {
      case EntryType::kCreated:
        Fail("journal entry rev " + rev + " repeats \"created\"");
      case EntryType::kTransition: {
        if (!entry.from || !entry.to) Fail("transition rev " + rev + " lacks \"from\" or \"to\"");
        if (*entry.from != state.stage) {
          Fail("transition rev " + rev + " departs from " + Quoted(*entry.from) +
               " but the card is at " + Quoted(state.stage));
        }
        if (*entry.to == state.stage) {
          Fail("transition rev " + rev + " does not move the card (already at " +
               Quoted(*entry.to) + ")");
        }
        if (*entry.to == Location::kBlocked) {
          state.blocked_from = *entry.from;
        } else if (state.stage == Location::kBlocked) {
          if (!state.blocked_from || *entry.to != *state.blocked_from) {
            Fail("transition rev " + rev + " recovers to " + Quoted(*entry.to) +
                 " but the card blocked from " +
                 (state.blocked_from ? Quoted(*state.blocked_from) : std::string("\"\"")));
          }
          state.blocked_from.reset();
        }
        state.stage = *entry.to;
        break;
      }
      case EntryType::kArtifact:
        if (!entry.stage || !IsStage(*entry.stage) || entry.path.empty()) {
          Fail("artifact rev " + rev + " lacks a path or a stage");
        }
        state.artifact_records.push_back(
            ArtifactRecord{entry.path, entry.kind, entry.rev, *entry.stage});
        break;
      case EntryType::kAbandoned:
        state.abandoned = true;
        break;
      case EntryType::kArchived:
        if (state.stage != Location::kDone) {
          Fail("archived rev " + rev + " files a card at " + Quoted(state.stage) +
               "; only a done card is archived");
        }
        state.archived = true;
        break;
      case EntryType::kRestored:
        if (!state.archived) Fail("restored rev " + rev + " returns a card that is not archived");
        state.archived = false;
        break;
      case EntryType::kClaimExpired:
        break;
    }
  }
  state.stage_revision = entry.rev;
  state.updated_at = entry.at;
  state.entries.push_back(entry);
}

std::string StripJsonExceptionPrefix(std::string what) {
  // "[json.exception.parse_error.101] parse error at line 1, column 9: …" → "parse error at …"
  if (!what.empty() && what[0] == '[') {
    size_t close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  return what;
}

}  // namespace

std::string_view EntryTypeName(EntryType t) {
  switch (t) {
    case EntryType::kCreated:
      return "created";
    case EntryType::kTransition:
      return "transition";
    case EntryType::kArtifact:
      return "artifact";
    case EntryType::kAbandoned:
      return "abandoned";
    case EntryType::kArchived:
      return "archived";
    case EntryType::kRestored:
      return "restored";
    case EntryType::kClaimExpired:
      return "claim-expired";
  }
  return "created";
}

std::string EncodeJournalLine(const JournalEntry& e) {
  OrderedJson j = OrderedJson::object();
  j["rev"] = e.rev;
  j["at"] = e.at;
  j["type"] = std::string(EntryTypeName(e.type));
  switch (e.type) {
    case EntryType::kCreated:
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.parent) j["parent"] = *e.parent;
      if (e.service_class && *e.service_class != ServiceClass::kStandard) {
        j["serviceClass"] = std::string(ServiceClassName(*e.service_class));
      }
      break;
    case EntryType::kTransition:
      if (e.from) j["from"] = std::string(LocationName(*e.from));
      if (e.to) j["to"] = std::string(LocationName(*e.to));
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.reason) j["reason"] = *e.reason;
      if (e.gate && (e.gate->approved_by || !e.gate->checks.empty())) {
        OrderedJson gate = OrderedJson::object();
        if (e.gate->approved_by) gate["approvedBy"] = EncodeActor(*e.gate->approved_by);
        if (!e.gate->checks.empty()) gate["checks"] = EncodeChecks(e.gate->checks);
        j["gate"] = std::move(gate);
      }
      break;
    case EntryType::kArtifact:
      j["path"] = e.path;
      if (e.stage) j["stage"] = std::string(LocationName(*e.stage));
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.kind) j["kind"] = *e.kind;
      break;
    case EntryType::kAbandoned:
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.reason) j["reason"] = *e.reason;
      break;
    case EntryType::kArchived:
    case EntryType::kRestored:
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.reason) j["reason"] = *e.reason;
      break;
    case EntryType::kClaimExpired:
      if (e.previous_owner) j["previousOwner"] = EncodeActor(*e.previous_owner);
      if (e.by) j["by"] = EncodeActor(*e.by);
      break;
  }
  return j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

Result<JournalEntry> DecodeJournalLine(std::string_view line) {
  if (JsonNestingDepth(line) > kMaxJsonDepth) {
    return Status::Error("corrupt", "the line nests deeper than " + std::to_string(kMaxJsonDepth) +
                                        " levels; no journal entry does");
  }
  // JSON.parse refuses a byte-order mark (nlohmann would skip it), and reads what
  // readFile decoded: U+FFFD for ill-formed bytes, lone surrogate escapes kept (as U+FFFD here).
  if (line.substr(0, 3) == "\xEF\xBB\xBF") {
    return Status::Error("corrupt", "invalid JSON: a byte-order mark starts the line");
  }
  const std::string text = JsonTextAsJsReadsIt(line);
  Json value;
  try {
    value = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return Status::Error("corrupt", "invalid JSON: " + StripJsonExceptionPrefix(e.what()));
  }
  try {
    return DecodeEntry(value);
  } catch (const DecodeError& e) {
    return Status::Error("corrupt", e.problem);
  } catch (const Json::exception& e) {
    return Status::Error("corrupt", StripJsonExceptionPrefix(e.what()));
  }
}

Result<CardState> FoldJournal(std::string_view path, std::string_view content) {
  CardState state;
  std::vector<size_t> line_of_entry;
  size_t line_no = 0;
  size_t start = 0;
  while (start <= content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = content.substr(start, end - start);
    ++line_no;
    start = end + 1;
    if (IsBlank(line)) continue;
    auto entry = DecodeJournalLine(line);
    if (!entry.ok()) {
      return Status::Error("corrupt", std::string(path) + ":" + std::to_string(line_no) + ": " +
                                          entry.status().message());
    }
    try {
      Fold(state, *entry);
    } catch (const DecodeError& e) {
      // A fold error concerns the stream, so it is reported against the file; the line is
      // appended because blank lines make entry numbers and line numbers differ.
      return Status::Error("corrupt", std::string(path) + ": " + e.problem + " (line " +
                                          std::to_string(line_no) + ")");
    }
  }
  if (state.entries.empty()) {
    return Status::Error("corrupt", std::string(path) +
                                        ": journal is empty; every card starts with a "
                                        "\"created\" entry");
  }
  return state;
}

Status ApplyEntry(CardState& state, const JournalEntry& entry) {
  // Round-trip through the line codec first: an entry the decoder would refuse (an empty
  // optional string, an unknown actor kind, a blank abandon reason) must never be appended.
  auto decoded = DecodeJournalLine(EncodeJournalLine(entry));
  if (!decoded.ok()) return decoded.status();
  CardState next = state;
  try {
    Fold(next, *decoded);
  } catch (const DecodeError& e) {
    return Status::Error("corrupt", e.problem);
  }
  state = std::move(next);
  return Status::Ok();
}

std::string EncodeActorJson(const Actor& actor) {
  return EncodeActor(actor).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

std::string EncodeChecksJson(const std::vector<GateCheck>& checks) {
  return EncodeChecks(checks).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

}  // namespace devflow

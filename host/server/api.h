// The JSON bodies of the admission server's endpoints (docs/server.md, docs/openapi.yaml):
// strict decoding — an unknown field, a field of the wrong type, a duplicate key or malformed
// JSON is refused with the name of the field — and the error body. No Asio here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "host/deployment/deployment.h"
#include "host/json_string.h"  // JsonString, for the callers of this header

namespace devflow {

/// Why a body was refused: the field (JSON Pointer style path without the leading slash, e.g.
/// "by.kind"; "" for the body as a whole) and a one-line message naming it.
struct BodyError {
  std::string field;
  std::string message;
};

/// The largest deadline a request may ask for, in ms (header or deadlineMs): 2^31 - 1, the
/// longest timer node (the TypeScript caller) can set; beyond it a deadline would mean "never".
inline constexpr int64_t kMaxDeadlineMs = 2147483647;
/// The largest revision a body may name: 2^53 - 1, the store's revisions are JS numbers.
inline constexpr int64_t kMaxRevision = 9007199254740991;

/// True when `at` has exactly the form the TypeScript store writes (Date.toISOString):
/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC, a real calendar date (leap years), hours 00-23, minutes and
/// seconds 00-59. Reference §1.7 / §2.1: it becomes the journal entry's `at`.
bool IsStoreTimestamp(std::string_view at);

/// POST /v1/admit: a TransitionAttempt {id, from, to, expectedRevision, by, reason?, root, at}
/// plus dryRun? and deadlineMs?. Each field is checked as docs/openapi.yaml says: id a card id,
/// from/to locations, expectedRevision 1..kMaxRevision, by a DevActor of its kind's fields
/// (no empty name/session), root absolute, at IsStoreTimestamp, deadlineMs 1..kMaxDeadlineMs.
struct AdmitBody {
  AdmitRequest admit;
  std::optional<int64_t> deadline_ms;
};
std::optional<AdmitBody> ParseAdmitBody(std::string_view body, BodyError& error);

/// POST /v1/moves: {id, to, by?, reason?, expectRevision?, dryRun?, root?, deadlineMs?}.
/// `by` is an actor object or the CLI's "kind[:name]" text; default human. The same field
/// rules as ParseAdmitBody (root, when given, absolute).
struct MovesBody {
  MoveRequest move;
  std::optional<std::string> root;
  std::optional<int64_t> deadline_ms;
};
std::optional<MovesBody> ParseMovesBody(std::string_view body, BodyError& error);

/// `--by`'s text form: human[:name], agent[:session], command[:name].
std::optional<Actor> ParseActorText(const std::string& text);

/// {"error": message, "field": field, "code": code} (field and code omitted when empty);
/// `code` is a machine-readable reason, e.g. a refused connection's `connection-cap`.
std::string ErrorJson(const BodyError& error, const std::string& code = "");

/// One JSON log line (without newline) from ordered key/value text pairs; values that are
/// numbers are given as `number` true.
struct LogField {
  std::string key;
  std::string value;
  bool number = false;
};
std::string LogLine(const std::string& time, const std::string& level,
                    const std::vector<LogField>& fields);

}  // namespace devflow

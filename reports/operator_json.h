// JSON output of the operator commands (included by their .cc files only: nlohmann/json is an
// expensive header). Invalid UTF-8 in a string is written as U+FFFD.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace devflow {

using ojson = nlohmann::ordered_json;

/// Two-space indented JSON + "\n" (what every `--json` prints).
inline std::string PrettyJson(const ojson& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}
/// One-line JSON, no newline.
inline std::string CompactJson(const ojson& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace devflow

// JSON output of the operator commands (included by their .cc files only: nlohmann/json is an
// expensive header), through the one JSON writer (host/json_output.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "host/json_output.h"

namespace devflow {

using ojson = nlohmann::ordered_json;

/// Two-space indented JSON + "\n" (what every `--json` prints).
inline std::string PrettyJson(const ojson& j) { return OutputJson(j, 2) + "\n"; }
/// One-line JSON, no newline.
inline std::string CompactJson(const ojson& j) { return OutputJson(j); }

}  // namespace devflow

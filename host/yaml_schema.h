// The YAML 1.2 core schema's plain-scalar forms (yaml 2.9 schema/core and schema/common, the
// schema upstream's JS loader and writer use): which plain scalars read as null, bool, int or
// float rather than as a string. One copy for the config loader (config/config.cc) and the
// card.md writer (host/card_file.cc). Hand-written: std::regex is slow to build (5.9M
// instructions per process for these eight forms, issue 11 item 3).
#pragma once

#include <string_view>

namespace devflow {

/// `` (empty), `~`, `null`, `Null`, `NULL`.
bool IsYamlNullWord(std::string_view s);
/// `true`, `True`, `TRUE`, `false`, `False`, `FALSE`.
bool IsYamlBoolWord(std::string_view s);
/// `0o[0-7]+`, `0x[0-9a-fA-F]+`, `[-+]?[0-9]+`.
bool IsYamlIntWord(std::string_view s);
/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `[-+]?\.(inf|Inf|INF)`,
/// `\.(nan|NaN|NAN)` (so every int word of the third form is a float word too).
bool IsYamlFloatWord(std::string_view s);

}  // namespace devflow

// JSON string values written without building a JSON document: the bytes nlohmann's
// dump(-1, ' ', false, error_handler_t::replace) gives for a string (every writer here uses
// that form), found cheaply for the common text (printable ASCII, copied as is) and taken from
// nlohmann itself for anything else, so the two can never differ (issue 8: a cache-hit
// decision serialised ~16 strings through a whole basic_json + serializer each).
#pragma once

#include <string>
#include <string_view>

namespace devflow {

/// Appends `text` as a quoted JSON string value to `out`: printable ASCII (0x20-0x7e) other
/// than `"` and `\` as is; any other text exactly as nlohmann dumps it (short escapes, \u00xx
/// for other controls, non-ASCII literal, invalid UTF-8 as U+FFFD).
void AppendJsonString(std::string& out, std::string_view text);

/// `text` as a quoted JSON string value (AppendJsonString to an empty string).
std::string JsonString(std::string_view text);

}  // namespace devflow

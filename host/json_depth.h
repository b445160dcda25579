// A guard for untrusted JSON text: nlohmann's parser is iterative, but dump() and our own
// walkers recurse, so a line nested 100k deep would overflow the stack (found by
// tests/fuzz/journal_fuzz.cc and evidence_fuzz.cc). Checked on the raw text before parsing.
#pragma once

#include <cstddef>
#include <string_view>

namespace devflow {

/// Deepest nesting of `[` / `{` in JSON text, ignoring brackets inside strings. Linear, no
/// allocation; malformed text is measured as far as it goes.
size_t JsonNestingDepth(std::string_view text);

/// The nesting limit for JSON read from journals, cache files, checker replies and evidence.
inline constexpr size_t kMaxJsonDepth = 256;

}  // namespace devflow

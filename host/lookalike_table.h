// The look-alike fold's table (host/lookalike.h): generated at build time by
// tools/lookalike_gen.cc from ICU's Unicode data into the build directory
// (generated/lookalike_table.cc); host/lookalike.cc is its one reader.
#pragma once

#include <cstddef>
#include <cstdint>

namespace devflow::lookalike_table {

/// A run of code points that read as ASCII: `first` to `first + length - 1` read as `ascii`
/// (step 0: each the same character) or as `ascii`, `ascii + 1`, ... (step 1: a run of letters
/// or digits, `Ａ`–`Ｚ`). Runs are sorted by `first` and do not overlap; no run holds ASCII.
struct Run {
  char32_t first;
  uint16_t length;
  char ascii;
  uint8_t step;
};

extern const Run kRuns[];
extern const size_t kRunCount;
/// The page index: kPageStart[p] is the index of the first run that ends at or after code point
/// p * 256 (kRunCount when none), so a code point of page p lies, if in any run, in one of
/// kRuns[kPageStart[p]] to kRuns[kPageStart[p + 1]] (a run may reach into the next page).
inline constexpr size_t kPages = 0x110000 >> 8;
extern const uint16_t kPageStart[kPages + 1];
/// The ICU and Unicode versions the table was generated from ("72.1", "15.0").
extern const char kIcuVersion[];
extern const char kUnicodeVersion[];

}  // namespace devflow::lookalike_table

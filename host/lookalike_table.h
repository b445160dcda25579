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
/// The ICU and Unicode versions the table was generated from ("72.1", "15.0").
extern const char kIcuVersion[];
extern const char kUnicodeVersion[];

}  // namespace devflow::lookalike_table

// A libFuzzer invariant check: a broken invariant prints what broke and aborts, which libFuzzer
// reports as a crash and saves the input (crash-<sha1>). Fuzz targets are built only with clang
// and -DDG_FUZZ=ON (CMakeLists.txt, .ci/fuzz).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#define DG_FUZZ_CHECK(cond, what)                                                              \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n  (%s)\n", __FILE__, __LINE__, \
                   what, #cond);                                                               \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

namespace devflow::fuzz {

/// Strict UTF-8 (no overlongs, no surrogates, max U+10FFFF).
inline bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    int need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    for (int k = 1; k <= need; ++k) {
      if (i + k >= s.size()) return false;
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return false;
    }
    i += need + 1;
  }
  return true;
}

}  // namespace devflow::fuzz

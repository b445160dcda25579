// The look-alike fold (host/lookalike.h).
#include "host/lookalike.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "host/lookalike_table.h"
#include "host/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace devflow {
namespace {

// Whether the character at s[i] (a byte >= 0x80) folds: to ASCII, or away. `length` gets its
// length and `ascii` its ASCII twin (0: dropped); false (and the length) when it is kept.
bool FoldsAt(std::string_view s, size_t i, size_t* length, char* ascii) {
  const Utf8Step step = DecodeUtf8At(s, i);
  *length = step.length;
  if (!step.valid) return false;
  if (IsDefaultIgnorable(step.cp) || IsCombiningMark(step.cp)) {
    *ascii = 0;
    return true;
  }
  *ascii = AsciiLookAlike(step.cp);
  return *ascii != 0;
}

// The offset of the first byte >= 0x80 at or after `from`, or s.size(). `ground` runs it over
// the whole evidence before its scan (every text is folded or found all ASCII), so it steps 64
// bytes at a time where SSE2 is there (x86-64: always): the or of four 16-byte loads, one test
// of its high bits; a block with a byte >= 0x80 is searched again 8 bytes, then one, at a time.
// Eight bytes a step this pass was 59.6M of `ground`'s 441.6M instructions on 64 MiB of
// evidence (docs/performance.md, issue 11 item 4).
size_t NextNonAscii(std::string_view s, size_t from) {
  size_t i = from;
#if defined(__SSE2__)
  for (; i + 64 <= s.size(); i += 64) {
    const char* p = s.data() + i;
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 48));
    if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) != 0) break;
  }
#endif
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    if (word & 0x8080808080808080ULL) break;
  }
  while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80) ++i;
  return i;
}

}  // namespace

char AsciiLookAlike(char32_t cp) {
  using lookalike_table::kPageStart;
  using lookalike_table::kRunCount;
  using lookalike_table::kRuns;
  using lookalike_table::Run;
  if (cp < kRuns[0].first || cp > 0x10FFFF) return 0;  // ASCII and the C1 controls
  // The runs that may hold cp: those of its 256-code-point page (the page index), then the last
  // of them that starts at or before cp (a binary search over a few runs).
  const size_t page = cp >> 8;
  const Run* begin = kRuns + kPageStart[page];
  const Run* end = kRuns + std::min<size_t>(kPageStart[page + 1] + 1, kRunCount);
  const Run* after =
      std::upper_bound(begin, end, cp, [](char32_t c, const Run& r) { return c < r.first; });
  if (after == begin) return 0;
  const Run& run = after[-1];
  const char32_t k = cp - run.first;
  if (k >= run.length) return 0;
  return static_cast<char>(run.ascii + static_cast<char32_t>(run.step) * k);
}

bool IsCombiningMark(char32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x0483 && cp <= 0x0489) ||
         (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
         (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE20 && cp <= 0xFE2F);
}

bool FoldLookAlikes(std::string_view text, FoldedText* out, bool want_origin) {
  // The first character that folds; none: the text reads as it is.
  size_t first = NextNonAscii(text, 0);
  size_t length = 1;
  char ascii = 0;
  while (first < text.size() && !FoldsAt(text, first, &length, &ascii)) {
    first = NextNonAscii(text, first + length);
  }
  if (first >= text.size()) return false;
  out->text.assign(text.substr(0, first));
  out->text.reserve(text.size());
  out->origin.clear();
  if (want_origin) {
    out->origin.reserve(text.size() + 1);
    for (size_t i = 0; i < first;) {  // each byte of a character maps to its start
      const size_t n =
          static_cast<unsigned char>(text[i]) < 0x80 ? 1 : DecodeUtf8At(text, i).length;
      out->origin.insert(out->origin.end(), n, i);
      i += n;
    }
  }
  for (size_t i = first; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {  // a run of ASCII, copied at once
      const size_t end = NextNonAscii(text, i);
      out->text.append(text.substr(i, end - i));
      if (want_origin) {
        for (size_t k = i; k < end; ++k) out->origin.push_back(k);
      }
      i = end;
      continue;
    }
    size_t n = 1;
    char a = 0;
    const bool folds = FoldsAt(text, i, &n, &a);
    if (folds && a == 0) {  // dropped
    } else if (folds) {
      out->text.push_back(a);
      if (want_origin) out->origin.push_back(i);
    } else {
      out->text.append(text.substr(i, n));
      if (want_origin) out->origin.insert(out->origin.end(), n, i);
    }
    i += n;
  }
  if (want_origin) out->origin.push_back(text.size());
  return true;
}

}  // namespace devflow

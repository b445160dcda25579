// The look-alike fold (host/lookalike.h).
#include "host/lookalike.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "host/utf8.h"

namespace devflow {
namespace {

// The code point of digit zero of each run of ten decimal digits (general category Nd) outside
// ASCII and the full-width forms, in the BMP and the common supplementary blocks.
constexpr std::array<char32_t, 59> kDigitZeros = {
    0x0660,  0x06F0,  0x07C0,  0x0966,  0x09E6,  0x0A66,  0x0AE6,  0x0B66,  0x0BE6,  0x0C66,
    0x0CE6,  0x0D66,  0x0DE6,  0x0E50,  0x0ED0,  0x0F20,  0x1040,  0x1090,  0x17E0,  0x1810,
    0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,  0xA8D0,
    0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136,
    0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50,
    0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0};

// Cyrillic and Greek letters drawn like a Latin letter, sorted by code point.
struct Twin {
  char32_t cp;
  char ascii;
};
constexpr Twin kTwins[] = {
    {0x0391, 'A'}, {0x0392, 'B'}, {0x0395, 'E'}, {0x0396, 'Z'}, {0x0397, 'H'}, {0x0399, 'I'},
    {0x039A, 'K'}, {0x039C, 'M'}, {0x039D, 'N'}, {0x039F, 'O'}, {0x03A1, 'P'}, {0x03A4, 'T'},
    {0x03A5, 'Y'}, {0x03A7, 'X'}, {0x03BD, 'v'}, {0x03BF, 'o'}, {0x0405, 'S'}, {0x0406, 'I'},
    {0x0408, 'J'}, {0x0410, 'A'}, {0x0412, 'B'}, {0x0415, 'E'}, {0x041A, 'K'}, {0x041C, 'M'},
    {0x041D, 'H'}, {0x041E, 'O'}, {0x0420, 'P'}, {0x0421, 'C'}, {0x0422, 'T'}, {0x0423, 'Y'},
    {0x0425, 'X'}, {0x0430, 'a'}, {0x0435, 'e'}, {0x043E, 'o'}, {0x0440, 'p'}, {0x0441, 'c'},
    {0x0443, 'y'}, {0x0445, 'x'}, {0x0455, 's'}, {0x0456, 'i'}, {0x0458, 'j'}, {0x04BB, 'h'},
    {0x04CF, 'l'}, {0x0501, 'd'}, {0x051A, 'Q'}, {0x051B, 'q'}, {0x051C, 'W'}, {0x051D, 'w'},
};

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

// The offset of the first byte >= 0x80 at or after `from`, or s.size().
size_t NextNonAscii(std::string_view s, size_t from) {
  size_t i = from;
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
  if (cp < 0x80) return 0;
  if (cp >= 0xFF01 && cp <= 0xFF5E) return static_cast<char>(cp - 0xFEE0);
  if ((cp >= 0x2010 && cp <= 0x2015) || cp == 0x2212 || cp == 0xFE58 || cp == 0xFE63) return '-';
  if (cp == 0xB9) return '1';
  if (cp == 0xB2 || cp == 0xB3) return static_cast<char>('2' + (cp - 0xB2));
  if (cp == 0x2070) return '0';
  if (cp >= 0x2074 && cp <= 0x2079) return static_cast<char>('4' + (cp - 0x2074));
  if (cp >= 0x2080 && cp <= 0x2089) return static_cast<char>('0' + (cp - 0x2080));
  if (cp >= 0x1D400 && cp <= 0x1D6A3) {  // 13 alphabets of 52: A-Z then a-z
    const auto k = static_cast<unsigned>((cp - 0x1D400) % 52);
    return static_cast<char>(k < 26 ? 'A' + k : 'a' + (k - 26));
  }
  if (cp >= 0x1D7CE && cp <= 0x1D7FF) return static_cast<char>('0' + (cp - 0x1D7CE) % 10);
  for (char32_t zero : kDigitZeros) {
    if (cp >= zero && cp < zero + 10) return static_cast<char>('0' + (cp - zero));
  }
  const auto* twin = std::lower_bound(std::begin(kTwins), std::end(kTwins), cp,
                                      [](const Twin& t, char32_t c) { return t.cp < c; });
  if (twin != std::end(kTwins) && twin->cp == cp) return twin->ascii;
  return 0;
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

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

// Modifier (superscript) and subscript letters, and small capitals, drawn like a Latin letter
// (trial13 e32: `Verdict: ᵛᵉᵗᵒ`), sorted by code point: Spacing Modifier Letters U+02B0–U+02E3,
// IPA small capitals, Phonetic Extensions U+1D00–U+1DBF, U+2071, U+207F, subscripts
// U+2090–U+209C, U+2C7C–U+2C7D, U+A730–U+A731.
constexpr Twin kSmallLetters[] = {
    {0x0262, 'G'}, {0x026A, 'I'}, {0x0274, 'N'}, {0x0280, 'R'}, {0x028F, 'Y'}, {0x0299, 'B'},
    {0x029C, 'H'}, {0x029F, 'L'}, {0x02B0, 'h'}, {0x02B1, 'h'}, {0x02B2, 'j'}, {0x02B3, 'r'},
    {0x02B7, 'w'}, {0x02B8, 'y'}, {0x02E1, 'l'}, {0x02E2, 's'}, {0x02E3, 'x'}, {0x1D00, 'A'},
    {0x1D04, 'C'}, {0x1D05, 'D'}, {0x1D07, 'E'}, {0x1D0A, 'J'}, {0x1D0B, 'K'}, {0x1D0D, 'M'},
    {0x1D0F, 'O'}, {0x1D18, 'P'}, {0x1D1B, 'T'}, {0x1D1C, 'U'}, {0x1D20, 'V'}, {0x1D21, 'W'},
    {0x1D22, 'Z'}, {0x1D2C, 'A'}, {0x1D2E, 'B'}, {0x1D30, 'D'}, {0x1D31, 'E'}, {0x1D33, 'G'},
    {0x1D34, 'H'}, {0x1D35, 'I'}, {0x1D36, 'J'}, {0x1D37, 'K'}, {0x1D38, 'L'}, {0x1D39, 'M'},
    {0x1D3A, 'N'}, {0x1D3C, 'O'}, {0x1D3E, 'P'}, {0x1D3F, 'R'}, {0x1D40, 'T'}, {0x1D41, 'U'},
    {0x1D42, 'W'}, {0x1D43, 'a'}, {0x1D47, 'b'}, {0x1D48, 'd'}, {0x1D49, 'e'}, {0x1D4D, 'g'},
    {0x1D4F, 'k'}, {0x1D50, 'm'}, {0x1D52, 'o'}, {0x1D56, 'p'}, {0x1D57, 't'}, {0x1D58, 'u'},
    {0x1D5B, 'v'}, {0x1D62, 'i'}, {0x1D63, 'r'}, {0x1D64, 'u'}, {0x1D65, 'v'}, {0x1D9C, 'c'},
    {0x1DA0, 'f'}, {0x1DA6, 'I'}, {0x1DAB, 'L'}, {0x1DB0, 'N'}, {0x1DB8, 'U'}, {0x1DBB, 'z'},
    {0x2071, 'i'}, {0x207F, 'n'}, {0x2090, 'a'}, {0x2091, 'e'}, {0x2092, 'o'}, {0x2093, 'x'},
    {0x2095, 'h'}, {0x2096, 'k'}, {0x2097, 'l'}, {0x2098, 'm'}, {0x2099, 'n'}, {0x209A, 'p'},
    {0x209B, 's'}, {0x209C, 't'}, {0x2C7C, 'j'}, {0x2C7D, 'V'}, {0xA730, 'F'}, {0xA731, 'S'},
};

// The ASCII twin of `cp` in a table sorted by code point, or 0.
template <size_t N>
char TwinIn(const Twin (&table)[N], char32_t cp) {
  const auto* twin = std::lower_bound(std::begin(table), std::end(table), cp,
                                      [](const Twin& t, char32_t c) { return t.cp < c; });
  return twin != std::end(table) && twin->cp == cp ? twin->ascii : 0;
}

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
  if (const char ascii = TwinIn(kTwins, cp)) return ascii;
  return TwinIn(kSmallLetters, cp);
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

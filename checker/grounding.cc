// The grounding core: token scanners (one linear pass each) and whole-token set lookup, plus
// release_gate.py's own regexes and substring search for --compat.
#include "checker/grounding.h"
#include "checker/markup_text.h"
#include "host/json_depth.h"
#include "host/lookalike.h"
#include "host/terminal.h"
#include "host/utf8.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define DG_AVX2_SKIP 1  // compiled for AVX2 by a target attribute, chosen at run time
#endif

#include <nlohmann/json.hpp>

namespace devflow {
namespace {

enum class Kind { kDate, kUrl, kRef, kHash, kPath, kNumber, kDateText, kUnknown };

using TokenSink = std::function<void(std::string_view)>;

Kind KindOf(std::string_view name) {
  if (name == "date") return Kind::kDate;
  if (name == "url") return Kind::kUrl;
  if (name == "ref") return Kind::kRef;
  if (name == "hash") return Kind::kHash;
  if (name == "path") return Kind::kPath;
  if (name == "number") return Kind::kNumber;
  if (name == "date-text") return Kind::kDateText;
  return Kind::kUnknown;
}

constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool IsLetter(char c) { return IsUpper(c) || (c >= 'a' && c <= 'z'); }
constexpr bool IsAsciiAlnum(char c) { return IsDigit(c) || IsLetter(c); }
constexpr bool IsAsciiWord(char c) { return IsAsciiAlnum(c) || c == '_'; }
constexpr bool IsHexLetter(char c) { return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
constexpr bool IsHex(char c) { return IsDigit(c) || IsHexLetter(c); }
bool IsPathChar(char c) {
  return IsAsciiAlnum(c) || c == '_' || c == '.' || c == '~' || c == '/' || c == '-';
}
bool In(char c, std::string_view set) { return set.find(c) != std::string_view::npos; }

char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

// --- Code points: Python's \w and \s in Unicode mode, approximated by blocks -------------

constexpr uint32_t kInvalid = 0xFFFFFFFF;

// Decodes the UTF-8 sequence at `i` into `cp` (kInvalid for a malformed subsequence, which
// then stands alone); returns its length in bytes (>= 1). The project's one decoder
// (host/utf8.h) does the work.
size_t Decode(std::string_view s, size_t i, uint32_t* cp) {
  const Utf8Step step = DecodeUtf8At(s, i);
  *cp = step.valid ? static_cast<uint32_t>(step.cp) : kInvalid;
  return step.length;
}

bool IsSpaceCp(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// Python's \w: letters, digits and numerals of any script, and '_'. Outside ASCII every code
// point counts except these punctuation, symbol and space ranges (and malformed bytes).
bool IsWordCp(uint32_t cp) {
  if (cp < 0x80) return IsAsciiWord(static_cast<char>(cp));
  if (cp == kInvalid) return false;
  struct Range {
    uint32_t lo, hi;
  };
  static constexpr Range kNonWord[] = {
      {0x80, 0xA9},       {0xAB, 0xB1},      {0xB4, 0xB4},     {0xB6, 0xB8},     {0xBB, 0xBB},
      {0xBF, 0xBF},       {0xD7, 0xD7},      {0xF7, 0xF7},     {0x2000, 0x206F}, {0x20A0, 0x20CF},
      {0x2190, 0x245F},   {0x2500, 0x2775},  {0x2794, 0x2BFF}, {0x2E00, 0x2E7F}, {0x3000, 0x3004},
      {0x3008, 0x3020},   {0x3030, 0x3030},  {0x303D, 0x303F}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE6F},
      {0xFF01, 0xFF0F},   {0xFF1A, 0xFF20},  {0xFF3B, 0xFF40}, {0xFF5B, 0xFF65}, {0xFFE0, 0xFFEE},
      {0x1F000, 0x1F0FF}, {0x1F10D, 0x1FAFF}};
  for (const Range& r : kNonWord) {
    if (cp >= r.lo && cp <= r.hi) return false;
  }
  return true;
}

// Whether the character starting at `i` is a word character (false at the end).
bool WordAt(std::string_view s, size_t i) {
  if (i >= s.size()) return false;
  const char c = s[i];
  if (static_cast<unsigned char>(c) < 0x80) return IsAsciiWord(c);
  uint32_t cp = 0;
  Decode(s, i, &cp);
  return IsWordCp(cp);
}

// Byte length of the character at `i`.
size_t CharLen(std::string_view s, size_t i) {
  if (static_cast<unsigned char>(s[i]) < 0x80) return 1;
  uint32_t cp = 0;
  return Decode(s, i, &cp);
}

// The code point that ends just before `i` (kInvalid for a malformed byte).
uint32_t CpBefore(std::string_view s, size_t i) {
  const auto last = static_cast<unsigned char>(s[i - 1]);
  if (last < 0x80) return last;
  size_t start = i - 1;
  while (start > 0 && i - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
    --start;
  }
  uint32_t cp = 0;
  if (Decode(s, start, &cp) == i - start) return cp;
  return kInvalid;
}

// Whether the character ending just before `i` is a word character (false at 0).
bool WordBefore(std::string_view s, size_t i) {
  if (i == 0) return false;
  const char c = s[i - 1];
  if (static_cast<unsigned char>(c) < 0x80) return IsAsciiWord(c);
  return IsWordCp(CpBefore(s, i));
}

bool SpaceAt(std::string_view s, size_t i) {
  uint32_t cp = 0;
  Decode(s, i, &cp);
  return IsSpaceCp(cp);
}

bool StartsWithNoCase(std::string_view s, size_t at, std::string_view prefix) {
  if (s.size() - at < prefix.size()) return false;
  for (size_t k = 0; k < prefix.size(); ++k) {
    if (Lower(s[at + k]) != prefix[k]) return false;
  }
  return true;
}

// Each scanner below is a loop that calls its step at every position where its token can
// start (its trigger) and moves on by one position elsewhere; the one-pass scanner
// (ScanOnePass) calls the same steps at the same positions, found through a byte-class table.

constexpr size_t kDateLen = 10;  // YYYY-MM-DD

// A date at `i`: a digit not preceded by a word character, with i + 10 <= size (the trigger).
// Returns where the date scanner goes on.
size_t DateStep(std::string_view s, size_t i, const TokenSink& sink) {
  constexpr std::string_view kShape = "dddd-dd-dd";
  if (s[i + 4] != '-') return i + 1;  // the shape's first '-' (most numbers end before it)
  bool match = true;
  for (size_t k = 0; match && k < kShape.size(); ++k) {
    match = kShape[k] == 'd' ? IsDigit(s[i + k]) : s[i + k] == '-';
  }
  const size_t end = i + kShape.size();
  if (match && (end == s.size() || !IsDigit(s[end]))) {
    sink(s.substr(i, kShape.size()));
    return end;
  }
  return i + 1;
}

void ScanDates(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i + kDateLen <= s.size()) {
    i = IsDigit(s[i]) && !WordBefore(s, i) ? DateStep(s, i, sink) : i + 1;
  }
}

// A URL at `i`: 'h' or 'H' not preceded by a word character (the trigger).
size_t UrlStep(std::string_view s, size_t i, const TokenSink& sink) {
  size_t scheme = 0;
  if (StartsWithNoCase(s, i, "https://"))
    scheme = 8;
  else if (StartsWithNoCase(s, i, "http://"))
    scheme = 7;
  if (scheme == 0) return i + 1;
  {
    size_t j = i + scheme;
    long parens = 0, brackets = 0;  // closers minus openers
    while (j < s.size()) {
      const auto c = static_cast<unsigned char>(s[j]);
      if (c <= 0x20 || c >= 0x7F || In(s[j], "<>\"`")) break;
      if (c == '(') --parens;
      if (c == ')') ++parens;
      if (c == '[') --brackets;
      if (c == ']') ++brackets;
      ++j;
    }
    size_t end = j;
    while (end > i + scheme) {
      const char last = s[end - 1];
      if (In(last, ".,;:!?'\"")) {
        --end;
      } else if (last == ')' && parens > 0) {
        --parens;
        --end;
      } else if (last == ']' && brackets > 0) {
        --brackets;
        --end;
      } else {
        break;
      }
    }
    if (end > i + scheme) sink(s.substr(i, end - i));
    return j;
  }
}

void ScanUrls(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    i = (s[i] == 'h' || s[i] == 'H') && !WordBefore(s, i) ? UrlStep(s, i, sink) : i + 1;
  }
}

// Standards and encodings written like tickets (UTF-8, SHA-256, ISO-8601, COVID-19).
bool IsStopPrefix(std::string_view prefix) {
  static constexpr std::array<std::string_view, 15> kStop = {
      "UTF", "UCS",  "SHA",  "SHA3", "CRC", "AES",     "RSA",  "ISO",
      "IEC", "IEEE", "ECMA", "ANSI", "CP",  "WINDOWS", "COVID"};
  return std::find(kStop.begin(), kStop.end(), prefix) != kStop.end();
}

bool IsQualifierChar(char c) { return IsAsciiAlnum(c) || In(c, "_.-/"); }

// The start of the `owner/name` or `name` glued before the '#' at `hash` ("rust-lang/regex#12",
// "PR#12"), or npos: at least two characters holding a letter, at most one '/' with both sides
// non-empty, starting with a letter or digit, and not inside a URL or an address (the character
// before it is no word character, ':', '/', '@', '&' or '#').
size_t QualifierStart(std::string_view s, size_t hash, bool bare) {
  size_t k = hash;
  while (k > 0 && IsQualifierChar(s[k - 1])) --k;
  const std::string_view q = s.substr(k, hash - k);
  if (q.size() < 2 || !IsAsciiAlnum(q.front()) || In(q.back(), "/.-"))
    return std::string_view::npos;
  if (std::count(q.begin(), q.end(), '/') > 1 || std::none_of(q.begin(), q.end(), IsLetter)) {
    return std::string_view::npos;
  }
  if (const size_t slash = q.find('/'); slash != std::string_view::npos) {
    if (slash == 0 || !IsAsciiAlnum(q[slash + 1])) return std::string_view::npos;
  } else if (!bare) {
    const std::string lower = {Lower(q[0]), Lower(q[1])};
    if (q.size() != 2 || (lower != "pr" && lower != "gh")) return std::string_view::npos;
  }
  if (k > 0 && (WordBefore(s, k) || In(s[k - 1], ":/@&#"))) return std::string_view::npos;
  return k;
}

// Claim and evidence refs: `#123`, `owner/name#123`, `PR#123`, `GH#123` (with `bare`, any
// `name#123`: the evidence's `regex#123`), Jira style `ABC-123` (not the stop list),
// `CVE-2026-25645` as one token.
// A ref at `i`: '#', or an uppercase letter (the trigger; only one at a word start that does
// not follow '-' can start a ref, every other one is a step of one).
size_t RefStep(std::string_view s, size_t i, const TokenSink& sink, bool bare) {
  const size_t n = s.size();
  {
    const bool boundary = !WordBefore(s, i);
    if (s[i] == '#') {
      size_t j = i + 1;
      while (j < n && IsDigit(s[j])) ++j;
      if (j > i + 1 && !WordAt(s, j)) {
        if (boundary && (i == 0 || s[i - 1] != '&')) {
          sink(s.substr(i, j - i));
        } else if (!boundary) {
          if (const size_t q = QualifierStart(s, i, bare); q != std::string_view::npos) {
            sink(s.substr(q, j - q));
          }
        }
      }
      return std::max(j, i + 1);
    }
    if (boundary && (i == 0 || s[i - 1] != '-')) {
      size_t j = i;
      while (j < n && (IsUpper(s[j]) || IsDigit(s[j]))) ++j;
      if (j - i >= 2 && j < n && s[j] == '-') {
        size_t k = j + 1;
        while (k < n && IsDigit(s[k])) ++k;
        const std::string_view prefix = s.substr(i, j - i);
        if (prefix == "CVE" && k - j - 1 == 4 && k + 1 < n && s[k] == '-' && IsDigit(s[k + 1])) {
          k += 2;  // CVE-YYYY-NNNN: one token, not CVE-YYYY
          while (k < n && IsDigit(s[k])) ++k;
        }
        if (k > j + 1 && !WordAt(s, k) && !IsStopPrefix(prefix)) sink(s.substr(i, k - i));
        return k;
      }
      return std::max(j, i + 1);
    }
    return i + 1;
  }
}

void ScanRefs(std::string_view s, const TokenSink& sink, bool bare = false) {
  size_t i = 0;
  while (i < s.size()) i = s[i] == '#' || IsUpper(s[i]) ? RefStep(s, i, sink, bare) : i + 1;
}

// A UUID (8-4-4-4-12 hex digits) at `i`: one token, never a hash.
bool UuidAt(std::string_view s, size_t i) {
  if (s.size() - i < 36) return false;
  for (size_t k = 0; k < 36; ++k) {
    const bool dash = k == 8 || k == 13 || k == 18 || k == 23;
    if (dash ? s[i + k] != '-' : !IsHex(s[i + k])) return false;
  }
  return !WordAt(s, i + 36) && (i + 36 == s.size() || s[i + 36] != '-');
}

// An all-decimal word at [i, j) is a hash only when marked as one: right after `/commit/`,
// after the word "commit" (then an optional ':' and 1-3 spaces), or as the text of a Markdown
// link into a `/commit/` URL (`[2506700](https://github.com/o/r/commit/2506700…)`).
bool MarkedAsCommit(std::string_view s, size_t i, size_t j) {
  if (i >= 8 && s.substr(i - 8, 8) == "/commit/") return true;
  size_t k = i;
  while (k > 0 && i - k < 3 && (s[k - 1] == ' ' || s[k - 1] == '\t')) --k;
  if (k > 0 && s[k - 1] == ':') --k;
  if (k < i && k >= 6 && StartsWithNoCase(s, k - 6, "commit") && !WordBefore(s, k - 6)) {
    return true;
  }
  if (i > 0 && s[i - 1] == '[' && s.substr(j, 2) == "](") {
    const size_t close = s.find_first_of(") \n", j + 2);
    const std::string_view url =
        s.substr(j + 2, close == std::string_view::npos ? s.npos : close - j - 2);
    return url.find("/commit/") != std::string_view::npos;
  }
  return false;
}

// --- the byte-class table of the one-pass scanner -------------------------------------------

enum ByteClass : uint8_t {
  kClassWord = 1,        // ASCII letter, digit or '_'
  kClassHigh = 2,        // >= 0x80: decode to classify
  kClassSharp = 4,       // '#'
  kClassNotHex = 8,      // in a word, no hex digit: g-z, G-Z, '_' (and every non-ASCII char)
  kClassDigit = 16,      // 0-9
  kClassHexLetter = 32,  // a-f, A-F
  kClassStarts = 64,     // at a word start, may begin a token: a digit, h H, A-Z, p P c C
};

constexpr std::array<uint8_t, 256> MakeClasses() {
  std::array<uint8_t, 256> t{};
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    uint8_t k = 0;
    if (b >= 0x80) k |= kClassHigh;
    if (b < 0x80 && IsAsciiWord(c)) k |= kClassWord | (IsHex(c) ? 0 : kClassNotHex);
    if (b < 0x80 && IsDigit(c)) k |= kClassDigit | kClassStarts;
    if (b < 0x80 && IsHexLetter(c)) k |= kClassHexLetter;
    if (b < 0x80 && (IsUpper(c) || c == 'h' || c == 'p' || c == 'c')) k |= kClassStarts;
    if (c == '#') k |= kClassSharp;
    t[static_cast<size_t>(b)] = k;
  }
  return t;
}
constexpr std::array<uint8_t, 256> kClasses = MakeClasses();

inline uint8_t ClassOf(char c) { return kClasses[static_cast<unsigned char>(c)]; }

// The end of the word that goes on at `j` (WordAt(s, j)), or-ing into `*classes` the classes
// of its characters (a non-ASCII word character counts as kClassNotHex). Inline: the one-pass
// scanner calls it once per word.
inline size_t WordEnd(std::string_view s, size_t j, uint8_t* classes) {
  const size_t n = s.size();
  uint8_t seen = *classes;
  for (;;) {
    while (j < n && (ClassOf(s[j]) & kClassWord)) seen |= ClassOf(s[j++]);
    if (j >= n || !(ClassOf(s[j]) & kClassHigh)) break;
    uint32_t cp = 0;
    const size_t len = Decode(s, j, &cp);
    if (!IsWordCp(cp)) break;
    seen |= kClassNotHex;
    j += len;
  }
  *classes = seen;
  return j;
}

// The hash step at the word [i, j) of `classes` (its start: the trigger of the hash scanner,
// once the word is known to begin no UUID).
void HashWord(std::string_view s, size_t i, size_t j, uint8_t classes, const TokenSink& sink) {
  const size_t len = j - i;
  if (!(classes & kClassNotHex) && (classes & kClassDigit) && len >= 7 && len <= 40 &&
      ((classes & kClassHexLetter) || MarkedAsCommit(s, i, j))) {
    sink(s.substr(i, len));
  }
}

// A UUID starts at the word [i, j) of `classes`: 8 hex digits, then '-'... (cheap test first).
bool UuidWord(std::string_view s, size_t i, size_t j, uint8_t classes) {
  return j - i == 8 && !(classes & kClassNotHex) && j < s.size() && s[j] == '-' && UuidAt(s, i);
}

void ScanHashes(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    if (!WordAt(s, i)) {
      i += CharLen(s, i);
      continue;
    }
    uint8_t classes = 0;
    const size_t j = WordEnd(s, i, &classes);
    if (UuidWord(s, i, j, classes)) {
      i += 36;
      continue;
    }
    HashWord(s, i, j, classes, sink);
    i = j;
  }
}

bool HasExtension(std::string_view segment) {
  const size_t dot = segment.rfind('.');
  if (dot == std::string_view::npos || dot + 1 >= segment.size()) return false;
  const std::string_view ext = segment.substr(dot + 1);
  if (IsDigit(ext[0])) return false;
  return std::all_of(ext.begin(), ext.end(), IsAsciiAlnum);
}

void ScanPaths(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    const bool start = IsPathChar(s[i]) &&
                       (i == 0 || (!IsPathChar(s[i - 1]) && s[i - 1] != ':' && !WordBefore(s, i)));
    if (!start) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && IsPathChar(s[j])) ++j;
    size_t end = j;
    while (end > i && s[end - 1] == '.') --end;
    const std::string_view run = s.substr(i, end - i);
    const size_t slash = run.rfind('/');
    if (slash != std::string_view::npos && HasExtension(run.substr(slash + 1))) sink(run);
    i = j;
  }
}

void ScanNumbers(std::string_view s, const TokenSink& sink) {
  const size_t n = s.size();
  auto starts_ok = [&](size_t at) {
    if (at == 0) return true;
    const char p = s[at - 1];
    if (IsAsciiWord(p) || In(p, "./#-")) return false;
    return !(p == ':' && at >= 2 && IsDigit(s[at - 2]));
  };
  size_t i = 0;
  while (i < n) {
    size_t digits = 0;
    if (s[i] == '-' && i + 1 < n && IsDigit(s[i + 1]) && starts_ok(i)) {
      digits = i + 1;
    } else if (IsDigit(s[i]) && starts_ok(i)) {
      digits = i;
    } else {
      ++i;
      continue;
    }
    size_t j = digits;
    while (j < n && IsDigit(s[j])) ++j;
    if (j - digits <= 3) {  // thousands groups: 1,234,567
      while (j + 3 < n && s[j] == ',' && IsDigit(s[j + 1]) && IsDigit(s[j + 2]) &&
             IsDigit(s[j + 3]) && (j + 4 == n || !IsDigit(s[j + 4]))) {
        j += 4;
      }
    }
    if (j + 1 < n && s[j] == '.' && IsDigit(s[j + 1])) {
      ++j;
      while (j < n && IsDigit(s[j])) ++j;
    }
    if (j < n && s[j] == '%') ++j;
    const bool glued =
        j < n && (IsAsciiWord(s[j]) || (In(s[j], ".-/:") && j + 1 < n && IsDigit(s[j + 1])));
    if (!glued) sink(s.substr(i, j - i));
    i = j;
  }
}

// --- date-text: dates in words or with slashes, compared as YYYY-MM-DD ------------------

bool ValidDate(int year, int month, int day) {
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > kDays[month - 1]) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return !(month == 2 && day == 29 && !leap);
}

std::string IsoDate(int year, int month, int day) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", year, month, day);
  return buf;
}

// Reads 1..`max` digits at `*at`; returns the value or -1.
int ReadNumber(std::string_view s, size_t* at, size_t max) {
  size_t k = *at;
  int value = 0;
  while (k < s.size() && k - *at < max && IsDigit(s[k])) value = value * 10 + (s[k++] - '0');
  if (k == *at || (k < s.size() && IsDigit(s[k]))) return -1;
  *at = k;
  return value;
}

// A month name or its abbreviation (any case; "Sept" too) with an optional '.'.
int ReadMonth(std::string_view s, size_t* at) {
  static constexpr std::pair<std::string_view, int> kMonths[] = {
      {"january", 1},   {"jan", 1},   {"february", 2},  {"feb", 2},      {"march", 3},
      {"mar", 3},       {"april", 4}, {"apr", 4},       {"may", 5},      {"june", 6},
      {"jun", 6},       {"july", 7},  {"jul", 7},       {"august", 8},   {"aug", 8},
      {"september", 9}, {"sept", 9},  {"sep", 9},       {"october", 10}, {"oct", 10},
      {"november", 11}, {"nov", 11},  {"december", 12}, {"dec", 12}};
  size_t k = *at;
  std::string word;
  while (k < s.size() && IsLetter(s[k]) && word.size() < 10) word += Lower(s[k++]);
  if (WordAt(s, k)) return -1;
  for (const auto& [name, month] : kMonths) {
    if (word == name) {
      if (k < s.size() && s[k] == '.') ++k;
      *at = k;
      return month;
    }
  }
  return -1;
}

bool ReadSpaces(std::string_view s, size_t* at) {
  size_t k = *at;
  while (k < s.size() && k - *at < 3 && (s[k] == ' ' || s[k] == '\t')) ++k;
  if (k == *at) return false;
  *at = k;
  return true;
}

void SkipOrdinal(std::string_view s, size_t* at) {
  for (std::string_view suffix : {"st", "nd", "rd", "th"}) {
    if (s.substr(*at, 2) == suffix && !WordAt(s, *at + 2)) {
      *at += 2;
      return;
    }
  }
}

// Year of four digits not followed by a word character.
int ReadYear(std::string_view s, size_t* at) {
  size_t k = *at;
  const int year = ReadNumber(s, &k, 4);
  if (year < 0 || k - *at != 4 || WordAt(s, k)) return -1;
  *at = k;
  return year;
}

// The date written at `i` ("24 Sept 2026", "Sept 24, 2026", "24/09/2026", "2026/09/24"; with
// `iso`, also "2026-09-24"): its end and YYYY-MM-DD form.
std::optional<std::pair<size_t, std::string>> MatchDateText(std::string_view s, size_t i,
                                                            bool iso) {
  size_t k = i;
  if (IsDigit(s[i])) {
    const int first = ReadNumber(s, &k, 4);
    if (first < 0) return std::nullopt;
    const size_t first_len = k - i;
    if (first_len == 4 && k < s.size() && (s[k] == '/' || (iso && s[k] == '-'))) {
      const char sep = s[k++];
      const int month = ReadNumber(s, &k, 2);
      if (month < 0 || k >= s.size() || s[k] != sep) return std::nullopt;
      ++k;
      const int day = ReadNumber(s, &k, 2);
      if (day < 0 || WordAt(s, k) || !ValidDate(first, month, day)) return std::nullopt;
      return std::make_pair(k, IsoDate(first, month, day));
    }
    if (first_len > 2) return std::nullopt;
    if (k < s.size() && s[k] == '/') {  // D/M/YYYY, or M/D/YYYY when the second is above 12
      ++k;
      const int second = ReadNumber(s, &k, 2);
      if (second < 0 || k >= s.size() || s[k] != '/') return std::nullopt;
      ++k;
      const int year = ReadYear(s, &k);
      if (year < 0) return std::nullopt;
      const int day = second > 12 ? second : first;
      const int month = second > 12 ? first : second;
      if (!ValidDate(year, month, day)) return std::nullopt;
      return std::make_pair(k, IsoDate(year, month, day));
    }
    SkipOrdinal(s, &k);  // D Month[,] YYYY
    if (!ReadSpaces(s, &k)) return std::nullopt;
    const int month = ReadMonth(s, &k);
    if (month < 0) return std::nullopt;
    if (k < s.size() && s[k] == ',') ++k;
    if (!ReadSpaces(s, &k)) return std::nullopt;
    const int year = ReadYear(s, &k);
    if (year < 0 || !ValidDate(year, month, first)) return std::nullopt;
    return std::make_pair(k, IsoDate(year, month, first));
  }
  const int month = ReadMonth(s, &k);  // Month D[,] YYYY
  if (month < 0 || !ReadSpaces(s, &k)) return std::nullopt;
  const int day = ReadNumber(s, &k, 2);
  if (day < 0) return std::nullopt;
  SkipOrdinal(s, &k);
  if (k < s.size() && s[k] == ',') ++k;
  if (!ReadSpaces(s, &k)) return std::nullopt;
  const int year = ReadYear(s, &k);
  if (year < 0 || !ValidDate(year, month, day)) return std::nullopt;
  return std::make_pair(k, IsoDate(year, month, day));
}

// The claim side sees only dates in words or slashes (ISO dates are the `date` kind's); the
// evidence side also counts ISO dates. The evidence side sees every date the claim side sees in
// the same text: after an ISO date it goes on at the day, where the claim side (which does not
// take the ISO date) may find one ("2026-02-24/09/2026" holds 24/09/2026 for a claim).
void ScanDateTexts(std::string_view s, bool iso, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (!IsAsciiAlnum(c) || WordBefore(s, i) || (i > 0 && s[i - 1] == '/')) {
      i += CharLen(s, i);
      continue;
    }
    if (auto match = MatchDateText(s, i, iso)) {
      const std::string_view date = s.substr(i, match->first - i);
      sink(date);
      i = iso && date.size() > 4 && date[4] == '-' ? i + date.rfind('-') + 1 : match->first;
      continue;
    }
    ++i;
    while (i < s.size() && IsAsciiWord(s[i])) ++i;  // rest of this word cannot start a date
  }
}

// --- release_gate.py's regexes (--compat), one hand-written matcher each ------------------

// \b\d{4}-\d{2}-\d{2}\b
void CompatDates(std::string_view s, const TokenSink& sink) {
  constexpr std::string_view kShape = "dddd-dd-dd";
  for (size_t i = 0; i + kShape.size() <= s.size(); ++i) {
    if (!IsDigit(s[i]) || WordBefore(s, i)) continue;
    bool match = true;
    for (size_t k = 0; match && k < kShape.size(); ++k) {
      match = kShape[k] == 'd' ? IsDigit(s[i + k]) : s[i + k] == '-';
    }
    if (match && !WordAt(s, i + kShape.size())) {
      sink(s.substr(i, kShape.size()));
      i += kShape.size() - 1;
    }
  }
}

// https?://[^\s)\]>"']+ then .rstrip(".,;:!?")
void CompatUrls(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    size_t scheme = 0;
    if (s.compare(i, 8, "https://") == 0)
      scheme = 8;
    else if (s.compare(i, 7, "http://") == 0)
      scheme = 7;
    if (scheme == 0) {
      ++i;
      continue;
    }
    size_t j = i + scheme;
    while (j < s.size() && !In(s[j], ")]>\"'") && !SpaceAt(s, j)) j += CharLen(s, j);
    if (j == i + scheme) {
      ++i;
      continue;
    }
    size_t end = j;
    while (end > i && In(s[end - 1], ".,;:!?")) --end;
    sink(s.substr(i, end - i));
    i = j;
  }
}

// (?<![\w/])#\d+\b|\b[A-Z][A-Z0-9]{1,9}-\d+\b
void CompatRefs(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '#' && !WordBefore(s, i) && (i == 0 || s[i - 1] != '/')) {
      size_t j = i + 1;
      while (j < s.size() && IsDigit(s[j])) ++j;
      if (j > i + 1 && !WordAt(s, j)) {
        sink(s.substr(i, j - i));
        i = j;
        continue;
      }
    }
    if (IsUpper(s[i]) && !WordBefore(s, i)) {
      size_t j = i + 1;
      while (j < s.size() && (IsUpper(s[j]) || IsDigit(s[j]))) ++j;
      if (j - i >= 2 && j - i <= 10 && j < s.size() && s[j] == '-') {
        size_t k = j + 1;
        while (k < s.size() && IsDigit(s[k])) ++k;
        if (k > j + 1 && !WordAt(s, k)) {
          sink(s.substr(i, k - i));
          i = k;
          continue;
        }
      }
    }
    ++i;
  }
}

// \b[0-9a-fA-F]{7,40}\b
void CompatHashes(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    if (!IsHex(s[i]) || WordBefore(s, i)) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && IsHex(s[j])) ++j;
    if (j - i >= 7 && j - i <= 40 && !WordAt(s, j)) sink(s.substr(i, j - i));
    i = j;
  }
}

bool CompatPathChar(std::string_view s, size_t i) {
  return s[i] == '.' || s[i] == '-' || WordAt(s, i);
}

// (?<![\w.])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b, with the backtracking order of re:
// as many directory segments as possible, then the last '.' whose extension fits.
void CompatPaths(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    if (!CompatPathChar(s, i) || WordBefore(s, i) || (i > 0 && s[i - 1] == '.')) {
      i += CharLen(s, i);
      continue;
    }
    // Slashes that close a non-empty segment, contiguous from i.
    std::vector<size_t> slashes;
    size_t j = i;
    while (j < s.size()) {
      const size_t seg = j;
      while (j < s.size() && CompatPathChar(s, j)) j += CharLen(s, j);
      if (j == seg || j >= s.size() || s[j] != '/') break;
      slashes.push_back(j++);
    }
    std::optional<size_t> end;
    for (size_t n = slashes.size(); n > 0 && !end; --n) {
      const size_t last = slashes[n - 1] + 1;
      size_t stop = last;
      while (stop < s.size() && CompatPathChar(s, stop)) stop += CharLen(s, stop);
      for (size_t dot = stop; dot > last + 1 && !end;) {
        --dot;
        if (s[dot] != '.') continue;
        size_t e = dot + 1;
        while (e < s.size() && IsAsciiAlnum(s[e])) ++e;
        if (e - dot - 1 >= 1 && e - dot - 1 <= 8 && !WordAt(s, e)) end = e;
      }
    }
    if (end) {
      sink(s.substr(i, *end - i));
      i = *end;
    } else {
      i += CharLen(s, i);
    }
  }
}

// (?<![\w.-])-?\d+(?:\.\d+)?%?(?![\w-])(?!\.\d)
void CompatNumbers(std::string_view s, const TokenSink& sink) {
  const size_t n = s.size();
  auto ends_ok = [&](size_t e) {
    if (e >= n) return true;
    if (s[e] == '-' || WordAt(s, e)) return false;
    return !(s[e] == '.' && e + 1 < n && IsDigit(s[e + 1]));
  };
  size_t i = 0;
  while (i < n) {
    const bool minus = s[i] == '-' && i + 1 < n && IsDigit(s[i + 1]);
    if ((!minus && !IsDigit(s[i])) || WordBefore(s, i) ||
        (i > 0 && (s[i - 1] == '.' || s[i - 1] == '-'))) {
      ++i;
      continue;
    }
    size_t j = minus ? i + 1 : i;
    while (j < n && IsDigit(s[j])) ++j;
    if (j + 1 < n && s[j] == '.' && IsDigit(s[j + 1])) {
      ++j;
      while (j < n && IsDigit(s[j])) ++j;
    }
    std::optional<size_t> end;
    if (j < n && s[j] == '%' && ends_ok(j + 1))
      end = j + 1;
    else if (ends_ok(j))
      end = j;
    if (end) {
      sink(s.substr(i, *end - i));
      i = *end;
    } else {
      ++i;
    }
  }
}

void Scan(std::string_view text, Kind kind, GroundingMode mode, bool evidence,
          const TokenSink& sink) {
  const bool compat = mode == GroundingMode::kCompat;
  switch (kind) {
    case Kind::kDate:
      return compat ? CompatDates(text, sink) : ScanDates(text, sink);
    case Kind::kUrl:
      return compat ? CompatUrls(text, sink) : ScanUrls(text, sink);
    case Kind::kRef:
      return compat ? CompatRefs(text, sink) : ScanRefs(text, sink);
    case Kind::kHash:
      return compat ? CompatHashes(text, sink) : ScanHashes(text, sink);
    case Kind::kPath:
      return compat ? CompatPaths(text, sink) : ScanPaths(text, sink);
    case Kind::kNumber:
      return compat ? CompatNumbers(text, sink) : ScanNumbers(text, sink);
    case Kind::kDateText:
      return ScanDateTexts(text, evidence, sink);
    case Kind::kUnknown:
      return;
  }
}

// The form a token is compared in: hashes ignore case, written dates compare as YYYY-MM-DD,
// everything else is exact.
std::string Normal(Kind kind, std::string_view token) {
  if (kind == Kind::kDateText) {
    auto match = MatchDateText(token, 0, true);
    return match ? match->second : std::string(token);
  }
  std::string out(token);
  if (kind == Kind::kHash) std::transform(out.begin(), out.end(), out.begin(), Lower);
  return out;
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Python's repr() of a str, for messages that quote a pattern as release_gate.py does: its
// quotes and backslashes here, every control (and what else a terminal must not be sent) made
// visible by the one terminal printer (host/terminal.h), `\n` `\t` `\x01` as repr writes them.
std::string PyRepr(std::string_view text) {
  const bool dq =
      text.find('\'') != std::string_view::npos && text.find('"') == std::string_view::npos;
  const char quote = dq ? '"' : '\'';
  std::string quoted;
  for (char c : text) {
    if (c == '\\' || c == quote) quoted += '\\';
    quoted += c;
  }
  return quote + TerminalLine(quoted) + quote;
}

std::unique_ptr<RE2> CompileRequire(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  return std::make_unique<RE2>(pattern, options);
}

// --- equivalence: what a claim token names, and the evidence forms that hold it ----------

std::string LowerText(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), Lower);
  return out;
}

// The project's repository, "owner/name" in lower case (empty: unknown).
struct Repo {
  std::string full;
  std::string name;
};

Repo MakeRepo(std::string_view owner_name) {
  Repo repo;
  repo.full = LowerText(owner_name);
  const size_t slash = repo.full.find('/');
  if (slash != std::string::npos) repo.name = repo.full.substr(slash + 1);
  return repo;
}

// What a link into a forge (github.com, gitlab.com) names.
struct ForgeLink {
  enum class What { kRef, kCommit, kCompare, kTag, kOther };
  std::string repo;  // "owner/name", lower case
  What what = What::kOther;
  std::string a, b;  // ref number, hash, compare ends, or tag
};

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '%' && k + 2 < s.size() && IsHex(s[k + 1]) && IsHex(s[k + 2])) {
      out += static_cast<char>(std::stoi(std::string(s.substr(k + 1, 2)), nullptr, 16));
      k += 2;
    } else {
      out += s[k];
    }
  }
  return out;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}
bool IsHashText(std::string_view s) {
  return s.size() >= 7 && s.size() <= 40 && std::all_of(s.begin(), s.end(), IsHex);
}

// `https://github.com/<owner>/<repo>/…` (or gitlab.com, with or without `/-/`): the repository
// and what the path names — pull/N and issues/N a ref, commit/H a hash, compare/A...B (or A..B)
// two ends, releases/tag/T (gitlab: tags/T) a tag. A query or a fragment makes it kOther.
std::optional<ForgeLink> ParseForgeLink(std::string_view url) {
  size_t at = StartsWithNoCase(url, 0, "https://")  ? 8
              : StartsWithNoCase(url, 0, "http://") ? 7
                                                    : 0;
  if (at == 0) return std::nullopt;
  std::string_view rest = url.substr(at);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string host = LowerText(rest.substr(0, slash));
  if (host.rfind("www.", 0) == 0) host.erase(0, 4);
  if (host != "github.com" && host != "gitlab.com") return std::nullopt;
  rest.remove_prefix(slash + 1);
  const bool plain = rest.find_first_of("?#") == std::string_view::npos;
  rest = rest.substr(0, rest.find_first_of("?#"));
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  std::vector<std::string_view> parts;
  for (size_t p = 0; p <= rest.size();) {
    const size_t e = std::min(rest.find('/', p), rest.size());
    parts.push_back(rest.substr(p, e - p));
    p = e + 1;
  }
  if (parts.size() < 2 || parts[0].empty() || parts[1].empty()) return std::nullopt;
  ForgeLink link;
  std::string name = LowerText(parts[1]);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".git") == 0)
    name.resize(name.size() - 4);
  link.repo = LowerText(parts[0]) + "/" + name;
  size_t k = 2;
  if (k < parts.size() && parts[k] == "-") ++k;
  const size_t left = parts.size() - k;
  if (!plain || left == 0) return link;
  const std::string_view what = parts[k];
  if (left == 2 && (what == "pull" || what == "issues") && AllDigits(parts[k + 1])) {
    link.what = ForgeLink::What::kRef;
    link.a = parts[k + 1];
  } else if (left == 2 && what == "commit" && IsHashText(parts[k + 1])) {
    link.what = ForgeLink::What::kCommit;
    link.a = LowerText(parts[k + 1]);
  } else if (left == 2 && what == "compare") {
    const std::string range = PercentDecode(parts[k + 1]);
    size_t dots = range.find("...");
    size_t len = 3;
    if (dots == std::string::npos) {
      dots = range.find("..");
      len = 2;
    }
    if (dots != std::string::npos && dots > 0 && dots + len < range.size()) {
      link.what = ForgeLink::What::kCompare;
      link.a = range.substr(0, dots);
      link.b = range.substr(dots + len);
    }
  } else if ((left == 3 && what == "releases" && parts[k + 1] == "tag") ||
             (left == 2 && what == "tags")) {
    link.what = ForgeLink::What::kTag;
    link.a = PercentDecode(parts.back());
  }
  return link;
}

// A need of a claim token: one thing the evidence must hold, in one comparison space.
enum class Space { kDate, kUrl, kRef, kHash, kTag, kPath, kNumber, kDateText, kCount };
struct Need {
  Space space;
  std::string_view key;  // a slice of the claim, or bytes kept for the run (KeptBytes)
};

// The key a ref token compares by: `#N` for the project's own refs in any form (`#N`, `GH-N`,
// `PR#N`, `<repo>#N` and `<owner>/<repo>#N` of the project), `owner/name#N` (lower case) for
// another repository's, the token itself for Jira refs and CVE ids.
std::string RefKey(std::string_view token, const Repo& repo) {
  const size_t hash = token.find('#');
  if (hash == 0) return std::string(token);
  if (hash != std::string_view::npos) {
    const std::string q = LowerText(token.substr(0, hash));
    const std::string_view number = token.substr(hash);
    static constexpr std::string_view kOwn[] = {"pr", "gh", "issue", "issues", "pull", "pulls"};
    const bool own = std::find(std::begin(kOwn), std::end(kOwn), q) != std::end(kOwn) ||
                     (!repo.full.empty() && (q == repo.full || q == repo.name));
    return own ? std::string(number) : q + std::string(number);
  }
  if (token.substr(0, 3) == "GH-") return "#" + std::string(token.substr(3));
  return std::string(token);
}

std::string_view NormalUrl(std::string_view url) {
  url.remove_prefix(StartsWithNoCase(url, 0, "https://") ? 8 : 7);
  while (!url.empty() && (url.back() == '/' || url.back() == '.')) url.remove_suffix(1);
  return url;
}

// Evidence-only spellings of refs: `PR 12`, `PR #12`, `pull request 12`, and CVE ids written
// `cve_2026_25645`, `CVE 2026 25645` (any case; separators '-', '_' or a space).
using KeySink = std::function<void(std::string)>;

// The evidence ref forms at `i`: 'p', 'P', 'c' or 'C' not preceded by a word character (the
// trigger).
void RefFormStep(std::string_view s, size_t i, const KeySink& sink) {
  const size_t n = s.size();
  auto digits_at = [&](size_t k, size_t* end) {
    size_t e = k;
    while (e < n && IsDigit(s[e])) ++e;
    if (e == k || WordAt(s, e)) return false;
    *end = e;
    return true;
  };
  {
    size_t k = 0;
    if (StartsWithNoCase(s, i, "pr ") || StartsWithNoCase(s, i, "pull request ")) {
      k = i + (Lower(s[i + 1]) == 'r' ? 3 : 13);
      while (k < n && s[k] == ' ') ++k;
      if (k < n && s[k] == '#') ++k;
      size_t e = 0;
      if (digits_at(k, &e)) sink("#" + std::string(s.substr(k, e - k)));
    } else if (StartsWithNoCase(s, i, "cve") && i + 9 < n && In(s[i + 3], "-_ ")) {
      k = i + 4;
      size_t y = k;
      while (y < n && IsDigit(s[y])) ++y;
      if (y - k != 4 || y + 1 >= n || !In(s[y], "-_ ")) return;
      size_t e = 0;
      if (digits_at(y + 1, &e)) {
        sink("CVE-" + std::string(s.substr(k, 4)) + "-" + std::string(s.substr(y + 1, e - y - 1)));
      }
    }
  }
}

// Where the one-pass scanner sends each kind (null: not scanned). With `bare`, refs are read as
// the evidence writes them (`name#N`), and `form` receives the evidence-only ref spellings.
struct OnePassSinks {
  const TokenSink* date = nullptr;
  const TokenSink* url = nullptr;
  const TokenSink* ref = nullptr;
  const TokenSink* hash = nullptr;
  const KeySink* form = nullptr;
  bool bare = false;
};

// Where the one-pass scanner stands: the next position and each scanner's resume point (the
// position its own loop would next look at; a position below it is a step of one for it).
struct OnePassState {
  size_t i = 0;
  size_t date_at = 0, url_at = 0, ref_at = 0, hash_at = 0;
};

// One step of the one-pass scanner at `st.i` (< s.size()), which is a position the per-kind
// loops all visit: '#' and the starts of words (the character before no word character;
// non-ASCII bytes decoded by the one UTF-8 decoder) run the step of each scanner, each with its
// own resume point, exactly as its own loop (ScanDates, ScanUrls, ScanRefs,
// ScanEvidenceRefForms, ScanHashes) would; then `st.i` moves past one non-word character or
// one whole word. Every other position is a step of one for each scanner.
inline void OnePassStep(std::string_view s, const OnePassSinks& to, OnePassState& st) {
  const size_t n = s.size();
  const size_t i = st.i;
  const uint8_t cls = ClassOf(s[i]);
  if (!(cls & (kClassWord | kClassHigh))) {
    if ((cls & kClassSharp) && to.ref && i >= st.ref_at) {
      st.ref_at = RefStep(s, i, *to.ref, to.bare);
    }
    st.i = i + 1;
    return;
  }
  if (cls & kClassHigh) {
    uint32_t cp = 0;
    const size_t len = Decode(s, i, &cp);
    if (!IsWordCp(cp)) {
      st.i = i + len;
      return;
    }
  }
  // A word starts at i: the character before it (if any) is no word character.
  if (cls & kClassStarts) {
    const char c = s[i];
    if (IsDigit(c)) {
      if (to.date && i >= st.date_at && i + kDateLen <= n) st.date_at = DateStep(s, i, *to.date);
    } else if (IsUpper(c)) {
      if (c == 'H' && to.url && i >= st.url_at) st.url_at = UrlStep(s, i, *to.url);
      if (to.ref && i >= st.ref_at) st.ref_at = RefStep(s, i, *to.ref, to.bare);
      if ((c == 'P' || c == 'C') && to.form) RefFormStep(s, i, *to.form);
    } else if (c == 'h') {
      if (to.url && i >= st.url_at) st.url_at = UrlStep(s, i, *to.url);
    } else if (to.form) {  // 'p' or 'c'
      RefFormStep(s, i, *to.form);
    }
  }
  uint8_t classes = 0;
  const size_t j = WordEnd(s, i, &classes);
  if (to.hash && i >= st.hash_at) {
    if (UuidWord(s, i, j, classes)) {
      st.hash_at = i + 36;
    } else {
      HashWord(s, i, j, classes, *to.hash);
      st.hash_at = j;
    }
  }
  st.i = j;
}

// The one-pass scanner's step at every position (the oracle of ScanOnePass's skipping; tests
// and benchmarks reach it through OnePassEventsForTesting).
void ScanOnePassReference(std::string_view s, const OnePassSinks& to) {
  OnePassState st;
  while (st.i < s.size()) OnePassStep(s, to, st);
}

// --- skipping to the next hot byte -----------------------------------------------------------
//
// Most evidence bytes can neither start a token nor change what a scanner does next. A step
// (OnePassStep) emits a token or moves a resume point past the current word only at:
//  - '#' (RefStep);
//  - a digit: a word holding one may be a hash (HashWord needs a digit), a word starting with
//    one may be a date; so every digit is hot, wherever it stands in its word;
//  - '-': the word before it may start a UUID (UuidWord), whose resume point keeps the hash
//    step out of its later groups ("deadbeef-…-def012345678" holds no hash) even when its first
//    group has no digit;
//  - a letter at a word start that can begin a token: an uppercase letter followed by another
//    uppercase letter or a digit (RefStep's ABC-123: two or more before the '-'), 'h'/'H'
//    before 't'/'T' (UrlStep's http), 'p'/'P' before 'r'/'R'/'u'/'U' (RefFormStep's "pr " and
//    "pull request "), 'c'/'C' before 'v'/'V' (its "cve"). At any other letter each step is
//    "no token, resume at the next byte", which the scanners' positions past it make moot.
// "At a word start" is read as "the byte before is no ASCII word character" (or there is none):
// a superset, since a non-ASCII word character before the letter also ends the word start, and
// the per-word step sorts that out. Bytes >= 0x80 are cold: a non-ASCII character only decides
// where words start and end, which the step reads from the text itself when it runs.
//
// Why running the step only around hot bytes gives the same tokens as running it everywhere:
// the scanner is at a position p that the per-word loop visits, and every byte in [p, h) is
// cold, h the next hot byte. Every position right after an ASCII non-word byte is visited by
// the per-word loop too (no word and no multi-byte character holds such a byte), so the step
// may restart at p' = the last such position in [p, h], or p itself: between p and p' the loop
// would only have stepped over non-word characters and words with no digit, not followed by
// '-', whose starts begin no token — steps that emit nothing and leave no resume point past
// p'. From p' the step runs as the loop would until it passes h; then the skip goes on.

// Whether the byte at `k` is hot (see above): the scalar rule, which the SSE2 mask matches
// bit for bit.
inline bool HotAt(std::string_view s, size_t k) {
  const auto c = static_cast<unsigned char>(s[k]);
  if (IsDigit(static_cast<char>(c)) || c == '#' || c == '-') return true;
  if (k > 0 && IsAsciiWord(s[k - 1])) return false;
  const auto next = static_cast<unsigned char>(k + 1 < s.size() ? s[k + 1] : 0);
  if (IsUpper(static_cast<char>(c)) &&
      (IsUpper(static_cast<char>(next)) || IsDigit(static_cast<char>(next)))) {
    return true;
  }
  const unsigned char lc = c | 0x20, ln = next | 0x20;  // ASCII letters folded to lower case
  return (lc == 'h' && ln == 't') || (lc == 'p' && (ln == 'r' || ln == 'u')) ||
         (lc == 'c' && ln == 'v');
}

// The first hot byte in [from, to), or `to`: one byte at a time (the portable skip).
size_t NextHotScalar(std::string_view s, size_t from, size_t to) {
  for (size_t k = from; k < to; ++k) {
    if (HotAt(s, k)) return k;
  }
  return to;
}

#if defined(__SSE2__)
// Bytes of `v` in [lo, hi] (lo <= hi <= 0x7F: a byte >= 0x80 compares as negative, never in).
inline __m128i InRange(__m128i v, char lo, char hi) {
  return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lo - 1))),
                       _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(hi + 1))));
}
inline __m128i Equals(__m128i v, char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); }

// HotAt for the 16 bytes at p[0..15], as a bit mask (bit k: p[k]); reads p[-1] and p[16].
inline unsigned HotMask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i prev = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p - 1));
  const __m128i next = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
  const __m128i lower_bit = _mm_set1_epi8(0x20);
  const __m128i lv = _mm_or_si128(v, lower_bit), ln = _mm_or_si128(next, lower_bit);
  const __m128i lp = _mm_or_si128(prev, lower_bit);
  const __m128i prev_word =
      _mm_or_si128(_mm_or_si128(InRange(prev, '0', '9'), InRange(lp, 'a', 'z')), Equals(prev, '_'));
  const __m128i next_upper_or_digit =
      _mm_or_si128(InRange(next, 'A', 'Z'), InRange(next, '0', '9'));
  __m128i starts = _mm_and_si128(InRange(v, 'A', 'Z'), next_upper_or_digit);
  starts = _mm_or_si128(starts, _mm_and_si128(Equals(lv, 'h'), Equals(ln, 't')));
  starts = _mm_or_si128(
      starts, _mm_and_si128(Equals(lv, 'p'), _mm_or_si128(Equals(ln, 'r'), Equals(ln, 'u'))));
  starts = _mm_or_si128(starts, _mm_and_si128(Equals(lv, 'c'), Equals(ln, 'v')));
  __m128i hot = _mm_andnot_si128(prev_word, starts);
  hot = _mm_or_si128(hot, InRange(v, '0', '9'));
  hot = _mm_or_si128(hot, _mm_or_si128(Equals(v, '#'), Equals(v, '-')));
  return static_cast<unsigned>(_mm_movemask_epi8(hot));
}
#endif

#if defined(DG_AVX2_SKIP)
// Bytes of `v` in [lo, hi] (lo <= hi <= 0x7F), in two operations: v - lo + 0x80 (wrapping) is
// below 0x80 + (hi - lo + 1) as a signed byte exactly for those bytes (a byte >= 0x80 never).
__attribute__((target("avx2"))) inline __m256i InRange32(__m256i v, char lo, char hi) {
  return _mm256_cmpgt_epi8(_mm256_set1_epi8(static_cast<char>(-128 + (hi - lo) + 1)),
                           _mm256_add_epi8(v, _mm256_set1_epi8(static_cast<char>(0x80 - lo))));
}
__attribute__((target("avx2"))) inline __m256i Equals32(__m256i v, char c) {
  return _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c));
}

// A 16-byte table in both 128-bit lanes, for _mm256_shuffle_epi8 (indexed by a byte's low
// nibble; a byte >= 0x80 reads 0).
__attribute__((target("avx2"))) inline __m256i Table32(char b0, char b2, char b3, char b4, char b5,
                                                       char b6, char b8) {
  return _mm256_setr_epi8(b0, 0, b2, b3, b4, b5, b6, 0, b8, 0, 0, 0, 0, 0, 0, 0,  //
                          b0, 0, b2, b3, b4, b5, b6, 0, b8, 0, 0, 0, 0, 0, 0, 0);
}

// HotMask16 for the 32 bytes at p[0..31] (bit k: p[k]); reads p[-1] and p[32]. The letter
// pairs (h before t, p before r or u, c before v; either case) by table: each starter's and
// each follower's low nibble differ within its set, so one shuffle gives the byte the nibble
// must belong to (an equality makes it exact) and another a code (h 1, p 2, c 4; t 1, r u 2,
// v 4): a pair starts a token where the codes of a byte and the next one share a bit.
__attribute__((target("avx2"))) inline uint32_t HotMask32(const char* p) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i prev = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p - 1));
  const __m256i next = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
  const __m256i lower_bit = _mm256_set1_epi8(0x20);
  const __m256i lv = _mm256_or_si256(v, lower_bit), ln = _mm256_or_si256(next, lower_bit);
  const __m256i lp = _mm256_or_si256(prev, lower_bit);
  const __m256i prev_word = _mm256_or_si256(
      _mm256_or_si256(InRange32(prev, '0', '9'), InRange32(lp, 'a', 'z')), Equals32(prev, '_'));
  const __m256i next_upper_or_digit =
      _mm256_or_si256(InRange32(next, 'A', 'Z'), InRange32(next, '0', '9'));
  __m256i starts = _mm256_and_si256(InRange32(v, 'A', 'Z'), next_upper_or_digit);
  const __m256i starter_byte = Table32('p', 0, 'c', 0, 0, 0, 'h');
  const __m256i starter_code = Table32(2, 0, 4, 0, 0, 0, 1);
  const __m256i follower_byte = Table32(0, 'r', 0, 't', 'u', 'v', 0);
  const __m256i follower_code = Table32(0, 2, 0, 1, 2, 4, 0);
  const __m256i sc = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(starter_byte, lv), lv),
                                      _mm256_shuffle_epi8(starter_code, lv));
  const __m256i fc = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(follower_byte, ln), ln),
                                      _mm256_shuffle_epi8(follower_code, ln));
  starts =
      _mm256_or_si256(starts, _mm256_cmpgt_epi8(_mm256_and_si256(sc, fc), _mm256_setzero_si256()));
  __m256i hot = _mm256_andnot_si256(prev_word, starts);
  hot = _mm256_or_si256(hot, InRange32(v, '0', '9'));
  hot = _mm256_or_si256(hot, _mm256_or_si256(Equals32(v, '#'), Equals32(v, '-')));
  return static_cast<uint32_t>(_mm256_movemask_epi8(hot));
}

// Where SkipColdAvx2 stopped: `at`, the start of the first block holding a hot byte (`mask`,
// its hot bytes) or where the blocks stopped (`mask` 0); `ascii`: no byte of the blocks read
// (from the start to the end of the last block) is >= 0x80. Returned in two registers.
struct ColdRun {
  size_t at;
  uint32_t mask;
  bool ascii;
};

// From `k` (>= 1), 32 bytes at a time while the block and the bytes on either side of it lie
// inside `s`, to the first block with a hot byte. The blocks' bytes are or-ed and tested once
// at the end: the evidence's UTF-8 check rides on the scan's loads (Utf8Front).
__attribute__((target("avx2"))) ColdRun SkipColdAvx2(std::string_view s, size_t k) {
  const size_t n = s.size();
  __m256i high = _mm256_setzero_si256();
  for (; k + 33 <= n; k += 32) {
    high =
        _mm256_or_si256(high, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.data() + k)));
    if (const uint32_t mask = HotMask32(s.data() + k)) {
      return {k, mask, _mm256_movemask_epi8(high) == 0};
    }
  }
  return {k, 0, _mm256_movemask_epi8(high) == 0};
}

// Whether this CPU (and the kernel, for the AVX state) runs AVX2: asked once.
bool HaveAvx2() {
  static const bool have = __builtin_cpu_supports("avx2");
  return have;
}
#endif

// How the skip looks for the next hot byte: byte at a time, 16 bytes at a time (SSE2), or 32
// and then 16 at a time (AVX2; SSE2 for the last block, the scalar rule for the last bytes).
enum class Skip { kScalar, kSse2, kAvx2 };

// The UTF-8 check of the text being scanned, done on the bytes the AVX2 skip loads anyway (issue
// 11 item 4: one pass over the evidence, not a check and then a scan). `valid_to`: the text's
// bytes before it are well-formed UTF-8 and a character starts there (so FirstInvalidUtf8 of
// the text is valid_to plus FirstInvalidUtf8 of the rest: the caller checks only the rest). A
// run of blocks with no byte >= 0x80 that starts at or before `valid_to` moves it to the run's
// end (its last byte is ASCII: a character starts after it); any other run (non-ASCII bytes, or
// a gap the per-word step read past the blocks) goes through FirstInvalidUtf8 from `valid_to`
// to the first byte at or after the run's end that continues no sequence, so no valid
// character is cut. At the first ill-formed byte the front stops (the caller's check of the
// rest finds it, at the same offset).
struct Utf8Front {
  size_t valid_to = 0;
  bool stopped = false;

  // The bytes [from, to) were read; `ascii`: none is >= 0x80.
  void Cover(std::string_view s, size_t from, size_t to, bool ascii) {
    if (ascii && from <= valid_to) {
      if (to > valid_to && !stopped) valid_to = to;
    } else if (to > valid_to && !stopped) {
      Check(s, to);
    }
  }

  // Checks from `valid_to` through `to` and on to the first byte that continues no sequence.
  [[gnu::noinline]] void Check(std::string_view s, size_t to) {
    size_t end = to;
    while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) ++end;
    const std::string_view part = s.substr(valid_to, end - valid_to);
    const size_t bad = FirstInvalidUtf8(part);
    if (bad == part.size()) {
      valid_to = end;
    } else {
      valid_to += bad;
      stopped = true;
    }
  }
};

// The first hot byte at or after `from`, or s.size(). With AVX2, the blocks it reads move
// `front` on.
template <Skip kSkip>
[[gnu::always_inline]] inline size_t NextHot(std::string_view s, size_t from,
                                             [[maybe_unused]] Utf8Front* front = nullptr) {
  const size_t n = s.size();
  size_t k = from;
  if constexpr (kSkip != Skip::kScalar) {
    if (k == 0) {
      if (n > 0 && HotAt(s, 0)) return 0;
      k = 1;
    }
  }
#if defined(DG_AVX2_SKIP)
  if constexpr (kSkip == Skip::kAvx2) {
    const ColdRun run = SkipColdAvx2(s, k);
    if (front) front->Cover(s, k, run.mask ? run.at + 32 : run.at, run.ascii);
    k = run.at;
    if (run.mask) return k + static_cast<size_t>(__builtin_ctz(run.mask));
  }
#endif
#if defined(__SSE2__)
  if constexpr (kSkip != Skip::kScalar) {
    for (; k + 17 <= n; k += 16) {
      if (const unsigned mask = HotMask16(s.data() + k)) {
        return k + static_cast<size_t>(__builtin_ctz(mask));
      }
    }
  }
#endif
  return NextHotScalar(s, k, n);
}

inline bool IsAsciiNonWord(char c) {
  return static_cast<unsigned char>(c) < 0x80 && !IsAsciiWord(c);
}

// The one-pass scanner: the cold skip to the next hot byte, the step from the last position
// before it that the per-word loop visits, until past it; the same sink calls in the same order
// as ScanOnePassReference (the argument above; the differential test in
// tests/grounding/one_pass_skip_test.cc holds it to that).
// Returns how much of `s` it found well-formed UTF-8 (Utf8Front::valid_to: with the AVX2 skip,
// nearly all of a text it read to the end; else 0): the caller checks the rest.
template <Skip kSkip>
[[gnu::always_inline]] inline size_t ScanOnePassSkipping(std::string_view s,
                                                         const OnePassSinks& to) {
  const size_t n = s.size();
  OnePassState st;
  Utf8Front front;
  while (st.i < n) {
    const size_t hot = NextHot<kSkip>(s, st.i, &front);
    if (hot == n) break;
    size_t at = hot;
    while (at > st.i && !IsAsciiNonWord(s[at - 1])) --at;
    st.i = at;
    while (st.i <= hot) OnePassStep(s, to, st);
  }
  return front.valid_to;
}

// Dates, URLs, refs, evidence ref forms and hashes in one pass over `s`. Each kind's sink sees
// that scanner's tokens in text order; kinds interleave by position. The skip pays only 16 bytes
// at a time: byte at a time it runs 20% fewer instructions than the per-word step everywhere
// (24 against 30 per byte on bench/grounding/scan.py's evidence) but no faster (its branches:
// 0.6-1.2x the per-word step's throughput in four runs, docs/performance.md), so without SSE2
// the simpler per-word step runs everywhere. Where the CPU has AVX2 the skip goes 32 bytes at
// a time (the same rule, half the instructions per byte).
#if defined(DG_AVX2_SKIP)
// The AVX2 scan as one AVX2 function, the skip inlined into its loop: the skip's constants are
// not set up again each time the scan comes back from a hot byte.
__attribute__((target("avx2"))) size_t ScanOnePassAvx2(std::string_view s, const OnePassSinks& to) {
  return ScanOnePassSkipping<Skip::kAvx2>(s, to);
}
#endif

// Returns the length of a prefix of `s` found well-formed UTF-8 on the way (0 without AVX2).
size_t ScanOnePass(std::string_view s, const OnePassSinks& to) {
#if defined(DG_AVX2_SKIP)
  if (HaveAvx2()) return ScanOnePassAvx2(s, to);
#endif
#if defined(__SSE2__)
  return ScanOnePassSkipping<Skip::kSse2>(s, to);
#else
  ScanOnePassReference(s, to);
  return 0;
#endif
}

// Whether `tag` stands in `text` as a whole word: not inside a longer name or version
// (`v1.2.0` is not in `v1.2.0-rc1` nor in `v1.2.01`).
bool HasWholeTag(std::string_view text, std::string_view tag) {
  auto name_char = [](char c) { return IsAsciiAlnum(c) || In(c, "_-+@."); };
  for (size_t at = text.find(tag); at != std::string_view::npos; at = text.find(tag, at + 1)) {
    const size_t end = at + tag.size();
    const bool before_ok = at == 0 || !name_char(text[at - 1]);
    const bool after_ok =
        end == text.size() || (!name_char(text[end]) && text[end] != '/') ||
        (text[end] == '.' && (end + 1 == text.size() || !IsAsciiAlnum(text[end + 1])));
    if (before_ok && after_ok) return true;
  }
  return false;
}

// Trailing digits of a key and what comes before them ("#1072" → "#", 1072).
std::optional<std::pair<std::string_view, uint64_t>> SplitNumber(std::string_view key) {
  size_t k = key.size();
  while (k > 0 && IsDigit(key[k - 1])) --k;
  if (k == key.size() || key.size() - k > 18) return std::nullopt;
  uint64_t n = 0;  // at most 18 digits: no overflow (std::stoull's value, without a string)
  for (size_t j = k; j < key.size(); ++j) n = n * 10 + static_cast<uint64_t>(key[j] - '0');
  return std::make_pair(key.substr(0, k), n);
}

// std::atoi of a short field, without copying it into a std::string: leading C-locale white
// space, an optional sign, then digits up to the first other byte (a NUL included, as atoi
// stops there); 0 when there are none. Fields are at most 4 bytes, so no overflow.
int AtoiField(std::string_view s) {
  size_t k = 0;
  while (k < s.size() && (s[k] == ' ' || (s[k] >= '\t' && s[k] <= '\r'))) ++k;
  bool negative = false;
  if (k < s.size() && (s[k] == '+' || s[k] == '-')) negative = s[k++] == '-';
  int n = 0;
  for (; k < s.size() && IsDigit(s[k]); ++k) n = n * 10 + (s[k] - '0');
  return negative ? -n : n;
}

long DayNumber(std::string_view date) {  // YYYY-MM-DD → days since 0000-03-01 (or -1)
  if (date.size() != 10) return -1;
  const int y0 = AtoiField(date.substr(0, 4));
  const int m = AtoiField(date.substr(5, 2));
  const int d = AtoiField(date.substr(8, 2));
  if (!ValidDate(y0, m, d)) return -1;
  const int y = m <= 2 ? y0 - 1 : y0;
  const int mp = (m + 9) % 12;
  return 365L * y + y / 4 - y / 100 + y / 400 + (153 * mp + 2) / 5 + d - 1;
}

// The claim's keys of one comparison space, still to be found in the evidence: an
// open-addressing set (linear probing, power-of-two slots of 8 bytes, at most half full) over a
// list of views of keys that the claim's tokens own and that outlive the set. A key the
// evidence holds is marked found rather than removed, so a probe never needs tombstones;
// `empty()` is true once every key is found. No allocation per key and one cache line per probe
// (an std::unordered_set<std::string> before: a node and a copy of each key).
class PendingKeys {
 public:
  void insert(std::string_view key) {
    if ((keys_.size() + 1) * 2 > slots_.size()) Grow();
    const uint64_t h = HashOf(key);
    for (size_t at = h & mask_;; at = (at + 1) & mask_) {
      Slot& slot = slots_[at];
      if (slot.index == 0) {
        keys_.push_back(key);
        found_.push_back(0);
        slot = {static_cast<uint32_t>(keys_.size()), Tag(h)};
        ++pending_;
        return;
      }
      if (slot.tag == Tag(h) && keys_[slot.index - 1] == key) return;
    }
  }
  bool empty() const { return pending_ == 0; }
  // Whether `key` is a claim key not yet found.
  bool contains(std::string_view key) const {
    const size_t k = Find(key);
    return k != kNone && !found_[k];
  }
  // Marks `key` found (nothing when it is no claim key, or found already).
  void erase(std::string_view key) {
    if (pending_ == 0) return;
    if (const size_t k = Find(key); k != kNone && !found_[k]) {
      found_[k] = 1;
      --pending_;
    }
  }
  // Marks found every pending key for which `pred` holds.
  template <class Pred>
  void erase_if(Pred pred) {
    for (size_t k = 0; k < keys_.size(); ++k) {
      if (!found_[k] && pred(keys_[k])) {
        found_[k] = 1;
        --pending_;
      }
    }
  }

 private:
  struct Slot {
    uint32_t index = 0;  // 1 + the key's place in keys_; 0: empty
    uint32_t tag = 0;    // the high half of the key's hash
  };
  static constexpr size_t kNone = static_cast<size_t>(-1);
  static uint32_t Tag(uint64_t h) { return static_cast<uint32_t>(h >> 32); }
  // Eight bytes a step, multiplied and folded: keys are short (dates, refs, hashes, URLs).
  static uint64_t HashOf(std::string_view s) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
    size_t k = 0;
    for (; k + 8 <= s.size(); k += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + k, 8);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    uint64_t w = 0;
    std::memcpy(&w, s.data() + k, s.size() - k);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
  }
  size_t Find(std::string_view key) const {
    if (slots_.empty()) return kNone;
    const uint64_t h = HashOf(key);
    for (size_t at = h & mask_;; at = (at + 1) & mask_) {
      const Slot& slot = slots_[at];
      if (slot.index == 0) return kNone;
      if (slot.tag == Tag(h) && keys_[slot.index - 1] == key) return slot.index - 1;
    }
  }
  void Grow() {
    slots_.assign(slots_.empty() ? 64 : slots_.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (size_t k = 0; k < keys_.size(); ++k) {
      size_t at = HashOf(keys_[k]) & mask_;
      while (slots_[at].index != 0) at = (at + 1) & mask_;
      slots_[at] = {static_cast<uint32_t>(k + 1), Tag(HashOf(keys_[k]))};
    }
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::vector<std::string_view> keys_;
  std::vector<uint8_t> found_;
  size_t pending_ = 0;  // keys not found yet
};

// Distinct evidence items kept per space to name the nearest one (bounded work and memory).
constexpr size_t kMaxCandidates = 4096;

// Bytes kept at stable addresses for as long as it lives (the candidates' keys, copied once
// into 64 KiB blocks: no allocation and no string per candidate).
class KeptBytes {
 public:
  std::string_view Keep(std::string_view s) {
    if (s.empty()) return std::string_view("", 0);
    if (s.size() > left_) {
      const size_t size = std::max(s.size(), kBlock);
      at_ = blocks_.emplace_back(std::make_unique_for_overwrite<char[]>(size)).get();
      left_ = size;
    }
    char* const kept = at_;
    std::memcpy(kept, s.data(), s.size());
    at_ += s.size();
    left_ -= s.size();
    return {kept, s.size()};
  }

 private:
  static constexpr size_t kBlock = size_t{64} << 10;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* at_ = nullptr;
  size_t left_ = 0;
};

// The evidence, matched one comparison space at a time: each space's claim keys go into a
// set, each evidence text is scanned once for that space, and every evidence key found is
// erased from the set (reading stops once the set is empty).
class Matcher {
 public:
  Matcher(const std::vector<std::string_view>& evidence, std::string_view repo)
      : evidence_(evidence) {
    if (!repo.empty()) repo_ = MakeRepo(repo);
  }

  // The project's repository: given, or the one repository the evidence's forge links name.
  const Repo& repo() {
    if (!repo_ && !inferred_) {
      inferred_ = true;
      std::set<std::string> seen;
      for (std::string_view text : evidence_) {
        ScanUrls(text, [&](std::string_view url) {
          if (auto link = ParseForgeLink(url)) seen.insert(link->repo);
        });
      }
      repo_ = seen.size() == 1 ? MakeRepo(*seen.begin()) : Repo{};
    }
    return *repo_;
  }

  // `need` must outlive the matcher: the set holds a view of its key.
  void Want(const Need& need) {
    if (need.space == Space::kHash) lengths_.insert(need.key.size());
    pending_[static_cast<size_t>(need.space)].insert(need.key);
  }

  // Dates, URLs, refs and hashes in one pass over each evidence text (ScanOnePass), a space
  // dropping out at the next text once all its claim keys are found (reading stops when every
  // space has); then the forge links' refs; then tags, paths, numbers and written dates, one
  // scan each over the texts while they have keys left.
  void Run() {
    auto pending = [&](Space space) -> KeySet& { return pending_[static_cast<size_t>(space)]; };
    const bool refs = !pending(Space::kRef).empty();
    const TokenSink date = [&](std::string_view t) { Hit(Space::kDate, t); };
    bool url_space = false, ref_space = false;  // for the text being read
    const TokenSink url = [&](std::string_view t) {
      if (url_space) HitUrl(t);
      if (ref_space) GatherLink(t);  // the forge links the ref space needs, from the same scan
    };
    const TokenSink ref = [&](std::string_view t) { HitRef(t); };
    std::vector<std::string> forms;  // the text's ref forms, named after its refs (as before)
    const KeySink form = [&](std::string key) {
      pending(Space::kRef).erase(key);
      if (forms.size() < kMaxCandidates) forms.push_back(std::move(key));
    };
    const TokenSink hash = [&](std::string_view t) { HitHash(t); };
    utf8_checked_.assign(evidence_.size(), 0);
    for (size_t t = 0; t < evidence_.size(); ++t) {
      const std::string_view text = evidence_[t];
      url_space = !pending(Space::kUrl).empty();
      ref_space = !pending(Space::kRef).empty();
      OnePassSinks to;
      to.bare = true;
      if (!pending(Space::kDate).empty()) to.date = &date;
      if (url_space || ref_space) to.url = &url;
      if (ref_space) to.ref = &ref, to.form = &form;
      if (!pending(Space::kHash).empty()) to.hash = &hash;
      if (!to.date && !to.url && !to.ref && !to.hash) break;
      utf8_checked_[t] = ScanOnePass(text, to);
      for (const std::string& key : forms) Hit(Space::kRef, key);
      forms.clear();
    }
    if (refs) ResolveForgeRefs();
    for (Space space : {Space::kTag, Space::kPath, Space::kNumber, Space::kDateText}) {
      for (std::string_view text : evidence_) {
        if (pending(space).empty()) break;
        ScanSpace(text, space);
      }
    }
  }

  // Per evidence text, the length of a prefix its one-pass scan found well-formed UTF-8 (0 for
  // a text not scanned).
  const std::vector<size_t>& utf8_checked() const { return utf8_checked_; }

  bool Found(const Need& need) const {
    return !pending_[static_cast<size_t>(need.space)].contains(need.key);
  }

  // The evidence item nearest to an ungrounded key, or "" (refs and dates by distance, hashes
  // by differing digits (at most 2), URLs by the longest common prefix past the host).
  std::string Nearest(const Need& need) const {
    const auto& cands = candidates_[static_cast<size_t>(need.space)];
    std::string best;
    switch (need.space) {
      case Space::kRef: {
        auto split = SplitNumber(need.key);
        if (!split) return "";
        uint64_t best_d = UINT64_MAX;
        for (const auto& [cand, raw] : cands) {
          auto c = SplitNumber(cand);
          if (!c || c->first != split->first) continue;
          const uint64_t d =
              c->second > split->second ? c->second - split->second : split->second - c->second;
          if (d < best_d || (d == best_d && cand < best)) best_d = d, best = cand;
        }
        return best;
      }
      case Space::kDate: {
        const long day = DayNumber(need.key);
        if (day < 0) return "";
        if (!date_days_) {  // each candidate's day once, not once per ungrounded date
          date_days_.emplace();
          date_days_->reserve(cands.size());
          for (const auto& [cand, raw] : cands) date_days_->emplace_back(DayNumber(cand), cand);
        }
        long best_d = -1;
        for (const auto& [c, cand] : *date_days_) {  // in the candidates' iteration order
          if (c < 0) continue;
          const long d = c > day ? c - day : day - c;
          if (best_d < 0 || d < best_d || (d == best_d && cand < best)) best_d = d, best = cand;
        }
        return best;
      }
      case Space::kHash: {
        size_t best_d = 3;
        for (const auto& [cand, raw] : cands) {
          if (cand.size() < need.key.size()) continue;
          size_t d = 0;
          for (size_t k = 0; k < need.key.size() && d < best_d; ++k) d += cand[k] != need.key[k];
          if (d < best_d) best_d = d, best = cand.substr(0, need.key.size());
        }
        return best;
      }
      case Space::kUrl: {
        const size_t host = need.key.find('/');
        size_t best_len = host == std::string::npos ? need.key.size() : host + 1;
        for (const auto& [cand, raw] : cands) {
          size_t len = 0;
          while (len < cand.size() && len < need.key.size() && cand[len] == need.key[len]) ++len;
          if (len > best_len || (len == best_len && !best.empty() && raw < best)) {
            if (len > best_len) best_len = len;
            best = raw;
          }
        }
        return best;
      }
      default:
        return "";
    }
  }

 private:
  void Hit(Space space, std::string_view key, std::string_view raw = {}) {
    auto& pending = pending_[static_cast<size_t>(space)];
    pending.erase(key);
    auto& cands = candidates_[static_cast<size_t>(space)];
    if (cands.size() < kMaxCandidates && cands.find(key) == cands.end()) {
      const std::string_view kept = kept_.Keep(key);
      cands.emplace(kept, raw.empty() || raw == key ? kept : kept_.Keep(raw));
    }
  }

  void GatherLink(std::string_view url) {
    auto link = ParseForgeLink(url);
    if (!link) return;
    seen_repos_.insert(link->repo);
    if (link->what == ForgeLink::What::kRef) forge_refs_.emplace_back(link->repo, link->a);
  }

  // Evidence links to pull/N or issues/N: refs of the project (given, or the one repository
  // the evidence's forge links name) or `owner/name#N` of another.
  void ResolveForgeRefs() {
    if (!repo_) repo_ = seen_repos_.size() == 1 ? MakeRepo(*seen_repos_.begin()) : Repo{};
    for (const auto& [link_repo, number] : forge_refs_) {
      Hit(Space::kRef, (link_repo == repo_->full ? "" : link_repo) + "#" + number);
    }
    for (const std::string& token : qualified_refs_) Hit(Space::kRef, RefKey(token, *repo_));
    forge_refs_.clear();
    qualified_refs_.clear();
  }

  // A ref of the evidence: `#N`, Jira refs and CVE ids are their own keys; a qualified one is
  // keyed once the repository is known.
  void HitRef(std::string_view t) {
    const size_t hash = t.find('#');
    if (hash == 0 || (hash == std::string_view::npos && t.substr(0, 3) != "GH-")) {
      Hit(Space::kRef, t);
    } else if (repo_) {
      Hit(Space::kRef, RefKey(t, *repo_));
    } else {
      qualified_refs_.emplace_back(t);  // resolved once the repository is known
    }
  }

  // A hash of the evidence grounds every claim key that is a prefix of it (any case).
  void HitHash(std::string_view t) {
    if (t.size() > 40) return;
    char buf[40];
    for (size_t k = 0; k < t.size(); ++k) buf[k] = Lower(t[k]);
    const std::string_view lower(buf, t.size());
    auto& pending = pending_[static_cast<size_t>(Space::kHash)];
    for (size_t len : lengths_) {
      if (len > lower.size() || pending.empty()) break;
      pending.erase(lower.substr(0, len));
    }
    auto& cands = candidates_[static_cast<size_t>(Space::kHash)];
    if (cands.size() < kMaxCandidates && cands.find(lower) == cands.end()) {
      const std::string_view kept = kept_.Keep(lower);
      cands.emplace(kept, kept);
    }
  }

  // A URL of the evidence, after NormalUrl; with its fragment dropped too.
  void HitUrl(std::string_view url) {
    const std::string_view normal = NormalUrl(url);
    if (const size_t frag = normal.find('#'); frag != std::string_view::npos) {
      std::string_view bare = normal.substr(0, frag);
      while (!bare.empty() && (bare.back() == '/' || bare.back() == '.')) bare.remove_suffix(1);
      auto& pending = pending_[static_cast<size_t>(Space::kUrl)];
      pending.erase(bare);
    }
    Hit(Space::kUrl, normal, url);
  }

  // The spaces ScanOnePass does not cover: tags, paths, numbers, written dates.
  void ScanSpace(std::string_view text, Space space) {
    switch (space) {
      case Space::kTag: {
        auto& pending = pending_[static_cast<size_t>(space)];
        pending.erase_if([&](std::string_view tag) { return HasWholeTag(text, tag); });
        if (pending.empty()) return;
        const Repo& own = repo();
        ScanUrls(text, [&](std::string_view url) {
          auto link = ParseForgeLink(url);
          if (!link || link->repo != own.full) return;
          if (link->what == ForgeLink::What::kTag) Hit(space, link->a);
          if (link->what == ForgeLink::What::kCompare) {
            Hit(space, link->a);
            Hit(space, link->b);
          }
        });
        return;
      }
      case Space::kPath:
        return ScanPaths(text, [&](std::string_view t) { Hit(space, t); });
      case Space::kNumber:
        return ScanNumbers(text, [&](std::string_view t) { Hit(space, t); });
      case Space::kDateText:
        return ScanDateTexts(text, true,
                             [&](std::string_view t) { Hit(space, Normal(Kind::kDateText, t)); });
      default:
        return;
    }
  }

  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using KeySet = PendingKeys;
  const std::vector<std::string_view>& evidence_;
  std::vector<size_t> utf8_checked_;  // per text: a prefix the scan found well-formed UTF-8
  std::optional<Repo> repo_;
  bool inferred_ = false;
  std::set<size_t> lengths_;
  std::set<std::string> seen_repos_;                             // forge links' repositories
  std::vector<std::pair<std::string, std::string>> forge_refs_;  // (repository, N)
  std::vector<std::string> qualified_refs_;                      // `name#N` before the repo
  KeySet pending_[static_cast<size_t>(Space::kCount)];
  // Each candidate's key and raw spelling, kept in kept_. String views hashed as the strings
  // were: the same iteration order (Nearest's ties between hashes depend on it).
  std::unordered_map<std::string_view, std::string_view, ViewHash>
      candidates_[static_cast<size_t>(Space::kCount)];
  KeptBytes kept_;
  // (DayNumber, key) of each date candidate, built by the first Nearest of a date (after Run,
  // when the candidates no longer change).
  mutable std::optional<std::vector<std::pair<long, std::string_view>>> date_days_;
};

// What the evidence must hold for one claim token of `kind`, appended to `out`: a key that is a
// slice of the token views it, a key made from it is kept in `kept`.
void NeedsOf(Kind kind, std::string_view token, Matcher& matcher, KeptBytes& kept,
             std::vector<Need>& out) {
  auto slice = [&](Space space, std::string_view key) { out.push_back({space, key}); };
  auto made = [&](Space space, std::string_view key) { out.push_back({space, kept.Keep(key)}); };
  switch (kind) {
    case Kind::kDate:
      return slice(Space::kDate, token);
    case Kind::kRef: {
      const size_t hash = token.find('#');
      const bool qualified = hash != std::string_view::npos && hash > 0;
      return made(Space::kRef, RefKey(token, qualified ? matcher.repo() : Repo{}));
    }
    case Kind::kHash:
      return made(Space::kHash, LowerText(token));
    case Kind::kUrl: {
      auto link = ParseForgeLink(token);
      if (link && link->what != ForgeLink::What::kOther && link->repo == matcher.repo().full) {
        auto end = [&](const std::string& e) {
          if (IsHashText(e) && !AllDigits(e)) return made(Space::kHash, LowerText(e));
          made(Space::kTag, e);
        };
        switch (link->what) {
          case ForgeLink::What::kRef:
            return made(Space::kRef, "#" + link->a);
          case ForgeLink::What::kCommit:
            return made(Space::kHash, link->a);
          case ForgeLink::What::kCompare:
            end(link->a);
            return end(link->b);
          case ForgeLink::What::kTag:
            return made(Space::kTag, link->a);
          case ForgeLink::What::kOther:
            break;
        }
      }
      return slice(Space::kUrl, NormalUrl(token));
    }
    case Kind::kPath:
      return slice(Space::kPath, token);
    case Kind::kNumber:
      return slice(Space::kNumber, token);
    case Kind::kDateText:
      return made(Space::kDateText, Normal(kind, token));
    case Kind::kUnknown:
      break;
  }
}

// Line and column (1-based; columns count characters) of byte offsets in one text.
// Line and column (1-based, columns in characters) of an offset of `text`, or with `origin`
// (FoldedText::origin) of an offset of the folded text, counted in the original `text`.
class Positions {
 public:
  explicit Positions(std::string_view text, const std::vector<size_t>* origin = nullptr)
      : text_(text), origin_(origin) {
    starts_.push_back(0);
    for (size_t k = text.find('\n'); k != std::string_view::npos; k = text.find('\n', k + 1)) {
      starts_.push_back(k + 1);
    }
  }
  std::pair<size_t, size_t> At(size_t offset) const {
    if (origin_ != nullptr) offset = (*origin_)[offset];
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), offset) - 1;
    size_t column = 1;
    for (size_t k = *it; k < offset; k += CharLen(text_, k)) ++column;
    return {static_cast<size_t>(it - starts_.begin()) + 1, column};
  }

 private:
  std::string_view text_;
  const std::vector<size_t>* origin_;
  std::vector<size_t> starts_;
};

// --- link text against link target ---------------------------------------------------------

// Whether a link's text names something other than its forge target: a ref in the text whose
// number (or repository) differs from pull/N or issues/N, a hash in the text that is no prefix
// of commit/H (nor H of it), a version in the text other than the tag of releases/tag/T or the
// upper end of compare/A...B (a leading 'v' aside). Text naming nothing of the kind is no
// finding.
bool LinkTextMismatch(std::string_view text, std::string_view url) {
  auto link = ParseForgeLink(url);
  if (!link) return false;
  switch (link->what) {
    case ForgeLink::What::kRef: {
      bool any = false, same = false;
      ScanRefs(text, [&](std::string_view t) {
        const std::string key = RefKey(t, MakeRepo(link->repo));
        const size_t hash = key.find('#');
        if (hash == std::string::npos) return;  // a Jira ref names another tracker
        any = true;
        same = same || (hash == 0 && key.substr(1) == link->a);
      });
      return any && !same;
    }
    case ForgeLink::What::kCommit: {
      bool any = false, same = false;
      for (size_t i = 0; i < text.size();) {
        size_t j = i;
        while (j < text.size() && IsAsciiAlnum(text[j])) ++j;
        const std::string word = LowerText(text.substr(i, j - i));
        if (IsHashText(word) && !WordBefore(text, i) && !WordAt(text, j)) {
          any = true;
          same = same || link->a.rfind(word, 0) == 0 || word.rfind(link->a, 0) == 0;
        }
        i = j == i ? i + 1 : j;
      }
      return any && !same;
    }
    case ForgeLink::What::kTag:
    case ForgeLink::What::kCompare: {
      const std::string& tag = link->what == ForgeLink::What::kTag ? link->a : link->b;
      std::string_view bare_tag = tag;
      if (!bare_tag.empty() && (bare_tag[0] == 'v' || bare_tag[0] == 'V'))
        bare_tag.remove_prefix(1);
      std::string_view t = TrimSpaces(text);
      if (t == tag) return false;
      bool any = false, same = false;
      for (size_t i = 0; i < t.size();) {
        size_t j = i;
        while (j < t.size() && (IsAsciiAlnum(t[j]) || In(t[j], ".-+_"))) ++j;
        std::string_view word = t.substr(i, j - i);
        while (!word.empty() && In(word.back(), ".-+_")) word.remove_suffix(1);
        std::string_view bare = word;
        if (!bare.empty() && (bare[0] == 'v' || bare[0] == 'V')) bare.remove_prefix(1);
        if (bare.size() >= 3 && IsDigit(bare[0]) && bare.find('.') != std::string_view::npos) {
          any = true;
          same = same || bare == bare_tag;
        }
        i = j == i ? i + 1 : j;
      }
      return any && !same;
    }
    case ForgeLink::What::kOther:
      return false;
  }
  return false;
}

// Every Markdown link `[text](url)` and reference definition `[text]: url` of the claim whose
// text and target name different things, in text order.
std::vector<LinkFinding> MismatchedLinks(std::string_view s, const Positions& positions) {
  std::vector<LinkFinding> out;
  for (size_t open = s.find('['); open != std::string_view::npos; open = s.find('[', open + 1)) {
    const size_t close = s.find_first_of("[]\n", open + 1);
    if (close == std::string_view::npos || s[close] != ']') continue;
    const std::string_view text = s.substr(open + 1, close - open - 1);
    size_t u = close + 1;
    if (u < s.size() && s[u] == '(') {
      ++u;
    } else if (u < s.size() && s[u] == ':' && (open == 0 || s[open - 1] == '\n')) {
      ++u;
      while (u < s.size() && (s[u] == ' ' || s[u] == '\t')) ++u;
    } else {
      continue;
    }
    size_t e = u;
    while (e < s.size() && !In(s[e], " \t\n)>\"")) ++e;
    const std::string_view url = s.substr(u, e - u);
    if (LinkTextMismatch(text, url)) {
      const auto [line, column] = positions.At(open);
      const bool inline_link = s[close + 1] == '(';
      out.push_back({std::string(text), std::string(url), inline_link, line, column});
    }
  }
  return out;
}

}  // namespace

const std::vector<std::string>& AllTokenKinds() {
  static const std::vector<std::string> kinds = {"date", "url",    "ref",      "hash",
                                                 "path", "number", "date-text"};
  return kinds;
}

const std::vector<std::string>& DefaultTokenKinds() {
  static const std::vector<std::string> kinds = {"date", "url", "ref", "hash"};
  return kinds;
}

Result<std::vector<std::string>> ParseTokenKinds(std::string_view csv) {
  std::vector<std::string> kinds;
  size_t pos = 0;
  while (pos <= csv.size()) {
    const size_t comma = std::min(csv.find(',', pos), csv.size());
    const std::string_view name = TrimSpaces(csv.substr(pos, comma - pos));
    pos = comma + 1;
    if (name.empty()) continue;
    if (KindOf(name) == Kind::kUnknown) {
      return Status::Error("usage", "unknown token kind \"" + std::string(name) +
                                        "\"; use date, url, ref, hash, path, number or date-text");
    }
    if (std::find(kinds.begin(), kinds.end(), name) == kinds.end()) kinds.emplace_back(name);
  }
  if (kinds.empty()) {
    return Status::Error("usage",
                         "the token kind list is empty; name one or more of date, url, ref, "
                         "hash, path, number, date-text");
  }
  return kinds;
}

std::vector<std::string> ExtractTokens(std::string_view text, std::string_view kind,
                                       GroundingMode mode) {
  std::vector<std::string> tokens;
  Scan(text, KindOf(kind), mode, false,
       [&](std::string_view token) { tokens.emplace_back(token); });
  return tokens;
}

namespace {
void RunOnePass(std::string_view text, const OnePassSinks& to, OnePassScanner scanner) {
  switch (scanner) {
    case OnePassScanner::kSkipping:
      ScanOnePass(text, to);
      break;
    case OnePassScanner::kSkippingSse2:
      ScanOnePassSkipping<Skip::kSse2>(text, to);
      break;
    case OnePassScanner::kSkippingScalar:
      ScanOnePassSkipping<Skip::kScalar>(text, to);
      break;
    case OnePassScanner::kReference:
      ScanOnePassReference(text, to);
      break;
  }
}
}  // namespace

std::vector<OnePassEvent> OnePassEventsForTesting(std::string_view text, unsigned kinds,
                                                  bool evidence, OnePassScanner scanner) {
  std::vector<OnePassEvent> events;
  auto sink = [&](const char* kind) -> TokenSink {
    return [&events, text, kind](std::string_view token) {
      events.push_back({kind, std::string(token), static_cast<size_t>(token.data() - text.data())});
    };
  };
  const TokenSink date = sink("date"), url = sink("url"), ref = sink("ref"), hash = sink("hash");
  const KeySink form = [&events](std::string key) {
    events.push_back({"form", std::move(key), std::string_view::npos});
  };
  OnePassSinks to;
  to.bare = evidence;
  if (kinds & 1) to.date = &date;
  if (kinds & 2) to.url = &url;
  if (kinds & 4) to.ref = &ref;
  if (kinds & 8) to.hash = &hash;
  if (kinds & 16) to.form = &form;
  RunOnePass(text, to, scanner);
  return events;
}

size_t CountOnePassTokensForTesting(std::string_view text, OnePassScanner scanner) {
  size_t count = 0;
  const TokenSink token = [&count](std::string_view) { ++count; };
  const KeySink form = [&count](const std::string&) { ++count; };
  OnePassSinks to;
  to.bare = true;
  to.date = to.url = to.ref = to.hash = &token;
  to.form = &form;
  RunOnePass(text, to, scanner);
  return count;
}

std::array<std::vector<std::string>, 4> ExtractDefaultTokensOnePass(std::string_view text) {
  std::array<std::vector<std::string>, 4> tokens;
  auto into = [&tokens](size_t k) -> TokenSink {
    return [&tokens, k](std::string_view token) { tokens[k].emplace_back(token); };
  };
  const TokenSink date = into(0), url = into(1), ref = into(2), hash = into(3);
  OnePassSinks to;
  to.date = &date;
  to.url = &url;
  to.ref = &ref;
  to.hash = &hash;
  ScanOnePass(text, to);
  return tokens;
}

namespace {

// A bidi control at s[i] (BidiFinding's code points): its length, the code point in *cp; or 0.
// UTF-8: U+061C is D8 9C, U+200E/F E2 80 8E/8F, U+202A–E E2 80 AA–AE, U+2066–9 E2 81 A6–A9.
size_t BidiControlAt(std::string_view s, size_t i, char32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (b(0) == 0xD8 && i + 1 < s.size() && b(1) == 0x9C) {
    *cp = 0x061C;
    return 2;
  }
  if (b(0) != 0xE2 || i + 2 >= s.size()) return 0;
  const unsigned c = b(2);
  if (b(1) == 0x80 && (c == 0x8E || c == 0x8F || (c >= 0xAA && c <= 0xAE))) {
    *cp = 0x2000 + (c - 0x80);
    return 3;
  }
  if (b(1) == 0x81 && c >= 0xA6 && c <= 0xA9) {
    *cp = 0x2040 + (c - 0x80);
    return 3;
  }
  return 0;
}

// `U+202E RIGHT-TO-LEFT OVERRIDE`: a bidi control named as the verdict scan names one (not as
// a `\u202e` escape, which that scan refuses in a verdict block, escaped backslash or not).
std::string BidiControlName(char32_t cp) {
  static constexpr const char* kNames[] = {
      "LEFT-TO-RIGHT EMBEDDING", "RIGHT-TO-LEFT EMBEDDING", "POP DIRECTIONAL FORMATTING",
      "LEFT-TO-RIGHT OVERRIDE",  "RIGHT-TO-LEFT OVERRIDE",  "LEFT-TO-RIGHT ISOLATE",
      "RIGHT-TO-LEFT ISOLATE",   "FIRST STRONG ISOLATE",    "POP DIRECTIONAL ISOLATE"};
  const char* name = cp == 0x061C   ? "ARABIC LETTER MARK"
                     : cp == 0x200E ? "LEFT-TO-RIGHT MARK"
                     : cp == 0x200F ? "RIGHT-TO-LEFT MARK"
                     : cp <= 0x202E ? kNames[cp - 0x202A]
                                    : kNames[5 + (cp - 0x2066)];
  char hex[16];
  std::snprintf(hex, sizeof hex, "U+%04X ", static_cast<unsigned>(cp));
  return hex + std::string(name);
}

// The claim's bidi controls, written as is (in `written`) or made by a character reference (in
// `rendered`, whose bytes come from `origin`'s offsets of `written`), by code point.
std::vector<BidiFinding> FindBidiControls(std::string_view written, std::string_view rendered,
                                          const std::vector<size_t>& origin) {
  std::vector<BidiFinding> found;
  std::vector<size_t> first;  // per finding, the offset of its first occurrence
  auto add = [&](char32_t cp, size_t offset) {
    const auto it = std::find_if(found.begin(), found.end(),
                                 [&](const BidiFinding& f) { return f.code_point == cp; });
    if (it == found.end()) {
      found.push_back({cp, 0, 0, 1});
      first.push_back(offset);
    } else {
      ++it->count;
      size_t& at = first[static_cast<size_t>(it - found.begin())];
      at = std::min(at, offset);
    }
  };
  auto scan = [&](std::string_view s, bool made_only) {
    for (const char lead : {'\xD8', '\xE2'}) {  // each control's first byte, found by memchr
      const char* const begin = s.data();
      const char* const end = begin + s.size();
      for (const char* p = begin; p < end;) {
        p = static_cast<const char*>(std::memchr(p, lead, static_cast<size_t>(end - p)));
        if (p == nullptr) break;
        const size_t i = static_cast<size_t>(p - begin);
        char32_t cp = 0;
        ++p;
        if (BidiControlAt(s, i, &cp) == 0) continue;
        if (!made_only) {
          add(cp, i);
        } else if (written[origin[i]] == '&') {  // a character reference (a raw one counted above)
          add(cp, origin[i]);
        }
      }
    }
  };
  scan(written, false);
  if (!rendered.empty()) scan(rendered, true);
  if (!found.empty()) {  // positions last: one column count per code point, not per occurrence
    const Positions positions(written);
    for (size_t k = 0; k < found.size(); ++k) {
      std::tie(found[k].line, found[k].column) = positions.At(first[k]);
    }
  }
  return found;
}

// A text's rendered view (checker/markup_text.h) read through the look-alike fold, with the
// offset in the text as written of each byte; false (and `out` untouched) when the rendering
// changes nothing. `unfolded` keeps the rendered text before the fold (bidi controls and all).
struct RenderedView {
  RenderedText unfolded;
  std::string text;
  std::vector<size_t> origin;
};

bool RenderAndFold(std::string_view written, RenderedView* out, bool want_origin) {
  if (!MayHoldMarkup(written) || !RenderMarkupText(written, &out->unfolded)) return false;
  FoldedText folded;
  if (FoldLookAlikes(out->unfolded.text, &folded, want_origin)) {
    out->text = std::move(folded.text);
    if (want_origin) {
      out->origin.resize(folded.origin.size());
      for (size_t k = 0; k < folded.origin.size(); ++k) {
        out->origin[k] = out->unfolded.origin[folded.origin[k]];
      }
    }
  } else {
    out->text = out->unfolded.text;
    if (want_origin) out->origin = out->unfolded.origin;
  }
  return true;
}

}  // namespace

GroundingResult Ground(std::string_view claim_as_written,
                       const std::vector<std::string_view>& evidence_as_written,
                       const std::vector<std::string>& kinds, GroundingMode mode,
                       std::string_view repo) {
  GroundingResult result;
  std::string_view claim = claim_as_written;
  const std::vector<std::string_view>* evidence_read = &evidence_as_written;
  std::vector<std::string> done;
  if (mode == GroundingMode::kCompat) {  // release_gate.py reads the text as written
    const std::vector<std::string_view>& evidence = evidence_as_written;
    for (const std::string& name : kinds) {
      const Kind kind = KindOf(name);
      if (kind == Kind::kUnknown) continue;
      if (std::find(done.begin(), done.end(), name) != done.end()) continue;
      done.push_back(name);
      std::set<std::string> tokens;  // sorted bytewise
      Scan(claim, kind, mode, false, [&](std::string_view token) { tokens.emplace(token); });
      result.checked += tokens.size();
      if (tokens.empty()) continue;
      if (kind == Kind::kDateText) {  // no release_gate.py counterpart: compared as dates
        std::unordered_set<std::string> pending;
        for (const std::string& token : tokens) pending.insert(Normal(kind, token));
        for (std::string_view text : evidence) {
          ScanDateTexts(text, true, [&](std::string_view t) { pending.erase(Normal(kind, t)); });
        }
        for (const std::string& token : tokens) {
          if (pending.contains(Normal(kind, token)))
            result.ungrounded.push_back({.kind = name, .token = token});
        }
        continue;
      }
      // release_gate.py: `token in evidence`, a substring search per token.
      for (const std::string& token : tokens) {
        const bool found = std::any_of(evidence.begin(), evidence.end(), [&](std::string_view t) {
          return t.find(token) != std::string_view::npos;
        });
        if (!found) result.ungrounded.push_back({.kind = name, .token = token});
      }
    }
    result.grounded = result.ungrounded.empty();
    return result;
  }

  // Strict: the claim and the evidence are read through the look-alike fold (host/lookalike.h;
  // docs/grounding.md, "Look-alikes"), so `REQ‑7` (U+2011) is the ref REQ-7 on both sides: a
  // token a person reads as REQ-7 is checked as REQ-7, and a text still grounds itself. A text
  // the fold leaves alone (all ASCII, or no look-alike) is read in place; findings name the
  // folded token at its position in the claim as written.
  FoldedText folded_claim;
  const bool claim_folded = FoldLookAlikes(claim_as_written, &folded_claim, true);
  if (claim_folded) claim = folded_claim.text;
  // The claim as a Markdown/HTML reader sees it (checker/markup_text.h), folded alike: its
  // tokens are checked too, so markup cannot hide a ref a reader sees (`REQ<!-- -->-7`).
  RenderedView rendered;
  const bool claim_rendered = RenderAndFold(claim_as_written, &rendered, true);
  const std::string_view render_view = claim_rendered ? std::string_view(rendered.text) : "";
  auto in_render_view = [&](std::string_view token) {
    return claim_rendered && token.data() >= render_view.data() &&
           token.data() < render_view.data() + render_view.size();
  };
  // A bidi control may show the claim in another order than its bytes: not checkable.
  result.bidi =
      FindBidiControls(claim_as_written, rendered.unfolded.text, rendered.unfolded.origin);
  std::vector<std::string_view> folded_views;
  std::vector<std::string> folded_texts;
  std::vector<bool> text_folded(evidence_as_written.size(), false);
  for (size_t t = 0; t < evidence_as_written.size(); ++t) {
    FoldedText folded;
    if (!FoldLookAlikes(evidence_as_written[t], &folded, false)) continue;
    if (folded_texts.empty()) {  // the views must not move once taken
      folded_texts.reserve(evidence_as_written.size());
      folded_views = evidence_as_written;
      evidence_read = &folded_views;
    }
    folded_texts.push_back(std::move(folded.text));
    folded_views[t] = folded_texts.back();
    text_folded[t] = true;
  }
  const std::vector<std::string_view>& evidence = *evidence_read;

  // Strict: every claim token's needs, then one pass per comparison space over the evidence.
  // A token is a slice of the claim (no copy); its needs are a run of one flat list, their
  // keys slices of the claim or kept in `keys` (no allocation per token).
  struct Token {
    const std::string* kind;
    std::string_view text;
    uint32_t first_need, needs;  // in `needs`
  };
  Matcher matcher(evidence, repo);
  // Each kind's tokens as slices of the claim, in the order found; then sorted bytewise with
  // the first occurrence of each kept (what a map's try_emplace kept before, without a node
  // and a copy per token).
  using Found = std::vector<std::string_view>;
  auto distinct = [](Found& found) {
    std::stable_sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
  };
  // The claim's dates, URLs, refs and hashes in one pass (the same tokens as each kind's scan).
  std::array<Found, 4> one_pass;  // date, url, ref, hash
  {
    auto sink = [](Found& found) {
      return [&found](std::string_view token) { found.push_back(token); };
    };
    const TokenSink date = sink(one_pass[0]), url = sink(one_pass[1]), ref = sink(one_pass[2]),
                    hash = sink(one_pass[3]);
    OnePassSinks to;
    for (const std::string& name : kinds) {
      const Kind kind = KindOf(name);
      if (kind == Kind::kDate) to.date = &date;
      if (kind == Kind::kUrl) to.url = &url;
      if (kind == Kind::kRef) to.ref = &ref;
      if (kind == Kind::kHash) to.hash = &hash;
    }
    if (to.date || to.url || to.ref || to.hash) {
      ScanOnePass(claim, to);
      if (claim_rendered) ScanOnePass(render_view, to);  // after: a written token comes first
    }
  }
  std::vector<Token> tokens;
  std::vector<Need> needs;
  KeptBytes keys;
  {
    std::vector<std::pair<const std::string*, Found>> per_kind;  // in the order requested
    for (const std::string& name : kinds) {
      const Kind kind = KindOf(name);
      if (kind == Kind::kUnknown) continue;
      if (std::find(done.begin(), done.end(), name) != done.end()) continue;
      done.push_back(name);
      Found found;
      if (kind == Kind::kDate || kind == Kind::kUrl || kind == Kind::kRef || kind == Kind::kHash) {
        found = std::move(one_pass[static_cast<size_t>(kind)]);
      } else {
        Scan(claim, kind, mode, false, [&](std::string_view token) { found.push_back(token); });
        if (claim_rendered) {
          Scan(render_view, kind, mode, false,
               [&](std::string_view token) { found.push_back(token); });
        }
      }
      distinct(found);  // a token of both views is kept as the written view's
      result.checked += found.size();
      per_kind.emplace_back(&name, std::move(found));
    }
    tokens.reserve(result.checked);
    needs.reserve(result.checked);  // one need a token but for a compare link's two
    for (const auto& [name, found] : per_kind) {
      const Kind kind = KindOf(*name);
      for (std::string_view text : found) {
        const size_t first = needs.size();
        NeedsOf(kind, text, matcher, keys, needs);
        tokens.push_back({name, text, static_cast<uint32_t>(first),
                          static_cast<uint32_t>(needs.size() - first)});
      }
    }
  }                                                   // the per-kind lists are done with
  for (const Need& need : needs) matcher.Want(need);  // the set views the keys, which stay put
  matcher.Run();
  result.utf8_checked = matcher.utf8_checked();
  for (size_t t = 0; t < text_folded.size() && t < result.utf8_checked.size(); ++t) {
    if (text_folded[t]) result.utf8_checked[t] = 0;  // the scan read a folded copy
  }
  // A token only the claim's rendered view holds, not in the evidence as written, is looked up
  // in the evidence's rendered view too (a claim copied from its evidence, `REQ&#8209;7` and
  // all, grounds); only then is the evidence rendered, so a claim without one costs nothing.
  std::optional<Matcher> rendered_matcher;
  std::vector<RenderedView> rendered_evidence;
  std::vector<std::string_view> rendered_views;         // the matcher holds a reference
  std::vector<bool> looked_again(needs.size(), false);  // needs the rendered matcher wants
  {
    std::vector<const Need*> missing;
    for (const Token& token : tokens) {
      if (!in_render_view(token.text)) continue;
      for (uint32_t k = token.first_need; k < token.first_need + token.needs; ++k) {
        if (!matcher.Found(needs[k])) missing.push_back(&needs[k]), looked_again[k] = true;
      }
    }
    if (!missing.empty()) {
      std::vector<std::string_view>& views = rendered_views;
      rendered_evidence.reserve(evidence_as_written.size());  // the views must not move
      for (std::string_view text : evidence_as_written) {
        rendered_evidence.emplace_back();
        if (RenderAndFold(text, &rendered_evidence.back(), false)) {
          views.push_back(rendered_evidence.back().text);
        }
      }
      if (!views.empty()) {
        rendered_matcher.emplace(views, matcher.repo().full);
        for (const Need* need : missing) rendered_matcher->Want(*need);
        rendered_matcher->Run();
      }
    }
  }
  // The rendered matcher answers only for what it was asked: a key it never wanted is not
  // pending there, which would read as found.
  auto found = [&](uint32_t k) {
    return matcher.Found(needs[k]) ||
           (looked_again[k] && rendered_matcher && rendered_matcher->Found(needs[k]));
  };
  const Positions positions(claim_as_written, claim_folded ? &folded_claim.origin : nullptr);
  const Positions written(claim_as_written);
  for (const Token& token : tokens) {
    for (uint32_t k = token.first_need; k < token.first_need + token.needs; ++k) {
      const Need& need = needs[k];
      if (found(k)) continue;
      const auto [line, column] =
          in_render_view(token.text)
              ? written.At(
                    rendered.origin[static_cast<size_t>(token.text.data() - render_view.data())])
              : positions.At(static_cast<size_t>(token.text.data() - claim.data()));
      result.ungrounded.push_back(
          {*token.kind, std::string(token.text), line, column, matcher.Nearest(need)});
      break;
    }
  }
  if (std::find(done.begin(), done.end(), "url") != done.end()) {
    result.links = MismatchedLinks(claim, positions);
  }
  result.grounded = result.ungrounded.empty() && result.links.empty() && result.bidi.empty();
  return result;
}

std::vector<std::string> GroundingReasons(const GroundingResult& result) {
  std::vector<std::string> reasons;
  reasons.reserve(result.bidi.size() + result.ungrounded.size() + result.links.size());
  for (const BidiFinding& b : result.bidi) {
    reasons.push_back("bidi control " + BidiControlName(b.code_point) + " in the claim (line " +
                      std::to_string(b.line) + ":" + std::to_string(b.column) + ", " +
                      std::to_string(b.count) +
                      " in all): a reader may see the text in another order than it is written, "
                      "so its specifics cannot be checked; remove it");
  }
  for (const UngroundedToken& u : result.ungrounded) {
    std::string reason = u.kind + " not in evidence: " + u.token;
    if (u.line > 0) {
      reason += " (line " + std::to_string(u.line) + ":" + std::to_string(u.column);
      if (!u.nearest.empty()) reason += "; evidence has " + u.nearest;
      reason += ")";
    }
    reasons.push_back(std::move(reason));
  }
  for (const LinkFinding& link : result.links) {
    reasons.push_back("link text does not match its target: [" + link.text + "]" +
                      (link.inline_link ? "(" + link.url + ")" : ": " + link.url) + " (line " +
                      std::to_string(link.line) + ":" + std::to_string(link.column) + ")");
  }
  return reasons;
}

bool IsBlankClaim(std::string_view claim) {
  for (size_t i = 0; i < claim.size();) {
    uint32_t cp = 0;
    const size_t len = Decode(claim, i, &cp);
    if (!IsSpaceCp(cp)) return false;
    i += len;
  }
  return true;
}

Status CheckRequirePatterns(const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    std::unique_ptr<RE2> re = CompileRequire(pattern);
    if (!re->ok()) {
      return Status::Error("usage", "bad --require regex " + PyRepr(pattern) + ": " + re->error());
    }
  }
  return Status::Ok();
}

Status CheckRepoName(std::string_view repo) {
  const size_t slash = repo.find('/');
  auto part_ok = [](std::string_view p) {
    return !p.empty() &&
           std::all_of(p.begin(), p.end(), [](char c) { return IsAsciiAlnum(c) || In(c, ".-_"); });
  };
  if (slash == std::string_view::npos || !part_ok(repo.substr(0, slash)) ||
      !part_ok(repo.substr(slash + 1))) {
    return Status::Error(
        "usage", "bad --repo " + PyRepr(repo) + ": want owner/name, as in github.com/owner/name");
  }
  return Status::Ok();
}

std::vector<std::string> RequireReasons(std::string_view claim,
                                        const std::vector<std::string>& patterns) {
  std::vector<std::string> reasons;
  for (const std::string& pattern : patterns) {
    std::unique_ptr<RE2> re = CompileRequire(pattern);
    if (!re->ok() || !RE2::PartialMatch(claim, *re)) {
      reasons.push_back("required pattern absent: " + pattern);
    }
  }
  return reasons;
}

std::vector<std::string> VerifyClaim(std::string_view claim,
                                     const std::vector<std::string_view>& evidence,
                                     const GroundingOptions& options,
                                     std::vector<size_t>* utf8_checked) {
  if (utf8_checked) utf8_checked->assign(evidence.size(), 0);
  if (IsBlankClaim(claim)) return {"empty claim"};
  const GroundingMode mode = options.compat ? GroundingMode::kCompat : GroundingMode::kStrict;
  GroundingResult result = Ground(claim, evidence, options.kinds, mode, options.repo);
  if (utf8_checked && result.utf8_checked.size() == evidence.size()) {
    *utf8_checked = std::move(result.utf8_checked);
  }
  std::vector<std::string> reasons = GroundingReasons(result);
  for (std::string& reason : RequireReasons(claim, options.require)) {
    reasons.push_back(std::move(reason));
  }
  return reasons;
}

std::string_view StripBom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

Status CheckUtf8(std::string_view text, std::string_view label, size_t checked) {
  checked = std::min(checked, text.size());
  // End first: a text's first MiBs stay cached for a pass that follows. Past `checked` only:
  // a character starts there and every byte before it is well-formed, so the first ill-formed
  // offset is the same.
  const size_t bad = checked + FirstInvalidUtf8EndFirst(text.substr(checked));
  if (bad == text.size()) return Status::Ok();
  char buf[96];
  std::snprintf(buf, sizeof buf, ": not valid UTF-8 (byte 0x%02x at offset %zu)",
                static_cast<unsigned char>(text[bad]), bad);
  return Status::Error("corrupt", std::string(label) + buf);
}

const std::vector<std::string>& DefaultExcludedKeys() {
  static const std::vector<std::string> keys = {"system_prompt", "policy", "seed", "history",
                                                "constitution"};
  return keys;
}

namespace {

// Both evidence readers: BOM tolerated, depth bounded (the compat dump recurses; a 100k-deep
// file would overflow the stack), unparsable text is corrupt evidence, never raw text.
template <class Json>
Result<Json> ParseEvidenceJson(std::string_view json, std::string_view label) {
  if (JsonNestingDepth(json) > kMaxJsonDepth) {
    return Status::Error("corrupt", "evidence " + std::string(label) + " nests deeper than " +
                                        std::to_string(kMaxJsonDepth) +
                                        " levels; flatten it or pass it as text");
  }
  try {
    return Json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    return Status::Error("corrupt", "evidence " + std::string(label) + " is not valid JSON: " +
                                        e.what() + "; fix the file or pass it as text");
  }
}

}  // namespace

Result<std::string> JsonEvidenceText(std::string_view json, std::string_view label,
                                     const std::vector<std::string>& extra_excluded_keys) {
  Result<nlohmann::json> parsed = ParseEvidenceJson<nlohmann::json>(StripBom(json), label);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& doc = *parsed;
  std::unordered_set<std::string> excluded(DefaultExcludedKeys().begin(),
                                           DefaultExcludedKeys().end());
  excluded.insert(extra_excluded_keys.begin(), extra_excluded_keys.end());

  // An explicit stack: evidence nesting depth must not become C++ recursion depth.
  std::string text;
  std::vector<const nlohmann::json*> pending = {&doc};
  while (!pending.empty()) {
    const nlohmann::json* value = pending.back();
    pending.pop_back();
    if (value->is_object()) {
      for (auto it = value->begin(); it != value->end(); ++it) {
        if (!excluded.contains(it.key())) pending.push_back(&it.value());
      }
    } else if (value->is_array()) {
      for (const auto& item : *value) pending.push_back(&item);
    } else if (value->is_string()) {
      text.append(value->get_ref<const std::string&>()).push_back('\n');
    } else if (value->is_number()) {
      text.append(value->dump()).push_back('\n');
    }
  }
  return text;
}

namespace {

// Python's json.dumps(value, ensure_ascii=False): ", " and ": " separators, keys in order.
void DumpPython(const nlohmann::ordered_json& value, std::string& out) {
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!first) out += ", ";
      first = false;
      out += nlohmann::ordered_json(it.key()).dump();
      out += ": ";
      DumpPython(it.value(), out);
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    for (size_t k = 0; k < value.size(); ++k) {
      if (k > 0) out += ", ";
      DumpPython(value[k], out);
    }
    out += ']';
  } else if (value.is_boolean()) {
    out += value.get<bool>() ? "true" : "false";
  } else if (value.is_null()) {
    out += "null";
  } else {
    out += value.dump();
  }
}

}  // namespace

Result<std::string> CompatJsonEvidenceText(std::string_view json, std::string_view label,
                                           const std::vector<std::string>& extra_excluded_keys) {
  json = StripBom(json);
  Result<nlohmann::ordered_json> parsed = ParseEvidenceJson<nlohmann::ordered_json>(json, label);
  if (!parsed.ok()) return parsed.status();
  nlohmann::ordered_json& doc = *parsed;
  if (!doc.is_object()) return std::string(json);
  std::unordered_set<std::string> excluded(DefaultExcludedKeys().begin(),
                                           DefaultExcludedKeys().end());
  excluded.insert(extra_excluded_keys.begin(), extra_excluded_keys.end());
  nlohmann::ordered_json kept = nlohmann::ordered_json::object();
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!excluded.contains(it.key())) kept[it.key()] = std::move(it.value());
  }
  std::string text;
  DumpPython(kept, text);
  return text;
}

Result<std::string> LoadEvidence(FileSystem& fs, const std::string& path,
                                 const std::vector<std::string>& extra_excluded_keys,
                                 GroundingMode mode) {
  Result<std::string> content = fs.ReadFile(path);
  if (!content.ok()) return content.status();
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), Lower);
  if (lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".json") == 0) {
    return mode == GroundingMode::kCompat
               ? CompatJsonEvidenceText(*content, path, extra_excluded_keys)
               : JsonEvidenceText(*content, path, extra_excluded_keys);
  }
  if (StripBom(*content).size() != content->size()) return std::string(StripBom(*content));
  return content;
}

}  // namespace devflow

// The grounding core: token scanners (one linear pass each) and whole-token set lookup, plus
// release_gate.py's own regexes and substring search for --compat.
#include "checker/grounding.h"
#include "host/json_depth.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>

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

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLetter(char c) { return IsUpper(c) || (c >= 'a' && c <= 'z'); }
bool IsAsciiAlnum(char c) { return IsDigit(c) || IsLetter(c); }
bool IsAsciiWord(char c) { return IsAsciiAlnum(c) || c == '_'; }
bool IsHexLetter(char c) { return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsHex(char c) { return IsDigit(c) || IsHexLetter(c); }
bool IsPathChar(char c) {
  return IsAsciiAlnum(c) || c == '_' || c == '.' || c == '~' || c == '/' || c == '-';
}
bool In(char c, std::string_view set) { return set.find(c) != std::string_view::npos; }

char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

// --- Code points: Python's \w and \s in Unicode mode, approximated by blocks -------------

constexpr uint32_t kInvalid = 0xFFFFFFFF;

// Decodes the UTF-8 sequence at `i` into `cp` (kInvalid for a malformed byte, which then
// stands alone); returns its length in bytes (>= 1).
size_t Decode(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  size_t len = 0;
  uint32_t value = 0;
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
    value = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    value = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    value = b & 0x07;
  } else {
    *cp = kInvalid;
    return 1;
  }
  if (i + len > s.size()) {
    *cp = kInvalid;
    return 1;
  }
  for (size_t k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) {
      *cp = kInvalid;
      return 1;
    }
    value = (value << 6) | (c & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kMin[len] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
    *cp = kInvalid;
    return 1;
  }
  *cp = value;
  return len;
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

void ScanDates(std::string_view s, const TokenSink& sink) {
  constexpr std::string_view kShape = "dddd-dd-dd";
  size_t i = 0;
  while (i + kShape.size() <= s.size()) {
    bool match = IsDigit(s[i]) && !WordBefore(s, i);
    for (size_t k = 0; match && k < kShape.size(); ++k) {
      match = kShape[k] == 'd' ? IsDigit(s[i + k]) : s[i + k] == '-';
    }
    const size_t end = i + kShape.size();
    if (match && (end == s.size() || !IsDigit(s[end]))) {
      sink(s.substr(i, kShape.size()));
      i = end;
    } else {
      ++i;
    }
  }
}

void ScanUrls(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    size_t scheme = 0;
    if ((s[i] == 'h' || s[i] == 'H') && !WordBefore(s, i)) {
      if (StartsWithNoCase(s, i, "https://"))
        scheme = 8;
      else if (StartsWithNoCase(s, i, "http://"))
        scheme = 7;
    }
    if (scheme == 0) {
      ++i;
      continue;
    }
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
    i = j;
  }
}

// Standards and encodings written like tickets (UTF-8, SHA-256, ISO-8601, COVID-19).
bool IsStopPrefix(std::string_view prefix) {
  static constexpr std::array<std::string_view, 15> kStop = {
      "UTF", "UCS",  "SHA",  "SHA3", "CRC", "AES",     "RSA",  "ISO",
      "IEC", "IEEE", "ECMA", "ANSI", "CP",  "WINDOWS", "COVID"};
  return std::find(kStop.begin(), kStop.end(), prefix) != kStop.end();
}

void ScanRefs(std::string_view s, const TokenSink& sink) {
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    if (s[i] != '#' && !IsUpper(s[i])) {
      ++i;
      continue;
    }
    const bool boundary = !WordBefore(s, i);
    if (s[i] == '#' && boundary && (i == 0 || s[i - 1] != '&')) {
      size_t j = i + 1;
      while (j < n && IsDigit(s[j])) ++j;
      if (j > i + 1 && !WordAt(s, j)) sink(s.substr(i, j - i));
      i = std::max(j, i + 1);
      continue;
    }
    if (IsUpper(s[i]) && boundary && (i == 0 || s[i - 1] != '-')) {
      size_t j = i;
      while (j < n && (IsUpper(s[j]) || IsDigit(s[j]))) ++j;
      if (j - i >= 2 && j < n && s[j] == '-') {
        size_t k = j + 1;
        while (k < n && IsDigit(s[k])) ++k;
        if (k > j + 1 && !WordAt(s, k) && !IsStopPrefix(s.substr(i, j - i))) {
          sink(s.substr(i, k - i));
        }
        i = k;
        continue;
      }
      i = std::max(j, i + 1);
      continue;
    }
    ++i;
  }
}

void ScanHashes(std::string_view s, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    if (!WordAt(s, i)) {
      i += CharLen(s, i);
      continue;
    }
    size_t j = i;
    bool hex = true, digit = false, letter = false;
    while (j < s.size()) {
      const char c = s[j];
      if (static_cast<unsigned char>(c) < 0x80) {
        if (!IsAsciiWord(c)) break;
        digit = digit || IsDigit(c);
        letter = letter || IsHexLetter(c);
        hex = hex && IsHex(c);
        ++j;
      } else {
        if (!WordAt(s, j)) break;
        hex = false;
        j += CharLen(s, j);
      }
    }
    const size_t len = j - i;
    if (hex && digit && letter && len >= 7 && len <= 40) sink(s.substr(i, len));
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
// evidence side also counts ISO dates.
void ScanDateTexts(std::string_view s, bool iso, const TokenSink& sink) {
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (!IsAsciiAlnum(c) || WordBefore(s, i) || (i > 0 && s[i - 1] == '/')) {
      i += CharLen(s, i);
      continue;
    }
    if (auto match = MatchDateText(s, i, iso)) {
      sink(s.substr(i, match->first - i));
      i = match->first;
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

// Python's repr() of a str, for messages that quote a pattern as release_gate.py does.
std::string PyRepr(std::string_view text) {
  const bool dq =
      text.find('\'') != std::string_view::npos && text.find('"') == std::string_view::npos;
  const char quote = dq ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + quote;
}

std::unique_ptr<RE2> CompileRequire(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  return std::make_unique<RE2>(pattern, options);
}

// The claim tokens of one kind, by comparison form, and which of them the evidence holds.
struct Claimed {
  std::set<std::string> tokens;  // as written, sorted bytewise
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_set<std::string, Hash, std::equal_to<>> pending;  // comparison forms
};

// Marks the claim tokens of `kind` found as whole tokens in one evidence text.
void MarkWholeTokens(std::string_view text, Kind kind, Claimed& claimed) {
  Scan(text, kind, GroundingMode::kStrict, true, [&](std::string_view token) {
    if (claimed.pending.empty()) return;
    if (kind == Kind::kHash && token.size() <= 40) {
      char lower[40];
      for (size_t k = 0; k < token.size(); ++k) lower[k] = Lower(token[k]);
      if (auto it = claimed.pending.find(std::string_view(lower, token.size()));
          it != claimed.pending.end()) {
        claimed.pending.erase(it);
      }
    } else if (kind == Kind::kDateText) {
      if (auto it = claimed.pending.find(Normal(kind, token)); it != claimed.pending.end()) {
        claimed.pending.erase(it);
      }
    } else if (auto it = claimed.pending.find(token); it != claimed.pending.end()) {
      claimed.pending.erase(it);
    }
  });
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

GroundingResult Ground(std::string_view claim, const std::vector<std::string_view>& evidence,
                       const std::vector<std::string>& kinds, GroundingMode mode) {
  GroundingResult result;
  std::vector<std::string> done;
  for (const std::string& name : kinds) {
    const Kind kind = KindOf(name);
    if (kind == Kind::kUnknown) continue;
    if (std::find(done.begin(), done.end(), name) != done.end()) continue;
    done.push_back(name);

    Claimed claimed;
    Scan(claim, kind, mode, false, [&](std::string_view token) { claimed.tokens.emplace(token); });
    result.checked += claimed.tokens.size();
    if (claimed.tokens.empty()) continue;  // nothing to look up: skip reading the evidence

    if (mode == GroundingMode::kCompat && kind != Kind::kDateText) {
      // release_gate.py: `token in evidence`, a substring search per token.
      for (const std::string& token : claimed.tokens) {
        const bool found = std::any_of(evidence.begin(), evidence.end(), [&](std::string_view t) {
          return t.find(token) != std::string_view::npos;
        });
        if (!found) result.ungrounded.emplace_back(name, token);
      }
      continue;
    }
    for (const std::string& token : claimed.tokens) claimed.pending.insert(Normal(kind, token));
    for (std::string_view text : evidence) {
      if (claimed.pending.empty()) break;
      MarkWholeTokens(text, kind, claimed);
    }
    for (const std::string& token : claimed.tokens) {
      if (claimed.pending.contains(Normal(kind, token)))
        result.ungrounded.emplace_back(name, token);
    }
  }
  result.grounded = result.ungrounded.empty();
  return result;
}

std::vector<std::string> GroundingReasons(const GroundingResult& result) {
  std::vector<std::string> reasons;
  reasons.reserve(result.ungrounded.size());
  for (const auto& [kind, token] : result.ungrounded) {
    reasons.push_back(kind + " not in evidence: " + token);
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
                                     const GroundingOptions& options) {
  if (IsBlankClaim(claim)) return {"empty claim"};
  const GroundingMode mode = options.compat ? GroundingMode::kCompat : GroundingMode::kStrict;
  std::vector<std::string> reasons = GroundingReasons(Ground(claim, evidence, options.kinds, mode));
  for (std::string& reason : RequireReasons(claim, options.require)) {
    reasons.push_back(std::move(reason));
  }
  return reasons;
}

std::string_view StripBom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

Status CheckUtf8(std::string_view text, std::string_view label) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = Decode(text, i, &cp);
    if (cp == kInvalid) {
      char buf[96];
      std::snprintf(buf, sizeof buf, ": not valid UTF-8 (byte 0x%02x at offset %zu)",
                    static_cast<unsigned char>(text[i]), i);
      return Status::Error("corrupt", std::string(label) + buf);
    }
    i += len;
  }
  return Status::Ok();
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

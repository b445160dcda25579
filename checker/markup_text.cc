// The rendered view of a claim: comments and tags removed, character references decoded,
// Markdown markers dropped (checker/markup_text.h).
#include "checker/markup_text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "checker/html_entities_table.h"
#include "host/utf8.h"

namespace devflow {
namespace {

bool IsAsciiAlpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpaceByte(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsWordByte(char c) {
  return IsAsciiAlpha(c) || IsAsciiDigit(c) || static_cast<unsigned char>(c) >= 0x80;
}
bool IsAsciiPunct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// HTML5's numeric reference fix-ups for 0x80-0x9F (windows-1252), 0 where none.
constexpr std::array<char16_t, 32> kC1 = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

const html_entities::Entity* FindEntity(std::string_view name) {
  const auto* begin = std::begin(html_entities::kEntities);
  const auto* end = std::end(html_entities::kEntities);
  const auto* it = std::lower_bound(
      begin, end, name,
      [](const html_entities::Entity& e, std::string_view n) { return e.name < n; });
  return it != end && it->name == name ? it : nullptr;
}

// A character reference at s[i] == '&': its length and text, or 0.
size_t CharacterReference(std::string_view s, size_t i, std::string* text) {
  size_t j = i + 1;
  if (j < s.size() && s[j] == '#') {
    ++j;
    const bool hex = j < s.size() && (s[j] == 'x' || s[j] == 'X');
    if (hex) ++j;
    const size_t digits = j;
    uint32_t cp = 0;
    for (; j < s.size(); ++j) {
      const char c = s[j];
      uint32_t d;
      if (IsAsciiDigit(c)) {
        d = static_cast<uint32_t>(c - '0');
      } else if (hex && Lower(c) >= 'a' && Lower(c) <= 'f') {
        d = static_cast<uint32_t>(Lower(c) - 'a' + 10);
      } else {
        break;
      }
      cp = std::min<uint32_t>(cp * (hex ? 16 : 10) + d, 0x110000);  // saturates past U+10FFFF
    }
    if (j == digits) return 0;
    if (j < s.size() && s[j] == ';') ++j;
    if (cp >= 0x80 && cp <= 0x9F && kC1[cp - 0x80] != 0) cp = kC1[cp - 0x80];
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    text->clear();
    AppendUtf8(*text, cp);
    return j - i;
  }
  size_t end = j;
  while (end < s.size() && end - j < 32 && (IsAsciiAlpha(s[end]) || IsAsciiDigit(s[end]))) ++end;
  if (end == j) return 0;
  if (end < s.size() && s[end] == ';') {
    if (const auto* e = FindEntity(s.substr(j, end + 1 - j))) {
      *text = e->text;
      return end + 1 - i;
    }
  }
  for (size_t k = end; k > j; --k) {  // a legacy name without ';', longest first
    if (const auto* e = FindEntity(s.substr(j, k - j))) {
      *text = e->text;
      return k - i;
    }
  }
  return 0;
}

bool BreaksLine(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "article", "aside", "blockquote", "br",    "dd", "div",    "dl", "dt", "footer", "h1",
      "h2",      "h3",    "h4",         "h5",    "h6", "header", "hr", "li", "nav",    "ol",
      "p",       "pre",   "section",    "table", "td", "th",     "tr", "ul"};
  if (name.size() > 10) return false;
  char buf[10];
  for (size_t k = 0; k < name.size(); ++k) buf[k] = Lower(name[k]);
  const std::string_view lower(buf, name.size());
  return std::find(std::begin(kNames), std::end(kNames), lower) != std::end(kNames);
}

bool StartsWithNoCase(std::string_view s, size_t at, std::string_view prefix) {
  if (s.size() - at < prefix.size()) return false;
  for (size_t k = 0; k < prefix.size(); ++k) {
    if (Lower(s[at + k]) != prefix[k]) return false;
  }
  return true;
}

}  // namespace

bool MayHoldMarkup(std::string_view text) {
  // One memchr per byte (SIMD in libc) beats find_first_of's per-position loop on a long claim.
  for (const char c : {'<', '&', '*', '_', '`', '~', '\\'}) {
    if (std::memchr(text.data(), c, text.size()) != nullptr) return true;
  }
  return false;
}

bool RenderMarkupText(std::string_view s, RenderedText* out) {
  std::string text;
  std::vector<size_t> origin;
  text.reserve(s.size());
  origin.reserve(s.size() + 1);
  bool changed = false;
  // The next '>' and the next "-->" at or after a position, found once and reused, so text
  // full of '<' stays linear.
  size_t next_gt = 0, next_close = 0;
  bool no_gt = false, no_close = false;
  auto find_from = [&](size_t from, std::string_view what, size_t& cached, bool& none) {
    if (none) return std::string_view::npos;
    if (cached < from || cached == 0) {
      cached = s.find(what, from);
      if (cached == std::string_view::npos) none = true;
    }
    return cached;
  };
  auto emit = [&](char c, size_t at) {
    text += c;
    origin.push_back(at);
  };
  std::string decoded;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if ((c == 'h' || c == 'H') &&
        (StartsWithNoCase(s, i, "http://") || StartsWithNoCase(s, i, "https://"))) {
      size_t j = i;
      while (j < s.size() && !IsSpaceByte(s[j]) && s[j] != '<' && s[j] != '>' && s[j] != '"' &&
             s[j] != '`') {
        emit(s[j], j);
        ++j;
      }
      i = j;
      continue;
    }
    if (c == '<') {
      if (s.compare(i, 4, "<!--") == 0) {
        size_t end = std::string_view::npos;
        if (s.compare(i + 4, 1, ">") == 0) {
          end = i + 5;
        } else if (s.compare(i + 4, 2, "->") == 0) {
          end = i + 6;
        } else {
          const size_t close = find_from(i + 4, "-->", next_close, no_close);
          if (close != std::string_view::npos) end = close + 3;
        }
        if (end != std::string_view::npos) {
          i = end;
          changed = true;
          continue;
        }
      } else {
        size_t j = i + 1;
        const bool closing = j < s.size() && s[j] == '/';
        if (closing) ++j;
        const size_t name = j;
        if (j < s.size() && IsAsciiAlpha(s[j])) {
          while (j < s.size() && (IsAsciiAlpha(s[j]) || IsAsciiDigit(s[j]) || s[j] == '-')) ++j;
        }
        const bool tag =
            j > name && j < s.size() && (IsSpaceByte(s[j]) || s[j] == '/' || s[j] == '>');
        const bool other = !closing && j == name && j < s.size() && (s[j] == '!' || s[j] == '?');
        if (tag || other) {
          const size_t gt = find_from(j, ">", next_gt, no_gt);
          if (gt != std::string_view::npos) {
            if (tag && BreaksLine(s.substr(name, j - name))) emit('\n', i);
            i = gt + 1;
            changed = true;
            continue;
          }
        }
      }
    } else if (c == '&') {
      if (const size_t len = CharacterReference(s, i, &decoded)) {
        for (char d : decoded) emit(d, i);
        i += len;
        changed = true;
        continue;
      }
    } else if (c == '\\') {
      if (i + 1 < s.size() && IsAsciiPunct(s[i + 1])) {
        emit(s[i + 1], i + 1);
        i += 2;
        changed = true;
        continue;
      }
    } else if (c == '*' || c == '`' || c == '~' || c == '_') {
      size_t j = i;
      while (j < s.size() && s[j] == c) ++j;
      const bool edge_before = i == 0, edge_after = j == s.size();
      bool drop;
      if (c == '_') {
        drop = edge_before || edge_after || !IsWordByte(s[i - 1]) || !IsWordByte(s[j]);
      } else {
        const bool space_before = edge_before || IsSpaceByte(s[i - 1]);
        const bool space_after = edge_after || IsSpaceByte(s[j]);
        drop = !(space_before && space_after) && (c != '~' || j - i >= 2);
      }
      if (drop) {
        changed = true;
      } else {
        for (size_t k = i; k < j; ++k) emit(s[k], k);
      }
      i = j;
      continue;
    }
    emit(c, i);
    ++i;
  }
  if (!changed) return false;
  origin.push_back(s.size());
  out->text = std::move(text);
  out->origin = std::move(origin);
  return true;
}

}  // namespace devflow

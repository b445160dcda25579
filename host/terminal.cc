#include "host/terminal.h"

#include <cstdint>
#include <cstdio>

#include "host/utf8.h"

namespace devflow {
namespace {

void Hex(std::string& out, unsigned char byte) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", byte);
  out += buf;
}

void CodePoint(std::string& out, uint32_t cp) {
  char buf[12];
  std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  out += buf;
}

bool Hidden(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
         cp == 0x2029;
}

std::string Safe(std::string_view text, bool keep_breaks) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c >= 0x20 && c != 0x7f) {
        out += static_cast<char>(c);
      } else if (keep_breaks && (c == '\n' || c == '\t')) {
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else {
        Hex(out, c);
      }
      ++i;
      continue;
    }
    const Utf8Step step = DecodeUtf8At(text, i);
    const uint32_t cp = step.cp;
    const size_t len = step.length;
    if (!step.valid) {
      for (size_t k = 0; k < len; ++k) Hex(out, static_cast<unsigned char>(text[i + k]));
      i += len;
    } else if (Hidden(cp)) {
      CodePoint(out, cp);
      i += len;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace

std::string TerminalJson(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == 0x7f) {
        CodePoint(out, c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    const Utf8Step step = DecodeUtf8At(text, i);
    if (step.valid && Hidden(step.cp)) {
      CodePoint(out, step.cp);
    } else {
      out.append(text.substr(i, step.length));
    }
    i += step.length;
  }
  return out;
}

std::string TerminalLine(std::string_view text) { return Safe(text, false); }

std::string TerminalText(std::string_view text) { return Safe(text, true); }

std::string TerminalSafe(std::string_view text, bool keep_lines) {
  return keep_lines ? TerminalText(text) : TerminalLine(text);
}

}  // namespace devflow

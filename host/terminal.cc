#include "host/terminal.h"

#include "host/utf8.h"

namespace devflow {

std::string TerminalSafe(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Utf8Step step = DecodeUtf8At(text, i);
    const char32_t cp = step.cp;
    if (!step.valid) {
      out += "\xEF\xBF\xBD";
    } else if (keep_lines && (cp == '\n' || cp == '\t')) {
      out += static_cast<char>(cp);
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      out += ' ';
    } else {
      out.append(text.substr(i, step.length));
    }
    i += step.length;
  }
  return out;
}

}  // namespace devflow

#include "checker/redact.h"

#include <algorithm>
#include <cstdio>

namespace devflow {
namespace {

// The longest k <= limit such that the last k bytes of `a` are the first k bytes of `b`
// (Knuth-Morris-Pratt: `b`'s prefix as the pattern, run over `a`'s end). Linear.
size_t Overlap(std::string_view a, std::string_view b, size_t limit) {
  const std::string_view pattern = b.substr(0, std::min(limit, b.size()));
  if (pattern.empty()) return 0;
  std::vector<size_t> fail(pattern.size(), 0);
  for (size_t i = 1, k = 0; i < pattern.size(); ++i) {
    while (k > 0 && pattern[i] != pattern[k]) k = fail[k - 1];
    if (pattern[i] == pattern[k]) ++k;
    fail[i] = k;
  }
  size_t k = 0;
  for (char c : a.substr(a.size() - std::min(a.size(), pattern.size()))) {
    if (k == pattern.size()) k = fail[k - 1];
    while (k > 0 && c != pattern[k]) k = fail[k - 1];
    if (c == pattern[k]) ++k;
  }
  return k;
}

struct Span {
  size_t begin, end;
  size_t form;  // index into forms_ (lower: longer); forms_.size(): a cut fragment, dropped
};

}  // namespace

std::string JsonEscapedValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(u));
          out += hex;
        } else {
          out += c;
        }
    }
  }
  return out;
}

Redactor::Redactor(const std::vector<PassedValue>& passed) {
  for (const PassedValue& p : passed) {
    if (p.value.size() < kMinValueBytes) continue;
    for (std::string bytes : {p.value, JsonEscapedValue(p.value)}) {
      auto same = [&bytes](const Form& f) { return f.bytes == bytes; };
      if (std::any_of(forms_.begin(), forms_.end(), same)) continue;  // first name wins
      std::string marker = "[redacted: " + p.name + "]";
      if (marker.size() > bytes.size()) marker = "[secret]";  // 8 bytes: fits kMinValueBytes
      forms_.push_back(Form{std::move(bytes), std::move(marker)});
    }
  }
  std::stable_sort(forms_.begin(), forms_.end(),
                   [](const Form& a, const Form& b) { return a.bytes.size() > b.bytes.size(); });
}

std::string Redactor::Redact(std::string_view text, bool cut_front, bool cut_back) const {
  if (forms_.empty()) return std::string(text);
  std::vector<Span> spans;
  for (size_t f = 0; f < forms_.size(); ++f) {
    const std::string& bytes = forms_[f].bytes;
    const size_t first = spans.size();
    for (size_t at = text.find(bytes); at != std::string_view::npos;
         at = text.find(bytes, at + 1)) {
      // Overlapping occurrences of one form grow one span (bounded memory on `aaaa…`).
      if (spans.size() > first && at < spans.back().end) {
        spans.back().end = at + bytes.size();
      } else {
        spans.push_back(Span{at, at + bytes.size(), f});
      }
    }
    if (cut_front) {
      const size_t k = Overlap(bytes, text, bytes.size() - 1);
      if (k > 0) spans.push_back(Span{0, k, forms_.size()});
    }
    if (cut_back) {
      const size_t k = Overlap(text, bytes, bytes.size() - 1);
      if (k > 0) spans.push_back(Span{text.size() - k, text.size(), forms_.size()});
    }
  }
  if (spans.empty()) return std::string(text);
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;
  for (size_t i = 0; i < spans.size();) {
    Span run = spans[i++];
    while (i < spans.size() && spans[i].begin < run.end) {  // overlapping: one marker
      run.end = std::max(run.end, spans[i].end);
      run.form = std::min(run.form, spans[i].form);
      ++i;
    }
    out.append(text.substr(copied, run.begin - copied));
    if (run.form < forms_.size()) out += forms_[run.form].marker;
    copied = run.end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace devflow

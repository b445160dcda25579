// Redaction of the values the gate passed to a checker (issue 7 item 5, trial15 L1): every
// byte a checker writes (stdout, the reply; stderr, its tail) passes through one Redactor in
// SubprocessChecker::Dispatch before the gate parses, keeps or prints any of it, so no `env:`
// value a checker quotes reaches a fault, a summary, a report, a cache record, a ledger row, the
// journal or the terminal. docs/security.md "Secrets a checker prints" states the rule.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace devflow {

/// One value the gate passed to a checker, and the environment variable name it passed it
/// under (a provider's `env:` entry; names are letters, digits and `_`, config/config.cc).
struct PassedValue {
  std::string name;
  std::string value;
};

/// Replaces each occurrence of each passed value in a checker's output with a marker.
///
/// Rules (docs/security.md):
///  - A value shorter than kMinValueBytes bytes is not redacted: `1`, `true` or `en_US` are
///    settings, not secrets, and replacing them would mangle replies that merely contain them.
///  - Each value is matched as its bytes and as its JSON-escaped form (`"` → `\"`, `\` → `\\`,
///    `\b \f \n \r \t`, other bytes below 0x20 → `\u00xx` in lowercase hex, as nlohmann::json
///    and Python's json write them), when that differs: a reply carries a value in a JSON string.
///    No other spelling is recognised (`\u` escapes of ordinary characters, base64, a value cut
///    by line breaks).
///  - The marker is `[redacted: NAME]`, or `[secret]` when that would be longer than the bytes it
///    replaces; it holds no quote, backslash or control character, so a verdict block it lands
///    in stays valid JSON. A marker is never longer than what it replaces: redacted text is never
///    longer than the text read, so the reply cap and the stderr tail's bound still hold.
///  - Occurrences that overlap (one value inside or across another) are replaced together, as
///    one marker, that of the longest value among them (longest first): no byte of any
///    occurrence survives.
///  - `cut_front` / `cut_back`: the text is a window of a longer stream (the stderr tail lost its
///    start; a reply over its cap lost its end). The longest run at that edge which is the end
///    (front) or the start (back) of a value, in either form, but not all of it, is dropped: a
///    value cut in two by the window leaves none of its bytes.
class Redactor {
 public:
  static constexpr size_t kMinValueBytes = 8;

  /// `passed`: the values the checker got, in the provider's order (the first name of two
  /// with the same value names its marker). Values shorter than kMinValueBytes are ignored.
  explicit Redactor(const std::vector<PassedValue>& passed);

  /// True when there is nothing to redact (no passed value long enough).
  bool empty() const { return forms_.empty(); }

  /// `text` with every occurrence of every value (both forms) replaced by its marker, and the
  /// cut edges dropped as above. Never longer than `text`. Linear in text size per form
  /// (plus the occurrences found).
  std::string Redact(std::string_view text, bool cut_front = false, bool cut_back = false) const;

 private:
  struct Form {
    std::string bytes;   // the value, or its JSON-escaped form
    std::string marker;  // at most bytes.size() long
  };
  std::vector<Form> forms_;  // longest first; ties keep the provider's order
};

/// The JSON string-content spelling of `value` (no surrounding quotes), as above.
std::string JsonEscapedValue(std::string_view value);

}  // namespace devflow

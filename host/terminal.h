// The one terminal-safe printer (issue 10 item 10). Every human-readable line the CLI prints
// that holds bytes it did not write itself — a checker's summary or findings, a journal's
// reason or title, a report, a cache record, a ledger row, a file name — passes through one of
// these two functions first. The journal, reports, the ledger and `--json` keep such bytes
// verbatim (escaped by JSON where JSON is the format); only the terminal gets the safe form.
//
// What is made visible instead of being sent (docs/security.md "Terminal output"):
//   - C0 controls and DEL: `\n` `\r` `\t` as those two-character escapes, the rest as `\xHH`
//     (ESC 0x1b, BEL 0x07, BS 0x08, NUL ...). TerminalText keeps `\n` and `\t` as they are.
//   - C1 controls U+0080..U+009F (UTF-8 `C2 80`..`C2 9F`; an 8-bit CSI is U+009B) as `\u009b`.
//   - bidirectional controls: U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069 as
//     `\u202e` (a "Trojan Source" override would otherwise reorder what the operator reads),
//     and U+2028/U+2029 (line/paragraph separators) as `\u2028`.
//   - bytes that are not UTF-8 (a stray continuation, an overlong form, a surrogate, a
//     truncated sequence; decided by the one decoder, host/utf8.h) as `\xHH`, one per byte.
//   - a backslash stays a backslash: the escapes are for a human to read, not to decode.
// Everything else (printable ASCII, valid UTF-8 including emoji and CJK) passes unchanged.
#pragma once

#include <string>
#include <string_view>

namespace devflow {

/// One line of terminal output: every control character, line breaks and tabs included, is
/// escaped, so the text cannot start a second line or forge one.
std::string TerminalLine(std::string_view text);

/// A block of terminal output (a report, a file): as TerminalLine, but `\n` and `\t` are kept.
std::string TerminalText(std::string_view text);

/// JSON text for a terminal (every `--json` output: host/json_output.h OutputJson): the
/// text a JSON writer produced (controls below U+0020 are already `\u001b`, `\u0007` …),
/// with DEL and every code point TerminalLine shows as `\u…` (C1 controls, bidirectional
/// controls, U+2028/U+2029) written as a JSON `\u` escape instead, e.g. U+202E → `\u202e`,
/// U+0085 → `\u0085`, DEL → `\u007f`. Such code points appear only inside JSON strings, so
/// the result parses to the same value; the bytes that reach the terminal carry none of them.
/// Bytes that are not UTF-8 pass unchanged (the writers replace them with U+FFFD first).
std::string TerminalJson(std::string_view json_text);

/// The same printer under the name the store and report code call: TerminalText when
/// `keep_lines`, else TerminalLine.
std::string TerminalSafe(std::string_view text, bool keep_lines = false);

}  // namespace devflow

// The project's one UTF-8 decoder, and the JavaScript string rules built on it.
//
// Upstream is TypeScript: every file it reads is decoded with Node's `readFile(…, 'utf8')`
// (WHATWG UTF-8 decode: each maximal ill-formed subsequence becomes one U+FFFD), it trims with
// String#trim, measures lines in UTF-16 code units, and encodes strings back to UTF-8 with a
// lone surrogate written as U+FFFD. These helpers reproduce exactly that on byte strings.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace devflow {

/// One decoding step at s[i] (i < s.size()). `valid`: a well-formed sequence of `length`
/// bytes carrying `cp`. Otherwise `length` is the maximal ill-formed subpart (>= 1 byte,
/// WHATWG/Unicode "U+FFFD substitution of maximal subparts") and `cp` is U+FFFD.
struct Utf8Step {
  char32_t cp = 0;
  size_t length = 1;
  bool valid = true;
};
Utf8Step DecodeUtf8At(std::string_view s, size_t i);

/// True when `s` is well-formed UTF-8 (no surrogates, nothing above U+10FFFF, shortest form).
bool IsValidUtf8(std::string_view s);

/// Offset of the first ill-formed subsequence of `s`, or s.size() when `s` is well-formed.
/// Runs of ASCII are skipped eight bytes at a time (memory speed on ASCII text); every other
/// byte goes through DecodeUtf8At.
size_t FirstInvalidUtf8(std::string_view s);

/// FirstInvalidUtf8(s), read chunk by chunk from the last to the first (each chunk forwards,
/// its bounds moved onto a byte that is no continuation byte, so no valid character straddles
/// two chunks): the same offset, but the text's first bytes are the last read, and still in the
/// cache when a pass over the text follows (the grounding scan over the evidence).
size_t FirstInvalidUtf8EndFirst(std::string_view s, size_t chunk = size_t{1} << 20);

/// `s` with every maximal ill-formed subpart replaced by U+FFFD (EF BF BD): what
/// `readFile(path, 'utf8')` gives upstream. Valid input comes back unchanged.
std::string ReplaceInvalidUtf8(std::string_view s);

/// Appends `cp` as UTF-8; a surrogate or a value above U+10FFFF is appended as U+FFFD.
void AppendUtf8(std::string& out, char32_t cp);

/// ECMAScript WhiteSpace or LineTerminator (ECMA-262 §12.2, §12.3): the set String#trim
/// removes — TAB, LF, VT, FF, CR, SPACE, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
/// U+202F, U+205F, U+3000, U+FEFF.
bool IsJsWhiteSpace(char32_t cp);

/// Unicode's White_Space property (PropList.txt): TAB, LF, VT, FF, CR, SPACE, U+0085 (NEL),
/// U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. The JS set without
/// U+FEFF (which IsDefaultIgnorable covers) and with U+0085.
bool IsUnicodeWhiteSpace(char32_t cp);

/// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): code points a renderer
/// shows as nothing — zero-width space and (non-)joiners U+200B–U+200D, soft hyphen, bidi
/// controls, word joiner and invisible operators U+2060–U+206F, variation selectors, the BOM
/// U+FEFF, Hangul fillers, tags (U+E0000–U+E0FFF).
bool IsDefaultIgnorable(char32_t cp);

/// True when `s` says nothing a reader could see: every code point is white space
/// (IsUnicodeWhiteSpace), default-ignorable (IsDefaultIgnorable), a format character
/// (general category Cf: also U+0600–U+0605, U+06DD, U+070F, U+0890–U+0891, U+08E2, U+110BD,
/// U+110CD, U+13430–U+1343F, U+FFF9–U+FFFB), a control character (Cc: C0, DEL, C1) or U+2800
/// BRAILLE PATTERN BLANK (a symbol that shows as nothing; trial12 c33). Decoded
/// with DecodeUtf8At; an ill-formed byte is not blank (a reader sees U+FFFD). "" is blank. The
/// one test of a blank checker summary (checker/verdict.h; docs/checker-protocol.md): stricter
/// than upstream's String#trim, which keeps `"\u200b"` as a summary (fail closed).
bool IsBlankText(std::string_view s);

/// `text` when it fits `max_bytes` (at least 64); else its head, cut at a UTF-8 sequence
/// boundary, followed by `… [cut: <N> bytes]` (N = bytes removed), the whole at most
/// `max_bytes`. The one cut of what a checker said before it becomes durable or reaches a
/// terminal (issue 7 item 11: checker/verdict.h BoundVerdictLine, `reports list`).
std::string BoundLine(std::string_view text, size_t max_bytes);

/// String#trim on UTF-8 bytes: `s` without leading and trailing JS white space. An
/// ill-formed byte is not white space (upstream sees U+FFFD there).
std::string_view JsTrim(std::string_view s);

/// `s` as UTF-16 code units, as a JS string holds it (ill-formed bytes become U+FFFD).
std::u16string Utf8ToUtf16(std::string_view s);

/// UTF-16 code units back to UTF-8; a lone surrogate becomes U+FFFD (Node's
/// Buffer.from(string, 'utf8'), i.e. what writeFile writes).
std::string Utf16ToUtf8(std::u16string_view s);

/// JSON text as upstream's JSON.parse reads it, for a parser that refuses what JavaScript
/// accepts (nlohmann::json): ill-formed UTF-8 becomes U+FFFD (readFile decoded it so), and a
/// `\uD800`–`\uDFFF` escape that is not half of a surrogate pair becomes `\ufffd`. JavaScript
/// keeps such a lone surrogate in the string (JSON.stringify writes one when a checker's summary
/// holds it) and shows and writes it as U+FFFD, so U+FFFD is what the value carries here.
/// Escapes are found by scanning string literals, so `\\ud800` (an escaped backslash) stays.
std::string JsonTextAsJsReadsIt(std::string_view json);

}  // namespace devflow

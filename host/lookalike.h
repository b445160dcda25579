// The project's one look-alike fold: the ASCII character a reader takes a non-ASCII code point
// for, and a text read through that fold. The verdict claim scan (checker/verdict.cc) reads a
// checker's reply through it, the grounding core (checker/grounding.cc) reads a claim and its
// evidence through it before extracting tokens (docs/grounding.md, "Look-alikes").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace devflow {

/// The ASCII character `cp` reads as, or 0 when none. ASCII itself is not passed here.
///
/// Source: Unicode's own data, not a hand list. At build time tools/lookalike_gen.cc asks ICU
/// (Debian 12: ICU 72.1, Unicode 15.0; the generated file names the versions it was built from,
/// lookalike_table::kIcuVersion) for every code point U+0080–U+10FFFF, first rule that applies:
///  1. a regional indicator U+1F1E6–U+1F1FF: A–Z (Unicode gives them no mapping; stated here);
///  2. unassigned, surrogate, private use, control, space, format characters and marks
///     (general category M*): none (host/utf8.h and IsCombiningMark handle those);
///  3. a decimal digit of any script (general category Nd: Arabic-Indic, Devanagari, ...): its
///     digit, even where UTS #39 draws it like a letter (Arabic-Indic `٧` U+0667, which UTS #39
///     confuses with V, is 7: grounding reads `REQ-٧` as REQ-7);
///  4. a hyphen or dash (general category Pd: U+2010–U+2015, U+FE58, U+FE63, U+301C, ...): '-';
///  5. NFKC (ICU Normalizer2) is one ASCII letter, digit or '-' (full-width, mathematical
///     alphanumerics, super- and subscripts, circled, squared, Roman numerals `Ⅴ`, modifier
///     letters): that character, its case kept; a full-width form U+FF01–U+FF5E also its
///     punctuation; NFKC is a parenthesized letter or digit (`⒱` is "(v)"): that character;
///  6. its Unicode name says it is a Latin letter: a decorated one ("NEGATIVE SQUARED LATIN
///     CAPITAL LETTER V"), a small capital ("LATIN LETTER SMALL CAPITAL R", read as R), or one
///     with an attached hook, stroke or tail that has no canonical decomposition ("LATIN SMALL
///     LETTER V WITH HOOK" `ʋ`, `ł`, `ø`): that letter, capital or small as named; a letter with
///     an accent that decomposes (`é`) is not a look-alike and stays itself;
///  7. its UTS #39 confusable skeleton (uspoof_getSkeleton) is the skeleton of an ASCII letter,
///     digit or '-' (Lisu `ꓦ`, Cherokee `Ꮩ`, Canadian syllabics `ᐯ`, Cyrillic `е`, Greek `Ο`,
///     Armenian `ո`, `×`, `∨`, ...): that character; where several share the skeleton (`l`: I,
///     l and 1) a number reads as the digit, a small letter as the small one, a capital or a
///     letter of a caseless script (Lisu, Cherokee) as the capital; a capital or small capital
///     is then upper-cased, a small letter lower-cased.
/// The result is a sorted table of runs (consecutive code points mapping to one character or to
/// consecutive characters; about a thousand) with a page index (host/lookalike_table.h): a
/// lookup binary-searches the few runs of the code point's 256-code-point page.
///
/// Not covered: a code point whose look-alike is two or more characters (`ﬁ`, `㎏`, `⑩`), a
/// sequence of code points that reads as one letter (`rn` as m); letters UTS #39 does not list and
/// whose name does not say Latin (Cyrillic `Ԛ` U+051A, which the hand list had: its small `ԛ` is
/// listed, it is not); a letter with a decomposing accent; words in other scripts that mean a
/// verdict (`却下`).
char AsciiLookAlike(char32_t cp);

/// A combining mark of the Latin, Cyrillic, Greek and symbol blocks (U+0300–U+036F,
/// U+0483–U+0489, U+1AB0–U+1AFF, U+1DC0–U+1DFF, U+20D0–U+20FF, U+FE20–U+FE2F): it rides on the
/// character before it (`7\u0301` shows as a 7 with an accent).
bool IsCombiningMark(char32_t cp);

/// `text` read through the fold: every code point with an AsciiLookAlike becomes that ASCII
/// byte; default-ignorable code points (host/utf8.h IsDefaultIgnorable: zero-width space and
/// joiners, soft hyphen, bidi controls, BOM, ...) and combining marks are dropped; everything
/// else (ASCII, other code points, ill-formed bytes) is kept byte for byte.
struct FoldedText {
  std::string text;
  /// With `origin` asked for: origin[k] is the offset in the original text of the character
  /// that folded byte k belongs to; origin[text.size()] is the original's size.
  std::vector<size_t> origin;
};

/// Folds `text` into `out` and returns true when the fold changes it; returns false (and leaves
/// `out` alone, no allocation) when it would not, which a text without a byte >= 0x80 decides
/// 64 bytes at a time (SSE2; eight bytes at a time without it).
bool FoldLookAlikes(std::string_view text, FoldedText* out, bool want_origin);

}  // namespace devflow

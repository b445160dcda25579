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

/// The ASCII character `cp` reads as, or 0 when none: a full-width form (U+FF01–U+FF5E) its
/// ASCII twin; a hyphen, dash or minus (U+2010–U+2015, U+2212, U+FE58, U+FE63) '-'; a
/// mathematical alphanumeric (U+1D400–U+1D6A3 letters, U+1D7CE–U+1D7FF digits) its letter or
/// digit; a superscript or subscript digit (U+00B2, U+00B3, U+00B9, U+2070, U+2074–U+2079,
/// U+2080–U+2089) its digit; a decimal digit of another script (general category Nd: Arabic-Indic,
/// Devanagari, Thai, ...) its digit; a Cyrillic or Greek letter drawn like a Latin one (Cyrillic
/// `а е о р с у х і ј ѕ ԁ һ ӏ` and capitals `А В Е К М Н О Р С Т Х ...`, Greek capitals
/// `Α Β Ε Ζ Η Ι Κ Μ Ν Ο Ρ Τ Υ Χ` and `ο ν`) that letter; a modifier (superscript) letter, a
/// subscript letter or a small capital drawn like a Latin one (`ᵛ ᵉ ʳ ᵈ ᶦ ᶜ ᵗ`, `ⁱ ⁿ`, `ₐ ₑ ₒ`,
/// `ᴠ ᴇ ᴛ ᴏ ʀ ɪ`: U+02B0–U+02E3, U+1D00–U+1DBF, U+2071, U+207F, U+2090–U+209C and a few IPA
/// small capitals; trial13 e32) that letter, superscripts and subscripts lowercase, small
/// capitals uppercase. ASCII itself is not passed here.
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
/// eight bytes at a time.
bool FoldLookAlikes(std::string_view text, FoldedText* out, bool want_origin);

}  // namespace devflow

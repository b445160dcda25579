// A claim as a Markdown or HTML reader sees it: the grounding core extracts refs from the claim
// as written and from this rendered view, and requires both views' refs in the evidence
// (docs/grounding.md, "Markup"), so `REQ<!-- -->-7`, `RE**Q-7**` or `REQ&#x2D;7` — REQ-7 on
// screen — is checked as REQ-7.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace devflow {

/// Whether `text` holds a byte the rendered view can change: < & * _ ` ~ or a backslash. A text
/// without one is its own rendered view (RenderMarkupText is not worth calling).
bool MayHoldMarkup(std::string_view text);

/// The rendered view of a text and where each of its bytes came from.
struct RenderedText {
  std::string text;
  /// origin[k]: the offset in the text as written of what produced byte k (the '&' of a
  /// character reference, the byte itself otherwise); origin[text.size()] is the written size.
  std::vector<size_t> origin;
};

/// Renders `text` to what a reader sees, in one linear pass, and returns true when that differs
/// from `text` (false: `out` is left alone). The steps, on the text as written:
///  - an HTML comment `<!-- … -->` (also `<!-->`, `<!--->`) is removed; an unterminated one is
///    kept as text (CommonMark shows it);
///  - an HTML tag `<name …>` or `</name>` (name: an ASCII letter, then letters, digits, '-';
///    then whitespace, '/' or '>'; up to the first '>') is removed, a tag that breaks the line
///    (br, p, div, li, tr, td, th, h1–h6, hr, table, ul, ol, dl, dt, dd, blockquote, pre,
///    section, article, header, footer, nav, aside) becomes a newline; `<!…>`, `<?…>` too
///    (removed). An autolink `<https://…>` is no tag and is kept;
///  - a character reference is decoded: `&#N;`, `&#xH;` (the ';' optional, as browsers read an
///    HTML block; 0x80–0x9F as windows-1252, as HTML5 does: `&#150;` is an en dash; 0, a
///    surrogate or above U+10FFFF is U+FFFD) and every HTML5 named one
///    (checker/html_entities_table.h, the WHATWG table: `&hyphen;`, `&minus;`, `&period;`,
///    `&Ropf;`, and the legacy names without ';', longest first as HTML5 reads them);
///  - a backslash before ASCII punctuation is dropped (`REQ\-7`), the punctuation kept as is;
///  - Markdown emphasis and code markers are removed: a run of '*' or '`' unless whitespace (or
///    the text's edge) is on both sides, a run of two or more '~' likewise, a run of '_' unless
///    a word character (ASCII letter or digit, or a byte >= 0x80) is on both sides (CommonMark
///    reads `snake_case` literally);
///  - a URL (`http://` or `https://`, any case, up to whitespace, '<', '>', '"' or '`') is copied
///    as written, so its '_' and '*' stay.
/// The rendered view may read more than a reader sees (a `<style>` body stays text, `REQ<b>5`
/// reads REQ5) — the core checks the written view's refs too, so reading more only ever asks
/// for more; what it drops (a comment's text) the written view still holds.
bool RenderMarkupText(std::string_view text, RenderedText* out);

}  // namespace devflow

// Verdict parsing: the decision of a checker reply is its last fenced block that claims to be a
// verdict, and only when that block is a valid one (issue 7 item 1; upstream's fence pattern and
// JSON rules, reference/devflow-upstream.md §4.7). docs/checker-protocol.md states the rule with
// examples.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace devflow {

/// A decoded verdict block.
struct Verdict {
  bool allow = false;                 // "allow" → true, "veto" → false
  std::string summary;                // not IsBlankText (host/utf8.h); kept untrimmed
  std::vector<std::string> findings;  // absent in the block → empty
  std::optional<std::string> nonce;   // the block's "nonce" string, if any (issue 4)
};

/// One fenced block of a reply.
struct FencedBlock {
  std::string_view info;     // the opener's info string: after the backticks, up to the LF
  std::string_view content;  // after the opener's LF up to the closing fence (or reply end)
  bool closed = true;        // false: the reply ended inside this block (only ever the last)
  /// "" when the block is a top-level fenced block as a CommonMark reader sees the reply; else
  /// where it is hidden or nested, in words: "inside an HTML comment", "inside a <details>
  /// element", "inside an HTML block", "inside an unclosed <! or <? construct", "after an HTML
  /// element left open", "inside a ~~~ fence", "inside a longer ``` fence", "inside a blockquote",
  /// "inside an indented code block", "inside a list item", "after text on its line". A static
  /// string (issue 7, trial13 e60 e61 j02-j04; docs/checker-protocol.md "Which block decides").
  std::string_view nested;
};

/// Fenced blocks in reply order: three backticks, any info string to end of line, a newline,
/// then the shortest run of characters up to the next three backticks (non-overlapping, left
/// to right; the JS pattern /```[^\n]*\n([\s\S]*?)```/g gives the closed blocks). An opener
/// after the last closed block that is never closed (or whose info string runs to the end of
/// the reply) is returned last with closed = false and the rest of the reply as its content.
/// The same pass reads the reply line by line as CommonMark does and sets each block's
/// `nested`: a ``` or ~~~ fence line (at most 3 spaces in) opens a fence that only a line of
/// at least as many of the same character closes (an unclosed one runs to the reply's end);
/// a line 4 or more columns in, outside a paragraph, is indented code; raw HTML outside code
/// hides what follows as CommonMark (0.30 §4.6, HTML block start conditions 1-7) and a browser
/// read it (trial15 A8): `<!--`, `<?`, `<!X`, `<![CDATA[` run to `-->`, `?>`, `>`, `]]>` (or the
/// end), a line starting `<script`/`<pre`/`<style`/`<textarea` to its end tag, a line starting
/// a block-name tag (or one tag alone, outside a paragraph) to a blank line, and a start tag of
/// any non-void element keeps it open until its end tag (quoted attribute values, raw text
/// elements and same-line code spans read as a browser and CommonMark read them); a block
/// whose opener line starts with `>`, a list marker, 4 or more columns or other text is no
/// top-level fenced block. A list marker line opens a list item whose content column is where
/// its text starts; a later non-blank line indented to that column is the item's content (a
/// fence there is "inside a list item", also after a blank line), and a line indented less ends
/// the item unless it lazily continues its paragraph (trial15 A3).
std::vector<FencedBlock> FencedBlocks(std::string_view reply);

/// Whether a block claims to be a verdict: the first word of its info string is `json` (ASCII
/// case-insensitive), or its content after JSON whitespace (and a BOM) starts with `{`, or it
/// names a verdict key (FindVerdictClaim with ClaimForms::kKeys). Such a block decides;
/// anything else (a `cpp` snippet, prose in a bare fence) is ignored.
bool ClaimsVerdict(const FencedBlock& block);

/// What FindVerdictClaim looks for.
enum class ClaimForms {
  kKeys,               // a verdict key only: what makes a fenced block claim (ClaimsVerdict)
  kKeysAndStatements,  // also a decision stated in prose: what may not follow the deciding block
};

/// Where a claim starts and ends in the text searched: byte offsets, at < end.
struct VerdictClaim {
  size_t at = 0;
  size_t end = 0;
};

/// The first verdict claim in `text`, or nullopt. The text is read as the claim scan folds it:
/// zero-width and other default-ignorable code points and ill-formed bytes are skipped (also
/// inside a word), Unicode white space is a space (U+2028/U+2029 a line end), a look-alike of
/// an ASCII character (host/lookalike.h: `：`, `ｖ`, Cyrillic `е`) is that character, any other
/// non-ASCII code point is punctuation. Words are runs
/// of ASCII letters and digits, compared ASCII case-insensitively. The forms:
///  - a key: `verdict` quoted with `"` or `'` anywhere (`{'verdict': 'veto'}`), or unquoted at
///    the start of a line (after nothing but punctuation and spaces: `- `, `> `, `{`, `**`)
///    and followed, before the next word, by `:` or `=` (YAML, JSON5, TOML) — whatever follows;
///  - with kKeysAndStatements, a statement: the word `verdict` or `decision`, then (up to three
///    connecting words such as `is`, `would`, `be`, `to`, `not`, or) a run of punctuation, white
///    space or line ends that is not only spaces and holds no `.` `!` `?` `,` `;`, then a
///    verdict word (allow, veto, admit, reject, approve, deny, block, pass, fail, ok, yes, no
///    and their forms): `**Verdict:** veto`, `Final verdict: veto`, `## Verdict` + LF + `veto`,
///    `| verdict | veto |`, `<verdict>veto</verdict>`, `Decision — reject`, `the verdict is
///    veto`. `The verdict stands.` and `this decision allows it` are no claims;
///  - with kKeysAndStatements, a negative verdict word on its own, anywhere: veto, vetoes,
///    vetoed, vetoing, reject, rejects, rejected, rejecting, rejection, deny, denies, denied,
///    denying (`Final answer: **veto**.`, `I veto this card.`; the claim is the word). Not
///    block, fail, no, refuse or decline: alone they are ordinary prose ("nothing blocks this").
/// One linear pass; nothing is allocated.
std::optional<VerdictClaim> FindVerdictClaim(std::string_view text, ClaimForms forms);

/// Decodes one block's content: JSON object (surrounding whitespace allowed), no key twice
/// anywhere in it (issue 7 item 2), `verdict` exactly "allow" or "veto", no other top-level key
/// whose ASCII-lowercased form contains `verdict` (`"Verdict"`, `"final_verdict"`: ambiguous),
/// `summary` a string that is not blank (host/utf8.h IsBlankText: not only white space,
/// zero-width, format or control characters), `findings` absent or an array of strings. Extra
/// properties are ignored. Anything else → nullopt.
std::optional<Verdict> DecodeVerdictBlock(std::string_view content);

/// What a provider's reply may hold besides its verdict block (`reply:` in the provider's
/// config, config/config.h).
enum class ReplyRule {
  kText,       // prose may precede the deciding block (the rules below); the default
  kBlockOnly,  // the reply is the deciding block, with nothing but white space around it
};

/// The verdict of a reply: the last block that ClaimsVerdict, when it is top-level
/// (FencedBlock::nested empty), its info string is `json` (ASCII case-insensitive) or empty
/// with only white space around it (trial15 A1: `json VETO: …`, `text`, `json5` → none), it is
/// closed, decodes,
/// (with `nonce` set) carries exactly that nonce as a string, and nothing but blank text
/// (host/utf8.h IsBlankText: white space, zero-width, format or control characters) follows it
/// in the reply: not a final answer the fence scan does not see as a block, a restated
/// decision, agreeing or not, nor a retraction without a verdict word ("My answer is no.";
/// docs/decisions.md "The verdict block ends the reply"). Otherwise — no claiming block, the
/// last one is not a valid verdict, or anything follows it — nullopt, the fault `the checker
/// replied without a parsable verdict block`: an earlier valid block never stands in for a broken
/// last one.
/// With ReplyRule::kBlockOnly, also only white space (IsUnicodeWhiteSpace) may precede the
/// deciding block: `this provider sets reply: block-only; the reply holds text outside its
/// verdict block (…)`.
std::optional<Verdict> ParseLastVerdict(std::string_view reply,
                                        const std::optional<std::string>& nonce = std::nullopt,
                                        ReplyRule rule = ReplyRule::kText);

/// Why ParseLastVerdict(reply, nonce) finds no verdict, in words for the operator (the fault
/// message, the ledger row and the fault report; issue 10 item 8), from the same rules; "" when
/// it finds one. E.g. `the last verdict block says "verdict": "ALLOW"; expected "allow" or
/// "veto"`, `the last verdict block is not valid JSON`, `the reply has no fenced block`. A
/// value of the reply is quoted as compact JSON, at most 80 bytes.
std::string VerdictFaultReason(std::string_view reply,
                               const std::optional<std::string>& nonce = std::nullopt,
                               ReplyRule rule = ReplyRule::kText);

/// Bounds on what a checker says before it becomes durable (issue 7 item 11): one summary or
/// finding keeps at most kMaxVerdictLineBytes bytes, a verdict at most kMaxVerdictFindings
/// findings.
inline constexpr size_t kMaxVerdictLineBytes = 1024;
inline constexpr size_t kMaxVerdictFindings = 64;

/// `text` when it fits kMaxVerdictLineBytes; else its head, cut at a UTF-8 boundary, followed by
/// `… [cut: <N> bytes]` (N = bytes removed), the whole at most kMaxVerdictLineBytes bytes.
std::string BoundVerdictLine(std::string_view text);

/// The verdict as the journal check, the cache record, the ledger and the terminal see it:
/// summary and each finding through BoundVerdictLine, the first kMaxVerdictFindings findings
/// followed, when more were given, by one finding `… and <N> more findings`. The only place a
/// checker's words are bounded; only the veto report gets the whole verdict.
Verdict BoundVerdict(const Verdict& verdict);

}  // namespace devflow

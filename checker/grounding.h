// The grounding core (SPEC §6, release-gate semantics, tightened): every specific a claim
// cites — date, URL, ticket ref, commit hash, and optionally file path and number — must
// appear as a whole token somewhere in the evidence, or the claim is rejected.
//
// Token kinds (bytes; "word character" = ASCII letter, digit, '_' or any byte >= 0x80):
//  - date    YYYY-MM-DD, not preceded by a word character and not followed by a digit
//            (so the date of "2026-09-16T08:00:00Z" counts).
//  - url     http:// or https:// (scheme case-insensitive) not preceded by a word character,
//            then ASCII characters up to whitespace, < > " ` or any non-ASCII byte; trailing
//            . , ; : ! ? ' " are stripped, and a trailing ) or ] only while the URL holds more
//            closers than openers of that kind — "(https://x.org/a)." yields https://x.org/a
//            while https://en.wikipedia.org/wiki/Foo_(bar) keeps its parenthesis.
//  - ref     `#123` ('#' not preceded by a word character or '&') or Jira style `ABC-123`:
//            an uppercase letter, 1+ uppercase letters/digits, '-', 1+ digits, as a whole word
//            not preceded by '-'. Not refs: a prefix in the stop list of standards and
//            encodings — UTF, UCS, SHA, SHA3, CRC, AES, RSA, ISO, IEC, IEEE, ECMA, ANSI, CP,
//            WINDOWS, COVID — so UTF-8, SHA-256, ISO-8601, COVID-19 are not tickets.
//  - hash    a whole word of 7–40 hex characters holding at least one digit and at least one
//            letter a-f (either case): "1234567890" and "defaced" are not hashes, "ABCDEF1"
//            is. Hashes compare case-insensitively (a commit is the same in either case).
//  - path    (opt-in) a run of [A-Za-z0-9_.~/-] not preceded by ':' or a word character,
//            trailing '.' stripped, holding a '/', whose last segment ends in an extension
//            starting with a letter: src/app/main.py, /etc/app.conf, ../docs/x.md.
//  - number  (opt-in) -?digits(,ddd)*(.digits)?%? as a standalone token: not preceded by a
//            word character or . / # - (or ':' after a digit), not followed by a word
//            character or by . - / : before a digit. "42." yields 42, "-42" yields -42,
//            "3.5%" yields 3.5%; a date, a time, a version or a ref yields no number.
//  - date-text (opt-in) a date written in words or with slashes: "24 Sept 2026", "24th Sept.
//            2026", "Sept 24, 2026", "September 24 2026", "24/09/2026" (day/month/year; read
//            month/day/year only when the second number is above 12), "2026/09/24". The
//            calendar date must exist. It is compared as YYYY-MM-DD, so it is grounded by the
//            same date in any of these forms, or as an ISO date, in the evidence.
// "Word character" follows Python's \w in Unicode mode: ASCII letters, digits and '_', and
// every non-ASCII code point except the punctuation, symbol and space blocks (curly quotes,
// dashes, NBSP, arrows, emoji, ...), so "“#42”" and "—2026-09-24" still yield their tokens.
//
// Look-alikes (strict mode): the claim and the evidence are read through host/lookalike.h's
// fold first (dashes as '-', full-width forms, mathematical alphanumerics, other scripts' digits,
// Cyrillic/Greek twins of Latin letters; invisibles dropped), so `REQ‑7` (U+2011) is the ref
// REQ-7. A finding names the folded token at its line and column in the claim as written.
//
// Markup (strict mode; checker/markup_text.h): the claim's tokens are extracted from the claim
// as written AND from its rendered view (HTML comments and tags removed, character references
// decoded, Markdown emphasis and code markers dropped), folded alike, and every token of either
// view must be in the evidence: `REQ<!-- -->-7` and `RE**Q-7**` are checked as REQ-7. A token
// only the rendered view holds is grounded by the evidence as written or, failing that, by the
// evidence's rendered view (so a claim copied from its evidence still grounds). A claim holding
// a bidi control is refused (BidiFinding).
//
// Compat mode (GroundingMode::kCompat, `--compat`) restores release_gate.py's matching
// exactly: its regexes for the six kinds (UTF-8 is a ref, 1234567 a hash, `#4` is grounded by
// `#41`) and substring search of each token in the evidence text, JSON evidence re-serialised
// as json.dumps does with only top-level keys excluded (keys themselves grounding).
//
// Grounding by equivalence (issue 9; the table in docs/grounding.md): the evidence's tokens are
// extracted with the same rules and compared by what they name — a short hash by a whole
// evidence hash that starts with it; `#N` by `#N`, `GH-N`, `PR N`, `PR #N`, `pull request #N`,
// `<repo>#N` or a pull/issue link of the project; the project's forge links (`…/pull/N`,
// `…/commit/H`, `…/compare/A...B`, `…/releases/tag/T`) by the ref, hash, ends or tag they name;
// other URLs after dropping the scheme, a trailing '/' or '.', and an evidence-side fragment;
// CVE ids with '-', '_' or ' ' separators. Refs stay whole tokens: `#4` is not grounded by
// `#41`, `ABC-12` not by `ABC-123`. Ref kind extras: `owner/name#123`, `PR#123`, `GH#123`,
// `CVE-2026-25645` as one token. Hash kind extras: an all-decimal word marked by `/commit/`,
// the word "commit" or a `[…](…/commit/…)` link is a hash; a UUID is never one.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "host/os.h"
#include "host/status.h"

namespace devflow {

/// How claim tokens are extracted and matched: kStrict (whole tokens, the default) or kCompat
/// (release_gate.py's regexes and substring search).
enum class GroundingMode { kStrict, kCompat };

/// Every kind the core knows, in canonical order: date, url, ref, hash, path, number,
/// date-text.
const std::vector<std::string>& AllTokenKinds();

/// The kinds on when none are given: date, url, ref, hash.
const std::vector<std::string>& DefaultTokenKinds();

/// Parses a comma-separated kind list ("date,url"; spaces around names allowed; duplicates
/// dropped keeping first occurrence). Errors (code "usage"): an unknown kind, naming it and
/// the known ones; an empty list.
Result<std::vector<std::string>> ParseTokenKinds(std::string_view csv);

/// The tokens of one kind in `text`, in text order, duplicates kept, as written (hashes are not
/// case-folded here). An unknown kind yields nothing. In kCompat mode, release_gate.py's
/// `findall` of that kind (URLs with trailing .,;:!? stripped).
std::vector<std::string> ExtractTokens(std::string_view text, std::string_view kind,
                                       GroundingMode mode = GroundingMode::kStrict);

/// The tokens of date, url, ref and hash (index 0-3, that order) in `text`, found in one
/// table-driven pass: the scanner Ground runs over the claim and (with the evidence's ref
/// spellings) over the evidence. For each kind the list equals ExtractTokens(text, kind) in
/// kStrict mode, in text order (the contract its differential test holds it to).
std::array<std::vector<std::string>, 4> ExtractDefaultTokensOnePass(std::string_view text);

/// Tests and benchmarks only: which one-pass scanner runs. kSkipping is the one Ground uses:
/// a skip to the next byte where a token can start or matter, 32 bytes at a time where the CPU
/// has AVX2 (x86-64, chosen at run time), else 16 at a time with SSE2, then the per-word step
/// around that byte; without SSE2 it is kReference. kSkippingSse2 is the 16-byte skip alone
/// (what kSkipping is without AVX2; on a build without SSE2, the scalar skip). kSkippingScalar
/// is the same with a byte-at-a-time skip. kReference is the per-word step at every position:
/// the oracle the others must equal exactly (the byte-at-a-time skip is no faster than it).
enum class OnePassScanner { kSkipping, kSkippingSse2, kSkippingScalar, kReference };

/// Tests and benchmarks only: one call of a one-pass sink. `kind` is "date", "url", "ref",
/// "hash" or "form" (an evidence-only ref spelling: `PR 12`, `cve_2026_1`); `token` as passed
/// (a form's key, "#12", "CVE-2026-1"); `offset` the token's byte offset in the text (npos for
/// a form, whose key is no slice of the text).
struct OnePassEvent {
  std::string kind;
  std::string token;
  size_t offset = 0;
  bool operator==(const OnePassEvent&) const = default;
};

/// Tests and benchmarks only: every sink call of one pass of `scanner` over `text`, in call
/// order. `kinds` picks the sinks (bits 1 date, 2 url, 4 ref, 8 hash, 16 form); `evidence` reads
/// refs as the evidence writes them (`regex#12`), as Ground's evidence pass does.
std::vector<OnePassEvent> OnePassEventsForTesting(std::string_view text, unsigned kinds,
                                                  bool evidence, OnePassScanner scanner);

/// Tests and benchmarks only: the number of sink calls of one pass of `scanner` over `text`
/// with every sink on and evidence reading (no token is copied: what a benchmark times).
size_t CountOnePassTokensForTesting(std::string_view text, OnePassScanner scanner);

/// One ungrounded claim token. `line` and `column` (1-based, columns in characters) give its
/// first occurrence in the claim, and `nearest` the closest evidence item of the same space
/// ("#1073" for #1072, the nearest date, a hash differing in at most 2 digits, the URL sharing
/// the longest prefix past the host; "" when there is none). Kcompat leaves line at 0.
struct UngroundedToken {
  std::string kind;
  std::string token;
  size_t line = 0;
  size_t column = 0;
  std::string nearest;
};

/// A Markdown link `[text](url)` (`inline_link`) or reference definition `[text]: url` whose
/// text names another thing than its forge target (`[#123](…/pull/124)`); the position of '['.
struct LinkFinding {
  std::string text;
  std::string url;
  bool inline_link = true;
  size_t line = 0;
  size_t column = 0;
};

/// A bidirectional-text control in the claim (strict mode): an embedding, override or isolate
/// (U+202A–U+202E, U+2066–U+2069) or an invisible direction mark (U+200E, U+200F, U+061C),
/// written as is or as a character reference (`&#x202E;`, `&rlm;`). Such a control can make a
/// reader see the text in another order than it is written (`\u202e7-QER\u202c` shows as
/// REQ-7), as in Trojan Source (CVE-2021-42574), so a claim holding one is not checkable: it is
/// refused. One finding per code point, at its first occurrence (line and column in the claim
/// as written, 1-based, columns in characters), with the number of its occurrences.
struct BidiFinding {
  char32_t code_point = 0;
  size_t line = 0;
  size_t column = 0;
  size_t count = 0;
};

/// The outcome of grounding one claim.
struct GroundingResult {
  bool grounded = true;  // no ungrounded token, no mismatched link and no bidi control
  /// Bidi controls of the claim, by code point (strict mode; docs/grounding.md, "Bidi").
  std::vector<BidiFinding> bidi;
  /// Per ungrounded claim token: kinds in the order requested, tokens sorted bytewise within a
  /// kind, each once.
  std::vector<UngroundedToken> ungrounded;
  /// Links whose text and target disagree, in claim order (strict mode, when `url` is on).
  std::vector<LinkFinding> links;
  /// Distinct claim tokens checked, over all requested kinds.
  size_t checked = 0;
  /// Per evidence text (strict mode; empty in kCompat mode): the length of a prefix that the
  /// one-pass scan found well-formed UTF-8 on its way (the AVX2 skip checks the bytes it loads;
  /// 0 for a text not scanned, or without AVX2). A character starts at that offset, so a caller
  /// that defers its UTF-8 check needs to check only the rest (CheckUtf8's `checked`).
  std::vector<size_t> utf8_checked;
};

/// Grounds every claim token of `kinds` against the evidence texts (the rules: top of this
/// file and docs/grounding.md, "Equivalence"). `repo` ("owner/name", any case; empty: inferred
/// from the evidence's forge links when they name exactly one repository) is the project whose
/// forge links are matched by what they name. One pass per comparison space over each text:
/// the claim's keys go into a hash set and every evidence key is looked up (time linear in
/// claim plus evidence). Unknown kinds are ignored (validate with ParseTokenKinds).
/// In kCompat mode a token is grounded when it occurs as a substring of any evidence text
/// (release_gate.py's `token in evidence`; work grows with claim tokens times evidence size),
/// and links are not compared.
GroundingResult Ground(std::string_view claim, const std::vector<std::string_view>& evidence,
                       const std::vector<std::string>& kinds,
                       GroundingMode mode = GroundingMode::kStrict, std::string_view repo = {});

/// release_gate.py's `claim.strip()` is empty: nothing but whitespace (ASCII and Unicode
/// spaces, as Python's str.isspace) or nothing at all.
bool IsBlankClaim(std::string_view claim);

/// Checks every `--require` pattern compiles with RE2 (linear time: no claim can make a
/// pattern hang). Error (code "usage"): `bad --require regex '<rx>': <RE2 error>` for the
/// first bad one; RE2 refuses backreferences and lookarounds, which Python's re accepts.
Status CheckRequirePatterns(const std::vector<std::string>& patterns);

/// Ok when `repo` reads `owner/name` (letters, digits, '.', '-', '_' on both sides of one '/');
/// else code "usage", `bad --repo '<repo>': want owner/name, as in github.com/owner/name`.
Status CheckRepoName(std::string_view repo);

/// `required pattern absent: <rx>` for every pattern RE2 finds nowhere in `claim`, in order
/// (a pattern that does not compile counts as absent).
std::vector<std::string> RequireReasons(std::string_view claim,
                                        const std::vector<std::string>& patterns);

/// release_gate.py's verify(): "empty claim" alone for a blank claim; else the grounding
/// reasons (kinds in the order given, tokens sorted within a kind) followed by
/// Ok when `repo` reads `owner/name` (letters, digits, '.', '-', '_' on both sides of one '/');
/// else code "usage", `bad --repo '<repo>': want owner/name, as in github.com/owner/name`.
Status CheckRepoName(std::string_view repo);

/// `required pattern absent: <rx>` for every pattern RE2 finds nowhere in the claim (a pattern
/// that does not compile counts as absent; validate with CheckRequirePatterns first).
/// `utf8_checked` (optional) receives GroundingResult::utf8_checked (all 0 when Ground did not
/// run: a blank claim, or kCompat mode): evidence may be passed unchecked, and checked after.
std::vector<std::string> VerifyClaim(std::string_view claim,
                                     const std::vector<std::string_view>& evidence,
                                     const GroundingOptions& options,
                                     std::vector<size_t>* utf8_checked = nullptr);

/// `text` without a leading UTF-8 byte order mark.
std::string_view StripBom(std::string_view text);

/// Ok when `text` is valid UTF-8; else code "corrupt", message
/// `<label>: not valid UTF-8 (byte 0x<hh> at offset <n>)` (release_gate.py refuses such files).
/// `checked`: a prefix already known well-formed with a character starting at its end
/// (GroundingResult::utf8_checked), not read again; the same result as with 0.
Status CheckUtf8(std::string_view text, std::string_view label, size_t checked = 0);

/// `bidi control U+202E RIGHT-TO-LEFT OVERRIDE in the claim (line L:C, N in all): …` per bidi
/// finding, then
/// `<kind> not in evidence: <token> (line L:C; evidence has <nearest>)` per ungrounded token
/// (without the parenthesis in kCompat mode, as release_gate.py prints it), then
/// `link text does not match its target: [text](url) (line L:C)` per mismatched link.
std::vector<std::string> GroundingReasons(const GroundingResult& result);

/// Keys JSON evidence never contributes through: system_prompt, policy, seed, history,
/// constitution (release_gate.py's list).
const std::vector<std::string>& DefaultExcludedKeys();

/// The evidence text of a JSON document: every string value (and every number, as its JSON
/// text) one per line, skipping the value of any excluded key (DefaultExcludedKeys plus
/// `extra_excluded_keys`) in any object at any depth, arrays included. Keys themselves
/// contribute nothing. A leading UTF-8 BOM is tolerated. Unparsable JSON (truncated, trailing
/// garbage, invalid UTF-8) → code "corrupt", message `evidence <label> is not valid JSON: …`.
Result<std::string> JsonEvidenceText(std::string_view json, std::string_view label,
                                     const std::vector<std::string>& extra_excluded_keys);

/// release_gate.py's JSON evidence text (--compat): a top-level object minus the excluded
/// top-level keys, serialised as Python's json.dumps(ensure_ascii=False) does (keys included,
/// ", " and ": " separators); any other top-level value is the text itself. A leading BOM is
/// dropped. Unparsable → code "corrupt" like JsonEvidenceText.
Result<std::string> CompatJsonEvidenceText(std::string_view json, std::string_view label,
                                           const std::vector<std::string>& extra_excluded_keys);

/// Reads one evidence file through `fs`. A path ending in ".json" (any case) goes through
/// JsonEvidenceText (CompatJsonEvidenceText in kCompat mode); any other file is evidence
/// verbatim minus a leading BOM. Read errors are the FileSystem's.
Result<std::string> LoadEvidence(FileSystem& fs, const std::string& path,
                                 const std::vector<std::string>& extra_excluded_keys,
                                 GroundingMode mode = GroundingMode::kStrict);

}  // namespace devflow

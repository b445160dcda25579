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
// Whole-token grounding: the evidence's tokens are extracted with the same rules, so `#4` is
// not grounded by `#41`, `ABC-12` not by `ABC-123`, a hash prefix not by the longer hash.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/os.h"
#include "host/status.h"

namespace devflow {

/// Every kind the core knows, in canonical order: date, url, ref, hash, path, number.
const std::vector<std::string>& AllTokenKinds();

/// The kinds on when none are given: date, url, ref, hash.
const std::vector<std::string>& DefaultTokenKinds();

/// Parses a comma-separated kind list ("date,url"; spaces around names allowed; duplicates
/// dropped keeping first occurrence). Errors (code "usage"): an unknown kind, naming it and
/// the known ones; an empty list.
Result<std::vector<std::string>> ParseTokenKinds(std::string_view csv);

/// The tokens of one kind in `text`, in text order, duplicates kept, as written (hashes are not
/// case-folded here). An unknown kind yields nothing.
std::vector<std::string> ExtractTokens(std::string_view text, std::string_view kind);

/// The outcome of grounding one claim.
struct GroundingResult {
  bool grounded = true;
  /// (kind, token) per ungrounded claim token: kinds in the order requested, tokens sorted
  /// bytewise within a kind, each once.
  std::vector<std::pair<std::string, std::string>> ungrounded;
  /// Distinct claim tokens checked, over all requested kinds.
  size_t checked = 0;
};

/// Grounds every claim token of `kinds` against the evidence texts. One pass over each text:
/// the evidence's tokens go into hash sets (time linear in the evidence size), then each
/// claim token is looked up. Unknown kinds are ignored (validate with ParseTokenKinds).
GroundingResult Ground(std::string_view claim, const std::vector<std::string_view>& evidence,
                       const std::vector<std::string>& kinds);

/// `<kind> not in evidence: <token>` per ungrounded token, in result order.
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

/// Reads one evidence file through `fs`. A path ending in ".json" goes through
/// JsonEvidenceText; any other file is evidence verbatim. Read errors are the FileSystem's.
Result<std::string> LoadEvidence(FileSystem& fs, const std::string& path,
                                 const std::vector<std::string>& extra_excluded_keys);

}  // namespace devflow

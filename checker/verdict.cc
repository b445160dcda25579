// Verdict parsing: upstream's fence regex, JSON.parse and String#trim reproduced on bytes
// (reference §4.7), with our decision rule on top (issue 7 items 1, 2): the last block that
// claims to be a verdict decides, and it must be a valid one with no key twice.
#include "checker/verdict.h"
#include "host/json_depth.h"
#include "host/lookalike.h"
#include "host/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace devflow {
namespace {

constexpr std::string_view kFence = "```";

// A checker reply reaches upstream as a JS string, i.e. decoded from UTF-8 with U+FFFD for
// every maximal ill-formed subsequence; ReplaceInvalidUtf8 (host/utf8.h) does the same, so a
// stray byte does not fail a verdict that upstream would accept.

// ASCII lowercase, for the case-insensitive parts of ClaimsVerdict and the claim scan.
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// JSON.parse plus a refusal of duplicate keys at any depth: nlohmann keeps the last of two
// equal keys (JSON.parse does too), which would let `{"verdict":"veto",…,"verdict":"allow"}`
// mean whatever the reader's rule says. The parser callback sees every key of every object.
nlohmann::json ParseWithoutDuplicateKeys(const std::string& text) {
  std::vector<std::set<std::string>> open;  // keys seen, one set per open object
  bool duplicate = false;
  auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open.emplace_back();
    } else if (event == Event::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == Event::key && !open.empty()) {
      if (!open.back().insert(parsed.get<std::string>()).second) duplicate = true;
    }
    return true;
  };
  nlohmann::json value = nlohmann::json::parse(text, callback, /*allow_exceptions=*/false);
  if (duplicate) return nlohmann::json(nlohmann::json::value_t::discarded);
  return value;
}

// ---- The claim scan (FindVerdictClaim) ----

// One code point as the claim scan reads it (verdict.h, FindVerdictClaim): kSkip for what
// hides between letters, ' ' for white space, '\n' for a line end, the ASCII twin of a
// look-alike (host/lookalike.h), kOther for any other non-ASCII code point (punctuation to the
// scan).
constexpr char kSkip = 0;
constexpr char kOther = static_cast<char>(0x80);

struct Unit {
  char c;
  size_t length;
};

// The bidirectional controls that reorder what follows them on screen (`\u202Etcidrev` shows
// as "verdict"; trial12 c07).
bool IsBidiControl(char32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// A code point decoded from `length` bytes, as the scan reads it.
Unit UnitOf(char32_t cp, size_t length) {
  if (cp < 0x80) {
    if (cp == '\t' || cp == '\r' || cp == '\v' || cp == '\f') return {' ', length};
    return {static_cast<char>(cp), length};  // NUL is kSkip
  }
  // Code points that hide between letters (host/utf8.h IsDefaultIgnorable) are skipped.
  // So are combining marks (host/lookalike.h; one rides on the letter before it: `verdi\u0301ct`
  // shows as "verdíct", trial12 c01-c03), and U+FFFD, which stands for an ill-formed byte
  // (JSON.parse's reading of one, or of a lone surrogate escape `\ud800`) that is skipped where it
  // is raw.
  if (IsDefaultIgnorable(cp) || IsCombiningMark(cp) || cp == 0xFFFD) return {kSkip, length};
  if (cp == 0x2028 || cp == 0x2029) return {'\n', length};
  if (IsJsWhiteSpace(cp)) return {' ', length};
  // A look-alike of an ASCII character is that character (host/lookalike.h, the project's one
  // fold: full-width forms, dashes, digits of other scripts, Cyrillic and Greek twins, ...).
  if (const char ascii = AsciiLookAlike(cp)) return {ascii, length};
  // A Latin-1 letter with an accent is its base letter to the scan only (not a look-alike: the
  // other languages' keywords and negative words, `décision`, `refusé`, `rejeté`; issue 7
  // item 5, docs/decisions.md "Verdict words in other languages").
  if (cp >= 0xC0 && cp <= 0xFF) {
    static constexpr char kBase[] =
        "AAAAAA\0CEEEEIIII\0NOOOOO\0OUUUUY\0\0aaaaaa\0ceeeeiiii\0nooooo\0ouuuuy\0y";
    if (const char base = kBase[cp - 0xC0]) return {base, length};
  }
  return {kOther, length};
}

// The value of `min` to `max` digits in `base` (10 or 16) at text[at], or -1; `used`: how many.
long DigitsAt(std::string_view text, size_t at, size_t min, size_t max, int base, size_t* used) {
  long value = 0;
  size_t n = 0;
  for (; n < max && at + n < text.size(); ++n) {
    const char c = Lower(text[at + n]);
    const int d = c >= '0' && c <= '9'                   ? c - '0'
                  : (base == 16 && c >= 'a' && c <= 'f') ? c - 'a' + 10
                                                         : -1;
    if (d < 0) break;
    value = value * base + d;
  }
  *used = n;
  return n >= min ? value : -1;
}

// An escape that a reader of the rendered text sees as one character (trial13 e41, e50, h05):
// an HTML numeric character reference (`&#118;`, `&#x76;`), `&nbsp;`, or a JSON `\uXXXX`
// escape. Returns the code point and the escape's length, or length 0.
std::pair<char32_t, size_t> EscapeAt(std::string_view text, size_t i) {
  size_t used = 0;
  if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'u') {
    const long cp = DigitsAt(text, i + 2, 4, 4, 16, &used);
    if (cp >= 0) return {static_cast<char32_t>(cp), 6};
  } else if (text[i] == '&') {
    if (text.substr(i, 6) == "&nbsp;") return {0xA0, 6};
    if (i + 2 < text.size() && text[i + 1] == '#') {
      const bool hex = Lower(text[i + 2]) == 'x';
      const size_t at = i + 2 + (hex ? 1 : 0);
      const long cp = DigitsAt(text, at, 1, 7, hex ? 16 : 10, &used);
      if (cp >= 0 && cp <= 0x10FFFF && at + used < text.size() && text[at + used] == ';') {
        return {static_cast<char32_t>(cp), at + used + 1 - i};
      }
    }
  }
  return {0, 0};
}

Unit UnitAt(std::string_view text, size_t i) {
  const auto byte = static_cast<unsigned char>(text[i]);
  if (byte == '&' || byte == '\\') {
    const auto [cp, length] = EscapeAt(text, i);
    if (length != 0) return UnitOf(cp, length);
  }
  if (byte < 0x80) return UnitOf(byte, 1);
  const Utf8Step step = DecodeUtf8At(text, i);  // the repo's one UTF-8 decoder (host/utf8.h)
  if (!step.valid) return {kSkip, step.length};
  return UnitOf(step.cp, step.length);
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Where a clause ends in prose: a keyword and its value never straddle one ("The verdict.
// No further issues." states no verdict).
bool EndsClause(char c) { return c == '.' || c == '!' || c == '?' || c == ',' || c == ';'; }

// A word of the text: [at, end) in bytes, its first kWordKeep letters lowercased.
constexpr size_t kWordKeep = 24;
struct Word {
  size_t at = 0;
  size_t end = 0;
  char low[kWordKeep] = {};
  size_t size = 0;                 // letters in the word (may exceed kWordKeep)
  bool struck = false;             // a strike overlay rides on a letter (IsStrikeOverlay)
  std::string_view Text() const {  // "" when longer than kWordKeep
    return size <= kWordKeep ? std::string_view(low, size) : std::string_view();
  }
};

Word ReadPlainWord(std::string_view text, size_t at);

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// A combining overlay that strikes the letter it rides on (U+0334 tilde, U+0335 short and
// U+0336 long stroke, U+0337 short and U+0338 long solidus): `A̶L̶L̶O̶W̶` shows the word struck
// out, as `~~allow~~` renders it (trial15 A5).
bool IsStrikeOverlay(char32_t cp) { return cp >= 0x334 && cp <= 0x338; }

// Whether the unit at text[i] may stand between two single letters of a spelled-out word
// (ReadWord): one space, or one punctuation or symbol character — `.`, `-`, `·`, `_`, `/`,
// `•`, `|`, `:`, any non-ASCII code point the scan reads as punctuation (trial15 A5). Not a
// line end, a digit or a letter, nor an apostrophe (`I'm`, `d'un` are words with their own
// reading).
bool IsLetterSeparator(char c) {
  return c == ' ' || (c != kSkip && c != '\n' && c != '\'' && !IsWordChar(c));
}

// The word starting at text[at] (a word character), skipped code points included, as a reader
// takes it (issue 7 item 4; trial13 e33, e36):
//  - a run of 3 or more single letters each after one space, `.` or `-` is one word
//    (`V E T O`, `V.E.T.O`, `v-e-t-o` read "veto");
//  - `un`, `non` or `dis` glued by one `-` to a word is one word, kept with its `-`
//    (`un‑approved` with U+2011 reads "un-approved"; IsPrefixedPositive).
Word ReadWord(std::string_view text, size_t at) {
  Word word = ReadPlainWord(text, at);
  // The length of the separator at text[i], with the skipped code points around it (a strike
  // overlay or an accent riding on the letter before), or 0.
  const auto skip = [&](size_t p) {
    while (p < text.size() && UnitAt(text, p).c == kSkip) p += UnitAt(text, p).length;
    return p;
  };
  const auto separator_at = [&](size_t i, bool dash_only) {
    const size_t p = skip(i);
    if (p >= text.size()) return size_t{0};
    const Unit u = UnitAt(text, p);
    const bool ok = dash_only ? u.c == '-' : IsLetterSeparator(u.c);
    return ok ? skip(p + u.length) - i : size_t{0};
  };
  if (word.size == 1 && IsAsciiLetter(word.low[0])) {
    Word joined = word;
    for (size_t sep = separator_at(joined.end, false); sep != 0;
         sep = separator_at(joined.end, false)) {
      if (joined.end + sep >= text.size() || !IsAsciiLetter(UnitAt(text, joined.end + sep).c)) {
        break;
      }
      const Word next = ReadPlainWord(text, joined.end + sep);
      if (next.size != 1) break;
      if (joined.size < kWordKeep) joined.low[joined.size] = next.low[0];
      ++joined.size;
      joined.end = next.end;
      joined.struck = joined.struck || next.struck;
    }
    if (joined.size >= 3) return joined;
    return word;
  }
  const std::string_view w = word.Text();
  if (w == "un" || w == "non" || w == "dis") {
    const size_t sep = separator_at(word.end, true);
    if (sep != 0 && word.end + sep < text.size() && IsWordChar(UnitAt(text, word.end + sep).c)) {
      const Word next = ReadPlainWord(text, word.end + sep);
      Word joined = word;
      if (joined.size < kWordKeep) joined.low[joined.size] = '-';
      ++joined.size;
      for (size_t k = 0; k < next.size; ++k) {
        if (joined.size < kWordKeep) joined.low[joined.size] = k < kWordKeep ? next.low[k] : 0;
        ++joined.size;
      }
      joined.end = next.end;
      return joined;
    }
  }
  return word;
}

// The word starting at text[at] (a word character), skipped code points included.
Word ReadPlainWord(std::string_view text, size_t at) {
  Word word;
  word.at = at;
  size_t i = at;
  while (i < text.size()) {
    const Unit u = UnitAt(text, i);
    if (u.c != kSkip && !IsWordChar(u.c)) break;
    if (u.c == kSkip && static_cast<unsigned char>(text[i]) >= 0x80 &&
        IsStrikeOverlay(DecodeUtf8At(text, i).cp)) {
      word.struck = true;
    }
    if (u.c != kSkip) {
      if (word.size < kWordKeep) word.low[word.size] = Lower(u.c);
      ++word.size;
      word.end = i + u.length;
    }
    i += u.length;
  }
  return word;
}

bool OneOf(std::string_view word, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// The keywords of a verdict statement: `verdict`, `decision` and their plurals, and the same
// in German, French, Spanish and Italian as the claim scan reads them (accents stripped:
// `décision`, `decisión`); docs/decisions.md "Verdict words in other languages".
bool IsKeyword(std::string_view w) {
  return OneOf(w, {"verdict", "verdicts", "decision", "decisions", "urteil", "entscheidung",
                   "veredicto", "decisione", "verdetto"});
}

// The words that say yes, by their stems (IsPositiveWord, below).
bool IsPositiveWord(std::string_view w);

// `un-`, `non-` or `dis-` glued by a hyphen to a word that says yes: a word that says no
// (`un-approved`, `non-accepted`, `dis-allowed`; trial13 e36).
bool IsPrefixedPositive(std::string_view w) {
  const size_t dash = w.find('-');
  if (dash == std::string_view::npos) return false;
  const std::string_view prefix = w.substr(0, dash);
  return (prefix == "un" || prefix == "non" || prefix == "dis") &&
         IsPositiveWord(w.substr(dash + 1));
}

// The words that state a decision (their first word after the keyword decides it).
bool IsVerdictWord(std::string_view w) {
  return IsPrefixedPositive(w) ||
         OneOf(w, {"allow",   "allows",  "allowed",  "allowing", "admit",    "admits",   "admitted",
                   "accept",  "accepts", "accepted", "approve",  "approves", "approved", "pass",
                   "passes",  "passed",  "ok",       "okay",     "lgtm",     "yes",      "go",
                   "veto",    "vetoes",  "vetoed",   "reject",   "rejects",  "rejected", "deny",
                   "denies",  "denied",  "block",    "blocks",   "blocked",  "refuse",   "refuses",
                   "refused", "fail",    "fails",    "failed",   "decline",  "declines", "declined",
                   "no"});
}

// The negative verdict words that claim on their own after the deciding block, without the
// keyword (`Final answer: **veto**.`, `Conclusion: reject.`, `I veto this card.`): a final
// veto worded any way must not leave an earlier allow deciding. Not `block`, `fail`, `no`,
// `refuse` or `decline`: "nothing blocks this", "no issues", "if the write fails", "the parser
// refuses a bad line" are ordinary prose (they still count in a statement).
bool IsNegativeVerdictWord(std::string_view w) {
  return OneOf(w, {"veto", "vetoes", "vetoed", "vetoing", "reject", "rejects", "rejected",
                   "rejecting", "rejection", "deny", "denies", "denied", "denying"});
}

// Words that may stand between the keyword or the subject and the verdict word ("the verdict
// is veto", "my decision would be to reject", "verdict: not admitted", "I must veto", "we have
// to reject", "I'm going to veto": `m`, `re`, `ll`, `d` are the tails of I'm, we're, I'll,
// I'd); at most kMaxConnectors of them. Not `can`, `could`, `may`, `might`: "I could veto" is a
// possibility, not a statement. A negation is no connector but `not`, which a statement after
// the keyword reads as flipping the verdict word and a first-person one as ending the claim;
// `never`, `no`, `cannot` and the `n't` forms (`won`, `don`, `shouldn` + `t`) end it anyway.
bool IsConnector(std::string_view w) {
  return OneOf(w, {"is",      "was",   "be",   "would", "will", "shall",    "should", "must",
                   "remains", "stays", "to",   "i",     "we",   "hereby",   "still",  "now",
                   "a",       "not",   "have", "need",  "am",   "are",      "going",  "do",
                   "m",       "re",    "ll",   "d",     "also", "therefore"});
}

// The subject of a first-person statement: the checker speaking of its own decision.
bool IsFirstPerson(std::string_view w) { return w == "i" || w == "we"; }

// Words after which an `I` or `we` does not state the checker's decision: it starts a relative
// clause ("there is nothing I would reject", "whatever we deny") or a condition ("if I veto it,
// ..."). Not `that`, which as often introduces the statement ("I found that I must veto").
bool IsNotAssertingBefore(std::string_view w) {
  return OneOf(w, {"nothing", "anything", "something", "everything", "which", "what", "whatever",
                   "if", "unless", "whether", "when", "whenever"});
}
constexpr int kMaxConnectors = 3;

// The gap after a keyword: the units up to the next word, a clause end or the text's end.
struct Gap {
  size_t end = 0;         // where it stops
  char first = kSkip;     // its first unit
  bool marked = false;    // it holds more than spaces: punctuation or a line end
  bool key_sign = false;  // it holds ':' or '='
};

Gap ReadGap(std::string_view text, size_t at) {
  Gap gap;
  size_t i = at;
  while (i < text.size()) {
    const Unit u = UnitAt(text, i);
    if (IsWordChar(u.c) || EndsClause(u.c)) break;
    if (u.c != kSkip) {
      if (gap.first == kSkip) gap.first = u.c;
      gap.marked = gap.marked || u.c != ' ';
      gap.key_sign = gap.key_sign || u.c == ':' || u.c == '=';
    }
    i += u.length;
  }
  gap.end = i;
  return gap;
}

size_t LineEnd(std::string_view text, size_t at) {
  const size_t end = text.find('\n', at);
  return end == std::string_view::npos ? text.size() : end;
}

// Whether the keyword `word` (verdict or decision) starts a claim; `line_start`: only
// punctuation and spaces precede it on its line; `before`: the unit just before it.
std::optional<VerdictClaim> ClaimAt(std::string_view text, const Word& word, bool line_start,
                                    char before, ClaimForms forms) {
  Gap gap = ReadGap(text, word.end);
  if (word.Text() == "verdict") {
    if ((before == '"' || before == '\'') && gap.first == before) {
      return VerdictClaim{word.at, LineEnd(text, word.at)};  // "verdict" or 'verdict'
    }
    if (line_start && gap.key_sign) return VerdictClaim{word.at, LineEnd(text, word.at)};
  }
  if (forms != ClaimForms::kKeysAndStatements) return std::nullopt;
  bool joined = gap.marked;
  for (int connectors = 0; gap.end < text.size(); ++connectors) {
    if (!IsWordChar(UnitAt(text, gap.end).c)) return std::nullopt;  // a clause ends
    const Word next = ReadWord(text, gap.end);
    if (joined && IsVerdictWord(next.Text())) return VerdictClaim{word.at, next.end};
    if (connectors == kMaxConnectors || !IsConnector(next.Text())) return std::nullopt;
    joined = true;
    const Gap after = ReadGap(text, next.end);
    gap.end = after.end;
  }
  return std::nullopt;
}

// ---- The statement rules (StatedVeto) ----

// The negative words a statement states a veto with (the clause rule below): the claim scan's
// negative words and every word a reader takes for a refusal in a verdict's clause ("Verdict:
// FAILED.", "Decision: declined.", "Verdict: unacceptable.", "Verdict: negative."; trial13 R1).
bool IsStatedNegativeWord(std::string_view w) {
  return IsNegativeVerdictWord(w) ||
         OneOf(w, {"denial",       "block",       "blocks",      "blocked",     "blocking",
                   "blocker",      "fail",        "fails",       "failed",      "failing",
                   "failure",      "decline",     "declines",    "declined",    "declining",
                   "disapprove",   "disapproves", "disapproved", "disapproval", "unacceptable",
                   "negative",     "refuse",      "refuses",     "refused",     "refusal",
                   "nogo",         "unapproved",  "disallow",    "disallows",   "disallowed",
                   "inadmissible", "nay",         "withheld",    "withhold",    "withholds"}) ||
         IsPrefixedPositive(w) ||
         // Other languages (docs/decisions.md "Verdict words in other languages"), accents
         // stripped as the scan reads them: German, French, Spanish, Italian.
         OneOf(w, {"abgelehnt", "ablehnung", "ablehnen", "verweigert", "zuruckgewiesen", "rejete",
                   "rejetee", "rejet", "refusee", "rechazado", "rechazada", "rechazo", "denegado",
                   "denegada", "rifiutato", "rifiutata", "rifiuto", "respinto", "respinta"});
}

// The signs a reader takes for a refusal: 👎 ❌ ❎ ✗ ✘ ✖ ⛔ 🚫 🛑 (trial13 e45,
// trial14 R8), and the red of a traffic light, 🔴 🟥 (trial15).
bool IsNegativeSign(char32_t cp) {
  return cp == 0x1F44E || cp == 0x274C || cp == 0x274E || cp == 0x2717 || cp == 0x2718 ||
         cp == 0x2716 || cp == 0x26D4 || cp == 0x1F6AB || cp == 0x1F6D1 || cp == 0x1F534 ||
         cp == 0x1F7E5;
}

// Review words that refuse only as a statement's answer, in the keyword's clause or after a
// label (trial15: "Verdict: REVISE AND RESUBMIT", "Decision: hold", "Verdict: insufficient"):
// not in an allow's own words, where "all claims hold" or "revise the naming later" describe.
bool IsAnswerOnlyNegativeWord(std::string_view w) {
  return OneOf(
      w, {"hold", "revise", "resubmit", "rework", "insufficient", "inadequate", "unsatisfactory"});
}

// The words that say yes, by their stems: a negation before one states a refusal ("Decision:
// I cannot approve this.", "Verdict: do not merge.", "no-go", "not acceptable").
bool IsPositiveWord(std::string_view w) {
  for (std::string_view stem :
       {"allow", "admit", "accept", "approv", "pass", "merg", "proceed", "ship", "ready"}) {
    if (w.substr(0, stem.size()) == stem) return true;
  }
  return OneOf(w, {"ok", "okay", "lgtm", "go", "yes"});
}

// The positive words of a statement (the clause rule, a first-person or reviewer statement):
// IsPositiveWord's and `recommend` (trial15: "Verdict: would not recommend moving forward").
// Not in an allow's own words, where "I would not recommend renaming it" is advice.
bool IsStatedPositiveWord(std::string_view w) {
  return IsPositiveWord(w) || w.substr(0, 9) == "recommend";
}

// A negation: `not`, `no`, `never`, `cannot`, `nor`, the `t` of an `n't` and the forms written
// without the apostrophe.
bool IsNegation(std::string_view w) {
  return OneOf(w, {"not", "no", "never", "cannot", "nor", "t", "dont", "cant", "wont", "isnt",
                   "shouldnt", "wouldnt", "doesnt", "didnt", "mustnt"});
}

// How many words after a negation a positive word may stand ("not going to approve").
constexpr size_t kNegationReach = 4;

// Two words that state a refusal together, in review wording (trial14 R8): `changes requested`,
// `request changes` (GitHub's word for a veto), `needs work`.
bool IsRefusalPair(std::string_view a, std::string_view b) {
  const auto request = [](std::string_view w) {
    return OneOf(w, {"request", "requests", "requested", "requesting"});
  };
  return (a == "changes" && request(b)) || (request(a) && b == "changes") ||
         (OneOf(a, {"needs", "need"}) && b == "work");
}

// Whether the word at `word` is a keyword: `verdict` or `decision`, or one ending a camelCase
// word (`finalVerdict`, `reviewDecision`; trial14 R5).
bool IsClauseKeyword(std::string_view text, const Word& word) {
  const std::string_view w = word.Text();
  if (IsKeyword(w)) return true;  // plurals and other languages (IsKeyword) too
  const std::string_view raw = text.substr(word.at, word.end - word.at);
  for (std::string_view part : {"Verdict", "VERDICT", "Decision", "DECISION"}) {
    const size_t at = raw.rfind(part);
    if (at != std::string_view::npos && at > 0 && at + part.size() == raw.size() &&
        raw[at - 1] >= 'a' && raw[at - 1] <= 'z') {
      return true;
    }
  }
  return false;
}

// A clause of prose as the statement rule reads it: its words and signs, in order.
struct ClauseToken {
  enum Kind { kKeyword, kNegative, kPositive, kNegation, kOr, kOther } kind;
  size_t at, end;
  bool soft_before;  // only spaces, quotes, backticks, `*`, `_`, `|`, `/` since the last token
  bool bar_before;   // and among them a `|` or `/`: `"allow" | "veto"` offers a choice
};

// Whether the verdict word t[i] is offered as one of a choice with a word of the other kind
// (`"allow" | "veto"` as the contract writes it, `allow/veto`, `allow or veto`): it names the
// choices and states nothing.
bool Offered(const std::vector<ClauseToken>& t, size_t i) {
  const auto other = [&](size_t j) {
    return (t[j].kind == ClauseToken::kPositive || t[j].kind == ClauseToken::kNegative) &&
           t[j].kind != t[i].kind;
  };
  const auto linked = [&](size_t a, size_t b) {  // b == a + 1, or b == a + 2 across an `or`
    if (b == a + 1) return t[b].soft_before && t[b].bar_before;
    return t[a + 1].kind == ClauseToken::kOr && t[a + 1].soft_before && t[b].soft_before;
  };
  for (size_t d = 1; d <= 2; ++d) {
    if (i >= d && other(i - d) && linked(i - d, i)) return true;
    if (i + d < t.size() && other(i + d) && linked(i, i + d)) return true;
  }
  return false;
}

// The veto a clause that holds the keyword states, if any: its first negative word not offered
// as a choice, or its first positive word within kNegationReach words after a negation. The
// claim spans that and the keyword.
std::optional<VerdictClaim> ClauseVeto(const std::vector<ClauseToken>& t) {
  const auto key = std::find_if(
      t.begin(), t.end(), [](const ClauseToken& k) { return k.kind == ClauseToken::kKeyword; });
  if (key == t.end()) return std::nullopt;
  const auto claim = [&](size_t from, size_t to) {
    return VerdictClaim{std::min(key->at, t[from].at), std::max(key->end, t[to].end)};
  };
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind == ClauseToken::kNegative && !Offered(t, i)) return claim(i, i);
    if (t[i].kind != ClauseToken::kNegation) continue;
    for (size_t j = i + 1; j < t.size() && j <= i + kNegationReach; ++j) {
      if (t[j].kind == ClauseToken::kPositive) return claim(i, j);
    }
  }
  return std::nullopt;
}

// The clause rule (issue 7 item 1; trial13 R1): a verdict statement is the clause that holds
// the keyword `verdict` or `decision`, wherever in it the keyword stands. A clause runs to a
// sentence end (`.`, `!`, `?`) or a blank line; markup (`**`, `<b>`, `(final)`, `|`, `:`,
// commas, a single line end, so a whole Markdown table) does not end it, nor does a blank line
// right after the keyword (a heading `## Verdict`, a setext `Decision` + `====`): the
// heading's next paragraph is in its clause. The clause states a veto when it holds a negative
// word (IsStatedNegativeWord, a negative sign) not offered as a choice, or a negation before a
// positive word.
//
// A footnote referenced in the keyword's clause (`Verdict: see [^1].` ... `[^1]: veto`;
// trial14 R9) is read as that clause: its definition's first clause states the veto, as a
// reader who follows the reference reads it. `seeded`: `text` is such a definition.
std::optional<VerdictClaim> ClauseStatedVeto(std::string_view text, bool seeded = false) {
  std::vector<ClauseToken> tokens;
  std::vector<std::string_view> notes;  // footnote labels referenced in keyword clauses
  std::vector<std::string_view> refs;   // footnote labels referenced in this clause
  bool soft = true, bar = false;        // the gap since the last token
  bool struck = false;                  // inside `~~...~~`: a positive word struck out refuses
  int line_ends = 0;                    // line ends since the last visible unit
  const auto push = [&](ClauseToken::Kind kind, size_t at, size_t end) {
    tokens.push_back(ClauseToken{kind, at, end, soft, bar});
    soft = true;
    bar = false;
  };
  if (seeded) tokens.push_back(ClauseToken{ClauseToken::kKeyword, 0, 0, true, false});
  const auto end_clause = [&]() {
    const std::optional<VerdictClaim> claim = ClauseVeto(tokens);
    const bool keyword = std::any_of(tokens.begin(), tokens.end(), [](const ClauseToken& k) {
      return k.kind == ClauseToken::kKeyword;
    });
    if (keyword) notes.insert(notes.end(), refs.begin(), refs.end());
    refs.clear();
    tokens.clear();
    soft = true;
    bar = false;
    struck = false;
    return claim;
  };
  for (size_t i = 0; i < text.size();) {
    const Unit u = UnitAt(text, i);
    if (u.c == kSkip || u.c == ' ') {
      i += u.length;
      continue;
    }
    if (u.c == '\n') {
      // A blank line ends the clause, unless the keyword is its last word (a heading).
      if (++line_ends == 2 && !tokens.empty() && tokens.back().kind != ClauseToken::kKeyword) {
        if (auto claim = end_clause()) return claim;
      }
      i += u.length;
      continue;
    }
    line_ends = 0;
    if (IsWordChar(u.c)) {
      const Word word = ReadWord(text, i);
      const std::string_view w = word.Text();
      ClauseToken::Kind kind = ClauseToken::kOther;
      Word pair;  // the word after, when the two state a refusal together (IsRefusalPair)
      const Gap gap = ReadGap(text, word.end);
      if (gap.end < text.size() && IsWordChar(UnitAt(text, gap.end).c)) {
        const Word next = ReadWord(text, gap.end);
        if (IsRefusalPair(w, next.Text())) pair = next;
      }
      if (IsClauseKeyword(text, word)) {
        kind = ClauseToken::kKeyword;
      } else if (pair.end != 0) {
        // "no changes requested" requests none.
        const bool negated = !tokens.empty() && tokens.back().kind == ClauseToken::kNegation;
        push(negated ? ClauseToken::kOther : ClauseToken::kNegative, word.at, pair.end);
        i = pair.end;
        continue;
      } else if (IsStatedNegativeWord(w) || IsAnswerOnlyNegativeWord(w) ||
                 ((struck || word.struck) && IsPositiveWord(w))) {
        kind = ClauseToken::kNegative;
      } else if (IsNegation(w)) {
        kind = ClauseToken::kNegation;
      } else if (IsStatedPositiveWord(w)) {
        kind = ClauseToken::kPositive;
      } else if (w == "or") {
        kind = ClauseToken::kOr;
      }
      push(kind, word.at, word.end);
      i = word.end;
      continue;
    }
    if (u.c == '.' || u.c == '!' || u.c == '?') {
      if (auto claim = end_clause()) return claim;
      if (seeded) return std::nullopt;
    } else if (u.c == '[' && text.substr(i, 2) == "[^") {
      const size_t close = text.find_first_of("]\n ", i + 2);
      if (close != std::string_view::npos && text[close] == ']' && close > i + 2) {
        refs.push_back(text.substr(i + 2, close - i - 2));
        // The definition `[^label]:` is not a reference.
        if (close + 1 < text.size() && text[close + 1] == ':') refs.pop_back();
        i = close + 1;
        continue;
      }
    } else if (u.c == kOther && IsNegativeSign(DecodeUtf8At(text, i).cp)) {
      push(ClauseToken::kNegative, i, i + u.length);
    } else if (u.c == '~' && i + 1 < text.size() && text[i + 1] == '~' &&
               (i == 0 || text[i - 1] != '~') && (i + 2 >= text.size() || text[i + 2] != '~')) {
      // `~~allow~~`: the allow struck out (trial14 R9); exactly two: a run of three or more is
      // a `~~~` fence, not a strike.
      struck = !struck;
      i += 2;
      continue;
    } else {
      const bool soft_unit = u.c == '"' || u.c == '\'' || u.c == '`' || u.c == '*' || u.c == '_' ||
                             u.c == '|' || u.c == '/';
      soft = soft && soft_unit;
      bar = bar || u.c == '|' || u.c == '/';
    }
    i += u.length;
  }
  if (auto claim = end_clause()) return claim;
  if (seeded) return std::nullopt;
  for (const std::string_view label : notes) {
    const std::string mark = "[^" + std::string(label) + "]:";
    for (size_t at = text.find(mark); at != std::string_view::npos; at = text.find(mark, at + 1)) {
      if (at != 0 && text[at - 1] != '\n') continue;  // a definition starts its line
      const size_t from = at + mark.size();
      if (auto claim = ClauseStatedVeto(text.substr(from), true)) {
        return VerdictClaim{at, from + claim->end};
      }
    }
  }
  return std::nullopt;
}

// The words a first-person statement refuses with (StatedVeto): the negative verdict words
// and the verbs of a refusal, `block`, `refuse`, `decline`, `disapprove`, `disallow` and
// their forms ("We must block this card"; trial14 R6). Not `fail`: "we fail closed" is how a
// design is described.
bool IsFirstPersonRefusal(std::string_view w) {
  return IsNegativeVerdictWord(w) ||
         OneOf(w, {"block", "blocks", "blocking", "refuse", "refuses", "refusing", "decline",
                   "declines", "declining", "disapprove", "disapproves", "disallow", "disallows"});
}

// The subjects of a passive refusal: the thing judged ("This card should be vetoed").
bool IsPassiveSubject(std::string_view w) {
  return OneOf(w, {"card", "move", "transition", "design", "change"});
}

// The participles a passive refusal ends with.
bool IsRefusedParticiple(std::string_view w) {
  return OneOf(w, {"vetoed", "rejected", "denied", "blocked", "refused", "declined", "disapproved",
                   "disallowed"});
}

// The refusal a labelled answer's clause starts with (StatedVetoIn: "Status: 🛑", "Outcome:
// rejected", "Recommendation: do not merge"), read from `at` (after the label's `:`) to the
// clause's end (`.` `!` `?` `,` `;` or a line end): its first token a negative word
// (IsStatedNegativeWord, IsAnswerOnlyNegativeWord), sign or struck-out positive word
// (`Answer: ~~yes~~`, `<s>approved</s>`; session 16), or a negation among its first two
// tokens with a positive word (IsStatedPositiveWord) within kNegationReach words after it.
// Returns the refusal's span. `at`: the label's end; its `:` or `=` is skipped first.
std::optional<VerdictClaim> LabelledRefusal(std::string_view text, size_t at) {
  size_t negation = 0;  // tokens since a negation among the first two; 0: none
  bool labelled = false;
  bool struck = false;  // inside `~~...~~` (a strike element reads as one: Unmarked)
  for (size_t i = at, tokens = 0; i < text.size();) {
    const Unit u = UnitAt(text, i);
    if (EndsClause(u.c) || u.c == '\n') break;
    if (!labelled) {
      labelled = u.c == ':' || u.c == '=';
      i += u.length;
      continue;
    }
    if (u.c == '~' && text.substr(i, 2) == "~~" && text.substr(i, 3) != "~~~" &&
        (i == 0 || text[i - 1] != '~')) {
      struck = !struck;
      i += 2;
      continue;
    }
    if (u.c == kOther && IsNegativeSign(DecodeUtf8At(text, i).cp)) {
      if (tokens == 0) return VerdictClaim{i, i + u.length};
      ++tokens;
    } else if (IsWordChar(u.c)) {
      const Word word = ReadWord(text, i);
      const std::string_view w = word.Text();
      // The answer struck out (`Answer: ~~yes~~`, `<s>approved</s>`) refuses, as in a keyword
      // clause (ClauseStatedVeto).
      if (tokens == 0 && (IsStatedNegativeWord(w) || IsAnswerOnlyNegativeWord(w) ||
                          ((struck || word.struck) && IsPositiveWord(w)))) {
        return VerdictClaim{word.at, word.end};
      }
      if (negation != 0 && IsStatedPositiveWord(w)) return VerdictClaim{at, word.end};
      if (negation != 0 && ++negation > kNegationReach + 1) break;
      if (tokens < 2 && negation == 0 && IsNegation(w)) negation = 1;
      ++tokens;
      i = word.end;
      continue;
    }
    i += u.length;
  }
  return std::nullopt;
}

// The subjects that speak for the checker in the third person (trial15: "Our review rejects
// this design"): the review, the reviewer, the checker, the gate, its assessment.
bool IsReviewerSubject(std::string_view w) {
  return OneOf(w, {"review", "reviewer", "reviewers", "checker", "gate", "assessment", "evaluation",
                   "analysis", "audit", "auditor"});
}

// A word that may stand between a statement's subject and its verb (StatedVetoIn): a
// connecting word (IsConnector, and `decided`, `chosen`, `all`), `and`, or an adverb — a word
// ending in `ly` (`strongly`, `formally`, `regretfully`) or `hereby`, `thus`, `hence`
// (trial15: "I hereby and formally veto", "I also have to strongly reject it").
bool IsChainWord(std::string_view w) {
  return IsConnector(w) || OneOf(w, {"decided", "chosen", "all", "and", "thus", "hence"}) ||
         (w.size() >= 4 && w.substr(w.size() - 2) == "ly");
}

// The auxiliaries of an `n't` (or `not`) that a statement's chain may hold only right before
// that negation: "I can't approve", "we couldn't merge", "I won't approve". Alone `can`,
// `could` state a possibility ("I could veto on style"), and the chain ends there.
bool IsNegatedAuxiliary(std::string_view w) {
  return OneOf(w, {"can", "could", "won", "don", "didn", "doesn", "couldn", "shouldn", "wouldn",
                   "mustn", "isn", "aren", "wasn", "weren", "haven", "hasn"});
}

// How many words may stand between a statement's subject and its verb (IsChainWord's, an
// auxiliary before its negation, the negation): "I am going to have to reject it" holds five.
constexpr int kMaxChainWords = 8;

// A veto stated in prose before the deciding allow: the clause rule (ClauseStatedVeto), or a
// statement with a subject, or a sentence that starts with the refusal. Of these, the earliest
// is quoted. The statements with a subject:
//  - the checker in the first person, `I` or `we`, or the checker's review as the subject in
//    the third person (IsReviewerSubject: "Our review rejects this design"; trial15), not after
//    IsNotAssertingBefore's words in its clause; then up to kMaxChainWords words that join a
//    subject to its verb (IsChainWord: "must", "have to", "am going to", "hereby", "also",
//    "and", an adverb in `ly`; an auxiliary right before its negation); then a refusal
//    (IsFirstPersonRefusal: "I must veto this card", "we reject it", "I'm going to veto";
//    trial12 d03, trial14 R6), or `say no` ("I have to say no to this card"). Between the
//    subject and the chain may stand an aside, comma-delimited or in parentheses ("I, for one,
//    veto", "We (the checker) reject"; trial14 R10), and `no choice but`, `no option but`, `no
//    alternative but` ("I have no choice but to veto"; trial15) joins like a chain word;
//  - with a negation in that chain (`not`, `never`, `cannot`, `n't`, `no`), a refusal states
//    none ("I do not veto", "I won't veto", "I have no need to veto"), but a positive word
//    does (IsStatedPositiveWord: "I cannot approve this", "I will not approve it", "Our review
//    does not recommend it"; trial15), except `go` and a positive word followed by `of` ("I do
//    not approve of the naming": a liking, not a decision);
//  - the thing judged in the passive (IsPassiveSubject, IsRefusedParticiple: "This card should
//    be vetoed"; trial14 R6).
// "I see no reason to veto", "there is nothing I would reject", "I could veto on style" state
// none. A sentence (or line) that starts with `Veto`, `Reject`, `Deny` or a refusal's
// participle (`Vetoed`, `Rejected`, `Denied`, `Refused`, `Declined`, `Blocked`; trial15
// "Vetoed: REQ-7 missing."), followed by a sentence end, a line end, `:` or `this`, `the`,
// `it` ("Veto this card.", "Reject."), states a veto too; and so does a labelled answer: a
// sentence that starts with `Status`, `Result`, `Outcome`, `Conclusion`, `Recommendation`,
// `Assessment`, `Ruling`, `Vote` or `Answer` and `:` or `=`, whose clause starts with a negative
// word or sign or puts a negation before a positive word ("Status: 🛑", "Outcome: rejected",
// "Recommendation: do not merge"; trial15).
std::optional<VerdictClaim> StatedVetoIn(std::string_view text) {
  const std::optional<VerdictClaim> clause = ClauseStatedVeto(text);
  Word prev;                   // the word before, in this clause (none after a clause end)
  bool sentence_start = true;  // no word since the text's start, a sentence end or a line end
  // The word starting at `at` (after a gap), or an empty Word when none does.
  const auto word_at = [&](size_t at) {
    return at < text.size() && IsWordChar(UnitAt(text, at).c) ? ReadWord(text, at) : Word();
  };
  for (size_t i = 0; i < text.size() && (!clause || i < clause->at);) {
    const Unit u = UnitAt(text, i);
    if (!IsWordChar(u.c)) {
      if (EndsClause(u.c) || u.c == ':') prev = Word();
      // (The `!` of an HTML comment's `<!--` ends no sentence.)
      if (u.c == '.' || (u.c == '!' && (i == 0 || text[i - 1] != '<')) || u.c == '?' ||
          u.c == '\n') {
        sentence_start = true;
      }
      i += u.length;
      continue;
    }
    const Word word = ReadWord(text, i);
    i = word.end;
    if (std::exchange(sentence_start, false)) {
      const Gap gap = ReadGap(text, word.end);
      if (OneOf(word.Text(), {"veto", "reject", "deny", "vetoed", "rejected", "denied", "refused",
                              "declined", "blocked"})) {
        const bool ends = gap.end >= text.size() || UnitAt(text, gap.end).c == '.' ||
                          UnitAt(text, gap.end).c == '!' || gap.key_sign ||
                          text.substr(word.end, gap.end - word.end).find('\n') != std::string::npos;
        if (ends || OneOf(word_at(gap.end).Text(), {"this", "the", "it"})) {
          return VerdictClaim{word.at, word.end};
        }
      }
      if (gap.key_sign &&
          OneOf(word.Text(), {"status", "result", "outcome", "conclusion", "recommendation",
                              "assessment", "ruling", "vote", "answer"})) {
        if (auto answer = LabelledRefusal(text, word.end)) {
          return VerdictClaim{word.at, answer->end};
        }
      }
    }
    const bool asserting = !IsNotAssertingBefore(prev.Text());
    const bool first_person = IsFirstPerson(word.Text()) && asserting;
    const bool reviewer = IsReviewerSubject(word.Text()) && asserting;
    // The card itself as the subject of a passive refusal (trial14 R6): "This card should be
    // vetoed", "the design is rejected".
    const bool passive = IsPassiveSubject(word.Text()) && asserting;
    prev = word;
    if (!first_person && !reviewer && !passive) continue;
    size_t from = word.end;  // past an aside: ", for one," or "(the checker)"
    if (first_person || reviewer) {
      size_t p = from;
      while (p < text.size() && text[p] == ' ') ++p;
      const char close = p < text.size() ? (text[p] == ',' ? ',' : text[p] == '(' ? ')' : 0) : 0;
      if (close != 0) {
        const size_t end = text.find(close, p + 1);
        constexpr size_t kAsideReach = 40;  // bytes: a few words
        if (end != std::string_view::npos && end - p <= kAsideReach &&
            text.substr(p, end - p).find('\n') == std::string_view::npos) {
          from = end + 1;
        }
      }
    }
    Gap gap = ReadGap(text, from);
    bool be = false;       // a form of `be` among the connecting words (a passive needs one)
    bool negated = false;  // a negation among them
    for (int words = 0; gap.end < text.size(); ++words) {
      if (!IsWordChar(UnitAt(text, gap.end).c)) break;  // a clause ends
      const Word next = ReadWord(text, gap.end);
      const std::string_view w = next.Text();
      const Gap after = ReadGap(text, next.end);
      if (passive) {
        if (be && IsRefusedParticiple(w)) return VerdictClaim{word.at, next.end};
      } else if (negated) {
        // "I cannot approve this", "we will not merge it"; "I do not veto" states none.
        if (IsStatedPositiveWord(w) && w != "go") {
          if (word_at(after.end).Text() == "of") break;  // "approve of": a liking
          return VerdictClaim{word.at, next.end};
        }
        if (IsFirstPersonRefusal(w)) break;
      } else if (IsFirstPersonRefusal(w)) {
        // "I, for one, reject nothing here" refuses nothing.
        if (OneOf(word_at(after.end).Text(), {"nothing", "none", "no", "neither"})) break;
        return VerdictClaim{word.at, next.end};
      } else if (OneOf(w, {"say", "saying"})) {  // "I have to say no to this card"
        const Word answer = word_at(after.end);
        // `no` as the answer: "say no." or "say no to it", not "say no issues remain".
        if (answer.Text() == "no") {
          const Gap rest = ReadGap(text, answer.end);
          const bool ends = rest.end >= text.size() || !IsWordChar(UnitAt(text, rest.end).c);
          if (ends || ReadWord(text, rest.end).Text() == "to") {
            return VerdictClaim{word.at, answer.end};
          }
        }
        break;
      }
      // A positive verdict word (not a negation's `no`) ends it.
      if ((IsVerdictWord(w) && !IsNegation(w)) || IsNegativeVerdictWord(w)) break;
      if (words >= kMaxChainWords) break;
      size_t resume = after.end;  // where the chain goes on
      if (!passive && w == "no" &&
          OneOf(word_at(after.end).Text(), {"choice", "option", "alternative"})) {
        // "I have no choice but to veto": the idiom joins, it negates nothing.
        const Word noun = word_at(after.end);
        const Word but = word_at(ReadGap(text, noun.end).end);
        if (but.Text() != "but") break;
        resume = ReadGap(text, but.end).end;
      } else if (IsNegation(w)) {
        if (passive) break;  // "The design is not rejected by any REQ"
        negated = true;
      } else if (!passive && IsNegatedAuxiliary(w)) {
        if (!IsNegation(word_at(after.end).Text())) break;  // "I could veto": a possibility
      } else if (!IsChainWord(w)) {
        break;
      }
      be = be || OneOf(w, {"be", "is", "was", "are"});
      gap.end = resume;
    }
  }
  return clause;
}

// Whether `tag` (`<...>`, a start or end tag) opens or closes a strike element, `<s>`, `<del>`
// or `<strike>` (attributes allowed, any case): a browser draws its text struck out, as
// `~~...~~` renders (trial16; `<del>approve</del>` read as a plain "approve").
bool IsStrikeTag(std::string_view tag) {
  size_t at = tag[1] == '/' ? 2 : 1;
  size_t n = 0;
  while (at + n < tag.size() && IsAsciiLetter(tag[at + n])) ++n;
  const char next = at + n < tag.size() ? tag[at + n] : '>';
  if (next != '>' && next != ' ' && next != '\t' && next != '/') return false;
  std::string name(tag.substr(at, n));
  for (char& ch : name) ch = Lower(ch);
  return name == "s" || name == "del" || name == "strike";
}

// `text` with its inline markup hidden (trial14 R5, R9): HTML comments, inline tags
// (`<span>`, `</b>`), emphasis and strike markers (`*`, `_`, `~`), code span backticks
// (trial15 A9) and a hyphen at a line end between letters (`ve-` + line end + `to`) become NUL,
// which the scan skips as it skips a zero-width space, so `Ver<span>dict</span>`, `Ver**dict**`,
// ``VE`TO` `` and `ve-\nto` are one word and `Verdict: <!-- -->veto` one clause. A strike
// element's tags (IsStrikeTag) become `~~` and NULs, so `<del>allow</del>` is read struck out as
// `~~allow~~` is (the one strike the scans read). Same length, so offsets hold. nullopt when
// none found.
std::optional<std::string> Unmarked(std::string_view text) {
  std::string out(text);
  bool changed = false;
  const auto hide = [&](size_t from, size_t to) {
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(from),
              out.begin() + static_cast<std::ptrdiff_t>(to), '\0');
    changed = true;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '*' || c == '_' || c == '~' || c == '`') {
      hide(i, i + 1);
    } else if (c == '<' && text.substr(i, 4) == "<!--") {
      const size_t end = text.find("-->", i + 4);
      if (end == std::string_view::npos) continue;
      hide(i, end + 3);
      i = end + 2;
    } else if (c == '<' && i + 1 < text.size() && (IsWordChar(text[i + 1]) || text[i + 1] == '/')) {
      const size_t end = text.find_first_of("<>\n", i + 1);
      if (end == std::string_view::npos || text[end] != '>') continue;
      hide(i, end + 1);
      if (IsStrikeTag(text.substr(i, end + 1 - i))) out[i] = out[i + 1] = '~';
      i = end;
    } else if (c == '-' && i > 0 && IsWordChar(text[i - 1]) && i + 1 < text.size() &&
               text[i + 1] == '\n') {
      size_t j = i + 2;
      while (j < text.size() && text[j] == ' ') ++j;
      if (j < text.size() && IsWordChar(text[j])) hide(i, j);
    }
  }
  if (!changed) return std::nullopt;
  return out;
}

// The markup read-through (trial14 R5, R9; trial15 A9): the first claim `scan` finds in `text`
// as written, else with its inline markup hidden (Unmarked); offsets into `text` either way.
// The prose before the deciding block (StatedVeto) and an allow's own words (OwnWordsClaim)
// are both read through it.
template <typename Scan>
std::optional<VerdictClaim> ReadThroughMarkup(std::string_view text, const Scan& scan) {
  if (auto claim = scan(text)) return claim;
  const std::optional<std::string> unmarked = Unmarked(text);
  if (!unmarked) return std::nullopt;
  return scan(std::string_view(*unmarked));
}

// A veto stated in prose (StatedVetoIn), as written or with its inline markup hidden.
std::optional<VerdictClaim> StatedVeto(std::string_view text) {
  return ReadThroughMarkup(text, [](std::string_view s) { return StatedVetoIn(s); });
}

}  // namespace

std::optional<VerdictClaim> FindVerdictClaim(std::string_view text, ClaimForms forms) {
  bool line_start = true;  // nothing but punctuation and spaces so far on this line
  char before = '\n';      // the last unit read (not kSkip)
  for (size_t i = 0; i < text.size();) {
    const Unit u = UnitAt(text, i);
    if (u.c == kSkip) {
      i += u.length;
      continue;
    }
    if (IsWordChar(u.c)) {
      const Word word = ReadWord(text, i);
      const std::string_view low = word.Text();
      if (IsKeyword(low)) {
        if (auto claim = ClaimAt(text, word, line_start, before, forms)) return claim;
      } else if (forms == ClaimForms::kKeysAndStatements && IsNegativeVerdictWord(low)) {
        return VerdictClaim{word.at, word.end};
      }
      line_start = false;
      before = 'a';
      i = word.end;
      continue;
    }
    if (u.c == '\n') {
      line_start = true;
    } else if (EndsClause(u.c)) {
      line_start = false;
    }
    before = u.c;
    i += u.length;
  }
  return std::nullopt;
}

namespace {

// ---- The CommonMark reading of the reply (FencedBlocks' `nested`) ----

constexpr std::string_view kInComment = "inside an HTML comment";
constexpr std::string_view kInDetails = "inside a <details> element";
constexpr std::string_view kInTildeFence = "inside a ~~~ fence";
constexpr std::string_view kInBacktickFence = "inside a ``` fence";
constexpr std::string_view kInBlockquote = "inside a blockquote";
constexpr std::string_view kInIndentedCode = "inside an indented code block";
constexpr std::string_view kInListItem = "inside a list item";
constexpr std::string_view kAfterText = "after text on its line";

// The columns of a line's leading spaces and tabs (a tab to the next multiple of 4) and the
// offset of its first other byte.
std::pair<size_t, size_t> Indent(std::string_view line) {
  size_t columns = 0, at = 0;
  for (; at < line.size() && (line[at] == ' ' || line[at] == '\t'); ++at) {
    columns = line[at] == '\t' ? columns + 4 - columns % 4 : columns + 1;
  }
  return {columns, at};
}

bool IsBlankLine(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// The run of '`' or '~' that `body` (a line after its indent) starts with, when it is a fence:
// three or more, and for backticks an info string without a backtick. {0, 0} otherwise.
std::pair<char, size_t> FenceRun(std::string_view body) {
  if (body.empty() || (body[0] != '`' && body[0] != '~')) return {0, 0};
  size_t n = 0;
  while (n < body.size() && body[n] == body[0]) ++n;
  if (n < 3) return {0, 0};
  if (body[0] == '`' && body.find('`', n) != std::string_view::npos) return {0, 0};
  return {body[0], n};
}

// What hides text from a reader outside code (trial15 A8): CommonMark's HTML blocks (spec 0.30
// §4.6, start conditions 1-7) and the HTML elements a browser holds open. A fenced block after
// any of them is no top-level block (HtmlNested).
struct HtmlState {
  // Inside a construct that runs to a marker, its bytes raw (fences are not fences): a comment
  // `<!--` (to `-->`), a processing instruction `<?` (`?>`), a declaration `<!X` (`>`), CDATA
  // `<![CDATA[` (`]]>`), anywhere outside code, or a line that starts `<script`, `<pre`,
  // `<style` or `<textarea` (to its end tag; ASCII case-insensitive).
  bool in_comment = false;
  std::string until;
  bool html_block = false;        // inside an HTML block of kind 6 or 7 (up to a blank line)
  std::vector<std::string> open;  // the elements started and not yet ended, outermost first
  std::string raw_until;          // in a raw text element (`<style>`): its end tag, `</style`
  bool raw_forever = false;       // after `<plaintext>`: nothing ends it
  char in_tag = 0;            // inside a tag across lines: 0 no, '>' yes, '"' or '\'' in a value
  bool spans_unsure = false;  // a backtick run without its closer in this paragraph
};

constexpr std::string_view kInHtmlBlock = "inside an HTML block";
constexpr std::string_view kInHtmlConstruct = "inside an unclosed <! or <? construct";
constexpr std::string_view kInOpenElement = "after an HTML element left open";

// Where `marker` (lower case) next occurs in `text` from `from`, ASCII case-insensitive.
size_t FindFolded(std::string_view text, std::string_view marker, size_t from) {
  for (size_t i = from; i + marker.size() <= text.size(); ++i) {
    size_t k = 0;
    while (k < marker.size() && Lower(text[i + k]) == marker[k]) ++k;
    if (k == marker.size()) return i;
  }
  return std::string_view::npos;
}

// The tag name (lower case) `text` holds at `at`: an ASCII letter, then letters, digits and
// `-`, ended by white space, `/`, `>` or the end of `text`. "" when there is none.
std::string TagNameAt(std::string_view text, size_t at) {
  if (at >= text.size() || !IsAsciiLetter(text[at])) return {};
  size_t end = at;
  while (end < text.size() && (IsWordChar(text[end]) || text[end] == '-')) ++end;
  if (end < text.size() && !(text[end] == ' ' || text[end] == '\t' || text[end] == '\r' ||
                             text[end] == '\n' || text[end] == '/' || text[end] == '>')) {
    return {};
  }
  std::string name(text.substr(at, end - at));
  for (char& c : name) c = Lower(c);
  return name;
}

bool IsVoidElement(std::string_view name) {
  return OneOf(name, {"area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr",
                      "img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr"});
}

// The elements whose content a browser reads as raw text, up to their end tag.
bool IsRawTextElement(std::string_view name) {
  return OneOf(name, {"script", "style", "textarea", "title", "xmp", "iframe", "noembed",
                      "noframes", "noscript"});
}

// CommonMark's kind 6 block names (spec 0.30 §4.6).
bool IsBlockTagName(std::string_view name) {
  static const std::set<std::string_view> kNames = {
      "address", "article",  "aside",   "base",     "basefont", "blockquote", "body",
      "caption", "center",   "col",     "colgroup", "dd",       "details",    "dialog",
      "dir",     "div",      "dl",      "dt",       "fieldset", "figcaption", "figure",
      "footer",  "form",     "frame",   "frameset", "h1",       "h2",         "h3",
      "h4",      "h5",       "h6",      "head",     "header",   "hr",         "html",
      "iframe",  "legend",   "li",      "link",     "main",     "menu",       "menuitem",
      "nav",     "noframes", "ol",      "optgroup", "option",   "p",          "param",
      "search",  "section",  "summary", "table",    "tbody",    "td",         "tfoot",
      "th",      "thead",    "title",   "tr",       "track",    "ul"};
  return kNames.count(name) != 0;
}

// Past the rest of a tag from `i` (its attributes; quoted values may hold `>`, `<` and line
// ends): where it ends, or text.size() with state->in_tag set when it goes on past `text`.
size_t SkipTag(std::string_view text, size_t i, HtmlState* state) {
  char quote = state->in_tag == '"' || state->in_tag == '\'' ? state->in_tag : 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '>') {
      state->in_tag = 0;
      return i + 1;
    }
  }
  state->in_tag = quote != 0 ? quote : '>';
  return text.size();
}

// An end tag `</name>`: ends the latest open element of that name and every one opened inside
// it, unless one of those is a boundary of HTML's element scopes (`<table>`, `<td>`,
// `<template>`, `<object>`, `<svg>`, ... and, to be safe, lists, `<button>`, `<select>`), past
// which a browser ignores the end tag (`<div hidden><table></div>` leaves the div open).
void EndElement(std::string_view name, HtmlState* state) {
  const auto it = std::find(state->open.rbegin(), state->open.rend(), name);
  if (it == state->open.rend()) return;
  for (auto inner = state->open.rbegin(); inner != it; ++inner) {
    if (OneOf(*inner,
              {"applet", "caption",       "html",          "table", "td",     "th",     "marquee",
               "object", "template",      "svg",           "math",  "button", "select", "ol",
               "ul",     "foreignobject", "desc",          "title", "mi",     "mo",     "mn",
               "ms",     "mtext",         "annotation-xml"})) {
      return;
    }
  }
  state->open.erase(std::prev(it.base()), state->open.end());
}

// `state` after the HTML of `text` (outside code; a part of one line, or a whole line): the
// constructs that run to a marker (HtmlState::in_comment), start and end tags (void elements
// start nothing; `<x/>` of another element starts it, as a browser reads it), raw text
// elements, and inline code spans, whose content is no HTML. A code span counts only when its
// closing run stands in the same `text` and nothing could make CommonMark pair the runs
// otherwise (no `|` or backslash in `text`, no unmatched run earlier in the paragraph, not in
// an HTML block); else its content is read as HTML too, which can only hide more.
void ScanHtml(std::string_view text, HtmlState* state) {
  const bool spans_here =
      text.find('|') == std::string_view::npos && text.find('\\') == std::string_view::npos;
  for (size_t i = 0; i < text.size();) {
    if (state->raw_forever) return;
    if (state->in_tag != 0) {
      i = SkipTag(text, i, state);
      continue;
    }
    if (state->in_comment) {
      const size_t end = FindFolded(text, state->until, i);
      if (end == std::string_view::npos) return;
      state->in_comment = false;
      i = end + state->until.size();
      continue;
    }
    if (!state->raw_until.empty()) {
      size_t end = FindFolded(text, state->raw_until, i);
      while (end != std::string_view::npos &&
             TagNameAt(text, end + 2) != state->raw_until.substr(2)) {
        end = FindFolded(text, state->raw_until, end + 1);
      }
      if (end == std::string_view::npos) return;
      const auto it = std::find(state->open.rbegin(), state->open.rend(),
                                std::string_view(state->raw_until).substr(2));
      if (it != state->open.rend()) state->open.erase(std::prev(it.base()), state->open.end());
      state->raw_until.clear();
      i = SkipTag(text, end + 2, state);
      continue;
    }
    if (text[i] == '`') {
      size_t run = i;
      while (run < text.size() && text[run] == '`') ++run;
      const size_t n = run - i;
      size_t close = std::string_view::npos;
      for (size_t at = text.find('`', run); at != std::string_view::npos;) {
        size_t end = at;
        while (end < text.size() && text[end] == '`') ++end;
        if (end - at == n) {
          close = at;
          break;
        }
        at = text.find('`', end);
      }
      if (close != std::string_view::npos && spans_here && !state->spans_unsure &&
          !state->html_block) {
        i = close + n;
      } else {
        if (close == std::string_view::npos) state->spans_unsure = true;
        i = run;
      }
      continue;
    }
    if (text[i] != '<') {
      ++i;
      continue;
    }
    const std::string_view rest = text.substr(i);
    std::string_view until;
    if (rest.substr(0, 4) == "<!--") {
      until = "-->";
    } else if (rest.substr(0, 9) == "<![CDATA[") {
      until = "]]>";
    } else if (rest.substr(0, 2) == "<?") {
      until = "?>";
    } else if (rest.size() > 2 && rest[1] == '!' && IsAsciiLetter(rest[2])) {
      until = ">";
    }
    if (!until.empty()) {
      state->in_comment = true;
      state->until = std::string(until);
      i += until == "-->" ? 4 : 2;
      continue;
    }
    const bool end_tag = rest.size() > 1 && rest[1] == '/';
    const std::string name = TagNameAt(text, i + (end_tag ? 2 : 1));
    if (name.empty()) {
      ++i;
      continue;
    }
    if (end_tag) {
      EndElement(name, state);
    } else if (!IsVoidElement(name)) {
      state->open.push_back(name);
      if (name == "plaintext") state->raw_forever = true;
      if (IsRawTextElement(name)) state->raw_until = "</" + name;
    }
    i = SkipTag(text, i + name.size() + (end_tag ? 2 : 1), state);
  }
}

// The length of the list marker `rest` (a line after its indent) starts with — `-`, `+`, `*`,
// or 1 to 9 digits and `.` or `)` — followed by a space, a tab or the line's end; 0 when none.
size_t ListMarker(std::string_view rest) {
  size_t digits = 0;
  while (digits < rest.size() && digits < 9 && rest[digits] >= '0' && rest[digits] <= '9') {
    ++digits;
  }
  const size_t marker =
      digits > 0 && digits < rest.size() && (rest[digits] == '.' || rest[digits] == ')')
          ? digits + 1
      : !rest.empty() && (rest[0] == '-' || rest[0] == '+' || rest[0] == '*') ? 1
                                                                              : 0;
  if (marker > 0 && (marker == rest.size() || rest[marker] == ' ' || rest[marker] == '\t' ||
                     rest[marker] == '\r')) {
    return marker;
  }
  return 0;
}

// `state` at the start of a line outside code, before ScanHtml reads it (`body`: the line after
// its indent of `columns`; `paragraph`: the line before continues a paragraph). A blank line
// ends an HTML block of kind 6 or 7 and a paragraph's code spans. A line at most 3 columns in
// that starts `<script`, `<pre`, `<style` or `<textarea` opens a kind 1 block, raw to its end
// tag; one that starts a tag of CommonMark's block names opens a kind 6 block; one that is a
// single start or end tag of any other name, not continuing a paragraph, a kind 7 block.
void HtmlAtLineStart(std::string_view body, size_t columns, bool paragraph, HtmlState* state) {
  if (IsBlankLine(body)) {
    state->html_block = false;
    state->spans_unsure = false;
    return;
  }
  if (columns > 3 || state->in_comment || state->in_tag != 0 || state->raw_forever ||
      !state->raw_until.empty() || state->html_block || body.size() < 2 || body[0] != '<') {
    return;
  }
  const bool end_tag = body[1] == '/';
  const std::string name = TagNameAt(body, end_tag ? 2 : 1);
  if (name.empty()) return;
  if (!end_tag && OneOf(name, {"script", "pre", "style", "textarea"})) {
    state->in_comment = true;
    state->until = "</" + name + ">";
    return;
  }
  if (IsBlockTagName(name)) {
    state->html_block = true;
    return;
  }
  if (paragraph) return;
  HtmlState probe;
  const size_t end = SkipTag(body, (end_tag ? 2 : 1) + name.size(), &probe);
  if (probe.in_tag == 0 && IsBlankLine(body.substr(end))) state->html_block = true;
}

// Why a fenced block at `state` is no top-level block, or "" when nothing hides it.
std::string_view HtmlNested(const HtmlState& state) {
  if (state.in_comment) {
    if (state.until == "-->") return kInComment;
    return state.until.substr(0, 2) == "</" ? kInHtmlBlock : kInHtmlConstruct;
  }
  if (state.html_block) return kInHtmlBlock;
  if (std::find(state.open.begin(), state.open.end(), "details") != state.open.end()) {
    return kInDetails;
  }
  if (!state.open.empty() || state.in_tag != 0) return kInOpenElement;
  return {};
}

// Where a block whose opener follows `prefix` on its line (outside fences, comments and
// <details>) stands: "" at the start of the line (at most 3 columns in), else why it is no
// top-level fenced block.
std::string_view PrefixNested(std::string_view prefix) {
  const auto [columns, at] = Indent(prefix);
  if (at == prefix.size()) return columns <= 3 ? std::string_view() : kInIndentedCode;
  if (columns > 3) return kInIndentedCode;
  const std::string_view rest = prefix.substr(at);
  if (rest[0] == '>') return kInBlockquote;
  if (ListMarker(rest) > 0) return kInListItem;
  return kAfterText;
}

// Sets each block's `nested` by reading `reply` line by line as CommonMark does (FencedBlocks).
//
// List items are containers (trial15 A3): a list marker line opens an item whose content
// column is the marker's end plus the spaces after it (1 to 4; 5 or more, or none, count as
// 1). A later non-blank line indented to that column or more is the item's content — a fence
// there is `inside a list item` even after a blank line (`- text`, blank, `  ```json`) — and
// fence, code and close columns are counted from it. A non-blank line indented less ends the
// item, unless it continues the item's paragraph lazily (not a fence or marker line, not
// inside a fence). A fence opened inside an item ends with it.
void MarkNested(std::string_view reply, std::vector<FencedBlock>* blocks) {
  const auto opener = [&](size_t k) {
    return static_cast<size_t>((*blocks)[k].info.data() - reply.data()) - kFence.size();
  };
  size_t next = 0;  // the next block whose opener is not yet placed
  HtmlState html;   // at the current position, outside code
  char fence = 0;   // the open fence's character, 0: none
  size_t fence_length = 0;
  size_t fence_depth = 0;     // open list items when the fence opened
  std::vector<size_t> items;  // content columns of the open list items, innermost last
  bool paragraph = false;     // the line before continues a paragraph
  for (size_t line_at = 0; next < blocks->size() && line_at <= reply.size();) {
    const size_t newline = reply.find('\n', line_at);
    const size_t line_end = newline == std::string_view::npos ? reply.size() : newline;
    const std::string_view line = reply.substr(line_at, line_end - line_at);
    const auto [columns, body_at] = Indent(line);
    const std::string_view body = line.substr(body_at);
    const bool blank = IsBlankLine(line);
    if (!blank && !html.in_comment) {  // leave the items this line is not inside
      while (!items.empty() && columns < items.back()) {
        const bool lazy =
            fence == 0 && paragraph && FenceRun(body).first == 0 && ListMarker(body) == 0;
        if (lazy) break;
        items.pop_back();
      }
      if (fence != 0 && items.size() < fence_depth) fence = 0;  // its item ended
    }
    const size_t base = items.empty() ? 0 : items.back();
    const size_t in = columns > base ? columns - base : 0;  // columns inside the item
    if (fence != 0) {  // inside a fence: every opener on the line is its content
      for (; next < blocks->size() && opener(next) <= line_end; ++next) {
        (*blocks)[next].nested = fence == '~' ? kInTildeFence : kInBacktickFence;
      }
      const auto [c, n] = FenceRun(body);
      if (in <= 3 && c == fence && n >= fence_length && IsBlankLine(body.substr(n))) {
        fence = 0;
      }
      paragraph = false;
    } else if (!html.in_comment && !paragraph && in >= 4 && !blank) {
      for (; next < blocks->size() && opener(next) <= line_end; ++next) {
        (*blocks)[next].nested = kInIndentedCode;
      }
    } else {
      HtmlAtLineStart(body, in, paragraph, &html);
      const bool opens =
          !html.in_comment && !html.html_block && in <= 3 && FenceRun(body).first != 0;
      size_t at = line_at;
      for (; next < blocks->size() && opener(next) <= line_end; ++next) {
        const size_t open = opener(next);
        ScanHtml(reply.substr(at, open - at), &html);
        at = open;
        const std::string_view hidden = HtmlNested(html);
        std::string_view nested =
            hidden.empty() ? PrefixNested(reply.substr(line_at, open - line_at)) : hidden;
        if (!items.empty() && (nested.empty() || nested == kInIndentedCode)) nested = kInListItem;
        (*blocks)[next].nested = nested;
      }
      if (opens) {  // the info string is no HTML
        std::tie(fence, fence_length) = FenceRun(body);
        fence_depth = items.size();
        paragraph = false;
      } else {
        ScanHtml(reply.substr(at, line_end - at), &html);
        paragraph = !blank;
        const size_t marker = html.in_comment || in > 3 ? 0 : ListMarker(body);
        if (marker > 0) {  // a list item opens: its content column
          const std::string_view after = body.substr(marker);
          const auto [spaces, content_at] = Indent(after);
          const bool empty = IsBlankLine(after);
          items.push_back(columns + marker + (empty || spaces > 4 ? 1 : spaces));
          // `- ```json`: the item's content opens a fence.
          if (!empty && spaces <= 4) {
            if (const auto [c, n] = FenceRun(after.substr(content_at)); c != 0) {
              fence = c;
              fence_length = n;
              fence_depth = items.size();
              paragraph = false;
            }
          }
        }
      }
    }
    if (newline == std::string_view::npos) break;
    line_at = newline + 1;
  }
}

}  // namespace

std::vector<FencedBlock> FencedBlocks(std::string_view reply) {
  // /```[^\n]*\n([\s\S]*?)```/g: a match attempt at an opening fence fails only when no
  // newline or no later fence follows it, and then every later attempt fails too; that opener
  // is the unclosed last block.
  std::vector<FencedBlock> blocks;
  size_t pos = 0;
  while (true) {
    const size_t open = reply.find(kFence, pos);
    if (open == std::string_view::npos) break;
    const size_t info_at = open + kFence.size();
    const size_t newline = reply.find('\n', info_at);
    if (newline == std::string_view::npos) {
      blocks.push_back(FencedBlock{reply.substr(info_at), std::string_view(), false, {}});
      break;
    }
    const std::string_view info = reply.substr(info_at, newline - info_at);
    const size_t close = reply.find(kFence, newline + 1);
    if (close == std::string_view::npos) {
      blocks.push_back(FencedBlock{info, reply.substr(newline + 1), false, {}});
      break;
    }
    blocks.push_back(FencedBlock{info, reply.substr(newline + 1, close - newline - 1), true, {}});
    pos = close + kFence.size();
  }
  MarkNested(reply, &blocks);
  return blocks;
}

bool ClaimsVerdict(const FencedBlock& block) {
  // The info string's first word, e.g. `json` of "json title=x" (a CR of a CRLF reply ends it).
  std::string_view info = block.info;
  const size_t word_at = info.find_first_not_of(" \t");
  if (word_at != std::string_view::npos) {
    info.remove_prefix(word_at);
    info = info.substr(0, info.find_first_of(" \t\r{"));
    if (info.size() == 4 && Lower(info[0]) == 'j' && Lower(info[1]) == 's' &&
        Lower(info[2]) == 'o' && Lower(info[3]) == 'n') {
      return true;
    }
  }
  std::string_view content = block.content;
  while (true) {
    if (content.substr(0, 3) == "\xEF\xBB\xBF") {
      content.remove_prefix(3);
    } else if (!content.empty() && (content[0] == ' ' || content[0] == '\t' || content[0] == '\n' ||
                                    content[0] == '\r')) {
      content.remove_prefix(1);
    } else {
      break;
    }
  }
  if (!content.empty() && content[0] == '{') return true;
  return FindVerdictClaim(block.content, ClaimForms::kKeys).has_value();
}

namespace {

// A JSON value as a reason quotes it: compact JSON, cut to at most 80 bytes at a UTF-8
// boundary (`…` marks the cut), so a checker's text cannot make the reason long.
std::string Quoted(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  constexpr size_t kMax = 80;
  if (text.size() <= kMax) return text;
  size_t keep = kMax - 3;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return text.substr(0, keep) + "\xE2\x80\xA6";
}

const char* TypeName(const nlohmann::json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  return "an object";
}

// Whether `key` names a verdict: its text as the claim scan reads it (default-ignorable code
// points and ill-formed bytes dropped, full-width forms as their ASCII twins), ASCII-lowercased,
// contains "verdict" (`Verdict`, `final_verdict`, `ver<ZWSP>dict`, `ＶＥＲＤＩＣＴ`) — where any
// other non-ASCII code point may stand for any letter of it: a look-alike (Cyrillic `е` in
// `vеrdict`, math bold `𝐯𝐞𝐫𝐝𝐢𝐜𝐭`, small capitals `ᴠᴇʀᴅɪᴄᴛ`; this session's trial admitted
// each) cannot be told from the word without Unicode's whole confusables table, so a key that
// could spell it is taken to (fail closed; docs/checker-protocol.md).
// `key` as the claim scan reads it: skipped code points dropped, ASCII lowercased, any other
// non-ASCII code point kOther; `reordered` tells whether a bidi control was among them (the
// screen may then show the letters in another order).
std::string FoldKey(std::string_view key, bool* reordered) {
  std::string folded;
  folded.reserve(key.size());
  for (size_t i = 0; i < key.size();) {
    const Unit u = UnitAt(key, i);
    if (u.c == kSkip && static_cast<unsigned char>(key[i]) >= 0x80) {
      const Utf8Step step = DecodeUtf8At(key, i);
      if (step.valid && IsBidiControl(step.cp)) *reordered = true;
    }
    if (u.c != kSkip) folded.push_back(u.c == kOther ? kOther : Lower(u.c));
    i += u.length;
  }
  return folded;
}

// Whether `folded` (FoldKey) holds `word` at `at`, kOther standing for any letter.
bool SpellsAt(std::string_view folded, size_t at, std::string_view word) {
  size_t n = 0;
  while (n < word.size() && (folded[at + n] == word[n] || folded[at + n] == kOther)) ++n;
  return n == word.size();
}

bool NamesVerdict(std::string_view key) {
  bool reordered = false;
  std::string folded = FoldKey(key, &reordered);
  constexpr std::string_view kWord = "verdict";
  for (int pass = 0; pass < (reordered ? 2 : 1); ++pass) {
    if (pass == 1) std::reverse(folded.begin(), folded.end());  // as a bidi override shows it
    for (size_t at = 0; at + kWord.size() <= folded.size(); ++at) {
      if (SpellsAt(folded, at, kWord)) return true;
    }
  }
  return false;
}

// A top-level key that is itself a decision word (`"decision": "veto"`, `"veto": true`,
// `"allowed": false` beside `"verdict": "allow"`; trial12 c08-c10): a reader takes it for a
// second verdict, so the object is ambiguous. The whole folded key must be the word, at most
// half of its letters look-alikes (as in NamesVerdict: `"аllowed"` with a Cyrillic а), so
// `"decision_notes"`, `"allowance"` or a word of another script (`"вывод"`) are other keys.
bool IsDecisionKey(std::string_view key) {
  bool reordered = false;
  std::string folded = FoldKey(key, &reordered);
  static constexpr std::string_view kWords[] = {
      "decision", "outcome",  "result",   "veto",   "vetoed",   "allow",     "allowed",
      "approve",  "approved", "approval", "reject", "rejected", "rejection", "accept",
      "accepted", "deny",     "denied",   "pass",   "passed",   "block",     "blocked"};
  for (int pass = 0; pass < (reordered ? 2 : 1); ++pass) {
    if (pass == 1) std::reverse(folded.begin(), folded.end());
    for (std::string_view word : kWords) {
      // At most half the letters look-alikes: a key in another script (`вывод`) is its own.
      if (folded.size() == word.size() && SpellsAt(folded, 0, word) &&
          2 * static_cast<size_t>(std::count(folded.begin(), folded.end(), kOther)) <=
              word.size()) {
        return true;
      }
    }
  }
  return false;
}

// The first key, at any depth of `value` (objects, and objects inside arrays), that names a
// verdict, other than the top-level `verdict` itself (`top`: `value` is the verdict object).
const std::string* OtherVerdictKey(const nlohmann::json& value, bool top) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      const bool the_verdict = top && it.key() == "verdict";
      if (!the_verdict && NamesVerdict(it.key())) return &it.key();
      if (const std::string* nested = OtherVerdictKey(it.value(), false)) return nested;
    }
  } else if (value.is_array()) {
    for (const auto& item : value) {
      if (const std::string* nested = OtherVerdictKey(item, false)) return nested;
    }
  }
  return nullptr;
}

// ---- An allow's own words and values (ParseLast, DecisionValue; trial14 R1-R3) ----

// `text` read with its hidden word boundaries: every run of skipped code points (kSkip: NUL,
// zero-width space, soft hyphen, word joiner, BOM, bidi and tag characters, ...) that stands
// between two word characters is replaced by as many spaces, every other byte kept, so a claim
// found in it has the same offsets in `text`. nullopt when no skipped code point stands inside
// a word. The scans join such a word (`ver<ZWSP>dict` is the keyword) and, through this
// reading, also split it (`ok<U+200B>VETO` shows as "okVETO" or "ok VETO"; trial14 R1): a
// claim in either reading claims.
std::optional<std::string> SplitAtHidden(std::string_view text) {
  std::optional<std::string> split;
  bool after_word = false;              // the last unit not skipped is a word character
  size_t run = std::string_view::npos;  // where the skipped run after that word character began
  for (size_t i = 0; i < text.size();) {
    const Unit u = UnitAt(text, i);
    if (u.c == kSkip) {
      if (after_word && run == std::string_view::npos) run = i;
    } else {
      const bool word = IsWordChar(u.c);
      if (word && run != std::string_view::npos) {
        if (!split) split.emplace(text);
        std::fill(split->begin() + static_cast<std::ptrdiff_t>(run),
                  split->begin() + static_cast<std::ptrdiff_t>(i), ' ');
      }
      run = std::string_view::npos;
      after_word = word;
    }
    i += u.length;
  }
  return split;
}

// The first claim `scan` finds in `text` as written, else in `text` split at its hidden word
// boundaries (SplitAtHidden); offsets into `text` either way.
template <typename Scan>
std::optional<VerdictClaim> InEitherReading(std::string_view text, const Scan& scan) {
  if (auto claim = scan(text)) return claim;
  const std::optional<std::string> split = SplitAtHidden(text);
  if (!split) return std::nullopt;
  return scan(std::string_view(*split));
}

// The words that cancel a negative word after them in an allow's own words: the statement
// rule's negations and the quantities of none ("No blocking issues", "nothing fails", "zero
// failures", "without blockers").
bool IsCancelling(std::string_view w) {
  return IsNegation(w) || OneOf(w, {"nothing", "none", "without", "zero", "0", "neither"});
}

// The words a negation reaches a positive word across in an allow's own words ("not going to
// approve", "cannot recommend that we proceed", "not ready to merge"). Any other word ends the
// negation's reach ("No issues found, so I approve", "no need to go further" state no
// refusal).
bool IsReachedAcross(std::string_view w) {
  return OneOf(w, {"is",    "are",     "was",       "be",  "been",  "being", "would", "will",
                   "shall", "should",  "must",      "can", "could", "to",    "i",     "we",
                   "it",    "this",    "that",      "yet", "going", "do",    "does",  "did",
                   "m",     "re",      "ll",        "d",   "ready", "safe",  "able",  "fit",
                   "think", "believe", "recommend", "let", "still", "now",   "also"});
}

// A refusal worded without the keyword (trial14 R2): the statement rule's vocabulary read in
// each clause of `text` (up to `.` `!` `?` `,` `;` `:` or a line end). A negative word
// (IsStatedNegativeWord), a negative sign or `changes requested` / `request changes` claims,
// unless a negation or a none-word (IsCancelling) stands within kNegationReach words before it
// ("No blocking issues", "nothing fails"); a positive word claims when a negation reaches it
// across connecting words only ("NOT APPROVED", "do not merge", "must not proceed", "cannot
// approve", "No-go", "not OK") and that negation is not itself negated ("no reason not to
// approve"). Returns the negative word, or the negation and the positive word.
std::optional<VerdictClaim> RefusalClaim(std::string_view text) {
  struct Token {
    size_t at, end;
    bool negative;   // IsStatedNegativeWord, a negative sign
    bool positive;   // IsPositiveWord
    bool negation;   // IsNegation: reaches a positive word
    bool cancels;    // IsCancelling: cancels a negative word
    bool connector;  // IsReachedAcross
    bool changes;    // the word `changes`
    bool request;    // `request`, `requests`, `requested`, `requesting`
  };
  std::vector<Token> t;  // the clause so far
  // Whether a word that cancels stands within kNegationReach words before t[at].
  const auto cancelled = [&](size_t at) {
    for (size_t k = at >= kNegationReach ? at - kNegationReach : 0; k < at; ++k) {
      if (t[k].cancels) return true;
    }
    return false;
  };
  const auto clause_claim = [&]() -> std::optional<VerdictClaim> {
    for (size_t i = 0; i < t.size(); ++i) {
      const bool pair =
          i > 0 && ((t[i - 1].changes && t[i].request) || (t[i - 1].request && t[i].changes));
      if (t[i].negative || pair) {
        const size_t first = pair ? i - 1 : i;
        if (!cancelled(first)) return VerdictClaim{t[first].at, t[i].end};
        continue;
      }
      if (!t[i].positive) continue;
      for (size_t k = i; k-- > 0;) {  // back across connecting words to a negation
        if (t[k].negation) {
          if (!cancelled(k)) return VerdictClaim{t[k].at, t[i].end};
          break;
        }
        if (!t[k].connector || i - k > 2 * kNegationReach) break;
      }
    }
    return std::nullopt;
  };
  bool struck = false;  // inside `~~...~~`: a positive word struck out refuses (trial15 A5)
  for (size_t i = 0; i < text.size();) {
    const Unit u = UnitAt(text, i);
    if (IsWordChar(u.c)) {
      const Word word = ReadWord(text, i);
      const std::string_view w = word.Text();
      const bool negative =
          IsStatedNegativeWord(w) || ((struck || word.struck) && IsPositiveWord(w));
      t.push_back(Token{word.at, word.end, negative, !negative && IsPositiveWord(w), IsNegation(w),
                        IsCancelling(w), IsReachedAcross(w), w == "changes",
                        OneOf(w, {"request", "requests", "requested", "requesting"})});
      i = word.end;
      continue;
    }
    if (u.c == kOther && IsNegativeSign(DecodeUtf8At(text, i).cp)) {
      t.push_back(Token{i, i + u.length, true, false, false, false, false, false, false});
    } else if (u.c == '~' && text.substr(i, 2) == "~~" && (i == 0 || text[i - 1] != '~') &&
               text.substr(i, 3) != "~~~") {
      struck = !struck;
      i += 2;
      continue;
    } else if (EndsClause(u.c) || u.c == ':' || u.c == '\n') {
      if (auto claim = clause_claim()) return claim;
      t.clear();
      struck = false;
    }
    i += u.length;
  }
  return clause_claim();
}

// A positive word struck out in an allow's own words (trial15 A9): `~~allow~~` (exactly two
// tildes each side, as the clause rule reads a strike) refuses, as `Verdict: ~~allow~~` does in
// prose. The positive word, when found.
std::optional<VerdictClaim> StruckPositive(std::string_view text) {
  bool struck = false;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '~') {
      size_t run = i;
      while (run < text.size() && text[run] == '~') ++run;
      if (run - i == 2) struck = !struck;
      i = run;
      continue;
    }
    const Unit u = UnitAt(text, i);
    if (u.c == '\n' && i + 1 < text.size() && text[i + 1] == '\n') struck = false;
    if (!IsWordChar(u.c)) {
      i += u.length;
      continue;
    }
    const Word word = ReadWord(text, i);
    if (struck && IsPositiveWord(word.Text())) return VerdictClaim{word.at, word.end};
    i = word.end;
  }
  return std::nullopt;
}

// What an allow's summary or finding may not say (ParseLast): the after-block scan
// (FindVerdictClaim: a verdict key, a keyword statement, a lone veto/reject/deny word) or a
// refusal without the keyword (RefusalClaim), in either reading of its hidden boundaries.
std::optional<VerdictClaim> OwnWordsClaim(std::string_view text) {
  if (auto claim = ReadThroughMarkup(text, [](std::string_view s) { return StruckPositive(s); }))
    return claim;
  return ReadThroughMarkup(text, [](std::string_view read) {
    return InEitherReading(read, [](std::string_view s) {
      if (auto claim = FindVerdictClaim(s, ClaimForms::kKeysAndStatements)) return claim;
      return RefusalClaim(s);
    });
  });
}

// What a key says its value decides (DecisionValue; trial14 R3). The key is split into parts
// (at anything but a letter or digit, and where a small letter meets a capital:
// `approvedByReviewer` is approved, by, reviewer; look-alikes folded, invisible code points
// dropped as FoldKey does). A part is positive when it holds `approv`, `allow`, `accept`,
// `admit` or `lgtm`, starts with `merg`, `pass`, `ready`, `ship` or `proceed`, or is `ok`,
// `okay`, `go` or `yes` (whole parts for the short ones: `good`, `token`, `password` are
// not); negative when it holds `veto`, `reject`, `deny`, `denied`, `block`, `fail`, `declin`
// or `refus`. A negation flips a part: a prefix `non`, `un`, `dis`, `not`, `no` right before
// the stem (`unapproved`, `nonblocking`) or a part `not`, `non`, `no`, `un`, `never` before it
// (`not_ok`, `non_blocking`). A part that names the answer (`final`, `vote`, `answer`,
// `status`, `state`, `recommendation`, `conclusion`, `ruling`, `outcome`, `result`,
// `decision`, `review`, `assessment`, `judgement`, `judgment`, `overall`) makes the key an
// answer key.
struct KeyStance {
  bool positive = false;  // false, 0 or a no-word under it refuses
  bool negative = false;  // true, a non-zero count, a yes-word or anything present refuses
  bool answer = false;    // false or a no-word refuses
};

KeyStance StanceOf(std::string_view key) {
  std::vector<std::string> parts(1);
  bool small_before = false;
  for (size_t i = 0; i < key.size();) {
    const Unit u = UnitAt(key, i);
    i += u.length;
    if (u.c == kSkip) continue;
    if (!IsWordChar(u.c)) {
      if (!parts.back().empty()) parts.emplace_back();
      small_before = false;
      continue;
    }
    const bool capital = u.c >= 'A' && u.c <= 'Z';
    if (capital && small_before) parts.emplace_back();
    parts.back().push_back(Lower(u.c));
    small_before = u.c >= 'a' && u.c <= 'z';
  }
  static constexpr std::string_view kPrefixes[] = {"non", "un", "dis", "not", "no"};
  KeyStance stance;
  bool negated_by_part = false;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    // 1: the part holds one of `stems` (`anywhere`, or at its start), 2: negated by a prefix.
    const auto holds = [&](std::initializer_list<std::string_view> stems, bool anywhere) {
      for (std::string_view stem : stems) {
        const size_t at = part.find(stem);
        if (at == std::string::npos) continue;
        const std::string_view before = std::string_view(part).substr(0, at);
        const bool negated =
            std::any_of(std::begin(kPrefixes), std::end(kPrefixes), [&](std::string_view prefix) {
              return before.size() >= prefix.size() &&
                     before.substr(before.size() - prefix.size()) == prefix;
            });
        if (!anywhere && !before.empty() && !negated) continue;
        return negated ? 2 : 1;
      }
      return 0;
    };
    const int negative_stem =
        holds({"veto", "reject", "deny", "denied", "block", "fail", "declin", "refus"}, true);
    const int positive_stem = std::max({holds({"approv", "allow", "accept", "admit", "lgtm"}, true),
                                        holds({"merg", "pass", "ready", "ship", "proceed"}, false),
                                        OneOf(part, {"ok", "okay", "go", "yes"}) ? 1 : 0});
    bool positive = positive_stem == 1 || negative_stem == 2;
    bool negative = negative_stem == 1 || positive_stem == 2;
    if (negated_by_part) std::swap(positive, negative);
    stance.positive = stance.positive || positive;
    stance.negative = stance.negative || negative;
    stance.answer = stance.answer ||
                    OneOf(part, {"final", "vote", "answer", "status", "state", "recommendation",
                                 "conclusion", "ruling", "outcome", "result", "decision", "review",
                                 "assessment", "judgement", "judgment", "overall"});
    negated_by_part = OneOf(part, {"not", "non", "no", "un", "never"});
  }
  return stance;
}

// What a value says as an answer (DecisionValue): kNo for false, zero and a string that is,
// as a whole, `no`, `nope`, `nay`, `false`, `n` or `0`; kYes for true, a non-zero whole number
// and `yes`, `yep`, `yeah`, `aye`, `true`, `y`, `1`; kAbsent for null, an empty string, array
// or object and a string whose first word is a none-word (`none`, `nothing`, `n/a`, `no REQ-7
// issue`); kPresent for any other string and a non-empty array or object; kNeither for a
// fraction that is not a whole number (`1.5`, `0.85`), which refuses under a positive or a
// negative key and says nothing elsewhere (`"confidence": 0.85`).
//
// A number is read by its value, as JSON.parse reads it, never by how it is spelled (trial15
// A2): `2.0`, `1e0`, `20e-1` are 2 and `0.0`, `-0`, `0e0`, `0E5` are 0; an integer too large
// for 64 bits (`18446744073709551616`, which nlohmann keeps as a double) is a non-zero whole
// number. (A number past a double's range, `1e400`, is no valid JSON to the parser: the block
// fails closed before this rule.)
enum class Answer { kNo, kYes, kAbsent, kPresent, kNeither };

Answer AnswerOf(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? Answer::kYes : Answer::kNo;
  if (v.is_number_integer() || v.is_number_unsigned()) {
    return v == 0 ? Answer::kNo : Answer::kYes;
  }
  if (v.is_number()) {
    const double d = v.get<double>();
    if (d == 0) return Answer::kNo;
    if (std::trunc(d) == d) return Answer::kYes;  // a whole number
    return Answer::kNeither;                      // NaN cannot come from JSON text
  }
  if (v.is_null()) return Answer::kAbsent;
  if (!v.is_string()) return v.empty() ? Answer::kAbsent : Answer::kPresent;
  bool reordered = false;
  const std::string folded = FoldKey(JsTrim(v.get_ref<const std::string&>()), &reordered);
  std::vector<std::string_view> words;
  for (size_t i = 0; i < folded.size();) {
    if (!IsWordChar(folded[i])) {
      ++i;
      continue;
    }
    size_t n = 0;
    while (i + n < folded.size() && IsWordChar(folded[i + n])) ++n;
    words.push_back(std::string_view(folded).substr(i, n));
    i += n;
  }
  if (words.empty()) return folded.empty() ? Answer::kAbsent : Answer::kPresent;
  if (words.size() == 1 && OneOf(words[0], {"no", "nope", "nay", "false", "n", "0"})) {
    return Answer::kNo;
  }
  if (words.size() == 1 && OneOf(words[0], {"yes", "yep", "yeah", "aye", "true", "y", "1"})) {
    return Answer::kYes;
  }
  if (OneOf(words[0], {"no", "none", "nothing", "not", "false", "0", "nil", "null", "n", "na",
                       "zero", "never", "empty"})) {
    return Answer::kAbsent;
  }
  return Answer::kPresent;
}

// How many words `text` has as the claim scan reads it.
size_t WordCount(std::string_view text) {
  size_t words = 0;
  for (size_t i = 0; i < text.size();) {
    const Unit u = UnitAt(text, i);
    if (IsWordChar(u.c)) {
      ++words;
      i = ReadWord(text, i).end;
    } else {
      i += u.length;
    }
  }
  return words;
}

// How DecisionValue reads strings: kAll every string as the allow's own words are read (the
// deciding allow), kLabels only strings of at most kMaxLabelWords words (an earlier block,
// which may be JSON quoted from an artifact: `{"error": "the request failed because ..."}`).
enum class ValueReading { kAll, kLabels };
constexpr size_t kMaxLabelWords = 4;

// A value that says a decision, at any depth of `value` (objects, arrays), other than the
// top-level `verdict`, `summary`, `findings` and `nonce` when `top` (trial13 R3, trial14 R3).
// Each member is read as the statement `key: value`:
//  - a string as an allow's own words are (RefusalClaim, in either reading of its hidden
//    boundaries): `"status": "rejected"`, `"not approved"`, `"changes requested"`,
//    `"vetoed by checker"`, `"👎"`, `{"action": "do not merge"}`; `"no veto needed"` says none;
//  - by its key's stance (StanceOf) and its value's answer (AnswerOf): a no (false, 0, `"no"`,
//    `"false"`) under a positive key (`"is_approved": "false"`, `"ready": false`, `"go":
//    false`, `"ok": 0`) or under an answer key except a number (`"final": "no"`, `"vote":
//    "nay"`, `"status": "NOPE"`); a yes (true, a non-zero integer, `"yes"`) or anything present
//    (a non-empty string, array or object) under a negative key (`"veto": true`,
//    `"blocking_issues": ["REQ-7 …"]`, `"failures": 2`); `"failures": 0`, `"blockers": []`,
//    `"blockers": "none"` say none.
// Array items are read under their array's key. Returns `"key": value` (an array item: the
// item).
std::optional<std::string> DecisionValue(const nlohmann::json& value, bool top,
                                         ValueReading reading = ValueReading::kAll,
                                         std::string_view parent_key = {}) {
  const auto says = [&](std::string_view key, const nlohmann::json& v) -> bool {
    const KeyStance stance = StanceOf(key);
    const Answer answer = AnswerOf(v);
    if (answer == Answer::kNo && (stance.positive || (stance.answer && !v.is_number()))) {
      return true;
    }
    if (stance.negative && (answer == Answer::kYes || answer == Answer::kPresent)) return true;
    // A fraction under a decision key (`"failures": 1.5`, `"approved": 0.5`) answers neither
    // yes nor no: a value that can be read either way is no clean allow (trial16; it allowed).
    if ((stance.positive || stance.negative) && answer == Answer::kNeither) return true;
    if (!v.is_string()) return false;
    const std::string_view text = v.get_ref<const std::string&>();
    if (reading == ValueReading::kLabels && WordCount(text) > kMaxLabelWords) return false;
    return InEitherReading(text, [](std::string_view s) { return RefusalClaim(s); }).has_value();
  };
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      // The verdict itself; an allow's summary and findings are read as prose (ParseLast).
      if (top && (it.key() == "verdict" || it.key() == "summary" || it.key() == "findings" ||
                  it.key() == "nonce")) {
        continue;
      }
      if (says(it.key(), it.value())) return Quoted(it.key()) + ": " + Quoted(it.value());
      if (auto nested = DecisionValue(it.value(), false, reading, it.key())) return nested;
    }
  } else if (value.is_array()) {
    for (const auto& item : value) {
      if (says(parent_key, item)) return Quoted(item);
      if (auto nested = DecisionValue(item, false, reading, parent_key)) return nested;
    }
  }
  return std::nullopt;
}

// DecodeVerdictBlock's rules, one by one; on the first that fails, `why` says which (the
// wording of VerdictFaultReason, after "the last verdict block "). `odd_nonce`, when given, is
// set to the quoted value of a "nonce" that is there but not a string (a valid verdict still;
// only an edge with verdictNonce refuses it, and must say it is the type, not the absence).
std::optional<Verdict> Decode(std::string_view content, std::string* why,
                              std::string* odd_nonce = nullptr) {
  auto no = [&](std::string reason) -> std::optional<Verdict> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  // JSON.parse does not skip a byte-order mark; nlohmann would.
  if (content.substr(0, 3) == "\xEF\xBB\xBF") {
    return no("starts with a byte-order mark, which JSON.parse refuses");
  }
  if (JsonNestingDepth(content) > kMaxJsonDepth) {  // no verdict nests so deep
    return no("nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  const std::string text = JsonTextAsJsReadsIt(content);  // as JSON.parse reads it
  const nlohmann::json value = ParseWithoutDuplicateKeys(text);
  if (value.is_discarded()) {
    if (!nlohmann::json::accept(text)) return no("is not valid JSON");
    return no("has a key twice (every key must be unique)");
  }
  if (!value.is_object()) return no(std::string("is ") + TypeName(value) + ", not a JSON object");

  const auto verdict = value.find("verdict");
  if (verdict == value.end()) return no("has no \"verdict\"; expected \"allow\" or \"veto\"");
  if (!verdict->is_string() || (verdict->get_ref<const std::string&>() != "allow" &&
                                verdict->get_ref<const std::string&>() != "veto")) {
    return no("says \"verdict\": " + Quoted(*verdict) + "; expected \"allow\" or \"veto\"");
  }
  const auto& word = verdict->get_ref<const std::string&>();
  // A second key that names a verdict (`"Verdict"`, `"final_verdict"`, a nested
  // `"final": {"verdict": "veto"}`) makes the object say two things, and which one a reader
  // takes is its own rule: ambiguous, so no verdict.
  if (const std::string* key = OtherVerdictKey(value, true)) {
    return no("has another verdict key " + Quoted(*key) +
              " besides \"verdict\" (ambiguous; only \"verdict\" may name the verdict)");
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (IsDecisionKey(it.key())) {
      return no("has the decision key " + Quoted(it.key()) +
                " besides \"verdict\" (ambiguous; only \"verdict\" may say the decision)");
    }
  }

  // So does a value that says a decision anywhere in it (`"status": "rejected"`,
  // `"recommendation": "veto"`, `"is_allowed": false`, a nested `{"meta": {"veto": true}}`).
  // Only beside an allow: a veto decides whatever else it says.
  if (const auto said = word == "allow" ? DecisionValue(value, true) : std::nullopt) {
    return no("has the decision value " + *said +
              " besides \"verdict\" (ambiguous; only \"verdict\" may say the decision)");
  }

  const auto summary = value.find("summary");
  if (summary == value.end()) return no("has no \"summary\"; expected a non-blank string");
  if (!summary->is_string()) {
    return no("says \"summary\": " + Quoted(*summary) + "; expected a non-blank string");
  }
  const auto& summary_text = summary->get_ref<const std::string&>();
  // Blank: nothing but white space, zero-width, format or control characters (host/utf8.h).
  if (IsBlankText(summary_text)) {
    return no("says \"summary\": " + Quoted(*summary) + "; expected a non-blank string");
  }

  Verdict out;
  out.allow = word == "allow";
  out.summary = summary_text;
  const auto findings = value.find("findings");
  if (findings != value.end()) {
    if (!findings->is_array()) {
      return no("says \"findings\": " + Quoted(*findings) + "; expected an array of strings");
    }
    for (const auto& item : *findings) {
      if (!item.is_string()) {
        return no("has a finding " + Quoted(item) + "; expected an array of strings");
      }
      out.findings.push_back(item.get<std::string>());
    }
  }
  const auto nonce = value.find("nonce");
  if (nonce != value.end()) {
    if (nonce->is_string()) {
      out.nonce = nonce->get<std::string>();
    } else if (odd_nonce) {
      *odd_nonce = Quoted(*nonce);
    }
  }
  return out;
}

// The decision value (DecisionValue, `verdict` included) of an earlier block that is JSON.
std::optional<std::string> EarlierDecisionValue(std::string_view content) {
  if (JsonNestingDepth(content) > kMaxJsonDepth) return std::nullopt;
  const nlohmann::json value = nlohmann::json::parse(JsonTextAsJsReadsIt(content), nullptr,
                                                     /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return DecisionValue(value, false, ValueReading::kLabels);
}

// ---- Code points that make a reply say something else than it shows ----

// An explicit bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069):
// it reorders what follows it on screen (Trojan Source, CVE-2021-42574; trial13 e72:
// `"\u202Eotev :tcidreV"` shows as "Verdict: veto"). Not LRM, RLM or ALM, which real
// right-to-left text uses and which move no text.
bool IsBidiOverride(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// A tag character (U+E0000–U+E007F): invisible, and a run of them spells hidden ASCII text
// ("ASCII smuggling"; trial13 e70).
bool IsTagCharacter(char32_t cp) { return cp >= 0xE0000 && cp <= 0xE007F; }

bool IsForbidden(char32_t cp) { return IsBidiOverride(cp) || IsTagCharacter(cp); }

// The first forbidden code point written raw in `text`, or 0. Their UTF-8 forms are
// E2 80 AA–AE, E2 81 A6–A9 and F3 A0 80–81 xx, so a byte scan finds them.
char32_t RawForbidden(std::string_view text) {
  for (size_t i = text.find_first_of("\xE2\xF3"); i != std::string_view::npos;
       i = text.find_first_of("\xE2\xF3", i + 1)) {
    const Utf8Step step = DecodeUtf8At(text, i);
    if (step.valid && IsForbidden(step.cp)) return step.cp;
  }
  return 0;
}

// The first forbidden code point that `text` (a verdict block) writes as a JSON escape
// (`\u202E`, or a surrogate pair `\uDB40\uDC76` for a tag character), or 0.
char32_t EscapedForbidden(std::string_view text) {
  for (size_t i = text.find("\\u"); i != std::string_view::npos; i = text.find("\\u", i + 1)) {
    size_t used = 0;
    const long unit = DigitsAt(text, i + 2, 4, 4, 16, &used);
    if (unit < 0) continue;
    char32_t cp = static_cast<char32_t>(unit);
    if (unit >= 0xD800 && unit <= 0xDBFF && text.substr(i + 6, 2) == "\\u") {
      const long low = DigitsAt(text, i + 8, 4, 4, 16, &used);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        cp = 0x10000 + ((static_cast<char32_t>(unit) - 0xD800) << 10) +
             (static_cast<char32_t>(low) - 0xDC00);
      }
    }
    if (IsForbidden(cp)) return cp;
  }
  return 0;
}

// The fault for a forbidden code point `cp`, named.
std::string ForbiddenReason(char32_t cp, bool escaped) {
  static constexpr const char* kBidiNames[] = {
      "LEFT-TO-RIGHT EMBEDDING", "RIGHT-TO-LEFT EMBEDDING", "POP DIRECTIONAL FORMATTING",
      "LEFT-TO-RIGHT OVERRIDE",  "RIGHT-TO-LEFT OVERRIDE",  "LEFT-TO-RIGHT ISOLATE",
      "RIGHT-TO-LEFT ISOLATE",   "FIRST STRONG ISOLATE",    "POP DIRECTIONAL ISOLATE"};
  char hex[16];
  std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
  const std::string where = escaped ? " as a JSON escape in its last verdict block" : "";
  if (IsTagCharacter(cp)) {
    return std::string("the reply holds ") + hex + ", a tag character" + where +
           " (invisible; a run of them spells hidden text), so it has no verdict";
  }
  const size_t k = cp <= 0x202E ? cp - 0x202A : 5 + (cp - 0x2066);
  return std::string("the reply holds ") + hex + " " + kBidiNames[k] + where +
         ", a bidirectional control that reorders what a reader sees (Trojan Source, "
         "CVE-2021-42574), so it has no verdict";
}

// Whether `text` is nothing but white space (host/utf8.h IsUnicodeWhiteSpace): what may follow
// the deciding block. Zero-width and other invisible characters are text there (trial13 e71).
bool IsWhiteSpaceOnly(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Utf8Step step = DecodeUtf8At(text, i);
    if (!step.valid || !IsUnicodeWhiteSpace(step.cp)) return false;
    i += step.length;
  }
  return true;
}

// The first code point of `text` that is not white space, as U+XXXX.
std::string FirstNonWhiteSpace(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Utf8Step step = DecodeUtf8At(text, i);
    if (!step.valid || !IsUnicodeWhiteSpace(step.cp)) {
      char hex[16];
      std::snprintf(
          hex, sizeof hex, "U+%04X",
          static_cast<unsigned>(step.valid ? step.cp : static_cast<unsigned char>(text[i])));
      return hex;
    }
    i += step.length;
  }
  return "";
}

// What the deciding block's opener line holds besides its ``` and an info string of `json`
// (ASCII case-insensitive) or nothing, with white space around it (trial15 A1): "" when
// nothing, else that text. The info string is part of what the reply says: `json VETO: REQ-7 is
// missing`, `json // final`, `json ~~~` or `json \`x\`` on the opener line is prose (or markup)
// that no other rule reads, and an info string with a backtick makes the line no fence at all
// to a CommonMark reader. So any claiming block that decides — whatever made it claim — must
// carry the plain info string (docs/checker-protocol.md "Which block decides").
std::string_view InfoBeyondJson(std::string_view info) {
  const size_t at = info.find_first_not_of(" \t");
  if (at == std::string_view::npos) return {};
  std::string_view rest = info.substr(at);
  if (rest.size() >= 4 && Lower(rest[0]) == 'j' && Lower(rest[1]) == 's' && Lower(rest[2]) == 'o' &&
      Lower(rest[3]) == 'n') {
    rest.remove_prefix(4);
    if (IsWhiteSpaceOnly(rest)) return {};
  } else if (IsWhiteSpaceOnly(rest)) {
    return {};
  }
  return JsTrim(info);
}

// ParseLastVerdict's rule; `why` as VerdictFaultReason words it.
std::optional<Verdict> ParseLast(std::string_view reply, const std::optional<std::string>& nonce,
                                 ReplyRule rule, std::string* why) {
  // A bidi override or a tag character anywhere: what a reader sees is not what the reply says.
  if (const char32_t cp = RawForbidden(reply)) {
    if (why) *why = ForbiddenReason(cp, false);
    return std::nullopt;
  }
  const std::vector<FencedBlock> blocks = FencedBlocks(reply);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (!ClaimsVerdict(*it)) continue;
    // `reply: block-only`: nothing but white space before the block (after it: below, for every
    // provider). Closed by construction: no prose, so no reading of prose.
    const size_t opener_at = static_cast<size_t>(it->info.data() - reply.data()) - kFence.size();
    if (rule == ReplyRule::kBlockOnly && !IsWhiteSpaceOnly(reply.substr(0, opener_at))) {
      if (why) {
        *why =
            "this provider sets reply: block-only; the reply holds text outside its verdict block "
            "(" +
            Quoted(std::string(JsTrim(reply.substr(0, opener_at)))) + ")";
      }
      return std::nullopt;
    }
    // The deciding block is a top-level fenced block as a reader of the rendered reply sees it:
    // one hidden in a comment or <details>, quoted, listed, indented or inside another fence is
    // no answer a reader sees (trial13 e60 e61 j02-j04), and no earlier block stands in for it.
    if (!it->nested.empty()) {
      if (why) {
        *why = "the reply's last verdict block is " + std::string(it->nested) +
               "; only a top-level fenced block (its ``` at the start of a line, outside any "
               "comment, quote, list or other fence) may decide, so the reply has none";
      }
      return std::nullopt;
    }
    if (const std::string_view odd = InfoBeyondJson(it->info); !odd.empty()) {
      if (why) {
        *why = "the last verdict block opens with " + Quoted("```" + std::string(odd)) +
               "; the deciding block's opener line holds ``` or ```json alone (anything else "
               "there is read by no rule), so the reply has none";
      }
      return std::nullopt;
    }
    if (const char32_t cp = EscapedForbidden(it->content)) {
      if (why) *why = ForbiddenReason(cp, true);
      return std::nullopt;
    }
    // The last claim decides alone: broken, unclosed or without the nonce, it is no verdict,
    // and no earlier block (a draft, a quoted example, an echoed artifact) stands in for it.
    if (!it->closed) {
      if (why) *why = "the last verdict block is never closed (the reply ends inside it)";
      return std::nullopt;
    }
    std::string block_why;
    std::string odd_nonce;
    std::optional<Verdict> verdict = Decode(it->content, why ? &block_why : nullptr, &odd_nonce);
    if (!verdict) {
      if (why) *why = "the last verdict block " + block_why;
      return std::nullopt;
    }
    if (nonce && verdict->nonce != *nonce) {
      if (why) {
        if (verdict->nonce) {
          *why =
              "the last verdict block carries another \"nonce\" than this dispatch's (an echoed "
              "or forged verdict)";
        } else if (!odd_nonce.empty()) {
          *why = "the last verdict block says \"nonce\": " + odd_nonce +
                 "; expected a string, the prompt's nonce (this edge sets verdictNonce)";
        } else {
          *why =
              "the last verdict block has no \"nonce\"; this edge sets verdictNonce, so the "
              "verdict must carry the prompt's nonce";
        }
      }
      return std::nullopt;
    }
    // Nothing after it may claim a verdict either (FindVerdictClaim, keys and statements): a
    // final answer that the fence scan does not see as a block (a `~~~` fence, a one-line
    // fence, a fence that an inline ``` in the prose paired off; the trial of 2026-12-02) or
    // one stated in prose (`**Verdict:** veto`, `## Verdict` + `veto`; the trial of
    // 2026-12-03), or worded without the keyword (`Final answer: **veto**.`, a negative verdict
    // word alone; the f4_prose trial of 2026-12-03) must not leave an earlier draft deciding. A
    // restatement that agrees fails too: the gate does not interpret prose, and only the last block
    // may decide.
    //
    // And nothing else may follow it: a retraction needs no verdict word ("My answer is no.",
    // "On reflection I cannot approve this.", "NOT APPROVED"; this session's trial admitted
    // each), so no word list can tell a closing remark from a change of mind. The contract says
    // to end the reply with the block; a reply that goes on has no verdict (docs/decisions.md).
    const size_t tail_at =
        static_cast<size_t>(it->content.data() - reply.data()) + it->content.size() + kFence.size();
    const std::string_view tail = reply.substr(std::min(tail_at, reply.size()));
    if (!IsWhiteSpaceOnly(tail)) {  // only white space may follow, nothing invisible either
      if (why) {
        if (IsBlankText(tail)) {
          *why = "the reply goes on after its last verdict block with invisible characters (" +
                 FirstNonWhiteSpace(tail) +
                 " first); the verdict block must end the reply, with nothing after it but white "
                 "space";
        } else if (const auto claim = InEitherReading(tail, [](std::string_view s) {
                     return FindVerdictClaim(s, ClaimForms::kKeysAndStatements);
                   })) {
          const std::string said(tail.substr(claim->at, claim->end - claim->at));
          *why = "the reply claims a verdict after its last verdict block (" + Quoted(said) +
                 "); only the last verdict block may decide, so end the reply with it";
        } else {
          *why = "the reply goes on after its last verdict block (" +
                 Quoted(std::string(JsTrim(tail))) +
                 "); the verdict block must end the reply, with nothing after it";
        }
      }
      return std::nullopt;
    }
    // The closer must be one to a CommonMark reader too (trial15 b07): at a line's start,
    // indented at most 3 spaces, and followed on its line by spaces or tabs only (a CR of a
    // CRLF line end too). A ``` after text on its line, or followed by a no-break space or any
    // other white space (the rest of the reply is white space here), closes nothing: the reader
    // sees the block run on to the reply's end.
    const std::string_view last_line = it->content.substr(it->content.rfind('\n') + 1);
    const std::string_view closer_rest = tail.substr(0, tail.find('\n'));
    const bool starts_line =
        last_line.size() <= 3 && last_line.find_first_not_of(' ') == std::string_view::npos;
    const size_t odd = closer_rest.find_first_not_of(" \t\r");
    if (!starts_line || odd != std::string_view::npos) {
      if (why) {
        std::string where = "does not start its line";
        if (starts_line) {
          const Utf8Step step = DecodeUtf8At(closer_rest, odd);
          char hex[16];
          std::snprintf(hex, sizeof hex, "U+%04X",
                        static_cast<unsigned>(
                            step.valid ? step.cp : static_cast<unsigned char>(closer_rest[odd])));
          where = "is followed on its line by " + std::string(hex);
        }
        *why = "the last verdict block's closing ``` " + where +
               "; a closing fence starts a line (at most 3 spaces before it) and only spaces or "
               "tabs follow it, so a reader sees the block never closed";
      }
      return std::nullopt;
    }
    // An allow must be the reply's only answer: an earlier block that is itself a valid veto
    // (a draft, an "example", a verdict the checker was told to give by the artifact it read)
    // leaves the reply saying both, and a reply that could be read either way has no verdict
    // (trial11 F2 admitted `veto` then `allow`, nonce on or off). Quoted contracts and broken
    // drafts do not decode, so they still may precede; an earlier allow before a final veto
    // changes nothing, the veto decides. docs/decisions.md, "Verdict blocks that disagree".
    if (verdict->allow) {
      // The allow's own words get the after-block scan: a summary or finding that claims a
      // verdict ("Verdict: veto (REQ-7 missing)", "Rejected: …", ["verdict: veto"]; trial13
      // R2 f11 f12 e66 e67) is printed under "moved", and says the opposite of the block.
      std::vector<std::pair<std::string_view, const std::string*>> words{
          {"summary", &verdict->summary}};
      for (const std::string& finding : verdict->findings)
        words.emplace_back("a finding", &finding);
      for (const auto& [field, text] : words) {
        if (const auto claim = OwnWordsClaim(*text)) {
          if (why) {
            const std::string said(
                std::string_view(*text).substr(claim->at, claim->end - claim->at));
            *why = "the last verdict block allows, but its " + std::string(field) +
                   " claims a verdict (" + Quoted(said) +
                   "); only the \"verdict\" field may decide, so a reply that says both has none";
          }
          return std::nullopt;
        }
      }
      for (auto earlier = std::next(it); earlier != blocks.rend(); ++earlier) {
        if (!ClaimsVerdict(*earlier)) continue;
        const std::optional<Verdict> draft = Decode(earlier->content, nullptr);
        if (!draft || draft->allow) {
          // An earlier block that says a decision value counts as a veto too (a draft
          // `{"approved": false, …}`, an ambiguous allow; trial13 R4 e51).
          const std::optional<std::string> said = EarlierDecisionValue(earlier->content);
          if (!said) continue;
          if (why) {
            *why = "the reply's verdict blocks disagree: an earlier block says " + *said +
                   ", the last allows; a reply must give one verdict, so it has none";
          }
          return std::nullopt;
        }
        if (why) {
          *why = "the reply's verdict blocks disagree: an earlier block vetoes (" +
                 Quoted(draft->summary) +
                 "), the last allows; a reply must give one verdict, so it has none";
        }
        return std::nullopt;
      }
      // So does a veto stated in prose before it (`**Verdict:** veto.` and then an allow block
      // "the design wanted", hidden in an HTML comment or an indented sample; trial12 a11b,
      // d01, d02, d08): a reader of the reply takes the veto.
      const std::string_view before = reply.substr(0, it->content.data() - reply.data());
      if (const auto stated =
              InEitherReading(before, [](std::string_view s) { return StatedVeto(s); })) {
        if (why) {
          const std::string said(before.substr(stated->at, stated->end - stated->at));
          *why = "the reply states a veto (" + Quoted(said) +
                 ") before its last verdict block, which allows; a reply must give one verdict, "
                 "so it has none";
        }
        return std::nullopt;
      }
    }
    return verdict;
  }
  if (why) {
    *why = blocks.empty() ? "the reply has no fenced block"
                          : "none of the reply's " + std::to_string(blocks.size()) +
                                " fenced blocks claims to be a verdict (a ```json block, or "
                                "one that starts with { or holds \"verdict\")";
  }
  return std::nullopt;
}

}  // namespace

std::optional<Verdict> DecodeVerdictBlock(std::string_view content) {
  return Decode(content, nullptr);
}

std::optional<Verdict> ParseLastVerdict(std::string_view reply,
                                        const std::optional<std::string>& nonce, ReplyRule rule) {
  return ParseLast(reply, nonce, rule, nullptr);
}

std::string VerdictFaultReason(std::string_view reply, const std::optional<std::string>& nonce,
                               ReplyRule rule) {
  std::string why;
  if (ParseLast(reply, nonce, rule, &why)) return "";
  return why;
}

std::string BoundVerdictLine(std::string_view text) {
  return BoundLine(text, kMaxVerdictLineBytes);
}

Verdict BoundVerdict(const Verdict& verdict) {
  Verdict out;
  out.allow = verdict.allow;
  out.summary = BoundVerdictLine(verdict.summary);
  out.nonce = verdict.nonce;
  const size_t kept = std::min(verdict.findings.size(), kMaxVerdictFindings);
  out.findings.reserve(kept + 1);
  for (size_t i = 0; i < kept; ++i) out.findings.push_back(BoundVerdictLine(verdict.findings[i]));
  if (verdict.findings.size() > kept) {
    out.findings.push_back("\xE2\x80\xA6 and " + std::to_string(verdict.findings.size() - kept) +
                           " more findings");
  }
  return out;
}

}  // namespace devflow

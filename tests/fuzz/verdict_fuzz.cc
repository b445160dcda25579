// Fuzzes verdict parsing (checker/verdict.h) on arbitrary checker replies.
// Invariants beyond "no crash":
//  - fenced blocks lie inside the reply, in order, without overlapping; only the last may be
//    unclosed, and then it runs to the end of the reply;
//  - ParseLastVerdict is the last block that ClaimsVerdict, when it is closed and
//    DecodeVerdictBlock accepts it, it is not nested, its info string is `json` or nothing
//    (white space around it), its closing ``` starts its line (at most 3 spaces before it) with
//    only spaces, tabs or a CR after it there, nothing but white space follows it, no
//    bidi override or tag character is in the reply (nor escaped in it), and it is a veto or no
//    earlier claiming block decodes as a veto (nullopt otherwise; an allow may also be refused for
//    a veto stated in prose before it); a verdict's block claims to be one;
//  - the same with a nonce: the last claiming block must carry exactly it;
//  - BoundVerdict keeps every line within kMaxVerdictLineBytes, valid UTF-8, at most
//    kMaxVerdictFindings + 1 findings, and leaves a verdict that fits unchanged;
//  - a parsed verdict has a summary that is non-blank and valid UTF-8, valid UTF-8 findings and
//    nonce, and re-emitted as a fenced ```json block it parses back to the same verdict.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "checker/verdict.h"
#include "host/utf8.h"
#include "tests/fuzz/fuzz_check.h"

namespace devflow {
namespace {

// The structural rules (docs/checker-protocol.md "Which block decides", trial13/14): a bidi
// embedding/override/isolate or a tag character anywhere in the reply, or written as a JSON
// escape in the deciding block, leaves no verdict; so does a deciding block that is nested
// (FencedBlock::nested) or followed by anything but white space.
bool Forbidden(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
         (cp >= 0xE0000 && cp <= 0xE007F);
}

bool HasRawForbidden(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Utf8Step step = DecodeUtf8At(text, i);
    if (step.valid && Forbidden(step.cp)) return true;
    i += step.length;
  }
  return false;
}

long Hex4(std::string_view text, size_t at) {
  if (at + 4 > text.size()) return -1;
  long v = 0;
  for (size_t k = at; k < at + 4; ++k) {
    const char c = text[k];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

bool HasEscapedForbidden(std::string_view text) {
  for (size_t i = text.find("\\u"); i != std::string_view::npos; i = text.find("\\u", i + 1)) {
    const long unit = Hex4(text, i + 2);
    if (unit < 0) continue;
    char32_t cp = static_cast<char32_t>(unit);
    if (unit >= 0xD800 && unit <= 0xDBFF && text.substr(i + 6, 2) == "\\u") {
      const long low = Hex4(text, i + 8);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        cp = 0x10000 + ((static_cast<char32_t>(unit) - 0xD800) << 10) +
             (static_cast<char32_t>(low) - 0xDC00);
      }
    }
    if (Forbidden(cp)) return true;
  }
  return false;
}

bool WhiteSpaceOnly(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Utf8Step step = DecodeUtf8At(text, i);
    if (!step.valid || !IsUnicodeWhiteSpace(step.cp)) return false;
    i += step.length;
  }
  return true;
}

// Whether a deciding block's info string is plain (trial15 A1): `json` in any case or nothing,
// after spaces and tabs and before nothing but white space.
bool PlainInfo(std::string_view info) {
  size_t at = 0;
  while (at < info.size() && (info[at] == ' ' || info[at] == '\t')) ++at;
  std::string_view rest = info.substr(at);
  if (rest.size() >= 4) {
    std::string word(rest.substr(0, 4));
    for (char& c : word) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (word == "json") rest.remove_prefix(4);
  }
  return WhiteSpaceOnly(rest);
}

bool SameVerdict(const Verdict& a, const Verdict& b) {
  return a.allow == b.allow && a.summary == b.summary && a.findings == b.findings &&
         a.nonce == b.nonce;
}

bool IsAsciiBlank(std::string_view s) {
  return s.find_first_not_of(" \t\n\r\v\f") == std::string_view::npos;
}

std::string Fenced(const Verdict& v) {
  nlohmann::ordered_json block;
  block["verdict"] = v.allow ? "allow" : "veto";
  block["summary"] = v.summary;
  block["findings"] = v.findings;
  if (v.nonce) block["nonce"] = *v.nonce;
  // A summary may hold backticks written as \u0060 in the reply; keep them escaped so the
  // re-emitted block is not cut at a fence inside a string (backticks only occur in strings).
  std::string json;
  for (char c : block.dump()) {
    if (c == '`') {
      json += "\\u0060";
    } else {
      json += c;
    }
  }
  return "checked.\n```json\n" + json + "\n```\n";
}

}  // namespace
}  // namespace devflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace devflow;
  const std::string_view reply(reinterpret_cast<const char*>(data), size);

  const std::vector<FencedBlock> blocks = FencedBlocks(reply);
  const char* previous_end = reply.data();
  std::optional<Verdict> expected;
  bool decided = false;        // some block claimed to be the verdict
  bool vetoed_before = false;  // a claiming block before the current one decoded as a veto
  for (size_t i = 0; i < blocks.size(); ++i) {
    const FencedBlock& block = blocks[i];
    const std::string_view content = block.content;
    DG_FUZZ_CHECK(content.empty() || content.data() >= previous_end,
                  "blocks are in order and do not overlap");
    DG_FUZZ_CHECK(content.empty() || content.data() + content.size() <= reply.data() + reply.size(),
                  "a block lies inside the reply");
    if (block.closed) {
      DG_FUZZ_CHECK(std::string_view(content.data() + content.size(), 3) == "```",
                    "a closed block ends at a fence");
      previous_end = content.data() + content.size() + 3;
    } else {
      DG_FUZZ_CHECK(i + 1 == blocks.size(), "only the last block is unclosed");
      DG_FUZZ_CHECK(
          content.empty() || content.data() + content.size() == reply.data() + reply.size(),
          "an unclosed block runs to the end of the reply");
    }
    if (ClaimsVerdict(block)) {
      decided = true;
      const std::optional<Verdict> decoded =
          block.closed ? DecodeVerdictBlock(content) : std::nullopt;
      expected = decoded;
      if (!block.nested.empty() || !PlainInfo(block.info) || HasEscapedForbidden(content)) {
        expected.reset();
      }
      if (expected) {
        const size_t tail = static_cast<size_t>(content.data() - reply.data()) + content.size() + 3;
        if (tail < reply.size() && !WhiteSpaceOnly(reply.substr(tail))) expected.reset();
        // The closer is one to a CommonMark reader (trial15 b07): at most 3 spaces before it on
        // its line, only spaces, tabs or a CR after it there.
        const std::string_view last_line = content.substr(content.rfind('\n') + 1);
        const std::string_view after = reply.substr(std::min(tail, reply.size()));
        const std::string_view closer_rest = after.substr(0, after.find('\n'));
        if (last_line.size() > 3 || last_line.find_first_not_of(' ') != std::string_view::npos ||
            closer_rest.find_first_not_of(" \t\r") != std::string_view::npos) {
          expected.reset();
        }
        if (expected && expected->allow && vetoed_before) expected.reset();
      }
      if (decoded && !decoded->allow) vetoed_before = true;
    }
  }
  if (!decided || HasRawForbidden(reply)) expected.reset();

  const std::optional<Verdict> verdict = ParseLastVerdict(reply);
  // A veto stated in prose before an allow block also leaves none (the prose rule is the
  // parser's own; here only: it never turns a veto into nothing, nor nothing into a verdict).
  DG_FUZZ_CHECK(!verdict || expected,
                "a verdict is found only when the last claiming block decodes");
  DG_FUZZ_CHECK(verdict || !expected || expected->allow, "a last valid veto block always decides");
  const std::string other_nonce = "fuzz-nonce";
  const std::optional<Verdict> with_nonce = ParseLastVerdict(reply, other_nonce);
  DG_FUZZ_CHECK(with_nonce.has_value() == (verdict && verdict->nonce == other_nonce),
                "with a nonce, the last claiming block must carry it");
  if (!verdict) return 0;
  DG_FUZZ_CHECK(SameVerdict(*verdict, *expected), "the last claiming block decides");

  const Verdict bounded = BoundVerdict(*verdict);
  DG_FUZZ_CHECK(bounded.allow == verdict->allow && bounded.nonce == verdict->nonce,
                "bounding keeps the decision");
  DG_FUZZ_CHECK(
      bounded.summary.size() <= kMaxVerdictLineBytes && fuzz::IsValidUtf8(bounded.summary),
      "a bounded summary fits and is valid UTF-8");
  DG_FUZZ_CHECK(bounded.findings.size() <= kMaxVerdictFindings + 1, "bounded findings are few");
  for (const std::string& finding : bounded.findings) {
    DG_FUZZ_CHECK(finding.size() <= kMaxVerdictLineBytes && fuzz::IsValidUtf8(finding),
                  "a bounded finding fits and is valid UTF-8");
  }
  if (verdict->summary.size() <= kMaxVerdictLineBytes &&
      verdict->findings.size() <= kMaxVerdictFindings) {
    bool fits = true;
    for (const std::string& f : verdict->findings) fits = fits && f.size() <= kMaxVerdictLineBytes;
    if (fits) DG_FUZZ_CHECK(SameVerdict(bounded, *verdict), "a verdict that fits is unchanged");
  }
  DG_FUZZ_CHECK(!verdict->summary.empty() && !IsAsciiBlank(verdict->summary),
                "a verdict's summary is non-blank");
  DG_FUZZ_CHECK(fuzz::IsValidUtf8(verdict->summary), "a verdict's summary is valid UTF-8");
  for (const std::string& finding : verdict->findings) {
    DG_FUZZ_CHECK(fuzz::IsValidUtf8(finding), "a verdict's findings are valid UTF-8");
  }
  DG_FUZZ_CHECK(!verdict->nonce || fuzz::IsValidUtf8(*verdict->nonce),
                "a verdict's nonce is valid UTF-8");

  const std::optional<Verdict> again = ParseLastVerdict(Fenced(*verdict));
  DG_FUZZ_CHECK(again.has_value(), "a re-emitted verdict parses");
  DG_FUZZ_CHECK(SameVerdict(*verdict, *again), "a re-emitted verdict parses to the same verdict");
  return 0;
}

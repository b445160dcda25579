// Verdict parsing: upstream's fence regex, JSON.parse and String#trim reproduced on bytes
// (reference §4.7), with our decision rule on top (issue 7 items 1, 2): the last block that
// claims to be a verdict decides, and it must be a valid one with no key twice.
#include "checker/verdict.h"
#include "host/json_depth.h"
#include "host/utf8.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include <nlohmann/json.hpp>

namespace devflow {
namespace {

constexpr std::string_view kFence = "```";

// A checker reply reaches upstream as a JS string, i.e. decoded from UTF-8 with U+FFFD for
// every maximal ill-formed subsequence; ReplaceInvalidUtf8 (host/utf8.h) does the same, so a
// stray byte does not fail a verdict that upstream would accept.

bool IsJsBlank(std::string_view s) { return JsTrim(s).empty(); }

// ASCII lowercase, for the case-insensitive parts of ClaimsVerdict.
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool ContainsNoCase(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && Lower(haystack[i + k]) == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

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

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

bool MentionsVerdictKey(std::string_view text) {
  if (ContainsNoCase(text, "\"verdict\"")) return true;
  // An unquoted key at the start of a line, as YAML, JSON5 or TOML write it: `verdict: veto`.
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    size_t i = 0;
    while (i < line.size() && (IsSpace(line[i]) || line[i] == '{' || line[i] == '-')) ++i;
    if (ContainsNoCase(line.substr(i, 7), "verdict")) {
      size_t j = i + 7;
      while (j < line.size() && IsSpace(line[j])) ++j;
      if (j < line.size() && (line[j] == ':' || line[j] == '=')) return true;
    }
    at = end + 1;
  }
  return false;
}

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
      blocks.push_back(FencedBlock{reply.substr(info_at), std::string_view(), false});
      break;
    }
    const std::string_view info = reply.substr(info_at, newline - info_at);
    const size_t close = reply.find(kFence, newline + 1);
    if (close == std::string_view::npos) {
      blocks.push_back(FencedBlock{info, reply.substr(newline + 1), false});
      break;
    }
    blocks.push_back(FencedBlock{info, reply.substr(newline + 1, close - newline - 1), true});
    pos = close + kFence.size();
  }
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
  return MentionsVerdictKey(block.content);
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

// DecodeVerdictBlock's rules, one by one; on the first that fails, `why` says which (the
// wording of VerdictFaultReason, after "the last verdict block ").
std::optional<Verdict> Decode(std::string_view content, std::string* why) {
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

  const auto summary = value.find("summary");
  if (summary == value.end()) return no("has no \"summary\"; expected a non-blank string");
  if (!summary->is_string()) {
    return no("says \"summary\": " + Quoted(*summary) + "; expected a non-blank string");
  }
  const auto& summary_text = summary->get_ref<const std::string&>();
  if (IsJsBlank(summary_text)) {
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
  if (nonce != value.end() && nonce->is_string()) out.nonce = nonce->get<std::string>();
  return out;
}

// ParseLastVerdict's rule; `why` as VerdictFaultReason words it.
std::optional<Verdict> ParseLast(std::string_view reply, const std::optional<std::string>& nonce,
                                 std::string* why) {
  const std::vector<FencedBlock> blocks = FencedBlocks(reply);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (!ClaimsVerdict(*it)) continue;
    // The last claim decides alone: broken, unclosed or without the nonce, it is no verdict,
    // and no earlier block (a draft, a quoted example, an echoed artifact) stands in for it.
    if (!it->closed) {
      if (why) *why = "the last verdict block is never closed (the reply ends inside it)";
      return std::nullopt;
    }
    std::string block_why;
    std::optional<Verdict> verdict = Decode(it->content, why ? &block_why : nullptr);
    if (!verdict) {
      if (why) *why = "the last verdict block " + block_why;
      return std::nullopt;
    }
    if (nonce && verdict->nonce != *nonce) {
      if (why) {
        *why = verdict->nonce ? "the last verdict block carries another \"nonce\" than this "
                                "dispatch's (an echoed or forged verdict)"
                              : "the last verdict block has no \"nonce\"; this edge sets "
                                "verdictNonce, so the verdict must carry the prompt's nonce";
      }
      return std::nullopt;
    }
    // Nothing after it may look like a verdict either: a final answer that the fence scan does
    // not see as a block (a `~~~` fence, a one-line fence, a fence that an inline ``` in the
    // prose paired off) must not leave an earlier draft deciding (the trial of 2026-12-02).
    const size_t tail_at =
        static_cast<size_t>(it->content.data() - reply.data()) + it->content.size() + kFence.size();
    if (tail_at < reply.size() && MentionsVerdictKey(reply.substr(tail_at))) {
      if (why) {
        *why =
            "the reply names a verdict key after its last verdict block (a final answer in a "
            "fence the gate does not read as one?)";
      }
      return std::nullopt;
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
                                        const std::optional<std::string>& nonce) {
  return ParseLast(reply, nonce, nullptr);
}

std::string VerdictFaultReason(std::string_view reply, const std::optional<std::string>& nonce) {
  std::string why;
  if (ParseLast(reply, nonce, &why)) return "";
  return why;
}

std::string BoundVerdictLine(std::string_view text) {
  if (text.size() <= kMaxVerdictLineBytes) return std::string(text);
  // The marker is at most 27 bytes ("… [cut: " + 10 digits + " bytes]", replies ≤ 1 GiB).
  constexpr size_t kMarkerRoom = 32;
  size_t keep = kMaxVerdictLineBytes - kMarkerRoom;
  // Back up to the start of a UTF-8 sequence so no code point is split.
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  std::string out(text.substr(0, keep));
  out += "\xE2\x80\xA6 [cut: " + std::to_string(text.size() - keep) + " bytes]";
  return out;
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

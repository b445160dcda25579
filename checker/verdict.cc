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

std::optional<Verdict> DecodeVerdictBlock(std::string_view content) {
  // JSON.parse does not skip a byte-order mark; nlohmann would.
  if (content.substr(0, 3) == "\xEF\xBB\xBF") return std::nullopt;
  if (JsonNestingDepth(content) > kMaxJsonDepth) return std::nullopt;  // no verdict nests so deep
  const std::string text = JsonTextAsJsReadsIt(content);               // as JSON.parse reads it
  const nlohmann::json value = ParseWithoutDuplicateKeys(text);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;

  const auto verdict = value.find("verdict");
  if (verdict == value.end() || !verdict->is_string()) return std::nullopt;
  const auto& word = verdict->get_ref<const std::string&>();
  if (word != "allow" && word != "veto") return std::nullopt;

  const auto summary = value.find("summary");
  if (summary == value.end() || !summary->is_string()) return std::nullopt;
  const auto& summary_text = summary->get_ref<const std::string&>();
  if (IsJsBlank(summary_text)) return std::nullopt;

  Verdict out;
  out.allow = word == "allow";
  out.summary = summary_text;
  const auto findings = value.find("findings");
  if (findings != value.end()) {
    if (!findings->is_array()) return std::nullopt;
    for (const auto& item : *findings) {
      if (!item.is_string()) return std::nullopt;
      out.findings.push_back(item.get<std::string>());
    }
  }
  const auto nonce = value.find("nonce");
  if (nonce != value.end() && nonce->is_string()) out.nonce = nonce->get<std::string>();
  return out;
}

std::optional<Verdict> ParseLastVerdict(std::string_view reply,
                                        const std::optional<std::string>& nonce) {
  const std::vector<FencedBlock> blocks = FencedBlocks(reply);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (!ClaimsVerdict(*it)) continue;
    // The last claim decides alone: broken, unclosed or without the nonce, it is no verdict,
    // and no earlier block (a draft, a quoted example, an echoed artifact) stands in for it.
    if (!it->closed) return std::nullopt;
    std::optional<Verdict> verdict = DecodeVerdictBlock(it->content);
    if (!verdict || (nonce && verdict->nonce != *nonce)) return std::nullopt;
    // Nothing after it may look like a verdict either: a final answer that the fence scan does
    // not see as a block (a `~~~` fence, a one-line fence, a fence that an inline ``` in the
    // prose paired off) must not leave an earlier draft deciding (the trial of 2026-12-02).
    const size_t tail_at =
        static_cast<size_t>(it->content.data() - reply.data()) + it->content.size() + kFence.size();
    if (tail_at < reply.size() && MentionsVerdictKey(reply.substr(tail_at))) return std::nullopt;
    return verdict;
  }
  return std::nullopt;
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

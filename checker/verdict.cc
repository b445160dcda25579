// Verdict parsing with the semantics of upstream's JavaScript parser (reference §4.7): the
// fence regex, JSON.parse and String#trim are reproduced on bytes.
#include "checker/verdict.h"
#include "host/json_depth.h"

#include <cstdint>

#include <nlohmann/json.hpp>

namespace devflow {
namespace {

constexpr std::string_view kFence = "```";

// A checker reply reaches upstream as a JS string, i.e. decoded from UTF-8 with U+FFFD for
// every maximal ill-formed subsequence (WHATWG "decode"). Doing the same here keeps a stray
// byte from failing a verdict that upstream would accept, and keeps every decoded string
// valid UTF-8 for the journal and reports.
std::string ReplaceInvalidUtf8(std::string_view s) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    int need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      out.append(kReplacement);
      ++i;
      continue;
    }
    size_t j = i + 1;
    bool complete = true;
    for (int k = 0; k < need; ++k, ++j) {
      const unsigned char first_lo = k == 0 ? lo : 0x80;
      const unsigned char first_hi = k == 0 ? hi : 0xBF;
      if (j >= n || static_cast<unsigned char>(s[j]) < first_lo ||
          static_cast<unsigned char>(s[j]) > first_hi) {
        complete = false;
        break;
      }
    }
    if (complete) {
      out.append(s.substr(i, j - i));
    } else {
      out.append(kReplacement);  // the offending byte is examined again as a new start
    }
    i = j;
  }
  return out;
}

// Decodes one code point from valid UTF-8 (the input has been through ReplaceInvalidUtf8).
char32_t NextCodePoint(std::string_view s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  int extra = b < 0x80 ? 0 : b < 0xE0 ? 1 : b < 0xF0 ? 2 : 3;
  char32_t cp = extra == 0 ? b : extra == 1 ? (b & 0x1F) : extra == 2 ? (b & 0x0F) : (b & 0x07);
  ++i;
  for (int k = 0; k < extra && i < s.size(); ++k, ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
  }
  return cp;
}

// ECMAScript WhiteSpace + LineTerminator, the set String.prototype.trim removes.
bool IsJsTrimSpace(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool IsJsBlank(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (!IsJsTrimSpace(NextCodePoint(s, i))) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string_view> FencedBlocks(std::string_view reply) {
  // /```[^\n]*\n([\s\S]*?)```/g: a match attempt at an opening fence fails only when no
  // newline or no later fence follows it, and then every later attempt fails too.
  std::vector<std::string_view> blocks;
  size_t pos = 0;
  while (true) {
    const size_t open = reply.find(kFence, pos);
    if (open == std::string_view::npos) break;
    const size_t newline = reply.find('\n', open + kFence.size());
    if (newline == std::string_view::npos) break;
    const size_t close = reply.find(kFence, newline + 1);
    if (close == std::string_view::npos) break;
    blocks.push_back(reply.substr(newline + 1, close - newline - 1));
    pos = close + kFence.size();
  }
  return blocks;
}

std::optional<Verdict> DecodeVerdictBlock(std::string_view content) {
  // JSON.parse does not skip a byte-order mark; nlohmann would.
  if (content.substr(0, 3) == "\xEF\xBB\xBF") return std::nullopt;
  if (JsonNestingDepth(content) > kMaxJsonDepth) return std::nullopt;  // no verdict nests so deep
  const std::string text = ReplaceInvalidUtf8(content);
  const nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
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

std::optional<Verdict> ParseLastVerdict(std::string_view reply) {
  const std::vector<std::string_view> blocks = FencedBlocks(reply);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (auto verdict = DecodeVerdictBlock(*it)) return verdict;
  }
  return std::nullopt;
}

}  // namespace devflow

// The agent-gate prompt (reference §4.5) and its inverse for the built-in grounding checker.
#include "checker/prompt.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace devflow {
namespace {

constexpr std::string_view kIntroPrefix = "You are gate-checking devflow card ";
constexpr std::string_view kIntroEdge = " on edge ";
constexpr std::string_view kSeparatorPrefix = "--- artifact ";
// The fixed verdict contract, upstream's exact text (checkerPrompt in
// packages/devflow-agent-gate/src/index.ts, 03a5e791): a checker sees the same prompt under
// either host. kReadOnlyLine is the contract's first line; the parse finds the trailer by it.
constexpr std::string_view kReadOnlyLine =
    "Judge only against the instruction above. You are a read-only checker: do not call any";
constexpr std::string_view kReadOnlyLine2 =
    "devflow mutation tool or any file-writing tool; your verdict is your only deliverable.";
constexpr std::string_view kContractLine =
    "End your reply with exactly one fenced JSON block of this shape:";
// Ours, for a provider that sets `reply: block-only` (docs/providers.md): the gate refuses any
// text around the block, so the prompt asks for the block alone.
constexpr std::string_view kBlockOnlyContractLine =
    "Reply with only one fenced JSON block of this shape, and no text before or after it:";
constexpr std::string_view kShapeHead =
    R"({ "verdict": "allow" | "veto", "summary": "<one line>", "findings": ["<one item per defect or confirmation>"])";

std::string JsonQuote(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Everything from the blank line before the read-only sentence to the end.
std::string Trailer(const std::optional<std::string>& nonce, bool block_only) {
  std::string out = "\n\n";
  out.append(kReadOnlyLine).append("\n").append(kReadOnlyLine2).append("\n");
  out.append(block_only ? kBlockOnlyContractLine : kContractLine);
  if (nonce) {
    out.append(" Include \"nonce\": ").append(JsonQuote(*nonce)).append(" in that block.");
  }
  out.append("\n\n```json\n").append(kShapeHead);
  if (nonce) out.append(", \"nonce\": ").append(JsonQuote(*nonce));
  out.append(" }\n```");
  return out;
}

bool IsKindChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!first && c == '-');
}

// `--- artifact <kind> (rev <n>) ---` exactly; kind per the upstream kind grammar.
std::optional<PromptInput> ParseSeparatorLine(std::string_view line) {
  if (line.substr(0, kSeparatorPrefix.size()) != kSeparatorPrefix) return std::nullopt;
  line.remove_prefix(kSeparatorPrefix.size());
  constexpr std::string_view kRev = " (rev ";
  constexpr std::string_view kTail = ") ---";
  const size_t rev_at = line.find(kRev);
  if (rev_at == 0 || rev_at == std::string_view::npos) return std::nullopt;
  PromptInput input;
  input.kind = std::string(line.substr(0, rev_at));
  for (size_t i = 0; i < input.kind.size(); ++i) {
    if (!IsKindChar(input.kind[i], i == 0)) return std::nullopt;
  }
  line.remove_prefix(rev_at + kRev.size());
  if (line.size() <= kTail.size() || line.substr(line.size() - kTail.size()) != kTail) {
    return std::nullopt;
  }
  const std::string_view digits = line.substr(0, line.size() - kTail.size());
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  // The gate writes revisions without leading zeros; "(rev 007)" is content, not a separator
  // (found by tests/fuzz/prompt_fuzz.cc: it would not re-assemble to the same text).
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), input.rev);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return input;
}

Status NotAPrompt(std::string_view missing) {
  return Status::Error("usage",
                       "the text on stdin is not an agent-gate prompt: " + std::string(missing) +
                           "; pipe the prompt the agent gate assembles");
}

// Extracts the nonce from the trailer's shape line, if it carries one.
std::optional<std::string> NonceOfTrailer(std::string_view trailer) {
  const std::string head = "```json\n" + std::string(kShapeHead) + ", \"nonce\": ";
  const size_t at = trailer.find(head);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = trailer.substr(at + head.size());
  constexpr std::string_view kEnd = " }\n```";
  if (rest.size() < kEnd.size() || rest.substr(rest.size() - kEnd.size()) != kEnd) {
    return std::nullopt;
  }
  const auto value = nlohmann::json::parse(rest.substr(0, rest.size() - kEnd.size()), nullptr,
                                           /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_string()) return std::nullopt;
  return value.get<std::string>();
}

// The gate's own text of the prompt, the one place that knows its layout: N+1 pieces for N
// inputs, the prompt being piece 0, input 0's content, piece 1, ..., input N-1's, piece N
// (the header then the first separator; each further separator; the trailer).
std::vector<std::string> GateText(const PromptParts& parts) {
  std::vector<std::string> out;
  out.reserve(parts.inputs.size() + 1);
  std::string text;
  text.append(parts.instruction).append("\n\n");
  text.append(kIntroPrefix).append(parts.card_id).append(kIntroEdge).append(parts.edge);
  text.append(".\n\n# ").append(parts.title).append("\n\n").append(parts.body);
  for (const PromptInput& input : parts.inputs) {
    text.append("\n\n").append(kSeparatorPrefix).append(input.kind);
    text.append(" (rev ").append(std::to_string(input.rev)).append(") ---\n\n");
    out.push_back(std::move(text));
    text.clear();
  }
  text.append(Trailer(parts.nonce, parts.block_only));
  out.push_back(std::move(text));
  return out;
}

}  // namespace

std::string AssemblePrompt(const PromptParts& parts) {
  std::vector<std::string> text = GateText(parts);
  std::string out = std::move(text[0]);
  for (size_t i = 0; i < parts.inputs.size(); ++i) {
    out.append(parts.inputs[i].content).append(text[i + 1]);
  }
  return out;
}

PromptPieces AssemblePromptPieces(PromptParts&& parts) {
  std::vector<std::string> text = GateText(parts);
  PromptPieces out;
  out.Append(std::move(text[0]));
  for (size_t i = 0; i < parts.inputs.size(); ++i) {
    out.Append(std::move(parts.inputs[i].content));
    parts.inputs[i].content.clear();  // a moved-from string is only valid-but-unspecified
    out.Append(std::move(text[i + 1]));
  }
  return out;
}

Result<PromptParts> ParsePrompt(std::string_view prompt) {
  PromptParts parts;

  // The instruction is configured (trusted) text, so the first intro line ends it; a card body
  // quoting the intro cannot move that boundary.
  const std::string intro_marker = "\n\n" + std::string(kIntroPrefix);
  const size_t intro = prompt.find(intro_marker);
  if (intro == std::string_view::npos) {
    return NotAPrompt("no line \"You are gate-checking devflow card <id> on edge <edge>.\"");
  }
  parts.instruction = std::string(prompt.substr(0, intro));
  size_t pos = intro + intro_marker.size();
  const size_t intro_end = prompt.find('\n', pos);
  if (intro_end == std::string_view::npos) return NotAPrompt("the intro line ends the text");
  std::string_view intro_rest = prompt.substr(pos, intro_end - pos);
  const size_t edge_at = intro_rest.find(kIntroEdge);
  if (edge_at == std::string_view::npos || intro_rest.empty() || intro_rest.back() != '.') {
    return NotAPrompt("the intro line does not name a card and an edge");
  }
  parts.card_id = std::string(intro_rest.substr(0, edge_at));
  parts.edge = std::string(intro_rest.substr(edge_at + kIntroEdge.size(),
                                             intro_rest.size() - 1 - edge_at - kIntroEdge.size()));

  pos = intro_end;
  if (prompt.substr(pos, 4) != "\n\n# ") return NotAPrompt("no \"# <title>\" line after the intro");
  pos += 4;
  const size_t title_end = prompt.find('\n', pos);
  if (title_end == std::string_view::npos) return NotAPrompt("the title line ends the text");
  parts.title = std::string(prompt.substr(pos, title_end - pos));
  if (prompt.substr(title_end, 2) != "\n\n") return NotAPrompt("no blank line after the title");
  const size_t body_start = title_end + 2;

  // The trailer is fixed text; the last occurrence of its first line starts it, so an input
  // that quotes the read-only sentence stays content.
  const std::string trailer_marker = "\n\n" + std::string(kReadOnlyLine) + "\n";
  const size_t trailer = prompt.rfind(trailer_marker);
  if (trailer == std::string_view::npos || trailer < body_start) {
    return NotAPrompt("no read-only checker sentence after the card");
  }
  const std::string_view trailer_text = prompt.substr(trailer);
  parts.nonce = NonceOfTrailer(trailer_text);
  parts.block_only = trailer_text == Trailer(parts.nonce, true);
  if (!parts.block_only && trailer_text != Trailer(parts.nonce, false)) {
    return NotAPrompt("the verdict contract after the read-only sentence is not the gate's");
  }

  // Between the title and the trailer: the body, then each input under its separator.
  const std::string_view middle = prompt.substr(body_start, trailer - body_start);
  const std::string sep_marker = "\n\n" + std::string(kSeparatorPrefix);
  size_t search = 0;
  size_t content_start = std::string_view::npos;  // npos while still in the body
  size_t segment_start = 0;
  while (true) {
    const size_t at = middle.find(sep_marker, search);
    if (at == std::string_view::npos) break;
    const size_t line_start = at + 2;
    const size_t line_end = middle.find('\n', line_start);
    std::optional<PromptInput> input;
    if (line_end != std::string_view::npos && middle.substr(line_end, 2) == "\n\n") {
      input = ParseSeparatorLine(middle.substr(line_start, line_end - line_start));
    }
    if (!input) {
      search = at + 1;
      continue;
    }
    const std::string_view before = middle.substr(segment_start, at - segment_start);
    if (content_start == std::string_view::npos) {
      parts.body = std::string(before);
    } else {
      parts.inputs.back().content = std::string(before);
    }
    parts.inputs.push_back(std::move(*input));
    segment_start = content_start = line_end + 2;
    search = segment_start;
  }
  const std::string_view last = middle.substr(segment_start);
  if (content_start == std::string_view::npos) {
    parts.body = std::string(last);
  } else {
    parts.inputs.back().content = std::string(last);
  }
  return parts;
}

std::string InputManifest(const std::vector<PromptInput>& inputs) {
  std::string out;
  for (const PromptInput& input : inputs) {
    if (!out.empty()) out += ",";
    out +=
        input.kind + ":" + std::to_string(input.rev) + ":" + std::to_string(input.content.size());
  }
  return out;
}

Result<PromptParts> ParsePrompt(std::string_view prompt, std::string_view manifest) {
  // The header (instruction, intro, title) and the trailer are parsed as usual; only the
  // middle is re-cut by the manifest.
  Result<PromptParts> parsed = ParsePrompt(prompt);
  if (!parsed.ok()) return parsed;
  struct Entry {
    std::string kind;
    int64_t rev = 0;
    size_t bytes = 0;
  };
  std::vector<Entry> entries;
  size_t pos = 0;
  while (pos < manifest.size()) {
    size_t end = manifest.find(',', pos);
    if (end == std::string_view::npos) end = manifest.size();
    std::string_view item = manifest.substr(pos, end - pos);
    const size_t a = item.find(':');
    const size_t b = a == std::string_view::npos ? a : item.find(':', a + 1);
    Entry e;
    if (b == std::string_view::npos) return NotAPrompt("DEVFLOW_GATE_INPUTS is malformed");
    e.kind = std::string(item.substr(0, a));
    std::string_view rev = item.substr(a + 1, b - a - 1);
    std::string_view bytes = item.substr(b + 1);
    auto r1 = std::from_chars(rev.data(), rev.data() + rev.size(), e.rev);
    auto r2 = std::from_chars(bytes.data(), bytes.data() + bytes.size(), e.bytes);
    if (r1.ec != std::errc() || r1.ptr != rev.data() + rev.size() || r2.ec != std::errc() ||
        r2.ptr != bytes.data() + bytes.size() ||
        !ParseSeparatorLine("--- artifact " + e.kind + " (rev 1) ---")) {
      return NotAPrompt("DEVFLOW_GATE_INPUTS is malformed");
    }
    entries.push_back(std::move(e));
    pos = end + 1;
  }
  // Locate the middle again: after the title's blank line, before the trailer.
  const std::string intro_marker = "\n\n" + std::string(kIntroPrefix);
  const size_t intro = prompt.find(intro_marker);
  const size_t title_line = prompt.find("\n\n# ", intro + intro_marker.size());
  const size_t body_start = prompt.find('\n', title_line + 4) + 2;
  const size_t trailer = prompt.rfind("\n\n" + std::string(kReadOnlyLine) + "\n");
  std::string_view middle = prompt.substr(body_start, trailer - body_start);
  PromptParts& parts = *parsed;
  parts.inputs.assign(entries.size(), PromptInput{});
  for (size_t i = entries.size(); i-- > 0;) {
    const Entry& e = entries[i];
    const std::string sep =
        "\n\n--- artifact " + e.kind + " (rev " + std::to_string(e.rev) + ") ---\n\n";
    if (middle.size() < e.bytes + sep.size() ||
        middle.substr(middle.size() - e.bytes - sep.size(), sep.size()) != sep) {
      return NotAPrompt("the artifact sections do not match DEVFLOW_GATE_INPUTS");
    }
    parts.inputs[i] =
        PromptInput{e.kind, e.rev, std::string(middle.substr(middle.size() - e.bytes))};
    middle.remove_suffix(e.bytes + sep.size());
  }
  parts.body = std::string(middle);
  return parsed;
}

}  // namespace devflow

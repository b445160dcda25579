// The agent-gate prompt (reference/devflow-upstream.md §4.5): assembly for the gate, and the
// inverse parse used by the built-in grounding checker, which receives it on stdin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/status.h"

namespace devflow {

/// One collected input: the newest registration of a configured kind.
struct PromptInput {
  std::string kind;
  int64_t rev = 0;
  std::string content;  // verbatim file content
};

/// What the prompt carries.
struct PromptParts {
  std::string instruction;  // the configured check instruction, verbatim
  std::string card_id;
  std::string edge;  // "designing->ready"
  std::string title;
  std::string body;                  // the card body as the store returns it (trimmed)
  std::vector<PromptInput> inputs;   // configured order
  std::optional<std::string> nonce;  // verdictNonce (issue 4); absent → no nonce sentence
  /// The provider sets `reply: block-only` (config/config.h): the contract sentence asks for
  /// the block alone (kBlockOnlyContract in prompt.cc) instead of upstream's "End your reply
  /// with exactly one fenced JSON block of this shape:", which stays byte-identical otherwise.
  bool block_only = false;
};

/// The prompt as the pieces the checker's stdin is written from, in order, never joined: the
/// gate's own text around each input and each input's bytes, moved in (AssemblePromptPieces);
/// the subprocess writes them with gathered writes (writev), so a 16 MiB input is held once,
/// not again inside a whole-prompt string (issue 11 item 2). The bytes on stdin are the pieces
/// concatenated.
class PromptPieces {
 public:
  PromptPieces() = default;
  /// One piece: the whole prompt (tests, and checks that have their prompt as one string).
  PromptPieces(std::string whole) { Append(std::move(whole)); }  // NOLINT: implicit on purpose
  PromptPieces(const char* whole) : PromptPieces(std::string(whole)) {}  // NOLINT: as above
  void Append(std::string piece) {
    size_ += piece.size();
    pieces_.push_back(std::move(piece));
  }
  const std::vector<std::string>& pieces() const { return pieces_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// The whole prompt in one string, for tests and `--dry-run`'s print (a copy: not on the
  /// path of a check).
  std::string Joined() const {
    std::string out;
    out.reserve(size_);
    for (const std::string& piece : pieces_) out += piece;
    return out;
  }

 private:
  std::vector<std::string> pieces_;
  size_t size_ = 0;
};

/// Lines joined with '\n', no trailing newline:
///   <instruction>
///   (blank)
///   You are gate-checking devflow card <id> on edge <edge>.
///   (blank)
///   # <title>
///   (blank)
///   <body>
///   for each input: (blank) `--- artifact <kind> (rev <rev>) ---` (blank) <content>
///   (blank)
///   <read-only sentences, containing "You are a read-only checker">
///   <verdict contract sentence> (upstream's; under `block_only`: "Reply with only one fenced
///   JSON block of this shape, and no text before or after it:")
///   (blank)
///   ```json
///   {"verdict": "allow" | "veto", "summary": "<one line>", "findings": ["<finding>", ...]}
///   ```
std::string AssemblePrompt(const PromptParts& parts);
/// The same bytes as pieces, taking the parts: each input's content is moved (not copied) into
/// a piece of its own between the gate's text, so a check holds each input once and no
/// whole-prompt string at all (issue 11 item 2). `parts.inputs` hold empty contents afterwards.
PromptPieces AssemblePromptPieces(PromptParts&& parts);

/// Inverse of AssemblePrompt for a prompt it produced (instruction, card id, edge, title, body,
/// inputs, nonce, block_only). Fails with code "usage" and a message naming what is missing when
/// the text is not an agent-gate prompt.
Result<PromptParts> ParsePrompt(std::string_view prompt);

/// The inputs manifest the gate hands a checker out of band (env DEVFLOW_GATE_INPUTS):
/// `<kind>:<rev>:<content bytes>` per input, comma-separated, prompt order; "" for none.
/// Artifact content is untrusted and may contain lines that look like separators; with the
/// manifest a checker slices the prompt exactly instead of guessing.
std::string InputManifest(const std::vector<PromptInput>& inputs);

/// ParsePrompt, but the inputs are cut by the manifest's byte counts from the end of the
/// prompt, so a forged `--- artifact … ---` line inside a body or an artifact cannot add,
/// drop or replace an input. A prompt that does not match the manifest fails (code "usage").
Result<PromptParts> ParsePrompt(std::string_view prompt, std::string_view manifest);

}  // namespace devflow

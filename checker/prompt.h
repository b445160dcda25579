// The agent-gate prompt (reference/devflow-upstream.md §4.5): assembly for the gate, and the
// inverse parse used by the built-in grounding checker, which receives it on stdin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
///   <verdict contract sentence>
///   (blank)
///   ```json
///   {"verdict": "allow" | "veto", "summary": "<one line>", "findings": ["<finding>", ...]}
///   ```
std::string AssemblePrompt(const PromptParts& parts);
/// The same text, taking the parts: each input's content is released as soon as it has been
/// appended, so the inputs and the prompt are never both in memory whole (the prompt is
/// reserved once, and reserved pages cost nothing until written): the peak is about one copy
/// of the inputs, not two (issue 11 item 2). `parts.inputs` hold empty contents afterwards.
std::string AssemblePrompt(PromptParts&& parts);

/// Inverse of AssemblePrompt for a prompt it produced (instruction, card id, edge, title, body,
/// inputs). Fails with code "usage" and a message naming what is missing when the text is not
/// an agent-gate prompt.
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

// Verdict parsing: the last fenced JSON block of a checker reply that decodes as a verdict
// (reference/devflow-upstream.md §4.7).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace devflow {

/// A decoded verdict block.
struct Verdict {
  bool allow = false;                 // "allow" → true, "veto" → false
  std::string summary;                // non-blank after trim; kept untrimmed
  std::vector<std::string> findings;  // absent in the block → empty
  std::optional<std::string> nonce;   // the block's "nonce" string, if any (issue 4)
};

/// Fenced blocks in reply order: three backticks, any info string to end of line, a newline,
/// then the shortest run of characters up to the next three backticks (non-overlapping, left
/// to right; the JS pattern /```[^\n]*\n([\s\S]*?)```/g). Returns each block's content.
std::vector<std::string_view> FencedBlocks(std::string_view reply);

/// Decodes one block's content: JSON object (surrounding whitespace allowed), `verdict` exactly
/// "allow" or "veto", `summary` a string non-blank after trim, `findings` absent or an array of
/// strings. Extra properties ignored. Anything else → nullopt.
std::optional<Verdict> DecodeVerdictBlock(std::string_view content);

/// Scans the blocks from last to first; the first that decodes wins. nullopt → the fault
/// `the checker replied without a parsable verdict block`.
std::optional<Verdict> ParseLastVerdict(std::string_view reply);

}  // namespace devflow

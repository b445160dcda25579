// The built-in grounding checker (SPEC §6): `devflow-gate checker grounding [--claim-kind K]
// [--kinds a,b,...]`, run by the agent gate as an ordinary checker subprocess.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace devflow {

/// Runs the grounding checker. `args` are the words after `checker grounding`:
///   --claim-kind K   the artifact kind whose newest input (highest rev; the later one on a tie)
///                    is the claim; default: the last input of the prompt
///   --kinds a,b,...  token kinds to ground (grounding.h); default date,url,ref,hash
///   --require RE     an RE2 pattern the claim must match (repeatable); a miss is the finding
///                    `required pattern absent: RE`; a pattern RE2 refuses is bad usage
///   --compat         release_gate.py's matching (GroundingMode::kCompat)
///   -h, --help       usage on `out`, exit 0
/// (`--opt=value` spellings are accepted too.) Reads the whole agent-gate prompt from `in`
/// (checker/prompt.h ParsePrompt). Evidence: the card title and body plus the content of every
/// input other than the claim (older revisions of the claim kind included). Writes to `out` a
/// short human account and one fenced ```json verdict block:
///   allow — every token of the requested kinds in the claim appears in the evidence;
///   veto  — summary `<n> ungrounded specific(s) in <kind> (rev <n>)`, one finding per token
///           `<kind> not in evidence: <token>`; also a veto (fail closed) when the prompt holds
///           no input of the claim kind.
/// A nonce in the prompt's verdict contract is echoed in the block. When the prompt's contract
/// asks for the block alone (a `reply: block-only` provider, PromptParts::block_only), the
/// human account goes to `err` instead and `out` holds the block alone. Returns 0 whenever a
/// verdict was written; 2 with a one-line message on `err` for bad usage (unknown option or
/// token kind, malformed --claim-kind) or a stdin that is not an agent-gate prompt.
int RunGroundingChecker(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                        std::ostream& err);

}  // namespace devflow

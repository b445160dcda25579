// Fuzzes the built-in grounding checker's reply path (checker/grounding_checker.h): an arbitrary
// stdin goes through RunGroundingChecker with string streams, once with the default options and
// once with every token kind on.
// Invariants beyond "no crash":
//  - exit 2 exactly when the stdin is not an agent-gate prompt (ParsePrompt fails), with one
//    line on stderr and nothing on stdout;
//  - exit 0 otherwise, with a reply whose last fenced block is the verdict: allow exactly when
//    the claim (newest input of the last input's kind) is grounded in the title, body and other
//    inputs, findings exactly on a veto, and the prompt's nonce echoed.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "checker/grounding.h"
#include "checker/grounding_checker.h"
#include "checker/prompt.h"
#include "checker/verdict.h"
#include "tests/fuzz/fuzz_check.h"

namespace devflow {
namespace {

// The documented claim: the newest input of `kind` (the later one on equal revisions).
std::optional<size_t> Claim(const PromptParts& parts, const std::string& kind) {
  std::optional<size_t> claim;
  for (size_t i = 0; i < parts.inputs.size(); ++i) {
    if (parts.inputs[i].kind == kind && (!claim || parts.inputs[i].rev >= parts.inputs[*claim].rev))
      claim = i;
  }
  return claim;
}

void Check(const std::string& prompt, const std::vector<std::string>& args,
           const std::vector<std::string>& kinds) {
  std::istringstream in(prompt);
  std::ostringstream out, err;
  const int rc = RunGroundingChecker(args, in, out, err);
  const Result<PromptParts> parts = ParsePrompt(prompt);
  if (!parts.ok()) {
    DG_FUZZ_CHECK(rc == 2, "a stdin that is not a prompt exits 2");
    DG_FUZZ_CHECK(out.str().empty(), "a usage failure writes nothing on stdout");
    const std::string e = err.str();
    DG_FUZZ_CHECK(e.rfind("devflow-gate checker grounding: ", 0) == 0 && e.back() == '\n' &&
                      e.find('\n') == e.size() - 1,
                  "a usage failure is one line on stderr");
    return;
  }
  DG_FUZZ_CHECK(rc == 0, "a prompt always gets a verdict");
  DG_FUZZ_CHECK(err.str().empty(), "a verdict run writes nothing on stderr");
  // The reply echoes the card id and edge before the verdict; real ones hold no backticks and no
  // `<` (an HTML start tag left open there hides the block after it; trial15 A8).
  if (parts->card_id.find_first_of("`<") != std::string::npos ||
      parts->edge.find_first_of("`<") != std::string::npos)
    return;
  const std::string reply = out.str();
  const std::optional<Verdict> verdict = ParseLastVerdict(reply);
  DG_FUZZ_CHECK(verdict.has_value(), "the reply carries a parsable verdict");
  const std::vector<FencedBlock> blocks = FencedBlocks(reply);
  DG_FUZZ_CHECK(DecodeVerdictBlock(blocks.back().content).has_value(),
                "the verdict is the reply's last fenced block");
  DG_FUZZ_CHECK(verdict->nonce == parts->nonce, "the prompt's nonce is echoed");
  DG_FUZZ_CHECK(verdict->allow == verdict->findings.empty(), "findings exactly on a veto");

  const std::string claim_kind = parts->inputs.empty() ? "" : parts->inputs.back().kind;
  const std::optional<size_t> claim = Claim(*parts, claim_kind);
  if (!claim) {
    DG_FUZZ_CHECK(!verdict->allow, "no claim input is a veto");
    return;
  }
  std::vector<std::string_view> evidence = {parts->title, parts->body};
  for (size_t i = 0; i < parts->inputs.size(); ++i) {
    if (i != *claim) evidence.push_back(parts->inputs[i].content);
  }
  const GroundingResult grounded = Ground(parts->inputs[*claim].content, evidence, kinds);
  DG_FUZZ_CHECK(verdict->allow == grounded.grounded, "allow exactly when the claim is grounded");
  DG_FUZZ_CHECK(verdict->findings == GroundingReasons(grounded),
                "one finding per ungrounded token");
}

}  // namespace
}  // namespace devflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace devflow;
  const std::string prompt(reinterpret_cast<const char*>(data), size);
  Check(prompt, {}, DefaultTokenKinds());
  Check(prompt, {"--kinds=date,url,ref,hash,path,number,date-text"}, AllTokenKinds());
  return 0;
}

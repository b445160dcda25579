// Fuzzes the agent-gate prompt codec (checker/prompt.h): AssemblePrompt, ParsePrompt and the
// manifest-cut ParsePrompt(prompt, manifest).
// Input layout: `<manifest>\0<prompt>` when the input holds a NUL byte, else just `<prompt>`; the
// same bytes also drive a FuzzedDataProvider that builds PromptParts for the round trip.
// Invariants beyond "no crash" (and no exception escaping):
//  - ParsePrompt(y) ok → x = AssemblePrompt(parsed) parses to the same parts and
//    AssemblePrompt(ParsePrompt(x)) == x;
//  - ParsePrompt(y, manifest) ok → AssemblePrompt(result) == y (the manifest cuts exact bytes);
//  - built parts: AssemblePrompt(ParsePrompt(AssemblePrompt(p))) == AssemblePrompt(p) when the
//    parse succeeds; it must succeed and return p exactly when no field forges a marker; with
//    InputManifest(p.inputs) it must return p exactly whatever the body and contents hold;
//  - a failure is code "usage".
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "checker/prompt.h"
#include "tests/fuzz/fuzz_check.h"

namespace devflow {
namespace {

constexpr std::string_view kIntro = "\n\nYou are gate-checking devflow card ";
constexpr std::string_view kSeparator = "\n\n--- artifact ";

bool SameParts(const PromptParts& a, const PromptParts& b) {
  if (a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (a.inputs[i].kind != b.inputs[i].kind || a.inputs[i].rev != b.inputs[i].rev ||
        a.inputs[i].content != b.inputs[i].content) {
      return false;
    }
  }
  return a.instruction == b.instruction && a.card_id == b.card_id && a.edge == b.edge &&
         a.title == b.title && a.body == b.body && a.nonce == b.nonce;
}

bool IsKind(std::string_view kind) {
  if (kind.empty()) return false;
  for (size_t i = 0; i < kind.size(); ++i) {
    const char c = kind[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && c == '-'))) return false;
  }
  return true;
}

size_t Count(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

void CheckFailure(const Status& status) {
  DG_FUZZ_CHECK(status.code() == "usage", "a prompt parse error is code \"usage\"");
}

void CheckRaw(std::string_view prompt) {
  const Result<PromptParts> parsed = ParsePrompt(prompt);
  if (!parsed.ok()) return CheckFailure(parsed.status());
  const std::string x = AssemblePrompt(*parsed);
  const Result<PromptParts> again = ParsePrompt(x);
  DG_FUZZ_CHECK(again.ok(), "the assembly of a parsed prompt parses");
  DG_FUZZ_CHECK(SameParts(*parsed, *again), "the assembly of a parsed prompt parses the same");
  DG_FUZZ_CHECK(AssemblePrompt(*again) == x, "AssemblePrompt(ParsePrompt(x)) == x");
}

void CheckManifest(std::string_view prompt, std::string_view manifest) {
  const Result<PromptParts> parsed = ParsePrompt(prompt, manifest);
  if (!parsed.ok()) return CheckFailure(parsed.status());
  DG_FUZZ_CHECK(AssemblePrompt(*parsed) == prompt,
                "a manifest-cut prompt reassembles to the same bytes");
  DG_FUZZ_CHECK(!manifest.empty() || parsed->inputs.empty(), "an empty manifest cuts no input");
}

void CheckBuilt(FuzzedDataProvider& in) {
  PromptParts p;
  p.instruction = in.ConsumeRandomLengthString(200);
  p.card_id = in.ConsumeRandomLengthString(40);
  p.edge = in.ConsumeRandomLengthString(40);
  p.title = in.ConsumeRandomLengthString(80);
  p.body = in.ConsumeRandomLengthString(400);
  if (in.ConsumeBool()) p.nonce = in.ConsumeRandomLengthString(40);
  const int n = in.ConsumeIntegralInRange(0, 4);
  bool kinds_ok = true;
  for (int i = 0; i < n; ++i) {
    PromptInput input;
    input.kind = in.ConsumeRandomLengthString(12);
    input.rev = in.ConsumeIntegral<int64_t>();
    input.content = in.ConsumeRandomLengthString(400);
    kinds_ok = kinds_ok && IsKind(input.kind) && input.rev >= 0;
    p.inputs.push_back(std::move(input));
  }
  const std::string x = AssemblePrompt(p);

  // The header cannot be forged by the fields themselves: the first intro marker ends the
  // instruction, the first " on edge " ends the card id, the title is one line.
  const bool header_clean =
      (p.instruction + std::string(kIntro)).find(kIntro) == p.instruction.size() &&
      (p.card_id + " on edge ").find(" on edge ") == p.card_id.size() &&
      p.card_id.find('\n') == std::string::npos && p.edge.find('\n') == std::string::npos &&
      p.title.find('\n') == std::string::npos;
  const bool nonce_clean = !p.nonce || fuzz::IsValidUtf8(*p.nonce);
  std::string middle = p.body;
  for (const PromptInput& input : p.inputs) {
    middle += std::string(kSeparator) + input.kind + " (rev " + std::to_string(input.rev) +
              ") ---\n\n" + input.content;
  }
  const bool middle_clean = Count(middle, kSeparator) == p.inputs.size();

  const Result<PromptParts> parsed = ParsePrompt(x);
  if (parsed.ok()) {
    DG_FUZZ_CHECK(AssemblePrompt(*parsed) == x,
                  "AssemblePrompt(ParsePrompt(x)) == x for an assembled prompt");
  } else {
    CheckFailure(parsed.status());
  }
  if (header_clean && nonce_clean && kinds_ok && middle_clean) {
    DG_FUZZ_CHECK(parsed.ok(), "an assembled prompt without forged markers parses");
    DG_FUZZ_CHECK(SameParts(*parsed, p), "an assembled prompt parses back to its parts");
  }
  bool manifest_kinds_ok = true;
  for (const PromptInput& input : p.inputs) manifest_kinds_ok &= IsKind(input.kind);
  if (header_clean && nonce_clean && manifest_kinds_ok) {
    const Result<PromptParts> cut = ParsePrompt(x, InputManifest(p.inputs));
    DG_FUZZ_CHECK(cut.ok(), "an assembled prompt parses with its manifest");
    DG_FUZZ_CHECK(SameParts(*cut, p),
                  "with its manifest an assembled prompt parses back to its parts exactly");
  }
}

}  // namespace
}  // namespace devflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace devflow;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos) {
    CheckRaw(input);
  } else {
    CheckRaw(input.substr(nul + 1));
    CheckManifest(input.substr(nul + 1), input.substr(0, nul));
  }
  FuzzedDataProvider provider(data, size);
  CheckBuilt(provider);
  return 0;
}

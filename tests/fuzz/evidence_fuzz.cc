// Fuzzes evidence loading and the grounding core it feeds (checker/grounding.h):
// JsonEvidenceText, CompatJsonEvidenceText, ExtractTokens and Ground on arbitrary bytes.
// Invariants beyond "no crash":
//  - strict and compat JSON evidence agree on what parses; a failure is code "corrupt" naming
//    the file; strict evidence text is valid UTF-8;
//  - a leading BOM changes nothing; excluding one more key only drops lines (the kept lines are
//    a subsequence of the others);
//  - every extracted token (except date-text, which is normalised) occurs in the text;
//  - any text grounds itself, in strict and compat mode, raw and as evidence text;
//  - the prefix of an evidence text that the strict scan reports well-formed UTF-8
//    (GroundingResult::utf8_checked) is well-formed, and the text is well-formed exactly when
//    the rest is (the check folded into the scan cuts no character and hides no bad byte).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checker/grounding.h"
#include "tests/fuzz/fuzz_check.h"

namespace devflow {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool IsSubsequence(const std::vector<std::string_view>& small,
                   const std::vector<std::string_view>& big) {
  size_t j = 0;
  for (std::string_view line : big) {
    if (j < small.size() && small[j] == line) ++j;
  }
  return j == small.size();
}

void CheckTokensAndSelfGrounding(std::string_view text) {
  for (const std::string& kind : AllTokenKinds()) {
    for (GroundingMode mode : {GroundingMode::kStrict, GroundingMode::kCompat}) {
      for (const std::string& token : ExtractTokens(text, kind, mode)) {
        DG_FUZZ_CHECK(!token.empty(), "a token is not empty");
        if (kind != "date-text") {
          DG_FUZZ_CHECK(text.find(token) != std::string_view::npos, "a token occurs in its text");
        }
      }
    }
  }
  for (GroundingMode mode : {GroundingMode::kStrict, GroundingMode::kCompat}) {
    const GroundingResult self = Ground(text, {text}, AllTokenKinds(), mode);
    DG_FUZZ_CHECK(self.ungrounded.empty(), "a text grounds itself");
    if (mode == GroundingMode::kStrict && !self.utf8_checked.empty()) {
      const size_t checked = self.utf8_checked[0];
      DG_FUZZ_CHECK(checked <= text.size() && fuzz::IsValidUtf8(text.substr(0, checked)),
                    "the prefix the scan checked is well-formed UTF-8");
      DG_FUZZ_CHECK(fuzz::IsValidUtf8(text) == fuzz::IsValidUtf8(text.substr(checked)),
                    "the text is well-formed UTF-8 exactly when the rest past the check is");
    }
  }
}

}  // namespace
}  // namespace devflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace devflow;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> extra = {"trace"};

  const Result<std::string> strict = JsonEvidenceText(json, "fuzz.json", {});
  const Result<std::string> strict_extra = JsonEvidenceText(json, "fuzz.json", extra);
  const Result<std::string> compat = CompatJsonEvidenceText(json, "fuzz.json", {});
  DG_FUZZ_CHECK(strict.ok() == compat.ok(), "strict and compat agree on what parses");
  DG_FUZZ_CHECK(strict.ok() == strict_extra.ok(), "excluded keys do not change what parses");
  if (!strict.ok()) {
    DG_FUZZ_CHECK(strict.status().code() == "corrupt", "unparsable evidence is \"corrupt\"");
    DG_FUZZ_CHECK(
        strict.status().message().rfind("evidence fuzz.json is not valid JSON: ", 0) == 0 ||
            strict.status().message().rfind("evidence fuzz.json nests deeper than ", 0) == 0,
        "unparsable evidence names the file");
    DG_FUZZ_CHECK(compat.status().code() == "corrupt", "unparsable compat evidence is \"corrupt\"");
  } else {
    DG_FUZZ_CHECK(fuzz::IsValidUtf8(*strict), "strict evidence text is valid UTF-8");
    DG_FUZZ_CHECK(IsSubsequence(Lines(*strict_extra), Lines(*strict)),
                  "excluding a key only drops lines");
    if (json.substr(0, kBom.size()) != kBom) {
      const std::string with_bom = std::string(kBom) + std::string(json);
      const Result<std::string> bom = JsonEvidenceText(with_bom, "fuzz.json", {});
      DG_FUZZ_CHECK(bom.ok() && *bom == *strict, "a leading BOM changes nothing");
    }
    CheckTokensAndSelfGrounding(*strict);
    CheckTokensAndSelfGrounding(*compat);
  }
  CheckTokensAndSelfGrounding(json);
  return 0;
}

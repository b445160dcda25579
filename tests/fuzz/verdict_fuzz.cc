// Fuzzes verdict parsing (checker/verdict.h) on arbitrary checker replies.
// Invariants beyond "no crash":
//  - fenced blocks lie inside the reply, in order, without overlapping;
//  - ParseLastVerdict is the last block that DecodeVerdictBlock accepts (nullopt if none);
//  - a parsed verdict has a summary that is non-blank and valid UTF-8, valid UTF-8 findings and
//    nonce, and re-emitted as a fenced ```json block it parses back to the same verdict.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "checker/verdict.h"
#include "tests/fuzz/fuzz_check.h"

namespace devflow {
namespace {

bool SameVerdict(const Verdict& a, const Verdict& b) {
  return a.allow == b.allow && a.summary == b.summary && a.findings == b.findings &&
         a.nonce == b.nonce;
}

bool IsAsciiBlank(std::string_view s) {
  return s.find_first_not_of(" \t\n\r\v\f") == std::string_view::npos;
}

std::string Fenced(const Verdict& v) {
  nlohmann::ordered_json block;
  block["verdict"] = v.allow ? "allow" : "veto";
  block["summary"] = v.summary;
  block["findings"] = v.findings;
  if (v.nonce) block["nonce"] = *v.nonce;
  // A summary may hold backticks written as \u0060 in the reply; keep them escaped so the
  // re-emitted block is not cut at a fence inside a string (backticks only occur in strings).
  std::string json;
  for (char c : block.dump()) {
    if (c == '`') {
      json += "\\u0060";
    } else {
      json += c;
    }
  }
  return "checked.\n```json\n" + json + "\n```\n";
}

}  // namespace
}  // namespace devflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace devflow;
  const std::string_view reply(reinterpret_cast<const char*>(data), size);

  const std::vector<std::string_view> blocks = FencedBlocks(reply);
  const char* previous_end = reply.data();
  std::optional<Verdict> last_decoded;
  for (std::string_view block : blocks) {
    DG_FUZZ_CHECK(block.data() >= previous_end, "blocks are in order and do not overlap");
    DG_FUZZ_CHECK(block.data() + block.size() <= reply.data() + reply.size(),
                  "a block lies inside the reply");
    DG_FUZZ_CHECK(std::string_view(block.data() + block.size(), 3) == "```",
                  "a block ends at a fence");
    previous_end = block.data() + block.size() + 3;
    if (auto v = DecodeVerdictBlock(block)) last_decoded = std::move(v);
  }

  const std::optional<Verdict> verdict = ParseLastVerdict(reply);
  DG_FUZZ_CHECK(verdict.has_value() == last_decoded.has_value(),
                "a verdict is found exactly when some block decodes");
  if (!verdict) return 0;
  DG_FUZZ_CHECK(SameVerdict(*verdict, *last_decoded), "the last decodable block wins");
  DG_FUZZ_CHECK(!verdict->summary.empty() && !IsAsciiBlank(verdict->summary),
                "a verdict's summary is non-blank");
  DG_FUZZ_CHECK(fuzz::IsValidUtf8(verdict->summary), "a verdict's summary is valid UTF-8");
  for (const std::string& finding : verdict->findings) {
    DG_FUZZ_CHECK(fuzz::IsValidUtf8(finding), "a verdict's findings are valid UTF-8");
  }
  DG_FUZZ_CHECK(!verdict->nonce || fuzz::IsValidUtf8(*verdict->nonce),
                "a verdict's nonce is valid UTF-8");

  const std::optional<Verdict> again = ParseLastVerdict(Fenced(*verdict));
  DG_FUZZ_CHECK(again.has_value(), "a re-emitted verdict parses");
  DG_FUZZ_CHECK(SameVerdict(*verdict, *again), "a re-emitted verdict parses to the same verdict");
  return 0;
}

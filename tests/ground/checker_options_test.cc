// `devflow-gate checker grounding` options added with the drop-in (issue 3): --compat,
// --require and the date-text kind.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "checker/grounding_checker.h"
#include "checker/prompt.h"

namespace devflow {
namespace {

struct Reply {
  int code;
  std::string out, err;
};

Reply Check(const std::vector<std::string>& args, const std::string& prd,
            const std::string& design) {
  PromptParts parts;
  parts.instruction = "Check the design.";
  parts.card_id = "0001-a";
  parts.edge = "designing->ready";
  parts.title = "Card";
  parts.body = "Body.";
  parts.inputs = {{"prd", 3, prd}, {"design", 4, design}};
  std::istringstream in(AssemblePrompt(parts));
  std::ostringstream out, err;
  const int code = RunGroundingChecker(args, in, out, err);
  return Reply{code, out.str(), err.str()};
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("checker grounding: --compat grounds #4 on #41 as release_gate.py did") {
  const Reply strict = Check({"--claim-kind", "design"}, "#41\n", "#4\n");
  CHECK(Has(strict.out,
            "\"verdict\":\"veto\",\"summary\":\"1 ungrounded specific in design "
            "(rev 4)\",\"findings\":[\"ref not in evidence: #4 (line 1:1; evidence has #41)\"]"));
  const Reply compat = Check({"--claim-kind", "design", "--compat"}, "#41\n", "#4\n");
  CHECK(Has(compat.out, "\"verdict\":\"allow\""));
}

TEST_CASE("checker grounding: a --require miss is a finding, a bad pattern is bad usage") {
  const Reply miss = Check({"--claim-kind", "design", "--require", R"(REQ-\d+)"}, "x\n", "y\n");
  CHECK(miss.code == 0);
  CHECK(Has(miss.out, "\"findings\":[\"required pattern absent: REQ-\\\\d+\"]"));
  const Reply bad = Check({"--require", "("}, "x\n", "y\n");
  CHECK(bad.code == 2);
  CHECK(bad.err.rfind("devflow-gate checker grounding: bad --require regex '(': missing ): (", 0) ==
        0);
}

TEST_CASE("checker grounding: date-text grounds 24 Sept 2026 on 2026-09-24") {
  const std::vector<std::string> args = {"--claim-kind", "design", "--kinds", "date,date-text"};
  CHECK(Has(Check(args, "due 2026-09-24\n", "Due 24 Sept 2026.\n").out, "\"verdict\":\"allow\""));
  CHECK(Has(Check(args, "due 2026-09-24\n", "Due 25 Sept 2026.\n").out,
            "\"findings\":[\"date-text not in evidence: 25 Sept 2026 (line 1:5)\"]"));
}

}  // namespace devflow

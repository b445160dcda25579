#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/deployment/deployment.h"
#include "host/journal.h"
#include "host/json_output.h"

namespace devflow {
namespace {

using ojson = nlohmann::ordered_json;

// AdmitJson as it was built before issue 8's cut: an ordered_json with the journal's encodings
// parsed back into it, dumped by OutputJson. The text-built AdmitJson must give these bytes.
std::string ReferenceAdmitJson(const AdmitOutcome& outcome, const std::string& decision_id) {
  ojson j;
  j["allowed"] = outcome.decision.allowed;
  if (outcome.decision.allowed) {
    if (outcome.decision.approved_by) {
      j["approvedBy"] = ojson::parse(EncodeActorJson(*outcome.decision.approved_by));
    }
    if (!outcome.decision.checks.empty()) {
      j["checks"] = ojson::parse(EncodeChecksJson(outcome.decision.checks));
    }
  } else {
    j["reason"] = outcome.decision.reason;
    if (outcome.park) {
      ojson park;
      park["by"] = ojson::parse(EncodeActorJson(outcome.park->by));
      park["reason"] = outcome.park->reason;
      j["park"] = park;
    }
  }
  if (!decision_id.empty()) j["decisionId"] = decision_id;
  return OutputJson(j);
}

TEST_CASE("AdmitJson writes the bytes the ordered_json it replaced wrote") {
  const std::vector<std::string> texts = {"plain summary",
                                          "",
                                          "quote \" and \\ backslash",
                                          "line\nbreak\ttab",
                                          "esc \x1b[31mred\x1b[0m bel \x07",
                                          "del \x7f",
                                          "caf\xc3\xa9 \xe2\x80\xae bidi \xc2\x9b c1",
                                          "bad \xff byte \xe2\x82 cut",
                                          "[cached] all good"};
  for (const std::string& text : texts) {
    CAPTURE(text);
    for (const std::string id : {"", "20261204T102604.730Z-273b163e"}) {
      AdmitOutcome allowed;
      allowed.decision.checks.push_back(
          GateCheck{Actor{"agent", std::nullopt, std::nullopt}, text});
      allowed.decision.checks.push_back(
          GateCheck{Actor{"command", text, std::nullopt}, std::nullopt});
      CHECK(AdmitJson(allowed, id) == ReferenceAdmitJson(allowed, id));
      allowed.decision.approved_by = Actor{"human", text, std::nullopt};
      CHECK(AdmitJson(allowed, id) == ReferenceAdmitJson(allowed, id));
      AdmitOutcome bare;
      CHECK(AdmitJson(bare, id) == ReferenceAdmitJson(bare, id));

      AdmitOutcome vetoed;
      vetoed.decision = Decision::Veto(text);
      CHECK(AdmitJson(vetoed, id) == ReferenceAdmitJson(vetoed, id));
      vetoed.park = ParkRequest{Actor{"agent", std::nullopt, text}, "failed closed: " + text,
                                "devflow-agent-gate"};
      CHECK(AdmitJson(vetoed, id) == ReferenceAdmitJson(vetoed, id));
    }
  }
}

}  // namespace
}  // namespace devflow

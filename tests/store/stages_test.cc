// The state machine and grammars (reference §1.2, §1.4, §1.5, §1.8).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "host/stages.h"

using namespace devflow;

namespace {

constexpr Location kAll[] = {Location::kDraft,      Location::kDesigning, Location::kReady,
                             Location::kDeveloping, Location::kReviewing, Location::kTesting,
                             Location::kDone,       Location::kBlocked};

std::set<std::string> LegalEdges(ServiceClass c) {
  std::set<std::string> out;
  for (Location from : kAll) {
    if (from == Location::kBlocked) continue;
    for (Location to : kAll) {
      if (IsLegalTransition(from, to, std::nullopt, c)) out.insert(Edge{from, to}.Name());
    }
  }
  return out;
}

}  // namespace

TEST_CASE("location names round-trip and blocked is not a stage") {
  for (Location l : kAll) CHECK(ParseLocation(LocationName(l)) == l);
  CHECK(LocationName(Location::kDeveloping) == "developing");
  CHECK_FALSE(ParseLocation("Draft").has_value());
  CHECK_FALSE(ParseLocation("").has_value());
  CHECK(IsStage(Location::kDone));
  CHECK_FALSE(IsStage(Location::kBlocked));
  CHECK(ParseServiceClass("express") == ServiceClass::kExpress);
  CHECK(ServiceClassName(ServiceClass::kEmergency) == "emergency");
  CHECK_FALSE(ParseServiceClass("fast").has_value());
}

TEST_CASE("edge names split on the literal arrow into two locations") {
  CHECK(ParseEdge("designing->ready") == Edge{Location::kDesigning, Location::kReady});
  CHECK(ParseEdge("blocked->designing") == Edge{Location::kBlocked, Location::kDesigning});
  CHECK(ParseEdge("draft->draft") == Edge{Location::kDraft, Location::kDraft});  // not legality
  CHECK_FALSE(ParseEdge("designing=>ready").has_value());
  CHECK_FALSE(ParseEdge("designing->ready->done").has_value());
  CHECK_FALSE(ParseEdge("designing->").has_value());
  CHECK_FALSE(ParseEdge(" designing->ready").has_value());
  CHECK(Edge{Location::kTesting, Location::kDone}.Name() == "testing->done");
}

TEST_CASE("the standard class allows exactly the base flow plus parking") {
  std::set<std::string> expected = {
      "draft->designing",      "designing->ready",      "ready->developing",
      "developing->reviewing", "developing->designing", "reviewing->testing",
      "reviewing->developing", "reviewing->designing",  "testing->done",
      "testing->developing",   "testing->designing",    "draft->blocked",
      "designing->blocked",    "ready->blocked",        "developing->blocked",
      "reviewing->blocked",    "testing->blocked"};
  CHECK(LegalEdges(ServiceClass::kStandard) == expected);
}

TEST_CASE("service classes only add their skip edges") {
  auto standard = LegalEdges(ServiceClass::kStandard);
  auto express = LegalEdges(ServiceClass::kExpress);
  auto emergency = LegalEdges(ServiceClass::kEmergency);
  std::set<std::string> express_extra, emergency_extra;
  for (auto& e : express) {
    if (!standard.count(e)) express_extra.insert(e);
  }
  for (auto& e : emergency) {
    if (!standard.count(e)) emergency_extra.insert(e);
  }
  CHECK(express_extra == std::set<std::string>{"draft->developing", "reviewing->done"});
  CHECK(emergency_extra == std::set<std::string>{"draft->developing", "developing->done"});
  for (auto& e : standard) {
    CHECK(express.count(e) == 1);
    CHECK(emergency.count(e) == 1);
  }
}

TEST_CASE("a blocked card recovers only to blockedFrom and done cannot be parked") {
  for (Location to : kAll) {
    CHECK(IsLegalTransition(Location::kBlocked, to, Location::kReviewing,
                            ServiceClass::kStandard) == (to == Location::kReviewing));
  }
  CHECK_FALSE(IsLegalTransition(Location::kBlocked, Location::kDraft, std::nullopt,
                                ServiceClass::kStandard));
  CHECK_FALSE(
      IsLegalTransition(Location::kDone, Location::kBlocked, std::nullopt, ServiceClass::kExpress));
  for (Location to : kAll) {
    CHECK_FALSE(IsLegalTransition(Location::kDone, to, std::nullopt, ServiceClass::kEmergency));
  }
}

TEST_CASE("rework edges are the moves back to designing or developing") {
  std::set<std::string> rework;
  for (Location from : kAll) {
    for (Location to : kAll) {
      if (IsReworkEdge(from, to)) rework.insert(Edge{from, to}.Name());
    }
  }
  CHECK(rework == std::set<std::string>{"developing->designing", "reviewing->designing",
                                        "testing->designing", "reviewing->developing",
                                        "testing->developing"});
}

TEST_CASE("kind, slug and card id grammars") {
  CHECK(IsValidKind("design"));
  CHECK(IsValidKind("0-prd-v2"));
  CHECK_FALSE(IsValidKind(""));
  CHECK_FALSE(IsValidKind("-design"));
  CHECK_FALSE(IsValidKind("Design"));
  CHECK_FALSE(IsValidKind("bad kind"));
  CHECK_FALSE(IsValidKind("a_b"));
  CHECK(IsValidSlug("login-page"));
  CHECK_FALSE(IsValidSlug("login/page"));
  CHECK(IsValidCardId("0001-login-page"));
  CHECK(IsValidCardId("7-x"));
  CHECK_FALSE(IsValidCardId("0001"));
  CHECK_FALSE(IsValidCardId("0001-"));
  CHECK_FALSE(IsValidCardId("-login"));
  CHECK_FALSE(IsValidCardId("abc-login"));
  CHECK_FALSE(IsValidCardId("0001-../../etc"));
  CHECK_FALSE(IsValidCardId("0001-a/b"));
  CHECK_FALSE(IsValidCardId("0001--a"));
}

TEST_CASE("slugs derive from titles like deriveSlug") {
  CHECK(SlugFromTitle("Login Page") == "login-page");
  CHECK(SlugFromTitle("  --Fix: the *crash*!! ") == "fix-the-crash");
  CHECK(SlugFromTitle("Zoë's café") == "zo-s-caf");
  CHECK(SlugFromTitle("東京") == "card");
  CHECK(SlugFromTitle("") == "card");
  CHECK(SlugFromTitle("İstanbul") == "i-stanbul");  // JS lowercases U+0130 to "i" + U+0307
  CHECK(SlugFromTitle("5 \xE2\x84\xAA") == "5-k");  // Kelvin sign lowercases to "k"
  // Cut to 48, then trailing dashes trimmed again.
  std::string title = std::string(47, 'a') + " b" + std::string(10, 'c');
  CHECK(SlugFromTitle(title) == std::string(47, 'a'));
  CHECK(SlugFromTitle(std::string(60, 'x')) == std::string(48, 'x'));
}

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/journal.h"

namespace devflow {
namespace {

using nlohmann::ordered_json;

// The ordered_json the journal's encodings were dumped from before issue 8 wrote them as text.
ordered_json ReferenceActor(const Actor& a) {
  ordered_json j = ordered_json::object();
  j["kind"] = a.kind;
  if (a.name) j["name"] = *a.name;
  if (a.session) j["session"] = *a.session;
  return j;
}

std::string Dump(const ordered_json& j) {
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

TEST_CASE("EncodeActorJson and EncodeChecksJson write the bytes of the ordered_json dump") {
  const std::vector<std::string> texts = {"",
                                          "ada",
                                          "q\"uote \\ back",
                                          "line\nbreak",
                                          "\x1b[2J",
                                          "caf\xc3\xa9 \xe2\x80\xae",
                                          "bad \xff \xe2\x82"};
  CHECK(EncodeChecksJson({}) == "[]");
  for (const std::string& text : texts) {
    CAPTURE(text);
    const std::vector<Actor> actors = {
        Actor{text, std::nullopt, std::nullopt}, Actor{"human", text, std::nullopt},
        Actor{"agent", std::nullopt, text}, Actor{"command", text, text}};
    ordered_json reference = ordered_json::array();
    std::vector<GateCheck> checks;
    for (const Actor& a : actors) {
      CHECK(EncodeActorJson(a) == Dump(ReferenceActor(a)));
      for (const std::optional<std::string>& summary :
           {std::optional<std::string>(), std::optional<std::string>(text)}) {
        checks.push_back(GateCheck{a, summary});
        ordered_json check = ordered_json::object();
        check["by"] = ReferenceActor(a);
        check["verdict"] = "allowed";
        if (summary) check["summary"] = *summary;
        reference.push_back(check);
        CHECK(EncodeChecksJson(checks) == Dump(reference));
      }
    }
  }
}

}  // namespace
}  // namespace devflow

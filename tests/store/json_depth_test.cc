// Untrusted JSON nested absurdly deep is refused before anything recurses over it.
#include <doctest/doctest.h>

#include <string>

#include "checker/verdict.h"
#include "host/journal.h"
#include "host/json_depth.h"

namespace devflow {

TEST_CASE("nesting depth counts brackets outside strings only") {
  CHECK(JsonNestingDepth("{}") == 1);
  CHECK(JsonNestingDepth(R"({"a":[{"b":[]}]})") == 4);
  CHECK(JsonNestingDepth(R"({"a":"[[[[\"{{{"})") == 1);
  CHECK(JsonNestingDepth("plain text") == 0);
  CHECK(JsonNestingDepth("[[[") == 3);  // malformed text is measured as far as it goes
}

TEST_CASE("a journal line nested 100k deep is a corrupt line, not a crash") {
  std::string line =
      R"({"rev":1,"at":"x","type":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  Result<JournalEntry> decoded = DecodeJournalLine(line);
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.status().code() == "corrupt");
  CHECK(decoded.status().message() ==
        "the line nests deeper than 256 levels; no journal entry does");
}

TEST_CASE("a verdict block nested 100k deep is not a verdict") {
  std::string reply =
      "```json\n{\"verdict\":\"allow\",\"summary\":\"ok\",\"x\":" + std::string(100000, '[') +
      std::string(100000, ']') + "}\n```\n";
  CHECK_FALSE(ParseLastVerdict(reply).has_value());
}

}  // namespace devflow

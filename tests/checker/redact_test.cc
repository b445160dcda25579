// The Redactor of a checker's output (checker/redact.h, issue 7 item 5, trial15 L1): each
// passed `env:` value becomes a marker, in both its spellings, never lengthening the text.
#include "checker/redact.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace devflow {
namespace {

using Values = std::vector<PassedValue>;

const char kKey[] = "sk-T15SECRETKEY-0123456789";

TEST_CASE("redact: every occurrence of a passed value becomes the marker naming its variable") {
  Redactor r(Values{{"API_KEY", kKey}});
  CHECK(r.Redact(std::string("Error: 401 invalid x-api-key '") + kKey + "' (" + kKey + ")\n") ==
        "Error: 401 invalid x-api-key '[redacted: API_KEY]' ([redacted: API_KEY])\n");
  CHECK(r.Redact("nothing secret here") == "nothing secret here");
}

TEST_CASE("redact: a value shorter than 8 bytes is left alone, one of 8 bytes is redacted") {
  Redactor r(Values{{"FLAG", "1"}, {"MODE", "true"}, {"SEVEN", "abcdefg"}, {"EIGHT", "abcdefgh"}});
  CHECK(r.Redact("flag=1 mode=true seven=abcdefg!") == "flag=1 mode=true seven=abcdefg!");
  // The named marker would be longer than the 8 bytes it replaces: the short one.
  CHECK(r.Redact("eight=abcdefgh!") == "eight=[secret]!");
  CHECK(Redactor(Values{{"FLAG", "1"}, {"MODE", "true"}}).empty());
}

TEST_CASE("redact: redacted text is never longer than the text read") {
  // A 9-byte value under a long name: `[redacted: A_VERY_LONG_NAME]` would grow each one.
  Redactor r(Values{{"A_VERY_LONG_VARIABLE_NAME", "123456789"}});
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "123456789";
  const std::string out = r.Redact(text);
  CHECK(out.size() <= text.size());
  CHECK(out.find("123456789") == std::string::npos);
  CHECK(out.find("[secret]") == 0);
}

TEST_CASE("redact: overlapping values become one marker, the longest value's") {
  // One value inside another: the longer one names the marker.
  Redactor nested(Values{{"SHORT", "SECRET-PART-OF-THE-KEY"},
                         {"LONG", "prefix-SECRET-PART-OF-THE-KEY-suffix"}});
  CHECK(nested.Redact("a prefix-SECRET-PART-OF-THE-KEY-suffix b SECRET-PART-OF-THE-KEY c") ==
        "a [redacted: LONG] b [redacted: SHORT] c");
  // Two values overlapping across each other: no byte of either survives.
  Redactor across(Values{{"LEFT", "0123456789ab"}, {"RIGHT", "89abcdefghijklmnopqr"}});
  CHECK(across.Redact("<0123456789abcdefghijklmnopqr>") == "<[redacted: RIGHT]>");
  // A value repeated over itself (overlapping occurrences of one value).
  Redactor self(Values{{"REP", "abababab"}});
  const std::string out = self.Redact("xabababababababy");
  CHECK(out.find("ab") == std::string::npos);
  CHECK(out.front() == 'x');
  CHECK(out.back() == 'y');
}

TEST_CASE(
    "redact: the JSON-escaped form of a value is redacted too and the marker keeps a verdict "
    "block valid JSON") {
  const std::string value = "pa\"ss\\wo\nrd\x01-long-and-more";
  Redactor r(Values{{"DB_PASSWORD", value}});
  nlohmann::json verdict = {{"verdict", "veto"}, {"summary", "login failed with " + value}};
  const std::string block = verdict.dump();
  REQUIRE(block.find(value) == std::string::npos);  // it is there only escaped
  REQUIRE(block.find(JsonEscapedValue(value)) != std::string::npos);
  const std::string out = r.Redact("```json\n" + block + "\n```\n");
  CHECK(out ==
        "```json\n{\"summary\":\"login failed with [redacted: DB_PASSWORD]\","
        "\"verdict\":\"veto\"}\n```\n");
  // The raw bytes are redacted as well (stderr carries them unescaped).
  CHECK(r.Redact("raw " + value + ".") == "raw [redacted: DB_PASSWORD].");
  CHECK(JsonEscapedValue("a\"b\\c\td\x1f") == "a\\\"b\\\\c\\td\\u001f");
}

TEST_CASE("redact: a value cut by the edge of the window read leaves none of its bytes") {
  Redactor r(Values{{"API_KEY", kKey}});
  const std::string key = kKey;
  // The stderr tail lost its start in the middle of the key.
  CHECK(r.Redact(key.substr(5) + "' rejected\n", true, false) == "' rejected\n");
  // A reply over its cap lost its end in the middle of the key.
  CHECK(r.Redact("the key is " + key.substr(0, 9), false, true) == "the key is ");
  // No cut: the same text is kept as it is (a fragment alone is not the value).
  CHECK(r.Redact(key.substr(5) + "' rejected\n") == key.substr(5) + "' rejected\n");
  // A cut edge that holds no part of a value loses nothing.
  CHECK(r.Redact("plain tail\n", true, true) == "plain tail\n");
}

}  // namespace
}  // namespace devflow

// Verdict parsing (reference §4.7, the parsing cases of §5.6).
#include <doctest/doctest.h>

#include <string>

#include "checker/verdict.h"

namespace devflow {
namespace {

std::string Block(const std::string& json, const std::string& info = "json") {
  return "```" + info + "\n" + json + "\n```";
}

}  // namespace

TEST_CASE("the last parsable block wins over a quoted example veto and a trailing non-JSON fence") {
  const std::string reply =
      "Here is the format I was asked for:\n" +
      Block(R"({"verdict": "veto", "summary": "an example veto", "findings": ["x"]})") +
      "\nMy decision:\n" + Block(R"({"verdict": "allow", "summary": "the real decision"})") +
      "\nAnd a snippet:\n" + Block("int main() { return 0; }", "cpp") + "\n";
  const auto verdict = ParseLastVerdict(reply);
  REQUIRE(verdict);
  CHECK(verdict->allow);
  CHECK(verdict->summary == "the real decision");
  CHECK(verdict->findings.empty());
  CHECK_FALSE(verdict->nonce);
}

TEST_CASE("a block carrying a JSON scalar is not a verdict") {
  CHECK_FALSE(ParseLastVerdict(Block("42")));
  CHECK_FALSE(ParseLastVerdict(Block("\"allow\"")));
}

TEST_CASE("a block carrying JSON null is not a verdict") {
  CHECK_FALSE(ParseLastVerdict(Block("null")));
}

TEST_CASE("a block carrying an array is not a verdict") {
  CHECK_FALSE(ParseLastVerdict(Block(R"([{"verdict": "allow", "summary": "s"}])")));
}

TEST_CASE("an unknown verdict word is not a verdict") {
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "maybe", "summary": "s"})")));
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "Allow", "summary": "s"})")));
}

TEST_CASE("a blank summary is not a verdict") {
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "allow", "summary": "  "})")));
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "allow", "summary": ""})")));
  // JS trim also removes tabs, newlines, NBSP, ideographic space and the BOM character.
  CHECK_FALSE(ParseLastVerdict(
      Block(R"({"verdict": "allow", "summary": "\t\n\u00a0\u3000\ufeff\u2003"})")));
  CHECK_FALSE(ParseLastVerdict(Block("{\"verdict\": \"allow\", \"summary\": \"\xC2\xA0 \"}")));
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "allow", "summary": 7})")));
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "allow"})")));
}

TEST_CASE("the summary is kept untrimmed") {
  const auto verdict = ParseLastVerdict(Block(R"({"verdict": "veto", "summary": "  padded  "})"));
  REQUIRE(verdict);
  CHECK_FALSE(verdict->allow);
  CHECK(verdict->summary == "  padded  ");
}

TEST_CASE("non-array findings are not a verdict") {
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "veto", "summary": "s", "findings": "one"})")));
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "veto", "summary": "s", "findings": null})")));
}

TEST_CASE("a non-string finding is not a verdict") {
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "veto", "summary": "s", "findings": [1]})")));
  CHECK_FALSE(
      ParseLastVerdict(Block(R"({"verdict": "veto", "summary": "s", "findings": ["a", null]})")));
}

TEST_CASE("an empty findings array is fine and findings keep their order") {
  auto verdict = ParseLastVerdict(Block(R"({"verdict": "veto", "summary": "s", "findings": []})"));
  REQUIRE(verdict);
  CHECK(verdict->findings.empty());
  verdict =
      ParseLastVerdict(Block(R"({"verdict": "veto", "summary": "s", "findings": ["b", "a"]})"));
  REQUIRE(verdict);
  CHECK(verdict->findings == std::vector<std::string>{"b", "a"});
}

TEST_CASE("extra properties are ignored") {
  const auto verdict = ParseLastVerdict(
      Block(R"({"verdict": "allow", "summary": "ok", "confidence": 0.9, "extra": {"a": [1]}})"));
  REQUIRE(verdict);
  CHECK(verdict->allow);
  CHECK(verdict->summary == "ok");
}

TEST_CASE("the info string is ignored: empty, json, or anything") {
  const std::string json = R"({"verdict": "allow", "summary": "ok"})";
  CHECK(ParseLastVerdict(Block(json, "")));
  CHECK(ParseLastVerdict(Block(json, "json")));
  CHECK(ParseLastVerdict(Block(json, "text with spaces {and} ``")));
}

TEST_CASE("of two verdict blocks the last one wins") {
  const std::string reply = Block(R"({"verdict": "allow", "summary": "first"})") + "\n" +
                            Block(R"({"verdict": "veto", "summary": "second"})");
  const auto verdict = ParseLastVerdict(reply);
  REQUIRE(verdict);
  CHECK_FALSE(verdict->allow);
  CHECK(verdict->summary == "second");
}

TEST_CASE("prose without a fenced block has no verdict") {
  CHECK_FALSE(ParseLastVerdict("I think the design is fine. verdict: allow"));
  CHECK_FALSE(ParseLastVerdict(""));
  CHECK_FALSE(ParseLastVerdict(R"({"verdict": "allow", "summary": "bare JSON, no fence"})"));
}

TEST_CASE("JSON.parse rules: surrounding whitespace yes, trailing garbage and comments no") {
  CHECK(ParseLastVerdict("```json\n  \n\t{\"verdict\": \"allow\", \"summary\": \"ok\"}  \n\n```"));
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "allow", "summary": "ok"} trailing)")));
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "allow", "summary": "ok"} {})")));
  CHECK_FALSE(ParseLastVerdict(Block(R"({"verdict": "allow", "summary": "ok",})")));
  CHECK_FALSE(ParseLastVerdict(Block("// c\n{\"verdict\": \"allow\", \"summary\": \"ok\"}")));
  CHECK_FALSE(ParseLastVerdict(Block("\xEF\xBB\xBF{\"verdict\": \"allow\", \"summary\": \"ok\"}")));
}

TEST_CASE("CRLF line ends still parse: the info line ends at LF and CR is JSON whitespace") {
  const auto verdict = ParseLastVerdict(
      "text\r\n```json\r\n{\"verdict\": \"veto\", \"summary\": \"crlf\"}\r\n```\r\n");
  REQUIRE(verdict);
  CHECK_FALSE(verdict->allow);
  CHECK(verdict->summary == "crlf");
}

TEST_CASE("invalid UTF-8 in a reply does not crash and decodes as U+FFFD like a JS string") {
  const std::string reply =
      "\xFF\xFE prose \xC3\n```json\n{\"verdict\": \"allow\", \"summary\": \"bad \xC3\x28 "
      "byte\"}\n```";
  const auto verdict = ParseLastVerdict(reply);
  REQUIRE(verdict);
  CHECK(verdict->summary == "bad \xEF\xBF\xBD( byte");
  // A truncated sequence at the very end of a block.
  CHECK_FALSE(ParseLastVerdict("```\n{\"verdict\": \"allow\", \"summary\": \"x\"}\xE2\x82\n```"));
}

TEST_CASE("a string nonce in the block is returned; a non-string nonce is ignored") {
  auto verdict =
      ParseLastVerdict(Block(R"({"verdict": "allow", "summary": "ok", "nonce": "n-123"})"));
  REQUIRE(verdict);
  REQUIRE(verdict->nonce);
  CHECK(*verdict->nonce == "n-123");
  verdict = ParseLastVerdict(Block(R"({"verdict": "allow", "summary": "ok", "nonce": 5})"));
  REQUIRE(verdict);
  CHECK_FALSE(verdict->nonce);
}

TEST_CASE("fenced blocks follow the JS regex: shortest content, non-overlapping, info to LF") {
  const auto blocks = FencedBlocks("a ```x\nB1``` mid ```\nB2\n```` tail ```no newline");
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0] == "B1");
  CHECK(blocks[1] == "B2\n");
  CHECK(FencedBlocks("```json\n{}").empty());            // never closed
  CHECK(FencedBlocks("``` only one line ```").empty());  // no newline after the opener
  const auto inner = FencedBlocks("```a ``` b\nC```");   // backticks inside the info string
  REQUIRE(inner.size() == 1);
  CHECK(inner[0] == "C");
}

}  // namespace devflow

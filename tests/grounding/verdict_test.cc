// Verdict parsing (reference §4.7, the parsing cases of §5.6).
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

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

TEST_CASE("a string nonce in the block is returned, a non-string nonce is ignored") {
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
  REQUIRE(blocks.size() == 3);
  CHECK(blocks[0].info == "x");
  CHECK(blocks[0].content == "B1");
  CHECK(blocks[0].closed);
  CHECK(blocks[1].content == "B2\n");
  CHECK(blocks[1].closed);
  // The opener after the last closed block, with no newline: unclosed, its info runs to the end.
  CHECK(blocks[2].info == "no newline");
  CHECK(blocks[2].content.empty());
  CHECK_FALSE(blocks[2].closed);
  const auto inner = FencedBlocks("```a ``` b\nC```");  // backticks inside the info string
  REQUIRE(inner.size() == 1);
  CHECK(inner[0].content == "C");
  CHECK(inner[0].closed);
}

TEST_CASE("a fence never closed is the last block, running to the end of the reply") {
  auto blocks = FencedBlocks("```json\n{}");
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].content == "{}");
  CHECK_FALSE(blocks[0].closed);
  blocks = FencedBlocks("``` only one line ```");
  REQUIRE(blocks.size() == 1);
  CHECK_FALSE(blocks[0].closed);
  blocks = FencedBlocks("```\nA\n```\ntext ```json\n{\"verdict\": \"allow\"");
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].closed);
  CHECK(blocks[1].info == "json");
  CHECK(blocks[1].content == "{\"verdict\": \"allow\"");
  CHECK_FALSE(blocks[1].closed);
}

TEST_CASE("a block claims to be a verdict by a json info word, a leading {, or a verdict key") {
  struct Case {
    const char* info;
    const char* content;
    bool claims;
  };
  const Case cases[] = {
      {"json", "not json at all", true},
      {"JSON", "x", true},
      {" Json title=verdict", "x", true},
      {"json\r", "x", true},
      {"", "{\"a\": 1}", true},
      {"text", "  \n\t{", true},
      {"", "\xEF\xBB\xBF{", true},
      {"", "prose with \"verdict\" in quotes", true},
      {"yaml", "\"Verdict\": allow", true},
      {"", "not json at all", false},
      {"cpp", "int main() { return 0; }", false},
      {"jsonl", "x", false},
      {"bash", "echo verdict: allow", false},
      {"", "", false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.info);
    CAPTURE(c.content);
    CHECK(ClaimsVerdict(FencedBlock{c.info, c.content, true}) == c.claims);
  }
}

namespace {

// Replies every way models reply (issue 7 item 1). `want`: "" = no verdict (fails closed),
// else "allow:<summary>" or "veto:<summary>".
struct ReplyCase {
  const char* label;
  std::string reply;
  std::optional<std::string> nonce;
  std::string want;
};

std::string Said(const std::optional<Verdict>& v) {
  if (!v) return "";
  return (v->allow ? "allow:" : "veto:") + v->summary;
}

const std::string kContract =
    "```json\n{\"verdict\": \"allow\" | \"veto\", \"summary\": \"<one line>\", \"findings\": "
    "[\"<finding>\", ...]}\n```";
const std::string kDraft = Block(R"({"verdict": "allow", "summary": "draft allow"})");
const std::string kNonce = "0123456789abcdef0123456789abcdef";

const ReplyCase kReplies[] = {
    // A draft allow followed by a final block that is not a valid verdict: no verdict.
    {"draft allow, final verdict word reject",
     kDraft + "\nOn reflection:\n" + Block(R"({"verdict": "reject", "summary": "no"})"),
     std::nullopt, ""},
    {"draft allow, final uppercase VETO",
     kDraft + "\n" + Block(R"({"verdict": "VETO", "summary": "no"})"), std::nullopt, ""},
    {"draft allow, final block without summary",
     kDraft + "\n" + Block(R"({"verdict": "veto", "findings": ["x"]})"), std::nullopt, ""},
    {"draft allow, final block with a trailing comma",
     kDraft + "\n" + Block(R"({"verdict": "veto", "summary": "no",})"), std::nullopt, ""},
    {"draft allow, final json fence never closed",
     kDraft + "\nFinal:\n```json\n{\"verdict\": \"veto\", \"summary\": \"cut off\"}\n",
     std::nullopt, ""},
    {"draft allow, final bare fence never closed, body an object",
     kDraft + "\n```\n{\"verdict\": \"veto\"", std::nullopt, ""},
    {"draft allow, reply ends on a json opener", kDraft + "\n```json", std::nullopt, ""},
    {"draft allow, final json fence with prose inside",
     kDraft + "\n```json\nI would say veto.\n```\n", std::nullopt, ""},
    {"draft allow, final block with verdict twice",
     kDraft + "\n" + Block(R"({"verdict": "veto", "summary": "s", "verdict": "allow"})"),
     std::nullopt, ""},
    {"uppercase verdict word alone", Block(R"({"verdict": "ALLOW", "summary": "ok"})"),
     std::nullopt, ""},
    {"uppercase JSON fence, broken body, after a valid allow",
     kDraft + "\n" + Block("{verdict: veto}", "JSON"), std::nullopt, ""},
    {"a later JSON snippet that is not a verdict",
     Block(R"({"verdict": "allow", "summary": "ok"})") + "\nThe files:\n" +
         Block(R"({"files": ["a.md"]})"),
     std::nullopt, ""},
    {"a later snippet naming a verdict key",
     Block(R"({"verdict": "allow", "summary": "ok"})") + "\n" +
         Block("print({\"verdict\": v})", "python"),
     std::nullopt, ""},
    // Valid final blocks decide, whatever precedes or follows them.
    {"quoted contract, then the verdict",
     "You asked for:\n" + kContract + "\nHere it is:\n" +
         Block(R"({"verdict": "veto", "summary": "hollow", "findings": ["x"]})"),
     std::nullopt, "veto:hollow"},
    {"quoted example veto, then the verdict",
     Block(R"({"verdict": "veto", "summary": "example"})") + "\n" +
         Block(R"({"verdict": "allow", "summary": "real"})"),
     std::nullopt, "allow:real"},
    {"prose after the block",
     Block(R"({"verdict": "allow", "summary": "ok"})") + "\nLet me know if you need more.\n",
     std::nullopt, "allow:ok"},
    {"a shell snippet after the block",
     Block(R"({"verdict": "allow", "summary": "ok"})") + "\nRun:\n" + Block("make test", "bash"),
     std::nullopt, "allow:ok"},
    {"a bare prose fence after the block",
     Block(R"({"verdict": "veto", "summary": "no"})") + "\n```\nnot json at all\n```\n",
     std::nullopt, "veto:no"},
    {"an unclosed non-verdict fence after the block",
     Block(R"({"verdict": "allow", "summary": "ok"})") + "\n```bash\nmake te", std::nullopt,
     "allow:ok"},
    {"several verdicts: the last decides (allow, veto)",
     kDraft + "\n" + Block(R"({"verdict": "veto", "summary": "second"})"), std::nullopt,
     "veto:second"},
    {"several verdicts: the last decides (veto, allow)",
     Block(R"({"verdict": "veto", "summary": "first"})") + "\n" +
         Block(R"({"verdict": "allow", "summary": "second"})"),
     std::nullopt, "allow:second"},
    {"uppercase JSON info string", Block(R"({"verdict": "allow", "summary": "ok"})", "JSON"),
     std::nullopt, "allow:ok"},
    {"a verdict in a text fence (upstream ignores the info string)",
     Block(R"({"verdict": "allow", "summary": "ok"})", "text"), std::nullopt, "allow:ok"},
    {"CRLF line ends", "ok\r\n```json\r\n{\"verdict\": \"veto\", \"summary\": \"crlf\"}\r\n```\r\n",
     std::nullopt, "veto:crlf"},
    {"no fence at all", "verdict: allow", std::nullopt, ""},
    // With a nonce, the last claiming block must carry it.
    {"nonce: final block carries it",
     Block(R"({"verdict": "allow", "summary": "ok", "nonce": ")" + kNonce + "\"}"), kNonce,
     "allow:ok"},
    {"nonce: final block lacks it", Block(R"({"verdict": "allow", "summary": "ok"})"), kNonce, ""},
    {"nonce: final block carries another",
     Block(R"({"verdict": "allow", "summary": "ok", "nonce": "aaaa"})"), kNonce, ""},
    {"nonce: an earlier block carries it, an echoed last one does not",
     Block(R"({"verdict": "veto", "summary": "real", "nonce": ")" + kNonce + "\"}") + "\n" +
         Block(R"({"verdict": "allow", "summary": "echoed"})"),
     kNonce, ""},
    {"nonce: quoted contract with it, then the verdict with it",
     "```json\n{\"verdict\": \"allow\" | \"veto\", \"nonce\": \"" + kNonce + "\"}\n```\n" +
         Block(R"({"verdict": "veto", "summary": "no", "nonce": ")" + kNonce + "\"}"),
     kNonce, "veto:no"},
    {"nonce: the nonce key twice",
     Block(R"({"verdict": "allow", "summary": "ok", "nonce": "x", "nonce": ")" + kNonce + "\"}"),
     kNonce, ""},
};

}  // namespace

TEST_CASE("only the last block that claims to be a verdict decides, and only when valid") {
  for (const ReplyCase& c : kReplies) {
    CAPTURE(c.label);
    CHECK(Said(ParseLastVerdict(c.reply, c.nonce)) == c.want);
  }
}

// The trial of 2026-12-02: a draft allow, then a final answer the fence scan does not see as
// a claiming block. Each admitted the draft before; now nothing after the deciding block may
// name a verdict key.
TEST_CASE("a final answer the fence scan misses never leaves a draft allow deciding") {
  const std::string draft = "```json\n{\"verdict\": \"allow\", \"summary\": \"draft ok\"}\n```\n";
  const std::vector<std::string> finals = {
      // an inline ``` in the prose pairs with the veto's opening fence
      "Wait: the design never closes its ``` fence on line 12, so I withdraw that.\n\n"
      "```json\n{\"verdict\": \"veto\", \"summary\": \"unclosed fence in design\"}\n```\n",
      // a one-line fence: the whole line is an info string
      "On reflection:\n```{\"verdict\": \"veto\", \"summary\": \"no\"}```\n",
      // a tilde fence
      "On reflection:\n~~~json\n{\"verdict\": \"veto\", \"summary\": \"no\"}\n~~~\n",
      // YAML and JSON5 write the key unquoted
      "On reflection:\n```yaml\nverdict: veto\nsummary: no\n```\n",
      "```JSON5\nverdict: \"veto\"\n```\n",
      // prose after the block that restates a verdict
      "\nVerdict: veto, after all.\n",
  };
  for (const std::string& final_answer : finals) {
    CAPTURE(final_answer);
    CHECK_FALSE(ParseLastVerdict(draft + final_answer));
  }
  // The control: the draft alone, or followed by prose and other blocks that name no verdict
  // key, decides.
  CHECK(ParseLastVerdict(draft));
  auto with_prose = ParseLastVerdict(draft + "\nThe verdict stands.\n```bash\nmake test\n```\n");
  REQUIRE(with_prose);
  CHECK(with_prose->allow);
}

TEST_CASE("MentionsVerdictKey finds a quoted key anywhere and an unquoted one at a line start") {
  CHECK(MentionsVerdictKey("x \"Verdict\" y"));
  CHECK(MentionsVerdictKey("verdict: veto"));
  CHECK(MentionsVerdictKey("  - verdict = allow"));
  CHECK(MentionsVerdictKey("{verdict: 'veto'}"));
  CHECK(MentionsVerdictKey("a\nVERDICT : x"));
  CHECK_FALSE(MentionsVerdictKey("my verdict: allow"));  // not at the start of a line
  CHECK_FALSE(MentionsVerdictKey("verdicts: 3"));
  CHECK_FALSE(MentionsVerdictKey("the verdict stands"));
}

TEST_CASE("a key twice anywhere in the verdict object makes it no verdict") {
  const char* const duplicated[] = {
      R"({"verdict": "allow", "summary": "ok", "verdict": "allow"})",
      R"({"verdict": "veto", "summary": "a", "summary": "b"})",
      R"({"verdict": "veto", "summary": "s", "findings": [], "findings": ["x"]})",
      R"({"verdict": "allow", "summary": "ok", "meta": {"a": 1, "a": 2}})",
      R"({"verdict": "allow", "summary": "ok", "list": [{"k": 1}, {"k": 2, "k": 3}]})",
      R"({"verdict": "allow", "summary": "ok", "x": 1, "x": 1})",
  };
  for (const char* json : duplicated) {
    CAPTURE(json);
    CHECK_FALSE(DecodeVerdictBlock(json));
  }
  // Equal keys in different objects are not duplicates.
  CHECK(DecodeVerdictBlock(
      R"({"verdict": "allow", "summary": "ok", "a": {"summary": 1}, "b": [{"k": 1}, {"k": 2}]})"));
}

TEST_CASE("a bounded line is cut at a UTF-8 boundary with a visible marker, within 1 KiB") {
  CHECK(BoundVerdictLine("short") == "short");
  const std::string exact(kMaxVerdictLineBytes, 'a');
  CHECK(BoundVerdictLine(exact) == exact);
  const std::string big(7 * 1024 * 1024, 'x');
  const std::string cut = BoundVerdictLine(big);
  CHECK(cut.size() <= kMaxVerdictLineBytes);
  const size_t kept = cut.find("\xE2\x80\xA6 [cut: ");
  REQUIRE(kept != std::string::npos);
  CHECK(cut.substr(0, kept) == std::string(kept, 'x'));
  CHECK(cut.substr(kept) == "\xE2\x80\xA6 [cut: " + std::to_string(big.size() - kept) + " bytes]");
  // Three-byte code points never split: the head holds whole "€" only.
  std::string euros;
  while (euros.size() <= 2 * kMaxVerdictLineBytes) euros += "\xE2\x82\xAC";
  const std::string cut_euros = BoundVerdictLine(euros);
  const size_t at = cut_euros.find("\xE2\x80\xA6 [cut: ");
  REQUIRE(at != std::string::npos);
  CHECK(at % 3 == 0);
  CHECK(cut_euros.substr(0, at) == euros.substr(0, at));
}

TEST_CASE("a bounded verdict keeps 64 findings and says how many more there were") {
  Verdict v;
  v.allow = false;
  v.summary = std::string(5000, 's');
  for (int i = 0; i < 100; ++i) v.findings.push_back("finding " + std::to_string(i));
  v.findings[3] = std::string(3000, 'f');
  const Verdict b = BoundVerdict(v);
  CHECK_FALSE(b.allow);
  CHECK(b.summary.size() <= kMaxVerdictLineBytes);
  REQUIRE(b.findings.size() == kMaxVerdictFindings + 1);
  CHECK(b.findings[0] == "finding 0");
  CHECK(b.findings[3].size() <= kMaxVerdictLineBytes);
  CHECK(b.findings[63] == "finding 63");
  CHECK(b.findings[64] == "\xE2\x80\xA6 and 36 more findings");
  Verdict small;
  small.summary = "ok";
  small.findings = {"a", "b"};
  const Verdict same = BoundVerdict(small);
  CHECK(same.summary == "ok");
  CHECK(same.findings == small.findings);
}

}  // namespace devflow

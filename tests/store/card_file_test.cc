// card.md parsing and the textual projection rewrite (reference §1.9).
#include <doctest/doctest.h>

#include <string>

#include "host/card_file.h"

using namespace devflow;

namespace {

Projection At(Location stage, int64_t rev) {
  Projection p;
  p.stage = stage;
  p.stage_revision = rev;
  return p;
}

std::string ParseError(const std::string& raw) {
  auto r = ParseCardFile("/c/card.md", raw);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == "corrupt");
  return r.status().message();
}

}  // namespace

TEST_CASE("card.md parses title, projection scalars and the trimmed body") {
  auto c = ParseCardFile("/c/card.md",
                         "---  \ntitle: Login page\nstage: designing\nstageRevision: 3\nowner: "
                         "ana\n---\n\n  Body line\n\nmore\n\n");
  REQUIRE(c.ok());
  CHECK(c->title == "Login page");
  CHECK(c->stage == std::string("designing"));
  CHECK(c->stage_revision == std::string("3"));
  CHECK(c->body == "Body line\n\nmore");
}

TEST_CASE("card.md without front matter, title or with a bad stage fails naming the file") {
  CHECK(ParseError("title: x\n") ==
        "/c/card.md: card file must start with a YAML frontmatter block");
  CHECK(ParseError("---\ntitle: x\n") ==
        "/c/card.md: card file must start with a YAML frontmatter block");
  CHECK(ParseError("---\nstage: draft\n---\n") ==
        "/c/card.md: frontmatter requires a non-empty \"title\"");
  CHECK(ParseError("---\ntitle: ''\n---\n") ==
        "/c/card.md: frontmatter requires a non-empty \"title\"");
  CHECK(ParseError("---\ntitle:\n---\n") ==
        "/c/card.md: frontmatter requires a non-empty \"title\"");
  CHECK(ParseError("---\n- a\n---\n") == "/c/card.md: frontmatter must be a YAML mapping");
  CHECK(ParseError("---\ntitle: x\nstage: shipping\n---\n") ==
        "/c/card.md: frontmatter \"stage\" is not a stage or \"blocked\"");
  CHECK(ParseError("---\ntitle: [x\n---\n").rfind("/c/card.md: invalid YAML frontmatter: ", 0) ==
        0);
}

// trial19 2c: yaml-cpp kept both keys and read the first title, which the checker judged, while
// a JavaScript reader refuses the block or shows the last one.
TEST_CASE("card.md with a front-matter key twice is refused naming the key and both lines") {
  CHECK(ParseError("---\ntitle: First title\ntitle: Second title\nstage: designing\n---\n") ==
        "/c/card.md: frontmatter has the key \"title\" twice (lines 2 and 3); remove one of "
        "them");
  CHECK(ParseError("---\ntitle: x\nstageRevision: 4\nowner: a\nstageRevision: 99\n---\n") ==
        "/c/card.md: frontmatter has the key \"stageRevision\" twice (lines 3 and 5); remove "
        "one of them");
  // The same key in a nested map is another map's: not a duplicate of the top level.
  CHECK(ParseCardFile("/c/card.md", "---\ntitle: x\nmeta:\n  title: y\n---\n").ok());
}

TEST_CASE("a new card file quotes the title only when YAML needs it") {
  CHECK(NewCardFile("Login page", "  Build it.\n", At(Location::kDraft, 1)) ==
        "---\ntitle: Login page\nstage: draft\nstageRevision: 1\n---\n\nBuild it.\n");
  CHECK(NewCardFile("Fix: crash", "", At(Location::kDraft, 1)) ==
        "---\ntitle: \"Fix: crash\"\nstage: draft\nstageRevision: 1\n---\n\n\n");
  Projection express = At(Location::kDraft, 1);
  express.service_class = ServiceClass::kExpress;
  CHECK(NewCardFile("x", "b", express) ==
        "---\ntitle: x\nstage: draft\nstageRevision: 1\nserviceClass: express\n---\n\nb\n");
}

TEST_CASE("the projection rewrite keeps unrelated front matter and the body byte for byte") {
  const std::string raw =
      "---\n"
      "title: \"Login: page\"   # keep this comment\n"
      "owner: ana\n"
      "tags:\n"
      "  - ui\n"
      "  - auth\n"
      "stage: draft\n"
      "# a comment line\n"
      "stageRevision: 1\n"
      "notes: |\n"
      "  stage: not a key\n"
      "---\n"
      "\n"
      "Body with --- and stage: draft\n"
      "\n"
      "  trailing spaces  \n";
  Projection p = At(Location::kBlocked, 4);
  p.blocked_from = Location::kDesigning;
  p.parent = "0001-parent";
  p.service_class = ServiceClass::kEmergency;
  auto out = RenderProjection("/c/card.md", raw, p);
  REQUIRE(out.ok());
  CHECK(*out ==
        "---\n"
        "title: \"Login: page\"   # keep this comment\n"
        "owner: ana\n"
        "tags:\n"
        "  - ui\n"
        "  - auth\n"
        "stage: blocked\n"
        "# a comment line\n"
        "stageRevision: 4\n"
        "notes: |\n"
        "  stage: not a key\n"
        "blockedFrom: designing\n"
        "parent: 0001-parent\n"
        "serviceClass: emergency\n"
        "---\n"
        "\n"
        "Body with --- and stage: draft\n"
        "\n"
        "  trailing spaces  \n");

  // Recovery removes blockedFrom, parent and the standard class in place.
  auto back = RenderProjection("/c/card.md", *out, At(Location::kDesigning, 5));
  REQUIRE(back.ok());
  CHECK(*back ==
        "---\n"
        "title: \"Login: page\"   # keep this comment\n"
        "owner: ana\n"
        "tags:\n"
        "  - ui\n"
        "  - auth\n"
        "stage: designing\n"
        "# a comment line\n"
        "stageRevision: 5\n"
        "notes: |\n"
        "  stage: not a key\n"
        "---\n"
        "\n"
        "Body with --- and stage: draft\n"
        "\n"
        "  trailing spaces  \n");
}

TEST_CASE("the projection rewrite appends missing keys and keeps CRLF and a body without newline") {
  auto out = RenderProjection("/c", "---\r\ntitle: x\r\n---\r\nbody", At(Location::kReady, 3));
  REQUIRE(out.ok());
  CHECK(*out == "---\r\ntitle: x\r\nstage: ready\r\nstageRevision: 3\r\n---\r\nbody");
  auto no_body = RenderProjection("/c", "---\ntitle: x\n---", At(Location::kReady, 3));
  REQUIRE(no_body.ok());
  CHECK(*no_body == "---\ntitle: x\nstage: ready\nstageRevision: 3\n---");
}

TEST_CASE("the projection rewrite refuses front matter it cannot edit in place") {
  auto flow =
      RenderProjection("/c", "---\n{title: x, stage: draft}\n---\n", At(Location::kReady, 2));
  REQUIRE_FALSE(flow.ok());
  CHECK(flow.status().message().rfind("/c: ", 0) == 0);
  auto none = RenderProjection("/c", "no front matter\n", At(Location::kReady, 2));
  CHECK(none.status().message() == "/c: card file must start with a YAML frontmatter block");
}

TEST_CASE("card.md read again and again: each changed byte of the front matter is read anew") {
  // The parse of a front-matter block is remembered by its exact text (a server answers many
  // decisions on one card): the same text gives the same card, any edit gives the edited one,
  // and an error is reported with the path of the file being read, not the first one seen.
  const std::string a = "---\ntitle: Alpha\nstage: designing\nstageRevision: 3\n---\nbody\n";
  const std::string b = "---\ntitle: Alphb\nstage: designing\nstageRevision: 3\n---\nbody\n";
  const std::string c = "---\ntitle: Alpha\nstage: designing\nstageRevision: 4\n---\nbody\n";
  for (int round = 0; round < 3; ++round) {
    auto ra = ParseCardFile("/c/card.md", a);
    auto rb = ParseCardFile("/c/card.md", b);
    auto rc = ParseCardFile("/c/card.md", c);
    REQUIRE(ra.ok());
    REQUIRE(rb.ok());
    REQUIRE(rc.ok());
    CHECK(ra->title == "Alpha");
    CHECK(rb->title == "Alphb");
    CHECK(rc->title == "Alpha");
    CHECK(ra->stage_revision == std::string("3"));
    CHECK(rc->stage_revision == std::string("4"));
  }
  const std::string bad = "---\ntitle: [unclosed\n---\nbody\n";
  auto first = ParseCardFile("/one/card.md", bad);
  auto second = ParseCardFile("/two/card.md", bad);
  REQUIRE_FALSE(first.ok());
  REQUIRE_FALSE(second.ok());
  CHECK(first.status().message().rfind("/one/card.md: invalid YAML frontmatter: ", 0) == 0);
  CHECK(second.status().message().rfind("/two/card.md: invalid YAML frontmatter: ", 0) == 0);
  // More distinct blocks than are remembered: every one still reads as itself.
  for (int i = 0; i < 600; ++i) {
    const std::string t = "card " + std::to_string(i);
    auto r = ParseCardFile("/c/card.md", "---\ntitle: " + t + "\n---\n");
    REQUIRE(r.ok());
    CHECK(r->title == t);
  }
  auto again = ParseCardFile("/c/card.md", b);
  REQUIRE(again.ok());
  CHECK(again->title == "Alphb");
}

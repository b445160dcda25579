// devflow-artifact-gate (reference §6.1) and devflow-grounding-gate (SPEC §6) configs.
#include <doctest/doctest.h>

#include <string>

#include "config/config.h"

namespace devflow {
namespace {

std::string ProblemsOf(const std::string& yaml) {
  auto r = LoadConfigText(yaml, "devflow-gate.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == "config");
  return r.status().message();
}

PluginConfig PluginOf(const std::string& yaml) {
  auto r = LoadConfigText(yaml, "devflow-gate.yaml");
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->plugins.size() == 1);
  return r->plugins[0];
}

TEST_CASE("artifact config reads kinds, item forms, and edges with duplicates folded") {
  PluginConfig p = PluginOf(R"(plugins:
  - id: devflow-artifact-gate
    config:
      kinds:
        prd: { sections: [Goals] }
        design:
          frontmatter: [title]
          sections: [Overview, {title: Risks, description: what can go wrong}]
          nonEmptySections: [Overview]
        adr:
      edges:
        'designing->ready': [prd, design, prd]
        'draft->designing': []
        'ready->developing':
)");
  REQUIRE(p.artifact.has_value());
  const ArtifactGateConfig& a = *p.artifact;
  REQUIRE(a.kinds.size() == 3);
  CHECK(a.kinds[0].kind == "prd");
  REQUIRE(a.kinds[0].sections.size() == 1);
  CHECK(a.kinds[0].sections[0].title == "Goals");
  CHECK_FALSE(a.kinds[0].sections[0].description.has_value());
  const ArtifactKindConfig* design = a.FindKind("design");
  REQUIRE(design == &a.kinds[1]);
  REQUIRE(design->frontmatter.size() == 1);
  CHECK(design->frontmatter[0].title == "title");
  REQUIRE(design->sections.size() == 2);
  CHECK(design->sections[1].title == "Risks");
  CHECK(design->sections[1].description == "what can go wrong");
  REQUIRE(design->non_empty_sections.size() == 1);
  CHECK(design->non_empty_sections[0].title == "Overview");
  CHECK(a.kinds[2].kind == "adr");
  CHECK(a.kinds[2].sections.empty());
  CHECK(a.FindKind("nope") == nullptr);
  // Empty lists (and null) are dropped: those edges are ungated.
  REQUIRE(a.edges.size() == 1);
  CHECK(a.edges[0].first.Name() == "designing->ready");
  CHECK(a.edges[0].second == std::vector<std::string>{"prd", "design"});
}

TEST_CASE("artifact config names the exact item of each malformed entry") {
  CHECK(ProblemsOf(R"(plugins:
  - id: devflow-artifact-gate
    config:
      kinds:
        design:
          frontmatter: [title, "  "]
          sections: [Overview, {title: Risks, description: " "}, {description: d}]
          nonEmptySections: [{title: A, description: B, extra: 1}]
          sectoins: []
        Bad Kind: {}
)") == "devflow-gate.yaml:9:11: plugins[0](devflow-artifact-gate): unknown key \"sectoins\" in "
       "kinds[\"design\"] (did you mean \"sections\"?); allowed here: frontmatter, sections, "
       "nonEmptySections\n"
       "devflow-gate.yaml:6:32: plugins[0](devflow-artifact-gate): kinds[\"design\"]"
       ".frontmatter[1] must be a non-empty string or {title, description}\n"
       "devflow-gate.yaml:7:60: plugins[0](devflow-artifact-gate): kinds[\"design\"]"
       ".sections[1].description must be a non-empty string\n"
       "devflow-gate.yaml:7:66: plugins[0](devflow-artifact-gate): kinds[\"design\"]"
       ".sections[2].title must be a non-empty string\n"
       "devflow-gate.yaml:8:57: plugins[0](devflow-artifact-gate): unknown key \"extra\" in "
       "kinds[\"design\"].nonEmptySections[0]; allowed here: title, description\n"
       "devflow-gate.yaml:10:9: plugins[0](devflow-artifact-gate): kinds names invalid kind "
       "\"Bad Kind\"; kinds use lowercase letters, digits and dashes and start with a letter or "
       "digit");
}

TEST_CASE("artifact config fails an edge that requires an undeclared kind") {
  CHECK(ProblemsOf(R"(plugins:
  - id: devflow-artifact-gate
    config:
      kinds: {design: {}}
      edges:
        'designing->ready': [prd, design]
        designing=>ready: [design]
)") == "devflow-gate.yaml:6:30: plugins[0](devflow-artifact-gate): edges[\"designing->ready\"] "
       "requires undeclared kind \"prd\"\n"
       "devflow-gate.yaml:7:9: plugins[0](devflow-artifact-gate): edges names invalid edge "
       "\"designing=>ready\"; use \"<from>-><to>\" with stage names or \"blocked\"");
}

TEST_CASE("artifact config rejects a duplicate kind") {
  CHECK(ProblemsOf("plugins:\n  - id: devflow-artifact-gate\n    config:\n      kinds:\n"
                   "        prd: {}\n        prd: {sections: [Goals]}\n") ==
        "devflow-gate.yaml:6:9: plugins[0](devflow-artifact-gate): duplicate key \"prd\" in kinds "
        "(first at line 5); remove one of them");
}

TEST_CASE("grounding config reads edges with release-gate defaults and options") {
  PluginConfig p = PluginOf(R"(plugins:
  - id: devflow-grounding-gate
    config:
      ledger: .devflow/ledger/grounding.jsonl
      edges:
        designing->ready: {claim: design, evidence: [prd, prd, notes]}
        reviewing->testing:
          claim: review
          kinds: [date, path, number, date-text, date]
          excludeKeys: [trace]
          require: ['SEC-[0-9]+']
          compat: true
)");
  REQUIRE(p.grounding.has_value());
  const GroundingGateConfig& g = *p.grounding;
  CHECK(g.ledger == ".devflow/ledger/grounding.jsonl");
  REQUIRE(g.edges.size() == 2);
  CHECK(g.edges[0].edge.Name() == "designing->ready");
  CHECK(g.edges[0].claim == "design");
  CHECK(g.edges[0].evidence == std::vector<std::string>{"prd", "notes"});
  CHECK(g.edges[0].options.kinds == std::vector<std::string>{"date", "url", "ref", "hash"});
  CHECK(g.edges[0].options.exclude_keys.empty());
  CHECK_FALSE(g.edges[0].options.compat);
  CHECK(g.edges[1].options.kinds ==
        std::vector<std::string>{"date", "path", "number", "date-text"});
  CHECK(g.edges[1].options.exclude_keys == std::vector<std::string>{"trace"});
  CHECK(g.edges[1].options.require == std::vector<std::string>{"SEC-[0-9]+"});
  CHECK(g.edges[1].options.compat);
}

TEST_CASE("grounding config validates kinds, token kinds, lists and booleans") {
  CHECK(ProblemsOf(R"(plugins:
  - id: devflow-grounding-gate
    config:
      ledger: " "
      edges:
        designing->ready:
          claim: Design
          evidence: [prd, "Bad Kind"]
          kinds: [date, bogus, url]
          excludeKeys: [a, ""]
          compat: yes
        ready->developing: {evidence: [prd]}
        testing->done: {claim: t, kinds: []}
)") == "devflow-gate.yaml:7:18: plugins[0](devflow-grounding-gate): edges[\"designing->ready\"]"
       ".claim names invalid kind \"Design\"; kinds use lowercase letters, digits and dashes and "
       "start with a letter or digit\n"
       "devflow-gate.yaml:8:27: plugins[0](devflow-grounding-gate): edges[\"designing->ready\"]"
       ".evidence names invalid kind \"Bad Kind\"; kinds use lowercase letters, digits and "
       "dashes and start with a letter or digit\n"
       "devflow-gate.yaml:9:25: plugins[0](devflow-grounding-gate): edges[\"designing->ready\"]"
       ".kinds names unknown token kind \"bogus\"; known: date, url, ref, hash, path, number, "
       "date-text\n"
       "devflow-gate.yaml:10:28: plugins[0](devflow-grounding-gate): "
       "edges[\"designing->ready\"].excludeKeys[1] must be a non-empty string\n"
       "devflow-gate.yaml:11:19: plugins[0](devflow-grounding-gate): "
       "edges[\"designing->ready\"].compat must be true or false (got \"yes\")\n"
       "devflow-gate.yaml:12:9: plugins[0](devflow-grounding-gate): edges[\"ready->developing\"]"
       ".claim must name the artifact kind whose specifics are checked\n"
       "devflow-gate.yaml:13:42: plugins[0](devflow-grounding-gate): edges[\"testing->done\"]"
       ".kinds must be a non-empty list of token kinds: date, url, ref, hash, path, number, "
       "date-text\n"
       "devflow-gate.yaml:4:15: plugins[0](devflow-grounding-gate): ledger must be a non-empty "
       "path when set");
}

TEST_CASE("grounding config: repo is owner/name, passed to the rules (issue 9)") {
  const std::string head =
      "plugins:\n  - id: devflow-grounding-gate\n    config:\n      edges:\n"
      "        designing->ready: {claim: design, repo: ";
  const PluginConfig p = PluginOf(head + "axios/axios}\n");
  REQUIRE(p.grounding);
  CHECK(p.grounding->edges.at(0).options.repo == "axios/axios");
  CHECK(PluginOf(head.substr(0, head.size() - 8) + "}\n").grounding->edges.at(0).options.repo ==
        "");
  CHECK(ProblemsOf(head + "axios}\n") ==
        "devflow-gate.yaml:5:49: plugins[0](devflow-grounding-gate): "
        "edges[\"designing->ready\"].repo must be owner/name, as in github.com/owner/name "
        "(got \"axios\")");
}

TEST_CASE("grounding config rejects an unknown option with a suggestion") {
  CHECK(ProblemsOf("plugins:\n  - id: devflow-grounding-gate\n    config:\n      edges:\n"
                   "        designing->ready: {claim: design, exclude_keys: [a]}\n") ==
        "devflow-gate.yaml:5:43: plugins[0](devflow-grounding-gate): unknown key "
        "\"exclude_keys\" in edges[\"designing->ready\"] (did you mean \"excludeKeys\"?); "
        "allowed here: claim, evidence, kinds, excludeKeys, require, compat, repo");
}

}  // namespace
}  // namespace devflow

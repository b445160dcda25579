// Grounding by equivalence (issue 9): each rule as a grounded case and its ungrounded twin,
// literal claim and evidence, exact reasons (checker/grounding.h, docs/grounding.md).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "checker/grounding.h"

namespace devflow {
namespace {

using Strings = std::vector<std::string>;

Strings Reasons(std::string_view claim, std::string_view evidence, std::string_view repo = {},
                const std::vector<std::string>& kinds = DefaultTokenKinds()) {
  return GroundingReasons(Ground(claim, {evidence}, kinds, GroundingMode::kStrict, repo));
}

}  // namespace

TEST_CASE("equivalence: a short hash is grounded by a longer evidence hash it starts, any case") {
  const char kFull[] = "commit C44D2F2316AD289B38997657248BA10DE11DEB6C";
  CHECK(Reasons("Reverted in c44d2f2.", kFull).empty());
  CHECK(Reasons("Reverted in c44d2f2316ad289b38997657248ba10de11deb6c.", kFull).empty());
  CHECK(Reasons("Reverted in c44d2f3.", kFull) ==
        Strings{"hash not in evidence: c44d2f3 (line 1:13; evidence has c44d2f2)"});
  // That direction only: the claim's longer hash is not grounded by a shorter evidence one.
  CHECK(Reasons("Reverted in c44d2f2316ad.", "commit c44d2f2") ==
        Strings{"hash not in evidence: c44d2f2316ad (line 1:13)"});
  // Only from the start of a whole evidence token.
  CHECK(Reasons("Reverted in 4d2f231.", kFull) ==
        Strings{"hash not in evidence: 4d2f231 (line 1:13)"});
}

TEST_CASE("equivalence: #N is grounded by #N, GH-N, PR N, PR #N, pull request #N, <repo>#N") {
  for (const char* evidence :
       {"Fix (#5980)", "GH-5980 fixed", "PR 5980 merged", "PR #5980",
        "Merge pull request 5980 from a/b", "see axios/axios#5980", "see axios#5980", "PR#5980"}) {
    CAPTURE(evidence);
    CHECK(Reasons("Fixed (#5980).", evidence, "axios/axios").empty());
  }
  // Another repository's #N is not ours; #4 is not grounded by #41 (whole tokens stay).
  CHECK(Reasons("Fixed (#5980).", "see other/repo#5980", "axios/axios") ==
        Strings{"ref not in evidence: #5980 (line 1:8)"});
  CHECK(Reasons("Fixed (#5980).", "see lib#5980", "axios/axios") ==
        Strings{"ref not in evidence: #5980 (line 1:8)"});
  CHECK(Reasons("see #4", "see #41 and PR 45") ==
        Strings{"ref not in evidence: #4 (line 1:5; evidence has #41)"});
  // GH-N and owner/repo#N in the claim are refs of that repository.
  CHECK(Reasons("GH-12 and axios/axios#13", "(#12) (#13)", "axios/axios").empty());
  CHECK(Reasons("see other/repo#13", "(#13)", "axios/axios") ==
        Strings{"ref not in evidence: other/repo#13 (line 1:5)"});
  CHECK(Reasons("see other/repo#13", "thanks to other/repo#13", "axios/axios").empty());
}

TEST_CASE("equivalence: a forge link to a pull request or issue is grounded by its ref") {
  CHECK(Reasons("([#5980](https://github.com/axios/axios/pull/5980))", "Fix (#5980)", "axios/axios")
            .empty());
  CHECK(Reasons("(https://github.com/Axios/Axios/issues/5980/)", "Fix (#5980)", "axios/axios")
            .empty());
  CHECK(Reasons("(https://github.com/axios/axios/pull/5981)", "Fix (#5980)", "axios/axios") ==
        Strings{"url not in evidence: https://github.com/axios/axios/pull/5981 (line 1:2; "
                "evidence has #5980)"});
  // Without the project's repository (no --repo, nothing in the evidence to infer it from) a
  // forge link is an ordinary URL.
  CHECK(Reasons("(https://github.com/axios/axios/pull/5980)", "Fix (#5980)") ==
        Strings{"url not in evidence: https://github.com/axios/axios/pull/5980 (line 1:2)"});
  // The repository inferred from the evidence when it names exactly one.
  CHECK(Reasons("(https://github.com/axios/axios/pull/5980)",
                "Fix (#5980)\nhttps://github.com/axios/axios/compare/a...b")
            .empty());
  CHECK(Reasons("(https://github.com/axios/axios/pull/5980)",
                "Fix (#5980)\nhttps://github.com/axios/axios https://github.com/b/c") ==
        Strings{"url not in evidence: https://github.com/axios/axios/pull/5980 (line 1:2; "
                "evidence has https://github.com/axios/axios)"});
  // Links into other repositories stay ungrounded unless they appear.
  CHECK(Reasons("https://github.com/nodejs/node/pull/5980", "Fix (#5980)", "axios/axios") ==
        Strings{"url not in evidence: https://github.com/nodejs/node/pull/5980 (line 1:1)"});
  CHECK(Reasons("https://github.com/nodejs/node/pull/5980",
                "see https://github.com/nodejs/node/pull/5980", "axios/axios")
            .empty());
}

TEST_CASE("equivalence: commit links by their hash, compare links by both ends, tags by tag") {
  const std::string evidence =
      "commit eac4619fe2e0926e876cd260ee21e3690381dbb5\nfix\n\ntags:\nv1.7.7\nv1.7.8\n";
  CHECK(Reasons("([eac4619](https://github.com/axios/axios/commit/"
                "eac4619fe2e0926e876cd260ee21e3690381dbb5))",
                evidence, "axios/axios")
            .empty());
  CHECK(Reasons("https://github.com/axios/axios/commit/eac4619fe2e0926e876cd260ee21e3690381dbb6",
                evidence, "axios/axios") ==
        Strings{"url not in evidence: "
                "https://github.com/axios/axios/commit/eac4619fe2e0926e876cd260ee21e3690381dbb6 "
                "(line 1:1; evidence has eac4619fe2e0926e876cd260ee21e3690381dbb5)",
                "hash not in evidence: eac4619fe2e0926e876cd260ee21e3690381dbb6 (line 1:39; "
                "evidence has eac4619fe2e0926e876cd260ee21e3690381dbb5)"});
  CHECK(Reasons("## [1.7.8](https://github.com/axios/axios/compare/v1.7.7...v1.7.8)", evidence,
                "axios/axios")
            .empty());
  CHECK(Reasons("https://github.com/axios/axios/compare/eac4619..v1.7.8", evidence, "axios/axios")
            .empty());
  CHECK(
      Reasons("https://github.com/axios/axios/compare/v1.7.6...v1.7.8", evidence, "axios/axios") ==
      Strings{"url not in evidence: https://github.com/axios/axios/compare/v1.7.6...v1.7.8 "
              "(line 1:1)"});
  CHECK(Reasons("https://github.com/axios/axios/releases/tag/v1.7.8", evidence, "axios/axios")
            .empty());
  // A tag is a whole name: v1.7.8 is not in v1.7.8-rc1 nor in v1.7.81.
  CHECK(Reasons("https://github.com/axios/axios/releases/tag/v1.7.8", "v1.7.8-rc1 v1.7.81",
                "axios/axios") ==
        Strings{"url not in evidence: https://github.com/axios/axios/releases/tag/v1.7.8 "
                "(line 1:1)"});
}

TEST_CASE("equivalence: other URLs match after the scheme, a trailing / or ., a #fragment") {
  CHECK(Reasons("See https://x.org/docs/.", "at http://x.org/docs").empty());
  CHECK(Reasons("See https://x.org/docs", "at https://x.org/docs/#install").empty());
  CHECK(Reasons("See https://x.org/docs#install", "at https://x.org/docs#install").empty());
  // A fragment is dropped on the evidence side only.
  CHECK(Reasons("See https://x.org/docs#install", "at https://x.org/docs") ==
        Strings{"url not in evidence: https://x.org/docs#install (line 1:5; evidence has "
                "https://x.org/docs)"});
  CHECK(Reasons("See https://x.org/docs/v2", "at https://x.org/docs") ==
        Strings{"url not in evidence: https://x.org/docs/v2 (line 1:5; evidence has "
                "https://x.org/docs)"});
}

TEST_CASE("equivalence: a CVE id is one token, the evidence may write it with - _ or space") {
  CHECK(ExtractTokens("CVE-2026-25645 and CVE-2026", "ref") ==
        Strings{"CVE-2026-25645", "CVE-2026"});
  for (const char* evidence : {"CVE-2026-25645", "cve_2026_25645", "CVE 2026 25645"}) {
    CAPTURE(evidence);
    CHECK(Reasons("Fixes CVE-2026-25645.", evidence).empty());
  }
  // Another CVE of that year does not ground it.
  CHECK(Reasons("Fixes CVE-2026-25645.", "CVE-2026-25646") ==
        Strings{"ref not in evidence: CVE-2026-25645 (line 1:7; evidence has CVE-2026-25646)"});
}

TEST_CASE("equivalence: an all-decimal token is a hash where a commit link or 'commit' marks it") {
  CHECK(ExtractTokens("commit 2506700, [2506701](https://github.com/o/r/commit/2506701), "
                      "/commit/2506702 and 2506703",
                      "hash") == Strings{"2506700", "2506701", "2506701", "2506702"});
  CHECK(Reasons("commit 2506700", "commit 2506700aa0000000000000000000000000000").empty());
  CHECK(Reasons("commit 2506700", "commit 2506701aa0000000000000000000000000000") ==
        Strings{"hash not in evidence: 2506700 (line 1:8; evidence has 2506701)"});
}

TEST_CASE("equivalence: a UUID is one token, never a hash") {
  CHECK(ExtractTokens("id 550e8400-e29b-41d4-a716-446655440000 and a1b2c3d", "hash") ==
        Strings{"a1b2c3d"});
  CHECK(Reasons("Request 550e8400-e29b-41d4-a716-446655440000 failed.", "nothing").empty());
  CHECK(Reasons("Request 550e8400-e29b-41d4-a716-446655440000 in 550e840.", "nothing") ==
        Strings{"hash not in evidence: 550e840 (line 1:49)"});
}

TEST_CASE("link text against link target: a link naming two things is a finding of its own") {
  const std::string evidence = "(#123) (#124) v1.2.0 v1.2.1 commit 8f5d9479d0f1da5726488a530d7f";
  CHECK(Reasons("[#123](https://github.com/o/r/pull/123)", evidence, "o/r").empty());
  CHECK(Reasons("[#123](https://github.com/o/r/pull/124)", evidence, "o/r") ==
        Strings{"link text does not match its target: [#123](https://github.com/o/r/pull/124) "
                "(line 1:1)"});
  CHECK(Reasons("x [v1.2.1](https://github.com/o/r/releases/tag/v1.2.1)", evidence, "o/r").empty());
  CHECK(Reasons("x [v1.2.0](https://github.com/o/r/releases/tag/v1.2.1)", evidence, "o/r") ==
        Strings{"link text does not match its target: "
                "[v1.2.0](https://github.com/o/r/releases/tag/v1.2.1) (line 1:3)"});
  CHECK(Reasons("[BUG 8f5d9479](https://github.com/o/r/commit/8f5d9479d0f1da5726488a530d7f)",
                evidence, "o/r")
            .empty());
  CHECK(Reasons("[BUG 8f5d9478](https://github.com/o/r/commit/8f5d9479d0f1da5726488a530d7f)",
                evidence, "o/r") ==
        Strings{"hash not in evidence: 8f5d9478 (line 1:6; evidence has 8f5d9479)",
                "link text does not match its target: "
                "[BUG 8f5d9478](https://github.com/o/r/commit/8f5d9479d0f1da5726488a530d7f) "
                "(line 1:1)"});
  // Reference definitions too; the version of a compare link is its upper end.
  CHECK(Reasons("\n[1.2.1]: https://github.com/o/r/compare/v1.2.0...v1.2.1", evidence, "o/r")
            .empty());
  CHECK(Reasons("\n[1.2.0]: https://github.com/o/r/compare/v1.2.0...v1.2.1", evidence, "o/r") ==
        Strings{"link text does not match its target: "
                "[1.2.0]: https://github.com/o/r/compare/v1.2.0...v1.2.1 (line 2:1)"});
  // Text that names nothing of the kind is no finding.
  CHECK(Reasons("[this fix](https://github.com/o/r/pull/124)", evidence, "o/r").empty());
  // With url off, links are not compared.
  CHECK(Reasons("[#123](https://github.com/o/r/pull/124)", evidence, "o/r", {"date"}).empty());
}

TEST_CASE("every rejection gives its position in the claim, in characters") {
  CHECK(Reasons("line one\n\xE2\x80\x9C\xC3\xA9t\xC3\xA9\xE2\x80\x9D #1072", "(#1073) (#1000)") ==
        Strings{"ref not in evidence: #1072 (line 2:7; evidence has #1073)"});
  CHECK(Reasons("on 2026-09-24 and 2026-09-24", "day 2026-09-25, day 2026-09-01") ==
        Strings{"date not in evidence: 2026-09-24 (line 1:4; evidence has 2026-09-25)"});
  // No nearest when the evidence holds nothing of the kind.
  CHECK(Reasons("Ship #7.", "nothing") == Strings{"ref not in evidence: #7 (line 1:6)"});
}

TEST_CASE("compat keeps release_gate.py's reasons: no positions, substrings, no link check") {
  const GroundingResult r =
      Ground("[#12](https://github.com/o/r/pull/13) #4 CVE-2026-1", {"#41 CVE-2026-9"},
             DefaultTokenKinds(), GroundingMode::kCompat, "o/r");
  CHECK(GroundingReasons(r) ==
        Strings{"url not in evidence: https://github.com/o/r/pull/13", "ref not in evidence: #12"});
}

TEST_CASE("CheckRepoName wants owner/name") {
  CHECK(CheckRepoName("axios/axios").ok());
  CHECK(CheckRepoName("rust-lang/regex.rs").ok());
  CHECK(CheckRepoName("axios").message() ==
        "bad --repo 'axios': want owner/name, as in github.com/owner/name");
  CHECK_FALSE(CheckRepoName("a/b/c").ok());
  CHECK_FALSE(CheckRepoName("/b").ok());
}

}  // namespace devflow

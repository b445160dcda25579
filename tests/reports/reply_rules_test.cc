#include "reports/reply_rules.h"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "config/config.h"
#include "reports/sha256.h"
#include "reports/verdict_cache.h"

namespace devflow {
namespace {

// A source of the tree, or (`build:<rel>`) a file of the build directory, DG_BINARY's.
std::string ReadSource(const std::string& rel) {
  const std::string binary = DG_BINARY;
  const std::string path = rel.rfind("build:", 0) == 0
                               ? binary.substr(0, binary.rfind('/')) + "/" + rel.substr(6)
                               : std::string(DG_SOURCE_DIR) + "/" + rel;
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << rel);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

// trial15 C1: the reply rules changed five times under one hand-kept revision number, and an
// allow the tip refuses was reused from a record cached by a gate built in between. The
// identity now follows the rules' bytes, so no author has to remember a bump.
TEST_CASE(
    "reply rules: the digest in the checker identity is the SHA-256 of the rule sources as they "
    "are in the tree") {
  std::string framed;
  int count = 0;
  for (const char* const* rel = kReplyRulesSources; *rel != nullptr; ++rel, ++count) {
    framed += std::string(*rel) + "\n" + Sha256Hex(ReadSource(*rel)) + "\n";
  }
  CHECK(count >= 2);
  // The verdict parser itself and the look-alike fold it reads through are covered, the fold's
  // table generated from ICU's data included (trial15 A4).
  bool has_verdict = false;
  bool has_fold = false;
  bool has_table = false;
  for (const char* const* rel = kReplyRulesSources; *rel != nullptr; ++rel) {
    has_verdict = has_verdict || std::string(*rel) == "checker/verdict.cc";
    has_fold = has_fold || std::string(*rel) == "host/lookalike.cc";
    has_table = has_table || std::string(*rel) == "build:generated/lookalike_table.cc";
  }
  CHECK(has_verdict);
  CHECK(has_fold);
  CHECK(has_table);
  CHECK(std::string(kReplyRulesSha256) == Sha256Hex(framed));
}

TEST_CASE("reply rules: another rules digest gives another checker identity for one provider") {
  ProviderConfig provider;
  provider.command = {"/usr/bin/true"};
  const std::string identity = CheckerIdentity(&provider, false);
  // The identity is the SHA-256 of the compact JSON that names the digest last.
  const std::string expected_tail =
      std::string(",\"verdictNonce\":false,\"replyRules\":\"") + kReplyRulesSha256 + "\"}";
  const std::string json_prefix =
      "{\"provider\":{\"builtin\":null,\"args\":[],\"command\":[\"/usr/bin/true\"],\"env\":[],"
      "\"network\":false,\"sandbox\":\"on\"}";
  CHECK(identity == Sha256Hex(json_prefix + expected_tail));
  CHECK(identity != Sha256Hex(json_prefix + ",\"verdictNonce\":false,\"replyRules\":1}"));
}

}  // namespace devflow

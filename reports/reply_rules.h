// The identity of the reply rules: which replies hold a verdict (checker/verdict.cc,
// ParseLastVerdict, and what it reads through: the look-alike fold and the UTF-8 decoder).
// A cached verdict was read under the rules of the gate that cached it; the checker identity
// (reports/verdict_cache.h, CheckerIdentity) holds this digest, so a gate whose rules differ in
// any byte does not reuse a verdict cached under others (trial14 C1, trial15 C1: a revision
// number raised by hand was forgotten, and allows the tip refuses were reused).
#pragma once

namespace devflow {

/// Lowercase hex SHA-256, computed at build time by cmake/reply_rules.cmake, of the framed
/// list `<path>\n<sha256 hex of the file's bytes>\n` over kReplyRulesSources in order. Any
/// edit of a listed file gives another digest (a cosmetic one too: the price is one cache miss
/// per record, a checker run); a rebuild of unchanged sources gives the same one, and every
/// program built from one tree (the CLI, `serve`, the tests) computes the same.
extern const char kReplyRulesSha256[];

/// The sources the digest covers, relative to the source tree, in the order hashed;
/// nullptr-terminated. Listed in CMakeLists.txt (DG_REPLY_RULE_SOURCES). One prefixed `build:`
/// is relative to the build directory: `build:generated/lookalike_table.cc`, the look-alike
/// fold's table generated from the build machine's ICU (host/lookalike.h), so a build against
/// another ICU, whose Unicode data fold other letters, is another identity.
extern const char* const kReplyRulesSources[];

}  // namespace devflow

#include "reports/verdict_cache.h"

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <string>

#include "config/config.h"
#include "reports/reply_rules.h"
#include "reports/sha256.h"
#include "support/support.h"

namespace devflow {
namespace {

using test::FaultyFileSystem;
using test::Slurp;
using test::Spit;
using test::TempDir;

constexpr const char* kInstruction =
    "Check that the design cites only requirements the PRD states.";
constexpr const char* kPromptSha =
    "5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a";
constexpr const char* kAt = "2026-09-16T08:00:00.000Z";

// Computed independently with python3: json.dumps(key, separators=(',', ':'),
// ensure_ascii=False) and hashlib.sha256(...).hexdigest()[:16].
constexpr const char* kCompactKey =
    R"({"edge":"designing->ready","root":"/work/ws/.devflow","card":"0002-b",)"
    R"("inputs":["design:4","prd:3"],)"
    R"("promptSha256":"5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a"})";
constexpr const char* kFileName = "74acfe879fe16512.json";

constexpr const char* kAllowRecord = R"({
  "key": {
    "edge": "designing->ready",
    "root": "/work/ws/.devflow",
    "card": "0002-b",
    "inputs": [
      "design:4",
      "prd:3"
    ],
    "promptSha256": "5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a"
  },
  "verdict": "allow",
  "summary": "design holds",
  "at": "2026-09-16T08:00:00.000Z"
}
)";

constexpr const char* kVetoRecord = R"({
  "key": {
    "edge": "designing->ready",
    "root": "/work/ws/.devflow",
    "card": "0002-b",
    "inputs": [
      "design:4",
      "prd:3"
    ],
    "promptSha256": "5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a"
  },
  "verdict": "veto",
  "summary": "the design is hollow",
  "reportPath": "/work/ws/.devflow/reports/agent-gate/0002-b-designing-ready-r4.md",
  "at": "2026-09-16T08:00:00.000Z"
}
)";

// A checker identity as a record holds it (64 lowercase hex digits): CheckerIdentity of
// Checker() below with verdictNonce on under reply rules revision 1, before the identity held
// the rules' digest.
constexpr const char* kChecker = "e283c8878bffaa4b1f3067d95a3dbbc2e6e3fb6e1f073ceaa26cb20aba8e5ccf";

// InputsIdentity of kPrdText as prd:3 and kDesignText as design:4, computed independently with
// python3: sha256 over the inputs sorted by label, each framed as label \n length \n bytes.
constexpr const char* kPrdText = "# PRD\n\n- REQ-1\n";
constexpr const char* kDesignText = "# Design\n\ncovers REQ-1\n";
constexpr const char* kInputs = "9dafd22cbd498119e1c256b1a6b959565c175dd30cee2cc543ba53ede84c5ec4";

// Our record: upstream's five fields, then checkerSha256 (issue 7 item 3) and inputsSha256.
constexpr const char* kOurAllowRecord = R"({
  "key": {
    "edge": "designing->ready",
    "root": "/work/ws/.devflow",
    "card": "0002-b",
    "inputs": [
      "design:4",
      "prd:3"
    ],
    "promptSha256": "5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a"
  },
  "verdict": "allow",
  "summary": "design holds",
  "at": "2026-09-16T08:00:00.000Z",
  "checkerSha256": "e283c8878bffaa4b1f3067d95a3dbbc2e6e3fb6e1f073ceaa26cb20aba8e5ccf",
  "inputsSha256": "9dafd22cbd498119e1c256b1a6b959565c175dd30cee2cc543ba53ede84c5ec4"
}
)";

constexpr const char* kOurVetoRecord = R"({
  "key": {
    "edge": "designing->ready",
    "root": "/work/ws/.devflow",
    "card": "0002-b",
    "inputs": [
      "design:4",
      "prd:3"
    ],
    "promptSha256": "5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a"
  },
  "verdict": "veto",
  "summary": "the design is hollow",
  "reportPath": "/work/ws/.devflow/reports/agent-gate/0002-b-designing-ready-r4.md",
  "at": "2026-09-16T08:00:00.000Z",
  "checkerSha256": "e283c8878bffaa4b1f3067d95a3dbbc2e6e3fb6e1f073ceaa26cb20aba8e5ccf",
  "inputsSha256": "9dafd22cbd498119e1c256b1a6b959565c175dd30cee2cc543ba53ede84c5ec4"
}
)";

ProviderConfig Checker() {
  ProviderConfig p;
  p.name = "checker";
  p.command = {"/usr/bin/check", "--x"};
  p.env = {"API_KEY"};
  return p;
}

VerdictCacheKey TheKey() {
  return VerdictCacheKey::Compute("designing->ready", "/work/ws/.devflow", "0002-b",
                                  {"prd:3", "design:4"}, kInstruction);
}

VerdictCacheRecord AllowRecord() {
  VerdictCacheRecord r;
  r.key = TheKey();
  r.allow = true;
  r.summary = "design holds";
  r.at = kAt;
  return r;
}

VerdictCacheRecord VetoRecord() {
  VerdictCacheRecord r;
  r.key = TheKey();
  r.allow = false;
  r.summary = "the design is hollow";
  r.report_path = "/work/ws/.devflow/reports/agent-gate/0002-b-designing-ready-r4.md";
  r.at = kAt;
  return r;
}

std::string Corrupt(const std::string& file) {
  return "devflow-agent-gate: the verdict cache at " + file + " is corrupt; treating it as a miss";
}

TEST_CASE("cache key sorts inputs and hashes the instruction") {
  VerdictCacheKey key = TheKey();
  CHECK(key.edge == "designing->ready");
  CHECK(key.root == "/work/ws/.devflow");
  CHECK(key.card == "0002-b");
  CHECK(key.inputs == std::vector<std::string>{"design:4", "prd:3"});
  CHECK(key.prompt_sha256 == kPromptSha);
}

TEST_CASE("cache key compact JSON and file name are byte-identical to JSON.stringify's") {
  VerdictCacheKey key = TheKey();
  CHECK(key.CompactJson() == kCompactKey);
  CHECK(key.FileName() == kFileName);
}

TEST_CASE("cache key keeps non-ASCII literal and '/' unescaped") {
  VerdictCacheKey key =
      VerdictCacheKey::Compute("designing->ready", "/work/w\xc3\xb6rk/ws/.devflow", "0002-\xc3\xa9",
                               {"prd:3", "design:4"}, kInstruction);
  CHECK(key.CompactJson() ==
        "{\"edge\":\"designing->ready\",\"root\":\"/work/w\xc3\xb6rk/ws/.devflow\","
        "\"card\":\"0002-\xc3\xa9\",\"inputs\":[\"design:4\",\"prd:3\"],"
        "\"promptSha256\":\"5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a\"}");
  CHECK(key.FileName() == "1beb22f7ea0d80e4.json");
}

TEST_CASE("cache record renders as JSON.stringify(record, null, 2) plus a newline") {
  // Without an identity: upstream's bytes exactly.
  CHECK(RenderCacheRecord(AllowRecord()) == kAllowRecord);
  CHECK(RenderCacheRecord(VetoRecord()) == kVetoRecord);
  // Ours: the same bytes plus the checkerSha256 and inputsSha256 lines last.
  VerdictCacheRecord allow = AllowRecord();
  allow.checker_sha256 = kChecker;
  allow.inputs_sha256 = kInputs;
  CHECK(RenderCacheRecord(allow) == kOurAllowRecord);
  VerdictCacheRecord veto = VetoRecord();
  veto.checker_sha256 = kChecker;
  veto.inputs_sha256 = kInputs;
  CHECK(RenderCacheRecord(veto) == kOurVetoRecord);
}

TEST_CASE("checker identity hashes the provider definition and the edge's verdictNonce") {
  // The documented compact JSON (reports/verdict_cache.h), with the reply rules' digest
  // (reports/reply_rules.h) last; under a rules revision of 1 these were, with python3,
  // e283c887… (base), 9b2cc7e8… (no provider) and 01b3010d… (grounding).
  const std::string rules = std::string(",\"replyRules\":\"") + kReplyRulesSha256 + "\"}";
  const ProviderConfig base = Checker();
  const std::string checker_identity =
      Sha256Hex(R"({"provider":{"builtin":null,"args":[],"command":["/usr/bin/check","--x"],)"
                R"("env":["API_KEY"],"network":false,"sandbox":"on"},"verdictNonce":true)" +
                rules);
  CHECK(CheckerIdentity(&base, true) == checker_identity);
  CHECK(CheckerIdentity(nullptr, false) ==
        Sha256Hex(R"({"provider":null,"verdictNonce":false)" + rules));
  ProviderConfig grounding;
  grounding.name = "g";
  grounding.builtin = "grounding";
  grounding.args = {"--claim-kind", "design"};
  grounding.network = true;
  grounding.sandbox_off = true;
  CHECK(CheckerIdentity(&grounding, false) ==
        Sha256Hex(R"({"provider":{"builtin":"grounding","args":["--claim-kind","design"],)"
                  R"("command":[],"env":[],"network":true,"sandbox":"off"},"verdictNonce":false)" +
                  rules));
  // Each part of the definition counts; the provider's name does not.
  std::vector<ProviderConfig> variants(7, base);
  variants[0].command = {"/usr/bin/check", "--y"};
  variants[1].env = {"API_KEY", "OTHER"};
  variants[2].network = true;
  variants[3].sandbox_off = true;
  variants[4].builtin = "grounding";
  variants[5].args = {"--a"};
  variants[6].read = {"/opt/models"};  // what the checker may read (issue 7)
  std::set<std::string> seen{checker_identity, CheckerIdentity(&base, false),
                             CheckerIdentity(nullptr, true)};
  for (const ProviderConfig& v : variants) seen.insert(CheckerIdentity(&v, true));
  CHECK(seen.size() == 10);
  ProviderConfig renamed = base;
  renamed.name = "another-name";
  CHECK(CheckerIdentity(&renamed, true) == checker_identity);
}

// CheckerIdentity remembers identities by the whole of its inputs (issue 8): asked again, in
// any order, each input set gives the identity it gave the first time, and no two differ
// only where the memo does not look.
TEST_CASE("checker identity is remembered by every one of its inputs") {
  const ProviderConfig base = Checker();
  const std::vector<std::pair<std::string, std::string>> f1 = {{"/usr/bin/check", "sha256:aa"}};
  const std::vector<std::pair<std::string, std::string>> f2 = {{"/usr/bin/check", "sha256:bb"}};
  const std::vector<std::pair<std::string, std::string>> f3 = {{"/usr/bin/other", "sha256:aa"}};
  std::vector<std::string> first;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::string> got = {
        CheckerIdentity(&base, true, f1, ""),   CheckerIdentity(&base, true, f2, ""),
        CheckerIdentity(&base, true, f3, ""),   CheckerIdentity(&base, true, {}, ""),
        CheckerIdentity(&base, true, f1, "e1"), CheckerIdentity(&base, true, f1, "e2"),
        CheckerIdentity(&base, false, f1, ""),  CheckerIdentity(nullptr, true, f1, ""),
    };
    CHECK(std::set<std::string>(got.begin(), got.end()).size() == got.size());
    if (round == 0) {
      first = got;
    } else {
      CHECK(got == first);
    }
  }
}

// The fresh trial: the identity pinned the program's path, not its bytes. It now covers the
// content of every file the command names: small ones by their bytes, big ones by inode, size
// and change times (never read).
TEST_CASE("checker identity pins the content of each file the command names") {
  TempDir ws;
  const std::string interpreter = ws / "interp";  // bigger than kFileBytesHashed: not read
  Spit(interpreter, std::string(static_cast<size_t>(kFileBytesHashed) + 1, 'x'));
  Spit(ws / "check.py", "print('allow')\n");
  ProviderConfig p;
  p.name = "checker";
  p.command = {interpreter, "check.py", "--strict", "missing.txt", ws.path()};
  const std::vector<CommandFile> files = CommandFiles(&p, ws.path());
  REQUIRE(files.size() == 2);  // not the flag, the missing file or the directory
  CHECK(files[0].index == 0);
  CHECK(files[0].path == interpreter);
  CHECK(files[1].index == 1);
  CHECK(files[1].path == ws / "check.py");

  // sha256 of "print('allow')\n", computed independently with python3's hashlib.
  CHECK(FileIdentity(ws / "check.py").value() ==
        "sha256:61621e6357d4942691a2123cda96d421897060542da1a72b14b8492fc25afb92");
  struct stat st {};
  REQUIRE(::stat(interpreter.c_str(), &st) == 0);
  CHECK(FileIdentity(interpreter).value() ==
        "stat:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
            std::to_string(st.st_size) + ":" +
            std::to_string(int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec) + ":" +
            std::to_string(int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec));

  Result<std::string> before = CurrentCheckerIdentity(&p, false, ws.path());
  REQUIRE(before.ok());
  CHECK(*before == CheckerIdentity(&p, false,
                                   {{interpreter, FileIdentity(interpreter).value()},
                                    {ws / "check.py", FileIdentity(ws / "check.py").value()}}));
  CHECK(*before != CheckerIdentity(&p, false));  // the definition alone
  // The script rewritten in place, same size: another checker (a file changed within the
  // last second is not remembered, so this process hashes it again).
  Spit(ws / "check.py", "print('veto!')\n");
  CHECK(FileIdentity(ws / "check.py").value() ==
        "sha256:18ada1e62e7ba1ea309d4c5a740e13184b150c3eb428a1748a3d61bb908b3922");
  Result<std::string> after = CurrentCheckerIdentity(&p, false, ws.path());
  REQUIRE(after.ok());
  CHECK(*after != *before);

  // A builtin and an undefined provider name no files: their identity is the definition's.
  ProviderConfig grounding;
  grounding.builtin = "grounding";
  CHECK(CurrentCheckerIdentity(&grounding, true, ws.path()).value() ==
        CheckerIdentity(&grounding, true));
  CHECK(CurrentCheckerIdentity(nullptr, true, ws.path()).value() == CheckerIdentity(nullptr, true));
}

TEST_CASE("a checker file that cannot be identified gives no identity, and no identity no hit") {
  TempDir ws;
  ProviderConfig p;
  p.name = "checker";
  p.command = {ws / "gone"};
  Result<std::string> gone = CurrentCheckerIdentity(&p, false, ws.path());
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.status().message() == "open " + ws / "gone" + ": No such file or directory (ENOENT)");
  p.command = {"dg-not-on-path"};  // not found when the config loaded: left bare
  CHECK_FALSE(CurrentCheckerIdentity(&p, false, ws.path()).ok());
  REQUIRE(::mkfifo((ws / "fifo").c_str(), 0700) == 0);
  p.command = {ws / "fifo"};
  Result<std::string> fifo = CurrentCheckerIdentity(&p, false, ws.path());
  REQUIRE_FALSE(fifo.ok());
  CHECK(fifo.status().message() == "open " + ws / "fifo" + ": not a regular file (EINVAL)");

  // A lookup without an identity never hits, not even a record whose identity is empty.
  TempDir dir;
  VerdictCache cache(dir.path(), RealFileSystem());
  CollectedWarnings warnings;
  std::string empty = kOurAllowRecord;
  empty.replace(empty.find(kChecker), 64, "");
  Spit(dir / kFileName, empty);
  CHECK_FALSE(cache.Lookup(TheKey(), "", kInputs, warnings).has_value());
}

// Issue 8: a cache-hit decision identifies the checker's files on every attempt; a file whose
// identity needs none of its bytes (its hash remembered by its stamp, or a file over
// kFileBytesHashed pinned by the stamp) is identified by a stat of its path, with no
// descriptor. Proved with no descriptor to be had: RLIMIT_NOFILE at the lowest free one.
TEST_CASE("a remembered or big checker file is identified without opening it") {
  // This source file was written before this test was compiled, so more than a second ago:
  // its hash is remembered after one read (the racily-clean rule).
  const std::string small = test::SourceDir() + "/tests/reports/verdict_cache_test.cc";
  TempDir ws;
  const std::string big = ws / "interp";
  Spit(big, std::string(static_cast<size_t>(kFileBytesHashed) + 1, 'x'));
  const std::string small_id = FileIdentity(small).value();
  const std::string big_id = FileIdentity(big).value();
  REQUIRE(small_id.rfind("sha256:", 0) == 0);
  REQUIRE(big_id.rfind("stat:", 0) == 0);

  const int lowest = ::dup(0);
  REQUIRE(lowest >= 0);
  ::close(lowest);
  struct rlimit was {};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &was) == 0);
  struct rlimit none = was;
  none.rlim_cur = static_cast<rlim_t>(lowest);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &none) == 0);
  Result<std::string> small_again = FileIdentity(small);
  Result<std::string> big_again = FileIdentity(big);
  Result<std::string> missing = FileIdentity(ws / "gone");
  const int probe = ::dup(0);  // the limit held: no descriptor could be had
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &was) == 0);
  CHECK(probe < 0);
  REQUIRE(small_again.ok());
  CHECK(*small_again == small_id);
  REQUIRE(big_again.ok());
  CHECK(*big_again == big_id);
  // A file it cannot stat still goes the open path (which fails here for want of a descriptor).
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "open " + ws / "gone" + ": Too many open files (EMFILE)");
}

TEST_CASE("cache record renders an empty input list as []") {
  VerdictCacheRecord r = AllowRecord();
  r.key.inputs.clear();
  std::string text = RenderCacheRecord(r);
  CHECK(text.find("    \"inputs\": [],\n") != std::string::npos);
}

TEST_CASE("cache stores the pretty record under the key's file name and reads it back") {
  TempDir tmp;
  VerdictCache cache(tmp / "cache/agent-gate", RealFileSystem());
  CollectedWarnings warnings;
  CHECK(cache.PathFor(TheKey()) == tmp / "cache/agent-gate/74acfe879fe16512.json");

  VerdictCacheRecord record = AllowRecord();
  record.checker_sha256 = kChecker;
  record.inputs_sha256 = kInputs;
  REQUIRE(cache.Store(record, warnings));
  CHECK(Slurp(tmp / "cache/agent-gate/74acfe879fe16512.json") == std::string(kOurAllowRecord));

  auto hit = cache.Lookup(TheKey(), kChecker, kInputs, warnings);
  REQUIRE(hit.has_value());
  CHECK(hit->allow);
  CHECK(hit->summary == "design holds");
  CHECK_FALSE(hit->report_path.has_value());
  CHECK(hit->at == kAt);
  CHECK(hit->checker_sha256 == kChecker);
  CHECK(hit->inputs_sha256 == kInputs);
  CHECK(hit->key.CompactJson() == kCompactKey);
  CHECK(RenderCacheRecord(*hit) == kOurAllowRecord);
  CHECK(warnings.lines.empty());
}

TEST_CASE("cache lookup hits a veto whose report is there") {
  TempDir tmp;
  VerdictCache cache(tmp / "cache", RealFileSystem());
  VerdictCacheRecord record = VetoRecord();
  record.checker_sha256 = kChecker;
  record.inputs_sha256 = kInputs;
  record.report_path = tmp / "reports/0002-b-designing-ready-r4.md";
  Spit(*record.report_path, "# Agent check veto\n");
  CollectedWarnings warnings;
  REQUIRE(cache.Store(record, warnings));
  auto hit = cache.Lookup(TheKey(), kChecker, kInputs, warnings);
  REQUIRE(hit.has_value());
  CHECK_FALSE(hit->allow);
  CHECK(hit->summary == "the design is hollow");
  CHECK(hit->report_path == record.report_path);
  CHECK(warnings.lines.empty());
}

TEST_CASE("a cached veto whose report is gone is a warned miss, never a pointer to nothing") {
  TempDir tmp;
  VerdictCache cache(tmp / "cache", RealFileSystem());
  VerdictCacheRecord record = VetoRecord();
  record.checker_sha256 = kChecker;
  record.inputs_sha256 = kInputs;
  record.report_path = tmp / "reports/0002-b-designing-ready-r4.md";
  CollectedWarnings warnings;
  REQUIRE(cache.Store(record, warnings));
  const std::string file = cache.PathFor(TheKey());
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  CHECK(warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: the cached veto at " + file +
                                 " names the report " + *record.report_path +
                                 ", which is gone; treating it as a miss"});
  // A directory in its place is no report either.
  std::filesystem::create_directories(*record.report_path);
  warnings.lines.clear();
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  CHECK(warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: the cached veto at " + file +
                                 " names the report " + *record.report_path +
                                 ", which is not a regular file; treating it as a miss"});
}

TEST_CASE("a cached verdict of another checker, or of none, is a silent miss") {
  TempDir tmp;
  VerdictCache cache(tmp.path(), RealFileSystem());
  CollectedWarnings warnings;
  // Upstream's record (no checkerSha256): well-formed, right key, never a hit.
  Spit(tmp / kFileName, kAllowRecord);
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  // Ours, asked for by another checker identity.
  Spit(tmp / kFileName, kOurAllowRecord);
  const ProviderConfig base = Checker();
  CHECK_FALSE(cache.Lookup(TheKey(), CheckerIdentity(&base, false), kInputs, warnings).has_value());
  CHECK(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  // A non-string identity.
  std::string odd = kOurAllowRecord;
  odd.replace(odd.find(std::string("\"") + kChecker + "\""), 66, "7");
  Spit(tmp / kFileName, odd);
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  CHECK(warnings.lines.empty());
}

TEST_CASE("inputs identity hashes each input's label and bytes, framed, in label order") {
  CHECK(InputsIdentity({{"prd:3", kPrdText}, {"design:4", kDesignText}}) == kInputs);
  CHECK(InputsIdentity({{"design:4", kDesignText}, {"prd:3", kPrdText}}) == kInputs);
  // No inputs: the hash of nothing.
  CHECK(InputsIdentity({}) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // The framing keeps boundaries: "ab"+"c" and "a"+"bc" are other contents (python3 as above).
  CHECK(InputsIdentity({{"prd:3", "ab"}, {"design:4", "c"}}) ==
        "fbb6c1b0220bc606f652fbced38f63f0ad904eb3eef715ee1e29cec95ef177a8");
  CHECK(InputsIdentity({{"prd:3", "a"}, {"design:4", "bc"}}) ==
        "023aa787e424af5f036e731023d96a5a9b48f82aa191adf6d4338911d2f6e432");
  // One byte more, or the same bytes under another label, is another identity.
  const std::string edited = std::string(kDesignText) + " ";
  CHECK(InputsIdentity({{"prd:3", kPrdText}, {"design:4", edited}}) != kInputs);
  CHECK(InputsIdentity({{"prd:3", kPrdText}, {"design:5", kDesignText}}) != kInputs);
}

TEST_CASE("SHA-256 over pieces is the SHA-256 of their concatenation") {
  // The digest InputsIdentity takes over its framing and the inputs' own bytes, uncopied
  // (issue 11 item 2): empty pieces, one piece, pieces crossing the 64-byte block boundary.
  const std::string big(1 << 20, 'x');
  const std::vector<std::vector<std::string_view>> cases = {
      {}, {""}, {"", "", ""}, {"abc"}, {"a", "", "bc"}, {big, "tail", big, ""}};
  for (const std::vector<std::string_view>& pieces : cases) {
    std::string joined;
    for (std::string_view piece : pieces) joined += piece;
    CHECK(Sha256Hex(pieces) == Sha256Hex(joined));
  }
  CHECK(Sha256Hex(std::vector<std::string_view>{"a", "bc"}) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // SHA-256("abc")
  // A large input's identity is the one over the framed bytes written out whole.
  CHECK(InputsIdentity({{"prd:3", big}, {"design:4", ""}}) ==
        Sha256Hex("design:4\n0\nprd:3\n" + std::to_string(big.size()) + "\n" + big));
}

TEST_CASE("a cached verdict that judged other contents of its inputs is a warned miss") {
  TempDir tmp;
  VerdictCache cache(tmp.path(), RealFileSystem());
  Spit(tmp / kFileName, kOurAllowRecord);
  CollectedWarnings warnings;
  const std::string edited =
      InputsIdentity({{"prd:3", kPrdText}, {"design:4", "# Design\n\ncovers REQ-9\n"}});
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, edited, warnings).has_value());
  CHECK(warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: the verdict cache at " + tmp / kFileName +
                                 " judged other contents of [design:4, prd:3] or of the "
                                 "card's title and body (one was changed in place, without a "
                                 "new registration), or them in another order (the edge's "
                                 "inputs were reordered); treating it as a miss"});
  // The contents it judged: a hit.
  warnings.lines.clear();
  CHECK(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  CHECK(warnings.lines.empty());
}

// Lookup reuses the decoding of record bytes it has decoded before (issue 8), never of a
// file it has read before: a record rewritten in place, even to the same size within the same
// second (what a stat-keyed memo would take for unchanged), is judged by its new bytes.
TEST_CASE("a record rewritten in place to the same size is judged by its new bytes") {
  TempDir tmp;
  VerdictCache cache(tmp.path(), RealFileSystem());
  CollectedWarnings warnings;
  Spit(tmp / kFileName, kOurAllowRecord);
  auto first = cache.Lookup(TheKey(), kChecker, kInputs, warnings);
  REQUIRE(first.has_value());
  CHECK(first->allow);
  std::string other = kOurAllowRecord;  // another checker's verdict, the same size
  const size_t at = other.find(kChecker);
  other[at] = other[at] == '0' ? '1' : '0';
  REQUIRE(other.size() == std::string(kOurAllowRecord).size());
  Spit(tmp / kFileName, other);
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  std::string summary = kOurAllowRecord;  // another summary, the same size
  summary.replace(summary.find("\"summary\": \"") + 12, 1, "X");
  REQUIRE(summary.size() == std::string(kOurAllowRecord).size());
  Spit(tmp / kFileName, summary);
  auto changed = cache.Lookup(TheKey(), kChecker, kInputs, warnings);
  REQUIRE(changed.has_value());
  CHECK(changed->summary != first->summary);
  CHECK(changed->summary.substr(1) == first->summary.substr(1));
  std::string corrupt = kOurAllowRecord;
  corrupt[0] = '[';
  Spit(tmp / kFileName, corrupt);
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  CHECK(warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: the verdict cache at " + tmp / kFileName +
                                 " is corrupt; treating it as a miss"});
  Spit(tmp / kFileName, kOurAllowRecord);  // back: the first decoding, reused
  auto again = cache.Lookup(TheKey(), kChecker, kInputs, warnings);
  REQUIRE(again.has_value());
  CHECK(again->summary == first->summary);
}

TEST_CASE("a cached verdict without a string inputs identity is a silent miss") {
  TempDir tmp;
  VerdictCache cache(tmp.path(), RealFileSystem());
  CollectedWarnings warnings;
  const std::string line = std::string(",\n  \"inputsSha256\": \"") + kInputs + "\"";
  std::string without = kOurAllowRecord;
  without.erase(without.find(line), line.size());  // ours before the field
  Spit(tmp / kFileName, without);
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  std::string odd = kOurAllowRecord;
  odd.replace(odd.find(std::string("\"") + kInputs + "\""), 66, "[]");
  Spit(tmp / kFileName, odd);
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  CHECK(warnings.lines.empty());
}

TEST_CASE("cache lookup reconstructs an allow record written by another writer") {
  TempDir tmp;
  VerdictCache cache(tmp.path(), RealFileSystem());
  Spit(tmp / kFileName, kOurAllowRecord);
  CollectedWarnings warnings;
  auto hit = cache.Lookup(TheKey(), kChecker, kInputs, warnings);
  REQUIRE(hit.has_value());
  CHECK(hit->allow);
  CHECK(hit->summary == "design holds");
  CHECK_FALSE(hit->report_path.has_value());
  CHECK(hit->key.inputs == std::vector<std::string>{"design:4", "prd:3"});
  CHECK(RenderCacheRecord(*hit) == kOurAllowRecord);
  CHECK(warnings.lines.empty());
}

TEST_CASE("cache lookup of an absent file is a silent miss") {
  TempDir tmp;
  VerdictCache cache(tmp / "never-created", RealFileSystem());
  CollectedWarnings warnings;
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  CHECK(warnings.lines.empty());
}

TEST_CASE("cache lookup that cannot read the file warns and misses") {
  TempDir tmp;
  Spit(tmp / kFileName, kAllowRecord);
  FaultyFileSystem fs;
  fs.Fail("read", kFileName, EACCES);
  VerdictCache cache(tmp.path(), fs);
  CollectedWarnings warnings;
  CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  std::string file = tmp / kFileName;
  REQUIRE(warnings.lines.size() == 1);
  CHECK(warnings.lines[0] == "devflow-agent-gate: could not read the verdict cache at " + file +
                                 ": read " + file + ": Permission denied (EACCES)");
}

TEST_CASE("cache lookup treats each corrupt record shape as a warned miss") {
  struct Case {
    const char* label;
    std::string text;
  };
  std::string key = std::string("\"key\":") + kCompactKey;
  const Case cases[] = {
      {"unparsable JSON", "{not json"},
      {"a JSON scalar", "42"},
      {"JSON null", "null"},
      {"an unknown verdict", "{" + key + ",\"verdict\":\"maybe\",\"summary\":\"s\",\"at\":\"x\"}"},
      {"a missing verdict", "{" + key + ",\"summary\":\"s\"}"},
      {"a non-string summary", "{" + key + ",\"verdict\":\"allow\",\"summary\":7,\"at\":\"x\"}"},
      {"a missing summary", "{" + key + ",\"verdict\":\"allow\"}"},
      {"a veto without its report path",
       "{" + key + ",\"verdict\":\"veto\",\"summary\":\"s\",\"at\":\"x\"}"},
      {"a veto with a non-string report path",
       "{" + key + ",\"verdict\":\"veto\",\"summary\":\"s\",\"reportPath\":null}"},
      {"an array", "[1,2]"},
      {"an empty file", ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.label);
    TempDir tmp;
    Spit(tmp / kFileName, c.text);
    VerdictCache cache(tmp.path(), RealFileSystem());
    CollectedWarnings warnings;
    CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
    CHECK(warnings.lines == std::vector<std::string>{Corrupt(tmp / kFileName)});
  }
}

TEST_CASE("cache lookup accepts an empty summary and an absent at") {
  TempDir tmp;
  Spit(tmp / kFileName, std::string("{\"key\":") + kCompactKey +
                            ",\"verdict\":\"allow\",\"summary\":\"\",\"checkerSha256\":\"" +
                            kChecker + "\",\"inputsSha256\":\"" + kInputs + "\"}");
  VerdictCache cache(tmp.path(), RealFileSystem());
  CollectedWarnings warnings;
  auto hit = cache.Lookup(TheKey(), kChecker, kInputs, warnings);
  REQUIRE(hit.has_value());
  CHECK(hit->allow);
  CHECK(hit->summary.empty());
  CHECK(hit->at.empty());
  CHECK(warnings.lines.empty());
}

TEST_CASE("cache lookup treats a well-formed record with another key as a silent miss") {
  struct Case {
    const char* label;
    std::string stored_key;
  };
  const Case cases[] = {
      {"another card",
       R"({"edge":"designing->ready","root":"/work/ws/.devflow","card":"0003-c","inputs":["design:4","prd:3"],"promptSha256":"5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a"})"},
      {"reordered fields",
       R"({"root":"/work/ws/.devflow","edge":"designing->ready","card":"0002-b","inputs":["design:4","prd:3"],"promptSha256":"5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a"})"},
      {"an extra field",
       R"({"edge":"designing->ready","root":"/work/ws/.devflow","card":"0002-b","inputs":["design:4","prd:3"],"promptSha256":"5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a","x":1})"},
      {"unsorted inputs",
       R"({"edge":"designing->ready","root":"/work/ws/.devflow","card":"0002-b","inputs":["prd:3","design:4"],"promptSha256":"5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a"})"},
      {"no key at all", ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.label);
    TempDir tmp;
    std::string key = c.stored_key.empty() ? "" : "\"key\":" + c.stored_key + ",";
    Spit(tmp / kFileName, "{" + key +
                              R"("verdict":"allow","summary":"s","at":"x","checkerSha256":")" +
                              kChecker + R"(","inputsSha256":")" + kInputs + "\"}");
    VerdictCache cache(tmp.path(), RealFileSystem());
    CollectedWarnings warnings;
    CHECK_FALSE(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
    CHECK(warnings.lines.empty());
  }
}

TEST_CASE("cache lookup compares the stored key as data, not as whitespace") {
  TempDir tmp;
  Spit(tmp / kFileName,
       std::string("{ \"key\" :\n ") + kCompactKey +
           " ,\"verdict\":\"allow\",\"summary\":\"s\",\"at\":\"x\",\"checkerSha256\" : \"" +
           kChecker + "\", \"inputsSha256\":\"" + kInputs + "\"}\n\n");
  VerdictCache cache(tmp.path(), RealFileSystem());
  CollectedWarnings warnings;
  CHECK(cache.Lookup(TheKey(), kChecker, kInputs, warnings).has_value());
  CHECK(warnings.lines.empty());
}

TEST_CASE("cache store that cannot create the directory warns, returns false, writes nothing") {
  TempDir tmp;
  FaultyFileSystem fs;
  fs.Fail("mkdirs", "agent-gate", EACCES);
  VerdictCache cache(tmp / "cache/agent-gate", fs);
  CollectedWarnings warnings;
  CHECK_FALSE(cache.Store(AllowRecord(), warnings));
  std::string file = tmp / "cache/agent-gate/74acfe879fe16512.json";
  CHECK(warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: could not cache the allow verdict at " +
                                 file + ": mkdirs " + tmp / "cache/agent-gate" +
                                 ": Permission denied (EACCES)"});
  CHECK_FALSE(Slurp(file).has_value());
}

TEST_CASE("cache store that cannot write the file names the veto verdict in its warning") {
  TempDir tmp;
  FaultyFileSystem fs;
  fs.Fail("write-atomic", kFileName, ENOSPC);
  VerdictCache cache(tmp.path(), fs);
  CollectedWarnings warnings;
  CHECK_FALSE(cache.Store(VetoRecord(), warnings));
  std::string file = tmp / kFileName;
  CHECK(warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: could not cache the veto verdict at " + file +
                                 ": write-atomic " + file + ": No space left on device (ENOSPC)"});
  CHECK(test::Snapshot(tmp.path()).empty());
}

TEST_CASE("cache store replaces an older record for the same key") {
  TempDir tmp;
  VerdictCache cache(tmp.path(), RealFileSystem());
  CollectedWarnings warnings;
  REQUIRE(cache.Store(AllowRecord(), warnings));
  REQUIRE(cache.Store(VetoRecord(), warnings));
  CHECK(test::Snapshot(tmp.path()) == std::map<std::string, std::string>{{kFileName, kVetoRecord}});
  CHECK(warnings.lines.empty());
}

}  // namespace
}  // namespace devflow

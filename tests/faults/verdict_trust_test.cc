// Issue 7 items 1, 3, 4 and 11 through the real binary: a reply whose last verdict block is
// broken fails closed; a cached verdict belongs to the checker that gave it and to the contents
// it judged; a cached veto whose report is gone runs the checker again; a 7 MiB summary stays
// out of every record but the report.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "faults/faults.h"

namespace devflow::faults {
namespace {

namespace fs = std::filesystem;

const char kCacheDir[] = ".devflow/cache/agent-gate";

// A checker script in the workspace (which a confined checker may read), run by /bin/sh:
// reads its prompt, then runs `body`.
std::string Script(const Workspace& ws, const std::string& name, const std::string& body) {
  const std::string path = ws / name;
  test::Spit(path, "cat >/dev/null\n" + body);
  return path;
}

void Configure(Workspace& ws, const std::string& script, const std::string& extra = "") {
  GateYaml yaml;
  yaml.command = {"/bin/sh", script};
  yaml.cache_dir = kCacheDir;
  ws.WriteConfig(yaml.Text() + extra);
}

// The same config with `verdictNonce: true` on the edge.
std::string WithNonce(std::string yaml) {
  const std::string at = "          inputs: [prd, design]\n";
  yaml.replace(yaml.find(at), at.size(), at + "          verdictNonce: true\n");
  return yaml;
}

// Puts the card back to how it was when constructed (journal and card.md), so an identical
// retry of the same move can be made.
class LambdaReset {
 public:
  explicit LambdaReset(const Workspace& ws)
      : journal_(ws.journal_path()),
        card_(ws.card_dir() + "/card.md"),
        journal_text_(test::Slurp(journal_).value()),
        card_text_(test::Slurp(card_).value()) {}
  void operator()() const {
    test::Spit(journal_, journal_text_);
    test::Spit(card_, card_text_);
  }

 private:
  std::string journal_, card_, journal_text_, card_text_;
};

std::string LedgerText(const Workspace& ws) {
  return test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or("");
}

TEST_CASE("trust: a draft allow followed by a broken final verdict block fails closed") {
  Workspace ws("");
  const std::string checker =
      Script(ws, "draft.sh",
             "printf 'Draft:\\n```json\\n{\"verdict\": \"allow\", \"summary\": \"draft\"}\\n```\\n"
             "Final:\\n```json\\n{\"verdict\": \"reject\", \"summary\": \"no\"}\\n```\\n'\n");
  Configure(ws, checker);
  ws.CardInDesigning();
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out ==
        CouldNotRunWithReport(
            ws, "the checker replied without a parsable verdict block",
            "the last verdict block says \"verdict\": \"reject\"; expected \"allow\" or \"veto\"") +
            ParkedLine());
  RequireParked(ws, "the checker replied without a parsable verdict block");
}

TEST_CASE(
    "trust: a draft allow fence followed by a final veto in prose fails closed, nonce or not") {
  // The trial of 2026-12-03: the checker copies the prompt's nonce (when there is one) into a
  // draft allow, then states its final veto in prose. The draft must not decide.
  for (bool nonce : {false, true}) {
    CAPTURE(nonce);
    Workspace ws("");
    const std::string checker = ws / "prose_veto.sh";
    test::Spit(checker, R"SH(n=$(sed -n 's/.*Include "nonce": "\([0-9a-f]*\)".*/\1/p')
if [ -n "$n" ]; then n=", \"nonce\": \"$n\""; fi
printf '```json\n{"verdict": "allow", "summary": "draft"%s}\n```\n\n**Verdict:** veto\n' "$n"
)SH");
    GateYaml yaml;
    yaml.command = {"/bin/sh", checker};
    yaml.cache_dir = kCacheDir;
    ws.WriteConfig(nonce ? WithNonce(yaml.Text()) : yaml.Text());
    ws.CardInDesigning();
    auto r = ws.Gate({"move", kCard, "ready"});
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.out ==
          CouldNotRunWithReport(
              ws, "the checker replied without a parsable verdict block",
              "the reply claims a verdict after its last verdict block (\"Verdict:** "
              "veto\"); only the last verdict block may decide, so end the reply with it") +
              ParkedLine());
    RequireParked(ws, "the checker replied without a parsable verdict block");
  }
}

TEST_CASE("trust: a cached allow is not reused after the operator swaps the provider") {
  Workspace ws("");
  const std::string allow =
      Script(ws, "allow.sh",
             "printf '```json\\n{\"verdict\": \"allow\", \"summary\": \"ok\"}\\n```\\n'\n");
  const std::string veto = Script(
      ws, "veto.sh",
      "printf '```json\\n{\"verdict\": \"veto\", \"summary\": \"the strict one says no\"}\\n```\\n'"
      "\n");
  Configure(ws, allow);
  ws.CardInDesigning();
  LambdaReset reset(ws);
  auto first = ws.Gate({"move", kCard, "ready"});
  REQUIRE(first.exit_code == 0);
  const std::string file = CacheFile(ws, ws / kCacheDir);
  auto record = nlohmann::json::parse(test::Slurp(file).value());
  CHECK(record["checkerSha256"] == CheckerIdOf(ws));

  // The same checker again: a hit (the journal is put back to before the move).
  reset();
  auto again = ws.Gate({"move", kCard, "ready"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == CommittedOut("[cached] ok"));

  // Another provider definition: a miss, the new checker decides.
  reset();
  Configure(ws, veto);
  auto swapped = ws.Gate({"move", kCard, "ready"});
  INFO("stderr: " << swapped.err);
  CHECK(swapped.exit_code == 1);
  CHECK(swapped.out == Vetoed("the strict one says no", ReportPath(ws)));
  CHECK(swapped.err == "");  // another checker's record is a silent miss
}

TEST_CASE("trust: a cached allow is not reused once the checker script is rewritten in place") {
  // The fresh trial: the identity pinned the program's path, not its bytes, so a checker
  // rewritten in place (same path) reused the allows the old one gave. Here the script keeps
  // its path, inode, size and mtime; only its bytes change.
  Workspace ws("");
  const std::string allow =
      "printf '```json\\n{\"verdict\": \"allow\", \"summary\": \"ok\"}\\n```\\n'\n";
  std::string veto = "printf '```json\\n{\"verdict\": \"veto\", \"summary\": \"nay\"}\\n```\\n'\n";
  const std::string checker = Script(ws, "judge.sh", allow);
  veto = "cat >/dev/null\n" + veto;
  REQUIRE(veto.size() == test::Slurp(checker)->size());
  Configure(ws, checker);
  ws.CardInDesigning();
  LambdaReset reset(ws);
  auto first = ws.Gate({"move", kCard, "ready"});
  INFO("first: " << first.out << first.err);
  REQUIRE(first.exit_code == 0);
  const std::string file = CacheFile(ws, ws / kCacheDir);
  auto record = nlohmann::json::parse(test::Slurp(file).value());
  CHECK(record["checkerSha256"] == CheckerIdOf(ws));

  // The same bytes: a hit.
  reset();
  auto again = ws.Gate({"move", kCard, "ready"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == CommittedOut("[cached] ok"));

  // Rewritten in place to veto, its mtime put back: a silent miss, the new script decides.
  reset();
  struct stat before {};
  REQUIRE(::stat(checker.c_str(), &before) == 0);
  {
    std::ofstream out(checker, std::ios::binary | std::ios::trunc);  // same inode
    out << veto;
  }
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, checker.c_str(), times, 0) == 0);
  struct stat after {};
  REQUIRE(::stat(checker.c_str(), &after) == 0);
  REQUIRE(after.st_ino == before.st_ino);
  REQUIRE(after.st_size == before.st_size);
  REQUIRE(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
  auto rewritten = ws.Gate({"move", kCard, "ready"});
  INFO("rewritten: " << rewritten.out << rewritten.err);
  CHECK(rewritten.exit_code == 1);
  CHECK(rewritten.out == Vetoed("nay", ReportPath(ws)));
  CHECK(rewritten.err == "");  // another checker's record is a silent miss
  RequireUnmoved(ws);
  auto replaced = nlohmann::json::parse(test::Slurp(file).value());
  CHECK(replaced["verdict"] == "veto");
  CHECK(replaced["checkerSha256"] == CheckerIdOf(ws));
  CHECK(replaced["checkerSha256"] != record["checkerSha256"]);
}

// A file the command names that cannot be identified (here the script is replaced by a FIFO,
// which the gate must not even open for reading as a program: the program itself) means no
// identity: the gate neither hits nor writes the cache, it says so, and the check runs.
TEST_CASE("trust: a checker program that cannot be read is never a cache hit") {
  Workspace ws("");
  const std::string program = ws / "judge";
  test::Spit(program,
             "#!/bin/sh\ncat >/dev/null\n"
             "printf '```json\\n{\"verdict\": \"allow\", \"summary\": \"ok\"}\\n```\\n'\n");
  fs::permissions(program, fs::perms::owner_all);
  GateYaml yaml;
  yaml.command = {program};
  yaml.cache_dir = kCacheDir;
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
  LambdaReset reset(ws);
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 0);
  const std::string file = CacheFile(ws, ws / kCacheDir);
  const std::string cached = test::Slurp(file).value();

  // The program turned into a FIFO: no identity. Without the identity rule the cached allow
  // would admit the move; now the gate warns, skips the cache and runs the check, which fails
  // closed (a FIFO does not run).
  reset();
  REQUIRE(fs::remove(program));
  REQUIRE(::mkfifo(program.c_str(), 0700) == 0);
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("[cached]") == std::string::npos);
  CHECK(r.err.find("devflow-agent-gate: the checker of provider \"checker\" cannot be identified: "
                   "open " +
                   program +
                   ": not a regular file (EINVAL); not using the verdict cache for this "
                   "attempt\n") != std::string::npos);
  CHECK(test::Slurp(file) == cached);  // nothing written over the record either
}

// The checker of the edited-in-place tests: vetoes a design that cites REQ-9, else allows. Run as
// its own program (a `#!/bin/sh` script, hashed by its bytes), not as [/bin/sh, judge.sh]: the
// identity of a program over 64 KiB is its stat, ctime included, and the ctime of the system's
// /usr/bin/dash moved under the suite (trial15: every file of /usr/bin got one ctime at once),
// which turned the cached hit below into a silent miss 1 run in 150.
std::string EditJudge(const Workspace& ws, const std::string& tail = "") {
  const std::string checker = ws / "judge.sh";
  test::Spit(checker,
             "#!/bin/sh\n"
             "if [ \"$(grep -c 'cites REQ-9')\" -gt 0 ]; then\n"
             "  printf '```json\\n{\"verdict\": \"veto\", \"summary\": \"design cites REQ-9\"}"
             "\\n```\\n'\n"
             "else\n"
             "  printf '```json\\n{\"verdict\": \"allow\", \"summary\": \"ok\"}\\n```\\n'\n"
             "fi\n" +
                 tail);
  fs::permissions(checker, fs::perms::owner_all);
  return checker;
}

void ConfigureProgram(Workspace& ws, const std::string& program) {
  GateYaml yaml;
  yaml.command = {program};
  yaml.cache_dir = kCacheDir;
  ws.WriteConfig(yaml.Text());
}

TEST_CASE("trust: a cached allow is not reused for an input edited in place under its kind:rev") {
  // The producer can write the registered artifact file: editing design:4 in place keeps the
  // cache key (kind:rev), but the verdict judged other bytes, so the checker decides again.
  Workspace ws("");
  ConfigureProgram(ws, EditJudge(ws));
  ws.CardInDesigning();
  LambdaReset reset(ws);
  auto first = ws.Gate({"move", kCard, "ready"});
  INFO("first: " << first.out << first.err);
  REQUIRE(first.exit_code == 0);
  const std::string file = CacheFile(ws, ws / kCacheDir);
  auto record = nlohmann::json::parse(test::Slurp(file).value());
  CHECK(record["inputsSha256"] == InputsIdOf(ws));

  // Unchanged inputs: a hit.
  reset();
  auto again = ws.Gate({"move", kCard, "ready"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == CommittedOut("[cached] ok"));

  // design:4 rewritten in place, no new registration: a warned miss, and the checker vetoes.
  reset();
  const std::string design = ws.card_dir() + "/artifacts/4-design.md";
  REQUIRE(fs::is_regular_file(design));
  test::Spit(design, "# Design\n\nThe export cites REQ-9 for its format.\n");
  auto edited = ws.Gate({"move", kCard, "ready"});
  INFO("edited: " << edited.out << edited.err);
  CHECK(edited.exit_code == 1);
  CHECK(edited.out == Vetoed("design cites REQ-9", ReportPath(ws)));
  CHECK(edited.err == "devflow-agent-gate: the verdict cache at " + file +
                          " judged other contents of [design:4, prd:3] or of the card's title "
                          "and body (one was changed in place, without a new registration), "
                          "or them in another order (the edge's inputs were reordered); "
                          "treating it as a miss\n");
  RequireUnmoved(ws);
  // The veto replaced the record, judged on the new contents.
  auto replaced = nlohmann::json::parse(test::Slurp(file).value());
  CHECK(replaced["verdict"] == "veto");
  CHECK(replaced["inputsSha256"] == InputsIdOf(ws));
  CHECK(replaced["inputsSha256"] != record["inputsSha256"]);
}

TEST_CASE("trust: a cached allow is not reused once the card's body or title changes") {
  // trial17 B1: the prompt carries card.md's title and body, which neither the key (kind:rev
  // labels) nor the inputs hash covered, so a rework that appended a requirement to the body
  // was admitted `[cached]`. The checker here vetoes a prompt that cites REQ-9.
  Workspace ws("");
  ConfigureProgram(ws, EditJudge(ws));
  ws.CardInDesigning();
  LambdaReset reset(ws);
  const std::string card_md = ws.card_dir() + "/card.md";
  const std::string original = test::Slurp(card_md).value();
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 0);
  const std::string file = CacheFile(ws, ws / kCacheDir);
  reset();
  auto hit = ws.Gate({"move", kCard, "ready"});
  REQUIRE(hit.out == CommittedOut("[cached] ok"));
  const std::string warning = "devflow-agent-gate: the verdict cache at " + file +
                              " judged other contents of [design:4, prd:3] or of the card's "
                              "title and body (one was changed in place, without a new "
                              "registration), or them in another order (the edge's inputs were "
                              "reordered); treating it as a miss\n";

  // A requirement appended to the body, no artifact touched: a warned miss, and the checker
  // vetoes what it now reads.
  reset();
  test::Spit(card_md, original + "\n- REQ-9: the export cites REQ-9 for its format\n");
  auto body = ws.Gate({"move", kCard, "ready"});
  INFO("body: " << body.out << body.err);
  CHECK(body.exit_code == 1);
  CHECK(body.out == Vetoed("design cites REQ-9", ReportPath(ws)));
  CHECK(body.err == warning);
  RequireUnmoved(ws);

  // The card as it was: the veto judged other text, so the checker runs and allows again.
  reset();
  auto back = ws.Gate({"move", kCard, "ready"});
  INFO("back: " << back.out << back.err);
  CHECK(back.out == CommittedOut("ok"));
  CHECK(back.err == warning);

  // The title alone changed: a warned miss too.
  reset();
  const std::string title = "title: Export the audit log\n";
  REQUIRE(original.find(title) != std::string::npos);
  std::string retitled = original;
  retitled.replace(retitled.find(title), title.size(),
                   "title: Export the audit log, it cites REQ-9\n");
  test::Spit(card_md, retitled);
  auto renamed = ws.Gate({"move", kCard, "ready"});
  INFO("renamed: " << renamed.out << renamed.err);
  CHECK(renamed.exit_code == 1);
  CHECK(renamed.out == Vetoed("design cites REQ-9", ReportPath(ws)));
  CHECK(renamed.err == warning);
}

TEST_CASE("trust: a cached allow is not reused once the edge lists its inputs in another order") {
  // trial19 1a: the key sorts its kind:rev labels (as upstream's does), but the prompt lists
  // the inputs in the edge's order, and an instruction may refer to position ("the first
  // artifact is the specification"): swapping [prd, design] admitted `[cached]`.
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {EditJudge(ws)};
  yaml.cache_dir = kCacheDir;
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
  LambdaReset reset(ws);
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 0);
  const std::string file = CacheFile(ws, ws / kCacheDir);
  reset();
  REQUIRE(ws.Gate({"move", kCard, "ready"}).out == CommittedOut("[cached] ok"));

  std::string swapped = yaml.Text();
  const std::string at = "inputs: [prd, design]";
  REQUIRE(swapped.find(at) != std::string::npos);
  swapped.replace(swapped.find(at), at.size(), "inputs: [design, prd]");
  ws.WriteConfig(swapped);
  reset();
  auto moved = ws.Gate({"move", kCard, "ready"});
  INFO(moved.out << moved.err);
  CHECK(moved.out == CommittedOut("ok"));  // the checker ran again
  CHECK(moved.err == "devflow-agent-gate: the verdict cache at " + file +
                         " judged other contents of [design:4, prd:3] or of the card's title and "
                         "body (one was changed in place, without a new registration), or them "
                         "in another order (the edge's inputs were reordered); treating it as a "
                         "miss\n");
}

TEST_CASE("trust: an input edited in place is warned of when the checker changed too") {
  // trial15: the record's checker identity was compared first, and a mismatch was a silent
  // miss, so an input edited in place while the checker's identity also moved (a rewritten
  // script, or a stat identity whose ctime moved) went untold.
  Workspace ws("");
  ConfigureProgram(ws, EditJudge(ws));
  ws.CardInDesigning();
  LambdaReset reset(ws);
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 0);
  const std::string file = CacheFile(ws, ws / kCacheDir);
  reset();
  EditJudge(ws, "# rewritten\n");  // another checker identity
  test::Spit(ws.card_dir() + "/artifacts/4-design.md",
             "# Design\n\nThe export cites REQ-9 for its format.\n");
  auto edited = ws.Gate({"move", kCard, "ready"});
  INFO("edited: " << edited.out << edited.err);
  CHECK(edited.exit_code == 1);
  CHECK(edited.out == Vetoed("design cites REQ-9", ReportPath(ws)));
  CHECK(edited.err == "devflow-agent-gate: the verdict cache at " + file +
                          " judged other contents of [design:4, prd:3] or of the card's title "
                          "and body (one was changed in place, without a new registration), "
                          "or them in another order (the edge's inputs were reordered); "
                          "treating it as a miss\n");
  RequireUnmoved(ws);
}

TEST_CASE("trust: a verdict cached with verdictNonce off is not reused once it is on") {
  Workspace ws("");
  const std::string allow =
      Script(ws, "allow.sh",
             "printf '```json\\n{\"verdict\": \"allow\", \"summary\": \"ok\"}\\n```\\n'\n");
  Configure(ws, allow);
  ws.CardInDesigning();
  LambdaReset reset(ws);
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 0);
  reset();
  // The same script does not echo the nonce: with the nonce on it must run again, and fail.
  GateYaml yaml;
  yaml.command = {"/bin/sh", allow};
  yaml.cache_dir = kCacheDir;
  ws.WriteConfig(WithNonce(yaml.Text()));
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out ==
        CouldNotRunWithReport(ws, "the checker replied without a parsable verdict block",
                              "the last verdict block has no \"nonce\"; this edge sets "
                              "verdictNonce, so the verdict must carry the prompt's nonce") +
            ParkedLine());
}

TEST_CASE("trust: a cached veto whose report is gone runs the checker again, with a warning") {
  Workspace ws("");
  const std::string veto =
      Script(ws, "veto.sh",
             "printf '```json\\n{\"verdict\": \"veto\", \"summary\": \"hollow\"}\\n```\\n'\n");
  Configure(ws, veto);
  ws.CardInDesigning();
  auto first = ws.Gate({"move", kCard, "ready"});
  REQUIRE(first.exit_code == 1);
  auto cached = ws.Gate({"move", kCard, "ready"});
  CHECK(cached.exit_code == 1);
  CHECK(cached.out.find("(cached): hollow; full report: " + ReportPath(ws)) != std::string::npos);

  REQUIRE(fs::remove(ReportPath(ws)));
  auto rerun = ws.Gate({"move", kCard, "ready"});
  CHECK(rerun.exit_code == 1);
  CHECK(rerun.out == Vetoed("hollow", ReportPath(ws)));  // not "(cached)"
  CHECK(rerun.err == "devflow-agent-gate: the cached veto at " + CacheFile(ws, ws / kCacheDir) +
                         " names the report " + ReportPath(ws) +
                         ", which is gone; treating it as a miss\n");
  CHECK(fs::is_regular_file(ReportPath(ws)));  // written again
}

// The fresh trial's ADMITS (issue 7): the record FILE replaced by a symlink to, or a hard link
// of, a planted allow outside the root that copies the real veto record's key, checkerSha256 and
// inputsSha256. Followed, it admitted `[cached] planted`, and `cache verify` and `audit` said
// all was well. Now the check runs (veto stands), the gate warns, verify and audit name the
// file, and prune removes the link without touching what it points at.
void RequirePlantedRecordRefused(bool hard_link) {
  Workspace ws("");
  const std::string veto =
      Script(ws, "veto.sh",
             "printf '```json\\n{\"verdict\": \"veto\", \"summary\": \"hollow\"}\\n```\\n'\n");
  Configure(ws, veto);
  ws.CardInDesigning();
  REQUIRE(ws.Gate({"move", kCard, "ready"}).exit_code == 1);
  const std::string record = CacheFile(ws, ws / kCacheDir);
  std::string planted = test::Slurp(record).value();
  const auto swap = [&planted](const std::string& from, const std::string& to) {
    const size_t at = planted.find(from);
    REQUIRE(at != std::string::npos);
    planted.replace(at, from.size(), to);
  };
  swap("\"verdict\": \"veto\"", "\"verdict\": \"allow\"");
  swap("\"summary\": \"hollow\"", "\"summary\": \"planted\"");
  const std::string target = ws / "planted-allow.json";  // outside the devflow root
  test::Spit(target, planted);
  REQUIRE(fs::remove(record));
  if (hard_link) {
    fs::create_hard_link(target, record);
  } else {
    fs::create_symlink(target, record);
  }

  auto move = ws.Gate({"move", kCard, "ready"});
  CHECK(move.exit_code == 1);
  CHECK(move.out == Vetoed("hollow", ReportPath(ws)));  // the checker ran: not "[cached] planted"
  const std::string why = hard_link ? "read " + record + ": 2 hard links, not one (EMLINK)"
                                    : "open " + record + ": a symlink, not a regular file (ELOOP)";
  CHECK(move.err.find("devflow-agent-gate: the verdict cache at " + record +
                      " is not a record the gate wrote (" + why +
                      "); remove it with `devflow-gate cache prune`; treating it as a miss\n") !=
        std::string::npos);
  RequireUnmoved(ws);
  // The veto's store (a rename over the name) replaced the link with a real record: plant again.
  REQUIRE(fs::remove(record));
  if (hard_link) {
    fs::create_hard_link(target, record);
  } else {
    fs::create_symlink(target, record);
  }

  auto verify = ws.Gate({"cache", "verify"});
  CHECK(verify.exit_code == 1);
  CHECK(verify.out.find(record + ": corrupt: not a record the gate wrote: " + why) !=
        std::string::npos);
  CHECK(verify.out.find("verdict cache has problems: 1 record") != std::string::npos);
  auto audit = ws.Gate({"audit"});
  CHECK(audit.exit_code != 0);
  CHECK(audit.out.find(record + ": corrupt: not a record the gate wrote: " + why) !=
        std::string::npos);
  CHECK(audit.out.find("healthy: 0 problems") == std::string::npos);

  auto prune = ws.Gate({"cache", "prune"});
  CHECK(prune.exit_code == 0);
  CHECK(!fs::exists(fs::symlink_status(record)));
  CHECK(test::Slurp(target).value() == planted);  // the link's target is untouched
}

TEST_CASE("trust: a cache record that is a symlink to a planted allow is a warned miss") {
  RequirePlantedRecordRefused(/*hard_link=*/false);
}

TEST_CASE("trust: a cache record that is a hard link to a planted allow is a warned miss") {
  RequirePlantedRecordRefused(/*hard_link=*/true);
}

// 7 MiB of 'x' as one summary, under the default 8 MiB reply cap.
const char kHugeSummary[] =
    "printf '```json\\n{\"verdict\": \"%s\", \"summary\": \"' \"$VERDICT\"\n"
    "yes x | head -c 14680064 | tr -d '\\n'\n"
    "printf '\", \"findings\": ['\n"
    "i=0; while [ $i -lt 100 ]; do printf '\"finding %d\",' $i; i=$((i+1)); done\n"
    "printf '\"last\"]}\\n```\\n'\n";

TEST_CASE("trust: a 7 MiB allow summary leaves the journal, ledger, cache and stdout small") {
  Workspace ws("");
  const std::string checker = Script(ws, "huge.sh", std::string("VERDICT=allow\n") + kHugeSummary);
  Configure(ws, checker);
  ws.CardInDesigning();
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stderr: " << r.err.substr(0, 400));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.size() < 2048);
  CHECK(r.out.find("\xE2\x80\xA6 [cut: ") != std::string::npos);
  const std::string journal_line = ws.JournalLines().back();
  CHECK(journal_line.size() < 2048);
  auto entry = nlohmann::json::parse(journal_line);
  const std::string summary = entry["gate"]["checks"][0]["summary"].get<std::string>();
  CHECK(summary.size() <= 1024);
  CHECK(summary.rfind(std::string(900, 'x'), 0) == 0);
  CHECK(summary.find("\xE2\x80\xA6 [cut: ") != std::string::npos);
  CHECK(LedgerText(ws).size() < 8192);
  CHECK(LedgerText(ws).find(summary) != std::string::npos);
  CHECK(fs::file_size(CacheFile(ws, ws / kCacheDir)) < 4096);
  CHECK(r.err.size() < 2048);
}

TEST_CASE("trust: a 7 MiB veto summary reaches only the report, whole") {
  Workspace ws("");
  const std::string checker = Script(ws, "huge.sh", std::string("VERDICT=veto\n") + kHugeSummary);
  Configure(ws, checker);
  ws.CardInDesigning();
  auto r = ws.Gate({"move", kCard, "ready"});
  INFO("stderr: " << r.err.substr(0, 400));
  REQUIRE(r.exit_code == 1);
  CHECK(r.out.size() < 2048);
  CHECK(r.out.find("full report: " + ReportPath(ws)) != std::string::npos);
  CHECK(LedgerText(ws).size() < 8192);
  const std::string cache = test::Slurp(CacheFile(ws, ws / kCacheDir)).value_or("");
  CHECK(!cache.empty());
  CHECK(cache.size() < 4096);
  // The report has the whole summary and all 101 findings.
  const std::string report = test::Slurp(ReportPath(ws)).value_or("");
  CHECK(report.find(std::string(7340032, 'x')) != std::string::npos);
  CHECK(report.find("- finding 99\n") != std::string::npos);
  CHECK(report.find("- last\n") != std::string::npos);
  CHECK(r.err.size() < 2048);
}

TEST_CASE("trust: a cached allow is not reused once a provider env: variable's value changes") {
  // ident7 item 1: the identity hashed the env: names only, so an allow given under
  // MODEL=lenient was reused under MODEL=strict (an LLM CLI picks its model, endpoint and
  // account from such variables). The checker here allows under lenient, vetoes otherwise.
  Workspace ws("");
  const std::string checker =
      Script(ws, "judge.sh",
             "if [ \"$MODEL\" = lenient ]; then v=allow; else v=veto; fi\n"
             "printf '```json\\n{\"verdict\": \"%s\", \"summary\": \"%s\"}\\n```\\n' $v $v\n");
  GateYaml yaml;
  yaml.command = {"/bin/sh", checker};
  yaml.env = {"MODEL"};
  yaml.cache_dir = kCacheDir;
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
  LambdaReset reset(ws);
  auto first = ws.Gate({"move", kCard, "ready"}, {{"MODEL", "lenient"}});
  INFO("first: " << first.out << first.err);
  REQUIRE(first.exit_code == 0);
  const std::string file = CacheFile(ws, ws / kCacheDir);
  const std::string cached = test::Slurp(file).value();
  CHECK(cached.find("lenient") == std::string::npos);  // only the digest is recorded

  // The same value: a hit.
  reset();
  auto again = ws.Gate({"move", kCard, "ready"}, {{"MODEL", "lenient"}});
  CHECK(again.exit_code == 0);
  CHECK(again.out == CommittedOut("[cached] allow"));

  // Another value: a silent miss, the fresh check vetoes.
  reset();
  auto strict = ws.Gate({"move", kCard, "ready"}, {{"MODEL", "strict"}});
  INFO("strict: " << strict.out << strict.err);
  CHECK(strict.exit_code == 1);
  CHECK(strict.out == Vetoed("veto", ReportPath(ws)));
  RequireUnmoved(ws);

  // Unset is not the empty value, nor any value: another miss, vetoed again fresh (the veto
  // record under MODEL=strict is not this identity's either).
  reset();
  auto unset = ws.Gate({"move", kCard, "ready"});
  CHECK(unset.exit_code == 1);
  CHECK(unset.out == Vetoed("veto", ReportPath(ws)));
  CHECK(unset.out.find("[cached]") == std::string::npos);
}

}  // namespace
}  // namespace devflow::faults

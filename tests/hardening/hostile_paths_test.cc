// Issue 4 item 3, hostile paths: an artifact record whose path leaves the card directory
// (`..`, an absolute path, a symlink out at any component) is an unreadable input for every
// gate and never reaches a checker; card ids and kinds cannot leave their directory in a file
// name; a report or cache directory that is a symlink is refused.
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>

#include "gate/fixture.h"
#include "plugin/artifact_gate.h"
#include "plugin/grounding_gate.h"
#include "reports/verdict_cache.h"
#include "reports/veto_report.h"

namespace devflow::gatetest {
namespace {

namespace stdfs = std::filesystem;

const char kSecret[] = "TOP SECRET: the deploy key\n";

// The journal line of an artifact registration at `rev` with any `path`.
std::string ArtifactLineAt(int64_t rev, const std::string& kind, const std::string& path) {
  return "{\"rev\":" + std::to_string(rev) +
         ",\"at\":\"2026-09-16T07:30:00.000Z\",\"type\":\"artifact\",\"path\":" + Quote(path) +
         ",\"stage\":\"designing\",\"by\":{\"kind\":\"human\"},\"kind\":\"" + kind + "\"}\n";
}

// A card at designing with prd (rev 3, a sound file) and a design record (rev 4) at `path`.
void WriteCardWithDesignAt(const std::string& root, const std::string& id,
                           const std::string& path) {
  WriteCard(root, id, {{"prd", "PRD\n"}});
  const std::string journal = root + "/tasks/" + id + "/journal.jsonl";
  Spit(journal, Slurp(journal).value() + ArtifactLineAt(4, "design", path));
}

// A secret outside the card directory (in the workspace), and the fault of reading a design
// artifact of card `id` that resolves to it through a symlink.
std::string PlantSecret(const Rig& rig) {
  const std::string secret = rig.workspace + "/secret.md";
  Spit(secret, kSecret);
  return secret;
}

std::string SymlinkFault(const Rig& rig, const std::string& id, const std::string& rel) {
  const std::string dir = rig.CardDir(id);
  return "a required input cannot be read: open " + dir + "/" + rel + ": resolves outside " + dir +
         " (EXDEV)";
}

void ExpectNothingReachedTheChecker(const Rig& rig) {
  CHECK(rig.scripted.requests.empty());
  for (const CheckRequest& request : rig.scripted.requests) {
    CHECK(request.prompt.Joined().find("TOP SECRET") == std::string::npos);
  }
}

// ---- the FileSystem seam ------------------------------------------------------------------

TEST_CASE("ReadFileBeneath reads a regular file and follows a symlink that stays inside") {
  TempDir tmp;
  Spit(tmp / "card/artifacts/4-real.md", "REAL\n");
  stdfs::create_symlink("4-real.md", tmp / "card/artifacts/4-design.md");
  stdfs::create_directories(tmp / "card/sub");
  stdfs::create_symlink("../artifacts", tmp / "card/sub/arts");
  FileSystem& fs = RealFileSystem();
  CHECK(fs.ReadFileBeneath(tmp / "card", "artifacts/4-real.md").value() == "REAL\n");
  CHECK(fs.ReadFileBeneath(tmp / "card", "artifacts/4-design.md").value() == "REAL\n");
  CHECK(fs.ReadFileBeneath(tmp / "card", "sub/arts/4-real.md").value() == "REAL\n");
}

TEST_CASE("ReadFileBeneath refuses a final symlink out of the directory, absolute or relative") {
  TempDir tmp;
  Spit(tmp / "secret.md", kSecret);
  stdfs::create_directories(tmp / "card/artifacts");
  stdfs::create_symlink(tmp / "secret.md", tmp / "card/artifacts/4-abs.md");
  stdfs::create_symlink("../../secret.md", tmp / "card/artifacts/4-rel.md");
  FileSystem& fs = RealFileSystem();
  for (const char* rel : {"artifacts/4-abs.md", "artifacts/4-rel.md"}) {
    CAPTURE(rel);
    Result<std::string> read = fs.ReadFileBeneath(tmp / "card", rel);
    REQUIRE_FALSE(read.ok());
    CHECK(read.status().code() == "EXDEV");
    CHECK(read.status().message() ==
          "open " + tmp / "card" + "/" + rel + ": resolves outside " + tmp / "card" + " (EXDEV)");
  }
}

TEST_CASE("ReadFileBeneath refuses a directory component that is a symlink out") {
  TempDir tmp;
  Spit(tmp / "elsewhere/4-design.md", kSecret);
  stdfs::create_directories(tmp / "card");
  stdfs::create_symlink(tmp / "elsewhere", tmp / "card/artifacts");
  Result<std::string> read =
      RealFileSystem().ReadFileBeneath(tmp / "card", "artifacts/4-design.md");
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().message() == "open " + tmp / "card" +
                                       "/artifacts/4-design.md: resolves outside " + tmp / "card" +
                                       " (EXDEV)");
}

TEST_CASE("ReadFileBeneath refuses .. segments and absolute paths without touching them") {
  TempDir tmp;
  Spit(tmp / "secret.md", kSecret);
  stdfs::create_directories(tmp / "card/artifacts");
  FileSystem& fs = RealFileSystem();
  Result<std::string> up = fs.ReadFileBeneath(tmp / "card", "artifacts/../../secret.md");
  REQUIRE_FALSE(up.ok());
  CHECK(up.status().message() ==
        "open " + tmp / "card" + "/artifacts/../../secret.md: leaves " + tmp / "card" + " (EXDEV)");
  Result<std::string> abs = fs.ReadFileBeneath(tmp / "card", tmp / "secret.md");
  REQUIRE_FALSE(abs.ok());
  CHECK(abs.status().code() == "EXDEV");
}

TEST_CASE("ReadFileBeneath refuses a FIFO without blocking and a directory as EISDIR") {
  TempDir tmp;
  stdfs::create_directories(tmp / "card/artifacts/4-dir.md");
  REQUIRE(::mkfifo((tmp / "card/artifacts/4-fifo.md").c_str(), 0644) == 0);
  FileSystem& fs = RealFileSystem();
  Result<std::string> fifo = fs.ReadFileBeneath(tmp / "card", "artifacts/4-fifo.md");
  REQUIRE_FALSE(fifo.ok());
  CHECK(fifo.status().message() ==
        "read " + tmp / "card" + "/artifacts/4-fifo.md: not a regular file (EINVAL)");
  Result<std::string> dir = fs.ReadFileBeneath(tmp / "card", "artifacts/4-dir.md");
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.status().code() == "EISDIR");
  Result<std::string> missing = fs.ReadFileBeneath(tmp / "card", "artifacts/9-none.md");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() ==
        "open " + tmp / "card" + "/artifacts/9-none.md: No such file or directory (ENOENT)");
}

TEST_CASE("a FileSystem that does not implement ReadFileBeneath refuses every read (ENOSYS)") {
  class Minimal : public FaultyFileSystem {
   public:
    Result<std::string> ReadFileBeneath(const std::string& b, const std::string& r) override {
      return FileSystem::ReadFileBeneath(b, r);
    }
  } minimal;
  TempDir tmp;
  Spit(tmp / "card/a.md", "A\n");
  Result<std::string> read = minimal.ReadFileBeneath(tmp / "card", "a.md");
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().code() == "ENOSYS");
}

TEST_CASE("ArtifactPathProblem names an empty, absolute or escaping record path") {
  CHECK(ArtifactPathProblem("artifacts/4-design.md") == std::nullopt);
  CHECK(ArtifactPathProblem("artifacts/..design.md") == std::nullopt);
  CHECK(ArtifactPathProblem("") == "artifact record has an empty path");
  CHECK(ArtifactPathProblem("/etc/passwd") ==
        "artifact path /etc/passwd is absolute; it must stay inside the card directory");
  CHECK(ArtifactPathProblem("artifacts/../../x.md") ==
        "artifact path artifacts/../../x.md leaves the card directory");
  CHECK(ArtifactPathProblem("..") == "artifact path .. leaves the card directory");
}

// ---- the agent gate -----------------------------------------------------------------------

TEST_CASE("agent gate: a record path with .. segments fails closed and is never read") {
  Rig rig;
  PlantSecret(rig);
  const std::string id = "0001-dotdot";
  WriteCardWithDesignAt(rig.root, id, "artifacts/../../../../secret.md");
  rig.scripted.Allow("would admit");
  MoveOutcome outcome = rig.Move(id);
  ExpectParked(rig, outcome, id,
               "a required input cannot be read: artifact path artifacts/../../../../secret.md "
               "leaves the card directory",
               5);
  ExpectNothingReachedTheChecker(rig);
}

TEST_CASE("agent gate: an absolute record path fails closed and is never read") {
  Rig rig;
  const std::string secret = PlantSecret(rig);
  const std::string id = "0001-absolute";
  WriteCardWithDesignAt(rig.root, id, secret);
  rig.scripted.Allow("would admit");
  MoveOutcome outcome = rig.Move(id);
  ExpectParked(rig, outcome, id,
               "a required input cannot be read: artifact path " + secret +
                   " is absolute; it must stay inside the card directory",
               5);
  ExpectNothingReachedTheChecker(rig);
}

TEST_CASE("agent gate: an artifact file that is a symlink out fails closed, content never sent") {
  Rig rig;
  const std::string secret = PlantSecret(rig);
  const std::string id = "0001-final-link";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string design = rig.CardDir(id) + "/artifacts/4-design.md";
  stdfs::remove(design);
  stdfs::create_symlink(secret, design);
  rig.scripted.Allow("would admit");
  MoveOutcome outcome = rig.Move(id);
  ExpectParked(rig, outcome, id, SymlinkFault(rig, id, "artifacts/4-design.md"), 5);
  ExpectNothingReachedTheChecker(rig);
}

TEST_CASE("agent gate: an artifacts directory that is a symlink out fails closed") {
  Rig rig;
  const std::string id = "0001-dir-link";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string artifacts = rig.CardDir(id) + "/artifacts";
  Spit(rig.workspace + "/elsewhere/3-prd.md", kSecret);
  Spit(rig.workspace + "/elsewhere/4-design.md", kSecret);
  stdfs::remove_all(artifacts);
  stdfs::create_symlink(rig.workspace + "/elsewhere", artifacts);
  rig.scripted.Allow("would admit");
  MoveOutcome outcome = rig.Move(id);
  ExpectParked(rig, outcome, id, SymlinkFault(rig, id, "artifacts/3-prd.md"), 5);
  ExpectNothingReachedTheChecker(rig);
}

TEST_CASE("agent gate: a symlink that stays inside the card directory is read and sent") {
  Rig rig;
  const std::string id = "0001-inner-link";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string design = rig.CardDir(id) + "/artifacts/4-design.md";
  Spit(rig.CardDir(id) + "/artifacts/4-design-v2.md", "DESIGN v2\n");
  stdfs::remove(design);
  stdfs::create_symlink("4-design-v2.md", design);
  rig.scripted.Allow("design is sound");
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "committed");
  REQUIRE(rig.scripted.requests.size() == 1);
  CHECK(rig.scripted.requests[0].prompt.Joined().find(
            "--- artifact design (rev 4) ---\n\nDESIGN v2\n") != std::string::npos);
}

// ---- the grounding gate and the artifact gate ----------------------------------------------

struct GroundingRig : Rig {
  GroundingGate grounding{DefaultGrounding(), Reader(), fs};
  GroundingRig() {
    with_gate = false;
    before.push_back(&grounding);
  }
  static GroundingGateConfig DefaultGrounding() {
    GroundingGateConfig c;
    c.edges.push_back(
        GroundingEdgeConfig{Edge{Location::kDesigning, Location::kReady}, "design", {"prd"}, {}});
    return c;
  }
};

TEST_CASE("grounding gate: evidence that is a symlink out fails closed and is not ledgered") {
  GroundingRig rig;
  const std::string secret = PlantSecret(rig);
  const std::string id = "0001-a";
  WriteCard(rig.root, id, {{"prd", "#41\n"}, {"design", "#41\n"}});
  const std::string prd = rig.CardDir(id) + "/artifacts/3-prd.md";
  stdfs::remove(prd);
  stdfs::create_symlink(secret, prd);
  MoveOutcome outcome = rig.Move(id);
  const std::string fault = SymlinkFault(rig, id, "artifacts/3-prd.md");
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.parked);
  CHECK(outcome.message ==
        Rejected(id, "grounding check for designing->ready could not run: " + fault +
                         "; the card is parked blocked until the deployment recovers"));
  CHECK_FALSE(stdfs::exists(rig.root + "/ledger/grounding.jsonl"));
}

TEST_CASE("grounding gate: a claim behind a symlink or a .. path fails closed") {
  GroundingRig rig;
  const std::string secret = PlantSecret(rig);
  const std::string linked = "0001-claim-link";
  WriteCard(rig.root, linked, {{"prd", "#41\n"}, {"design", "#41\n"}});
  const std::string design = rig.CardDir(linked) + "/artifacts/4-design.md";
  stdfs::remove(design);
  stdfs::create_symlink(secret, design);
  MoveOutcome first = rig.Move(linked);
  CHECK(first.message ==
        Rejected(linked, "grounding check for designing->ready could not run: " +
                             SymlinkFault(rig, linked, "artifacts/4-design.md") +
                             "; the card is parked blocked until the deployment recovers"));

  const std::string dotdot = "0002-claim-dotdot";
  WriteCardWithDesignAt(rig.root, dotdot, "../../../secret.md");
  MoveOutcome second = rig.Move(dotdot);
  CHECK(second.message ==
        Rejected(dotdot,
                 "grounding check for designing->ready could not run: a required input cannot "
                 "be read: artifact path ../../../secret.md leaves the card directory; the card "
                 "is parked blocked until the deployment recovers"));
  CHECK_FALSE(stdfs::exists(rig.root + "/ledger/grounding.jsonl"));
}

TEST_CASE("artifact gate: an artifact behind a symlink out or a .. path is a defect") {
  Rig rig;
  const std::string secret = PlantSecret(rig);
  Spit(rig.workspace + "/secret-prd.md", "---\ntitle: x\n---\n## Goals\nall\n");
  ArtifactGateConfig shapes;
  shapes.kinds.push_back(ArtifactKindConfig{"prd", {}, {}, {}});
  shapes.kinds.push_back(ArtifactKindConfig{"design", {}, {}, {}});
  shapes.edges.push_back({Edge{Location::kDesigning, Location::kReady}, {"prd", "design"}});
  ArtifactGate artifact_gate(shapes, rig.Reader(), rig.fs);
  rig.before.push_back(&artifact_gate);
  rig.with_gate = false;
  const std::string id = "0001-a";
  WriteCardWithDesignAt(rig.root, id, "../../../secret.md");
  const std::string prd = rig.CardDir(id) + "/artifacts/3-prd.md";
  stdfs::remove(prd);
  stdfs::create_symlink(rig.workspace + "/secret-prd.md", prd);
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.message ==
        Rejected(id,
                 "required artifacts are missing or malformed: prd: artifacts/3-prd.md "
                 "cannot be read: open " +
                     prd + ": resolves outside " + rig.CardDir(id) +
                     " (EXDEV); design: ../../../secret.md cannot be read: artifact path "
                     "../../../secret.md leaves the card directory"));
  CHECK_FALSE(outcome.parked);
}

// ---- ids, kinds and edges in file names -----------------------------------------------------

// A well-formed card planted OUTSIDE tasks/, reachable as tasks/../../outside-card if an id
// were ever joined unchecked.
struct OutsideCard {
  explicit OutsideCard(Rig& rig) : dir(rig.workspace + "/outside-card") {
    WriteCard(rig.workspace + "/x/y", "0009-outside");  // makes x/y/tasks/0009-outside
    stdfs::rename(rig.workspace + "/x/y/tasks/0009-outside", dir);
    before = Slurp(dir + "/journal.jsonl").value();
  }
  std::string dir;
  std::string before;
  static constexpr const char* kId = "../../outside-card";
};

TEST_CASE("store: an id that would leave tasks/ is not-found for Read, AddArtifact and commits") {
  Rig rig;
  stdfs::create_directories(rig.root + "/tasks");  // the joint an unchecked id would walk up from
  OutsideCard outside(rig);
  Result<Card> read = rig.store.Read(OutsideCard::kId);
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().code() == "not-found");

  ArtifactRequest add;
  add.id = OutsideCard::kId;
  add.expected_revision = 2;
  add.kind = "design";
  add.content = "INJECTED\n";
  Result<Card> added = rig.store.AddArtifact(add);
  REQUIRE_FALSE(added.ok());
  CHECK(added.status().code() == "not-found");

  TransitionCommit commit;
  commit.id = OutsideCard::kId;
  commit.expected_revision = 2;
  commit.from = Location::kDesigning;
  commit.to = Location::kReady;
  commit.at = kAt;
  Result<Card> committed = rig.store.CommitTransition(commit);
  REQUIRE_FALSE(committed.ok());
  CHECK(committed.status().code() == "not-found");

  CHECK(Slurp(outside.dir + "/journal.jsonl") == outside.before);
  CHECK_FALSE(stdfs::exists(outside.dir + "/artifacts"));
}

TEST_CASE("store: a kind is grammar-checked before the artifact file name is built") {
  Rig rig;
  WriteCard(rig.root, "0001-a");
  // If the kind were used unchecked, artifacts/3-x/../../../../escape.md would be root/escape.md.
  stdfs::create_directories(rig.CardDir("0001-a") + "/artifacts/3-x");
  ArtifactRequest add;
  add.id = "0001-a";
  add.expected_revision = 2;
  add.kind = "x/../../../../escape";
  add.content = "INJECTED\n";
  Result<Card> added = rig.store.AddArtifact(add);
  REQUIRE_FALSE(added.ok());
  CHECK(added.status().code() == "invalid-kind");
  CHECK_FALSE(stdfs::exists(rig.root + "/escape.md"));
  CHECK(rig.Read("0001-a").stage_revision == 2);
}

namespace {

// Runs a policy as a caller without a card of its own would (AttemptContext::card unset).
struct WithoutExecutorCard : Policy {
  explicit WithoutExecutorCard(Policy& inner) : inner(inner) {}
  std::string id() const override { return inner.id(); }
  Decision Admit(const Attempt& attempt, AttemptContext& context, const Next& next) override {
    const Card* card = context.card;
    context.card = nullptr;
    Decision d = inner.Admit(attempt, context, next);
    context.card = card;
    return d;
  }
  std::string Explain(const Attempt& attempt) override { return inner.Explain(attempt); }
  Policy& inner;
};

}  // namespace

TEST_CASE("agent gate: a card id that is not a valid id never names a report file") {
  Rig rig;
  const std::string id = "0001-a";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  const std::string hostile = "0001-a/../../../../escape";
  // The directory an unchecked join would walk through.
  stdfs::create_directories(rig.ReportDir() + "/0001-a");
  CardReader reader = rig.Reader();
  AgentGate gate(
      rig.config,
      [&](const std::string& root, const std::string& card_id) -> Result<Card> {
        Result<Card> card = reader(root, card_id);
        if (card.ok()) card->id = hostile;
        return card;
      },
      rig.scripted, rig.fs);
  // A move hands the policies the executor's own read (issue 11: one read per move), whose id
  // the store has checked; the reader is what a policy reaches without one, so the gate runs
  // here without the executor's card, and the hostile reader is the card's only source.
  WithoutExecutorCard readerless(gate);
  rig.with_gate = false;
  rig.before.push_back(&readerless);
  rig.scripted.Veto("the design is hollow");
  MoveOutcome outcome = rig.Move(id);
  const std::string fault = "the card cannot be read: card id \"" + hostile +
                            "\" is not a valid card id (<digits>-<slug>)";
  CHECK(outcome.message == Rejected(id, CouldNotRun(fault)));
  CHECK(outcome.parked);
  CHECK(rig.scripted.requests.empty());
  CHECK_FALSE(stdfs::exists(rig.workspace + "/escape-designing-ready-r4.md"));
  CHECK(rig.Files(rig.ReportDir() + "/0001-a").empty());
}

TEST_CASE("veto report names use only the validated id and the edge's stage names") {
  CHECK(VetoReportPath("/r/reports", "0002-b", std::string(LocationName(Location::kDesigning)),
                       std::string(LocationName(Location::kReady)),
                       4) == "/r/reports/0002-b-designing-ready-r4.md");
}

// ---- report and cache directories that are symlinks ----------------------------------------

TEST_CASE("agent gate: a reportDir that is a symlink is refused and the move fails closed") {
  Rig rig;
  const std::string elsewhere = rig.workspace + "/elsewhere";
  stdfs::create_directories(elsewhere);
  stdfs::create_symlink(elsewhere, rig.workspace + "/reports-link");
  rig.config.report_dir = "reports-link";
  const std::string id = "0001-a";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  MoveOutcome outcome = rig.Move(id);
  ExpectParked(rig, outcome, id,
               "the veto report could not be written: " + rig.workspace +
                   "/reports-link is a symlink; point reportDir at a real directory",
               5);
  CHECK(rig.Files(elsewhere).empty());
}

TEST_CASE("agent gate: a report directory below a symlinked component is refused, naming it") {
  Rig rig;
  const std::string elsewhere = rig.workspace + "/elsewhere";
  stdfs::create_directories(elsewhere);
  stdfs::create_directories(rig.root);
  stdfs::create_symlink(elsewhere, rig.root + "/reports");  // default <root>/reports/agent-gate
  const std::string id = "0001-a";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Veto("the design is hollow");
  MoveOutcome outcome = rig.Move(id);
  ExpectParked(rig, outcome, id,
               "the veto report could not be written: " + rig.root +
                   "/reports is a symlink; point reportDir at a real directory",
               5);
  CHECK(test::Snapshot(elsewhere).empty());
}

TEST_CASE("CheckReportDir accepts real and missing directories and names the first symlink") {
  TempDir tmp;
  FileSystem& fs = RealFileSystem();
  stdfs::create_directories(tmp / "ws/real/deeper");
  stdfs::create_directories(tmp / "target");
  stdfs::create_symlink(tmp / "target", tmp / "ws/link");
  CHECK(CheckReportDir(fs, tmp / "ws", tmp / "ws/real/deeper").ok());
  CHECK(CheckReportDir(fs, tmp / "ws", tmp / "ws/real/not/yet").ok());
  Status refused = CheckReportDir(fs, tmp / "ws", tmp / "ws/link/a/b");
  CHECK(refused.code() == "symlink");
  CHECK(refused.message() ==
        tmp / "ws/link" + " is a symlink; point reportDir at a real directory");
  // Outside the workspace only the directory itself is the operator's to vouch for.
  CHECK(CheckReportDir(fs, tmp / "ws", tmp / "target").ok());
  CHECK(CheckReportDir(fs, tmp / "other", tmp / "ws/link").code() == "symlink");
}

TEST_CASE("agent gate: a verdictCacheDir that is a symlink is neither read nor written") {
  Rig rig;
  const std::string elsewhere = rig.workspace + "/elsewhere";
  stdfs::create_directories(elsewhere);
  stdfs::create_symlink(elsewhere, rig.workspace + "/cache-link");
  rig.config.verdict_cache_dir = "cache-link";
  const std::string id = "0001-a";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  // A planted "allow" for exactly this attempt: honoured, it would admit without a check.
  VerdictCacheKey key = VerdictCacheKey::Compute("designing->ready", rig.root, id,
                                                 {"prd:3", "design:4"}, kInstruction);
  // It carries the right checker and contents: only the refused symlink keeps it out.
  const std::string planted =
      RenderCacheRecord({key, true, "planted", std::nullopt, kAt, CheckerIdentity(nullptr, false),
                         test::JudgedInputsOf(rig.root, id, key.inputs)});
  Spit(elsewhere + "/" + key.FileName(), planted);
  rig.scripted.Veto("the design is hollow");
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "vetoed");
  CHECK(outcome.message ==
        Rejected(id, "agent check vetoed designing->ready: the design is hollow; full report: " +
                         rig.ReportDir() + "/0001-a-designing-ready-r4.md"));
  CHECK(rig.scripted.requests.size() == 1);
  const std::string warning = "devflow-agent-gate: the verdict cache directory " + rig.workspace +
                              "/cache-link is a symlink; point verdictCacheDir at a real "
                              "directory; not caching this attempt";
  CHECK(rig.warnings.lines == std::vector<std::string>{warning});
  CHECK(rig.Files(elsewhere) == std::vector<std::string>{key.FileName()});
  CHECK(Slurp(elsewhere + "/" + key.FileName()) == planted);
}

TEST_CASE("agent gate: a cache directory below a symlinked component is refused the same way") {
  Rig rig;
  rig.EnableCache();  // .devflow/cache/agent-gate
  const std::string elsewhere = rig.workspace + "/elsewhere";
  stdfs::create_directories(elsewhere);
  stdfs::create_directories(rig.root);
  stdfs::create_symlink(elsewhere, rig.root + "/cache");
  const std::string id = "0001-a";
  WriteCard(rig.root, id, {{"prd", "PRD\n"}, {"design", "DESIGN\n"}});
  rig.scripted.Allow("design is sound");
  MoveOutcome outcome = rig.Move(id);
  CHECK(outcome.code == "committed");
  CHECK(rig.warnings.lines ==
        std::vector<std::string>{"devflow-agent-gate: the verdict cache directory " + rig.root +
                                 "/cache is a symlink; point verdictCacheDir at a real "
                                 "directory; not caching this attempt"});
  CHECK(test::Snapshot(elsewhere).empty());
}

}  // namespace
}  // namespace devflow::gatetest

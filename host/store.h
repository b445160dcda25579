// The devflow root store, compatible with the TypeScript `dsh-devflow-filesystem` store
// (reference/devflow-upstream.md §1–§3): cards under <root>/tasks/<seq>-<slug>/ with card.md,
// journal.jsonl and artifacts/. The store knows nothing of policies; the executor
// (host/executor.h) runs the waterfall and then asks the store to commit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/card_file.h"
#include "host/journal.h"
#include "host/os.h"
#include "host/stages.h"
#include "host/status.h"
#include "host/warnings.h"

namespace devflow {

/// Why an artifact record's path (relative to the card directory, from the journal, which an
/// agent may write) cannot name a file inside the card directory, or nullopt when it can:
/// `artifact record has an empty path`, `artifact path <p> is absolute; it must stay inside
/// the card directory`, `artifact path <p> leaves the card directory` (a ".." segment).
/// Lexical only: a symlink leading out is refused by FileSystem::ReadFileBeneath.
std::optional<std::string> ArtifactPathProblem(std::string_view path);

/// Reads an artifact's content through `fs` as an untrusted record must be read: the path
/// must pass ArtifactPathProblem (else code "EACCES" with its message), and the read goes
/// through FileSystem::ReadFileBeneath(card_dir, path), so no component may lead out of the
/// card directory by a symlink.
Result<std::string> ReadArtifact(FileSystem& fs, const std::string& card_dir,
                                 std::string_view path);

/// card.md's title and body as Store::Read reads them, for card `id` whose directory is `dir`
/// (`<root>/tasks/<id>`): a lost file (ENOENT, ENOTDIR) is the journal-only view, title = `id`
/// and an empty body, with `*lost` set when given; another read error, or a file ParseCardFile
/// refuses, is that error. Warns nothing (Read warns of a lost file).
Result<CardFile> ReadCardText(FileSystem& fs, const std::string& id, const std::string& dir,
                              bool* lost = nullptr);

/// What a card's `commit.lock` (reference §3.3: the text `<pid>\n`, created O_EXCL by the
/// commit that holds it) says of its holder. One reading for the store's write-contended
/// message and the operator's audit.
struct CommitLockHolder {
  enum class Kind {
    kUnreadable,  // the read failed: `text` is the FileSystem message
    kNoPid,       // the content is not a decimal pid of 1–10 digits: `text` is the content
                  // without its trailing newlines
    kPid,         // `pid` is the pid written
  };
  Kind kind = Kind::kUnreadable;
  std::string text;
  int64_t pid = 0;
};

/// Reads the commit.lock at `lock` (never removes or changes it).
CommitLockHolder ReadCommitLockHolder(FileSystem& fs, const std::string& lock);

/// A card as read (DevCard, reference §1.3). Stage and revision come from the journal fold,
/// never from card.md.
struct Card {
  std::string id;    // "0001-login-page"
  std::string root;  // absolute devflow root
  std::string dir;   // absolute card directory <root>/tasks/<id>
  std::string path;  // <dir>/card.md
  std::string title;
  std::string body;  // Markdown below the front matter, trimmed
  Location stage = Location::kDraft;
  int64_t stage_revision = 0;
  std::optional<Location> blocked_from;
  std::optional<std::string> parent;
  ServiceClass service_class = ServiceClass::kStandard;
  bool abandoned = false;
  bool archived = false;  // an archived card still under tasks/ (commits refuse it)
  std::string created_at;
  std::string updated_at;
  std::vector<ArtifactRecord> artifact_records;  // registration order; views `record_bytes`
  RecordBytes record_bytes;                      // the bytes the records view (a copy shares them)
  std::vector<JournalEntry> entries;             // the whole journal, for `card show`
  /// Whether `entries` was read (Read's `keeps`): a card read for a decision has none.
  FoldKeeps keeps = FoldKeeps::kEntries;
  /// The journal bytes this card was folded from (null for a card not read from disk). A
  /// commit that is handed this card folds only what was appended to these bytes since.
  std::shared_ptr<const FileBytes> journal;

  /// Newest registration of `kind`: the last record whose kind equals it (reference §1.8).
  const ArtifactRecord* NewestOfKind(const std::string& kind) const;
};

struct CreateRequest {
  std::string title;
  std::string body;
  std::optional<std::string> slug;  // derived from the title when absent
  ServiceClass service_class = ServiceClass::kStandard;
  Actor by{"human", std::nullopt, std::nullopt};
};

/// Store-written artifact registration (reference §1.8): the store writes
/// `artifacts/<rev>-<kind>.md` (rev = current revision + 1) atomically before taking the lock.
struct ArtifactRequest {
  std::string id;
  int64_t expected_revision = 0;
  Actor by{"human", std::nullopt, std::nullopt};
  std::string kind;
  std::string content;
};

/// A transition to append once the waterfall allowed it.
struct TransitionCommit {
  std::string id;
  int64_t expected_revision = 0;  // revision the decision was made against
  Location from = Location::kDraft;
  Location to = Location::kDraft;
  Actor by{"human", std::nullopt, std::nullopt};
  std::optional<std::string> reason;
  std::optional<Gate> gate;  // omitted from the line when empty
  std::string at;            // the attempt's `at`
  /// When set, called under the commit lock after the revision, legality and reason re-checks,
  /// right before the append: a failed Status refuses the commit with that Status and nothing
  /// is written. The executor checks here that the bytes a checker judged are still the bytes
  /// on disk (host/waterfall.h JudgedBytes), so no other commit can slip in between.
  std::function<Status()> before_append;
};

/// The filesystem store for one devflow root.
///
/// Rejections are Status values with the upstream codes: "revision-mismatch", "illegal-edge",
/// "reason-required", "write-contended", "archived", "invalid-slug", "empty-title", "exists",
/// "invalid-kind", "not-found". Journal problems: code "corrupt" with `<path>:<line>: <problem>`.
/// Other I/O failures carry the errno code (infrastructure failures: nothing was published).
/// A card directory Store::List could not fold, with why.
struct UnlistedCard {
  std::string id;
  Status why;
};
/// What Store::List found.
struct CardListing {
  std::vector<Card> cards;
  std::vector<UnlistedCard> unlisted;
};

/// Whether the card directory `dir` is what a creation interrupted between reserving it and
/// writing its journal's first line (the commit point) leaves: no `journal.jsonl`, and nothing
/// in it but temp files of the atomic replace (`.<name>.<pid>.<seq>.tmp`). No card was created
/// there; the fix is to remove it. Errors: the listing's.
Result<bool> IsInterruptedCreation(FileSystem& fs, const std::string& dir);

/// The error of a card id in `tasks/` that is a symbolic link (code "ELOOP"): `<dir> is a
/// symbolic link, not a card directory (ELOOP): the gate never follows a link below the root,
/// so this card is neither read nor moved; replace the link with the card's own directory`.
Status LinkedCardDir(const std::string& dir);

class Store {
 public:
  /// `root` is made absolute. `fs`, `clock` and `warnings` must outlive the store.
  Store(std::string root, FileSystem& fs, Clock& clock, Warnings& warnings);

  const std::string& root() const { return root_; }
  /// Parent of the root: where gate commands and checkers run.
  std::string workspace() const;

  /// Reads and strictly folds one card. Unknown id → "not-found" (an archived card →
  /// "archived"). A missing card.md degrades to title = id, empty body, with a warning.
  /// Projection drift (card.md stage/stageRevision ≠ journal) is warned; the journal wins.
  /// With FoldKeeps::kState (a move's read, before its waterfall) the journal is folded by the
  /// same rules but `entries` stays empty; a commit handed that card keeps none either.
  Result<Card> Read(const std::string& id, FoldKeeps keeps = FoldKeeps::kEntries) const;

  /// Every active card that folds, ordered by id, in `cards`; every card directory that does
  /// not fold (or cannot be read) in `unlisted` with its error, so one broken card neither hides
  /// the others nor is silently skipped (reference §1.7). A directory that is an interrupted
  /// creation (IsInterruptedCreation) is no card: it is warned about (`devflow: <dir> is an
  /// interrupted card creation (no journal): no card was created; remove it (rmdir <dir>)`)
  /// and in neither list. A card id in `tasks/` that is a symbolic link is in `unlisted` with
  /// LinkedCardDir's error (trial19 5c: it vanished from `card list` and `audit`).
  /// Error: `tasks/` cannot be listed.
  Result<CardListing> List() const;

  /// Creates a card (reference §1.2): next sequence over tasks/ and archive/*/, 4-digit padding,
  /// exclusive mkdir with up to 5 rescans, card.md projection + `created` entry (rev 1).
  Result<Card> Create(const CreateRequest& request);

  /// Store-written artifact registration; returns the card after the commit.
  Result<Card> AddArtifact(const ArtifactRequest& request);

  /// Commits a transition (reference §2.2 step 8 and §3.4): takes commit.lock (O_EXCL, up to
  /// 100 tries 20 ms apart, never broken by age → "write-contended"), re-reads and re-folds the
  /// journal, rejects "revision-mismatch" if the revision moved while the transition was being
  /// decided, re-checks legality and the rework reason, appends one line with a single write +
  /// fsync (after `commit.before_append`, when set, agreed), rewrites the card.md projection (still
  /// under the lock, so the last committer's projection is the one left; failure only warns),
  /// releases the lock. Returns the new card.
  ///
  /// `decided_on`, when given, is the card the decision was made against (Read of the same id
  /// in this store; it is consumed). Under the lock the journal is still read whole, but when
  /// it is exactly the bytes that card was folded from followed by whole appended lines, only
  /// those lines are folded onto the card's fold. Any other change (shorter, a byte before the
  /// end differs, the old bytes ended mid-line, another card) re-folds the whole journal.
  Result<Card> CommitTransition(const TransitionCommit& commit,
                                std::optional<Card> decided_on = std::nullopt);

  /// Path of the card directory for an id (no existence check). The id must satisfy
  /// IsValidCardId, otherwise "not-found" is returned by Read.
  std::string CardDir(const std::string& id) const;

 private:
  Status WithCommitLock(const std::string& id, const std::string& action_hint,
                        const std::function<Status()>& body);
  std::string root_;
  FileSystem& fs_;
  Clock& clock_;
  Warnings& warnings_;
};

}  // namespace devflow

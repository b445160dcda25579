#include "host/store.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "host/card_file.h"
#include "host/cleanup.h"
#include "host/deadline.h"
#include "host/pause.h"
#include "host/utf8.h"

namespace devflow {
namespace {

// Commit-lock budget (reference §3.4): 100 attempts 20 ms apart, about 2 s. Fixed, not
// configurable: the lock only spans a re-read and one append.
constexpr int kLockAttempts = 100;
constexpr auto kLockRetry = std::chrono::milliseconds(20);
// Sequence re-allocation after losing an exclusive mkdir race (reference §1.2).
constexpr int kCreateAttempts = 5;

std::string Q(std::string_view s) { return "\"" + std::string(s) + "\""; }

bool IsAbsent(const Status& s) { return s.code() == "ENOENT" || s.code() == "ENOTDIR"; }

Projection ProjectionOf(const CardState& state) {
  Projection p;
  p.stage = state.stage;
  p.stage_revision = state.stage_revision;
  p.blocked_from = state.blocked_from;
  p.parent = state.parent;
  p.service_class = state.service_class;
  return p;
}

Card CardOf(const std::string& root, const std::string& id, const std::string& dir, CardState state,
            std::string title, std::string body) {
  Card c;
  c.id = id;
  c.root = root;
  c.dir = dir;
  c.path = JoinPath(dir, "card.md");
  c.title = std::move(title);
  c.body = std::move(body);
  c.stage = state.stage;
  c.stage_revision = state.stage_revision;
  c.blocked_from = state.blocked_from;
  c.parent = state.parent;
  c.service_class = state.service_class;
  c.abandoned = state.abandoned;
  c.archived = state.archived;
  c.created_at = std::move(state.created_at);
  c.updated_at = std::move(state.updated_at);
  c.artifact_records = std::move(state.artifact_records);
  c.record_bytes = std::move(state.record_bytes);
  c.entries = std::move(state.entries);
  c.keeps = state.keeps;
  return c;
}

// Card sequence numbers are JavaScript numbers upstream (nextSequence in
// packages/devflow-filesystem/src/index.ts): the digits before the first '-' of every card
// directory are read with Number.parseInt(…, 10) (a double, correctly rounded; more digits
// than a double holds give Infinity), the highest plus one is printed with String() and padded
// to four digits. Doing the same arithmetic keeps both hosts allocating the same next id.

// The numeric prefix of a directory name as upstream's /^([0-9]+)-/ reads it, or nullopt.
std::optional<double> SequenceOf(const std::string& name) {
  size_t i = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  if (i == 0 || i >= name.size() || name[i] != '-') return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + i, value);
  if (ec == std::errc::result_out_of_range) return std::numeric_limits<double>::infinity();
  if (ec != std::errc() || end != name.data() + i) return std::nullopt;
  return value;
}

// Number.prototype.toString() (radix 10) of a non-negative integral double, or of Infinity
// (ECMA-262 Number::toString): the shortest round-trip digits, written out in full below 1e21
// and in exponent form (`1e+21`, `1.5e+22`) from there on.
std::string JsNumberString(double value) {
  if (std::isinf(value)) return "Infinity";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string sci(buf, ec == std::errc() ? end : buf);
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exponent = std::stoi(sci.substr(e + 1));
  if (exponent < 21) {
    digits.resize(static_cast<size_t>(exponent) + 1, '0');
    return digits;
  }
  std::string out(1, digits[0]);
  if (digits.size() > 1) out += "." + digits.substr(1);
  return out + "e+" + std::to_string(exponent);
}

// String(sequence).padStart(4, '0').
std::string Padded(double sequence) {
  std::string s = JsNumberString(sequence);
  if (s.size() < 4) s.insert(0, 4 - s.size(), '0');
  return s;
}

}  // namespace

std::optional<std::string> ArtifactPathProblem(std::string_view path) {
  if (path.empty()) return "artifact record has an empty path";
  if (path[0] == '/') {
    return "artifact path " + std::string(path) +
           " is absolute; it must stay inside the card directory";
  }
  for (size_t i = 0; i <= path.size();) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (path.substr(i, j - i) == "..") {
      return "artifact path " + std::string(path) + " leaves the card directory";
    }
    i = j + 1;
  }
  return std::nullopt;
}

Result<std::string> ReadArtifact(FileSystem& fs, const std::string& card_dir,
                                 std::string_view path) {
  if (auto problem = ArtifactPathProblem(path)) return Status::Error("EACCES", *problem);
  return fs.ReadFileBeneath(card_dir, std::string(path));
}

const ArtifactRecord* Card::NewestOfKind(const std::string& kind) const {
  for (auto it = artifact_records.rbegin(); it != artifact_records.rend(); ++it) {
    if (it->kind && *it->kind == kind) return &*it;
  }
  return nullptr;
}

Store::Store(std::string root, FileSystem& fs, Clock& clock, Warnings& warnings)
    : root_(AbsolutePath(root)), fs_(fs), clock_(clock), warnings_(warnings) {
  RegisterNoSymlinkRoot(root_);
}

std::string Store::workspace() const { return ParentPath(root_); }

Result<CardFile> ReadCardText(FileSystem& fs, const std::string& id, const std::string& dir,
                              bool* lost) {
  const std::string path = JoinPath(dir, "card.md");
  auto raw = fs.ReadFile(path);
  if (!raw.ok()) {
    if (!IsAbsent(raw.status())) return raw.status();
    if (lost) *lost = true;
    return CardFile{id, "", std::nullopt, std::nullopt};
  }
  return ParseCardFile(path, *raw);
}

std::string Store::CardDir(const std::string& id) const {
  return JoinPath(JoinPath(root_, "tasks"), id);
}

namespace {

// State shared by the store's internals; kept out of the header's private section.
struct Ctx {
  const std::string& root;
  FileSystem& fs;
  Warnings& warnings;
};

Status NotFound(const Ctx& c, const std::string& id) {
  return Status::Error("not-found", "no card " + Q(id) + " in the devflow root " + c.root +
                                        "; run `devflow-gate card list` to see the card ids");
}

// The YYYY-MM bucket holding an archived card of this id, if any.
Result<std::optional<std::string>> ArchivedMonth(const Ctx& c, const std::string& id) {
  std::string archive = JoinPath(c.root, "archive");
  auto months = c.fs.ListDir(archive);
  if (!months.ok()) {
    if (IsAbsent(months.status())) return std::optional<std::string>();
    return months.status();
  }
  for (const std::string& month : *months) {
    auto kind = c.fs.Kind(JoinPath(JoinPath(archive, month), id));
    if (!kind.ok()) return kind.status();
    if (*kind == FileKind::kDir) return std::optional<std::string>(month);
  }
  return std::optional<std::string>();
}

// The rejection for an id whose active directory holds no journal.
Status Missing(const Ctx& c, const std::string& id) {
  auto month = ArchivedMonth(c, id);
  if (!month.ok()) return month.status();
  if (*month) {
    return Status::Error("archived", "card " + id + " is archived (archive/" + **month + "/" + id +
                                         "); restore it before working on it again");
  }
  return NotFound(c, id);
}

// A journal as read: its bytes and their fold.
struct ReadJournalResult {
  std::shared_ptr<const FileBytes> bytes;
  CardState state;
};

// The journal's bytes, read into a buffer that is not zero-filled first (ReadFileBytes).
Result<std::shared_ptr<const FileBytes>> ReadJournalBytes(const Ctx& c, const std::string& id,
                                                          const std::string& path) {
  auto content = c.fs.ReadFileBytes(path);
  if (!content.ok()) {
    if (IsAbsent(content.status())) return Missing(c, id);
    return content.status();
  }
  return std::make_shared<const FileBytes>(std::move(*content));
}

Result<ReadJournalResult> ReadJournal(const Ctx& c, const std::string& id, const std::string& dir,
                                      FoldKeeps keeps = FoldKeeps::kEntries) {
  std::string path = JoinPath(dir, "journal.jsonl");
  auto bytes = ReadJournalBytes(c, id, path);
  if (!bytes.ok()) return bytes.status();
  auto state = FoldJournal(path, *bytes, keeps);
  if (!state.ok()) return state.status();
  return ReadJournalResult{std::move(*bytes), std::move(*state)};
}

// The fold a card was read with, taken out of it (its entries move, nothing is copied).
CardState StateOf(Card&& card) {
  CardState s;
  s.stage = card.stage;
  s.stage_revision = card.stage_revision;
  s.blocked_from = card.blocked_from;
  s.parent = std::move(card.parent);
  s.service_class = card.service_class;
  s.abandoned = card.abandoned;
  s.archived = card.archived;
  s.created_at = std::move(card.created_at);
  s.updated_at = std::move(card.updated_at);
  s.artifact_records = std::move(card.artifact_records);
  s.record_bytes = std::move(card.record_bytes);
  s.entries = std::move(card.entries);
  s.keeps = card.keeps;
  return s;
}

// Re-reads a journal already read and folded as `known`: when the file is `known`'s bytes
// followed by whole appended lines, only those lines are folded onto `known`'s fold; any
// other file (shorter, changed before its end, `known` ending mid-line or empty) is folded
// whole, so a journal rewritten behind our back is never judged by a stale fold. The fold keeps
// entries as `known`'s did.
Result<ReadJournalResult> ReadJournalAgain(const Ctx& c, const std::string& id,
                                           const std::string& dir, ReadJournalResult known) {
  std::string path = JoinPath(dir, "journal.jsonl");
  auto bytes = ReadJournalBytes(c, id, path);
  if (!bytes.ok()) return bytes.status();
  const std::string_view now = (*bytes)->view();
  const std::string_view then = known.bytes ? known.bytes->view() : std::string_view();
  const bool appended_only = known.bytes && !then.empty() && then.back() == '\n' &&
                             known.state.stage_revision > 0 && now.size() >= then.size() &&
                             now.compare(0, then.size(), then) == 0;
  if (!appended_only) {
    auto state = FoldJournal(path, *bytes, known.state.keeps);
    if (!state.ok()) return state.status();
    return ReadJournalResult{std::move(*bytes), std::move(*state)};
  }
  // The tail's records keep copies of their strings: the state's records view the bytes it was
  // folded from, which it pins, so a chain of commits never pins more than those.
  if (Status s = FoldJournalFrom(path, now, then.size(), known.state); !s.ok()) return s;
  return ReadJournalResult{std::move(*bytes), std::move(known.state)};
}

// The journal a card was read from with its fold, taken out of the card (nothing is copied);
// empty (so re-read whole) for a card of another root or id, or not read from disk.
ReadJournalResult JournalOf(const Ctx& c, const std::string& id, std::optional<Card> card) {
  if (!card || !card->journal || card->id != id || card->root != c.root) return {};
  std::shared_ptr<const FileBytes> bytes = std::move(card->journal);
  return ReadJournalResult{std::move(bytes), StateOf(std::move(*card))};
}

void WarnDrift(const Ctx& c, const std::string& id, const std::string& path, const CardFile& f,
               const CardState& state) {
  std::string drifts;
  auto add = [&](const std::string& d) { drifts += (drifts.empty() ? "" : "; ") + d; };
  if (f.stage && *f.stage != LocationName(state.stage)) {
    add("stage " + Q(*f.stage) + " (journal: " + Q(LocationName(state.stage)) + ")");
  }
  std::string rev = std::to_string(state.stage_revision);
  if (f.stage_revision && *f.stage_revision != rev) {
    add("stageRevision " + *f.stage_revision + " (journal: " + rev + ")");
  }
  if (drifts.empty()) return;
  // One commit behind while a commit holds the lock is that commit between its journal append
  // and its projection rewrite, not drift (trial19 3a: hundreds of warnings under concurrent
  // moves). A lock left by a crash in that window is reported by every move (write-contended).
  const std::string behind = std::to_string(state.stage_revision - 1);
  if (f.stage_revision && *f.stage_revision == behind) {
    auto lock = c.fs.Kind(JoinPath(ParentPath(path), "commit.lock"));
    if (lock.ok() && *lock == FileKind::kFile) return;
  }
  c.warnings.Warn("devflow: projection drift for card " + id + " at " + path + ": " + drifts +
                  "; the journal wins");
}

// Reads card.md for a card whose journal folded; a lost file degrades to title = id.
Result<CardFile> ReadCardFile(const Ctx& c, const std::string& id, const std::string& path,
                              bool warn_lost) {
  bool lost = false;
  Result<CardFile> file = ReadCardText(c.fs, id, ParentPath(path), &lost);
  if (lost && warn_lost) {
    c.warnings.Warn("devflow: card " + id + " lost its projection file " + path +
                    "; serving the journal-only view");
  }
  return file;
}

Result<Card> Load(const Ctx& c, const std::string& id, const std::string& dir, bool warn_drift,
                  FoldKeeps keeps = FoldKeeps::kEntries) {
  if (!IsValidCardId(id)) return NotFound(c, id);
  auto journal = ReadJournal(c, id, dir, keeps);
  if (!journal.ok()) return journal.status();
  std::string path = JoinPath(dir, "card.md");
  auto file = ReadCardFile(c, id, path, true);
  if (!file.ok()) return file.status();
  if (warn_drift) WarnDrift(c, id, path, *file, journal->state);
  Card card = CardOf(c.root, id, dir, std::move(journal->state), std::move(file->title),
                     std::move(file->body));
  card.journal = std::move(journal->bytes);
  return card;
}

// Rewrites card.md from the committed state; failure only warns (the journal is the commit).
// Returns the title and body the card has now: the rendered file's (its body is the old
// file's, byte for byte), the old file's when it cannot be rendered, or the card id and an
// empty body when there is no readable card.md. People edit card.md's title and body while
// the gate runs: the rename happens only while the file still holds the bytes the projection
// was rendered from (Replace::kIfUnchanged; a lost file is only rematerialised while nothing
// is there, kNever), so an edit that lands between the read and the rename is read again and
// kept (verify19: 10 of 159 edits were lost). After kProjectionTries edits in a row the file is
// left as edited: its front matter may lag the journal, which wins (a drift warning).
CardFile RewriteProjection(const Ctx& c, const std::string& id, const std::string& dir,
                           const CardState& state) {
  constexpr int kProjectionTries = 4;
  std::string path = JoinPath(dir, "card.md");
  Projection p = ProjectionOf(state);
  auto warn = [&](const std::string& why) {
    c.warnings.Warn("devflow: failed to rewrite the projection for card " + id + ": " + why +
                    "; the journal remains authoritative");
  };
  CardFile now{id, "", std::nullopt, std::nullopt};
  for (int tries = 1;; ++tries) {
    auto raw = c.fs.ReadFile(path);
    std::string next;
    Replace replace = Replace::kIfUnchanged;
    now = CardFile{id, "", std::nullopt, std::nullopt};
    if (!raw.ok()) {
      if (!IsAbsent(raw.status())) {
        warn(raw.status().message());
        return now;
      }
      next = NewCardFile(id, "", p);  // rematerialise a lost projection (reference §1.9)
      replace = Replace::kNever;
    } else {
      auto rendered = RenderProjection(path, *raw, p, &now);
      if (!rendered.ok()) {
        warn(rendered.status().message());
        auto parsed = ParseCardFile(path, *raw);
        return parsed.ok() ? *parsed : CardFile{id, "", std::nullopt, std::nullopt};
      }
      next = std::move(*rendered);
    }
    Status s = c.fs.WriteFileAtomic(path, next, replace, raw.ok() ? *raw : std::string_view{});
    const bool raced = s.code() == "ESTALE" || (replace == Replace::kNever && s.code() == "EEXIST");
    if (!raced || tries == kProjectionTries) {
      if (raced) {
        warn("card.md changed " + std::to_string(tries) +
             " times while its projection was rewritten; left as edited, its front matter may "
             "lag");
      } else if (!s.ok()) {
        warn(s.message());
      }
      return now;
    }
  }
}

Status Refuse(const char* code, std::string message) {
  return Status::Error(code, std::move(message));
}

// Appends `entry` after proving the fold accepts it; `state` becomes the state after it. On a
// failed append `state` already holds the entry: callers discard it (nothing was committed).
Status AppendEntry(const Ctx& c, const std::string& dir, CardState& state,
                   const JournalEntry& entry) {
  if (Status s = ApplyEntry(state, entry); !s.ok()) {
    return Status::Error(
        "corrupt", "refusing to append a journal entry the fold would reject: " + s.message());
  }
  std::string line = EncodeJournalLine(entry) + "\n";
  return c.fs.AppendDurable(JoinPath(dir, "journal.jsonl"), line);
}

Status RefuseOffBoard(const std::string& id, const CardState& state) {
  if (state.abandoned) {
    return Refuse("archived", "card " + id + " was abandoned, which is terminal; open a new card");
  }
  if (state.archived) {
    return Refuse("archived", "card " + id + " is archived; restore it before working on it again");
  }
  return Status::Ok();
}

}  // namespace

Result<Card> Store::Read(const std::string& id, FoldKeeps keeps) const {
  Ctx c{root_, fs_, warnings_};
  if (!IsValidCardId(id)) return NotFound(c, id);
  return Load(c, id, CardDir(id), true, keeps);
}

Result<bool> IsInterruptedCreation(FileSystem& fs, const std::string& dir) {
  auto names = fs.ListDir(dir);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    const bool temp = name.size() > 5 && name[0] == '.' && name.ends_with(".tmp");
    if (!temp) return false;  // journal.jsonl, card.md, artifacts/: a card (or what is left of one)
  }
  return true;
}

Status LinkedCardDir(const std::string& dir) {
  return Status::Error("ELOOP", dir +
                                    " is a symbolic link, not a card directory (ELOOP): the gate "
                                    "never follows a link below the root, so this card is neither "
                                    "read nor moved; replace the link with the card's own "
                                    "directory");
}

Result<CardListing> Store::List() const {
  Ctx c{root_, fs_, warnings_};
  CardListing listing;
  auto names = fs_.ListDir(JoinPath(root_, "tasks"));
  if (!names.ok()) {
    if (IsAbsent(names.status())) return listing;
    return names.status();
  }
  for (const std::string& name : *names) {
    if (!IsValidCardId(name)) continue;
    const std::string dir = CardDir(name);
    auto kind = fs_.Kind(dir);
    if (!kind.ok()) {
      listing.unlisted.push_back({name, kind.status()});
      continue;
    }
    if (*kind == FileKind::kSymlink) {
      listing.unlisted.push_back({name, LinkedCardDir(dir)});
      continue;
    }
    if (*kind != FileKind::kDir) continue;
    if (Result<bool> interrupted = IsInterruptedCreation(fs_, dir);
        interrupted.ok() && *interrupted) {
      warnings_.Warn("devflow: " + dir +
                     " is an interrupted card creation (no journal): no card was created; "
                     "remove it (rm -r " +
                     dir + ")");
      continue;
    }
    auto card = Load(c, name, dir, true);
    if (!card.ok()) {
      listing.unlisted.push_back({name, card.status()});
      continue;
    }
    // Off the board from the abandon append on, even before the directory moves (upstream).
    if (card->abandoned) continue;
    listing.cards.push_back(std::move(*card));
  }
  return listing;
}

Result<Card> Store::Create(const CreateRequest& request) {
  if (JsTrim(request.title).empty()) {
    return Refuse("empty-title", "a card requires a non-empty title; pass --title");
  }
  std::string slug = request.slug ? *request.slug : SlugFromTitle(request.title);
  if (!IsValidSlug(slug)) {
    return Refuse("invalid-slug", "slug " + Q(slug) +
                                      " must be lowercase letters, digits, and dashes, starting "
                                      "alphanumeric");
  }
  std::string tasks = JoinPath(root_, "tasks");
  if (Status s = fs_.CreateDirs(tasks); !s.ok()) return s;

  std::string id;
  for (int attempt = 0; attempt < kCreateAttempts && id.empty(); ++attempt) {
    double highest = 0;
    auto consider = [&](const std::string& dir, const std::string& name) -> Status {
      const std::optional<double> seq = SequenceOf(name);
      if (!seq || !(*seq > highest)) return Status::Ok();
      auto kind = fs_.Kind(JoinPath(dir, name));  // upstream counts directories only
      if (!kind.ok()) return kind.status();
      if (*kind == FileKind::kDir) highest = *seq;
      return Status::Ok();
    };
    auto active = fs_.ListDir(tasks);
    if (!active.ok()) return active.status();
    for (const std::string& name : *active) {
      if (Status s = consider(tasks, name); !s.ok()) return s;
    }
    std::string archive = JoinPath(root_, "archive");
    auto months = fs_.ListDir(archive);
    if (!months.ok() && !IsAbsent(months.status())) return months.status();
    if (months.ok()) {
      for (const std::string& month : *months) {
        const std::string bucket = JoinPath(archive, month);
        auto filed = fs_.ListDir(bucket);
        if (!filed.ok()) {
          if (IsAbsent(filed.status())) continue;
          return filed.status();
        }
        for (const std::string& name : *filed) {
          if (Status s = consider(bucket, name); !s.ok()) return s;
        }
      }
    }
    std::string candidate = Padded(highest + 1) + "-" + slug;
    if (!IsValidCardId(candidate)) {
      // From 1e21 on, String() writes an exponent (or "Infinity"): upstream would create a
      // directory that neither host lists. Refuse instead of hiding a card.
      return Status::Error("corrupt", "the next card sequence after " + JsNumberString(highest) +
                                          " in " + tasks + " is " + Padded(highest + 1) +
                                          ", which is not a card id; renumber the cards");
    }
    const std::string candidate_dir = JoinPath(tasks, candidate);
    Status made = fs_.CreateDirExclusive(candidate_dir);
    if (made.ok()) {
      id = candidate;
    } else if (made.code() != "EEXIST") {
      return made;
    } else if (auto kind = fs_.Kind(candidate_dir); !kind.ok()) {
      return kind.status();
    } else if (*kind != FileKind::kDir && *kind != FileKind::kNone) {
      // Not a rival's card (the scan counts directories only): no retry can get past it
      // (trial11 m3 read "lost 5 sequence races").
      return Refuse("exists", "cannot create card directory " + candidate_dir + ": it exists as " +
                                  (*kind == FileKind::kSymlink ? "a symbolic link"
                                                               : "something not a directory") +
                                  ", and the gate follows no symbolic link below the devflow root; "
                                  "remove or rename it and retry the creation");
    }
  }
  if (id.empty()) {
    return Refuse("exists", "allocating a card directory for slug " + Q(slug) + " lost " +
                                std::to_string(kCreateAttempts) +
                                " sequence races; retry the creation");
  }

  std::string dir = CardDir(id);
  JournalEntry created;
  created.rev = 1;
  created.at = clock_.NowIso();
  created.type = EntryType::kCreated;
  created.by = request.by;
  if (request.service_class != ServiceClass::kStandard)
    created.service_class = request.service_class;
  CardState state;
  if (Status s = ApplyEntry(state, created); !s.ok()) {
    return Status::Error("corrupt",
                         "refusing to write a created entry the fold would reject: " + s.message());
  }
  // The journal's first line is the commit point of a creation.
  std::string journal = JoinPath(dir, "journal.jsonl");
  Status journaled = fs_.WriteFileAtomic(journal, EncodeJournalLine(created) + "\n");
  if (!journaled.ok()) {
    // A failure after the rename (the directory's fsync) leaves the journal in place: the card
    // exists, only its durability is in doubt, and the error must say so (issue 7, trial).
    auto placed = fs_.Kind(journal);
    if (!placed.ok() || *placed != FileKind::kFile) {
      // No card was created (the atomic replace unlinked its temp file): give the reserved
      // directory back, so it neither shows as a card without a journal nor holds the number.
      const Status& s = journaled;
      std::string message =
          "card " + id + " was not created: " + s.message() + "; " + WriteFix(s.code(), dir);
      if (Status undone = fs_.RemoveDir(dir); undone.ok()) {
        message += " (the reserved directory " + dir + " was removed)";
      } else {
        message += "; the reserved directory could not be removed (" + undone.message() +
                   "): remove it by hand (rm -r " + dir + ")";
      }
      return Status::Error(s.code(), std::move(message));
    }
  }
  const std::string& title = request.title;
  if (Status s = fs_.WriteFileAtomic(JoinPath(dir, "card.md"),
                                     NewCardFile(title, request.body, ProjectionOf(state)));
      !s.ok()) {
    warnings_.Warn("devflow: failed to write the projection for card " + id + ": " + s.message() +
                   "; the journal remains authoritative");
  }
  if (!journaled.ok()) {
    return Status::Error(journaled.code(),
                         "card " + id + " was created (its journal " + journal +
                             " is in place) but may not survive a crash: " + journaled.message() +
                             "; do not create it again: check the disk "
                             "holding " +
                             dir + ", then devflow-gate card show " + id);
  }
  return CardOf(root_, id, dir, std::move(state), title, std::string(JsTrim(request.body)));
}

namespace {

// The per-card `commit.lock` held for one scope (reference §3.4). The destructor removes it on
// every way out of the scope, an exception included, so no path of ours leaves a lock behind.
class CommitLock {
 public:
  // Tries once: ok, or the CreateExclusive error ("EEXIST" when another commit holds it).
  static Result<std::unique_ptr<CommitLock>> TryTake(FileSystem& fs, Warnings& warnings,
                                                     std::string path, std::string id) {
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (Status taken = fs.CreateExclusive(path, pid); !taken.ok()) return taken;
    return std::unique_ptr<CommitLock>(
        new CommitLock(fs, warnings, std::move(path), std::move(id)));
  }
  CommitLock(const CommitLock&) = delete;
  CommitLock& operator=(const CommitLock&) = delete;
  ~CommitLock() {
    Status released = fs_.RemoveFile(path_);
    if (!released.ok() && !IsAbsent(released)) {
      warnings_.Warn("devflow: could not remove the commit lock " + path_ + ": " +
                     released.message() + "; remove it by hand or card " + id_ + " stays locked");
    }
  }

 private:
  CommitLock(FileSystem& fs, Warnings& warnings, std::string path, std::string id)
      : fs_(fs), warnings_(warnings), path_(std::move(path)), id_(std::move(id)) {}
  FileSystem& fs_;
  Warnings& warnings_;
  std::string path_;
  std::string id_;
};

}  // namespace

Status Store::WithCommitLock(const std::string& id, const std::string& action_hint,
                             const std::function<Status()>& body) {
  std::string lock = JoinPath(CardDir(id), "commit.lock");
  // The caller's deadline (host/deadline.h) that passes while this waits for the lock ends the
  // wait: nothing is committed for a caller who has given up (trial20: a move with a 300 ms
  // deadline committed 2 s later, when the lock came free). A commit that took the lock at once
  // is not cut short here.
  const auto deadline_passed = [&] {
    const auto deadline = AttemptDeadline();
    if (!deadline || std::chrono::steady_clock::now() < *deadline) return Status::Ok();
    return Refuse("write-contended",
                  "card " + id +
                      ": the caller's deadline passed while waiting for the commit "
                      "lock (" +
                      lock + ", held by another commit); nothing was written, so " + action_hint +
                      " with more time (`move --timeout MS`, the request's "
                      "deadlineMs or X-Devflow-Deadline-Ms, devflow-gate-cordis's timeoutMs)");
  };
  for (int attempt = 0; attempt < kLockAttempts; ++attempt) {
    Result<std::unique_ptr<CommitLock>> held = CommitLock::TryTake(fs_, warnings_, lock, id);
    if (held.ok()) {
      // `held` releases the lock however this ends.
      if (attempt > 0) {
        if (Status late = deadline_passed(); !late.ok()) return late;
      }
      return body();
    }
    // A lock is never broken by age (reference §3.4): only EEXIST is worth waiting on.
    if (held.status().code() != "EEXIST") return held.status();
    if (Status late = deadline_passed(); !late.ok()) return late;
    if (attempt + 1 < kLockAttempts) Pause(kLockRetry);  // the server: only this attempt waits
  }
  // Never broken here, however it looks: a pid not running on this machine may be a commit in
  // another container or on another host sharing the root. The message says what is known.
  const CommitLockHolder holder = ReadCommitLockHolder(fs_, lock);
  if (holder.kind == CommitLockHolder::Kind::kPid && !WriterAlive(holder.pid)) {
    return Refuse("write-contended",
                  "card " + id + " stayed locked by another commit (" + lock +
                      ") whose writer, pid " + std::to_string(holder.pid) +
                      ", is not running on this machine: a commit that ended without releasing "
                      "its lock (killed mid-commit); nothing was written. A lock is never broken "
                      "by age: if no devflow process in another container or on another machine "
                      "uses this root, remove " +
                      lock + ", then " + action_hint);
  }
  return Refuse("write-contended",
                "card " + id + " stayed locked by another commit (" + lock +
                    "); nothing was written, so " + action_hint +
                    "; if no devflow process is running, the lock is stale: remove " + lock);
}

CommitLockHolder ReadCommitLockHolder(FileSystem& fs, const std::string& lock) {
  CommitLockHolder holder;
  Result<std::string> text = fs.ReadFile(lock);
  if (!text.ok()) {
    holder.text = text.status().message();
    return holder;
  }
  std::string content = std::move(*text);
  while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) content.pop_back();
  const bool numeric =
      !content.empty() && content.size() <= 10 &&
      std::all_of(content.begin(), content.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!numeric) {
    holder.kind = CommitLockHolder::Kind::kNoPid;
    holder.text = std::move(content);
    return holder;
  }
  holder.kind = CommitLockHolder::Kind::kPid;
  holder.pid = std::stoll(content);
  holder.text = std::move(content);
  return holder;
}

Result<Card> Store::AddArtifact(const ArtifactRequest& request) {
  Ctx c{root_, fs_, warnings_};
  const std::string& id = request.id;
  if (!IsValidCardId(id)) return NotFound(c, id);
  if (!IsValidKind(request.kind)) {
    return Refuse("invalid-kind", "artifact kind " + Q(request.kind) +
                                      " must be lowercase letters, digits, and dashes, starting "
                                      "alphanumeric");
  }
  std::string dir = CardDir(id);
  auto current = ReadJournal(c, id, dir);
  if (!current.ok()) return current.status();
  auto check = [&](const CardState& state) -> Status {
    if (Status s = RefuseOffBoard(id, state); !s.ok()) return s;
    if (state.stage_revision != request.expected_revision) {
      return Refuse("revision-mismatch",
                    "card " + id + " is at revision " + std::to_string(state.stage_revision) +
                        ", not the expected " + std::to_string(request.expected_revision) +
                        "; re-read the card and retry");
    }
    if (state.stage == Location::kBlocked || state.stage == Location::kDone) {
      return Refuse("illegal-edge", "card " + id + " cannot register an artifact while " +
                                        Q(LocationName(state.stage)));
    }
    return Status::Ok();
  };
  if (Status s = check(current->state); !s.ok()) return s;

  // The file lands before the lock; the journal append stays the only commit point. A commit
  // that then loses the revision re-check (or finds the lock held) leaves an unreferenced file
  // that a same-revision retry overwrites (reference §1.8): the rival may be registering this
  // very name. A fault of this registration's own (the write, taking the lock, reading or
  // appending the journal) removes the file it placed, so artifacts/ never shows an
  // unregistered revision after a failed `artifact add` (issue 7, trial).
  std::string name = std::to_string(current->state.stage_revision + 1) + "-" + request.kind + ".md";
  std::string artifacts = JoinPath(dir, "artifacts");
  const std::string placed = JoinPath(artifacts, name);
  auto give_back = [&](const Status& failed) -> Status {
    auto kind = fs_.Kind(placed);
    if (!kind.ok() || *kind != FileKind::kFile) return failed;  // the temp was unlinked
    Status undone = fs_.RemoveFile(placed);
    return Status::Error(
        failed.code(),
        failed.message() +
            (undone.ok()
                 ? " (the unregistered artifact file " + placed + " was removed)"
                 : "; the unregistered artifact file " + placed + " could not be removed (" +
                       undone.message() + "): remove it by hand (rm " + placed + ")"));
  };
  if (Status s = fs_.CreateDirs(artifacts); !s.ok()) return s;
  // A failure after the rename (the directory fsync) leaves the file in place: given back too.
  if (Status s = fs_.WriteFileAtomic(placed, request.content); !s.ok()) return give_back(s);

  std::optional<CardState> committed;
  CardFile file;
  bool locked = false;  // the body ran: its failures are settled there, under the lock
  Status s = WithCommitLock(id, "retry the registration", [&]() -> Status {
    locked = true;
    auto read = ReadJournalAgain(c, id, dir, std::move(*current));
    if (!read.ok()) return give_back(read.status());
    CardState* settled = &read->state;
    if (Status refused = check(*settled); !refused.ok()) return refused;
    JournalEntry entry;
    entry.rev = settled->stage_revision + 1;
    entry.at = clock_.NowIso();
    entry.type = EntryType::kArtifact;
    entry.path = "artifacts/" + name;
    entry.stage = settled->stage;
    entry.by = request.by;
    entry.kind = request.kind;
    if (Status appended = AppendEntry(c, dir, *settled, entry); !appended.ok()) {
      // Kept when the entry may be in the journal after all (a close that failed after the
      // sync, a partial line that could not be cut back): only a journal read back without it
      // proves the file unregistered.
      auto after = ReadJournal(c, id, dir);
      if (!after.ok()) return appended;
      for (const ArtifactRecord& record : after->state.artifact_records) {
        if (record.path == entry.path) return appended;
      }
      return give_back(appended);
    }
    file = RewriteProjection(c, id, dir, *settled);
    committed = std::move(*settled);
    return Status::Ok();
  });
  if (!s.ok()) {
    // Taking the lock failed: contended (a rival holds it and may commit this very name: kept),
    // or a fault taking it (no writer held it: given back).
    if (locked || s.code() == "write-contended") return s;
    return give_back(s);
  }
  return CardOf(root_, id, dir, std::move(*committed), std::move(file.title), std::move(file.body));
}

Result<Card> Store::CommitTransition(const TransitionCommit& commit,
                                     std::optional<Card> decided_on) {
  Ctx c{root_, fs_, warnings_};
  const std::string& id = commit.id;
  if (!IsValidCardId(id)) return NotFound(c, id);
  std::string dir = CardDir(id);
  auto kind = fs_.Kind(dir);
  if (!kind.ok()) return kind.status();
  if (*kind != FileKind::kDir) return Missing(c, id);

  std::optional<std::string> reason = commit.reason;
  if (reason && reason->empty()) reason.reset();
  std::optional<Gate> gate = commit.gate;
  if (gate && !gate->approved_by && gate->checks.empty()) gate.reset();
  const std::string to(LocationName(commit.to));

  std::optional<CardState> committed;
  CardFile file;
  ReadJournalResult known = JournalOf(c, id, std::move(decided_on));
  Status s = WithCommitLock(id, "retry the move", [&]() -> Status {
    auto read = ReadJournalAgain(c, id, dir, std::move(known));
    if (!read.ok()) return read.status();
    CardState* settled = &read->state;
    if (Status refused = RefuseOffBoard(id, *settled); !refused.ok()) return refused;
    if (settled->stage_revision != commit.expected_revision) {
      return Refuse("revision-mismatch", "card " + id + " moved to revision " +
                                             std::to_string(settled->stage_revision) +
                                             " while the transition to " + Q(to) +
                                             " was being decided; re-read and retry");
    }
    // Same revision means same location, so these only fail for a caller that decided
    // against a state it never read; re-checked anyway because the append must be legal.
    if (settled->stage != commit.from ||
        !IsLegalTransition(settled->stage, commit.to, settled->blocked_from,
                           settled->service_class)) {
      return Refuse("illegal-edge", "card " + id + " cannot move from " +
                                        Q(LocationName(settled->stage)) + " to " + Q(to));
    }
    if (IsReworkEdge(settled->stage, commit.to) && (!reason || JsTrim(*reason).empty())) {
      return Refuse("reason-required",
                    "reworking card " + id + " from " + Q(LocationName(settled->stage)) +
                        " back to " + Q(to) +
                        " requires a reason so the next holder knows what to fix; pass --reason");
    }
    if (commit.before_append) {
      if (Status agreed = commit.before_append(); !agreed.ok()) return agreed;
    }
    JournalEntry entry;
    entry.rev = settled->stage_revision + 1;
    entry.at = commit.at.empty() ? clock_.NowIso() : commit.at;
    entry.type = EntryType::kTransition;
    entry.from = settled->stage;
    entry.to = commit.to;
    entry.by = commit.by;
    entry.reason = reason;
    entry.gate = gate;
    if (Status appended = AppendEntry(c, dir, *settled, entry); !appended.ok()) return appended;
    // Rewritten under the lock so two committers cannot leave an older projection last.
    file = RewriteProjection(c, id, dir, *settled);
    committed = std::move(*settled);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return CardOf(root_, id, dir, std::move(*committed), std::move(file.title), std::move(file.body));
}

}  // namespace devflow

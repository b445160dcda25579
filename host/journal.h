// The card journal (`journal.jsonl`): entry types, line decoding/encoding and the strict fold.
// Source: reference/devflow-upstream.md §1.6, §1.7, §1.3.
// Lines are encoded exactly as the TypeScript store's JSON.stringify({rev, ...entry}) would, so
// the bytes are identical for the same entry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/stages.h"
#include "host/status.h"

namespace devflow {

class FileBytes;  // host/os.h

/// DevActor: {kind:"human"|"agent"|"command", name?, session?}. Empty optional strings are
/// rejected on decode. Encoded field order: kind, name, session.
struct Actor {
  std::string kind;  // "human", "agent" or "command"
  std::optional<std::string> name;
  std::optional<std::string> session;
  bool operator==(const Actor&) const = default;
};

/// GateCheck: {by, verdict:"allowed", summary?}. Only permitting checks are ever recorded.
struct GateCheck {
  Actor by;
  std::optional<std::string> summary;
  bool operator==(const GateCheck&) const = default;
};

/// The `gate` field of a transition: approvedBy and/or a non-empty checks list.
struct Gate {
  std::optional<Actor> approved_by;
  std::vector<GateCheck> checks;
  bool operator==(const Gate&) const = default;
};

enum class EntryType {
  kCreated,
  kTransition,
  kArtifact,
  kAbandoned,
  kArchived,
  kRestored,
  kClaimExpired
};
std::string_view EntryTypeName(EntryType t);

/// One journal line. Which optional fields are meaningful depends on `type`; the written field
/// order per type is (reference §1.7):
///   created:       rev, at, type, by, parent?, serviceClass? (only when not standard)
///   transition:    rev, at, type, from, to, by?, reason?, gate?
///   artifact:      rev, at, type, path, stage, by?, kind?
///   abandoned:     rev, at, type, by, reason
///   archived:      rev, at, type, by, reason?
///   restored:      rev, at, type, by, reason?
///   claim-expired: rev, at, type, previousOwner, by
struct JournalEntry {
  int64_t rev = 0;
  std::string at;
  EntryType type = EntryType::kCreated;
  std::optional<Actor> by;
  std::optional<std::string> parent;          // created
  std::optional<ServiceClass> service_class;  // created
  std::optional<Location> from;               // transition
  std::optional<Location> to;                 // transition
  std::optional<std::string> reason;          // transition, abandoned, archived, restored
  std::optional<Gate> gate;                   // transition
  std::string path;                           // artifact (relative to the card directory)
  std::optional<Location> stage;              // artifact (a real stage, never blocked)
  std::optional<std::string> kind;            // artifact
  std::optional<Actor> previous_owner;        // claim-expired (a DevActor upstream)
};

/// Compact JSON of one entry, without the trailing newline, e.g.
/// {"rev":3,"at":"2026-09-16T08:00:00.000Z","type":"transition","from":"designing","to":"ready","by":{"kind":"human"},"gate":{"checks":[{"by":{"kind":"agent"},"verdict":"allowed","summary":"ok"}]}}
/// An empty `gate` (no approvedBy, no checks) is omitted.
std::string EncodeJournalLine(const JournalEntry& entry);

/// `{"kind":…,"name"?,"session"?}` exactly as a journal line writes an actor.
std::string EncodeActorJson(const Actor& actor);
/// `[{"by":…,"verdict":"allowed","summary"?},…]` exactly as a journal line writes gate.checks
/// (used by `--json` output and the decision ledger, so all three agree byte for byte).
std::string EncodeChecksJson(const std::vector<GateCheck>& checks);

/// Decodes one line. On failure the Status (code "corrupt") message is the bare problem,
/// e.g. `actor field "kind" must be human, agent, or command`; the caller prefixes
/// `<path>:<line>: `.
Result<JournalEntry> DecodeJournalLine(std::string_view line);

/// DecodeJournalLine's first step alone, for the tests that hold it to the general decoder:
/// true when `line` is exactly in the shape the stores write (EncodeJournalLine's bytes: no
/// whitespace, fields in the order above, printable-ASCII strings without escapes) and decodes,
/// with the entry in `e` (which must be default-constructed); false otherwise (no message: the
/// general decoder decides and words the refusal), `e` then unspecified.
bool DecodeStoreShapedLine(std::string_view line, JournalEntry& e);

/// One artifact registration as folded from the journal. `path` and `kind` view bytes that the
/// CardState (or Card) holding the record keeps alive in its RecordBytes: a record, or a view
/// taken from one, must not outlive its holder (copy the strings out to keep them longer). A
/// record built by hand views whatever its builder gives it.
struct ArtifactRecord {
  std::string_view path;                 // relative to the card directory
  std::optional<std::string_view> kind;  // absent for path-only registrations
  int64_t rev = 0;
  Location stage = Location::kDraft;
  bool operator==(const ArtifactRecord&) const = default;
};

/// The bytes a fold's artifact records view (issue 11 item 1: no allocation per record): the
/// journal buffer the fold read, pinned whole (FoldJournal over FileBytes), and copies, kept in
/// chunks here, of the strings that are not in a pinned buffer (a fold of borrowed bytes, a
/// line the general decoder read, an applied entry, the lines FoldJournalFrom folds). Nothing
/// here changes once a record views it, so a copy of a holder shares what it holds (records
/// copied with it stay valid, from any thread) and keeps its later copies in chunks of its own.
class RecordBytes {
 public:
  RecordBytes() = default;
  RecordBytes(const RecordBytes& other) : held_(other.held_) {}
  RecordBytes& operator=(const RecordBytes& other);
  RecordBytes(RecordBytes&& other) noexcept;
  RecordBytes& operator=(RecordBytes&& other) noexcept;
  ~RecordBytes() = default;

  /// Keeps `bytes` alive as long as this holder or a copy of it.
  void Pin(std::shared_ptr<const void> bytes);
  /// A view of a copy of `s` kept here (chunks of 256 bytes doubling up to 64 KiB, or one of
  /// `s`'s size when it is larger).
  std::string_view Keep(std::string_view s);

 private:
  std::vector<std::shared_ptr<const void>> held_;  // pinned buffers and this holder's chunks
  char* free_ = nullptr;                           // the unused tail of this holder's last chunk
  size_t left_ = 0;
  size_t next_chunk_ = 256;
};

/// What a fold keeps of the lines it reads: every decoded entry (CardState::entries: `card
/// show`, the read-back after a crash), or only the state (stage, revisions, artifact records,
/// …) a decision and its commit need, so no line's entry outlives the line. Both decode and
/// fold every line by the same rules and refuse the same journals with the same messages.
enum class FoldKeeps : uint8_t { kEntries, kState };

/// The state a strict fold of a whole journal yields (reference §1.7 fold rules).
struct CardState {
  Location stage = Location::kDraft;
  int64_t stage_revision = 0;  // rev of the last entry
  std::optional<Location> blocked_from;
  std::optional<std::string> parent;
  ServiceClass service_class = ServiceClass::kStandard;
  bool abandoned = false;
  bool archived = false;
  std::string created_at;
  std::string updated_at;
  std::vector<ArtifactRecord> artifact_records;  // views `record_bytes`
  RecordBytes record_bytes;
  std::vector<JournalEntry> entries;  // every entry (FoldKeeps::kEntries), else empty
  FoldKeeps keeps = FoldKeeps::kEntries;
};

/// Folds a whole journal file's content strictly. Blank lines are skipped. A bad line fails
/// with `<path>:<line>: <problem>` (1-based line), a fold error (empty journal, rev gaps, …)
/// with `<path>: <problem>`; code "corrupt". A final line without '\n' is decoded like any
/// other (a torn half line fails to decode and names its line). `keeps` chooses whether the
/// result holds every entry or only the state (same errors either way).
/// The records' strings are copied into the state's RecordBytes: `content` may go once this
/// returns.
Result<CardState> FoldJournal(std::string_view path, std::string_view content,
                              FoldKeeps keeps = FoldKeeps::kEntries);

/// FoldJournal of `bytes->view()` (the same state, the same errors), with `bytes` pinned in the
/// state's RecordBytes: the records of lines in the store's shape folded for the state only
/// (FoldKeeps::kState, a decision's fold) view the journal's bytes instead of copying them.
Result<CardState> FoldJournal(std::string_view path, std::shared_ptr<const FileBytes> bytes,
                              FoldKeeps keeps = FoldKeeps::kEntries);

/// Folds the lines of `content` from byte `offset` on onto `state`, which must be the fold of
/// `content.substr(0, offset)` (FoldJournal's result); `offset` must be 0 or just past a '\n'.
/// Errors are FoldJournal's, with the same line numbers (counted from the file's start). On an
/// error `state` holds the entries folded before the bad line; callers discard it. The entries
/// are kept as `state.keeps` says; the new records' strings are copied into `state.record_bytes`
/// (`content` may go once this returns).
Status FoldJournalFrom(std::string_view path, std::string_view content, size_t offset,
                       CardState& state);

/// Applies one more entry to a folded state (same rules as FoldJournal); used to validate an
/// entry before it is appended. Error message is the bare problem; a refused entry leaves
/// `state` unchanged. The entry joins `state.entries` only when the state keeps entries.
Status ApplyEntry(CardState& state, const JournalEntry& entry);

}  // namespace devflow

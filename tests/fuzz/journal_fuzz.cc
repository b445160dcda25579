// Fuzzes the journal line codec and the strict fold (host/journal.h).
// Invariants beyond "no crash":
//  - a decoded line re-encodes to a line that decodes to the same entry, and that encoding is a
//    fixed point (encode(decode(encode(e))) == encode(e));
//  - a failed decode is code "corrupt" with a one-line message;
//  - a successful fold has revisions 1..n, starts with "created", ends at the last entry, and
//    re-folding its re-encoded entries (or applying them one by one with ApplyEntry) yields the
//    same state; a failed fold is code "corrupt" and names the path;
//  - the fold that keeps only the state (FoldKeeps::kState, a move's) yields the same state
//    without entries, or the same refusal word for word.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "host/journal.h"
#include "host/os.h"
#include "tests/fuzz/fuzz_check.h"

namespace devflow {
namespace {

// The encoder omits an empty gate (no approvedBy, no checks), as the header documents.
std::optional<Gate> NonEmptyGate(const std::optional<Gate>& g) {
  if (g && !g->approved_by && g->checks.empty()) return std::nullopt;
  return g;
}

bool SameEntry(const JournalEntry& a, const JournalEntry& b) {
  return a.rev == b.rev && a.at == b.at && a.type == b.type && a.by == b.by &&
         a.parent == b.parent &&
         a.service_class.value_or(ServiceClass::kStandard) ==
             b.service_class.value_or(ServiceClass::kStandard) &&
         a.from == b.from && a.to == b.to && a.reason == b.reason &&
         NonEmptyGate(a.gate) == NonEmptyGate(b.gate) && a.path == b.path && a.stage == b.stage &&
         a.kind == b.kind && a.previous_owner == b.previous_owner;
}

// Everything a fold yields but its entries.
bool SameFold(const CardState& a, const CardState& b) {
  return a.stage == b.stage && a.stage_revision == b.stage_revision &&
         a.blocked_from == b.blocked_from && a.parent == b.parent &&
         a.service_class == b.service_class && a.abandoned == b.abandoned &&
         a.archived == b.archived && a.created_at == b.created_at && a.updated_at == b.updated_at &&
         a.artifact_records == b.artifact_records;
}

bool SameState(const CardState& a, const CardState& b) {
  if (a.entries.size() != b.entries.size()) return false;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    if (!SameEntry(a.entries[i], b.entries[i])) return false;
  }
  return SameFold(a, b);
}

void CheckLine(std::string_view line) {
  Result<JournalEntry> entry = DecodeJournalLine(line);
  if (!entry.ok()) {
    DG_FUZZ_CHECK(entry.status().code() == "corrupt", "a line decode error is \"corrupt\"");
    DG_FUZZ_CHECK(entry.status().message().find('\n') == std::string::npos,
                  "a line decode error is one line");
    return;
  }
  const std::string encoded = EncodeJournalLine(*entry);
  DG_FUZZ_CHECK(encoded.find('\n') == std::string::npos, "an encoded line holds no newline");
  DG_FUZZ_CHECK(fuzz::IsValidUtf8(encoded), "an encoded line is valid UTF-8");
  Result<JournalEntry> again = DecodeJournalLine(encoded);
  DG_FUZZ_CHECK(again.ok(), "a re-encoded entry decodes");
  DG_FUZZ_CHECK(SameEntry(*entry, *again), "a re-encoded entry decodes to the same entry");
  DG_FUZZ_CHECK(EncodeJournalLine(*again) == encoded, "encoding is a fixed point");
}

void CheckFold(std::string_view content) {
  Result<CardState> state = FoldJournal("cards/1-x/journal.jsonl", content);
  Result<CardState> lean = FoldJournal("cards/1-x/journal.jsonl", content, FoldKeeps::kState);
  DG_FUZZ_CHECK(lean.ok() == state.ok(), "the state-only fold accepts what the full fold does");
  if (!lean.ok()) {
    DG_FUZZ_CHECK(lean.status().message() == state.status().message(),
                  "the state-only fold refuses in the full fold's words");
  } else {
    DG_FUZZ_CHECK(lean->entries.empty() && SameFold(*lean, *state),
                  "the state-only fold yields the full fold's state");
  }
  // A decision's fold as the store makes it: over bytes it pins, its records viewing them. The
  // caller's pointer goes first; the records must stay readable (ASan) and equal the full fold's.
  {
    auto bytes = std::make_shared<const FileBytes>(std::string(content));
    Result<CardState> pinned =
        FoldJournal("cards/1-x/journal.jsonl", std::move(bytes), FoldKeeps::kState);
    DG_FUZZ_CHECK(pinned.ok() == state.ok(), "the pinned fold accepts what the full fold does");
    if (!pinned.ok()) {
      DG_FUZZ_CHECK(pinned.status().message() == state.status().message(),
                    "the pinned fold refuses in the full fold's words");
    } else {
      DG_FUZZ_CHECK(pinned->entries.empty() && SameFold(*pinned, *state),
                    "the pinned fold yields the full fold's state");
    }
  }
  if (!state.ok()) {
    DG_FUZZ_CHECK(state.status().code() == "corrupt", "a fold error is \"corrupt\"");
    DG_FUZZ_CHECK(state.status().message().rfind("cards/1-x/journal.jsonl:", 0) == 0,
                  "a fold error names the journal path");
    return;
  }
  const CardState& s = *state;
  DG_FUZZ_CHECK(!s.entries.empty(), "a folded journal has entries");
  DG_FUZZ_CHECK(s.entries.front().type == EntryType::kCreated, "entry 1 is created");
  size_t artifacts = 0;
  std::string reencoded;
  for (size_t i = 0; i < s.entries.size(); ++i) {
    DG_FUZZ_CHECK(s.entries[i].rev == static_cast<int64_t>(i + 1), "revisions are 1..n");
    if (s.entries[i].type == EntryType::kArtifact) ++artifacts;
    reencoded += EncodeJournalLine(s.entries[i]) + "\n";
  }
  DG_FUZZ_CHECK(s.stage_revision == static_cast<int64_t>(s.entries.size()),
                "stage revision is the last rev");
  DG_FUZZ_CHECK(s.updated_at == s.entries.back().at, "updated_at is the last entry's at");
  DG_FUZZ_CHECK(s.created_at == s.entries.front().at, "created_at is the first entry's at");
  DG_FUZZ_CHECK(s.artifact_records.size() == artifacts, "one artifact record per artifact");
  DG_FUZZ_CHECK(s.blocked_from.has_value() == (s.stage == Location::kBlocked),
                "blocked_from is set exactly while blocked");

  Result<CardState> refolded = FoldJournal("cards/1-x/journal.jsonl", reencoded);
  DG_FUZZ_CHECK(refolded.ok(), "the re-encoded journal folds");
  DG_FUZZ_CHECK(SameState(s, *refolded), "the re-encoded journal folds to the same state");

  CardState applied;
  for (const JournalEntry& e : s.entries) {
    DG_FUZZ_CHECK(ApplyEntry(applied, e).ok(), "every folded entry applies in order");
  }
  DG_FUZZ_CHECK(SameState(s, applied), "applying entries one by one yields the fold's state");
}

}  // namespace
}  // namespace devflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // The whole input as one line, each of its lines, and the whole input as a journal.
  devflow::CheckLine(input);
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    if (end > start) devflow::CheckLine(input.substr(start, end - start));
    start = end + 1;
  }
  devflow::CheckFold(input);
  return 0;
}

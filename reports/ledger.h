// The grounding ledger (SPEC §6): one JSONL row per grounding verdict, appended so that
// concurrent runs never interleave and a row is on disk before the verdict takes effect.
//
// Row format: release_gate.py's json.dumps layout (", " and ": " separators, non-ASCII kept),
// so existing ledger readers keep working, with its seven fields first, in its order:
//   {"ts": "2026-09-16T08:00:00+00:00", "label": null, "verdict": "rejected",
//    "state": "recovered", "kinds": ["date", "url", "ref", "hash"],
//    "reject_reasons": ["ref not in evidence: #42"], "rejected_claim": "Ship #42.", ...}
// followed by fields of our own (the options in force), each given as ready JSON text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/status.h"

namespace devflow {

/// One ledger row.
struct LedgerRow {
  std::string ts;                    // "2026-09-16T08:00:00+00:00" (LedgerTimestamp)
  std::optional<std::string> label;  // null when absent
  bool verified = false;             // verdict "verified" / "rejected"
  std::string state;                 // "released" / "recovered" (CLI), "allowed" / "vetoed"
  std::vector<std::string> kinds;    // as given
  std::vector<std::string> reasons;  // reject_reasons, in verdict order
  std::optional<std::string> rejected_claim;  // the full claim on rejection, else null
  /// Extra fields after the seven: key and its value as JSON text (see PyJson* below).
  std::vector<std::pair<std::string, std::string>> extra;
};

/// The row as one line, `\n`-terminated. Strings that are not valid UTF-8 get U+FFFD.
std::string FormatLedgerRow(const LedgerRow& row);

/// A JSON string as Python's json.dumps(ensure_ascii=False) writes it.
std::string PyJsonString(std::string_view text);
/// A list of strings, `["a", "b"]`.
std::string PyJsonList(const std::vector<std::string>& items);
/// A string or null.
std::string PyJsonOptional(const std::optional<std::string>& text);

/// release_gate.py's `ts` (datetime.now(timezone.utc).isoformat(timespec="seconds")) from a
/// Clock reading: "2026-09-16T08:00:00.000Z" → "2026-09-16T08:00:00+00:00". Text that is not
/// of that shape is returned unchanged.
std::string LedgerTimestamp(std::string_view iso_ms);

/// Appends `row` (one `\n`-terminated line) to `path` through the one durable append,
/// FileSystem::AppendDurable of RealFileSystem(): under an exclusive flock(2) on the ledger file,
/// never glued to a torn last line, and on any failure the file is cut back to what it was and
/// the error names the real errno, the path and the fix. The directory is not created. Never
/// throws.
Status AppendLocked(const std::string& path, std::string_view row);

}  // namespace devflow

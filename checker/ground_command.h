// `devflow-gate ground`: a drop-in for release_gate.py (SPEC §6, docs/grounding.md) with the
// same flags and exit contract, whole-token matching, and a ledger that cannot fail silently.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "host/os.h"

namespace devflow {

/// Runs `devflow-gate ground ARGS` (`args` are the words after `ground`). Flags, parsed as
/// Python's argparse does (`--flag value`, `--flag=value`, unambiguous prefixes such as
/// `--evid`, the last of a repeated single-valued flag wins):
///   --claim F (required)      the artifact about to ship
///   --evidence F (required, repeatable)  an input the producer was allowed to cite; a `.json`
///                             file drops the excluded keys, anything else is text
///   --kinds a,b               token kinds, default date,url,ref,hash (grounding.h)
///   --exclude-key K           another JSON key that never grounds (repeatable)
///   --require RE              an RE2 pattern the claim must match (repeatable)
///   --fallback F              printed instead of the claim on rejection
///   --ledger F                one JSONL row per verdict (reports/ledger.h)
///   --label L                 free text for the ledger row
///   --compat                  release_gate.py's exact matching (substring search, its
///                             regexes, top-level-only JSON key exclusion)
///   -h, --help                usage on `out`, exit 0
/// Exit codes and outputs:
///   0 VERIFIED: the claim file's bytes on `out`, `VERIFIED` on `err`;
///   1 REJECTED: the fallback's bytes (if any) on `out`, `REJECTED` then `  - <reason>` per
///     reason on `err` (reasons: `empty claim`; or `<kind> not in evidence: <token>` with kinds
///     in the order given and tokens sorted; then `required pattern absent: <rx>`);
///   2 usage error, nothing on `out`, no ledger row: argparse errors (`usage: …` and
///     `devflow-gate ground: error: …`), `unknown kinds: a, b`, `bad --require regex '<rx>':
///     <error>`, `cannot read: <error>` (a missing or unreadable file, a `.json` evidence that
///     does not parse, a file that is not UTF-8; a leading BOM is tolerated);
///   3 the ledger row could not be written: `cannot write the ledger: <error>; nothing was
///     released` on `err`, nothing on `out`;
///   4 the claim (or the fallback) could not be written to `out` (EPIPE, ENOSPC, /dev/full…):
///     `VERIFIED, but the claim could not be written to stdout: <strerror> (<ERRNO>); nothing
///     was released` (or `REJECTED, and the fallback …`) on `err`; a second row, `unreleased`
///     (or `unrecovered`) with an `output_error` field, follows the first (when that append
///     fails too, `err` says the first row stands uncorrected and why).
/// Order: the ledger row (`released` / `recovered`) is durable first, then the bytes that ship
/// are written to `out`, flushed and the stream checked. So exit 0 means the `released` row was
/// on disk before the claim reached `out`, a ledger failure never leaves bytes on `out`, and a
/// `released` row of a claim that did not ship is followed by its `unreleased` row (same `ts`).
int RunGroundCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// Same, reading files through `fs` and stamping ledger rows with `clock` (for tests).
int RunGroundCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                     FileSystem& fs, Clock& clock);

}  // namespace devflow

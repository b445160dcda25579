// card.md: the YAML front-matter projection plus the Markdown body (reference §1.9).
// Parsing validates what upstream's parseCardFile validates; the projection rewrite edits the
// front-matter lines textually so unrelated keys, comments and the body stay byte for byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "host/stages.h"
#include "host/status.h"

namespace devflow {

/// What a card.md says. Only `title` and `body` are authoritative; `stage` and
/// `stage_revision` are the projection, kept as the raw scalar text for drift warnings.
struct CardFile {
  std::string title;
  std::string body;                  // Markdown below the front matter, trimmed with JS String#trim
  std::optional<std::string> stage;  // front-matter `stage`, a valid location name
  std::optional<std::string> stage_revision;  // front-matter `stageRevision`, raw scalar text
};

/// Parses card.md as upstream reads it (after UTF-8 decoding: an ill-formed byte is U+FFFD):
/// first line `---` (trailing whitespace tolerated), a YAML mapping up to the
/// next `---` line, then the body. Errors (code "corrupt", message `<path>: <problem>`):
/// no front-matter block, invalid YAML, not a mapping, missing/empty `title`, a `stage` that
/// is not a location.
Result<CardFile> ParseCardFile(std::string_view path, std::string_view raw);

/// The journal-derived values the front matter projects.
struct Projection {
  Location stage = Location::kDraft;
  int64_t stage_revision = 0;
  std::optional<Location> blocked_from;
  std::optional<std::string> parent;
  ServiceClass service_class = ServiceClass::kStandard;
};

/// Rewrites the projection keys of an existing card.md (renderProjection, reference §1.9):
/// sets `stage` and `stageRevision`, sets or removes `blockedFrom` and `parent`, and writes
/// `serviceClass` only when not standard (removed otherwise). A key already present keeps its
/// line position; a missing one is appended at the end of the front matter in that order.
/// Every other line and the body are preserved byte for byte. The result is re-parsed to prove
/// the edit left valid YAML carrying the projected values; otherwise "corrupt" with
/// `<path>: <problem>` and nothing should be written. When `rendered` is given, it receives
/// that re-parse of the result (what ParseCardFile would return for the written file).
Result<std::string> RenderProjection(std::string_view path, std::string_view raw,
                                     const Projection& projection, CardFile* rendered = nullptr);

/// A fresh card.md: `---\ntitle: <title>\nstage: …\nstageRevision: …\n[blockedFrom, parent,
/// serviceClass when set]---\n\n<body trimmed>\n`. Used by Create and to rematerialise a lost
/// card.md (title = the card id then).
std::string NewCardFile(std::string_view title, std::string_view body,
                        const Projection& projection);

/// One `key: value` front-matter entry for a string value, as the TypeScript store writes it
/// (`yaml` 2.9 `YAML.stringify` defaults, a top-level block-mapping key): plain when a YAML 1.2
/// core-schema reader reads it back as the same string and it fits, double-quoted when it holds
/// control characters or would read as a number, bool or null (`"+1"`, `"true"`),
/// single-quoted when it holds `"` but no `'`, a `|-`/`>-` block when multi-line, folded
/// onto `  `-indented continuation lines past 80 columns (columns in UTF-16 code units). No
/// trailing newline. Ill-formed UTF-8 in `value` is written as U+FFFD.
std::string YamlPair(std::string_view key, std::string_view value);

}  // namespace devflow

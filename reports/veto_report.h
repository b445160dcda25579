// Veto reports (reference/devflow-upstream.md §4.8): Markdown the operator reads to learn why
// a move was vetoed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/os.h"

namespace devflow {

struct VetoReportFacts {
  std::string card_id;
  std::string edge;  // "designing->ready"
  int64_t revision = 0;
  std::vector<std::string> checked_inputs;  // "kind:rev", configured order
  std::string at;
  std::string summary;
  std::vector<std::string> findings;
  std::string sandbox;  // confinement level applied, e.g. "none" (empty → line omitted)
  /// The devflow root, set when the report dir lies outside it (a reportDir shared by roots,
  /// issue 7): the report then says which root it is about. "" → line omitted, the default
  /// `<root>/reports/agent-gate` report staying upstream's bytes (its place names the root).
  std::string root;
};

/// `<dir>/<card>-<from>-<to>-r<revision>.md`, e.g. `0002-b-designing-ready-r4.md`.
std::string VetoReportPath(const std::string& dir, const std::string& card_id,
                           const std::string& from, const std::string& to, int64_t revision);

/// Refuses a report directory that is, or passes through, a symlink (issue 4: a report is
/// never written wherever a link points): the first symlinked component of `dir` below
/// `workspace`, or `dir` itself (SymlinkOnPath, host/os.h) → code "symlink", message
/// `<component> is a symlink; point reportDir at a real directory`. An lstat error → its
/// Status. Ok when nothing of it is a symlink (missing components are fine).
Status CheckReportDir(FileSystem& fs, const std::string& workspace, const std::string& dir);

/// The report text, ending with a newline:
///   # Agent check veto: card <id>, edge <edge>
///   (blank)
///   - card: <id>
///   - edge: <edge>
///   - revision: <rev>
///   - checked inputs: <kind:rev, …> | none
///   - at: <at>
///   [- root: <root>]       (when the report dir lies outside the root)
///   [- sandbox: <level>]   (our additions to upstream's report)
///   (blank)
///   ## Summary
///   (blank)
///   <summary>
///   (blank)
///   ## Findings
///   (blank)
///   - <finding>…   | The checker listed no individual findings.
///   (blank)
/// Byte-identical to upstream's writeReport apart from the root and sandbox lines: the summary and
/// findings are written verbatim (line breaks and control characters included).
std::string RenderVetoReport(const VetoReportFacts& facts);

}  // namespace devflow

// Fault reports (issue 10 item 8): when an agent check fails closed after its checker ran (no
// verdict in the reply, a timeout, an exit code, a signal, a reply over maxReplyBytes), the
// reply and the end of stderr are kept as evidence in one Markdown file under the report dir
// (reports/gate_layout.h FaultReportPath), named in the decision message and the ledger row.
// Upstream has no such file; the journal's park reason stays upstream's text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/status.h"
#include "reports/report_header.h"

namespace devflow {

/// At most this much of a reply is kept (its head), and at most this much of stderr (its tail).
inline constexpr int64_t kFaultReplyKeepBytes = 256 * 1024;
inline constexpr int64_t kFaultStderrKeepBytes = 64 * 1024;

struct FaultReportFacts {
  std::string card_id;
  std::string edge;  // "designing->ready"
  int64_t revision = 0;
  std::vector<std::string> checked_inputs;  // "kind:rev", configured order
  std::string at;
  /// The devflow root, set when the report dir lies outside it (a shared reportDir): the report
  /// then says which root it is about. "" → line omitted (the report's place names the root).
  std::string root;
  std::string provider;
  std::string sandbox;  // the checker's confinement level ("" → "unknown")
  std::string fault;    // upstream's fault text, as in the park reason
  std::string why;      // why the reply holds no verdict (VerdictFaultReason); "" when none
  std::string reply;    // stdout as read (cut to kFaultReplyKeepBytes here)
  int64_t reply_bytes = 0;
  bool reply_over = false;  // the read stopped at maxReplyBytes: reply_bytes is a lower bound
  std::string stderr_tail;  // cut to its last kFaultStderrKeepBytes here
  int64_t stderr_bytes = 0;
  // What the byte counts cannot tell apart (CheckEvidence): `reply` / `stderr_tail` had an
  // `env:` value replaced by a marker (shorter than the bytes written, nothing cut), and
  // `stderr_tail` already lost the start of stderr before it reached the report.
  bool reply_redacted = false;
  bool stderr_cut = false;
  bool stderr_redacted = false;
};

/// The report text, ending with a newline:
///   # Agent check fault: card <id>, edge <edge>
///   (blank)
///   - card: <id>
///   - edge: <edge>
///   - revision: <rev>
///   - checked inputs: <kind:rev, …> | none
///   - at: <at>
///   [- root: <root>]   (when the report dir lies outside the root)
///   - provider: <provider>
///   - sandbox: <level>
///   - fault: <fault>
///   [- why: <why>]
///   - reply: <n> bytes (all kept below) | <n> bytes (the first <k> kept below)
///            | at least <n> bytes (stopped at maxReplyBytes; the first <k> kept below)
///   - stderr: <n> bytes (all kept below) | <n> bytes (the last <k> kept below)
///   (blank)
///   ## Reply
///   (blank)
///   <fence>
///   <the kept reply bytes, verbatim>
///   <fence>
///   (blank)
///   ## Stderr
///   (blank)
///   <fence>
///   <the kept stderr bytes, verbatim>
///   <fence>
/// <fence> is a run of backticks one longer than the longest run in the bytes it holds (at
/// least 3), so the Markdown block holds them whole; the kept byte counts let a reader cut them
/// out exactly. Checker bytes are written verbatim (a terminal sees them only through
/// host/terminal.h).
std::string RenderFaultReport(const FaultReportFacts& facts);

/// The header facts of one fault report (`problem`: the file does not read as one).
struct FaultReportEntry : ReportHeader {
  std::string fault;
  std::string why;  // "" when the report has no `- why:` line
};

/// Parses a report's header; the Status (code "corrupt") names the first missing piece.
Result<FaultReportEntry> ParseFaultReport(const std::string& path, const std::string& text);

}  // namespace devflow

// How a policy asks for a check without knowing how a checker is spawned (STYLE: a policy
// knows nothing of processes). The subprocess implementation is checker/subprocess.h; tests
// use a scripted fake.
#pragma once

#include <cstdint>
#include <string>

#include "checker/prompt.h"
#include "config/config.h"
#include "host/status.h"

namespace devflow {

/// What a checker that ran wrote, kept for a fault report (issue 10 item 8).
struct CheckEvidence {
  bool ran = false;             // the checker was started (false: nothing below is known)
  std::string reply;            // stdout as read: at most max_reply_bytes
  int64_t reply_bytes = 0;      // stdout bytes the checker wrote, as far as they were read
  bool reply_over = false;      // the read stopped at max_reply_bytes: reply_bytes is a lower bound
  std::string stderr_tail;      // the end of stderr (SubprocessOptions::stderr_tail_bytes or more)
  int64_t stderr_bytes = 0;     // stderr bytes in all
  std::string sandbox;          // as CheckReply::sandbox
  bool reply_redacted = false;  // `reply` had an `env:` value replaced (checker/redact.h)
  bool stderr_cut = false;      // `stderr_tail` lost the start of stderr (kept as a tail)
  bool stderr_redacted = false;  // `stderr_tail` had an `env:` value replaced
};

/// One check to run.
struct CheckRequest {
  std::string provider;  // provider name from the edge config
  PromptPieces prompt;   // the assembled prompt (sent on stdin), as pieces
  int64_t timeout_ms = 600000;
  int64_t max_reply_bytes = 8 * 1024 * 1024;
  std::string card_id;    // DEVFLOW_GATE_CARD
  std::string edge;       // DEVFLOW_GATE_EDGE, "designing->ready"
  std::string root;       // DEVFLOW_GATE_ROOT, absolute
  std::string workspace;  // cwd of the checker: parent of the root
  /// DEVFLOW_GATE_INPUTS: `<kind>:<rev>:<bytes>,…` of the prompt's inputs (checker/prompt.h
  /// InputManifest), so a checker can cut the prompt exactly whatever the artifacts contain.
  std::string inputs_manifest;
  /// When set, a Dispatch that fails after the checker started fills it with what the checker
  /// wrote (a timeout, an exit code, a signal, a reply over the cap); untouched otherwise.
  CheckEvidence* evidence = nullptr;
};

/// The checker's reply text (stdout), complete.
struct CheckReply {
  std::string text;
  /// Confinement the checker ran under: "bwrap", "landlock-abi<N>+seccomp", "none" or "off"
  /// (the provider asked for `sandbox: off`); empty from a dispatcher that spawns nothing.
  std::string sandbox;
  /// The end of the checker's stderr and its whole size in bytes (empty / 0 from a dispatcher
  /// that spawns nothing): kept in a fault report when the reply holds no verdict.
  std::string stderr_tail;
  int64_t stderr_bytes = 0;
  /// As CheckEvidence's: what the byte counts cannot tell apart (a tail cut, a marker that
  /// shortened the text; checker/redact.h), so a report says each as it happened.
  bool reply_redacted = false;
  bool stderr_cut = false;
  bool stderr_redacted = false;
};

/// Runs one check. A failed Result carries code "fault" and the exact SPEC §5 fault text as
/// its message, e.g. `the checker exceeded checkTimeoutMs (1000ms)`,
/// `subagent provider "x" is not registered`, `the checker ended with exit code 7: boom`; or
/// code "deadline" when the caller's own deadline left too little time to start the check
/// (host/deployment/check_budget.h): not a fault of the deployment, the gate vetoes unparked.
class CheckerDispatch {
 public:
  virtual ~CheckerDispatch() = default;
  virtual Result<CheckReply> Dispatch(const CheckRequest& request) = 0;
  /// The definition of the provider named `provider` that Dispatch would run, or nullptr when
  /// this dispatcher defines none by that name (or spawns nothing: the default). The agent gate
  /// hashes it into the identity a cached verdict must match (reports/verdict_cache.h
  /// CheckerIdentity, issue 7 item 3).
  virtual const ProviderConfig* Provider(const std::string& provider) const {
    (void)provider;
    return nullptr;
  }
};

}  // namespace devflow

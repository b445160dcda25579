// How a policy asks for a check without knowing how a checker is spawned (STYLE: a policy
// knows nothing of processes). The subprocess implementation is checker/subprocess.h; tests
// use a scripted fake.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"
#include "host/status.h"

namespace devflow {

/// One check to run.
struct CheckRequest {
  std::string provider;  // provider name from the edge config
  std::string prompt;    // the whole assembled prompt (sent on stdin)
  int64_t timeout_ms = 600000;
  int64_t max_reply_bytes = 8 * 1024 * 1024;
  std::string card_id;    // DEVFLOW_GATE_CARD
  std::string edge;       // DEVFLOW_GATE_EDGE, "designing->ready"
  std::string root;       // DEVFLOW_GATE_ROOT, absolute
  std::string workspace;  // cwd of the checker: parent of the root
  /// DEVFLOW_GATE_INPUTS: `<kind>:<rev>:<bytes>,…` of the prompt's inputs (checker/prompt.h
  /// InputManifest), so a checker can cut the prompt exactly whatever the artifacts contain.
  std::string inputs_manifest;
};

/// The checker's reply text (stdout), complete.
struct CheckReply {
  std::string text;
  /// Confinement the checker ran under: "bwrap", "landlock-abi<N>+seccomp", "none" or "off"
  /// (the provider asked for `sandbox: off`); empty from a dispatcher that spawns nothing.
  std::string sandbox;
};

/// Runs one check. A failed Result carries code "fault" and the exact SPEC §5 fault text as
/// its message, e.g. `the checker exceeded checkTimeoutMs (1000ms)`,
/// `subagent provider "x" is not registered`, `the checker ended with exit code 7: boom`.
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

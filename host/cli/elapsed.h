// Elapsed time of a long checker on an operator's terminal (issue 10 item 11): a checker that
// runs longer than 2 s shows `devflow-gate: waiting for the checker: <n>s` on stderr, updated
// once a second on the same line — only when stderr is a terminal. Piped or redirected stderr
// (CI, the TypeScript adapter, log files) gets nothing, so machine-read output never changes.
#pragma once

#include <cstdint>

#include "checker/dispatch.h"

namespace devflow {

/// A CheckerDispatch that forwards to `inner` and, while one Dispatch runs longer than
/// `after_ms`, writes `\rdevflow-gate: waiting for the checker: <n>s` to `fd` every
/// `every_ms`, and a final `\n` when the dispatch returns (so the next line starts clean).
/// Inactive (forwards only, no thread) unless isatty(fd) at construction.
class ElapsedOnTerminal : public CheckerDispatch {
 public:
  ElapsedOnTerminal(CheckerDispatch& inner, int fd, int64_t after_ms = 2000,
                    int64_t every_ms = 1000);
  Result<CheckReply> Dispatch(const CheckRequest& request) override;
  /// The inner dispatcher's provider: a cached verdict's identity (checkerSha256) must not
  /// depend on whether the progress line is shown.
  const ProviderConfig* Provider(const std::string& provider) const override {
    return inner_.Provider(provider);
  }
  /// Whether `fd` is a terminal (progress will be shown).
  bool active() const { return active_; }

 private:
  CheckerDispatch& inner_;
  int fd_;
  int64_t after_ms_;
  int64_t every_ms_;
  bool active_;
};

}  // namespace devflow

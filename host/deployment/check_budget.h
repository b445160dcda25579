// The request deadline applied to checks (issue 8 "Bounded work"; kubernetes#128162: per-check
// timeouts that add up past the caller's). A check whose checkTimeoutMs does not fit in the
// time the attempt has left is not started. That is the caller's budget, not a fault of the
// deployment: the gate vetoes the move without parking the card (trial15 R3,
// docs/decisions.md "A caller's short deadline vetoes; it does not park"). Shared by the
// server (X-Devflow-Deadline-Ms / deadlineMs) and `move --timeout`.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "checker/dispatch.h"
#include "host/deadline.h"

namespace devflow {

/// A CheckerDispatch decorator that enforces the deadline of the attempt running on the
/// calling thread (each attempt runs on one thread from start to end) and reports every check.
class BudgetedChecker : public CheckerDispatch {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  /// What happened to one check: `started` false when the deadline refused it; `ms` the
  /// checker's wall time; `result` the inner dispatch's result (or the refusal).
  using Observer = std::function<void(const CheckRequest& request, bool started,
                                      const Result<CheckReply>& result, double ms)>;

  /// `running(+1)` before a checker starts and `running(-1)` after it ended.
  explicit BudgetedChecker(CheckerDispatch& inner, Observer observer = {},
                           std::function<void(int delta)> running = {})
      : inner_(inner), observer_(std::move(observer)), running_(std::move(running)) {}

  /// A check that does not fit is refused with code "deadline" and kDeadlineRefusal's text:
  /// `the caller's deadline leaves <n>ms, less than checkTimeoutMs (<m>ms); the check was not
  /// started, …` naming how to give the move more time.
  Result<CheckReply> Dispatch(const CheckRequest& request) override;
  /// The inner dispatcher's provider: a cached verdict's identity must not depend on whether
  /// the check runs under a budget.
  const ProviderConfig* Provider(const std::string& provider) const override {
    return inner_.Provider(provider);
  }

  /// Sets (or clears) the deadline of the attempt on this thread; RAII (host/deadline.h: the
  /// one deadline the checks and the commit-lock wait both read).
  using Scope = AttemptDeadlineScope;

 private:
  CheckerDispatch& inner_;
  Observer observer_;
  std::function<void(int delta)> running_;
};

}  // namespace devflow

// The caller's deadline of the attempt running on this thread: the server's
// X-Devflow-Deadline-Ms / deadlineMs, or `move --timeout`. Each attempt runs on one thread from
// start to end (the server's coroutines set it aside while suspended, as the pauser,
// host/pause.h). Read by the checks' budget (host/deployment/check_budget.h: a check that does
// not fit is not started) and by the store's commit-lock wait (host/store.cc: a move whose
// deadline passes while it waits for commit.lock does not commit).
#pragma once

#include <chrono>
#include <optional>

namespace devflow {

/// The deadline of the attempt on this thread, or none (no deadline: nothing is cut short).
std::optional<std::chrono::steady_clock::time_point> AttemptDeadline();

/// Sets (or clears, with nullopt) the deadline of the attempt on this thread until the scope
/// ends; RAII, nestable.
class AttemptDeadlineScope {
 public:
  explicit AttemptDeadlineScope(std::optional<std::chrono::steady_clock::time_point> deadline);
  ~AttemptDeadlineScope();
  AttemptDeadlineScope(const AttemptDeadlineScope&) = delete;
  AttemptDeadlineScope& operator=(const AttemptDeadlineScope&) = delete;

 private:
  std::optional<std::chrono::steady_clock::time_point> saved_;
};

}  // namespace devflow

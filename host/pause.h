// A wait that does not stop the server: the store's commit-lock retry (host/store.cc) pauses
// between tries, and on the admission server an attempt runs as a coroutine on the one I/O
// thread, where a sleep would stop every other request for as long (trial20 1j: five moves on
// a locked card froze /healthz for 9.96 s). The server installs, per attempt, a pauser that
// suspends only that attempt on a timer; everywhere else (the CLI) Pause sleeps.
#pragma once

#include <chrono>
#include <functional>

namespace devflow {

/// Waits `duration` (ms) on behalf of the attempt running on this thread: the installed pauser
/// when there is one (PauseScope), else std::this_thread::sleep_for. Never fails.
void Pause(std::chrono::milliseconds duration);

/// Installs `pauser` (empty: none, so Pause sleeps) on this thread until the scope ends; RAII,
/// nestable. The server sets one per attempt and sets it aside while the attempt is suspended,
/// as it does the attempt's deadline (host/deployment/check_budget.h).
class PauseScope {
 public:
  explicit PauseScope(std::function<void(std::chrono::milliseconds)> pauser);
  ~PauseScope();
  PauseScope(const PauseScope&) = delete;
  PauseScope& operator=(const PauseScope&) = delete;

 private:
  std::function<void(std::chrono::milliseconds)> saved_;
};

}  // namespace devflow

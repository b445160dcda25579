#include "host/pause.h"

#include <thread>
#include <utility>

namespace devflow {
namespace {
thread_local std::function<void(std::chrono::milliseconds)> current_pauser;
}  // namespace

void Pause(std::chrono::milliseconds duration) {
  if (current_pauser) return current_pauser(duration);
  std::this_thread::sleep_for(duration);
}

PauseScope::PauseScope(std::function<void(std::chrono::milliseconds)> pauser)
    : saved_(std::exchange(current_pauser, std::move(pauser))) {}

PauseScope::~PauseScope() { current_pauser = std::move(saved_); }

}  // namespace devflow

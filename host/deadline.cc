#include "host/deadline.h"

#include <utility>

namespace devflow {
namespace {
thread_local std::optional<std::chrono::steady_clock::time_point> current_deadline;
}  // namespace

std::optional<std::chrono::steady_clock::time_point> AttemptDeadline() { return current_deadline; }

AttemptDeadlineScope::AttemptDeadlineScope(
    std::optional<std::chrono::steady_clock::time_point> deadline)
    : saved_(std::exchange(current_deadline, deadline)) {}

AttemptDeadlineScope::~AttemptDeadlineScope() { current_deadline = saved_; }

}  // namespace devflow

#include "host/deployment/check_budget.h"

#include <string>

namespace devflow {

Result<CheckReply> BudgetedChecker::Dispatch(const CheckRequest& request) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  const auto start = std::chrono::steady_clock::now();
  const std::optional<TimePoint> deadline = AttemptDeadline();
  if (deadline) {
    const int64_t left = duration_cast<milliseconds>(*deadline - start).count();
    if (left < request.timeout_ms) {
      Result<CheckReply> refused = Status::Error(
          "deadline",
          "the caller's deadline leaves " + std::to_string(left < 0 ? 0 : left) +
              "ms, less than checkTimeoutMs (" + std::to_string(request.timeout_ms) +
              "ms); the check was not started, nothing was committed and the card is not "
              "parked; give the move more time (`move --timeout MS`, the request's deadlineMs "
              "or X-Devflow-Deadline-Ms, devflow-gate-cordis's timeoutMs), at least "
              "checkTimeoutMs for each check");
      if (observer_) observer_(request, false, refused, 0);
      return refused;
    }
  }
  if (running_) running_(+1);
  Result<CheckReply> reply = inner_.Dispatch(request);
  if (running_) running_(-1);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (observer_) observer_(request, true, reply, ms);
  return reply;
}

}  // namespace devflow

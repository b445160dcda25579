#include "host/waterfall.h"

#include <exception>

#include "host/unwind.h"

namespace devflow {
namespace {

Decision RunFrom(const std::vector<Policy*>& policies, size_t index, const Attempt& attempt,
                 AttemptContext& context) {
  if (index == policies.size()) return Decision::Allow();  // the terminal `next` allows
  Policy* policy = policies[index];
  Next next = [&policies, index, &attempt, &context]() {
    return RunFrom(policies, index + 1, attempt, context);
  };
  try {
    return policy->Admit(attempt, context, next);
  } catch (const std::exception& e) {
    // Fail closed: a policy that cannot finish never lets the move through.
    return Decision::Veto("policy " + policy->id() + " failed: " + e.what());
  } catch (...) {
    // A coroutine's forced unwind (a server attempt whose coroutine is destroyed while its
    // check waits) passes on: it is no failure of the policy, and swallowing it is undefined
    // behaviour (host/unwind.h).
    RethrowIfForcedUnwind();
    return Decision::Veto("policy " + policy->id() + " failed with an unknown error");
  }
}

}  // namespace

Decision RunWaterfall(const std::vector<Policy*>& policies, const Attempt& attempt,
                      AttemptContext& context) {
  return RunFrom(policies, 0, attempt, context);
}

}  // namespace devflow

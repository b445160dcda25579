// A stackful coroutine destroyed while it waits (the server's attempt when its io_context is
// torn down) is unwound by Boost.Context's forced_unwind, which is no std::exception. Every
// `catch (...)` that can sit on such a stack must let it pass (host/unwind.h, issue 7 item 10):
// the waterfall's and RunMove's. These run the real waterfall and the real RunMove on a real
// asio::spawn coroutine, suspended in a policy, and destroy its io_context.
#include <doctest/doctest.h>

#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/spawn.hpp>
#include <boost/asio/steady_timer.hpp>

#include "e2e/workspace.h"
#include "host/deployment/deployment.h"
#include "host/waterfall.h"

namespace devflow {
namespace {

namespace asio = boost::asio;

// A policy that waits on its coroutine (as a check waits for its checker) until the coroutine
// is resumed, which never happens: the io_context is destroyed first.
class WaitingPolicy : public Policy {
 public:
  std::string id() const override { return "waiting"; }
  Decision Admit(const Attempt&, AttemptContext&, const Next& next) override {
    struct Unwound {
      bool* flag;
      ~Unwound() { *flag = true; }
    } unwound{&unwound_};
    asio::steady_timer never(*io);
    never.expires_at(asio::steady_timer::time_point::max());
    waiting = true;
    boost::system::error_code ec;
    never.async_wait((*yield)[ec]);
    return next();
  }
  std::string Explain(const Attempt&) override { return ""; }

  asio::io_context* io = nullptr;
  asio::yield_context* yield = nullptr;
  bool waiting = false;
  bool unwound_ = false;
};

TEST_CASE("a coroutine destroyed while a policy waits unwinds through the waterfall undecided") {
  WaitingPolicy policy;
  bool returned = false;
  std::string reason;
  {
    asio::io_context io;
    policy.io = &io;
    asio::spawn(
        io,
        [&](asio::yield_context yield) {
          policy.yield = &yield;
          Attempt attempt;
          attempt.id = "0001-x";
          AttemptContext context;
          Decision d = RunWaterfall({&policy}, attempt, context);
          returned = true;  // never: the waterfall does not decide for a destroyed coroutine
          reason = d.reason;
        },
        asio::detached);
    io.poll();
    REQUIRE(policy.waiting);
  }  // the io_context is destroyed with the coroutine suspended in the policy
  CHECK(policy.unwound_);
  CHECK_MESSAGE(!returned, "the waterfall decided: " << reason);
}

TEST_CASE("a coroutine destroyed while a move's policy waits unwinds through RunMove unrecorded") {
  e2e::Workspace ws("plugins: []\n");
  ws.CardInDesigning();
  DeploymentOptions options;
  options.root = ws.root();
  options.config_file = ws / "devflow-gate.yaml";
  options.self_path = test::GateBinary();
  Result<std::unique_ptr<Deployment>> d = LoadDeployment(options);
  REQUIRE(d.ok());
  WaitingPolicy policy;
  (*d)->policies = {&policy};
  const std::string ledger = ws.root() + "/ledger/decisions.jsonl";
  const std::string rows_before = test::Slurp(ledger).value_or("");
  bool returned = false;
  std::string code;
  {
    asio::io_context io;
    policy.io = &io;
    asio::spawn(
        io,
        [&](asio::yield_context yield) {
          policy.yield = &yield;
          MoveRequest request;
          request.id = ws.card();
          request.to = Location::kReady;
          MoveOutcome out = RunMove(**d, request, StderrWarnings());
          returned = true;  // never
          code = out.code;
        },
        asio::detached);
    io.poll();
    REQUIRE(policy.waiting);
  }
  CHECK(policy.unwound_);
  CHECK_MESSAGE(!returned, "RunMove returned code " << code);
  // No row: neither an internal-error one for the unwind nor any other.
  CHECK(test::Slurp(ledger).value_or("") == rows_before);
}

}  // namespace
}  // namespace devflow

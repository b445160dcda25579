// A checker running longer than the threshold shows its elapsed time on a terminal stderr and
// nothing on a pipe (host/cli/elapsed.h, issue 10 item 11). The terminal is a real pty.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <string>

#include "host/cli/elapsed.h"

namespace devflow {
namespace {

// A checker that returns only once `until` holds on what the terminal has shown so far: the
// wait is on the reporter's own output, never on a clock.
class WatchingChecker : public CheckerDispatch {
 public:
  explicit WatchingChecker(int master) : master_(master) {}
  Result<CheckReply> Dispatch(const CheckRequest&) override {
    const std::string mark = "waiting for the checker: ";
    while (seen.find(mark) == std::string::npos ||
           seen.find('s', seen.find(mark) + mark.size()) == std::string::npos) {
      pollfd p{master_, POLLIN, 0};
      if (::poll(&p, 1, 10000) != 1) break;  // the bound of a broken test, not a wait
      char buf[256];
      ssize_t n = ::read(master_, buf, sizeof buf);
      if (n <= 0) break;
      seen.append(buf, static_cast<size_t>(n));
    }
    return CheckReply{"```json\n{\"verdict\":\"allow\",\"summary\":\"ok\"}\n```\n", "none", "", 0};
  }
  std::string seen;

 private:
  int master_;
};

class InstantChecker : public CheckerDispatch {
 public:
  Result<CheckReply> Dispatch(const CheckRequest&) override {
    return CheckReply{"r", "none", "", 0};
  }
};

TEST_CASE("a long checker shows its elapsed time on a terminal stderr, then ends the line") {
  int master = -1, slave = -1;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
  WatchingChecker inner(master);
  ElapsedOnTerminal timed(inner, slave, /*after_ms=*/50, /*every_ms=*/50);
  CHECK(timed.active());
  auto reply = timed.Dispatch(CheckRequest{});
  REQUIRE(reply.ok());
  CHECK(reply->sandbox == "none");
  const std::string first = "\rdevflow-gate: waiting for the checker: ";
  REQUIRE(inner.seen.rfind(first, 0) == 0);
  const std::string secs =
      inner.seen.substr(first.size(), inner.seen.find('s', first.size()) - first.size());
  CHECK_FALSE(secs.empty());
  CHECK(secs.find_first_not_of("0123456789") == std::string::npos);
  // After the dispatch returns, the line is ended.
  pollfd p{master, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 10000) == 1);
  char buf[256];
  ssize_t n = ::read(master, buf, sizeof buf);
  REQUIRE(n > 0);
  std::string rest(buf, static_cast<size_t>(n));
  CHECK(rest.back() == '\n');
  ::close(master);
  ::close(slave);
}

TEST_CASE("a fast checker on a terminal shows nothing, a pipe never shows anything") {
  int master = -1, slave = -1;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
  InstantChecker fast;
  ElapsedOnTerminal on_tty(fast, slave);  // the default 2 s threshold
  REQUIRE(on_tty.Dispatch(CheckRequest{}).ok());
  pollfd p{master, POLLIN, 0};
  CHECK(::poll(&p, 1, 0) == 0);  // nothing was written
  ::close(master);
  ::close(slave);

  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  ElapsedOnTerminal on_pipe(fast, pipe_fds[1], /*after_ms=*/0, /*every_ms=*/1);
  CHECK_FALSE(on_pipe.active());  // no ticker thread exists to write anything
  REQUIRE(on_pipe.Dispatch(CheckRequest{}).ok());
  ::close(pipe_fds[1]);
  char c;
  CHECK(::read(pipe_fds[0], &c, 1) == 0);  // EOF: nothing was written
  ::close(pipe_fds[0]);
}

// The cache's checker identity is the inner dispatcher's provider: a record the CLI writes
// must match the one the server writes for the same config.
class ProvidingChecker : public InstantChecker {
 public:
  const ProviderConfig* Provider(const std::string& provider) const override {
    return provider == "agent" ? &config : nullptr;
  }
  ProviderConfig config;
};

TEST_CASE("the elapsed-time wrapper forwards the provider the cache identity hashes") {
  ProvidingChecker inner;
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  ElapsedOnTerminal wrapped(inner, pipe_fds[1]);
  CHECK(wrapped.Provider("agent") == &inner.config);
  CHECK(wrapped.Provider("other") == nullptr);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace devflow

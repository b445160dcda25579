// The TCP peer screen's pool (host/server/screen_pool.h, issue 8): screens run off the I/O
// thread on a fixed set of threads with a bounded queue, each result comes back through
// `post`, a screen that throws refuses the peer, and a stopped pool posts nothing. The screens
// here are injected functions that wait on the test's own gates; the test thread plays the
// I/O thread (it runs what the pool posts). Every wait is on an event, never a sleep.
#include <doctest/doctest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/server/screen_pool.h"

namespace devflow::server_test {
namespace {

using server::PeerRefusal;
using server::PeerScreenPool;

// What the pool's threads and the test share: gates the screens wait on, the screens that
// started, and the functions the pool posted (run by the test, as the I/O thread would).
struct Events {
  std::mutex mu;
  std::condition_variable cv;
  std::map<int, bool> open_gate;  // fd -> its screen may finish
  std::vector<int> started;       // fds whose screens began, in order
  std::deque<std::function<void()>> posted;
  bool screen_destroyed = false;

  // Waits (bounded at 60 s, so a broken pool fails instead of hanging) until `ready` holds.
  bool WaitFor(const std::function<bool()>& ready) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), ready);
  }
  void Open(int fd) {
    std::lock_guard lock(mu);
    open_gate[fd] = true;
    cv.notify_all();
  }
  // Runs the next posted function on this thread, waiting for one.
  bool RunPosted() {
    std::function<void()> f;
    if (!WaitFor([&] { return !posted.empty(); })) return false;
    {
      std::lock_guard lock(mu);
      f = std::move(posted.front());
      posted.pop_front();
    }
    f();
    return true;
  }
};

// Marks the screen function's destruction: the pool's state, which holds it, goes only after
// the last thread has ended, so once it is marked no thread can post any more.
struct Sentinel {
  std::shared_ptr<Events> ev;
  ~Sentinel() {
    if (!ev) return;
    std::lock_guard lock(ev->mu);
    ev->screen_destroyed = true;
    ev->cv.notify_all();
  }
};

// A screen that records its start, waits for its fd's gate and refuses fds listed in `refuse`
// (the refusal names the fd); fd `throws` throws instead.
PeerScreenPool::Screen GatedScreen(std::shared_ptr<Events> ev, std::vector<int> refuse = {},
                                   int throws = -1) {
  auto sentinel = std::make_shared<Sentinel>();
  sentinel->ev = ev;
  return [ev, refuse, throws, sentinel](int fd) -> std::optional<PeerRefusal> {
    std::unique_lock lock(ev->mu);
    ev->started.push_back(fd);
    ev->cv.notify_all();
    ev->cv.wait(lock, [&] { return ev->open_gate[fd]; });
    if (fd == throws) throw std::runtime_error("boom in the screen");
    if (std::find(refuse.begin(), refuse.end(), fd) != refuse.end()) {
      return PeerRefusal{"peer-confined", "refused " + std::to_string(fd)};
    }
    return std::nullopt;
  };
}

PeerScreenPool::Post PostTo(std::shared_ptr<Events> ev) {
  return [ev](std::function<void()> f) {
    std::lock_guard lock(ev->mu);
    ev->posted.push_back(std::move(f));
    ev->cv.notify_all();
  };
}

// A pipe whose read end is handed to the pool as the "connection": the write end tells
// whether the pool has closed it (POLLERR once no reader is left).
struct Connection {
  int fds[2] = {-1, -1};
  Connection() { REQUIRE(::pipe(fds) == 0); }
  ~Connection() { ::close(fds[1]); }
  int fd() const { return fds[0]; }
  bool ClosedByPool() const {
    pollfd p{fds[1], POLLOUT, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
  }
};

// Results of Done, keyed by fd.
using Results = std::map<int, std::optional<PeerRefusal>>;
PeerScreenPool::Done Record(Results& results, int fd) {
  return [&results, fd](std::optional<PeerRefusal> r) { results[fd] = std::move(r); };
}

TEST_CASE("PeerScreenPool: a screen that waits does not hold another: results come through post") {
  auto ev = std::make_shared<Events>();
  Connection a, b;
  Results results;
  PeerScreenPool pool(2, 8, GatedScreen(ev, {a.fd()}), PostTo(ev));
  REQUIRE(pool.Submit(a.fd(), Record(results, a.fd())));
  REQUIRE(ev->WaitFor([&] { return ev->started.size() == 1; }));
  REQUIRE(pool.Submit(b.fd(), Record(results, b.fd())));
  REQUIRE(ev->WaitFor([&] { return ev->started.size() == 2; }));

  // b finishes while a's screen still waits: only b's result is posted.
  ev->Open(b.fd());
  REQUIRE(ev->RunPosted());
  CHECK(results.size() == 1);
  REQUIRE(results.count(b.fd()));
  CHECK_FALSE(results[b.fd()]);  // admitted
  CHECK(b.ClosedByPool());
  CHECK_FALSE(a.ClosedByPool());

  ev->Open(a.fd());
  REQUIRE(ev->RunPosted());
  REQUIRE(results.count(a.fd()));
  REQUIRE(results[a.fd()]);
  CHECK(results[a.fd()]->reason == "peer-confined");
  CHECK(a.ClosedByPool());
}

TEST_CASE("PeerScreenPool: past max_waiting a connection is refused and its descriptor closed") {
  auto ev = std::make_shared<Events>();
  Connection running, first, second, refused;
  Results results;
  PeerScreenPool pool(1, 2, GatedScreen(ev), PostTo(ev));
  REQUIRE(pool.Submit(running.fd(), Record(results, running.fd())));
  REQUIRE(ev->WaitFor([&] { return ev->started.size() == 1; }));  // the thread is taken
  CHECK(pool.Submit(first.fd(), Record(results, first.fd())));
  CHECK(pool.Submit(second.fd(), Record(results, second.fd())));
  CHECK_FALSE(pool.Submit(refused.fd(), Record(results, refused.fd())));
  CHECK(refused.ClosedByPool());
  CHECK_FALSE(first.ClosedByPool());

  for (int fd : {running.fd(), first.fd(), second.fd()}) ev->Open(fd);
  for (int i = 0; i < 3; ++i) REQUIRE(ev->RunPosted());
  CHECK(results.size() == 3);
  CHECK_FALSE(results.count(refused.fd()));
  // One thread: the queued screens ran in their order.
  CHECK(ev->started == std::vector<int>{running.fd(), first.fd(), second.fd()});
}

TEST_CASE("PeerScreenPool: a screen that throws refuses the peer as unidentified (fail closed)") {
  auto ev = std::make_shared<Events>();
  Connection c;
  Results results;
  PeerScreenPool pool(1, 1, GatedScreen(ev, {}, c.fd()), PostTo(ev));
  ev->Open(c.fd());
  REQUIRE(pool.Submit(c.fd(), Record(results, c.fd())));
  REQUIRE(ev->RunPosted());
  REQUIRE(results.count(c.fd()));
  REQUIRE(results[c.fd()]);
  CHECK(results[c.fd()]->reason == "peer-unidentified");
  CHECK(results[c.fd()]->message.find("boom in the screen") != std::string::npos);
  CHECK(c.ClosedByPool());
}

TEST_CASE("PeerScreenPool: destroyed with a screen running, it posts nothing and drops the queue") {
  auto ev = std::make_shared<Events>();
  Connection running, queued;
  Results results;
  {
    PeerScreenPool pool(1, 4, GatedScreen(ev), PostTo(ev));
    REQUIRE(pool.Submit(running.fd(), Record(results, running.fd())));
    REQUIRE(ev->WaitFor([&] { return ev->started.size() == 1; }));
    REQUIRE(pool.Submit(queued.fd(), Record(results, queued.fd())));
  }  // returns at once although a screen is still running
  CHECK(queued.ClosedByPool());
  CHECK_FALSE(running.ClosedByPool());
  ev->Open(running.fd());
  // The thread finishes its screen, drops the result and ends; the state goes with it.
  REQUIRE(ev->WaitFor([&] { return ev->screen_destroyed; }));
  CHECK(running.ClosedByPool());
  std::lock_guard lock(ev->mu);
  CHECK(ev->posted.empty());
  CHECK(ev->started.size() == 1);  // the queued screen never ran
  CHECK(results.empty());
}

}  // namespace
}  // namespace devflow::server_test

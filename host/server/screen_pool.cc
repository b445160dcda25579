#include "host/server/screen_pool.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace devflow::server {

struct PeerScreenPool::State {
  Screen screen;  // called without the lock, so never reset
  size_t max_waiting = 0;
  std::mutex mu;
  std::condition_variable wake;
  Post post;  // reset by the destructor, under `mu`: nothing is posted after it
  bool stopped = false;
  std::deque<std::pair<int, Done>> waiting;
};

namespace {

// One screen, failing closed: an exception (an allocation that failed, a bug) refuses the peer
// as one that cannot be identified, rather than ending the server or admitting it.
std::optional<PeerRefusal> RunScreen(const PeerScreenPool::Screen& screen, int fd) {
  try {
    return screen(fd);
  } catch (const std::exception& e) {
    return PeerRefusal{"peer-unidentified", std::string("the peer screen failed (") + e.what() +
                                                "), so the peer cannot be told from a checker"};
  } catch (...) {
    return PeerRefusal{"peer-unidentified",
                       "the peer screen failed, so the peer cannot be told from a checker"};
  }
}

}  // namespace

PeerScreenPool::PeerScreenPool(int threads, size_t max_waiting, Screen screen, Post post)
    : state_(std::make_shared<State>()) {
  state_->screen = std::move(screen);
  state_->max_waiting = max_waiting;
  state_->post = std::move(post);
  // The threads inherit this thread's signal mask: all blocked, so a SIGTERM or SIGHUP is
  // taken by the I/O thread and no screen's system call is interrupted.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    Start(threads);
  } catch (...) {  // a thread that cannot be created: the ones that were end, the mask is back
    {
      std::lock_guard lock(state_->mu);
      state_->stopped = true;
      state_->post = nullptr;
    }
    state_->wake.notify_all();
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void PeerScreenPool::Start(int threads) {
  for (int i = 0; i < threads; ++i) {
    // The thread holds the state, so a detached thread never outlives what it touches.
    std::thread([state = state_] {
      std::unique_lock lock(state->mu);
      for (;;) {
        state->wake.wait(lock, [&] { return state->stopped || !state->waiting.empty(); });
        if (state->stopped) return;
        auto [fd, done] = std::move(state->waiting.front());
        state->waiting.pop_front();
        lock.unlock();
        std::optional<PeerRefusal> result = RunScreen(state->screen, fd);
        ::close(fd);
        lock.lock();
        if (state->stopped) {
          done = nullptr;  // on this thread, as the Done contract says
          return;
        }
        // Posted under the lock, so the destructor cannot return between the check and this.
        state->post([done = std::move(done), result = std::move(result)]() mutable {
          done(std::move(result));
        });
      }
    }).detach();
  }
}

PeerScreenPool::~PeerScreenPool() {
  std::deque<std::pair<int, Done>> dropped;
  {
    std::lock_guard lock(state_->mu);
    state_->stopped = true;
    state_->post = nullptr;
    dropped.swap(state_->waiting);
  }
  state_->wake.notify_all();
  for (auto& [fd, done] : dropped) ::close(fd);
}

bool PeerScreenPool::Submit(int fd, Done done) {
  {
    std::lock_guard lock(state_->mu);
    if (!state_->stopped && state_->waiting.size() < state_->max_waiting) {
      state_->waiting.emplace_back(fd, std::move(done));
      state_->wake.notify_one();
      return true;
    }
  }
  ::close(fd);
  return false;
}

}  // namespace devflow::server

#include "host/cli/elapsed.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace devflow {
namespace {

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;  // a terminal that went away: progress is best effort
    done += static_cast<size_t>(n);
  }
}

}  // namespace

ElapsedOnTerminal::ElapsedOnTerminal(CheckerDispatch& inner, int fd, int64_t after_ms,
                                     int64_t every_ms)
    : inner_(inner),
      fd_(fd),
      after_ms_(after_ms),
      every_ms_(every_ms),
      active_(::isatty(fd) == 1) {}

Result<CheckReply> ElapsedOnTerminal::Dispatch(const CheckRequest& request) {
  if (!active_) return inner_.Dispatch(request);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  const auto start = std::chrono::steady_clock::now();
  std::thread ticker([&] {
    std::unique_lock<std::mutex> lock(mu);
    auto next = start + std::chrono::milliseconds(after_ms_);
    bool shown = false;
    while (!cv.wait_until(lock, next, [&] { return done; })) {
      const auto secs =
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
              .count();
      WriteAll(fd_, "\rdevflow-gate: waiting for the checker: " + std::to_string(secs) + "s");
      shown = true;
      next += std::chrono::milliseconds(every_ms_);
    }
    if (shown) WriteAll(fd_, "\n");
  });
  // Stops and joins the ticker however Dispatch returns.
  struct Stop {
    std::mutex& mu;
    std::condition_variable& cv;
    bool& done;
    std::thread& ticker;
    ~Stop() {
      {
        std::lock_guard<std::mutex> lock(mu);
        done = true;
      }
      cv.notify_one();
      ticker.join();
    }
  } stop{mu, cv, done, ticker};
  return inner_.Dispatch(request);
}

}  // namespace devflow

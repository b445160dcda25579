// Caught interrupts (host/interrupt.h).
#include "host/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace devflow {
namespace {

std::atomic<int> caught{0};
int pipe_fds[2] = {-1, -1};

void OnInterrupt(int sig) {
  const int saved = errno;
  int expected = 0;
  if (caught.compare_exchange_strong(expected, sig) && pipe_fds[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(pipe_fds[1], &byte, 1);
  }
  errno = saved;
}

}  // namespace

bool CatchInterrupts() {
  if (pipe_fds[0] >= 0) return true;
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    if (::sigaction(sig, &action, nullptr) != 0) return false;
  }
  return true;
}

int InterruptSignal() { return caught.load(); }

int InterruptFd() { return pipe_fds[0]; }

const char* InterruptName(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

}  // namespace devflow

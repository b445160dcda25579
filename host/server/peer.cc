#include "host/server/peer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "host/os.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5 (asm-generic/socket.h)
#endif

namespace devflow::server {
namespace {

// The integer after `key` at the start of a line of `text`, or nullopt.
std::optional<int> Field(const std::string& text, const char* key) {
  const size_t key_len = std::strlen(key);
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, key_len, key) == 0) {
      size_t v = at + key_len;
      while (v < end && (text[v] == ' ' || text[v] == '\t')) ++v;
      int value = 0;
      auto [ptr, ec] = std::from_chars(text.data() + v, text.data() + end, value);
      if (ec != std::errc() || ptr == text.data() + v) return std::nullopt;
      return value;
    }
    at = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> ReadStatus(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

// RAII for the peer's pidfd.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::optional<SeccompState> ParseSeccompState(const std::string& status_text) {
  std::optional<int> mode = Field(status_text, "Seccomp:");
  if (!mode || *mode < 0 || *mode > 2) return std::nullopt;
  SeccompState state;
  state.mode = *mode;
  std::optional<int> filters = Field(status_text, "Seccomp_filters:");
  state.filters = filters ? *filters : (*mode == 2 ? 1 : 0);
  return state;
}

std::optional<std::string> RefuseConfinedPeer(int fd) {
  static const std::optional<SeccompState> own = [] {
    auto text = ReadStatus("/proc/self/status");
    return text ? ParseSeccompState(*text) : std::nullopt;
  }();
  if (!own) return "the server cannot read its own seccomp state (/proc/self/status)";

  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
    return "the peer's process cannot be identified (SO_PEERCRED)";
  }
  const std::string who = "the peer (pid " + std::to_string(cred.pid) + ")";
  Fd pidfd;
  len = sizeof pidfd.fd;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd.fd, &len) != 0) {
    // Before Linux 6.5 the pid alone names the peer (a recycled pid is then not detected).
    if (errno != ENOPROTOOPT) {
      return who + " cannot be pinned (SO_PEERPIDFD): " + std::strerror(errno) + " (" +
             ErrnoName(errno) + ")";
    }
    pidfd.fd = -1;
  }
  auto text = ReadStatus("/proc/" + std::to_string(cred.pid) + "/status");
  // The status read was the peer's own when the process the pidfd pins still runs now.
  if (pidfd.fd >= 0 && ::syscall(SYS_pidfd_send_signal, pidfd.fd, 0, nullptr, 0) != 0) {
    return who + " ended before its confinement could be checked";
  }
  auto state = text ? ParseSeccompState(*text) : std::nullopt;
  if (!state) return who + "'s seccomp state cannot be read";
  if (state->filters > own->filters) {
    return who + " runs under " + std::to_string(state->filters) + " seccomp filter" +
           (state->filters == 1 ? "" : "s") + ", the server under " + std::to_string(own->filters) +
           ": it runs inside a checker's sandbox (or is confined beyond the server), and no "
           "checker may call the gate";
  }
  return std::nullopt;
}

}  // namespace devflow::server

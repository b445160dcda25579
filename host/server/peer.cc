#include "host/server/peer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "checker/reaper.h"
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

// The parent of `pid` from /proc/<pid>/stat (the field after the command, which is in
// parentheses and may itself hold spaces or parentheses), or -1.
pid_t ParentOf(pid_t pid) {
  auto stat = ReadStatus("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return -1;
  const size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 4 >= stat->size()) return -1;
  // ") S 1234 ...": state, then the parent's pid.
  int parent = -1;
  const char* begin = stat->data() + close + 4;
  auto [ptr, ec] = std::from_chars(begin, stat->data() + stat->size(), parent);
  return ec == std::errc() ? parent : -1;
}

// The command name (comm) of `pid`, without its newline; "" when unreadable.
std::string CommandOf(pid_t pid) {
  auto comm = ReadStatus("/proc/" + std::to_string(pid) + "/comm");
  if (!comm) return "";
  if (!comm->empty() && comm->back() == '\n') comm->pop_back();
  return *comm;
}

}  // namespace

std::optional<pid_t> ReaperAncestor(pid_t pid) {
  // comm is the program's name cut to 15 bytes; a checker cannot rename its reaper (the reaper
  // is non-dumpable, and only a ptrace-capable process may write another's comm).
  const std::string reaper = std::string(reaper::kProgram).substr(0, 15);
  for (int depth = 0; pid > 1 && depth < 4096; ++depth) {
    if (CommandOf(pid) == reaper) return pid;
    pid = ParentOf(pid);
  }
  return std::nullopt;
}

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
  // Every checker's tree hangs below its reaper (a child subreaper: orphans stay below it), so
  // a peer with a reaper among its ancestors is a checker's, however the server is confined.
  if (auto reaper_pid = ReaperAncestor(cred.pid)) {
    return who + " runs below the checker reaper (pid " + std::to_string(*reaper_pid) +
           "): it is a checker's, and no checker may call the gate";
  }
  if (state->filters > own->filters) {
    return who + " runs under " + std::to_string(state->filters) + " seccomp filter" +
           (state->filters == 1 ? "" : "s") + ", the server under " + std::to_string(own->filters) +
           ": it runs inside a checker's sandbox (or is confined beyond the server), and no "
           "checker may call the gate";
  }
  return std::nullopt;
}

}  // namespace devflow::server

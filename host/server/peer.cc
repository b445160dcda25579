#include "host/server/peer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

const std::optional<SeccompState>& OwnSeccomp() {
  static const std::optional<SeccompState> own = [] {
    auto text = ReadStatus("/proc/self/status");
    return text ? ParseSeccompState(*text) : std::nullopt;
  }();
  return own;
}

// Why process `pid` (pinned by `pidfd`, or -1 where the kernel cannot pin it) must not call the
// gate, or nullopt. `who` names it in the message. `still_holds`, when given, is asked after
// the examination whether the process still holds the connection (a TCP peer's holders).
std::optional<std::string> RefuseProcess(pid_t pid, int pidfd, const std::string& who,
                                         bool (*still_holds)(pid_t, ino_t) = nullptr,
                                         ino_t inode = 0) {
  const std::optional<SeccompState>& own = OwnSeccomp();
  if (!own) return "the server cannot read its own seccomp state (/proc/self/status)";
  auto text = ReadStatus("/proc/" + std::to_string(pid) + "/status");
  // Every checker's tree hangs below its reaper (a child subreaper: orphans stay below it), so
  // a peer with a reaper among its ancestors is a checker's, however the server is confined.
  std::optional<pid_t> reaper_pid = ReaperAncestor(pid);
  if (still_holds && !still_holds(pid, inode)) {
    return who + " handed the connection on while it was examined";
  }
  // The reads were the peer's own when the process the pidfd pins still runs now. Only ESRCH
  // says it ended: a server without CAP_KILL gets EPERM for another uid's live process (docs21
  // F3: a server running as its own user refused every caller of another uid).
  if (pidfd >= 0 && ::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) != 0 && errno != EPERM) {
    if (errno == ESRCH) return who + " ended before its confinement could be checked";
    return who + " cannot be asked whether it still runs (pidfd_send_signal: " + ErrnoName(errno) +
           ")";
  }
  auto state = text ? ParseSeccompState(*text) : std::nullopt;
  if (!state) return who + "'s seccomp state cannot be read";
  if (reaper_pid) {
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

// The owner uid and inode of the socket of this network namespace whose local end is `peer`
// and whose remote end is `local` (the client's end of an accepted connection), asked of the
// kernel by the exact four-tuple (sock_diag(7), inet_diag without NLM_F_DUMP). nullopt with
// `*gone` true when the kernel knows no such socket here (ENOENT: a remote peer), with `*gone`
// false and `*why` set when the question itself failed.
struct DiagSocket {
  uid_t uid = 0;
  ino_t inode = 0;
};
std::optional<DiagSocket> AskSocket(const sockaddr_storage& peer, const sockaddr_storage& local,
                                    bool* gone, std::string* why) {
  *gone = false;
  Fd nl;
  nl.fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl.fd < 0) {
    *why = std::string("NETLINK_SOCK_DIAG: ") + ErrnoName(errno);
    return std::nullopt;
  }
  struct {
    nlmsghdr header;
    inet_diag_req_v2 req;
  } msg{};
  msg.header.nlmsg_len = sizeof msg;
  msg.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.header.nlmsg_flags = NLM_F_REQUEST;
  msg.header.nlmsg_seq = 1;
  msg.req.sdiag_family = static_cast<uint8_t>(peer.ss_family);
  msg.req.sdiag_protocol = IPPROTO_TCP;
  msg.req.idiag_states = ~0u;
  msg.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  msg.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  if (peer.ss_family == AF_INET) {
    const auto& p = reinterpret_cast<const sockaddr_in&>(peer);
    const auto& l = reinterpret_cast<const sockaddr_in&>(local);
    msg.req.id.idiag_sport = p.sin_port;
    msg.req.id.idiag_dport = l.sin_port;
    std::memcpy(msg.req.id.idiag_src, &p.sin_addr, sizeof p.sin_addr);
    std::memcpy(msg.req.id.idiag_dst, &l.sin_addr, sizeof l.sin_addr);
  } else {
    const auto& p = reinterpret_cast<const sockaddr_in6&>(peer);
    const auto& l = reinterpret_cast<const sockaddr_in6&>(local);
    msg.req.id.idiag_sport = p.sin6_port;
    msg.req.id.idiag_dport = l.sin6_port;
    std::memcpy(msg.req.id.idiag_src, &p.sin6_addr, sizeof p.sin6_addr);
    std::memcpy(msg.req.id.idiag_dst, &l.sin6_addr, sizeof l.sin6_addr);
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(nl.fd, &msg, sizeof msg, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) !=
      static_cast<ssize_t>(sizeof msg)) {
    *why = std::string("NETLINK_SOCK_DIAG send: ") + ErrnoName(errno);
    return std::nullopt;
  }
  alignas(nlmsghdr) char buf[8192];
  ssize_t n;
  do {
    n = ::recv(nl.fd, buf, sizeof buf, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    *why = std::string("NETLINK_SOCK_DIAG receive: ") + ErrnoName(errno);
    return std::nullopt;
  }
  auto* h = reinterpret_cast<nlmsghdr*>(buf);
  size_t left = static_cast<size_t>(n);
  for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
    if (h->nlmsg_type == NLMSG_ERROR) {
      const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
      if (err->error == -ENOENT) {
        *gone = true;
      } else {
        *why = std::string("NETLINK_SOCK_DIAG: ") + ErrnoName(-err->error);
      }
      return std::nullopt;
    }
    if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
        h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
      const auto* diag = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      return DiagSocket{diag->idiag_uid, static_cast<ino_t>(diag->idiag_inode)};
    }
  }
  *why = "NETLINK_SOCK_DIAG: no answer for the peer's socket";
  return std::nullopt;
}

// Does /proc/<pid>/fd hold a link to `socket:[inode]`? false when it cannot be read.
bool HoldsSocket(pid_t pid, ino_t inode) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  const std::string want = "socket:[" + std::to_string(inode) + "]";
  bool held = false;
  char target[64];
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ssize_t len = ::readlinkat(::dirfd(d), e->d_name, target, sizeof target);
    if (len == static_cast<ssize_t>(want.size()) &&
        want.compare(0, want.size(), target, len) == 0) {
      held = true;
      break;
    }
  }
  ::closedir(d);
  return held;
}

// The processes of this PID namespace that hold `socket:[inode]`, and those whose descriptor
// tables could not be read (another user's, a non-dumpable one).
std::vector<pid_t> Holders(ino_t inode, std::vector<pid_t>* unreadable) {
  std::vector<pid_t> holders;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return holders;
  const pid_t self = ::getpid();
  while (dirent* e = ::readdir(proc)) {
    pid_t pid = 0;
    const char* end = e->d_name + std::strlen(e->d_name);
    auto [ptr, ec] = std::from_chars(e->d_name, end, pid);
    if (ec != std::errc() || ptr != end || pid == self) continue;
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    if (::access(dir.c_str(), R_OK | X_OK) != 0) {
      if (errno != ENOENT) unreadable->push_back(pid);
      continue;
    }
    if (HoldsSocket(pid, inode)) holders.push_back(pid);
  }
  ::closedir(proc);
  return holders;
}

}  // namespace

std::optional<std::string> RefuseConfinedPeer(int fd) {
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
  return RefuseProcess(cred.pid, pidfd.fd, who);
}

std::optional<PeerRefusal> RefuseTcpPeer(int fd, const std::vector<uid_t>& allow_uids) {
  sockaddr_storage peer{}, local{};
  socklen_t peer_len = sizeof peer, local_len = sizeof local;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
      (peer.ss_family != AF_INET && peer.ss_family != AF_INET6) ||
      peer.ss_family != local.ss_family) {
    return PeerRefusal{"peer-unidentified", "the peer's address cannot be read"};
  }
  bool loopback = false;
  if (peer.ss_family == AF_INET) {
    loopback = (ntohl(reinterpret_cast<const sockaddr_in&>(peer).sin_addr.s_addr) >> 24) == 127;
  } else {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    loopback = IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  bool gone = false;
  std::string why;
  std::optional<DiagSocket> sock = AskSocket(peer, local, &gone, &why);
  if (!sock) {
    if (gone && !loopback) return std::nullopt;  // not a socket of this host's namespace
    return PeerRefusal{"peer-unidentified",
                       gone ? "the kernel knows no socket for this loopback peer"
                            : "the peer's socket cannot be looked up (" + why + ")"};
  }
  // A socket with no inode has no file left: its process closed it (it lingers in FIN_WAIT or
  // TIME_WAIT), so no process holds it and none can be examined. Said as such, before its uid
  // (an orphan's), rather than as a scan of /proc that finds no holder.
  if (sock->inode == 0) {
    return PeerRefusal{"peer-unidentified",
                       "the peer closed its socket before it could be screened (the kernel's "
                       "socket has no file left), so it cannot be told from a checker"};
  }
  if (std::find(allow_uids.begin(), allow_uids.end(), sock->uid) == allow_uids.end()) {
    return PeerRefusal{"peer-uid", "uid " + std::to_string(sock->uid) +
                                       " is not allowed on this listener; start the server with "
                                       "--allow-uid " +
                                       std::to_string(sock->uid) + " to allow it"};
  }
  std::vector<pid_t> unreadable;
  std::vector<pid_t> holders = Holders(sock->inode, &unreadable);
  if (holders.empty()) {
    return PeerRefusal{
        "peer-unidentified",
        "no process that holds the peer's socket (inode " + std::to_string(sock->inode) +
            ") can be examined" +
            (unreadable.empty() ? std::string()
                                : " (" + std::to_string(unreadable.size()) +
                                      " processes' descriptors are unreadable: another user's, "
                                      "or non-dumpable)") +
            ", so it cannot be told from a checker"};
  }
  // A checker may make itself non-dumpable, and its descriptors unreadable, while a process
  // outside holds a copy of the socket; its ancestry stays readable (stat, comm) and gives it
  // away: any unreadable process below a reaper might hold the connection.
  for (pid_t pid : unreadable) {
    if (auto reaper_pid = ReaperAncestor(pid)) {
      return PeerRefusal{"peer-confined",
                         "a checker's process (pid " + std::to_string(pid) + ", below the reaper " +
                             std::to_string(*reaper_pid) +
                             ") cannot be examined and might hold the connection; no checker "
                             "may call the gate"};
    }
  }
  for (pid_t pid : holders) {
    Fd pidfd;
    pidfd.fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    const std::string who = "the peer (pid " + std::to_string(pid) + ")";
    if (pidfd.fd < 0) return PeerRefusal{"peer-confined", who + " ended before it was examined"};
    if (!HoldsSocket(pid, sock->inode)) {
      return PeerRefusal{"peer-confined", who + " handed the connection on while it was examined"};
    }
    if (auto refused = RefuseProcess(pid, pidfd.fd, who, &HoldsSocket, sock->inode)) {
      return PeerRefusal{"peer-confined", *refused};
    }
  }
  return std::nullopt;
}

}  // namespace devflow::server

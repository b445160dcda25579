// Is a Unix-socket peer of `serve` a checker? (issue 7; docs/security.md "A checker may not call
// the gate"). A checker runs as the user the gate runs as, so SO_PEERCRED's uid cannot tell a
// checker from the TypeScript devflow or an operator's curl; what can is the seccomp filter
// every confined checker runs under and no other process of the deployment needs: the reaper
// applies it at the Landlock level and bubblewrap (`--seccomp FD`) at the bubblewrap level, and
// a filter can never be removed, so every process a checker starts carries it too.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace devflow::server {

/// The seccomp state of one process, from the `Seccomp:` and `Seccomp_filters:` lines of its
/// /proc/<pid>/status (proc(5); the count exists since Linux 5.9).
struct SeccompState {
  int mode = 0;     // 0 none, 1 strict, 2 filter
  int filters = 0;  // installed filters (each inherited by children, never removed)
};

/// Parses a /proc/<pid>/status text; nullopt when the `Seccomp:` line is missing or malformed.
/// Without a `Seccomp_filters:` line (kernels before 5.9) a mode of 2 counts as one filter.
std::optional<SeccompState> ParseSeccompState(const std::string& status_text);

/// Why the peer connected on Unix socket `fd` must be refused, or nullopt when it may call.
/// A peer is refused when it runs below a checker reaper (ReaperAncestor: this holds however
/// the server itself is confined), or under more seccomp filters than this server (a checker's
/// tree, or anything confined beyond it), and, failing closed, when its process cannot
/// be identified or examined: SO_PEERPIDFD (Linux 6.5) pins the peer, so a pid handed to another
/// process between the read of its status and the answer is detected and refused too. The
/// text is the 403 message, e.g. `the peer (pid 4242) runs under 2 seccomp filters, the server
/// under 1: it runs inside a checker's sandbox, and no checker may call the gate`.
std::optional<std::string> RefuseConfinedPeer(int fd);

/// A refused peer: the metric's reason label (`peer-uid`, `peer-confined`, `peer-unidentified`)
/// and the 403 message.
struct PeerRefusal {
  std::string reason;
  std::string message;
};

/// Why the peer connected on TCP socket `fd` must be refused, or nullopt when it may call.
/// The kernel ties no process to a TCP peer (SO_PEERCRED and SO_PEERPIDFD are Unix-only), so
/// the server asks it for the peer's socket by its four-tuple (NETLINK_SOCK_DIAG, inet_diag:
/// its owner uid and inode; found only when the peer is a socket of this network namespace,
/// as a checker with `network: true` is at both levels) and then for the processes that hold
/// that socket (the `socket:[inode]` links of /proc/<pid>/fd: the kernel offers no map from a
/// socket to its holders; `ss -p` reads the same). Refused, failing closed:
/// - a local peer whose uid is not in `allow_uids` (`peer-uid`), as on Unix sockets;
/// - a local peer with a holder that RefuseConfinedPeer's rules refuse (a reaper among its
///   ancestors, more seccomp filters than the server) (`peer-confined`); each holder is pinned
///   with a pidfd and must still hold the socket after it was examined;
/// - a local peer whose holders cannot all be found and examined, one that closed its socket
///   before the screen (the kernel's socket has inode 0), or a loopback peer the kernel does
///   not know (`peer-unidentified`).
/// A peer whose socket is not in this namespace is remote (only `--allow-remote`, with the
/// bearer token, admits it) and passes this screen. Source: issue 7, the trial of 2026-12-02.
std::optional<PeerRefusal> RefuseTcpPeer(int fd, const std::vector<uid_t>& allow_uids);

/// The pid of the nearest process at or above `pid` (through /proc/<pid>/stat's parent field)
/// whose command is the checker reaper (`devflow-gate-reaper`, cut to comm's 15 bytes), or
/// nullopt when there is none up to pid 1. Every process a checker starts stays below its
/// reaper, which is a child subreaper, until the check ends.
std::optional<pid_t> ReaperAncestor(pid_t pid);

}  // namespace devflow::server

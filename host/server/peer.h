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

/// The pid of the nearest process at or above `pid` (through /proc/<pid>/stat's parent field)
/// whose command is the checker reaper (`devflow-gate-reaper`, cut to comm's 15 bytes), or
/// nullopt when there is none up to pid 1. Every process a checker starts stays below its
/// reaper, which is a child subreaper, until the check ends.
std::optional<pid_t> ReaperAncestor(pid_t pid);

}  // namespace devflow::server

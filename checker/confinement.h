// What confines one checker process, applied in it between fork and exec by the checker's
// reaper (checker/reaper/main.cc, a small program of its own, cpp-notes §1.5 item 12). Plain C++
// without allocation or exceptions: it is compiled into that program too. The host prepares
// everything that allocates or opens files (checker/sandbox.h, ChildConfinement).
#pragma once

#include <cstddef>
#include <cstdint>

namespace devflow {

/// Resource limits of a checker (setrlimit values). RLIMIT_AS is deliberately not set: JIT
/// runtimes reserve huge address ranges (cpp-notes §3). 0 leaves a limit as inherited.
struct ResourceLimits {
  uint64_t cpu_soft_s = 0;  // RLIMIT_CPU soft (SIGXCPU), seconds of CPU time
  uint64_t cpu_hard_s = 0;  // RLIMIT_CPU hard (SIGKILL) = soft + 1
  uint64_t file_bytes = 0;  // RLIMIT_FSIZE: largest file the checker may write (SIGXFSZ)
  uint64_t open_files = 0;  // RLIMIT_NOFILE
};

/// One checker's confinement as the reaper holds it.
struct ConfinementPlan {
  ResourceLimits limits;
  int ruleset_fd = -1;           // Landlock ruleset to restrict to; -1: no Landlock
  const void* filter = nullptr;  // struct sock_filter[filter_len]; nullptr: no seccomp
  size_t filter_len = 0;         // BPF instructions (8 bytes each), at most 4096
};

/// In the checker, before exec: setrlimit (never above the inherited hard limit), then, when the
/// plan has a ruleset or a filter, PR_SET_NO_NEW_PRIVS, every capability dropped (bounding set,
/// ambient, effective/permitted/inheritable: so a root host's checker cannot read
/// /proc/<pid>/environ or mem of any process that holds capabilities, or of any non-dumpable
/// one, issue 7 item 5), landlock_restrict_self and the seccomp filter. Async-signal-safe (raw
/// syscalls only). Returns 0 or the errno of the failed step.
int ApplyConfinement(const ConfinementPlan& plan);

}  // namespace devflow

// Applying a checker's confinement in the checker itself (checker/confinement.h). Only raw
// syscalls: this file is linked into the static checker reaper as well.
#include "checker/confinement.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace devflow {
namespace {

// Every capability gone for good (async-signal-safe: raw prctl/capget/capset). Without
// CAP_SYS_PTRACE, and with permitted caps that are not a superset of the target's, the kernel
// refuses /proc/<pid>/environ, /proc/<pid>/mem and ptrace of every process that is
// non-dumpable (the host) or holds capabilities (root's processes), measured on this machine;
// NO_NEW_PRIVS (set before) keeps exec from granting them back, even to uid 0.
int DropAllCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return errno;
  bool any = false;
  for (const auto& d : data) any = any || d.effective || d.permitted || d.inheritable;
  if (any) {
    for (int cap = 0; cap < 64; ++cap) {
      // EINVAL: beyond this kernel's last capability. EPERM: no CAP_SETPCAP left to drop it
      // with, which only happens to an already capability-less process (checked below).
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM) {
        return errno;
      }
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return errno;
  }
  __user_cap_data_struct none[2] = {};
  header = {_LINUX_CAPABILITY_VERSION_3, 0};
  if (::syscall(SYS_capset, &header, none) != 0) return errno;
  return 0;
}

// Never above the inherited hard limit (raising it would fail without privilege).
int Limit(int resource, uint64_t soft, uint64_t hard) {
  struct rlimit rl {};
  if (::getrlimit(resource, &rl) != 0) return errno;
  const rlim_t ceiling = rl.rlim_max;
  rl.rlim_max = static_cast<rlim_t>(hard) < ceiling ? static_cast<rlim_t>(hard) : ceiling;
  rl.rlim_cur = static_cast<rlim_t>(soft) < rl.rlim_max ? static_cast<rlim_t>(soft) : rl.rlim_max;
  return ::setrlimit(resource, &rl) == 0 ? 0 : errno;
}

}  // namespace

int ApplyConfinement(const ConfinementPlan& plan) {
  const ResourceLimits& limits = plan.limits;
  int err = 0;
  if (limits.cpu_soft_s > 0 && (err = Limit(RLIMIT_CPU, limits.cpu_soft_s, limits.cpu_hard_s)))
    return err;
  if (limits.file_bytes > 0 && (err = Limit(RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes)))
    return err;
  if (limits.open_files > 0 && (err = Limit(RLIMIT_NOFILE, limits.open_files, limits.open_files)))
    return err;
  if (plan.ruleset_fd < 0 && plan.filter == nullptr) return 0;

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (int cap_err = DropAllCapabilities()) return cap_err;
  if (plan.ruleset_fd >= 0 && ::syscall(__NR_landlock_restrict_self, plan.ruleset_fd, 0) != 0) {
    return errno;
  }
  if (plan.filter != nullptr) {
    sock_fprog prog{};
    prog.len = static_cast<unsigned short>(plan.filter_len);
    prog.filter = static_cast<sock_filter*>(const_cast<void*>(plan.filter));
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return errno;
  }
  return 0;
}

}  // namespace devflow

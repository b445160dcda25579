// Confining the checker (SPEC §5, issue 4 items 1-2, cpp-notes §3): a start-up probe picks the
// strongest mechanism the host offers, and the pieces SubprocessChecker needs to apply it:
//  - "bwrap": bubblewrap wraps the command (only the readable set, read-only, a writable
//    scratch, own PID/IPC/UTS/cgroup/user/net namespaces unless the provider keeps the network,
//    die with the host);
//  - "landlock-abi<N>+seccomp": in the child before exec, Landlock allows reads only in the
//    readable set and writes only under the scratch dir and /dev/null (TCP bind/connect denied
//    at ABI >= 4) and a seccomp filter denies sockets (EACCES) and io_uring (ENOSYS);
//  - "none": neither is usable. A check at this level does not run: it is a fault naming the
//    fix (issue 7 item 6); only `sandbox: off` on the provider runs a checker unconfined.
// Resource limits (RLIMIT_CPU from the deadline, RLIMIT_FSIZE, RLIMIT_NOFILE) apply at every
// level. This header is plain C++ (no Linux uapi headers).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checker/confinement.h"
#include "host/status.h"

namespace devflow {

/// What this host can confine a checker with. Probed once per process and bwrap program.
struct SandboxSupport {
  std::string bwrap;  // absolute path of a bubblewrap that ran the probe; empty: unusable
  /// Absolute path of the bubblewrap found on the search path, usable or not; empty: none is
  /// installed there (NoSandboxProblem then says to install it, else to make it usable).
  std::string bwrap_found;
  int landlock_abi = 0;  // Landlock ABI version from landlock_create_ruleset; 0: unavailable
  bool seccomp = false;  // seccomp filter mode with SECCOMP_RET_ERRNO is available
  /// Why bubblewrap is unusable (empty when usable), e.g. `"bwrap" is not on PATH`.
  std::string bwrap_problem;
  /// Why the Landlock + seccomp fallback is unusable (empty when usable), e.g.
  /// `landlock_create_ruleset: Function not implemented`.
  std::string fallback_problem;
};

/// How ProbeSandbox may touch the disk: a positive bubblewrap probe is remembered in
/// `$XDG_CACHE_HOME/devflow-gate/bwrap-probe` (else `$HOME/.cache/...`) when `remember` is
/// true, keyed by the probe's version among the rest (an entry of an older probe, one without
/// `--seccomp`, is never reused); `--dry-run` and `config check` pass false and write nothing
/// (issue 7 item 12). The cache is read either way.
struct ProbeOptions {
  bool remember = true;
};

/// Probes (and caches for the life of the process, thread-safe) the confinement available.
/// `bwrap_program` is a name searched on $PATH or a path; empty skips bubblewrap entirely (the
/// fallback is then probed as if bubblewrap were missing). Bubblewrap counts as usable when it
/// runs /bin/true the way it runs a checker and that exits 0 within 10 s: BwrapArgv on the
/// readable set of /bin/true (`bwrap --ro-bind /usr /usr ... --unshare-all
/// --die-with-parent --new-session --cap-drop ALL --seccomp FD ... -- /bin/true`),
/// FD holding the checker's own seccomp
/// program (ChildConfinement::Bwrap), so a host where bubblewrap cannot install it (`bwrap:
/// Unable to set up system call filtering`) finds bubblewrap unusable, with that line in
/// `bwrap_problem`, rather than every check failing. The result is cached per (program, $PATH,
/// test seam); the test seam DEVFLOW_GATE_TEST_NO_LANDLOCK=1 makes the Landlock probe fail as
/// on a kernel without Landlock (ENOSYS), through the same code path: it can only turn a
/// level into a fault, never weaken one.
const SandboxSupport& ProbeSandbox(const std::string& bwrap_program,
                                   const ProbeOptions& options = {});
/// The same, keyed on `search_path`, SearchPath() as the caller has just worked it out (a
/// dispatch needs it for the checker's PATH too; issue 8).
const SandboxSupport& ProbeSandbox(const std::string& bwrap_program, const ProbeOptions& options,
                                   const std::string& search_path);

/// Forgets that bubblewrap was usable, after a check found it unable to start a checker
/// (bubblewrap's own error, e.g. `bwrap: No permissions to create new namespace`, on a host whose
/// user namespaces were taken away after the positive probe was remembered: a systemd unit's
/// RestrictNamespaces=, AppArmor, a sysctl; trial11 7c, where every move parked until the entry
/// was removed by hand). The next ProbeSandbox in this process probes again, and with
/// `options.remember` the remembered entry is removed too when it is this host's (a file of
/// another key is left alone); without it (`--dry-run`) nothing on disk changes. Thread-safe.
void ForgetBwrapProbe(const ProbeOptions& options = {});

/// How one checker is confined.
enum class SandboxKind { kOff, kNone, kBwrap, kLandlock };

/// The kind applied for `support`: kOff when the provider asked for `sandbox: off`, else
/// kBwrap when bubblewrap is usable, else kLandlock when Landlock and seccomp both are, else
/// kNone (which never runs a checker: see NoSandboxProblem).
SandboxKind ChooseSandbox(const SandboxSupport& support, bool provider_off);

/// The level name recorded in replies and reports: "off", "none", "bwrap" or
/// "landlock-abi<N>+seccomp" (N = `landlock_abi`).
std::string SandboxLevelName(SandboxKind kind, int landlock_abi);

/// The fault text for a provider whose checks would run at level "none": what is missing and
/// the two fixes, e.g. `no sandbox is usable for provider "review": bubblewrap: "bwrap" is not
/// on PATH; Landlock + seccomp: landlock_create_ruleset: Function not implemented. Install
/// bubblewrap (apt-get install bubblewrap), or set `sandbox: off` on provider "review" to run
/// its checker unconfined`. When bubblewrap is installed but its probe failed, the first fix
/// is to let it run (user namespaces, seccomp) instead of installing it (trial11 7b).
std::string NoSandboxProblem(const SandboxSupport& support, const std::string& provider);

/// The program search path of the gate and of every checker: the host's $PATH with every entry
/// dropped that is not absolute (an empty entry means the current directory to execvp, a
/// relative one resolves against it, and the gate and its checkers run in the workspace the
/// judged agent can write: `PATH=./node_modules/.bin:$PATH` let a planted `python3` decide a
/// check, the trial of 2026-12-02) or that lies, as written or resolved, in a tree given to
/// DistrustTree (an absolute `$PWD/node_modules/.bin` did the same, and a planted `bwrap` there
/// ran the checker unconfined while the ledger said bwrap: the second trial of 2026-12-02);
/// "/usr/local/bin:/usr/bin:/bin" when $PATH is unset or nothing is left. Used to find
/// bubblewrap, env, provider programs and the checker's PATH. Worked out once per $PATH value
/// and set of distrusted trees (a later DistrustTree, or another $PATH, walks anew); a server
/// pays the walk once, not per dispatch. Thread-safe.
std::string SearchPath();

/// Marks `dir` (a workspace the judged agent can write; canonicalised) as a tree SearchPath
/// never searches, for the rest of the process. Called for each root's workspace when its
/// config loads (host/deployment LoadPinnedConfig), before any program is resolved. Thread-safe.
void DistrustTree(const std::string& dir);

/// The entries of the host's $PATH that SearchPath drops, as written, in order, each once: ""
/// for an empty entry (the current directory), every relative one, and every one in a
/// distrusted tree. `config check` warns about each (host/deployment/config_check.h), since whoever
/// controls that directory could swap a program found through it.
std::vector<std::string> UnsearchedPathEntries();

/// What one check's readable set is made of (CheckerReadable). Paths absolute, as written.
struct CheckerPaths {
  std::string workspace;  // the card workspace, the checker's cwd (read-only); empty: none
  std::string scratch;    // the check's scratch dir, HOME and TMPDIR (read and write); empty: none
  /// Programs that run inside the confinement: the provider's executable, and under bubblewrap
  /// the inner reaper (checker/reaper.h). Each gives the directory of every hop of its own
  /// symlink chain (`~/.local/bin/x -> ~/.local/share/x/bin/x`: both directories).
  std::vector<std::string> programs;
  /// The checker's PATH (SearchPath, ':'-separated): each absolute entry is readable, so the
  /// programs a checker runs by name are there (an LLM CLI's `#!/usr/bin/env node`).
  std::string search_path;
  std::vector<std::string> read;  // the provider's `read:` paths, files or trees
};

/// What a confined checker may read, at both levels (issue 7, "no host secret at any level"),
/// computed in one place and applied by BwrapArgv (what is bound) and ChildConfinement::Landlock
/// (what the ruleset grants). Everything else of the host — /home, /root, /var, /srv, /mnt,
/// /media, /tmp, /run, /sys, a config or token file outside these trees — is not there under
/// bubblewrap and EACCES under Landlock.
struct ReadableSet {
  /// Read and execute beneath each: the system trees that exist among /usr /bin /sbin /lib
  /// /lib32 /lib64 /libx32 /etc /opt, the workspace, the directories of the programs' symlink
  /// hops, the PATH entries, the `read` paths, and /etc/resolv.conf's target when it lies in
  /// /run (DNS). Each
  /// canonical (realpath), sorted, none beneath another, none beneath a `denied` path; a path
  /// that does not exist is left out.
  std::vector<std::string> trees;
  /// The secrets a root host keeps beneath /etc, canonical, those that exist beneath a tree:
  /// /etc/shadow, /etc/gshadow, /etc/shadow-, /etc/gshadow-, /etc/sudoers, /etc/sudoers.d,
  /// /etc/ssh/ssh_host_*_key (not the .pub), /etc/security/opasswd, /etc/ssl/private.
  /// Bubblewrap masks each (a file with /dev/null on a nodev mount: EACCES; a directory with an
  /// empty read-only tmpfs); Landlock cannot deny beneath an allowed directory, so a tree holding
  /// one is granted entry by entry instead, without it (and without the tree's own listing).
  std::vector<std::string> denied;
  /// The symlinks met on the way to the trees, the scratch dir and the programs as written
  /// (SymlinksAlong: `/bin -> usr/bin`, a symlinked home), as (where the link lies, its
  /// target), each once, those outside every tree and the scratch dir: bubblewrap recreates
  /// them so every path the checker is given resolves as on the host. Landlock needs none (it
  /// judges the file a path reaches, not the way there).
  std::vector<std::pair<std::string, std::string>> links;
  std::string workspace;  // canonical; empty: none
  std::string scratch;    // canonical; empty: none
};

/// The readable set of one check (see ReadableSet). Reads the file system (realpath, lstat,
/// readlink, /etc/ssh's listing); never fails: what cannot be resolved is left out, so a
/// missing piece can only make the checker see less. `links`: false leaves
/// ReadableSet::links empty (the Landlock level needs none; it saves a walk per path).
ReadableSet CheckerReadable(const CheckerPaths& paths, bool links = true);

/// Whether a checker confined to `set` can read `path`: what it resolves to is the scratch dir
/// or lies beneath it or one of `set.trees`, and beneath none of `set.denied`. False for a path
/// that does not resolve. `config check` holds a provider's files to it
/// (host/deployment/config_check.h).
bool ReadableIn(const ReadableSet& set, const std::string& path);

/// The secrets every readable set masks (ReadableSet::denied's candidates), canonical, those
/// that exist: a `read:` path among or beneath them stays unreadable.
std::vector<std::string> MaskedSecrets();

/// The mounts of a bubblewrap-confined checker.
struct BwrapSpec {
  std::string bwrap;     // bubblewrap program (absolute)
  ReadableSet readable;  // what is bound (read-only, the scratch dir writable) and the cwd
  bool network = false;  // keep the host network namespace (`--share-net`)
  int seccomp_fd = -1;   // bubblewrap applies the seccomp program read from this fd (`--seccomp
                         // FD`, the fd open in bubblewrap, at offset 0); -1: none
  /// The command is the PID namespace's init (`--as-pid-1`, no init of bubblewrap's): the
  /// reaper R' (checker/reaper.h), which no process of the sandbox can then signal (the kernel
  /// drops a SIGKILL or SIGSTOP sent to a namespace's init from inside it), and whose end ends
  /// every process in the namespace before bubblewrap sees it exit.
  bool as_pid_1 = false;
};

/// The full argv that runs `command` (command[0] absolute) inside bubblewrap, on an empty root:
/// `bwrap [--ro-bind T T]... --dev /dev --proc /proc --remount-ro /proc --unshare-all
/// [--share-net] [--as-pid-1] --die-with-parent --new-session --cap-drop ALL [--seccomp FD]
/// [--ro-bind /dev/null DENIED_FILE | --tmpfs DENIED_DIR --remount-ro DENIED_DIR]...
/// [--symlink TARGET LINK]... [--bind SCRATCH SCRATCH] --remount-ro / [--chdir WS] --
/// command...`, T each of `readable.trees` in order. The masks come after the trees, the
/// scratch bind after every other mount (no later mount can hide it), and the empty root
/// bubblewrap builds is made read-only last. Bubblewrap always sets PWD; the command is the
/// reaper R' (checker/reaper.h), which removes it again, so the checker's environment stays
/// exactly the SPEC §5 one.
std::vector<std::string> BwrapArgv(const BwrapSpec& spec, const std::vector<std::string>& command);

/// Limits for a check with wall-clock deadline `timeout_ms`: CPU soft = ceil(timeout s) + 1,
/// unless `cpu_override_s` > 0, which replaces it (tests); hard = soft + 1.
ResourceLimits LimitsFor(int64_t timeout_ms, int64_t cpu_override_s, int64_t file_bytes,
                         int64_t open_files);

/// Confinement prepared in the host (everything that allocates or opens files) and handed to
/// the checker's reaper (checker/reaper/main.cc), which applies it in the checker between fork
/// and exec (ApplyConfinement, checker/confinement.h). Move-only; owns the Landlock ruleset fd
/// and the memfd that holds the seccomp program (both O_CLOEXEC: the reaper gets them by
/// number, the checker never).
class ChildConfinement {
 public:
  ChildConfinement() = default;
  ChildConfinement(ChildConfinement&& other) noexcept;
  ChildConfinement& operator=(ChildConfinement&& other) noexcept;
  ChildConfinement(const ChildConfinement&) = delete;
  ChildConfinement& operator=(const ChildConfinement&) = delete;
  ~ChildConfinement();

  /// Only resource limits (levels "none", "off").
  static ChildConfinement LimitsOnly(const ResourceLimits& limits);
  /// Limits + the seccomp program of a bubblewrap-confined checker (the same filter as at the
  /// Landlock level, see Landlock()), in a memfd at offset 0 that the reaper does not apply but
  /// hands to bubblewrap (`--seccomp FD`, BwrapSpec::seccomp_fd; pass_fd()). So at both levels
  /// a checker without `network` cannot open any socket (a pathname Unix socket such as the
  /// gate's own server's is reachable through the read-only root otherwise), and every confined
  /// checker runs under one seccomp filter more than the host that started it (the server's peer
  /// check, host/server/peer.h). Errors as Landlock().
  static Result<ChildConfinement> Bwrap(const ResourceLimits& limits, bool network);
  /// Limits + Landlock (ABI `landlock_abi` >= 1: read, execute and write rights handled; reads
  /// granted only beneath `readable.trees` (a tree holding a `readable.denied` path entry by
  /// entry, without it), /proc, and the device files /dev/null, /dev/zero, /dev/full,
  /// /dev/random, /dev/urandom; everything beneath `readable.scratch`; writes elsewhere only on
  /// /dev/null; at ABI >= 4 TCP bind/connect handled and never granted unless
  /// `network`; at ABI >= 6 abstract unix sockets and signals scoped to the sandbox) + a seccomp
  /// filter (always io_uring_setup -> ENOSYS; ptrace, process_vm_readv/writev -> EPERM; every
  /// call that changes a file's mode, owner, times, xattrs or inode flags -> EPERM, wherever the
  /// file lies; unless `network`, socket() of every domain, Unix included, -> EACCES;
  /// socketpair stays) built with libseccomp and exported as BPF into a memfd.
  /// Errors: code "sandbox", message naming the step and the OS error, e.g.
  /// `landlock_create_ruleset: Invalid argument`.
  static Result<ChildConfinement> Landlock(const ResourceLimits& limits, int landlock_abi,
                                           const ReadableSet& readable, bool network);

  const ResourceLimits& limits() const { return limits_; }
  /// The Landlock ruleset fd, or -1 (no Landlock).
  int ruleset_fd() const { return ruleset_fd_; }
  /// How many rules the Landlock ruleset holds (one open and one landlock_add_rule each): the
  /// cost of the readable set at this level, paid by a check that runs its checker only.
  int rules() const { return rules_; }
  /// A memfd holding the seccomp program (struct sock_filter[], from offset 0 to its size), or
  /// -1 (no seccomp).
  int filter_fd() const { return filter_fd_; }
  /// A memfd holding the seccomp program that the checker's wrapper (bubblewrap) applies itself,
  /// kept open across the checker's exec; or -1.
  int pass_fd() const { return pass_fd_; }

 private:
  ResourceLimits limits_;
  int ruleset_fd_ = -1;
  int rules_ = 0;
  int filter_fd_ = -1;
  int pass_fd_ = -1;
};

}  // namespace devflow

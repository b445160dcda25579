// The confined checker (issue 4 items 1-2): real processes under the level this host probes
// (bubblewrap here; DG_TEST_SANDBOX=fallback runs the same cases under Landlock + seccomp), and
// the fallback forced explicitly.
#include "checker/sandbox.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checker/checker_support.h"
#include "checker/subprocess.h"
#include "support/support.h"

namespace devflow {
namespace {

using test::TempDir;
using Clock = std::chrono::steady_clock;

std::string Fixture(const std::string& name) {
  return test::SourceDir() + "/tests/fixtures/checkers/" + name;
}

ProviderConfig Command(std::string name, std::vector<std::string> command) {
  ProviderConfig p;
  p.name = std::move(name);
  p.command = std::move(command);
  return p;
}

CheckRequest Request(const std::string& provider, const std::string& workspace,
                     int64_t timeout_ms = 20000) {
  CheckRequest r;
  r.provider = provider;
  r.prompt = "check this\n";
  r.timeout_ms = timeout_ms;
  r.card_id = test::UniqueCard();
  r.edge = "designing->ready";
  r.root = workspace + "/.devflow";
  r.workspace = workspace;
  return r;
}

SubprocessOptions Options(std::string bwrap = test::TestBwrap()) {
  SubprocessOptions o;
  o.term_grace_ms = 200;
  o.eof_grace_ms = 200;
  o.bwrap = std::move(bwrap);
  return o;
}

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The level this run must see: the product's own probe (ProbeSandbox: bubblewrap run exactly as
// BwrapArgv runs a checker, with the seccomp program and the /proc remount, else the Landlock +
// seccomp fallback) and its choice, so the expectation cannot drift from what the product tests
// (a shell probe of a plainer bubblewrap line once did: a host where bubblewrap cannot install
// the seccomp filter expected "bwrap" while the product rightly chose the fallback). Whether
// the level then really confines is what the cases below assert.
std::string ExpectedLevel(const std::string& bwrap) {
  const SandboxSupport& support = ProbeSandbox(bwrap, ProbeOptions{.remember = false});
  return SandboxLevelName(ChooseSandbox(support, false), support.landlock_abi);
}

// The errno name a denied write gets at `level`.
std::string DeniedWrite(const std::string& level) { return level == "bwrap" ? "EROFS" : "EACCES"; }

// Runs confine_probe.py with `args` and returns its JSON report and the level.
struct ProbeRun {
  nlohmann::json report;
  std::string sandbox;
};
ProbeRun RunProbe(const std::string& workspace, std::vector<std::string> args,
                  SubprocessOptions options = Options(), bool network = false,
                  bool sandbox_off = false) {
  ProviderConfig p = Command("probe", {Fixture("confine_probe.py")});
  p.command.insert(p.command.end(), args.begin(), args.end());
  p.network = network;
  p.sandbox_off = sandbox_off;
  SubprocessChecker checker({p}, "", options);
  auto reply = checker.Dispatch(Request("probe", workspace));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message(), " stderr: ", checker.last_stderr());
  INFO("probe said: ", reply->text);
  return {nlohmann::json::parse(reply->text), reply->sandbox};
}

// A TCP listener on 127.0.0.1 of the host, on a free port.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 8) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd); }
};

TEST_CASE("the level applied is the probed one, in the reply and from SandboxLevel") {
  TempDir ws;
  const std::string expected = ExpectedLevel(test::TestBwrap());
  ProviderConfig p = Command("allow", {Fixture("allow.sh")});
  SubprocessChecker checker({p}, "", Options());
  CHECK(checker.SandboxLevel(p) == expected);
  auto reply = checker.Dispatch(Request("allow", ws.path()));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->sandbox == expected);
}

TEST_CASE("a checker cannot write into the workspace, /tmp or the host HOME but can into TMPDIR") {
  TempDir ws;
  test::Spit(ws / "keep.txt", "keep\n");
  const std::string tag = test::UniqueCard();
  const std::string in_tmp = "/tmp/dg-sandbox-" + tag;
  const char* home = std::getenv("HOME");
  const std::string in_home = std::string(home && *home ? home : "/root") + "/dg-sandbox-" + tag;
  auto run = RunProbe(ws.path(), {"--write", ws / "written.txt", "--write", in_tmp, "--write",
                                  in_home, "--mkdir", ws / "newdir", "--remove", ws / "keep.txt"});
  std::error_code ignored;
  bool tmp_created = std::filesystem::remove(in_tmp, ignored);
  bool home_created = std::filesystem::remove(in_home, ignored);

  const std::string denied = DeniedWrite(run.sandbox);
  CHECK(run.sandbox == ExpectedLevel(test::TestBwrap()));
  CHECK(run.report["tmpdir"] == "ok");
  CHECK(run.report["write " + (ws / "written.txt")] == denied);
  CHECK(run.report["write " + in_tmp] == denied);
  // Under bubblewrap the host's HOME is not there (issue 7: only the readable set is bound), or
  // only as the read-only way to a PATH entry below it (~/.cargo/bin).
  if (run.sandbox == "bwrap") {
    CHECK(
        (run.report["write " + in_home] == "ENOENT" || run.report["write " + in_home] == "EROFS"));
  } else {
    CHECK(run.report["write " + in_home] == "EACCES");
  }
  CHECK(run.report["mkdir " + (ws / "newdir")] == denied);
  CHECK(run.report["remove " + (ws / "keep.txt")] == denied);
  CHECK_FALSE(tmp_created);
  CHECK_FALSE(home_created);
  CHECK(test::Snapshot(ws.path()) == std::map<std::string, std::string>{{"keep.txt", "keep\n"}});
}

TEST_CASE("a checker cannot write a kernel setting under /proc at either level") {
  // This session's trial (F0): under bubblewrap a root host's checker wrote /proc/sys (765 files
  // opened for writing, kernel.core_pattern among them). Opened for writing, nothing written.
  TempDir ws;
  const std::vector<std::string> targets = {"/proc/sys/fs/lease-break-time",
                                            "/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger"};
  std::vector<std::string> args;
  for (const std::string& t : targets) args.insert(args.end(), {"--open-write", t});
  auto run = RunProbe(ws.path(), args);
  CHECK(run.sandbox == ExpectedLevel(test::TestBwrap()));
  for (const std::string& t : targets) {
    CAPTURE(t);
    REQUIRE(run.report.contains("open-write " + t));
    CHECK(run.report["open-write " + t] != "ok");
  }
  // The control: unconfined, a root host's checker opens them (the test means something only
  // where the host could).
  if (::geteuid() == 0) {
    auto off = RunProbe(ws.path(), args, Options(), false, /*sandbox_off=*/true);
    CHECK(off.report["open-write /proc/sys/fs/lease-break-time"] == "ok");
  } else {
    MESSAGE("not root: the unconfined control is not run (a non-root host cannot write sysctls)");
  }
}

TEST_CASE("forcing the fallback confines writes with Landlock and reports its ABI") {
  TempDir ws;
  long abi = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, 1U);
  REQUIRE_MESSAGE(abi > 0, "this host has no Landlock; the fallback cannot be tested here");
  const std::string level = "landlock-abi" + std::to_string(abi) + "+seccomp";
  const std::string in_tmp = "/tmp/dg-sandbox-" + test::UniqueCard();
  for (std::string bwrap : {"", "/nonexistent/bwrap"}) {
    CAPTURE(bwrap);
    auto run =
        RunProbe(ws.path(), {"--write", ws / "written.txt", "--write", in_tmp}, Options(bwrap));
    std::error_code ignored;
    bool tmp_created = std::filesystem::remove(in_tmp, ignored);
    CHECK(run.sandbox == level);
    CHECK(run.report["tmpdir"] == "ok");
    CHECK(run.report["write " + (ws / "written.txt")] == "EACCES");
    CHECK(run.report["write " + in_tmp] == "EACCES");
    CHECK_FALSE(tmp_created);
  }
  CHECK(test::Snapshot(ws.path()).empty());
}

TEST_CASE("the workspace is readable at its real path even under /tmp") {
  TempDir ws;
  REQUIRE(ws.path().rfind("/tmp/", 0) == 0);  // TempDir lives under /tmp unless TMPDIR moves it
  test::Spit(ws / "docs/design.md", "# Design\n");
  auto run = RunProbe(ws.path(), {"--read", ws / "docs/design.md", "--read", "docs/design.md"});
  CHECK(run.report["read " + (ws / "docs/design.md")] == "read:# Design\n");
  CHECK(run.report["read docs/design.md"] == "read:# Design\n");  // cwd = the workspace
}

TEST_CASE("the network is denied unless the provider says network: true") {
  TempDir ws;
  Listener listener;
  std::string port = std::to_string(listener.port);
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    auto denied = RunProbe(ws.path(), {"--tcp", port, "--udp", "1"}, Options(bwrap));
    CHECK(denied.sandbox == ExpectedLevel(bwrap));
    CHECK(denied.report["tcp"] == "EACCES");  // seccomp at both levels: no socket at all
    CHECK(denied.report["udp"] == "EACCES");
  }
  auto allowed = RunProbe(ws.path(), {"--tcp", port, "--udp", "1"}, Options(), true);
  CHECK(allowed.report["tcp"] == "ok");
  CHECK(allowed.report["udp"] == "ok");
}

// A Unix stream listener of the host (the gate's own `serve` is one) in `dir`: the workspace,
// which every checker sees (a socket elsewhere is not even there under bubblewrap).
struct UnixListener {
  std::string path;
  int fd = -1;
  explicit UnixListener(const std::string& dir) : path(dir + "/gate.sock") {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof addr.sun_path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 8) == 0);
  }
  // Connections that reached the listener since the last call (accepted and closed).
  int Accepted() {
    int n = 0;
    for (int c; (c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; ++n) ::close(c);
    return n;
  }
  ~UnixListener() { ::close(fd); }
};

// Issue 7 (the trial of 2026-12-02): a checker reached the gate server's socket and asked it to
// commit a move. Without the network no socket at all, at both levels; socketpair stays.
TEST_CASE("a checker without the network cannot reach a Unix socket of the host at either level") {
  TempDir ws;
  UnixListener listener(ws.path());
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    auto denied =
        RunProbe(ws.path(), {"--unix", listener.path, "--socketpair", "1"}, Options(bwrap));
    CHECK(denied.sandbox == ExpectedLevel(bwrap));
    CHECK(denied.report["unix"] == "EACCES");
    CHECK(denied.report["socketpair"] == "ok");
    CHECK(listener.Accepted() == 0);
  }
  // The control: with the network the same probe reaches it, so the checks above can fail.
  auto allowed = RunProbe(ws.path(), {"--unix", listener.path}, Options(), true);
  CHECK(allowed.report["unix"] == "ok");
  CHECK(listener.Accepted() == 1);
}

// The trial of 2026-12-02: under bubblewrap a checker attached to the sandbox's own `timeout`
// with PTRACE_ATTACH (and so could stop the clock it runs under); at the Landlock level a
// capability-free checker may trace another checker of the same user. No checker needs
// ptrace(2) or process_vm_readv/writev(2): the seccomp filter denies them at both levels.
TEST_CASE("a checker cannot ptrace, not even its own child, at either level") {
  TempDir ws;
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    auto denied = RunProbe(ws.path(), {"--ptrace", "1"}, Options(bwrap));
    CHECK(denied.sandbox == ExpectedLevel(bwrap));
    CHECK(denied.report["ptrace"] == "EPERM");
  }
  // The control: unconfined, the same probe attaches to its child, so the checks above can fail.
  auto off = RunProbe(ws.path(), {"--ptrace", "1"}, Options(), false, true);
  CHECK(off.report["ptrace"] == "ok");
}

// Trial 0353 m2: a checker took a read lease on the journal through a read-only fd at both
// levels, so the host's next open of it for writing would wait out lease-break-time (45 s).
// The seccomp filter denies F_SETLEASE at both levels.
TEST_CASE("a checker cannot take a lease on a workspace file at either level") {
  TempDir ws;
  test::Spit(ws / "journal.jsonl", "{}\n");
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    auto denied = RunProbe(ws.path(), {"--lease", ws / "journal.jsonl"}, Options(bwrap));
    CHECK(denied.sandbox == ExpectedLevel(bwrap));
    CHECK(denied.report["lease"] == "EPERM");
  }
  // The control: unconfined, the same probe takes and drops the lease.
  auto off = RunProbe(ws.path(), {"--lease", ws / "journal.jsonl"}, Options(), false, true);
  CHECK(off.report["lease"] == "ok");
}

// Issue 7 item 6, what is left of another process's open files (docs/security.md "No host
// secret at any level"): the numbers of the host's fds are listable at the Landlock level when
// host and checker are both uid 0 (the directory is the owner's, mode 0500, and a
// non-dumpable process's /proc files belong to root), never what they point at (readlink and
// fdinfo pass the ptrace check, which no capability-less checker passes against a non-dumpable
// host). Under bubblewrap the host is not in the checker's /proc at all.
TEST_CASE("a checker sees at most the numbers of the host's fds, never their targets") {
  TempDir ws;
  ProviderConfig p = Command("fds", {Fixture("fd_probe.py"), std::to_string(::getpid())});
  SubprocessChecker checker({p}, "", Options());
  auto reply = checker.Dispatch(Request("fds", ws.path()));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message(), " stderr: ", checker.last_stderr());
  INFO("level " << reply->sandbox);
  if (reply->sandbox == "bwrap") {
    CHECK(reply->text == "list=ENOENT link=- fdinfo=ENOENT\n");
  } else if (::geteuid() == 0) {
    CHECK(reply->text == "list=ok link=EACCES fdinfo=EACCES\n");
  } else {
    CHECK(reply->text == "list=EACCES link=- fdinfo=EACCES\n");
  }
}

// Files of the host outside the scratch dir, as the fresh tester of issue 7 attacked them: a
// secret (0600), a config dir (0755) with a config file (0644), a journal (0644); each carries
// the xattr user.keep. They lie in a new directory below `parent`, the workspace: a file outside
// the readable set is not even there under bubblewrap, and the workspace (where the journal
// lies) is what every checker sees.
struct HostFiles {
  std::string dir, secret, config_dir, config, journal;
  explicit HostFiles(const std::string& parent)
      : dir(parent + "/" + test::UniqueCard()),
        secret(dir + "/secret.env"),
        config_dir(dir + "/config"),
        config(dir + "/config/gate.yaml"),
        journal(dir + "/journal.jsonl") {
    test::Spit(secret, "TOKEN=s3cret\n");
    test::Spit(config, "providers: []\n");
    test::Spit(journal, "{}\n");
    REQUIRE(::chmod(secret.c_str(), 0600) == 0);
    REQUIRE(::chmod(config_dir.c_str(), 0755) == 0);
    REQUIRE(::chmod(config.c_str(), 0644) == 0);
    REQUIRE(::chmod(journal.c_str(), 0644) == 0);
    for (const std::string& f : All()) {
      REQUIRE_MESSAGE(::setxattr(f.c_str(), "user.keep", "k", 1, 0) == 0,
                      "user.* xattrs unsupported under ", dir, ": ", std::strerror(errno));
    }
  }
  std::vector<std::string> All() const { return {secret, config_dir, config, journal}; }
  // Everything a metadata call can change, as read by the test itself (never the checker's
  // word): mode, owner, mtime, ctime (any change of the inode moves it), inode flags, xattrs.
  static std::string Describe(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    char line[256];
    std::snprintf(line, sizeof line, "mode=%o uid=%u gid=%u mtime=%lld.%09ld ctime=%lld.%09ld",
                  st.st_mode, st.st_uid, st.st_gid, static_cast<long long>(st.st_mtim.tv_sec),
                  st.st_mtim.tv_nsec, static_cast<long long>(st.st_ctim.tv_sec),
                  st.st_ctim.tv_nsec);
    std::string out = line;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    long flags = 0;
    out +=
        ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 ? " flags=" + std::to_string(flags) : " flags=?";
    long generation = 0;  // FS_IOC_GETVERSION: what FS_IOC_SETVERSION and ext4's set
    out += ::ioctl(fd, FS_IOC_GETVERSION, &generation) == 0
               ? " generation=" + std::to_string(generation)
               : " generation=?";
    ::close(fd);
    char names[1024];
    ssize_t n = ::listxattr(path.c_str(), names, sizeof names);
    REQUIRE(n >= 0);
    std::vector<std::string> sorted;
    for (ssize_t at = 0; at < n; at += static_cast<ssize_t>(std::strlen(names + at)) + 1) {
      char value[256];
      ssize_t len = ::getxattr(path.c_str(), names + at, value, sizeof value);
      sorted.push_back(std::string(names + at) + "=" +
                       (len >= 0 ? std::string(value, static_cast<size_t>(len)) : "?"));
    }
    std::sort(sorted.begin(), sorted.end());
    for (const std::string& x : sorted) out += " " + x;
    return out;
  }
  std::map<std::string, std::string> State() const {
    std::map<std::string, std::string> state;
    for (const std::string& f : All()) state[f] = Describe(f);
    return state;
  }
};

// Each call metadata_probe.py makes on the host's files, by its syscall's name.
const std::vector<std::string> kMetadataCalls = {"chmod",
                                                 "fchmod",
                                                 "fchmodat",
                                                 "fchmodat2",
                                                 "chown",
                                                 "fchown",
                                                 "lchown",
                                                 "fchownat",
                                                 "utime",
                                                 "utimes",
                                                 "futimesat",
                                                 "utimensat",
                                                 "setxattr",
                                                 "lsetxattr",
                                                 "fsetxattr",
                                                 "setxattrat",
                                                 "removexattr",
                                                 "lremovexattr",
                                                 "fremovexattr",
                                                 "removexattrat",
                                                 "file_setattr",
                                                 "FS_IOC_SETFLAGS",
                                                 "FS_IOC_FSSETXATTR",
                                                 "FS_IOC_SETVERSION",
                                                 "EXT4_IOC_SETVERSION"};
// The 32-bit command numbers of the same two ioctls: a 64-bit caller gets ENOTTY from the
// kernel (only its compat path knows them), so the control cannot show them work; the filter
// denies them all the same (EPERM), which is what the test can see.
const std::vector<std::string> kCompatCalls = {"FS_IOC32_SETVERSION", "EXT4_IOC32_SETVERSION"};

nlohmann::json RunMetadataProbe(const std::string& workspace, const HostFiles& host,
                                SubprocessOptions options, bool sandbox_off, std::string* level) {
  ProviderConfig p = Command("meta", {Fixture("metadata_probe.py"), host.secret, host.config_dir,
                                      host.config, host.journal});
  if (!sandbox_off) p.command.push_back("--dev-null");
  p.sandbox_off = sandbox_off;
  SubprocessChecker checker({p}, "", options);
  auto reply = checker.Dispatch(Request("meta", workspace));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message(), " stderr: ", checker.last_stderr());
  INFO("probe said: ", reply->text);
  *level = reply->sandbox;
  return nlohmann::json::parse(reply->text);
}

// Issue 7, the fresh tester: at the Landlock level a checker turned a host secret 0600 -> 0666,
// a config dir 0777, a config file setuid, journal.jsonl 0666, set an mtime to 2001 and added a
// user.* xattr (Landlock governs none of these; the kernel asks only for ownership). The
// seccomp filter denies every such call at both levels (under bubblewrap the host's device
// nodes are bound writable), in the checker's own scratch dir too; the temp files a tool makes
// there (mkstemp, mkdtemp) still work.
TEST_CASE(
    "a checker cannot change a host file's mode, owner, times, xattrs or flags at either "
    "level") {
  TempDir ws;
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    HostFiles host(ws.path());
    const auto before = host.State();
    std::string level;
    nlohmann::json report = RunMetadataProbe(ws.path(), host, Options(bwrap), false, &level);
    CHECK(level == ExpectedLevel(bwrap));
    CHECK(report.size() == kMetadataCalls.size() + kCompatCalls.size() + 3);
    for (const std::string& call : kMetadataCalls) {
      CAPTURE(call);
      CHECK(report[call] == "EPERM");
    }
    for (const std::string& call : kCompatCalls) {
      CAPTURE(call);
      CHECK(report[call] == "EPERM");
    }
    // Under bubblewrap the host's /dev/null is bound writable: a root checker could chmod it.
    CHECK(report["chmod /dev/null"] == "EPERM");
    CHECK(report["scratch chmod"] == "EPERM");
    CHECK(report["tempfile"] == "ok");
    const auto after = host.State();
    for (const std::string& f : host.All()) {
      CAPTURE(f);
      CHECK(after.at(f) == before.at(f));
    }
  }
  // The control: unconfined, every call of the same probe succeeds and the files show it, so the
  // checks above can fail.
  HostFiles host(ws.path());
  const auto before = host.State();
  std::string level;
  nlohmann::json off = RunMetadataProbe(ws.path(), host, Options(), true, &level);
  CHECK(level == "off");
  for (const std::string& call : kMetadataCalls) {
    CAPTURE(call);
    CHECK(off[call] == "ok");
  }
  for (const std::string& call : kCompatCalls) {
    CAPTURE(call);
    CHECK(off[call] == "ENOTTY");
  }
  CHECK(off["scratch chmod"] == "ok");
  struct stat st {};
  REQUIRE(::stat(host.secret.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0666);
  CHECK(st.st_mtim.tv_sec == 978307200);  // 2001-01-01
  REQUIRE(::stat(host.config_dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0777);
  REQUIRE(::stat(host.journal.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0666);
  char value[16];
  CHECK(::getxattr(host.secret.c_str(), "user.dg", value, sizeof value) == 7);
  CHECK(host.State() != before);
}

// A SysV shared memory segment of the host (IPC_CREAT, 0600) holding "hostsecret", and the
// name of a POSIX message queue no one has created; both removed when the test ends.
struct HostIpc {
  int key = 0x44470000 | (::getpid() & 0xffff);
  int id = -1;
  void* at = nullptr;
  std::string queue = "devflow-ipc-probe-" + std::to_string(::getpid());
  HostIpc() {
    id = ::shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
    REQUIRE(id >= 0);
    at = ::shmat(id, nullptr, 0);
    REQUIRE(at != reinterpret_cast<void*>(-1));
    std::memcpy(at, "hostsecret", 10);
  }
  ~HostIpc() {
    ::shmdt(at);
    ::shmctl(id, IPC_RMID, nullptr);
    ::syscall(SYS_mq_unlink, queue.c_str());
  }
  std::string Segment() const { return std::string(static_cast<const char*>(at), 10); }
  // 0 when the queue existed (and is gone now), else the errno.
  int UnlinkQueue() const { return ::syscall(SYS_mq_unlink, queue.c_str()) == 0 ? 0 : errno; }
};

nlohmann::json RunIpcProbe(const std::string& workspace, const HostIpc& ipc,
                           SubprocessOptions options, bool sandbox_off, std::string* level) {
  ProviderConfig p = Command(
      "ipc", {Fixture("ipc_probe.py"), std::to_string(ipc.key), std::to_string(ipc.id), ipc.queue});
  p.sandbox_off = sandbox_off;
  SubprocessChecker checker({p}, "", options);
  auto reply = checker.Dispatch(Request("ipc", workspace));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message(), " stderr: ", checker.last_stderr());
  INFO("probe said: ", reply->text);
  *level = reply->sandbox;
  return nlohmann::json::parse(reply->text);
}

// Issue 9, the fresh tester: at the Landlock level a checker kept the operator's session and
// typed a command into the operator's terminal with TIOCSTI (F1), attached a host process's
// SysV shared memory and left a POSIX message queue behind (F2, no IPC namespace there); at
// both levels it read and cleared the host's session keyring (F3). The checker starts in a
// session of its own (no controlling terminal) and the seccomp filter denies TIOCSTI, SysV
// IPC, POSIX message queues and the keyring calls at both levels.
TEST_CASE(
    "a checker cannot use the host's terminal, SysV IPC, message queues or keyring at either "
    "level") {
  TempDir ws;
  HostIpc ipc;
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    std::string level;
    nlohmann::json report = RunIpcProbe(ws.path(), ipc, Options(bwrap), false, &level);
    CHECK(level == ExpectedLevel(bwrap));
    if (level == "bwrap") {
      // Its own pty (bubblewrap's /dev has a devpts of its own), its controlling terminal: only
      // TIOCSTI is denied.
      CHECK(report["pty"] == "ok");
      CHECK(report["TIOCSTI"] == "EPERM");
    } else {
      // Landlock grants no /dev/ptmx and no /dev/pts (the host's: a root checker could open the
      // operator's terminal and read what is typed): no terminal to push into at all.
      CHECK(report["pty"] == "EACCES");
    }
    for (const char* call : {"shmget", "shmat", "mq_open", "keyctl", "add_key"}) {
      CAPTURE(call);
      CHECK(report[call] == "EPERM");
    }
    CHECK_FALSE(report.contains("shmat read"));
    if (level != "bwrap") {  // under bubblewrap pids are its PID namespace's
      CHECK(report["sid"] != ::getsid(0));
      CHECK(report["sid"] == report["pid"]);
    }
    CHECK(ipc.Segment() == "hostsecret");
    CHECK(ipc.UnlinkQueue() == ENOENT);  // nothing outlives the check
  }
  // The control: unconfined, the same probe reads the segment, creates the queue and uses the
  // keyring, so the checks above can fail. TIOCSTI on its own terminal needs root or
  // dev.tty.legacy_tiocsti=1 (EIO else); never EPERM.
  std::string level;
  nlohmann::json off = RunIpcProbe(ws.path(), ipc, Options(), true, &level);
  CHECK(level == "off");
  CHECK(off["pty"] == "ok");
  CHECK(off["TIOCSTI"] != "EPERM");
  for (const char* call : {"shmget", "shmat", "mq_open", "keyctl", "add_key"}) {
    CAPTURE(call);
    CHECK(off[call] == "ok");
  }
  CHECK(off["shmat read"] == "hostsecret");
  CHECK(off["sid"] == off["pid"]);  // its own session at every level
  CHECK(ipc.Segment() == "hostsecret");
  CHECK(ipc.UnlinkQueue() == 0);
}

// SearchPath walks $PATH once per value and set of distrusted trees (issue 8: the walk was 80+
// system calls on every dispatch of a server); what it decides must still follow both.
TEST_CASE("SearchPath walks anew after DistrustTree and for another PATH") {
  TempDir home;
  const std::string bin = home / "bin";
  REQUIRE(std::filesystem::create_directory(bin));
  const char* was = std::getenv("PATH");
  const std::string saved = was ? was : "";
  REQUIRE(::setenv("PATH", (bin + ":/usr/bin").c_str(), 1) == 0);
  CHECK(SearchPath() == bin + ":/usr/bin");
  CHECK(SearchPath() == bin + ":/usr/bin");  // the memo answers the same
  DistrustTree(home.path());                 // a workspace loaded after the first walk
  CHECK(SearchPath() == "/usr/bin");
  REQUIRE(::setenv("PATH", "/bin:/usr/bin", 1) == 0);
  CHECK(SearchPath() == "/bin:/usr/bin");
  REQUIRE(::setenv("PATH", saved.c_str(), 1) == 0);
  CHECK(SearchPath().find(bin) == std::string::npos);
}

TEST_CASE("sandbox: off runs the checker unconfined and says so") {
  TempDir ws;
  ProviderConfig p = Command("probe", {Fixture("confine_probe.py")});
  p.sandbox_off = true;
  SubprocessChecker checker({p}, "", Options());
  CHECK(checker.SandboxLevel(p) == "off");
  auto run = RunProbe(ws.path(), {"--write", ws / "written.txt"}, Options(), false, true);
  CHECK(run.sandbox == "off");
  CHECK(run.report["write " + (ws / "written.txt")] == "ok");
  CHECK(test::Slurp(ws / "written.txt").value_or("") == "written\n");
}

TEST_CASE("resource limits: CPU from the deadline, file size and open files at every level") {
  TempDir ws;
  SubprocessOptions options = Options();
  options.max_file_bytes = 1024 * 1024;
  options.max_open_files = 64;
  auto run = RunProbe(ws.path(), {}, options);  // deadline 20 s: CPU soft 21, hard 22
  CHECK(run.report["limits"]["cpu"].dump() == "[21,22]");
  CHECK(run.report["limits"]["fsize"].dump() == "[1048576,1048576]");
  CHECK(run.report["limits"]["nofile"].dump() == "[64,64]");
  auto off = RunProbe(ws.path(), {}, options, false, true);
  CHECK(off.report["limits"]["cpu"].dump() == "[21,22]");
}

TEST_CASE("LimitsFor derives the CPU limit as ceil(deadline) + 1 s, hard one more") {
  ResourceLimits a = LimitsFor(1500, 0, 64 << 20, 256);
  CHECK(a.cpu_soft_s == 3);
  CHECK(a.cpu_hard_s == 4);
  CHECK(a.file_bytes == 64u << 20);
  CHECK(a.open_files == 256);
  CHECK(LimitsFor(1000, 0, 1, 1).cpu_soft_s == 2);
  CHECK(LimitsFor(600000, 0, 1, 1).cpu_soft_s == 601);
  CHECK(LimitsFor(600000, 1, 1, 1).cpu_soft_s == 1);  // the test override
  CHECK(LimitsFor(600000, 1, 1, 1).cpu_hard_s == 2);
}

TEST_CASE("RLIMIT_CPU stops a busy loop before the wall-clock deadline") {
  TempDir ws;
  SubprocessOptions options = Options();
  options.cpu_limit_s = 1;
  SubprocessChecker checker({Command("busy", {Fixture("busy_loop.sh")})}, "", options);
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(Request("busy", ws.path(), 20000));
  double took = SecondsSince(t0);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker ended with signal SIGXCPU");
  CHECK(took >= 0.9);
  CHECK(took < 10.0);
}

TEST_CASE("RLIMIT_FSIZE stops a checker writing a file larger than the limit") {
  TempDir ws;
  SubprocessOptions options = Options();
  options.max_file_bytes = 1024 * 1024;
  SubprocessChecker checker({Command("big", {Fixture("big_file.sh")})}, "", options);
  auto reply = checker.Dispatch(Request("big", ws.path()));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker ended with signal SIGXFSZ");
}

TEST_CASE("a setsid grandchild holding stdout cannot hold a hanging check past its deadline") {
  TempDir ws;
  SubprocessChecker checker({Command("esc", {Fixture("setsid_escape.sh"), "hang"})}, "", Options());
  CheckRequest request = Request("esc", ws.path(), 500);
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(request);
  double took = SecondsSince(t0);
  std::vector<pid_t> left = test::SurvivorsOfCard(request.card_id);
  test::KillProcessesOfCard(request.card_id, request.root);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker exceeded checkTimeoutMs (500ms)");
  CHECK(took >= 0.5);
  CHECK(took < 0.5 + 2.0);
  CHECK(left.empty());  // the check's reaper killed its whole tree, escaper included
}

// A directory of the host user's outside every tree a checker may read (not under /tmp, where
// the workspaces and scratch dirs of the tests live): mkdtemp under `base`, mode 0700.
struct HostDir {
  std::string path;
  explicit HostDir(const std::string& base) {
    std::string tmpl = base + "/dg-secret-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~HostDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  // A 0600 file of the host's uid holding `content`.
  std::string Secret(const std::string& name, const std::string& content) const {
    const std::string file = path + "/" + name;
    test::Spit(file, content);
    REQUIRE(::chmod(file.c_str(), 0600) == 0);
    return file;
  }
};

std::string HomeDir() {
  const char* home = std::getenv("HOME");
  return home && *home == '/' ? home : "/root";
}

// Issue 7, "no host secret at any level": bubblewrap bound `/` and Landlock restricted only
// writes, so a checker read every file of the host's uid (the trial's REPORT-0343, a root
// host's /root/trial-secret quoted into a veto report).
TEST_CASE("a checker cannot read a 0600 file of the host user outside its readable set") {
  TempDir ws;
  HostDir in_var("/var/tmp"), in_home(HomeDir());
  const std::vector<std::string> secrets = {in_var.Secret("token", "var-secret\n"),
                                            in_home.Secret("id_fake", "home-secret\n")};
  std::vector<std::string> args;
  for (const std::string& secret : secrets) args.insert(args.end(), {"--read", secret});
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    auto run = RunProbe(ws.path(), args, Options(bwrap));
    CHECK(run.sandbox == ExpectedLevel(bwrap));
    for (const std::string& secret : secrets) {
      CAPTURE(secret);
      // Not there under bubblewrap; there but denied by Landlock.
      CHECK(run.report["read " + secret] == (run.sandbox == "bwrap" ? "ENOENT" : "EACCES"));
    }
  }
  // The control: unconfined, the same checker reads them.
  auto off = RunProbe(ws.path(), args, Options(), false, /*sandbox_off=*/true);
  CHECK(off.report["read " + secrets[0]] == "read:var-secret\n");
  CHECK(off.report["read " + secrets[1]] == "read:home-secret\n");
}

TEST_CASE("a checker of a root host cannot read /etc/shadow but reads the rest of /etc") {
  if (::geteuid() != 0) {
    MESSAGE("not root: /etc/shadow is unreadable to this host anyway");
    return;
  }
  TempDir ws;
  const std::vector<std::string> args = {"--read",       "/etc/shadow", "--read",
                                         "/etc/gshadow", "--read",      "/etc/passwd"};
  const std::string passwd = "read:" + test::Slurp("/etc/passwd").value();
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    auto run = RunProbe(ws.path(), args, Options(bwrap));
    CHECK(run.sandbox == ExpectedLevel(bwrap));
    // Bubblewrap masks it with /dev/null on a nodev mount, Landlock leaves it out: EACCES both.
    CHECK(run.report["read /etc/shadow"] == "EACCES");
    CHECK(run.report["read /etc/gshadow"] == "EACCES");
    CHECK(run.report["read /etc/passwd"] == passwd);
  }
  auto off = RunProbe(ws.path(), args, Options(), false, /*sandbox_off=*/true);
  CHECK(off.report["read /etc/shadow"] ==
        "read:" + test::Slurp("/etc/shadow").value());  // the control
}

TEST_CASE("system programs, the workspace and a program reached through symlinks still run") {
  // /bin/cat (through the /bin -> usr/bin link of a merged /usr) reads the workspace; a program
  // reached as bin/x -> ../share/x/bin/x (a ~/.local/bin install) runs and reads beside its
  // target, while a file beside neither hop stays out of reach.
  TempDir ws;
  test::Spit(ws / "reply.txt", "from the workspace\n");
  HostDir install("/var/tmp");
  test::Spit(install.path + "/share/x/bin/data", "beside the target\n");
  test::Spit(install.path + "/share/x/bin/x",
             "#!/bin/sh\ncat \"$(dirname \"$(readlink -f \"$0\")\")/data\" \"$1\"\n"
             "cat \"$2\" 2>/dev/null || echo unreadable\n");
  test::MakeExecutable(install.path + "/share/x/bin/x");
  const std::string other = install.Secret("other", "not for the checker\n");
  std::filesystem::create_directories(install.path + "/bin");
  std::filesystem::create_symlink("../share/x/bin/x", install.path + "/bin/x");
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    SubprocessChecker checker({Command("cat", {"/bin/cat", "reply.txt"}),
                               Command("x", {install.path + "/bin/x", "reply.txt", other})},
                              "", Options(bwrap));
    auto cat = checker.Dispatch(Request("cat", ws.path()));
    REQUIRE_MESSAGE(cat.ok(), cat.status().message());
    CHECK(cat->sandbox == ExpectedLevel(bwrap));
    CHECK(cat->text == "from the workspace\n");
    auto x = checker.Dispatch(Request("x", ws.path()));
    REQUIRE_MESSAGE(x.ok(), x.status().message());
    CHECK(x->text == "beside the target\nfrom the workspace\nunreadable\n");
  }
}

TEST_CASE("a provider's read: paths are readable, their siblings not") {
  TempDir ws;
  HostDir extra("/var/tmp");
  test::Spit(extra.path + "/granted/model.txt", "model\n");
  const std::string file = extra.Secret("granted-file.txt", "one file\n");
  const std::string sibling = extra.Secret("sibling.txt", "not listed\n");
  ProviderConfig p =
      Command("probe", {Fixture("confine_probe.py"), "--read", extra.path + "/granted/model.txt",
                        "--read", file, "--read", sibling});
  p.read = {extra.path + "/granted", file};
  for (std::string bwrap : {test::TestBwrap(), std::string()}) {
    CAPTURE(bwrap);
    SubprocessChecker checker({p}, "", Options(bwrap));
    auto reply = checker.Dispatch(Request("probe", ws.path()));
    REQUIRE_MESSAGE(reply.ok(), reply.status().message(), " stderr: ", checker.last_stderr());
    CHECK(reply->sandbox == ExpectedLevel(bwrap));
    auto report = nlohmann::json::parse(reply->text);
    CHECK(report["read " + extra.path + "/granted/model.txt"] == "read:model\n");
    CHECK(report["read " + file] == "read:one file\n");
    CHECK(report["read " + sibling] == (reply->sandbox == "bwrap" ? "ENOENT" : "EACCES"));
  }
}

TEST_CASE("bubblewrap's argv binds only the readable set, masks the denied, the scratch dir last") {
  ReadableSet readable;
  readable.trees = {"/etc", "/tmp/ws", "/usr"};
  readable.denied = {"/etc/shadow"};
  readable.links = {{"/bin", "usr/bin"}};
  readable.workspace = "/tmp/ws";
  readable.scratch = "/tmp/scratch";
  BwrapSpec spec{"/usr/bin/bwrap", readable, false};
  std::vector<std::string> expected = {"/usr/bin/bwrap",
                                       "--ro-bind",
                                       "/etc",
                                       "/etc",
                                       "--ro-bind",
                                       "/tmp/ws",
                                       "/tmp/ws",
                                       "--ro-bind",
                                       "/usr",
                                       "/usr",
                                       "--dev",
                                       "/dev",
                                       "--proc",
                                       "/proc",
                                       "--remount-ro",
                                       "/proc",
                                       "--unshare-all",
                                       "--die-with-parent",
                                       "--new-session",
                                       "--cap-drop",
                                       "ALL",
                                       "--ro-bind",
                                       "/dev/null",
                                       "/etc/shadow",
                                       "--symlink",
                                       "usr/bin",
                                       "/bin",
                                       "--bind",
                                       "/tmp/scratch",
                                       "/tmp/scratch",
                                       "--remount-ro",
                                       "/",
                                       "--chdir",
                                       "/tmp/ws",
                                       "--",
                                       "/bin/checker",
                                       "-p"};
  CHECK(BwrapArgv(spec, {"/bin/checker", "-p"}) == expected);
  spec.network = true;
  std::vector<std::string> with_net = BwrapArgv(spec, {"/bin/checker"});
  REQUIRE(with_net.size() > 17);
  CHECK(with_net[16] == "--unshare-all");
  CHECK(with_net[17] == "--share-net");
  // The command follows "--" directly: the reaper inside removes bubblewrap's PWD (no env(1)).
  std::vector<std::string> tail(with_net.end() - 2, with_net.end());
  CHECK(tail == std::vector<std::string>{"--", "/bin/checker"});
  // The seccomp program's fd comes right after the capability drop, before the masks.
  spec.seccomp_fd = 7;
  std::vector<std::string> with_seccomp = BwrapArgv(spec, {"/bin/checker"});
  auto at = std::find(with_seccomp.begin(), with_seccomp.end(), "--seccomp");
  REQUIRE(at != with_seccomp.end());
  CHECK(*(at - 1) == "ALL");
  CHECK(*(at + 1) == "7");
  CHECK(*(at + 2) == "--ro-bind");
  CHECK(*(at + 3) == "/dev/null");
}

}  // namespace
}  // namespace devflow

// A real `devflow-gate serve` for the server tests: started as a subprocess in a workspace,
// its JSON-lines log read on a thread (waits synchronise on log lines, never on sleeps), and a
// raw HTTP/1.1 client over its unix socket or TCP port.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "e2e/workspace.h"
#include "support/support.h"

namespace devflow::server_test {

struct HttpAnswer {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body); }
  std::string Header(const std::string& name) const {
    std::regex re("\r\n" + name + ": ([^\r]*)", std::regex::icase);
    std::smatch m;
    return std::regex_search(head, m, re) ? m[1].str() : "";
  }
};

/// Connects to unix:PATH, or to 127.0.0.1:PORT when `path` is all digits. -1 on failure.
inline int Connect(const std::string& where) {
  if (!where.empty() && where.find_first_not_of("0123456789") == std::string::npos) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(std::stoi(where)));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", where.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline void WriteAll(int fd, const std::string& data) {
  size_t at = 0;
  while (at < data.size()) {
    ssize_t n = ::send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close early (413): the answer is read anyway
    at += static_cast<size_t>(n);
  }
}

/// Reads until the other end closes (a socket or a pipe).
inline std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

inline HttpAnswer Parse(const std::string& raw) {
  HttpAnswer a;
  size_t split = raw.find("\r\n\r\n");
  a.head = raw.substr(0, split);
  if (split != std::string::npos) a.body = raw.substr(split + 4);
  if (a.head.size() > 12) a.status = std::stoi(a.head.substr(9, 3));
  return a;
}

/// One request on a fresh connection (Connection: close).
inline HttpAnswer Request(const std::string& where, const std::string& method,
                          const std::string& target, const std::string& body = "",
                          const std::vector<std::string>& headers = {}) {
  int fd = Connect(where);
  REQUIRE(fd >= 0);
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n";
  for (const auto& h : headers) req += h + "\r\n";
  if (!body.empty() || method == "POST") {
    req +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  WriteAll(fd, req);
  std::string raw = ReadAll(fd);
  ::close(fd);
  return Parse(raw);
}

/// `devflow-gate [--root R] serve ARGS…` in `cwd`, stderr read line by line.
class Serve {
 public:
  /// `under_filter`: the server runs under one allow-everything seccomp filter of its own, as
  /// a hardened systemd unit or a container runtime would start it.
  /// `env`: variables set for the server on top of this process's environment.
  /// `as_uid`: the server runs as this uid (and its primary group), as a unit's `User=` would.
  Serve(const std::string& cwd, const std::vector<std::string>& args, bool under_filter = false,
        const std::map<std::string, std::string>& env = {},
        std::optional<std::pair<uid_t, gid_t>> as_uid = std::nullopt) {
    int err[2];
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    std::vector<std::string> argv = {test::GateBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(err[1], 2);
      int devnull = ::open("/dev/null", O_RDWR);
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
      if (::chdir(cwd.c_str()) != 0) ::_exit(127);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      if (as_uid && (::setgroups(0, nullptr) != 0 || ::setgid(as_uid->second) != 0 ||
                     ::setuid(as_uid->first) != 0)) {
        ::_exit(125);
      }
      if (under_filter) {
        sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        sock_fprog program{1, &allow};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
          ::_exit(126);
        }
      }
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
    ::close(err[1]);
    fd_ = err[0];
    reader_ = std::thread([this] {
      std::string partial;
      char buf[4096];
      for (;;) {
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n <= 0) break;
        std::lock_guard lock(mu_);
        partial.append(buf, static_cast<size_t>(n));
        size_t nl;
        while ((nl = partial.find('\n')) != std::string::npos) {
          lines_.push_back(partial.substr(0, nl));
          partial.erase(0, nl + 1);
        }
        cv_.notify_all();
      }
      std::lock_guard lock(mu_);
      closed_ = true;
      cv_.notify_all();
    });
  }
  ~Serve() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
    ::close(fd_);
  }

  /// Waits for a log line containing `needle` (after line index `from`); returns it, or ""
  /// when the server's stderr closed first or 60 s passed (a bound, not a synchronisation).
  std::string WaitLog(const std::string& needle, size_t from = 0) {
    std::unique_lock lock(mu_);
    std::string found;
    cv_.wait_for(lock, std::chrono::seconds(60), [&] {
      for (size_t i = from; i < lines_.size(); ++i) {
        if (lines_[i].find(needle) != std::string::npos) {
          found = lines_[i];
          return true;
        }
      }
      return closed_;
    });
    return found;
  }
  /// Waits for `count` log lines containing `needle` (after line index `from`); false when the
  /// server's stderr closed first or 60 s passed (a bound, not a synchronisation).
  bool WaitLogCount(const std::string& needle, size_t count, size_t from = 0) {
    std::unique_lock lock(mu_);
    auto enough = [&] {
      size_t seen = 0;
      for (size_t i = from; i < lines_.size(); ++i) {
        if (lines_[i].find(needle) != std::string::npos) ++seen;
      }
      return seen >= count;
    };
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return enough() || closed_; });
    return enough();
  }
  size_t LogSize() {
    std::lock_guard lock(mu_);
    return lines_.size();
  }
  std::string Log() {
    std::lock_guard lock(mu_);
    std::string all;
    for (const auto& l : lines_) all += l + "\n";
    return all;
  }
  /// Sends `sig` and waits for the exit; the exit code (or 128+signal).
  int Stop(int sig = SIGTERM) {
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  void Signal(int sig) { ::kill(pid_, sig); }
  int pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int fd_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
  bool closed_ = false;
};

/// A server on `<workspace>/gate.sock` serving the workspace's root; ready when it returns.
struct SocketServer {
  SocketServer(const e2e::Workspace& ws, std::vector<std::string> extra = {},
               bool under_filter = false, const std::map<std::string, std::string>& env = {})
      : socket(ws / "gate.sock") {
    std::vector<std::string> args = {"--root", ws.root(), "serve", "--listen", "unix:" + socket};
    args.insert(args.end(), extra.begin(), extra.end());
    serve = std::make_unique<Serve>(ws.path(), args, under_filter, env);
    std::string ready = serve->WaitLog("\"msg\":\"ready\"");
    INFO("server log:\n" << serve->Log());
    REQUIRE(!ready.empty());
  }
  HttpAnswer Post(const std::string& target, const std::string& body,
                  const std::vector<std::string>& headers = {}) {
    return Request(socket, "POST", target, body, headers);
  }
  HttpAnswer Get(const std::string& target) { return Request(socket, "GET", target); }
  std::string socket;
  std::unique_ptr<Serve> serve;
};

/// The timestamps of a text masked (the clock differs between two runs of one move).
inline std::string MaskTimes(const std::string& text) {
  // Decision ids (host/decision_ledger.h NewDecisionId) hold a time and random bits.
  static const std::regex decision(R"(\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{8})");
  static const std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}Z|\+00:00))");
  // Fault report names hold the attempt's time in basic form (reports/gate_layout.h).
  static const std::regex basic(R"(\d{8}T\d{6}\.\d{3}Z)");
  return std::regex_replace(
      std::regex_replace(std::regex_replace(text, decision, "<decision>"), iso, "<time>"), basic,
      "<time>");
}

/// A twin run's disk: everything under the root and the workspace's verdict cache
/// (`.devflow-agent-gate-cache`, as `cache/<path>`), paths and contents with MaskTimes;
/// without the decision ledger when `with_ledger` is false (a caller comparing rows itself).
inline std::map<std::string, std::string> Disk(const e2e::Workspace& ws, bool with_ledger = true) {
  std::map<std::string, std::string> out;
  for (auto& [path, content] : test::Snapshot(ws.root())) {
    if (!with_ledger && path.rfind("ledger/", 0) == 0) continue;
    out[MaskTimes(path)] = MaskTimes(content);
  }
  for (auto& [path, content] : test::Snapshot(ws / ".devflow-agent-gate-cache")) {
    out["cache/" + path] = MaskTimes(content);
  }
  return out;
}

/// Checks that two Disk snapshots hold the same paths with the same bytes, naming the first
/// path that differs.
inline void CheckSameDisk(const std::map<std::string, std::string>& got,
                          const std::map<std::string, std::string>& want) {
  CHECK(got.size() == want.size());
  for (const auto& [path, content] : want) {
    CAPTURE(path);
    auto it = got.find(path);
    REQUIRE(it != got.end());
    CHECK(it->second == content);
  }
}

/// Puts the root back to `root_files` (a path ending in `/` is a directory) and empties the
/// verdict cache, for the second run of a twin.
inline void Restore(const e2e::Workspace& ws,
                    const std::map<std::string, std::string>& root_files) {
  std::filesystem::remove_all(ws.root());
  std::filesystem::remove_all(ws / ".devflow-agent-gate-cache");
  for (const auto& [path, content] : root_files) {
    if (!path.empty() && path.back() == '/') {
      std::filesystem::create_directories(ws.root() + "/" + path);
    } else {
      test::Spit(ws.root() + "/" + path, content);
    }
  }
}

}  // namespace devflow::server_test

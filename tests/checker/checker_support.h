// Helpers shared by the checker tests: the sandbox mode under test and a PID-namespace-proof way
// to find what is left of a check (its processes carry DEVFLOW_GATE_CARD=<card> in their
// environment, which a pid inside bubblewrap's namespace cannot tell the host).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

namespace devflow::test {

/// SubprocessOptions::bwrap for this run: DG_TEST_SANDBOX=fallback forces the Landlock +
/// seccomp fallback (so the suite can run both ways); otherwise "bwrap" as in production.
inline std::string TestBwrap() {
  const char* mode = std::getenv("DG_TEST_SANDBOX");
  return mode && std::string(mode) == "fallback" ? "" : "bwrap";
}

/// A card id no other check in this process uses.
inline std::string UniqueCard() {
  static std::atomic<int> counter{0};
  return "card-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

/// The content of a /proc file; empty when the process is gone (a read error, not an exception).
inline std::string ReadProcFile(const std::string& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return text;
}

/// Pids of live (not zombie) processes whose environment holds DEVFLOW_GATE_CARD=<card> and,
/// when `root` is given, DEVFLOW_GATE_ROOT=<root> too.
inline std::vector<pid_t> ProcessesOfCard(const std::string& card, const std::string& root = "") {
  const std::string entry = "DEVFLOW_GATE_CARD=" + card;
  const std::string root_entry = "DEVFLOW_GATE_ROOT=" + root;
  std::vector<pid_t> found;
  DIR* dir = ::opendir("/proc");
  if (!dir) return found;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::string base = std::string("/proc/") + e->d_name;
    std::string text = ReadProcFile(base + "/stat");
    size_t paren = text.rfind(')');
    if (paren == std::string::npos || paren + 2 >= text.size()) continue;
    if (text[paren + 2] == 'Z' || text[paren + 2] == 'X') continue;
    std::string env = ReadProcFile(base + "/environ");
    bool card_seen = false, root_seen = root.empty();
    size_t at = 0;
    while (at < env.size()) {
      size_t stop = env.find('\0', at);
      if (stop == std::string::npos) stop = env.size();
      card_seen = card_seen || env.compare(at, stop - at, entry) == 0;
      root_seen = root_seen || env.compare(at, stop - at, root_entry) == 0;
      at = stop + 1;
    }
    if (card_seen && root_seen) found.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return found;
}

/// ProcessesOfCard after giving processes already SIGKILLed up to `ms` to disappear (a PID
/// namespace is torn down asynchronously once bubblewrap is gone).
inline std::vector<pid_t> SurvivorsOfCard(const std::string& card, int ms = 1000) {
  std::vector<pid_t> left = ProcessesOfCard(card);
  for (int waited = 0; !left.empty() && waited < ms; waited += 10) {
    ::usleep(10 * 1000);
    left = ProcessesOfCard(card);
  }
  return left;
}

/// SIGKILLs what ProcessesOfCard(card, root) finds (clean-up of what escaped by design). The
/// root is required: card ids repeat across workspaces (every e2e workspace's card is
/// 0001-export-the-audit-log) and across test runs on one machine, and a clean-up by card id
/// alone killed another run's checker and its reaper mid-check — the stress test's "the checker
/// ended with signal SIGKILL" for a move nobody killed (issue 7 item 13, docs/security.md).
inline void KillProcessesOfCard(const std::string& card, const std::string& root) {
  if (root.empty()) return;
  for (pid_t pid : ProcessesOfCard(card, root)) ::kill(pid, SIGKILL);
}

}  // namespace devflow::test

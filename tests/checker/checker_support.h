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

/// Pids of live (not zombie) processes whose environment holds DEVFLOW_GATE_CARD=<card>.
inline std::vector<pid_t> ProcessesOfCard(const std::string& card) {
  const std::string entry = "DEVFLOW_GATE_CARD=" + card;
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
    size_t at = 0;
    while (at < env.size()) {
      size_t stop = env.find('\0', at);
      if (stop == std::string::npos) stop = env.size();
      if (env.compare(at, stop - at, entry) == 0) {
        found.push_back(static_cast<pid_t>(pid));
        break;
      }
      at = stop + 1;
    }
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

/// SIGKILLs what ProcessesOfCard finds (clean-up of what escaped by design).
inline void KillProcessesOfCard(const std::string& card) {
  for (pid_t pid : ProcessesOfCard(card)) ::kill(pid, SIGKILL);
}

}  // namespace devflow::test

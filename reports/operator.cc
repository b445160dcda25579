#include "reports/operator.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

#include "reports/gate_layout.h"

namespace devflow {
namespace {

class RealProbe : public HostProbe {
 public:
  Result<int64_t> AgeMs(const std::string& path) override {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return OsError(errno, "stat", path);
    int64_t ms = NowMs() - (static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 +
                            static_cast<int64_t>(st.st_mtim.tv_nsec) / 1000000);
    return std::max<int64_t>(ms, 0);
  }
  bool ProcessAlive(int64_t pid) override {
    if (pid <= 0 || pid > 0x7fffffff) return false;  // kill(0|-n) would signal a group
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  }
  int64_t NowMs() override {
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
  }
};

void AddUnique(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

}  // namespace

HostProbe& RealHostProbe() {
  static RealProbe probe;
  return probe;
}

std::vector<std::string> VetoReportDirs(const OperatorContext& ctx) {
  std::vector<std::string> dirs;
  for (const PluginConfig& plugin : ctx.config.plugins) {
    if (plugin.agent) AddUnique(dirs, AgentReportDir(*plugin.agent, ctx.root));
  }
  if (dirs.empty()) dirs.push_back(JoinPath(ctx.root, "reports/agent-gate"));
  return dirs;
}

std::vector<std::string> VerdictCacheDirs(const OperatorContext& ctx) {
  std::vector<std::string> dirs;
  for (const PluginConfig& plugin : ctx.config.plugins) {
    if (!plugin.agent) continue;
    std::string dir = AgentCacheDir(*plugin.agent, ctx.root);
    if (!dir.empty()) AddUnique(dirs, dir);
  }
  return dirs;
}

std::string Plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string JoinList(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

}  // namespace devflow

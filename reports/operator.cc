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

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Digits at [pos, pos+n) as a number, or -1.
int64_t Digits(const std::string& s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<int64_t> ParseIsoTime(const std::string& s) {
  const int64_t y = Digits(s, 0, 4), mo = Digits(s, 5, 2), d = Digits(s, 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || s[4] != '-' || s[7] != '-') {
    return std::nullopt;
  }
  int64_t ms = DaysFromCivil(y, mo, d) * 86400000;
  size_t pos = 10;
  if (pos < s.size() && s[pos] == 'T') {
    const int64_t h = Digits(s, 11, 2), mi = Digits(s, 14, 2);
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || s.size() < 16 || s[13] != ':') return std::nullopt;
    ms += h * 3600000 + mi * 60000;
    pos = 16;
    if (pos < s.size() && s[pos] == ':') {
      const int64_t sec = Digits(s, 17, 2);
      if (sec < 0 || sec > 60) return std::nullopt;
      ms += sec * 1000;
      pos = 19;
      if (pos < s.size() && s[pos] == '.') {
        const int64_t frac = Digits(s, 20, 3);
        if (frac < 0) return std::nullopt;
        ms += frac;
        pos = 23;
      }
    }
  }
  if (pos < s.size() && s[pos] == 'Z') ++pos;
  if (pos != s.size()) return std::nullopt;
  return ms;
}

std::optional<int64_t> ParseTimeArg(const std::string& text, int64_t now_ms) {
  if (text.size() >= 2) {
    const char unit = text.back();
    const int64_t n = Digits(text, 0, text.size() - 1);
    const int64_t scale = unit == 'd'   ? 86400000
                          : unit == 'h' ? 3600000
                          : unit == 'm' ? 60000
                          : unit == 's' ? 1000
                                        : 0;
    if (n >= 0 && scale > 0 && text.size() <= 10) return now_ms - n * scale;
  }
  return ParseIsoTime(text);
}

std::vector<bool> RetentionRemoves(const std::vector<std::optional<int64_t>>& times,
                                   const RetentionRule& rule) {
  std::vector<bool> removes(times.size(), false);
  std::vector<size_t> dated;
  for (size_t i = 0; i < times.size(); ++i) {
    if (times[i]) dated.push_back(i);
  }
  // Newest first: later time, then later position.
  std::stable_sort(dated.begin(), dated.end(), [&](size_t a, size_t b) {
    return *times[a] != *times[b] ? *times[a] > *times[b] : a > b;
  });
  for (size_t rank = 0; rank < dated.size(); ++rank) {
    const size_t i = dated[rank];
    const bool old = !rule.cut_ms || *times[i] <= *rule.cut_ms;
    const bool beyond_keep = !rule.keep || rank >= *rule.keep;
    removes[i] = old && beyond_keep && (rule.cut_ms || rule.keep);
  }
  return removes;
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

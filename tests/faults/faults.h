// Shared pieces of the fault matrix (issue 4 item 5) and the crash-safety test (item 6): the
// exact messages of a failed-closed move, the parked-card assertion, and a tmpfs mount for
// real ENOSPC / EROFS faults.
#pragma once

#include <doctest/doctest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include <filesystem>
#include <vector>
#include "config/config.h"

#include "e2e/workspace.h"
#include "reports/verdict_cache.h"

namespace devflow::faults {

using e2e::Fixture;
using e2e::GateYaml;
using e2e::Workspace;

inline const char kCard[] = "0001-export-the-audit-log";

/// The one fault report of the workspace's default report dir (REQUIREs exactly one).
inline std::string OnlyFaultReport(const std::string& root) {
  const std::string dir = root + "/reports/agent-gate/faults";
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(e.path().filename().string());
  }
  REQUIRE(names.size() == 1);
  return dir + "/" + names[0];
}

/// What `move` prints for a failed-closed attempt once the checker ran: the why (if any) and
/// the fault report (issue 10 item 8).
inline std::string CouldNotRunWithReport(const Workspace& ws, const std::string& fault,
                                         const std::string& why = "") {
  return std::string("devflow: transition of card ") + kCard +
         " to \"ready\" was rejected: agent check for designing->ready could not run: " + fault +
         (why.empty() ? "" : ": " + why) +
         "; the card is parked blocked until the deployment recovers; fault report: " +
         OnlyFaultReport(ws.root()) + "\n";
}

/// What `move` prints for a failed-closed attempt once the checker ran whose park did not
/// commit: `refusal` is why the park was refused (the park's own message).
inline std::string NotParkedWithReport(const Workspace& ws, const std::string& fault,
                                       const std::string& refusal) {
  return std::string("devflow: transition of card ") + kCard +
         " to \"ready\" was rejected: agent check for designing->ready could not run: " + fault +
         "; nothing was committed and the card was NOT parked: " + refusal +
         "; fault report: " + OnlyFaultReport(ws.root()) + "\n";
}

/// What `move` prints (stdout) for a failed-closed designing->ready attempt.
inline std::string CouldNotRun(const std::string& fault) {
  return std::string("devflow: transition of card ") + kCard +
         " to \"ready\" was rejected: agent check for designing->ready could not run: " + fault +
         "; the card is parked blocked until the deployment recovers\n";
}

/// The line `move` adds when the park committed at revision 5.
inline std::string ParkedLine() {
  return std::string("card ") + kCard +
         " parked blocked (revision 5); recover with: devflow-gate move " + kCard + " designing\n";
}

/// The agent gate's veto line for designing->ready with its report path.
inline std::string Vetoed(const std::string& summary, const std::string& report) {
  return std::string("devflow: transition of card ") + kCard +
         " to \"ready\" was rejected: agent check vetoed designing->ready: " + summary +
         "; full report: " + report + "\n";
}

/// The report of designing->ready at revision 4 in the default report dir.
inline std::string ReportPath(const Workspace& ws) {
  return ws.root() + "/reports/agent-gate/" + kCard + "-designing-ready-r4.md";
}

/// The journal's last line is the park at revision 5 by the agent gate with
/// `agent check for designing->ready failed closed: <fault>`, and the journal folds
/// (`card show` works) to blocked from designing.
inline void RequireParked(const Workspace& ws, const std::string& fault) {
  auto lines = ws.JournalLines();
  REQUIRE(lines.size() == 5);
  auto park = nlohmann::json::parse(lines[4]);
  CHECK(park["rev"] == 5);
  CHECK(park["type"] == "transition");
  CHECK(park["from"] == "designing");
  CHECK(park["to"] == "blocked");
  CHECK(park["by"].dump() == R"({"kind":"command","name":"devflow-agent-gate"})");
  CHECK(park["reason"] == "agent check for designing->ready failed closed: " + fault);
  auto card = ws.ShowJson();
  CHECK(card["stage"] == "blocked");
  CHECK(card["blockedFrom"] == "designing");
  CHECK(card["stageRevision"] == 5);
}

/// The card did not move: the journal is the four lines of CardInDesigning and folds to
/// designing at revision 4.
inline void RequireUnmoved(const Workspace& ws) {
  CHECK(ws.JournalLines().size() == 4);
  auto card = ws.ShowJson();
  CHECK(card["stage"] == "designing");
  CHECK(card["stageRevision"] == 4);
}

/// The move committed designing->ready at revision 5 with one agent check whose summary is
/// `summary`, and the journal folds to ready.
inline void RequireCommitted(const Workspace& ws, const std::string& summary) {
  auto lines = ws.JournalLines();
  REQUIRE(lines.size() == 5);
  auto entry = nlohmann::json::parse(lines[4]);
  CHECK(entry["rev"] == 5);
  CHECK(entry["from"] == "designing");
  CHECK(entry["to"] == "ready");
  REQUIRE(entry["gate"]["checks"].size() == 1);
  CHECK(entry["gate"]["checks"][0]["by"]["kind"] == "agent");
  CHECK(entry["gate"]["checks"][0]["verdict"] == "allowed");
  CHECK(entry["gate"]["checks"][0]["summary"] == summary);
  auto card = ws.ShowJson();
  CHECK(card["stage"] == "ready");
  CHECK(card["stageRevision"] == 5);
}

/// What `move` prints for a committed designing->ready with one agent check.
inline std::string CommittedOut(const std::string& summary) {
  return std::string("card ") + kCard + " moved designing->ready (revision 5)\n" +
         "  check by agent: " + summary + "\n";
}

/// The cache file of the default edge for the card of CardInDesigning (prd:3, design:4).
inline std::string CacheFile(const Workspace& ws, const std::string& cache_dir) {
  VerdictCacheKey key = VerdictCacheKey::Compute("designing->ready", ws.root(), kCard,
                                                 {"prd:3", "design:4"}, GateYaml().prompt);
  return cache_dir + "/" + key.FileName();
}

/// The checker identity the gate computes for designing->ready under the workspace's config
/// (reports/verdict_cache.h CurrentCheckerIdentity, the bytes of its program and script as they
/// are now): what a record must carry to be hit.
inline std::string CheckerIdOf(const Workspace& ws) {
  Result<GateConfig> config = LoadConfigFile(ws / "devflow-gate.yaml");
  REQUIRE_MESSAGE(config.ok(), config.status().message());
  for (const PluginConfig& plugin : config->plugins) {
    if (!plugin.agent) continue;
    for (const AgentEdgeConfig& e : plugin.agent->edges) {
      if (e.edge.Name() == "designing->ready") {
        Result<std::string> id =
            CurrentCheckerIdentity(config->FindProvider(e.provider), e.verdict_nonce, ws.path());
        REQUIRE_MESSAGE(id.ok(), id.status().message());
        return *id;
      }
    }
  }
  return CheckerIdentity(nullptr, false);
}

/// The inputs identity the gate computes for the card's prd:3 and design:4 (the registrations
/// CacheFile's key names), read from disk now: what a record must carry to be hit.
inline std::string InputsIdOf(const Workspace& ws) {
  return test::JudgedInputsOf(ws.root(), kCard, {"prd:3", "design:4"});
}

/// A tmpfs mounted at `dir` (created by the caller) for the lifetime of the object, with
/// `options` such as "size=64k" or "ro"; `mounted()` is false when mount(2) is not permitted
/// (not root, or no CAP_SYS_ADMIN): tests then fall back to the FileSystem seam.
class Tmpfs {
 public:
  Tmpfs(std::string dir, const std::string& options) : dir_(std::move(dir)) {
    unsigned long flags = 0;
    std::string data = options;
    if (options == "ro") {
      flags = MS_RDONLY;
      data = "size=64k";
    }
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", flags, data.c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

/// Fills the file system holding `dir` until write(2) says ENOSPC (a file `dir/filler`).
inline void FillUp(const std::string& dir) {
  std::string block(4096, 'f');
  FILE* f = std::fopen((dir + "/filler").c_str(), "w");
  REQUIRE(f != nullptr);
  std::setvbuf(f, nullptr, _IONBF, 0);
  while (std::fwrite(block.data(), 1, block.size(), f) == block.size()) {
  }
  // Down to the last byte: a small record must not fit in a partial block either.
  while (std::fwrite("f", 1, 1, f) == 1) {
  }
  std::fclose(f);
}

/// A workspace gated by the allow checker (checkers/allow.sh) on designing->ready, for tests of
/// what happens around a check rather than of its verdict.
inline Workspace AllowGated() {
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  return Workspace(yaml.Text());
}

}  // namespace devflow::faults

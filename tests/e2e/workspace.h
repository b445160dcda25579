// End-to-end fixture: a card workspace in a TempDir, driven only through the real
// `devflow-gate` binary (RunGate), with checker providers that are fixture scripts.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "reports/verdict_cache.h"
#include "support/support.h"

namespace devflow::e2e {

/// Absolute path of a fixture: `tests/fixtures/<rel>`.
inline std::string Fixture(const std::string& rel) {
  return test::SourceDir() + "/tests/fixtures/" + rel;
}

/// Splits text into lines (a trailing newline does not make an empty last line).
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// A YAML flow sequence of single-quoted strings: ['a', 'b'].
inline std::string YamlList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i ? ", '" : "'") + items[i] + "'";
  }
  return out + "]";
}

/// What a `devflow-gate.yaml` with one command provider ("checker") and the agent gate on
/// designing->ready (inputs prd, design) says.
struct GateYaml {
  std::vector<std::string> command;  // the provider argv
  std::vector<std::string> env;      // provider env names
  int timeout_ms = 20000;
  std::string cache_dir;             // verdictCacheDir, "" = unset
  std::string provider = "checker";  // the provider the edge names
  std::string prompt = "Check that the design cites only requirements the PRD states.";

  std::string Text() const {
    std::string y = "providers:\n  checker:\n    command: " + YamlList(command) + "\n";
    if (!env.empty()) y += "    env: " + YamlList(env) + "\n";
    y += "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n";
    y += "        'designing->ready':\n          provider: " + provider + "\n";
    y += "          inputs: [prd, design]\n          prompt: " + prompt + "\n";
    y += "      checkTimeoutMs: " + std::to_string(timeout_ms) + "\n";
    if (!cache_dir.empty()) y += "      verdictCacheDir: " + cache_dir + "\n";
    return y;
  }
};

inline const char kPrd[] =
    "# PRD\n\n## Problem\n\nAuditors need the log.\n\n## Requirements\n\n- REQ-1: export CSV\n";
inline const char kDesign[] =
    "# Design\n\n## Approach\n\nStream rows.\n\n## Requirements covered\n\n- REQ-1\n";

/// What a check of the card CardInDesigning makes judged (reports/verdict_cache.h
/// JudgedIdentity): its title "Export the audit log", its empty body, `prd` as prd:3 and
/// `design` as design:4: the `inputsSha256` its cache records and ledger rows carry.
inline std::string CardInDesigningJudged(std::string_view prd = kPrd,
                                         std::string_view design = kDesign) {
  return JudgedIdentity("Export the audit log", "", {{"prd:3", prd}, {"design:4", design}});
}

/// A workspace `<tmp>/` holding `devflow-gate.yaml` and the root `<tmp>/.devflow`; commands run
/// with the workspace as cwd and the default root and config.
class Workspace {
 public:
  /// Writes the config (no card yet).
  explicit Workspace(const std::string& config_yaml) { WriteConfig(config_yaml); }

  void WriteConfig(const std::string& yaml) { test::Spit(dir_ / "devflow-gate.yaml", yaml); }

  const std::string& path() const { return dir_.path(); }
  std::string operator/(const std::string& rel) const { return dir_ / rel; }
  std::string root() const { return dir_ / ".devflow"; }
  std::string card_dir() const { return root() + "/tasks/" + card_; }
  std::string journal_path() const { return card_dir() + "/journal.jsonl"; }
  const std::string& card() const { return card_; }

  /// Runs `devflow-gate args…` in the workspace.
  test::RunResult Gate(const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env = {}) const {
    return test::RunGate(args, dir_.path(), env);
  }

  /// `card create` + `move designing` + `artifact add` prd and design: the card ends in
  /// designing at revision 4 with prd:3 and design:4. `design` replaces the design text.
  void CardInDesigning(const std::string& design = kDesign, const std::string& prd = kPrd) {
    auto created = Gate({"card", "create", "--title", "Export the audit log"});
    INFO("card create: " << created.out << created.err);
    REQUIRE(created.exit_code == 0);
    card_ = Lines(created.out).at(0);
    REQUIRE(card_ == "0001-export-the-audit-log");
    auto moved = Gate({"move", card_, "designing"});
    INFO("move designing: " << moved.out << moved.err);
    REQUIRE(moved.exit_code == 0);
    test::Spit(dir_ / "inputs/prd.md", prd);
    test::Spit(dir_ / "inputs/design.md", design);
    for (const char* kind : {"prd", "design"}) {
      auto added = Gate({"artifact", "add", card_, kind, "inputs/" + std::string(kind) + ".md"});
      INFO("artifact add " << kind << ": " << added.out << added.err);
      REQUIRE(added.exit_code == 0);
    }
  }

  std::vector<std::string> JournalLines() const {
    return Lines(test::Slurp(journal_path()).value_or(""));
  }

  /// `card show --json`, parsed.
  nlohmann::json ShowJson() const {
    auto shown = Gate({"card", "show", card_, "--json"});
    INFO("card show: " << shown.out << shown.err);
    REQUIRE(shown.exit_code == 0);
    return nlohmann::json::parse(shown.out);
  }

 private:
  test::TempDir dir_;
  std::string card_;
};

/// Pids of the processes whose environment holds the entry `name=value` exactly (a checker
/// and everything it starts inherit DEVFLOW_GATE_ROOT=<root>, a path unique to the test). Seen
/// from the host's /proc, so it finds confined checkers too, whatever their pid namespace.
inline std::set<int> ProcessesWithEnv(const std::string& entry) {
  std::set<int> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = 0;
    while (at < env.size()) {
      size_t end = env.find('\0', at);
      if (end == std::string::npos) end = env.size();
      if (env.compare(at, end - at, entry) == 0) {
        out.insert(std::stoi(name));
        break;
      }
      at = end + 1;
    }
  }
  return out;
}

/// Samples ProcessesWithEnv(entry) every 10 ms on a thread until destroyed; `seen()` is the union.
class ProcessWatch {
 public:
  explicit ProcessWatch(std::string entry)
      : entry_(std::move(entry)), thread_([this] {
          while (!stop_) {
            auto now = ProcessesWithEnv(entry_);
            {
              std::lock_guard<std::mutex> lock(mu_);
              seen_.insert(now.begin(), now.end());
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        }) {}
  ~ProcessWatch() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::set<int> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  std::string entry_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<int> seen_;
  std::thread thread_;
};

/// A directory of symlinks to every program of the system PATH except bubblewrap: as PATH for
/// `devflow-gate`, a host where bubblewrap is really not installed (the Landlock + seccomp
/// fallback then confines the checker).
class PathWithoutBwrap {
 public:
  PathWithoutBwrap() {
    for (const char* dir :
         {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name == "bwrap") continue;
        std::error_code exists;  // the first directory on the list wins
        std::filesystem::create_symlink(e.path(), std::filesystem::path(dir_.path()) / name,
                                        exists);
      }
    }
    REQUIRE(std::filesystem::exists(std::filesystem::path(dir_.path()) / "sh"));
    REQUIRE(!std::filesystem::exists(std::filesystem::path(dir_.path()) / "bwrap"));
  }
  const std::string& path() const { return dir_.path(); }
  /// Puts an executable `name` holding `script` in the directory, in place of any link there
  /// (e.g. a `bwrap` that fails the way a host's does).
  void Plant(const std::string& name, const std::string& script) const {
    const std::filesystem::path at = std::filesystem::path(dir_.path()) / name;
    std::filesystem::remove(at);
    test::Spit(at.string(), script);
    std::filesystem::permissions(at, std::filesystem::perms::owner_all);
  }

 private:
  test::TempDir dir_;
};

/// True when `pid` exists and is not a zombie (its /proc/<pid>/stat state is not Z or X).
inline bool Running(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return false;
  size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return false;
  char state = text[paren + 2];
  return state != 'Z' && state != 'X';
}

}  // namespace devflow::e2e

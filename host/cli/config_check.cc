#include "host/cli/config_check.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "checker/grounding.h"
#include "checker/sandbox.h"
#include "reports/gate_layout.h"
#include "reports/verdict_cache.h"

namespace devflow {
namespace {

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

// "" when `program` (absolute after LoadPinnedConfig, or bare when PATH had no such name) can
// be run, else why not.
std::string ProgramProblem(const std::string& program, const std::string& search_path,
                           FileSystem& fs) {
  if (program.empty()) return "has an empty command[0]";
  if (program.front() != '/') {
    return "program " + Quote(program) + " is not on PATH (" + search_path + ")";
  }
  Result<FileKind> kind = fs.Kind(program);
  if (!kind.ok()) return "program " + program + " cannot be checked: " + kind.status().message();
  if (*kind == FileKind::kNone) return "program " + program + " does not exist";
  if (*kind == FileKind::kDir) return "program " + program + " is a directory";
  if (::access(program.c_str(), X_OK) != 0) {
    return "program " + program + " cannot be run: " + std::strerror(errno);
  }
  return "";
}

void CheckDir(const std::string& where, const char* key, const std::optional<std::string>& written,
              const std::string& resolved, const std::string& workspace, const std::string& root,
              FileSystem& fs, ConfigUseFindings& out) {
  if (!written || resolved.empty()) return;
  const std::string item = where + ": " + key + " " + Quote(*written);
  auto within = [&resolved](const std::string& dir) {
    return resolved == dir || resolved.rfind(dir + "/", 0) == 0;
  };
  const bool inside = within(workspace);
  // trial12 F-CACHE: the reference config's `.devflow-agent-gate-cache` lies in the workspace,
  // outside the root that devflow's fs guard keeps the agent out of: the agent flipped its
  // cached veto to an allow and the next move committed.
  if (inside && !within(root)) {
    const bool cache = std::string(key) == "verdictCacheDir";
    out.warnings.push_back(
        item + " resolves to " + resolved + ", inside the workspace " + workspace +
        " but outside the devflow root " + root + ": the judged agent can write there, so it " +
        (cache ? "can turn a cached veto into an allow (or write an allow for its next revision)"
               : "can rewrite or remove the veto reports the operator reads") +
        "; keep it under the devflow root (e.g. " + root +
        (cache ? "/cache/agent-gate" : "/reports/agent-gate") + ") or outside the workspace");
  }
  if (!inside) {
    out.warnings.push_back(item + " resolves to " + resolved + ", outside the workspace " +
                           workspace + "; relative paths resolve against the workspace, so a " +
                           "path meant to be in it should be relative");
  }
  Result<std::optional<std::string>> link = SymlinkOnPath(fs, workspace, resolved);
  if (!link.ok()) {
    out.errors.push_back(item + " cannot be checked: " + link.status().message());
  } else if (*link) {
    out.errors.push_back(
        item + " goes through the symlink " + **link + "; the gate " +
        (std::string(key) == "reportDir" ? "writes no veto report" : "does not cache") +
        " through a symlink; point " + key + " at a real directory");
  }
}

}  // namespace

ConfigUseFindings CheckConfigUse(const GateConfig& config, const std::string& root,
                                 const std::string& search_path, FileSystem& fs,
                                 const std::vector<std::string>& unsearched_path) {
  ConfigUseFindings out;
  const std::string workspace = ParentPath(root);
  const bool runs_programs =
      std::any_of(config.providers.begin(), config.providers.end(),
                  [](const ProviderConfig& p) { return !p.builtin && !p.command.empty(); });
  for (const std::string& entry : runs_programs ? unsearched_path : std::vector<std::string>{}) {
    out.warnings.push_back(
        (entry.empty() ? std::string("PATH holds an empty entry, which means the current directory")
         : entry[0] == '/' ? "PATH holds the entry " + Quote(entry) + " inside the workspace"
                           : "PATH holds the relative entry " + Quote(entry)) +
        ": a provider program found through it is whatever that directory holds, so "
        "whoever controls that directory (the judged agent, in the workspace) could swap it; the "
        "gate does not search it (it searches " +
        search_path + ", and so does every checker); remove it from the gate's PATH");
  }
  for (const ProviderConfig& p : config.providers) {
    if (p.builtin || p.command.empty()) continue;
    std::string problem = ProgramProblem(p.command.front(), search_path, fs);
    if (problem.empty()) continue;
    out.errors.push_back("providers." + p.name + ": " + problem +
                         "; every check by this provider would fail closed; install it or fix "
                         "providers." +
                         p.name + ".command");
  }
  // trial12 M1/k30: a script outside the checker's readable set runs nowhere confined (the
  // interpreter: "can't open file ... No such file or directory", every check fails closed).
  // The set is the one the gate computes for a check (checker/sandbox.h CheckerReadable), at
  // the Landlock level's extent (no scratch dir, no reaper), which bubblewrap's contains.
  for (const ProviderConfig& p : config.providers) {
    if (p.builtin || p.command.empty() || p.sandbox_off) continue;
    const std::vector<CommandFile> files = CommandFiles(&p, workspace);
    if (files.empty() || files.front().index != 0 || files.front().path.front() != '/') continue;
    const ReadableSet set =
        CheckerReadable({workspace, "", {files.front().path}, search_path, p.read}, false);
    for (const CommandFile& file : files) {
      if (file.index == 0 || ReadableIn(set, file.path)) continue;
      out.warnings.push_back(
          "providers." + p.name + ": command[" + std::to_string(file.index) + "] " + file.path +
          " (a file the command names: for an interpreter, the script that runs) lies outside "
          "what the checker may read (docs/security.md), so a confined checker cannot open it "
          "and every check by this provider fails closed; add it (or its directory) to "
          "providers." +
          p.name + ".read");
    }
  }
  for (size_t i = 0; i < config.plugins.size(); ++i) {
    const PluginConfig& plugin = config.plugins[i];
    const std::string where = "plugins[" + std::to_string(i) + "](" + plugin.id + ")";
    if (plugin.agent) {
      for (const AgentEdgeConfig& edge : plugin.agent->edges) {
        if (config.FindProvider(edge.provider)) continue;
        out.errors.push_back(where + ": edges[\"" + edge.edge.Name() + "\"].provider " +
                             Quote(edge.provider) +
                             " is not defined under providers; moves on this edge will fail "
                             "closed; define it under providers or fix the name");
      }
      CheckDir(where, "reportDir", plugin.agent->report_dir, AgentReportDir(*plugin.agent, root),
               workspace, root, fs, out);
      CheckDir(where, "verdictCacheDir", plugin.agent->verdict_cache_dir,
               AgentCacheDir(*plugin.agent, root), workspace, root, fs, out);
    }
    if (plugin.grounding) {
      for (const GroundingEdgeConfig& edge : plugin.grounding->edges) {
        const auto& patterns = edge.options.require;
        for (size_t j = 0; j < patterns.size(); ++j) {
          Status bad = CheckRequirePatterns({patterns[j]});
          if (bad.ok()) continue;
          out.errors.push_back(where + ": edges[\"" + edge.edge.Name() + "\"].require[" +
                               std::to_string(j) + "]: " + bad.message() +
                               "; every move on this edge would fail closed (RE2 syntax: no "
                               "backreferences or lookarounds)");
        }
      }
    }
  }
  return out;
}

}  // namespace devflow

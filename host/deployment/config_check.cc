#include "host/deployment/config_check.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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

// The home directories a readable set must not hold (trial12: a program linked onto PATH from
// /root made all of /root readable, ssh keys included), canonical, those that exist: the host
// user's $HOME, /root, and the home of every passwd entry whose shell /etc/shells lists (a
// login account; nologin, false and sync are not listed there).
std::vector<std::string> HomeDirs() {
  std::vector<std::string> homes;
  auto add = [&homes](const char* dir) {
    if (!dir || dir[0] != '/') return;
    char* real = ::realpath(dir, nullptr);
    if (!real) return;
    if (std::find(homes.begin(), homes.end(), real) == homes.end()) homes.emplace_back(real);
    std::free(real);
  };
  add(std::getenv("HOME"));
  add("/root");
  std::vector<std::string> shells;
  ::setusershell();
  while (const char* shell = ::getusershell()) shells.emplace_back(shell);
  ::endusershell();
  ::setpwent();
  while (const passwd* pw = ::getpwent()) {
    if (pw->pw_shell && std::find(shells.begin(), shells.end(), pw->pw_shell) != shells.end()) {
      add(pw->pw_dir);
    }
  }
  ::endpwent();
  return homes;
}

// The trees `source` alone adds to a readable set beyond `baseline` (the system trees every
// set holds) that hold a home directory: each (tree, the first home it holds).
std::vector<std::pair<std::string, std::string>> HomeTrees(const CheckerPaths& source,
                                                           const ReadableSet& baseline,
                                                           const std::vector<std::string>& homes) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const std::string& tree : CheckerReadable(source, false).trees) {
    if (std::find(baseline.trees.begin(), baseline.trees.end(), tree) != baseline.trees.end()) {
      continue;
    }
    for (const std::string& home : homes) {
      if (home == tree || tree == "/" || home.rfind(tree + "/", 0) == 0) {
        found.emplace_back(tree, home);
        break;
      }
    }
  }
  return found;
}

// The home directory (of `homes`, canonical) that `program` lies beneath, itself or the target
// of its symlink chain (realpath), or "" when none.
std::string HomeBeneath(const std::string& program, const std::vector<std::string>& homes) {
  std::vector<std::string> paths{program};
  if (char* real = ::realpath(program.c_str(), nullptr)) {
    paths.emplace_back(real);
    std::free(real);
  }
  for (const std::string& path : paths) {
    for (const std::string& home : homes) {
      if (home != "/" && path.rfind(home + "/", 0) == 0) return home;
    }
  }
  return "";
}

std::string HoldsHome(const std::string& tree, const std::string& home) {
  return "puts " + tree + " in the checker's readable set, " +
         (tree == home ? "a home directory" : "which holds the home directory " + home) +
         ": a confined checker can read every file there (0600 files, ssh keys and tokens "
         "included; docs/security.md)";
}

// trial12 "LEAK by the documented rule": a home directory (or /) made readable through the
// program's symlink chain, a PATH entry or read:, at both levels, while config check said ok.
void CheckHomes(const GateConfig& config, const std::string& search_path, ConfigUseFindings& out) {
  const bool confined = std::any_of(config.providers.begin(), config.providers.end(),
                                    [](const ProviderConfig& p) { return !p.sandbox_off; });
  if (!confined) return;
  const std::vector<std::string> homes = HomeDirs();
  if (homes.empty()) return;
  const ReadableSet baseline = CheckerReadable({}, false);
  for (std::string_view dirs = search_path; !dirs.empty();) {
    const size_t end = std::min(dirs.find(':'), dirs.size());
    const std::string entry(dirs.substr(0, end));
    dirs.remove_prefix(std::min(end + 1, dirs.size()));
    if (entry.empty() || entry[0] != '/') continue;
    for (const auto& [tree, home] : HomeTrees({"", "", {}, entry, {}}, baseline, homes)) {
      out.warnings.push_back("the gate's PATH entry " + Quote(entry) + " (every checker's PATH) " +
                             HoldsHome(tree, home) +
                             "; remove it from the gate's PATH and install the programs a "
                             "checker runs outside any home directory");
    }
  }
  for (const ProviderConfig& p : config.providers) {
    if (p.sandbox_off || p.builtin || p.command.empty() || p.command[0].empty() ||
        p.command[0][0] != '/') {
      continue;
    }
    const auto program_trees = HomeTrees({"", "", {p.command[0]}, "", {}}, baseline, homes);
    for (const auto& [tree, home] : program_trees) {
      out.warnings.push_back(
          "providers." + p.name + ": the program " + p.command[0] +
          " (its directory, or one along its symlink chain) " + HoldsHome(tree, home) +
          "; install the checker outside any home directory (e.g. /usr/local/lib/" + p.name +
          "/) and name it by absolute path");
    }
    // trial12/13 k30: a pyenv shim (~/.pyenv/shims/python3) runs ~/.pyenv/libexec/pyenv, which
    // lies in the same home but outside the program's directory: confined, every check failed
    // closed while config check said ok. Any program beneath a home is warned about: its
    // directory is readable, the rest of the home (where shims, virtualenvs and version
    // managers keep what they run) is not.
    if (program_trees.empty()) {
      if (const std::string under = HomeBeneath(p.command[0], homes); !under.empty()) {
        out.warnings.push_back(
            "providers." + p.name + ": the program " + p.command[0] + " lies under the home " +
            "directory " + under + ", of which a confined checker sees only the program's own " +
            "directory: a program that runs something else from that home (a pyenv, nvm or " +
            "asdf shim, a virtualenv's interpreter) fails closed on every check; install the " +
            "checker outside any home directory (e.g. /usr/local/lib/" + p.name + "/), or name " +
            "the real interpreter (e.g. /usr/bin/python3) by absolute path");
      }
    }
    for (size_t i = 0; i < p.read.size(); ++i) {
      for (const auto& [tree, home] : HomeTrees({"", "", {}, "", {p.read[i]}}, baseline, homes)) {
        out.warnings.push_back("providers." + p.name + ": read[" + std::to_string(i) + "] " +
                               Quote(p.read[i]) + " " + HoldsHome(tree, home) +
                               "; list in read: only the single files or the directories "
                               "outside any home directory that the checker needs");
      }
    }
  }
}

// trial12 k29: `read: [/etc/shadow]` loaded silently, yet the file stays masked (EACCES).
void CheckMasked(const ProviderConfig& p, const std::vector<std::string>& masked,
                 ConfigUseFindings& out) {
  for (size_t i = 0; i < p.read.size(); ++i) {
    char* resolved = ::realpath(p.read[i].c_str(), nullptr);
    if (!resolved) continue;
    const std::string real(resolved);
    std::free(resolved);
    for (const std::string& secret : masked) {
      if (real != secret && real.rfind(secret + "/", 0) != 0) continue;
      out.warnings.push_back(
          "providers." + p.name + ": read[" + std::to_string(i) + "] " + Quote(p.read[i]) +
          (real == p.read[i] ? "" : " (resolving to " + real + ")") +
          (real == secret ? " is" : " lies beneath " + secret + ",") +
          " a host secret the sandbox masks at both levels (docs/security.md), so it stays "
          "unreadable to the checker (EACCES) whatever read: says; remove it from providers." +
          p.name + ".read (a checker that needs it needs another design, or `sandbox: off`)");
      break;
    }
  }
}

// trial14 W1: a service class adds edges that skip base-flow edges (express and emergency:
// draft->developing; express: reviewing->done; emergency: developing->done, reference §1.4).
// A card of that class moves along the extra edge with no check when the config gates a base
// edge it skips but not the extra edge itself: warn, naming both.
void CheckClassBypass(const GateConfig& config, ConfigUseFindings& out) {
  std::vector<Edge> gated;
  for (const PluginConfig& plugin : config.plugins) {
    if (plugin.agent) {
      for (const AgentEdgeConfig& e : plugin.agent->edges) gated.push_back(e.edge);
    }
    if (plugin.grounding) {
      for (const GroundingEdgeConfig& e : plugin.grounding->edges) gated.push_back(e.edge);
    }
    if (plugin.artifact) {
      for (const auto& [edge, kinds] : plugin.artifact->edges) gated.push_back(edge);
    }
  }
  const auto is_gated = [&gated](Edge e) {
    return std::find(gated.begin(), gated.end(), e) != gated.end();
  };
  const struct {
    Edge edge;
    const char* classes;
  } extras[] = {
      {{Location::kDraft, Location::kDeveloping}, "express and emergency"},
      {{Location::kReviewing, Location::kDone}, "express"},
      {{Location::kDeveloping, Location::kDone}, "emergency"},
  };
  for (const auto& extra : extras) {
    if (is_gated(extra.edge)) continue;
    std::vector<std::string> skipped;
    // The base flow is the stages in order; the extra edge skips each step between its ends.
    for (int at = static_cast<int>(extra.edge.from); at < static_cast<int>(extra.edge.to); ++at) {
      const Edge step{static_cast<Location>(at), static_cast<Location>(at + 1)};
      if (is_gated(step)) skipped.push_back(step.Name());
    }
    if (skipped.empty()) continue;
    std::string list;
    for (const std::string& name : skipped) list += (list.empty() ? "" : ", ") + name;
    out.warnings.push_back(
        "cards of class " + std::string(extra.classes) + " may move " + extra.edge.Name() +
        ", which no plugin gates, and so skip " + list +
        ", which the config gates: such a card passes no check on the way (reference §1.4); "
        "gate " +
        extra.edge.Name() + " too (the same policy as " + skipped.front() +
        "), or do not create cards of that class");
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
          "(an interpreter: \"No such file or directory\") and every check that needs it fails "
          "closed; add it (or its directory) to providers." +
          p.name + ".read");
    }
  }
  CheckHomes(config, search_path, out);
  CheckClassBypass(config, out);
  const std::vector<std::string> masked = MaskedSecrets();
  for (const ProviderConfig& p : config.providers) {
    if (!p.sandbox_off) CheckMasked(p, masked, out);
  }
  for (std::string& shared : SharedGateDirs(config, root)) out.errors.push_back(std::move(shared));
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
      CheckDir(where, "reportDir", plugin.agent->report_dir, AgentReportBase(*plugin.agent, root),
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

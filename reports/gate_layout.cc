#include "reports/gate_layout.h"

#include <climits>
#include <cstdlib>

#include "host/os.h"
#include "reports/sha256.h"

namespace devflow {
namespace {
std::string Workspace(const std::string& root) { return ParentPath(root); }
bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::string AgentReportBase(const AgentGateConfig& gate, const std::string& root) {
  if (!gate.report_dir) return JoinPath(root, "reports/agent-gate");
  return ResolveAgainst(Workspace(root), *gate.report_dir);
}

std::string RootReportTag(const std::string& root) {
  std::string canonical = AbsolutePath(root);
  char buf[PATH_MAX];
  if (::realpath(canonical.c_str(), buf) != nullptr) canonical = buf;
  const std::string workspace = Workspace(canonical);
  std::string name = workspace.substr(workspace.find_last_of('/') + 1);
  if (name.empty()) name = "root";
  return name + "-" + Sha256Hex(canonical).substr(0, 12);
}

bool PathWithin(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path == dir || path.rfind(dir + "/", 0) == 0;
}

std::string AgentReportDir(const AgentGateConfig& gate, const std::string& root) {
  std::string base = AgentReportBase(gate, root);
  if (PathWithin(base, AbsolutePath(root))) return base;
  return JoinPath(base, RootReportTag(root));
}

std::vector<std::string> SharedGateDirs(const GateConfig& config, const std::string& root) {
  std::vector<std::string> out;
  auto pairs = [&](const char* key, const char* what, auto dir_of) {
    for (size_t i = 0; i < config.plugins.size(); ++i) {
      if (!config.plugins[i].agent) continue;
      const std::string a = dir_of(*config.plugins[i].agent);
      if (a.empty()) continue;
      for (size_t j = i + 1; j < config.plugins.size(); ++j) {
        if (!config.plugins[j].agent || dir_of(*config.plugins[j].agent) != a) continue;
        // Names carry the edge (reports) and keys hash it (cache): only a shared edge collides.
        const AgentEdgeConfig* shared = nullptr;
        // (No AgentGateConfig::Find: it lives in dg_config, which links this library.)
        for (const AgentEdgeConfig& e : config.plugins[i].agent->edges) {
          for (const AgentEdgeConfig& f : config.plugins[j].agent->edges) {
            if (!shared && e.edge == f.edge) shared = &e;
          }
        }
        if (!shared) continue;
        out.push_back("plugins[" + std::to_string(i) + "](" + config.plugins[i].id + "): " + key +
                      " " + a + " is used by plugins #" + std::to_string(i) + " and #" +
                      std::to_string(j) + " (both check " + shared->edge.Name() + "); " + what +
                      " would replace each other");
      }
    }
  };
  pairs("reportDir", "reports", [&](const AgentGateConfig& g) { return AgentReportBase(g, root); });
  pairs("verdictCacheDir", "cached verdicts",
        [&](const AgentGateConfig& g) { return AgentCacheDir(g, root); });
  return out;
}

std::string FaultReportDir(const std::string& report_dir) { return JoinPath(report_dir, "faults"); }

std::string FaultReportPath(const std::string& report_dir, const std::string& card_id,
                            const std::string& from, const std::string& to, int64_t revision,
                            const std::string& at, int copy) {
  std::string basic;
  for (char c : at) {  // "2026-09-16T08:00:00.000Z" → "20260916T080000.000Z"
    if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || c == '.') basic += c;
  }
  return JoinPath(FaultReportDir(report_dir),
                  card_id + "-" + from + "-" + to + "-r" + std::to_string(revision) + "-" + basic +
                      (copy > 1 ? "-" + std::to_string(copy) : "") + ".md");
}

std::string AgentCacheDir(const AgentGateConfig& gate, const std::string& root) {
  if (!gate.verdict_cache_dir) return "";
  return ResolveAgainst(Workspace(root), *gate.verdict_cache_dir);
}

std::vector<std::string> InputLabels(const Card& card, const AgentEdgeConfig& edge) {
  std::vector<std::string> labels;
  for (const std::string& kind : edge.inputs) {
    if (const ArtifactRecord* r = card.NewestOfKind(kind)) {
      labels.push_back(kind + ":" + std::to_string(r->rev));
    }
  }
  return labels;
}

bool IsTempFileName(const std::string& name) {
  return EndsWith(name, ".tmp") &&
         (name.rfind('.', 0) == 0 || name.find(".json.") != std::string::npos);
}

}  // namespace devflow

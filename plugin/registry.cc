#include "plugin/registry.h"

#include <algorithm>

#include "plugin/artifact_gate.h"
#include "plugin/grounding_gate.h"

namespace devflow {
namespace {

// The agent gate's directories depend only on its config (the card reader and checker are not
// used to compute them), so a throw-away instance answers.
AgentGate AgentGateFor(const AgentGateConfig& config, CheckerDispatch& checker) {
  return AgentGate(config, CardReader(), checker, RealFileSystem());
}

class NoChecker : public CheckerDispatch {
 public:
  Result<CheckReply> Dispatch(const CheckRequest&) override {
    return Status::Error("fault", "no checker is available to this policy");
  }
};

}  // namespace

const std::vector<PolicyRegistration>& PolicyRegistry() {
  static const std::vector<PolicyRegistration> registry = {
      {"devflow-artifact-gate", [](const PluginConfig& p) { return p.artifact.has_value(); },
       [](const PluginConfig& p, const PolicyDeps& d) -> std::unique_ptr<Policy> {
         return std::make_unique<ArtifactGate>(*p.artifact, d.read_card, *d.fs);
       },
       [](const PluginConfig&, const std::string&) { return std::vector<std::string>{}; }},
      {"devflow-agent-gate", [](const PluginConfig& p) { return p.agent.has_value(); },
       [](const PluginConfig& p, const PolicyDeps& d) -> std::unique_ptr<Policy> {
         return std::make_unique<AgentGate>(*p.agent, d.read_card, *d.checker, *d.fs);
       },
       [](const PluginConfig& p, const std::string& root) {
         NoChecker none;
         AgentGate gate = AgentGateFor(*p.agent, none);
         std::vector<std::string> dirs = {gate.ReportDir(root)};
         if (!gate.CacheDir(root).empty()) dirs.push_back(gate.CacheDir(root));
         return dirs;
       }},
      {"devflow-grounding-gate", [](const PluginConfig& p) { return p.grounding.has_value(); },
       [](const PluginConfig& p, const PolicyDeps& d) -> std::unique_ptr<Policy> {
         return std::make_unique<GroundingGate>(*p.grounding, d.read_card, *d.fs);
       },
       // The grounding ledger is appended, never replaced: nothing to sweep.
       [](const PluginConfig&, const std::string&) { return std::vector<std::string>{}; }},
  };
  return registry;
}

const PolicyRegistration* FindPolicy(std::string_view id) {
  for (const PolicyRegistration& r : PolicyRegistry()) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

Result<std::vector<std::unique_ptr<Policy>>> BuildPolicies(const GateConfig& config,
                                                           const PolicyDeps& deps) {
  std::vector<std::unique_ptr<Policy>> out;
  for (const PluginConfig& plugin : config.plugins) {
    const PolicyRegistration* reg = FindPolicy(plugin.id);
    if (!reg || !reg->has_config(plugin)) {
      return Status::Error("config", config.file + ":" + std::to_string(plugin.line) + ": plugin " +
                                         plugin.id + " has no configuration");
    }
    out.push_back(reg->build(plugin, deps));
  }
  return out;
}

std::vector<std::string> OwnedDirs(const GateConfig& config, const std::string& root) {
  std::vector<std::string> out;
  for (const PluginConfig& plugin : config.plugins) {
    const PolicyRegistration* reg = FindPolicy(plugin.id);
    if (!reg || !reg->has_config(plugin)) continue;
    for (std::string& dir : reg->owned_dirs(plugin, root)) {
      if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(std::move(dir));
    }
  }
  return out;
}

}  // namespace devflow

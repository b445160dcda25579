// The policy registry: every built-in policy declares, in one table, its plugin id, which typed
// config of a `plugins:` entry is its own (config/config.h reads the YAML of each id), how to
// build it, and the directories it owns. The CLI and the server build the waterfall from a
// GateConfig through BuildPolicies only, so adding a policy touches its own folder, its config
// reader and one row of plugin/registry.cc.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "checker/dispatch.h"
#include "config/config.h"
#include "host/os.h"
#include "host/status.h"
#include "host/waterfall.h"
#include "plugin/agent_gate.h"  // CardReader

namespace devflow {

/// What a policy may be built with: a read-only card reader, the checker dispatch (policies
/// never spawn anything themselves) and the file system seam.
struct PolicyDeps {
  CardReader read_card;
  CheckerDispatch* checker = nullptr;
  FileSystem* fs = nullptr;
};

/// One registered policy.
struct PolicyRegistration {
  /// Plugin id, as written in `plugins[].id`, e.g. "devflow-agent-gate".
  std::string_view id;
  /// Whether `plugin` carries this policy's typed config (read by config/config.cc).
  std::function<bool(const PluginConfig& plugin)> has_config;
  /// Builds the policy from its config; never null for a config `has_config` accepts.
  std::function<std::unique_ptr<Policy>(const PluginConfig& plugin, const PolicyDeps& deps)> build;
  /// Absolute directories under which the policy replaces files atomically for a card of
  /// `root` (veto reports, verdict cache): swept of stale temporaries before a move.
  std::function<std::vector<std::string>(const PluginConfig& plugin, const std::string& root)>
      owned_dirs;
};

/// Every built-in policy, in a fixed order.
const std::vector<PolicyRegistration>& PolicyRegistry();

/// The registration of `id`, or nullptr.
const PolicyRegistration* FindPolicy(std::string_view id);

/// The waterfall of `config`, one policy per `plugins:` entry in config order. Errors (code
/// "config"): `<file>:<line>: plugin <id> has no configuration` for an entry no registration
/// accepts.
Result<std::vector<std::unique_ptr<Policy>>> BuildPolicies(const GateConfig& config,
                                                           const PolicyDeps& deps);

/// The directories every configured policy owns for `root`, de-duplicated, config order.
std::vector<std::string> OwnedDirs(const GateConfig& config, const std::string& root);

}  // namespace devflow

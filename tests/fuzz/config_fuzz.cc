// Fuzzes config loading (config/config.h LoadConfigText) on arbitrary YAML text.
// Invariants beyond "no crash" (and no exception escaping the module):
//  - a failure is code "config" and every line of its message is one problem located as
//    `<file>:<line>:<col>: `;
//  - a success keeps the header's promises: each plugin carries exactly the typed config its id
//    names, each provider exactly one of builtin/command, provider names are unique, agent edges
//    have a non-blank provider and prompt and de-duplicated inputs, and lookups find each item;
//  - loading is deterministic.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "config/config.h"
#include "tests/fuzz/fuzz_check.h"

namespace devflow {
namespace {

constexpr std::string_view kFile = "fuzz.yaml";

bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

// `fuzz.yaml:<digits>:<digits>: ` at the start of `line`.
bool IsLocatedLine(std::string_view line) {
  if (line.substr(0, kFile.size() + 1) != std::string(kFile) + ":") return false;
  size_t i = kFile.size() + 1;
  for (int field = 0; field < 2; ++field) {
    const size_t digits = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == digits || i >= line.size() || line[i] != ':') return false;
    ++i;
  }
  return line.substr(i, 1) == " ";
}

void CheckLoaded(const GateConfig& config) {
  DG_FUZZ_CHECK(config.file == kFile, "the config remembers its file");
  std::set<std::string> names;
  for (const ProviderConfig& p : config.providers) {
    DG_FUZZ_CHECK(names.insert(p.name).second, "provider names are unique");
    DG_FUZZ_CHECK(p.builtin.has_value() != !p.command.empty(),
                  "a provider is exactly one of builtin and command");
    DG_FUZZ_CHECK(config.FindProvider(p.name) == &p, "FindProvider finds each provider");
  }
  for (const PluginConfig& plugin : config.plugins) {
    const int typed =
        plugin.agent.has_value() + plugin.artifact.has_value() + plugin.grounding.has_value();
    DG_FUZZ_CHECK(typed == 1, "a plugin carries exactly one typed config");
    if (plugin.id == "devflow-agent-gate") {
      DG_FUZZ_CHECK(plugin.agent.has_value(), "an agent gate carries an agent config");
      for (const AgentEdgeConfig& edge : plugin.agent->edges) {
        DG_FUZZ_CHECK(!IsBlank(edge.provider), "an agent edge names a provider");
        DG_FUZZ_CHECK(!IsBlank(edge.prompt), "an agent edge has a prompt");
        std::set<std::string> inputs(edge.inputs.begin(), edge.inputs.end());
        DG_FUZZ_CHECK(inputs.size() == edge.inputs.size(), "agent edge inputs are de-duplicated");
        DG_FUZZ_CHECK(plugin.agent->Find(edge.edge) != nullptr, "Find finds each agent edge");
      }
    } else if (plugin.id == "devflow-artifact-gate") {
      DG_FUZZ_CHECK(plugin.artifact.has_value(), "an artifact gate carries an artifact config");
      for (const ArtifactKindConfig& kind : plugin.artifact->kinds) {
        DG_FUZZ_CHECK(plugin.artifact->FindKind(kind.kind) != nullptr, "FindKind finds each kind");
      }
      for (const auto& [edge, kinds] : plugin.artifact->edges) {
        DG_FUZZ_CHECK(!kinds.empty(), "empty artifact edge lists are dropped");
      }
    } else {
      DG_FUZZ_CHECK(plugin.id == "devflow-grounding-gate", "a plugin id is a known one");
      DG_FUZZ_CHECK(plugin.grounding.has_value(), "a grounding gate carries a grounding config");
    }
  }
  for (const std::string& warning : ConfigWarnings(config)) {
    DG_FUZZ_CHECK(warning.rfind("plugins[", 0) == 0, "a warning names its plugin");
  }
}

}  // namespace
}  // namespace devflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace devflow;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Result<GateConfig> config = LoadConfigText(text, std::string(kFile));
  const Result<GateConfig> again = LoadConfigText(text, std::string(kFile));
  DG_FUZZ_CHECK(config.ok() == again.ok(), "loading is deterministic");
  if (!config.ok()) {
    const Status status = config.status();  // status() returns a copy
    const std::string& message = status.message();
    DG_FUZZ_CHECK(status.code() == "config", "a load error is code \"config\"");
    DG_FUZZ_CHECK(message == again.status().message(), "load errors are deterministic");
    DG_FUZZ_CHECK(!message.empty(), "a load error says something");
    size_t start = 0;
    while (start <= message.size()) {
      size_t end = message.find('\n', start);
      if (end == std::string::npos) end = message.size();
      const std::string_view line = std::string_view(message).substr(start, end - start);
      if (!IsLocatedLine(line)) std::fprintf(stderr, "load error:\n%s\n", message.c_str());
      DG_FUZZ_CHECK(IsLocatedLine(line),
                    "every line of a load error is `<file>:<line>:<col>: <problem>`");
      start = end + 1;
    }
    return 0;
  }
  CheckLoaded(*config);
  return 0;
}

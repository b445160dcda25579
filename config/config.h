// devflow-gate.yaml → plain structs (SPEC §3). Every problem is reported as one line
// `<file>:<line>:<col>: <item path>: <message>` (1-based line and column), using the agent
// gate's upstream messages where they exist (reference §4.2). Unknown keys, duplicate keys and
// a second YAML document are errors (yaml-cpp accepts them silently, cpp-notes §2).
//
// Item paths: `top level`, `providers.<name>`, `plugins[<i>](<id>)` (0-based index); problems
// inside a plugin's config name the field in the message, upstream style, e.g.
//   devflow-gate.yaml:12:19: plugins[1](devflow-agent-gate): edges["designing->ready"].provider
//   must be a non-empty subagent provider name
// Scalars are typed as YAML 1.2's core schema does (what upstream's JS loader sees): `42`,
// `true`, `~` are not strings. Booleans accept only `true` / `false`; integers only plain
// decimal digits without a leading zero (yaml-cpp would read `010` as octal 8).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/stages.h"
#include "host/status.h"

namespace devflow {

/// A checker provider (SPEC §3 `providers:`). Exactly one of `builtin` / `command` is set.
struct ProviderConfig {
  std::string name;
  std::optional<std::string> builtin;  // "grounding": runs `devflow-gate checker grounding ARGS`
  std::vector<std::string> args;       // extra argv for a builtin
  std::vector<std::string> command;    // argv; prompt on stdin, reply on stdout
  std::vector<std::string> env;        // host variable names passed through
  bool network = false;                // the sandbox keeps the network for this provider
  bool sandbox_off = false;            // `sandbox: off`: no confinement (reported as "off")
  /// `reply: block-only` (issue 7 item 1): the reply must be the deciding verdict block and
  /// nothing else but white space around it (checker/verdict.h ReplyRule::kBlockOnly). Default
  /// `reply: text`: prose may precede the block (the rules of docs/checker-protocol.md).
  bool reply_block_only = false;
  /// `read:` extra files or trees a confined checker may read (checker/sandbox.h ReadableSet),
  /// absolute, as written; each existed when the config loaded.
  std::vector<std::string> read;
};

/// One configured agent-gate edge (reference §4.2).
struct AgentEdgeConfig {
  Edge edge;
  std::string provider;             // non-blank
  std::vector<std::string> inputs;  // kinds, de-duplicated keeping first occurrence
  std::string prompt;               // non-blank check instruction, verbatim
  /// `verdictNonce: true` (issue 4): each dispatch carries a fresh random nonce in the prompt,
  /// and only a verdict block echoing it counts. Default false (upstream's behaviour).
  bool verdict_nonce = false;
};

/// `devflow-agent-gate` config.
struct AgentGateConfig {
  std::vector<AgentEdgeConfig> edges;            // config order
  std::optional<std::string> report_dir;         // as written; default <root>/reports/agent-gate
  std::optional<std::string> verdict_cache_dir;  // as written; unset disables caching
  int64_t check_timeout_ms = 600000;
  int64_t max_reply_bytes = 8 * 1024 * 1024;  // `maxReplyBytes`
  /// The check configured for edge `e`, or nullptr (unconfigured edges are delegated).
  const AgentEdgeConfig* Find(const Edge& e) const;
};

/// One required item of an artifact kind: a name, optionally with a description.
struct ArtifactItem {
  std::string title;
  std::optional<std::string> description;
};
struct ArtifactKindConfig {
  std::string kind;
  std::vector<ArtifactItem> frontmatter;
  std::vector<ArtifactItem> sections;
  std::vector<ArtifactItem> non_empty_sections;
};
/// `devflow-artifact-gate` config (reference §6.1).
struct ArtifactGateConfig {
  std::vector<ArtifactKindConfig> kinds;
  std::vector<std::pair<Edge, std::vector<std::string>>> edges;  // empty lists dropped
  /// The declared kind named `kind`, or nullptr.
  const ArtifactKindConfig* FindKind(const std::string& kind) const;
};

/// Token kinds of the grounding check (SPEC §6).
struct GroundingOptions {
  std::vector<std::string> kinds{"date", "url", "ref", "hash"};
  std::vector<std::string> exclude_keys;  // in addition to the default five
  std::vector<std::string> require;       // RE2 patterns that must occur in the claim
  bool compat = false;                    // release_gate.py's substring matching
  std::string repo;  // "owner/name" whose forge links match by what they name; "" = infer
};
struct GroundingEdgeConfig {
  Edge edge;
  std::string claim;                  // claim kind
  std::vector<std::string> evidence;  // evidence kinds (the card body is always evidence)
  GroundingOptions options;
};
/// `devflow-grounding-gate` config.
struct GroundingGateConfig {
  std::vector<GroundingEdgeConfig> edges;
  std::optional<std::string> ledger;  // default <root>/ledger/grounding.jsonl
};

/// One `plugins:` entry. Exactly one of the typed configs is set, matching `id`.
struct PluginConfig {
  std::string id;    // devflow-agent-gate | devflow-artifact-gate | devflow-grounding-gate
  std::string name;  // optional, informational
  int line = 0;      // 1-based position of the entry, for messages
  std::optional<AgentGateConfig> agent;
  std::optional<ArtifactGateConfig> artifact;
  std::optional<GroundingGateConfig> grounding;
};

/// The whole file.
struct GateConfig {
  std::string file;    // path it was loaded from
  std::string sha256;  // SHA-256 (hex) of the bytes that were parsed
  /// `ledger: best-effort`: a move whose decision-ledger row cannot be written warns and
  /// commits; default (`ledger: required`) refuses it with "ledger-unwritable".
  bool ledger_best_effort = false;
  std::vector<ProviderConfig> providers;  // file order
  std::vector<PluginConfig> plugins;      // the waterfall, in order
  /// The provider named `name`, or nullptr (an undefined provider fails closed at check time).
  const ProviderConfig* FindProvider(const std::string& name) const;
};

/// Loads and validates a config file (read through RealFileSystem()). On failure: Status code
/// "config", message = every problem (not just the first), one per line,
/// `<file>:<line>:<col>: <item path>: <message>`; a YAML syntax error is
/// `<file>:<line>:<col>: <yaml-cpp message>`; an empty file is
/// `<file>:1:1: the file is empty; add a plugins: list`. A missing file is code "ENOENT":
/// `config file <path> does not exist; create it (see docs/configuration.md) or pass --config
/// FILE`; another read error keeps its errno code.
Result<GateConfig> LoadConfigFile(const std::string& path);
/// Same, from text (`file` is only used in messages).
Result<GateConfig> LoadConfigText(const std::string& text, const std::string& file);

/// Non-fatal findings for `config check`, one line each: an agent edge into blocked, one
/// that is never a legal move, or one whose provider is a command (not a builtin) while its
/// `verdictNonce` is off (an echoed verdict block from the artifacts would decide), and, when a
/// devflow-artifact-gate is configured, each agent input kind none of its `kinds:` defines
/// (trial12 k19: a misspelt kind is skipped at check time). (An edge naming
/// a provider no `providers` entry defines is not a load error either, but `config check` reports
/// it as an error: host/deployment/config_check.h.)
std::vector<std::string> ConfigWarnings(const GateConfig& config);

/// Pins each command provider's program when the config loads (issue 7 item 8): `command[0]`
/// without a '/' is looked up on `search_path` (the host's $PATH) now, a relative path with a
/// '/' is resolved against `workspace` (the checker's cwd), and `command[0]` is replaced by the
/// absolute, lexically normal path found, so the checker then runs exactly that path whatever
/// PATH or the workspace's files on the search path become. A program that cannot be found is
/// left as written (its check fails closed at dispatch, naming it).
void ResolveProviderPrograms(GateConfig& config, const std::string& workspace,
                             const std::string& search_path);

/// The program each provider runs, in config order: provider name → absolute path (a builtin's
/// is `self`, the running devflow-gate binary).
std::vector<std::pair<std::string, std::string>> ProviderPrograms(const GateConfig& config,
                                                                  const std::string& self);

/// Trust-boundary findings for `config check` (issue 7 item 8), one line each, naming the path
/// and the fix (texts: docs/security.md). Checked: the config file, each provider's program
/// (`self` for a builtin) and each later command argument that names an existing regular file
/// (an interpreter's script, resolved against `workspace`: reports/verdict_cache.h
/// CommandFiles). Each is in the workspace (which the judged agent can write) when, as
/// written, it lies there, or a symlink met resolving it lies there (`goes through the symlink
/// <link> inside the workspace`: the agent can retarget the link even when both ends lie
/// outside), or what it resolves to lies there; and it is flagged when it, or its directory, is
/// writable by group or others. Also each provider that sets `sandbox: off` (its checker runs
/// unconfined). Warnings only: `config check` still exits 0.
std::vector<std::string> TrustWarnings(const GateConfig& config, const std::string& workspace,
                                       const std::string& self);

}  // namespace devflow

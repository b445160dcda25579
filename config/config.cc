#include "config/config.h"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#include <cstdio>
#include <sstream>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "host/os.h"
#include "host/symlinks.h"
#include "host/terminal.h"
#include "host/utf8.h"
#include "host/yaml_schema.h"
#include "reports/sha256.h"
#include "reports/verdict_cache.h"

namespace devflow {

const AgentEdgeConfig* AgentGateConfig::Find(const Edge& e) const {
  for (const auto& edge : edges) {
    if (edge.edge == e) return &edge;
  }
  return nullptr;
}

const ArtifactKindConfig* ArtifactGateConfig::FindKind(const std::string& kind) const {
  for (const auto& k : kinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

const ProviderConfig* GateConfig::FindProvider(const std::string& name) const {
  for (const auto& p : providers) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

namespace {

constexpr std::string_view kAgentGateId = "devflow-agent-gate";
constexpr std::string_view kArtifactGateId = "devflow-artifact-gate";
constexpr std::string_view kGroundingGateId = "devflow-grounding-gate";
constexpr std::string_view kKnownPluginIds =
    "devflow-agent-gate, devflow-artifact-gate, devflow-grounding-gate";
constexpr std::string_view kKindGrammar =
    "kinds use lowercase letters, digits and dashes and start with a letter or digit";
const std::vector<std::string> kGroundingTokenKinds = {"date", "url",    "ref",      "hash",
                                                       "path", "number", "date-text"};

/// JSON-quotes a string the way upstream messages do (JSON.stringify).
std::string Quote(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Upstream interpolates edge keys between literal quotes (not JSON.stringify).
std::string EdgeItem(const std::string& key) { return "edges[\"" + key + "\"]"; }

std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

bool IsBlank(std::string_view s) { return Trim(s).empty(); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsEnvName(std::string_view s) {
  auto word = [](char c) {
    return IsDigit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  return !s.empty() && !IsDigit(s[0]) && std::all_of(s.begin(), s.end(), word);
}

/// What a scalar means under the YAML 1.2 core schema (what upstream's JS loader sees):
/// quoted and block scalars are strings; plain ones may be null, bool, int or float.
enum class ScalarType { kNull, kBool, kInt, kFloat, kString };

ScalarType Resolve(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return ScalarType::kNull;
  if (n.Tag() != "?") {
    if (n.Tag() == "tag:yaml.org,2002:null") return ScalarType::kNull;
    if (n.Tag() == "tag:yaml.org,2002:bool") return ScalarType::kBool;
    if (n.Tag() == "tag:yaml.org,2002:int") return ScalarType::kInt;
    if (n.Tag() == "tag:yaml.org,2002:float") return ScalarType::kFloat;
    return ScalarType::kString;
  }
  const std::string& s = n.Scalar();
  // The core schema's plain-scalar forms (host/yaml_schema.h).
  if (IsYamlNullWord(s)) return ScalarType::kNull;
  if (IsYamlBoolWord(s)) return ScalarType::kBool;
  if (IsYamlIntWord(s)) return ScalarType::kInt;
  if (IsYamlFloatWord(s)) return ScalarType::kFloat;
  return ScalarType::kString;
}

bool IsString(const YAML::Node& n) { return n.IsScalar() && Resolve(n) == ScalarType::kString; }

/// A non-null scalar's text (argv words and kinds may be written as plain numbers).
bool IsText(const YAML::Node& n) { return n.IsScalar() && Resolve(n) != ScalarType::kNull; }

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string JoinWords(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

/// One key/value of a YAML map, first occurrence only.
struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

/// One problem per line, whatever the file contains: control characters copied from keys,
/// values or parser messages are shown escaped (`\n`, `\x00`), so no key can forge a second
/// problem line (found by tests/fuzz/config_fuzz.cc).
std::string Printable(const std::string& text) { return TerminalLine(text); }

/// Collects every problem of one file as `<file>:<line>:<col>: <item>: <message>` lines.
class Problems {
 public:
  explicit Problems(std::string file) : file_(std::move(file)) {}

  /// `at` is the node the problem is about; a null value's mark is unreliable in yaml-cpp
  /// (it points at the next token), so callers pass the key node for those.
  void Add(const YAML::Node& at, const std::string& item, const std::string& message) {
    AddAt(at.Mark(), item, message);
  }
  void AddAt(const YAML::Mark& mark, const std::string& item, const std::string& message) {
    std::string line = file_;
    if (!mark.is_null()) {
      line += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    line += ": ";
    if (!item.empty()) line += item + ": ";
    line += message;
    lines_.push_back(Printable(line));
  }
  bool empty() const { return lines_.empty(); }
  size_t size() const { return lines_.size(); }
  std::string Joined() const {
    std::string out;
    for (const auto& l : lines_) {
      if (!out.empty()) out += '\n';
      out += l;
    }
    return out;
  }

 private:
  std::string file_;
  std::vector<std::string> lines_;
};

/// The node to report a value problem at: the value itself, or its key when the value is null.
const YAML::Node& At(const Entry& e) {
  return (e.value.IsNull() || e.value.Mark().is_null()) ? e.key_node : e.value;
}

class Loader {
 public:
  explicit Loader(const std::string& file) : problems_(file) {}

  Problems& problems() { return problems_; }

  /// The entries of map `node`, in file order. Reports duplicate keys (yaml-cpp keeps both
  /// silently; we keep the first, as yaml-cpp's lookups do) and, when `allowed` is given,
  /// keys outside it. `where` names the map inside the item (empty for the item itself).
  std::vector<Entry> Entries(const YAML::Node& node, const std::string& item,
                             const std::string& where, const std::vector<std::string>* allowed) {
    // Entries are only ever copy-constructed, never assigned: YAML::Node's assignment writes
    // through to the node it refers to and would rewrite the parsed tree.
    std::vector<Entry> seen;
    std::vector<Entry> out;
    std::string in = where.empty() ? "" : " in " + where;
    for (auto it = node.begin(); it != node.end(); ++it) {
      // Copies: `it->` yields a temporary proxy, so a reference to its members would dangle.
      const YAML::Node k = it->first;
      const YAML::Node value = it->second;
      if (!k.IsScalar()) {
        problems_.Add(k, item, "a key" + in + " is not a plain string; use a scalar key");
        continue;
      }
      const std::string& key = k.Scalar();
      auto prev =
          std::find_if(seen.begin(), seen.end(), [&](const Entry& e) { return e.key == key; });
      if (prev != seen.end()) {
        problems_.Add(k, item,
                      "duplicate key " + Quote(key) + in + " (first at line " +
                          std::to_string(prev->key_node.Mark().line + 1) + "); remove one of them");
        continue;
      }
      seen.push_back({key, k, value});
      if (allowed && std::find(allowed->begin(), allowed->end(), key) == allowed->end()) {
        problems_.Add(k, item, UnknownKey(key, in, *allowed));
        continue;
      }
      out.push_back({key, k, value});
    }
    return out;
  }

  static std::string UnknownKey(const std::string& key, const std::string& in,
                                const std::vector<std::string>& allowed) {
    std::string msg = "unknown key " + Quote(key) + in;
    if (key == "<<") {
      msg += " (YAML merge keys are not supported)";
    } else {
      std::string best;
      size_t best_d = 3;
      for (const auto& a : allowed) {
        size_t d = EditDistance(key, a);
        if (d < best_d) best_d = d, best = a;
      }
      if (!best.empty()) msg += " (did you mean " + Quote(best) + "?)";
    }
    return msg + "; allowed here: " + JoinWords(allowed);
  }

  static const Entry* FindEntry(const std::vector<Entry>& entries, std::string_view key) {
    for (const auto& e : entries) {
      if (e.key == key) return &e;
    }
    return nullptr;
  }

  // ---- top level ---------------------------------------------------------------------------

  void Top(const YAML::Node& root, GateConfig& config) {
    if (root.IsSequence()) {  // the original README's bare list form
      Plugins(root, config);
      return;
    }
    if (!root.IsMap()) {
      problems_.Add(root, "",
                    "the top level must be a map with providers: and plugins: (or a bare list of "
                    "plugin entries)");
      return;
    }
    static const std::vector<std::string> kTop = {"providers", "plugins", "ledger"};
    auto entries = Entries(root, "top level", "", &kTop);
    for (const auto& e : entries) {
      if (e.key == "providers") Providers(e, config);
      if (e.key == "ledger") {
        // `required` (the default): no commit without its decision-ledger row; `best-effort`
        // warns and commits when the row cannot be written (issue 7 item 10).
        const YAML::Node& v = e.value;
        if (v.IsScalar() && (v.Scalar() == "required" || v.Scalar() == "best-effort")) {
          config.ledger_best_effort = v.Scalar() == "best-effort";
        } else {
          problems_.Add(At(e), "ledger",
                        "ledger must be required (no commit without its decision-ledger row, the "
                        "default) or best-effort (warn and commit when the row cannot be "
                        "written)" +
                            Got(v));
        }
      }
      if (e.key == "plugins") {
        if (!e.value.IsSequence()) {
          problems_.Add(At(e), "plugins",
                        "must be a list of plugin entries ({id, name?, config?}), in waterfall "
                        "order");
        } else {
          Plugins(e.value, config);
        }
      }
    }
    if (!FindEntry(entries, "plugins")) {
      problems_.Add(root, "top level",
                    "missing plugins: list; add plugins: with the gates to run, in order");
    }
  }

  // ---- providers ---------------------------------------------------------------------------

  void Providers(const Entry& e, GateConfig& config) {
    if (e.value.IsNull()) return;
    if (!e.value.IsMap()) {
      problems_.Add(At(e), "providers",
                    "must be a map of provider name to {builtin: grounding} or {command: [...]}");
      return;
    }
    for (const auto& p : Entries(e.value, "providers", "", nullptr)) {
      if (auto provider = Provider(p)) config.providers.push_back(std::move(*provider));
    }
  }

  std::optional<ProviderConfig> Provider(const Entry& p) {
    static const std::vector<std::string> kKeys = {"builtin", "command", "args", "env",
                                                   "network", "sandbox", "read", "reply"};
    std::string item = "providers." + p.key;
    ProviderConfig out;
    out.name = p.key;
    size_t before = problems_.size();
    if (IsBlank(p.key)) problems_.Add(p.key_node, item, "a provider name must not be blank");
    if (!p.value.IsMap()) {
      problems_.Add(At(p), item,
                    "must be a map with builtin: grounding or command: [program, args...]");
      return std::nullopt;
    }
    auto entries = Entries(p.value, item, "", &kKeys);
    const Entry* builtin = FindEntry(entries, "builtin");
    const Entry* command = FindEntry(entries, "command");
    const Entry* args = FindEntry(entries, "args");
    if (builtin && command) {
      problems_.Add(command->key_node, item, "set either builtin or command, not both");
    } else if (!builtin && !command) {
      problems_.Add(p.key_node, item,
                    "needs builtin: grounding or command: [program, args...] (the checker to run)");
    }
    if (builtin) {
      if (!IsString(builtin->value) || builtin->value.Scalar() != "grounding") {
        std::string got = builtin->value.IsScalar() ? Quote(builtin->value.Scalar()) : "a list/map";
        problems_.Add(At(*builtin), item,
                      "builtin " + got + " is not a built-in checker; known: grounding");
      } else {
        out.builtin = builtin->value.Scalar();
      }
    }
    if (command) {
      const YAML::Node& v = command->value;
      if (!v.IsSequence() || v.size() == 0) {
        problems_.Add(At(*command), item,
                      "command must be a non-empty list of program and arguments, e.g. [claude, "
                      "-p]");
      } else {
        for (size_t i = 0; i < v.size(); ++i) {
          if (!IsText(v[i]) || v[i].Scalar().empty()) {
            problems_.Add(v[i].IsNull() ? command->key_node : v[i], item,
                          "command[" + std::to_string(i) + "] must be a non-empty string");
          } else {
            out.command.push_back(v[i].Scalar());
          }
        }
      }
    }
    if (args) {
      if (!builtin) {
        problems_.Add(args->key_node, item,
                      "args is only allowed with builtin; put a command's arguments in command");
      }
      if (!args->value.IsSequence()) {
        problems_.Add(At(*args), item, "args must be a list of strings");
      } else {
        for (size_t i = 0; i < args->value.size(); ++i) {
          const YAML::Node& a = args->value[i];
          if (!IsText(a)) {
            problems_.Add(a.IsNull() ? args->key_node : a, item,
                          "args[" + std::to_string(i) + "] must be a string");
          } else {
            out.args.push_back(a.Scalar());
          }
        }
      }
    }
    if (const Entry* env = FindEntry(entries, "env")) {
      if (!env->value.IsSequence()) {
        problems_.Add(At(*env), item, "env must be a list of environment variable names");
      } else {
        for (size_t i = 0; i < env->value.size(); ++i) {
          const YAML::Node& n = env->value[i];
          if (!n.IsScalar() || !IsEnvName(n.Scalar())) {
            std::string got = n.IsScalar() ? Quote(n.Scalar()) : "a list/map";
            problems_.Add(n.IsNull() ? env->key_node : n, item,
                          "env[" + std::to_string(i) + "] " + got +
                              " is not an environment variable name (letters, digits and _, "
                              "not starting with a digit)");
          } else {
            out.env.push_back(n.Scalar());
          }
        }
      }
    }
    if (const Entry* network = FindEntry(entries, "network")) {
      if (auto b = StrictBool(network->value)) {
        out.network = *b;
      } else {
        problems_.Add(At(*network), item, "network must be true or false" + Got(network->value));
      }
    }
    if (const Entry* sandbox = FindEntry(entries, "sandbox")) {
      // `off` is an explicit, reported opt-out of confinement; `on` is the default.
      const YAML::Node& v = sandbox->value;
      if (v.IsScalar() && (v.Scalar() == "off" || v.Scalar() == "on")) {
        out.sandbox_off = v.Scalar() == "off";
      } else {
        problems_.Add(At(*sandbox), item,
                      "sandbox must be on or off (off runs the checker unconfined and names it in "
                      "every report)" +
                          Got(v));
      }
    }
    if (const Entry* reply = FindEntry(entries, "reply")) {
      // `block-only` closes every shape of prose by construction; `text` is the default rule.
      const YAML::Node& v = reply->value;
      if (v.IsScalar() && (v.Scalar() == "block-only" || v.Scalar() == "text")) {
        out.reply_block_only = v.Scalar() == "block-only";
      } else {
        problems_.Add(At(*reply), item,
                      "reply must be text (prose may precede the verdict block; the default) or "
                      "block-only (the reply is the verdict block and nothing else)" +
                          Got(v));
      }
    }
    if (const Entry* read = FindEntry(entries, "read")) ReadPaths(*read, item, out);
    if (problems_.size() != before) return std::nullopt;
    return out;
  }

  // `read:` (issue 7): what a confined checker may read beyond its readable set. Each entry an
  // absolute path that exists now: a typo would otherwise leave the checker without a file it
  // needs, found only when a check fails.
  void ReadPaths(const Entry& read, const std::string& item, ProviderConfig& out) {
    if (!read.value.IsSequence()) {
      problems_.Add(At(read), item, "read must be a list of absolute paths the checker may read");
      return;
    }
    for (size_t i = 0; i < read.value.size(); ++i) {
      const YAML::Node& n = read.value[i];
      const std::string at = "read[" + std::to_string(i) + "] ";
      if (!IsText(n) || n.Scalar().empty() || n.Scalar()[0] != '/') {
        std::string got = n.IsScalar() ? Quote(n.Scalar()) : "a list/map";
        problems_.Add(n.IsNull() ? read.key_node : n, item,
                      at + got + " is not an absolute path; write the file or directory as /...");
        continue;
      }
      struct stat st {};
      if (::stat(n.Scalar().c_str(), &st) != 0) {
        const int err = errno;
        problems_.Add(n, item,
                      at + Quote(n.Scalar()) +
                          " cannot be read: " + std::system_category().message(err) + " (" +
                          ErrnoName(err) + "); create it or remove it from read");
        continue;
      }
      // trial13: `read: [/proc/<host pid>/environ]` (or a disk under /dev) loaded silently. The
      // sandbox builds /proc and /dev itself (bubblewrap mounts its own over anything bound
      // there; at the Landlock level a rule there would open a raw disk to a root checker), so
      // read: names files of the file system only.
      const std::string real = RealPathOr(n.Scalar());
      if (const char* pseudo = PseudoTree(n.Scalar()) ? PseudoTree(n.Scalar()) : PseudoTree(real)) {
        problems_.Add(n, item,
                      at + Quote(n.Scalar()) + " lies in " + pseudo +
                          ", which the sandbox sets up itself (a private /proc and /dev under "
                          "bubblewrap; at the Landlock level /proc read-only and a few devices): "
                          "read names files of the file system, not kernel or device files; "
                          "remove it from read");
        continue;
      }
      out.read.push_back(n.Scalar());
    }
  }

  static std::string RealPathOr(const std::string& path) {
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real) return path;
    std::string out(real);
    std::free(real);
    return out;
  }

  // "/proc", "/sys" or "/dev" when `path` is that tree or lies beneath it, else nullptr.
  static const char* PseudoTree(const std::string& path) {
    for (const char* tree : {"/proc", "/sys", "/dev"}) {
      const std::string_view t(tree);
      if (path.compare(0, t.size(), t) == 0 && (path.size() == t.size() || path[t.size()] == '/')) {
        return tree;
      }
    }
    return nullptr;
  }

  /// Only the literal plain scalars `true` / `false` (not yes/on/True, cpp-notes §2).
  static std::optional<bool> StrictBool(const YAML::Node& n) {
    if (!n.IsScalar() || n.Tag() != "?") return std::nullopt;
    if (n.Scalar() == "true") return true;
    if (n.Scalar() == "false") return false;
    return std::nullopt;
  }

  static std::string Got(const YAML::Node& n) {
    if (n.IsScalar()) return " (got " + Quote(n.Scalar()) + ")";
    if (n.IsNull()) return " (got null)";
    return n.IsSequence() ? " (got a list)" : " (got a map)";
  }

  // ---- plugins -----------------------------------------------------------------------------

  void Plugins(const YAML::Node& list, GateConfig& config) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (auto plugin = Plugin(list[i], i)) config.plugins.push_back(std::move(*plugin));
    }
  }

  std::optional<PluginConfig> Plugin(const YAML::Node& node, size_t index) {
    static const std::vector<std::string> kKeys = {"id", "name", "config"};
    std::string item = "plugins[" + std::to_string(index) + "]";
    if (!node.IsMap()) {
      problems_.Add(
          node, item,
          "must be a map {id, name?, config?}; id is one of " + std::string(kKnownPluginIds));
      return std::nullopt;
    }
    // The id names the item in every later message, so read it before walking the keys.
    std::string id;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == "id") {
        if (IsString(it->second)) id = it->second.Scalar();
        break;
      }
    }
    if (!id.empty()) item += "(" + id + ")";
    PluginConfig out;
    out.id = id;
    out.line = node.Mark().line + 1;
    size_t before = problems_.size();
    auto entries = Entries(node, item, "", &kKeys);
    const Entry* id_entry = FindEntry(entries, "id");
    if (!id_entry) {
      problems_.Add(node, item, "missing id; use one of " + std::string(kKnownPluginIds));
      return std::nullopt;
    }
    if (id != kAgentGateId && id != kArtifactGateId && id != kGroundingGateId) {
      std::string got = id_entry->value.IsScalar() ? Quote(id_entry->value.Scalar()) : "";
      problems_.Add(At(*id_entry), item,
                    "unknown plugin id " + got + "; known ids: " + std::string(kKnownPluginIds));
      return std::nullopt;
    }
    if (const Entry* name = FindEntry(entries, "name")) {
      if (!IsString(name->value)) {
        problems_.Add(At(*name), item, "name must be a string" + Got(name->value));
      } else {
        out.name = name->value.Scalar();
      }
    }
    const Entry* cfg = FindEntry(entries, "config");
    YAML::Node cfg_node = cfg ? cfg->value : YAML::Node();
    if (cfg && !cfg_node.IsNull() && !cfg_node.IsMap()) {
      problems_.Add(At(*cfg), item, "config must be a map" + Got(cfg_node));
      return std::nullopt;
    }
    if (id == kAgentGateId) out.agent = Agent(cfg_node, item);
    if (id == kArtifactGateId) out.artifact = Artifact(cfg_node, item);
    if (id == kGroundingGateId) out.grounding = Grounding(cfg_node, item);
    if (problems_.size() != before) return std::nullopt;
    return out;
  }

  /// Entries of a config map; a missing or null config is an empty one.
  std::vector<Entry> ConfigEntries(const YAML::Node& cfg, const std::string& item,
                                   const std::vector<std::string>& keys) {
    if (!cfg.IsDefined() || cfg.IsNull()) return {};
    return Entries(cfg, item, "config", &keys);
  }

  /// The entries of a gate config's edges map (duplicate keys reported).
  std::vector<Entry> EdgeEntries(const Entry* edges, const std::string& item,
                                 const std::string& shape) {
    if (!edges || edges->value.IsNull()) return {};
    if (!edges->value.IsMap()) {
      problems_.Add(At(*edges), item, "edges must be a map of \"<from>-><to>\" to " + shape);
      return {};
    }
    return Entries(edges->value, item, "edges", nullptr);
  }

  /// Parses an edge key; reports a key that is not `<from>-><to>` with the upstream message.
  std::optional<Edge> EdgeKey(const Entry& e, const std::string& item) {
    auto edge = ParseEdge(e.key);
    if (!edge) {
      problems_.Add(e.key_node, item,
                    "edges names invalid edge \"" + e.key + "\"" +
                        "; use \"<from>-><to>\" with stage names or \"blocked\"");
    }
    return edge;
  }

  /// A non-blank string value, or a problem `<what> <message>` at the value (or key when null).
  std::optional<std::string> NonBlank(const Entry* e, const YAML::Node& missing_at,
                                      const std::string& item, const std::string& message) {
    if (!e) {
      problems_.Add(missing_at, item, message);
      return std::nullopt;
    }
    if (!IsString(e->value) || IsBlank(e->value.Scalar())) {
      problems_.Add(At(*e), item, message);
      return std::nullopt;
    }
    return e->value.Scalar();
  }

  // ---- devflow-agent-gate (reference §4.2, validated in the upstream order) ----------------

  AgentGateConfig Agent(const YAML::Node& cfg, const std::string& item) {
    static const std::vector<std::string> kKeys = {"edges", "reportDir", "verdictCacheDir",
                                                   "checkTimeoutMs", "maxReplyBytes"};
    AgentGateConfig out;
    auto entries = ConfigEntries(cfg, item, kKeys);
    // Upstream order: each edge's key, provider, prompt, inputs, edge after edge; an invalid
    // key does not stop its fields from being checked, so one load reports everything.
    for (const auto& e :
         EdgeEntries(FindEntry(entries, "edges"), item, "{provider, inputs?, prompt}")) {
      auto edge = EdgeKey(e, item);
      auto parsed = AgentEdge(e, item);
      if (edge && parsed) {
        parsed->edge = *edge;
        out.edges.push_back(std::move(*parsed));
      }
    }
    if (const Entry* dir = FindEntry(entries, "reportDir")) {
      out.report_dir =
          NonBlank(dir, dir->key_node, item, "reportDir must be a non-empty path when set");
    }
    if (const Entry* dir = FindEntry(entries, "verdictCacheDir")) {
      out.verdict_cache_dir =
          NonBlank(dir, dir->key_node, item, "verdictCacheDir must be a non-empty path when set");
    }
    if (const Entry* t = FindEntry(entries, "checkTimeoutMs")) {
      if (auto v = PositiveInteger(*t, item, "checkTimeoutMs", 7LL * 24 * 3600 * 1000, "7 days"))
        out.check_timeout_ms = *v;
    }
    if (const Entry* m = FindEntry(entries, "maxReplyBytes")) {
      if (auto v = PositiveInteger(*m, item, "maxReplyBytes", 1LL << 30, "1 GiB"))
        out.max_reply_bytes = *v;
    }
    return out;
  }

  /// provider, prompt, inputs of one agent edge (upstream steps 1b–1d). The edge itself is
  /// filled in by the caller.
  std::optional<AgentEdgeConfig> AgentEdge(const Entry& e, const std::string& item) {
    static const std::vector<std::string> kKeys = {"provider", "inputs", "prompt", "verdictNonce"};
    std::string where = EdgeItem(e.key);
    size_t before = problems_.size();
    if (!e.value.IsMap()) {
      problems_.Add(At(e), item,
                    where + " must be a map with provider, prompt and optional inputs");
      return std::nullopt;
    }
    auto entries = Entries(e.value, item, where, &kKeys);
    AgentEdgeConfig out{};
    auto provider = NonBlank(FindEntry(entries, "provider"), e.key_node, item,
                             where + ".provider must be a non-empty subagent provider name");
    auto prompt = NonBlank(FindEntry(entries, "prompt"), e.key_node, item,
                           where + ".prompt must be a non-empty check instruction");
    if (provider) out.provider = *provider;
    if (prompt) out.prompt = *prompt;
    if (const Entry* inputs = FindEntry(entries, "inputs")) {
      out.inputs = Kinds(*inputs, item, where + ".inputs");
    }
    if (const Entry* nonce = FindEntry(entries, "verdictNonce")) {
      if (auto v = StrictBool(nonce->value)) {
        out.verdict_nonce = *v;
      } else {
        problems_.Add(At(*nonce), item,
                      where + ".verdictNonce must be true or false" + Got(nonce->value));
      }
    }
    if (problems_.size() != before) return std::nullopt;
    return out;
  }

  /// A list of kinds, de-duplicated keeping the first occurrence; each must match the kind
  /// grammar (`<what> names invalid kind "<kind>"; kinds use …`). Null is an empty list.
  std::vector<std::string> Kinds(const Entry& e, const std::string& item, const std::string& what) {
    std::vector<std::string> out;
    if (e.value.IsNull()) return out;
    if (!e.value.IsSequence()) {
      problems_.Add(At(e), item, what + " must be a list of kinds" + Got(e.value));
      return out;
    }
    for (size_t i = 0; i < e.value.size(); ++i) {
      const YAML::Node& n = e.value[i];
      if (!IsText(n)) {
        problems_.Add(n.IsNull() ? e.key_node : n, item,
                      what + "[" + std::to_string(i) + "] must be a kind name" + Got(n));
        continue;
      }
      const std::string& kind = n.Scalar();
      if (!IsValidKind(kind)) {
        problems_.Add(
            n, item,
            what + " names invalid kind " + Quote(kind) + "; " + std::string(kKindGrammar));
        continue;
      }
      if (std::find(out.begin(), out.end(), kind) == out.end()) out.push_back(kind);
    }
    return out;
  }

  /// Plain decimal digits only, >= 1: no quotes, sign, fraction, exponent, or leading zero
  /// (yaml-cpp reads `010` as octal 8, upstream's YAML 1.2 loader as 10).
  std::optional<int64_t> PositiveInteger(const Entry& e, const std::string& item,
                                         const std::string& name, int64_t max,
                                         const std::string& max_words) {
    std::string message = name + " must be a positive integer";
    const YAML::Node& v = e.value;
    if (!v.IsScalar() || v.Tag() != "?") {
      problems_.Add(At(e), item, message);
      return std::nullopt;
    }
    const std::string& s = v.Scalar();
    bool digits =
        !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      problems_.Add(v, item, message);
      return std::nullopt;
    }
    if (s.size() > 1 && s[0] == '0') {
      problems_.Add(v, item,
                    message + "; " + Quote(s) +
                        " has a leading zero, which YAML 1.1 reads as octal: write plain decimal "
                        "digits");
      return std::nullopt;
    }
    if (s.size() > 18) {  // beyond int64 (and any sensible timeout or size)
      problems_.Add(v, item, message + " below 10^18");
      return std::nullopt;
    }
    int64_t value = std::stoll(s);
    if (value < 1) {
      problems_.Add(v, item, message);
      return std::nullopt;
    }
    if (value > max) {
      problems_.Add(v, item,
                    name + " must be at most " + std::to_string(max) + " (" + max_words + ")");
      return std::nullopt;
    }
    return value;
  }

  // ---- devflow-artifact-gate (reference §6.1) ----------------------------------------------

  ArtifactGateConfig Artifact(const YAML::Node& cfg, const std::string& item) {
    static const std::vector<std::string> kKeys = {"kinds", "edges"};
    ArtifactGateConfig out;
    auto entries = ConfigEntries(cfg, item, kKeys);
    std::set<std::string> declared;
    if (const Entry* kinds = FindEntry(entries, "kinds"); kinds && !kinds->value.IsNull()) {
      if (!kinds->value.IsMap()) {
        problems_.Add(At(*kinds), item,
                      "kinds must be a map of kind to {frontmatter, sections, nonEmptySections}");
      } else {
        for (const auto& k : Entries(kinds->value, item, "kinds", nullptr)) {
          declared.insert(k.key);
          if (auto kind = ArtifactKind(k, item)) out.kinds.push_back(std::move(*kind));
        }
      }
    }
    for (const auto& e : EdgeEntries(FindEntry(entries, "edges"), item, "a list of kinds")) {
      auto edge = EdgeKey(e, item);
      std::string where = EdgeItem(e.key);
      if (e.value.IsNull()) continue;  // no kinds: ungated
      if (!e.value.IsSequence()) {
        problems_.Add(At(e), item, where + " must be a list of kinds" + Got(e.value));
        continue;
      }
      std::vector<std::string> kinds;
      for (size_t i = 0; i < e.value.size(); ++i) {
        const YAML::Node& n = e.value[i];
        if (!IsText(n)) {
          problems_.Add(n.IsNull() ? e.key_node : n, item,
                        where + "[" + std::to_string(i) + "] must be a kind name" + Got(n));
          continue;
        }
        if (!declared.count(n.Scalar())) {
          problems_.Add(n, item, where + " requires undeclared kind " + Quote(n.Scalar()));
          continue;
        }
        if (std::find(kinds.begin(), kinds.end(), n.Scalar()) == kinds.end()) {
          kinds.push_back(n.Scalar());
        }
      }
      if (edge && !kinds.empty()) out.edges.emplace_back(*edge, std::move(kinds));
    }
    return out;
  }

  std::optional<ArtifactKindConfig> ArtifactKind(const Entry& k, const std::string& item) {
    static const std::vector<std::string> kKeys = {"frontmatter", "sections", "nonEmptySections"};
    std::string where = "kinds[" + Quote(k.key) + "]";
    size_t before = problems_.size();
    ArtifactKindConfig out;
    out.kind = k.key;
    if (!IsValidKind(k.key)) {
      problems_.Add(k.key_node, item,
                    "kinds names invalid kind " + Quote(k.key) + "; " + std::string(kKindGrammar));
    }
    if (!k.value.IsNull() && !k.value.IsMap()) {
      problems_.Add(At(k), item,
                    where + " must be a map with frontmatter, sections and/or nonEmptySections");
      return std::nullopt;
    }
    if (k.value.IsMap()) {
      for (const auto& e : Entries(k.value, item, where, &kKeys)) {
        std::vector<ArtifactItem>* list = e.key == "frontmatter" ? &out.frontmatter
                                          : e.key == "sections"  ? &out.sections
                                                                 : &out.non_empty_sections;
        *list = ArtifactItems(e, item, where + "." + e.key);
      }
    }
    if (problems_.size() != before) return std::nullopt;
    return out;
  }

  std::vector<ArtifactItem> ArtifactItems(const Entry& e, const std::string& item,
                                          const std::string& what) {
    static const std::vector<std::string> kKeys = {"title", "description"};
    std::vector<ArtifactItem> out;
    if (e.value.IsNull()) return out;
    if (!e.value.IsSequence()) {
      problems_.Add(At(e), item,
                    what + " must be a list of names or {title, description}" + Got(e.value));
      return out;
    }
    for (size_t i = 0; i < e.value.size(); ++i) {
      const YAML::Node& n = e.value[i];
      std::string at = what + "[" + std::to_string(i) + "]";
      if (n.IsMap()) {
        auto fields = Entries(n, item, at, &kKeys);
        auto title =
            NonBlank(FindEntry(fields, "title"), n, item, at + ".title must be a non-empty string");
        auto description = NonBlank(FindEntry(fields, "description"), n, item,
                                    at + ".description must be a non-empty string");
        if (title && description) out.push_back({*title, *description});
      } else if (IsString(n) && !IsBlank(n.Scalar())) {
        out.push_back({n.Scalar(), std::nullopt});
      } else {
        problems_.Add(n.IsNull() ? e.key_node : n, item,
                      at + " must be a non-empty string or {title, description}");
      }
    }
    return out;
  }

  // ---- devflow-grounding-gate (SPEC §6) ----------------------------------------------------

  GroundingGateConfig Grounding(const YAML::Node& cfg, const std::string& item) {
    static const std::vector<std::string> kKeys = {"edges", "ledger"};
    GroundingGateConfig out;
    auto entries = ConfigEntries(cfg, item, kKeys);
    for (const auto& e : EdgeEntries(FindEntry(entries, "edges"), item,
                                     "{claim, evidence?, kinds?, excludeKeys?, require?, "
                                     "compat?, repo?}")) {
      auto edge = EdgeKey(e, item);
      auto parsed = GroundingEdge(e, item);
      if (edge && parsed) {
        parsed->edge = *edge;
        out.edges.push_back(std::move(*parsed));
      }
    }
    if (const Entry* ledger = FindEntry(entries, "ledger")) {
      out.ledger =
          NonBlank(ledger, ledger->key_node, item, "ledger must be a non-empty path when set");
    }
    return out;
  }

  std::optional<GroundingEdgeConfig> GroundingEdge(const Entry& e, const std::string& item) {
    static const std::vector<std::string> kKeys = {"claim",   "evidence", "kinds", "excludeKeys",
                                                   "require", "compat",   "repo"};
    std::string where = EdgeItem(e.key);
    size_t before = problems_.size();
    if (!e.value.IsMap()) {
      problems_.Add(At(e), item,
                    where +
                        " must be a map with claim and optional evidence, kinds, "
                        "excludeKeys, require, compat, repo");
      return std::nullopt;
    }
    auto entries = Entries(e.value, item, where, &kKeys);
    GroundingEdgeConfig out{};
    std::string claim_msg =
        where + ".claim must name the artifact kind whose specifics are checked";
    if (auto claim = NonBlank(FindEntry(entries, "claim"), e.key_node, item, claim_msg)) {
      if (!IsValidKind(*claim)) {
        problems_.Add(FindEntry(entries, "claim")->value, item,
                      where + ".claim names invalid kind " + Quote(*claim) + "; " +
                          std::string(kKindGrammar));
      }
      out.claim = *claim;
    }
    if (const Entry* evidence = FindEntry(entries, "evidence")) {
      out.evidence = Kinds(*evidence, item, where + ".evidence");
    }
    if (const Entry* kinds = FindEntry(entries, "kinds")) {
      out.options.kinds = TokenKinds(*kinds, item, where + ".kinds");
    }
    if (const Entry* keys = FindEntry(entries, "excludeKeys")) {
      out.options.exclude_keys = Strings(*keys, item, where + ".excludeKeys");
    }
    if (const Entry* require = FindEntry(entries, "require")) {
      out.options.require = Strings(*require, item, where + ".require");
    }
    if (const Entry* compat = FindEntry(entries, "compat")) {
      if (auto b = StrictBool(compat->value)) {
        out.options.compat = *b;
      } else {
        problems_.Add(At(*compat), item,
                      where + ".compat must be true or false" + Got(compat->value));
      }
    }
    if (const Entry* repo = FindEntry(entries, "repo")) {
      const std::string msg = where + ".repo must be owner/name, as in github.com/owner/name";
      if (auto name = NonBlank(repo, repo->key_node, item, msg)) {
        const size_t slash = name->find('/');
        const bool ok = slash != std::string::npos && slash > 0 && slash + 1 < name->size() &&
                        name->find('/', slash + 1) == std::string::npos &&
                        name->find_first_of(" \t") == std::string::npos;
        if (ok) {
          out.options.repo = *name;
        } else {
          problems_.Add(repo->value, item, msg + Got(repo->value));
        }
      }
    }
    if (problems_.size() != before) return std::nullopt;
    return out;
  }

  std::vector<std::string> TokenKinds(const Entry& e, const std::string& item,
                                      const std::string& what) {
    std::vector<std::string> out;
    std::string known = JoinWords(kGroundingTokenKinds);
    if (!e.value.IsSequence() || e.value.size() == 0) {
      problems_.Add(At(e), item, what + " must be a non-empty list of token kinds: " + known);
      return out;
    }
    for (size_t i = 0; i < e.value.size(); ++i) {
      const YAML::Node& n = e.value[i];
      std::string name = IsText(n) ? n.Scalar() : "";
      if (std::find(kGroundingTokenKinds.begin(), kGroundingTokenKinds.end(), name) ==
          kGroundingTokenKinds.end()) {
        problems_.Add(n.IsNull() ? e.key_node : n, item,
                      what + " names unknown token kind " + (IsText(n) ? Quote(name) : "null") +
                          "; known: " + known);
        continue;
      }
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
    return out;
  }

  /// A list of non-blank strings.
  std::vector<std::string> Strings(const Entry& e, const std::string& item,
                                   const std::string& what) {
    std::vector<std::string> out;
    if (e.value.IsNull()) return out;
    if (!e.value.IsSequence()) {
      problems_.Add(At(e), item, what + " must be a list of strings" + Got(e.value));
      return out;
    }
    for (size_t i = 0; i < e.value.size(); ++i) {
      const YAML::Node& n = e.value[i];
      if (!IsText(n) || IsBlank(n.Scalar())) {
        problems_.Add(n.IsNull() ? e.key_node : n, item,
                      what + "[" + std::to_string(i) + "] must be a non-empty string");
        continue;
      }
      out.push_back(n.Scalar());
    }
    return out;
  }

 private:
  Problems problems_;
};

}  // namespace

// Sees whether a YAML document has any content, and where it starts. Used instead of
// YAML::LoadAll, which loops without end on some inputs (a lone "," grows memory until
// bad_alloc in yaml-cpp 0.7; found by tests/fuzz/config_fuzz.cc): we only ever need to know
// whether a second document exists, so at most two documents are parsed.
class DocumentProbe : public YAML::EventHandler {
 public:
  bool content = false;
  YAML::Mark start = YAML::Mark::null_mark();
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { content = true; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    content = true;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnMapEnd() override {}
};

// Whether a line of the text starts with a document marker (`---` or `...`). A stream holds
// a second document only after one (YAML 1.2 §9.2), so without one the second parse is
// skipped (it cost as much as the config's own parse, issue 11 item 1).
bool HasDocumentMarker(const std::string& text) {
  for (size_t at = 0; at < text.size();) {
    if (text.compare(at, 3, "---") == 0 || text.compare(at, 3, "...") == 0) return true;
    at = text.find_first_of("\n\r", at);
    if (at == std::string::npos) break;
    ++at;
  }
  return false;
}

// The mark of a second document with content, if the text has one.
std::optional<YAML::Mark> SecondDocument(const std::string& text) {
  if (!HasDocumentMarker(text)) return std::nullopt;
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentProbe first, second;
  if (!parser.HandleNextDocument(first)) return std::nullopt;
  if (!parser.HandleNextDocument(second) || !second.content) return std::nullopt;
  return second.start;
}

// The first byte that is not UTF-8, as `<file>:L:C: …` (YAML 1.2 streams are Unicode; a
// Latin-1 byte would otherwise reach prompts and the ledger as U+FFFD), or "".
std::string NotUtf8(const std::string& text, const std::string& file) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < text.size();) {
    Utf8Step step = DecodeUtf8At(text, i);
    if (!step.valid) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[i]));
      return file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": byte " + byte +
             " is not UTF-8; the config file must be UTF-8 text (re-save it as UTF-8)";
    }
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += step.length;
  }
  return "";
}

// Each line whose indentation holds a tab, as `<file>:L:C: …` at the first tab. Only asked
// when the parser failed: a tab after the indentation of a block scalar line is content.
std::vector<std::string> TabIndents(const std::string& text, const std::string& file) {
  std::vector<std::string> out;
  size_t line = 1;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view l(text.data() + start, end - start);
    const size_t content = l.find_first_not_of(" \t");
    const size_t tab = l.find('\t');
    if (content != std::string_view::npos && tab < content && l[content] != '#' &&
        l[content] != '\r') {
      out.push_back(file + ":" + std::to_string(line) + ":" + std::to_string(tab + 1) +
                    ": tabs are not allowed in YAML indentation; indent with spaces");
    }
    ++line;
    start = end + 1;
  }
  return out;
}

Result<GateConfig> LoadConfigText(const std::string& text, const std::string& file) {
  if (std::string bad = NotUtf8(text, file); !bad.empty()) {
    return Status::Error("config", Printable(bad));
  }
  Loader loader(file);
  GateConfig config;
  config.file = file;
  config.sha256 = Sha256Hex(text);
  try {
    YAML::Node top;
    std::optional<YAML::Mark> second;
    try {
      top = YAML::Load(text);
      second = SecondDocument(text);
    } catch (const YAML::ParserException& e) {
      Problems syntax(file);
      syntax.AddAt(e.mark, "", e.msg);
      std::string joined;
      for (const std::string& tab : TabIndents(text, file)) joined += Printable(tab) + "\n";
      return Status::Error("config", joined + syntax.Joined());
    }
    if (!top.IsDefined() || (top.IsNull() && !second)) {
      return Status::Error("config", file + ":1:1: the file is empty; add a plugins: list");
    }
    loader.Top(top, config);
    if (second) {
      loader.problems().AddAt(*second, "",
                              "a second YAML document starts here; the config file holds exactly "
                              "one document (remove the extra ---)");
    }
  } catch (const std::exception& e) {
    // yaml-cpp conversion or iteration errors we did not foresee: still a config error.
    loader.problems().AddAt(YAML::Mark::null_mark(), "", e.what());
  }
  if (!loader.problems().empty()) return Status::Error("config", loader.problems().Joined());
  return config;
}

Result<GateConfig> LoadConfigFile(const std::string& path) {
  auto text = RealFileSystem().ReadFile(path);
  if (!text.ok()) {
    if (text.status().code() == "ENOENT") {
      return Status::Error("ENOENT", "config file " + path +
                                         " does not exist; create it (see "
                                         "docs/configuration.md) or pass --config FILE");
    }
    return Status::Error(text.status().code(),
                         "config file " + path + " cannot be read: " + text.status().message());
  }
  return LoadConfigText(*text, path);
}

std::vector<std::string> ConfigWarnings(const GateConfig& config) {
  std::vector<std::string> out;
  // trial12 k19: the kinds the artifact gate defines, when one is configured (without one,
  // any kind name may be registered, so there is nothing to hold an input to).
  bool artifact_gate = false;
  std::vector<std::string> kinds;
  for (const PluginConfig& plugin : config.plugins) {
    if (!plugin.artifact) continue;
    artifact_gate = true;
    for (const ArtifactKindConfig& k : plugin.artifact->kinds) {
      if (std::find(kinds.begin(), kinds.end(), k.kind) == kinds.end()) kinds.push_back(k.kind);
    }
  }
  for (size_t i = 0; i < config.plugins.size(); ++i) {
    const PluginConfig& plugin = config.plugins[i];
    if (!plugin.agent) continue;
    for (const auto& edge : plugin.agent->edges) {
      const std::string where = "plugins[" + std::to_string(i) + "](" + plugin.id + "): edges[\"" +
                                edge.edge.Name() + "\"]";
      if (edge.edge.to == Location::kBlocked) {
        out.push_back(where +
                      " gates moves into blocked, so it also gates the gate's own parking: a "
                      "fault there cannot park the card");
      }
      bool can_fire = false;
      for (int c = 0; c <= static_cast<int>(ServiceClass::kEmergency); ++c) {
        for (int b = 0; b <= static_cast<int>(Location::kDone); ++b) {
          can_fire =
              can_fire || IsLegalTransition(edge.edge.from, edge.edge.to, static_cast<Location>(b),
                                            static_cast<ServiceClass>(c));
        }
      }
      if (!can_fire) out.push_back(where + " is never a legal move, so this check never runs");
      for (size_t k = 0; artifact_gate && k < edge.inputs.size(); ++k) {
        const std::string& kind = edge.inputs[k];
        if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) continue;
        std::string best;
        size_t best_d = 3;
        for (const std::string& known : kinds) {
          if (size_t d = EditDistance(kind, known); d < best_d) best_d = d, best = known;
        }
        out.push_back(
            where + ".inputs[" + std::to_string(k) + "] " + Quote(kind) +
            " is not a kind the artifact gate defines (" +
            (kinds.empty() ? std::string("it defines none") : JoinWords(kinds)) +
            "): nothing requires an artifact of this kind, and a check sends only the "
            "kinds registered on the card, so a misspelt kind is skipped and the "
            "checker judges without it; " +
            (best.empty() ? std::string("fix the kind") : "did you mean " + Quote(best) + "?") +
            " (or define the kind under the artifact gate's kinds: and require it on "
            "this edge)");
      }
      // trial11 F3: with the nonce off, a checker that repeats a verdict block from the judged
      // artifacts (an injected allow, quoted or obeyed) as its last block decides the move. A
      // builtin checker never repeats its inputs; a command may be a model.
      const ProviderConfig* provider = config.FindProvider(edge.provider);
      if (!edge.verdict_nonce && provider && !provider->builtin) {
        out.push_back(
            where + " runs provider \"" + edge.provider +
            "\" (a command, perhaps a model) with verdictNonce off, so a verdict block "
            "written into the judged artifacts decides the move when the checker repeats "
            "it last; set verdictNonce: true on this edge (the prompt then carries a "
            "nonce that only the checker's own verdict echoes; docs/checker-protocol.md)");
      }
    }
  }
  return out;
}

}  // namespace devflow

namespace devflow {
namespace {

// The first executable regular file named `name` on the colon-separated `search_path`, or "".
std::string FindOnPath(const std::string& name, const std::string& search_path) {
  size_t at = 0;
  while (at <= search_path.size()) {
    size_t end = search_path.find(':', at);
    if (end == std::string::npos) end = search_path.size();
    std::string dir = search_path.substr(at, end - at);
    at = end + 1;
    if (dir.empty()) dir = ".";  // POSIX: an empty entry is the cwd
    const std::string candidate = AbsolutePath(JoinPath(dir, name));
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

bool Inside(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

// realpath, or the lexical absolute path when it does not resolve.
std::string Real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : AbsolutePath(path);
}

// "writable by group" / "writable by others" / "" for the mode of `path`.
std::string LooseWrite(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  if (st.st_mode & S_IWOTH) return "writable by others";
  if (st.st_mode & S_IWGRP) return "writable by group";
  return "";
}

}  // namespace

void ResolveProviderPrograms(GateConfig& config, const std::string& workspace,
                             const std::string& search_path) {
  for (ProviderConfig& provider : config.providers) {
    if (provider.builtin || provider.command.empty() || provider.command[0].empty()) continue;
    std::string& program = provider.command[0];
    if (program.find('/') != std::string::npos) {
      program = ResolveAgainst(workspace.empty() ? AbsolutePath(".") : workspace, program);
    } else if (std::string found = FindOnPath(program, search_path); !found.empty()) {
      program = found;
    }
  }
}

std::vector<std::pair<std::string, std::string>> ProviderPrograms(const GateConfig& config,
                                                                  const std::string& self) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ProviderConfig& provider : config.providers) {
    if (provider.builtin) {
      out.emplace_back(provider.name, self);
    } else if (!provider.command.empty()) {
      out.emplace_back(provider.name, provider.command[0]);
    }
  }
  return out;
}

std::vector<std::string> TrustWarnings(const GateConfig& config, const std::string& workspace,
                                       const std::string& self) {
  std::vector<std::string> out;
  const std::string written_ws = workspace.empty() ? "" : AbsolutePath(workspace);
  const std::string ws = workspace.empty() ? "" : Real(workspace);
  // `path` is absolute and lexically normal, as the gate runs or loads it. It is in the
  // workspace when, as written, it lies there, or any symlink along it does (the agent can
  // retarget that link), or what it resolves to does.
  auto check = [&](const std::string& label, const std::string& path, const std::string& can,
                   const std::string& fix) {
    const std::string real = Real(path);
    std::string link;
    for (const std::string& l : SymlinksAlong(path)) {
      if (Inside(l, ws)) {
        link = l;
        break;
      }
    }
    const std::string tail = ", which the judged agent can write: it can ";
    if (!link.empty()) {
      out.push_back(label + " goes through the symlink " + link + " inside the workspace " + ws +
                    " (now resolving to " + real + ")" + tail +
                    "retarget the link and change what decides its own moves; " + fix);
    } else if (Inside(path, written_ws) || Inside(path, ws) || Inside(real, ws)) {
      out.push_back(label + " lies inside the workspace " + ws + tail + can + fix);
    }
    for (const std::string& p : {real, ParentPath(real)}) {
      if (std::string loose = LooseWrite(p); !loose.empty()) {
        out.push_back(label + (p == real ? "" : " is in a directory " + p + " that") + " is " +
                      loose + "; chmod go-w " + p);
        break;
      }
    }
  };
  const std::string change = "change what decides its own moves; ";
  check("the config file " + config.file, config.file, change,
        "keep it outside (pass --config FILE or set DEVFLOW_GATE_CONFIG; docs/security.md)");
  for (const auto& [provider, program] : ProviderPrograms(config, self)) {
    if (program.empty() || program[0] != '/') continue;  // not found: ConfigWarnings' job
    check("providers." + provider + " program " + program, program, change,
          "install the checker outside the workspace and name it by absolute path");
  }
  // An interpreter's script ([python3, ./check.py], [/bin/sh, check.sh]) is what runs: each
  // later argument that names an existing regular file (relative ones against the workspace,
  // the checker's cwd) is checked like the program: the files the checker identity pins too
  // (reports/verdict_cache.h CommandFiles).
  const std::string cwd = workspace.empty() ? AbsolutePath(".") : written_ws;
  for (const ProviderConfig& provider : config.providers) {
    for (const CommandFile& file : CommandFiles(&provider, cwd)) {
      if (file.index == 0) continue;  // the program: checked above
      check("providers." + provider.name + " command[" + std::to_string(file.index) + "] " +
                file.path + " (a file the command names: for an interpreter, the script that runs)",
            file.path, "replace that file and change what decides its own moves; ",
            "install it outside the workspace and name it by absolute path");
    }
  }
  // A launcher that loads code or instructions from its working directory, the workspace
  // (trial21 8-1, 8-2: `npx` ran a planted ./node_modules package that printed an allow).
  static const std::set<std::string> kCwdReaders = {
      "npx", "npm", "pnpm", "pnpx", "yarn", "bunx", "bun", "claude", "codex", "gemini", "aider"};
  for (const ProviderConfig& provider : config.providers) {
    if (provider.command.empty()) continue;
    const std::string& word = provider.command[0];
    const std::string name = word.substr(word.find_last_of('/') + 1);
    if (!kCwdReaders.count(name)) continue;
    out.push_back("providers." + provider.name + " runs " + name +
                  ", which reads code or instructions from its working directory, the card "
                  "workspace the judged agent can write (node_modules, CLAUDE.md, "
                  ".claude/settings.json, AGENTS.md): it can change what decides its own moves; "
                  "run it through a script outside the workspace that changes to an empty "
                  "directory first (docs/security.md)");
  }
  // `sandbox: off` is allowed (the explicit opt-out of SPEC §8), never silent (the fresh trial).
  for (const ProviderConfig& provider : config.providers) {
    if (!provider.sandbox_off) continue;
    out.push_back("providers." + provider.name +
                  " sets `sandbox: off`: its checker runs unconfined, as the host's user, so it "
                  "can read the host's secrets (its files, keys and tokens, the environment of "
                  "every process of that user) and write anywhere the host can (journals, "
                  "reports, the verdict cache, this config); remove `sandbox: off` once "
                  "bubblewrap or Landlock + seccomp is usable (apt-get install bubblewrap; "
                  "docs/security.md)");
  }
  return out;
}

}  // namespace devflow

// A devflow root built by hand for the operator command tests: a workspace TempDir with
// `.devflow/`, journals written line by line, and a probe whose file ages and live pids the
// test sets.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "config/config.h"
#include "host/cli/operator_cli.h"
#include "reports/cache_command.h"
#include "reports/report_command.h"
#include "reports/verdict_cache.h"
#include "support/support.h"

namespace devflow::test {

constexpr const char* kT0 = "2026-09-16T08:00:00.000Z";
constexpr const char* kInstruction =
    "Check that the design cites only requirements the PRD states.";

/// Ages by exact path (ms); unknown paths are 0 ms old. Live pids by value.
class FakeProbe : public HostProbe {
 public:
  Result<int64_t> AgeMs(const std::string& path) override {
    auto it = ages.find(path);
    return it == ages.end() ? int64_t{0} : it->second;
  }
  bool ProcessAlive(int64_t pid) override { return alive.count(pid) > 0; }
  int64_t NowMs() override { return now_ms; }
  std::map<std::string, int64_t> ages;
  std::set<int64_t> alive;
  int64_t now_ms = 1789545600000;  // 2026-09-16T08:00:00.000Z (kT0)
};

/// The config every cache test uses: one agent gate on designing->ready with inputs prd and
/// design, a relative cache dir (resolved against the workspace).
inline std::string CachedGateYaml(const std::string& extra = "") {
  return std::string(
             "plugins:\n"
             "  - id: devflow-agent-gate\n"
             "    config:\n"
             "      edges:\n"
             "        'designing->ready':\n"
             "          provider: grounding\n"
             "          inputs: [prd, design]\n"
             "          prompt: ") +
         kInstruction + "\n" + "      verdictCacheDir: .devflow/cache/agent-gate\n" + extra;
}

struct OperatorRoot {
  TempDir ws;
  std::string root = ws / ".devflow";
  GateConfig config;
  FakeProbe probe;

  explicit OperatorRoot(const std::string& yaml = "plugins: []\n") {
    Configure(yaml);
    REQUIRE(RealFileSystem().CreateDirs(root).ok());
  }

  void Configure(const std::string& yaml) {
    auto loaded = LoadConfigText(yaml, "devflow-gate.yaml");
    REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
    config = *loaded;
  }

  std::string CardDir(const std::string& id) const { return root + "/tasks/" + id; }
  void Journal(const std::string& id, const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    Spit(CardDir(id) + "/journal.jsonl", text);
  }

  /// A card at `designing` with prd registered at rev 3 and design at rev 4 (their files
  /// written, so the inputs identity of a record can be computed).
  void DesigningCard(const std::string& id) {
    Journal(
        id,
        {
            R"({"rev":1,"at":"2026-09-16T08:00:00.000Z","type":"created","by":{"kind":"human"}})",
            R"({"rev":2,"at":"2026-09-16T08:01:00.000Z","type":"transition","from":"draft","to":"designing","by":{"kind":"human"}})",
            R"({"rev":3,"at":"2026-09-16T08:02:00.000Z","type":"artifact","path":"artifacts/3-prd.md","stage":"designing","by":{"kind":"human"},"kind":"prd"})",
            R"({"rev":4,"at":"2026-09-16T08:03:00.000Z","type":"artifact","path":"artifacts/4-design.md","stage":"designing","by":{"kind":"human"},"kind":"design"})",
        });
    Spit(CardDir(id) + "/artifacts/3-prd.md", "# PRD\n\n- REQ-1\n");
    Spit(CardDir(id) + "/artifacts/4-design.md", "# Design\n\ncovers REQ-1\n");
  }

  std::string CacheDir() const { return root + "/cache/agent-gate"; }
  std::string ReportDir() const { return root + "/reports/agent-gate"; }

  VerdictCacheKey Key(const std::string& card, std::vector<std::string> inputs,
                      const std::string& instruction = kInstruction,
                      const std::string& key_root = "") const {
    return VerdictCacheKey::Compute("designing->ready", key_root.empty() ? root : key_root, card,
                                    std::move(inputs), instruction);
  }
  /// The checker identity the gate computes now for an edge (CurrentCheckerIdentity of the first
  /// agent edge of that name; the undefined provider's when none).
  std::string Identity(const std::string& edge = "designing->ready") const {
    for (const PluginConfig& plugin : config.plugins) {
      if (!plugin.agent) continue;
      for (const AgentEdgeConfig& e : plugin.agent->edges) {
        if (e.edge.Name() == edge) {
          Result<std::string> id = CurrentCheckerIdentity(config.FindProvider(e.provider),
                                                          e.verdict_nonce, ParentPath(root));
          REQUIRE_MESSAGE(id.ok(), id.status().message());
          return *id;
        }
      }
    }
    return CheckerIdentity(nullptr, false);
  }
  /// The inputs identity the gate computes now for `key`'s card and registrations ("" when they
  /// cannot be read).
  std::string Inputs(const VerdictCacheKey& key) const {
    return test::JudgedInputsOf(root, key.card, key.inputs);
  }
  /// Writes a record under its proper name (or `name`), carrying the checker and inputs
  /// identities the gate would compute now (no inputs identity when the key's card or one of its
  /// registrations cannot be read); returns the path.
  std::string Record(const VerdictCacheKey& key, bool allow, const std::string& summary,
                     const std::string& name = "") {
    VerdictCacheRecord r{key, allow, summary, std::nullopt, kT0, Identity(key.edge), Inputs(key)};
    if (!allow) r.report_path = ReportDir() + "/x.md";
    std::string path = CacheDir() + "/" + (name.empty() ? key.FileName() : name);
    Spit(path, RenderCacheRecord(r));
    return path;
  }

  OperatorContext Ctx(FileSystem& fs = RealFileSystem()) {
    return OperatorContext{root, config, fs, probe};
  }
};

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

/// The command words, parsed by the CLI's own CLI11 wiring (host/cli/operator_cli.h).
struct OpCommand {
  const char* word;
};
constexpr OpCommand RunAuditCommand{"audit"};
constexpr OpCommand RunReportsCommand{"reports"};
constexpr OpCommand RunCacheCommand{"cache"};
constexpr OpCommand RunLedgerCommand{"ledger"};

inline Ran RunOp(OpCommand command, const std::vector<std::string>& args,
                 const OperatorContext& ctx) {
  std::vector<std::string> words{command.word};
  words.insert(words.end(), args.begin(), args.end());
  std::ostringstream out, err;
  Ran r;
  r.code = RunOperatorCommand(words, ctx, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace devflow::test

// LoadConfigText / LoadConfigFile: the whole file, providers, plugins and the file-level rules
// (SPEC §3; cpp-notes §2 on what yaml-cpp would otherwise accept silently).
#include <doctest/doctest.h>

#include <string>

#include "config/config.h"
#include "support/support.h"

namespace devflow {
namespace {

constexpr const char* kFile = "devflow-gate.yaml";

/// The load's problem lines; fails the test if the text loads.
std::string ProblemsOf(const std::string& yaml) {
  auto r = LoadConfigText(yaml, kFile);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == "config");
  return r.status().message();
}

GateConfig Loaded(const std::string& yaml) {
  auto r = LoadConfigText(yaml, kFile);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *r;
}

constexpr const char* kFull = R"(providers:
  grounding:
    builtin: grounding
    args: [--claim-kind, design]
  claude:
    command: [claude, -p, --output-format, text]
    env: [ANTHROPIC_API_KEY]
    network: true
plugins:
  - id: devflow-artifact-gate
    config:
      kinds:
        prd: { sections: [Goals] }
        design: { sections: [Overview] }
      edges: { 'designing->ready': [prd, design] }
  - id: devflow-agent-gate
    name: '@zhchxiao123/dsh-devflow-agent-gate'
    config:
      edges:
        'designing->ready':
          provider: grounding
          inputs: [prd, design]
          prompt: Check that the design cites only requirements the PRD states.
      reportDir: .devflow-agent-gate-reports
      verdictCacheDir: .devflow-agent-gate-cache
      checkTimeoutMs: 600000
)";

TEST_CASE("config loads the SPEC example into plain structs") {
  GateConfig c = Loaded(kFull);
  CHECK(c.file == "devflow-gate.yaml");
  REQUIRE(c.providers.size() == 2);
  CHECK(c.providers[0].name == "grounding");
  CHECK(c.providers[0].builtin == "grounding");
  CHECK(c.providers[0].args == std::vector<std::string>{"--claim-kind", "design"});
  CHECK(c.providers[0].command.empty());
  CHECK_FALSE(c.providers[0].network);
  CHECK(c.providers[1].name == "claude");
  CHECK_FALSE(c.providers[1].builtin.has_value());
  CHECK(c.providers[1].command ==
        std::vector<std::string>{"claude", "-p", "--output-format", "text"});
  CHECK(c.providers[1].env == std::vector<std::string>{"ANTHROPIC_API_KEY"});
  CHECK(c.providers[1].network);
  CHECK(c.FindProvider("claude") == &c.providers[1]);
  CHECK(c.FindProvider("codex") == nullptr);

  REQUIRE(c.plugins.size() == 2);
  CHECK(c.plugins[0].id == "devflow-artifact-gate");
  CHECK(c.plugins[0].line == 10);
  CHECK(c.plugins[0].artifact.has_value());
  CHECK_FALSE(c.plugins[0].agent.has_value());
  const PluginConfig& agent = c.plugins[1];
  CHECK(agent.id == "devflow-agent-gate");
  CHECK(agent.name == "@zhchxiao123/dsh-devflow-agent-gate");
  CHECK(agent.line == 16);
  REQUIRE(agent.agent.has_value());
  REQUIRE(agent.agent->edges.size() == 1);
  const AgentEdgeConfig& e = agent.agent->edges[0];
  CHECK(e.edge.Name() == "designing->ready");
  CHECK(e.provider == "grounding");
  CHECK(e.inputs == std::vector<std::string>{"prd", "design"});
  CHECK(e.prompt == "Check that the design cites only requirements the PRD states.");
  CHECK(agent.agent->report_dir == ".devflow-agent-gate-reports");
  CHECK(agent.agent->verdict_cache_dir == ".devflow-agent-gate-cache");
  CHECK(agent.agent->check_timeout_ms == 600000);
  CHECK(agent.agent->max_reply_bytes == 8 * 1024 * 1024);
  CHECK(agent.agent->Find(*ParseEdge("designing->ready")) == &e);
  CHECK(agent.agent->Find(*ParseEdge("draft->designing")) == nullptr);
}

TEST_CASE("config accepts a bare top-level list of plugin entries as plugins:") {
  GateConfig c = Loaded(R"(- id: devflow-artifact-gate
- id: devflow-agent-gate
  config:
    edges:
      designing->ready: {provider: checker, prompt: check it}
)");
  CHECK(c.providers.empty());
  REQUIRE(c.plugins.size() == 2);
  CHECK(c.plugins[0].id == "devflow-artifact-gate");
  CHECK(c.plugins[1].id == "devflow-agent-gate");
  CHECK(c.plugins[1].line == 2);
  CHECK(c.plugins[1].agent->edges.size() == 1);
}

TEST_CASE("config rejects an empty or comment-only file asking for a plugins list") {
  CHECK(ProblemsOf("") == "devflow-gate.yaml:1:1: the file is empty; add a plugins: list");
  CHECK(ProblemsOf("  \n\n# nothing configured yet\n") ==
        "devflow-gate.yaml:1:1: the file is empty; add a plugins: list");
}

TEST_CASE("config reports a YAML syntax error at its 1-based line and column") {
  CHECK(ProblemsOf("plugins: [a,\nproviders: {}\n") ==
        "devflow-gate.yaml:3:1: end of sequence flow not found");
  CHECK(ProblemsOf("plugins:\n  - id: devflow-agent-gate\n    config: *nope\n") ==
        "devflow-gate.yaml:3:13: the referenced anchor is not defined");
}

TEST_CASE("config rejects a second YAML document") {
  CHECK(ProblemsOf("plugins: []\n---\nplugins: []\n") ==
        "devflow-gate.yaml:2:1: a second YAML document starts here; the config file holds "
        "exactly one document (remove the extra ---)");
}

TEST_CASE("config finds a second document after any line-start marker, and only there") {
  // The second parse runs only when a line starts with --- or ... (issue 11: one parse).
  CHECK(ProblemsOf("plugins: []\r\n---\r\nplugins: []\r\n") ==
        "devflow-gate.yaml:2:1: a second YAML document starts here; the config file holds "
        "exactly one document (remove the extra ---)");
  CHECK(ProblemsOf("plugins: []\n...\nplugins: []\n").find("a second YAML document starts") !=
        std::string::npos);
  // A marker that does not start a line is text, not a document boundary.
  GateConfig c = Loaded("# a --- comment ...\nplugins: [] # --- ...\n");
  CHECK(c.plugins.empty());
}

TEST_CASE("config rejects an unknown top-level key and a missing plugins list") {
  CHECK(ProblemsOf("plugin:\n  - id: devflow-agent-gate\n") ==
        "devflow-gate.yaml:1:1: top level: unknown key \"plugin\" (did you mean \"plugins\"?); "
        "allowed here: providers, plugins, ledger\n"
        "devflow-gate.yaml:1:1: top level: missing plugins: list; add plugins: with the gates to "
        "run, in order");
}

TEST_CASE("config accepts an explicit empty plugins list as an empty waterfall") {
  GateConfig c = Loaded("plugins: []\n");
  CHECK(c.plugins.empty());
}

TEST_CASE("config rejects a top level that is neither a map nor a list") {
  CHECK(ProblemsOf("just words\n") ==
        "devflow-gate.yaml:1:1: the top level must be a map with providers: and plugins: (or a "
        "bare list of plugin entries)");
}

TEST_CASE("config rejects a duplicate top-level key that yaml-cpp would keep silently") {
  CHECK(ProblemsOf("plugins: []\nproviders: {}\nplugins:\n  - id: devflow-agent-gate\n") ==
        "devflow-gate.yaml:3:1: top level: duplicate key \"plugins\" (first at line 1); remove "
        "one of them");
}

TEST_CASE("config names each plugin entry problem with its index and id") {
  CHECK(ProblemsOf(R"(plugins:
  - id: devflow-agent-gate
  - id: devflow-review-gate
  - {id: devflow-grounding-gate, confg: {}}
  - devflow-artifact-gate
  - name: x
  - id: devflow-artifact-gate
    config: [a]
)") == "devflow-gate.yaml:3:9: plugins[1](devflow-review-gate): unknown plugin id "
       "\"devflow-review-gate\"; known ids: devflow-agent-gate, devflow-artifact-gate, "
       "devflow-grounding-gate\n"
       "devflow-gate.yaml:4:34: plugins[2](devflow-grounding-gate): unknown key \"confg\" (did "
       "you mean \"config\"?); allowed here: id, name, config\n"
       "devflow-gate.yaml:5:5: plugins[3]: must be a map {id, name?, config?}; id is one of "
       "devflow-agent-gate, devflow-artifact-gate, devflow-grounding-gate\n"
       "devflow-gate.yaml:6:5: plugins[4]: missing id; use one of devflow-agent-gate, "
       "devflow-artifact-gate, devflow-grounding-gate\n"
       "devflow-gate.yaml:8:13: plugins[5](devflow-artifact-gate): config must be a map (got a "
       "list)");
}

TEST_CASE("config validates every provider field and reports all problems") {
  CHECK(ProblemsOf(R"(providers:
  a: {builtin: grounding, command: [x]}
  b: {}
  c: {builtin: llm}
  d: {command: []}
  e: {command: [claude, "", ~]}
  f: {command: claude -p, args: [a]}
  g: {command: [x], env: [OK_1, 1BAD, A-B]}
  h: {builtin: grounding, netwrok: true}
plugins: []
)") == "devflow-gate.yaml:2:27: providers.a: set either builtin or command, not both\n"
       "devflow-gate.yaml:3:3: providers.b: needs builtin: grounding or command: [program, "
       "args...] (the checker to run)\n"
       "devflow-gate.yaml:4:16: providers.c: builtin \"llm\" is not a built-in checker; known: "
       "grounding\n"
       "devflow-gate.yaml:5:16: providers.d: command must be a non-empty list of program and "
       "arguments, e.g. [claude, -p]\n"
       "devflow-gate.yaml:6:25: providers.e: command[1] must be a non-empty string\n"
       "devflow-gate.yaml:6:7: providers.e: command[2] must be a non-empty string\n"
       "devflow-gate.yaml:7:16: providers.f: command must be a non-empty list of program and "
       "arguments, e.g. [claude, -p]\n"
       "devflow-gate.yaml:7:27: providers.f: args is only allowed with builtin; put a command's "
       "arguments in command\n"
       "devflow-gate.yaml:8:33: providers.g: env[1] \"1BAD\" is not an environment variable "
       "name (letters, digits and _, not starting with a digit)\n"
       "devflow-gate.yaml:8:39: providers.g: env[2] \"A-B\" is not an environment variable name "
       "(letters, digits and _, not starting with a digit)\n"
       "devflow-gate.yaml:9:27: providers.h: unknown key \"netwrok\" (did you mean "
       "\"network\"?); allowed here: builtin, command, args, env, network, sandbox, read, reply");
}

TEST_CASE("config accepts only the literal booleans true and false for network") {
  for (const char* word : {"yes", "on", "True", "'true'", "1", "~"}) {
    CAPTURE(word);
    std::string msg = ProblemsOf(std::string("providers:\n  c:\n    command: [c]\n    network: ") +
                                 word + "\nplugins: []\n");
    CHECK(msg.rfind("devflow-gate.yaml:4:", 0) == 0);
    CHECK(msg.find(": providers.c: network must be true or false (got ") != std::string::npos);
  }
  CHECK(ProblemsOf("providers:\n  c:\n    command: [c]\n    network: yes\nplugins: []\n") ==
        "devflow-gate.yaml:4:14: providers.c: network must be true or false (got \"yes\")");
  CHECK(
      Loaded("providers:\n  c: {command: [c], network: true}\nplugins: []\n").providers[0].network);
  CHECK_FALSE(Loaded("providers:\n  c: {command: [c], network: false}\nplugins: []\n")
                  .providers[0]
                  .network);
}

TEST_CASE("config keeps argv words verbatim, numbers included") {
  GateConfig c =
      Loaded("providers:\n  c: {command: [llm, --max-tokens, 100, 'a b']}\nplugins: []\n");
  CHECK(c.providers[0].command == std::vector<std::string>{"llm", "--max-tokens", "100", "a b"});
}

TEST_CASE("config file that does not exist is ENOENT naming the path and the fix") {
  test::TempDir tmp;
  auto r = LoadConfigFile(tmp / "devflow-gate.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == "ENOENT");
  CHECK(r.status().message() == "config file " + (tmp / "devflow-gate.yaml") +
                                    " does not exist; create it (see docs/configuration.md) or "
                                    "pass --config FILE");
}

TEST_CASE("config file problems name the file they were read from") {
  test::TempDir tmp;
  test::Spit(tmp / "gate.yaml",
             "plugins:\n  - id: devflow-agent-gate\n    config: {checkTimeoutMs: 0}\n");
  auto r = LoadConfigFile(tmp / "gate.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == "config");
  CHECK(r.status().message() == (tmp / "gate.yaml") +
                                    ":3:30: plugins[0](devflow-agent-gate): checkTimeoutMs must "
                                    "be a positive integer");
  test::Spit(tmp / "ok.yaml", kFull);
  auto ok = LoadConfigFile(tmp / "ok.yaml");
  REQUIRE(ok.ok());
  CHECK(ok->file == tmp / "ok.yaml");
}

TEST_CASE("config loads an agent edge naming an undefined provider (config check refuses it)") {
  GateConfig c = Loaded(R"(providers:
  grounding: {builtin: grounding}
plugins:
  - id: devflow-artifact-gate
  - id: devflow-agent-gate
    config:
      edges:
        designing->ready: {provider: grounding, prompt: p}
        ready->developing: {provider: claude, prompt: p}
)");
  CHECK(c.FindProvider("claude") == nullptr);
  CHECK(ConfigWarnings(c).empty());  // an error of config check: tests/e2e/config_check_test.cc
  CHECK(ConfigWarnings(Loaded(kFull)).empty());
}

TEST_CASE("config check warns about a command provider's edge with verdictNonce off") {
  const std::string head = R"(providers:
  grounding: {builtin: grounding}
  claude: {command: [claude, -p], reply: block-only}
plugins:
  - id: devflow-agent-gate
    config:
      edges:
)";
  const std::vector<std::string> warnings =
      ConfigWarnings(Loaded(head + "        designing->ready: {provider: claude, prompt: p}\n" +
                            "        ready->developing: {provider: grounding, prompt: p}\n"));
  CHECK(warnings ==
        std::vector<std::string>{
            "plugins[0](devflow-agent-gate): edges[\"designing->ready\"] runs provider \"claude\" "
            "(a command, perhaps a model) with verdictNonce off, so a verdict block written into "
            "the judged artifacts decides the move when the checker repeats it last; set "
            "verdictNonce: true on this edge (the prompt then carries a nonce that only the "
            "checker's own verdict echoes; docs/checker-protocol.md)"});
  // With the nonce on, or a builtin checker: no warning.
  CHECK(ConfigWarnings(Loaded(head + "        designing->ready: {provider: claude, prompt: p, "
                                     "verdictNonce: true}\n"))
            .empty());
  CHECK(
      ConfigWarnings(Loaded(head + "        designing->ready: {provider: grounding, prompt: p}\n"))
          .empty());
}

// trial12 k19: `inputs: [prd, desing]` loaded and `config check` said ok; the move then ran the
// checker without the design (a kind with no registration is skipped).
TEST_CASE("config check warns about an agent input kind the artifact gate does not define") {
  const std::string agent = R"(  - id: devflow-agent-gate
    config:
      edges:
        designing->ready: {provider: g, prompt: p, inputs: [prd, desing, notes]}
)";
  const std::string artifact = R"(  - id: devflow-artifact-gate
    config:
      kinds:
        prd: { sections: [Goals] }
        design: { sections: [Overview] }
      edges: { 'designing->ready': [prd, design] }
)";
  const std::string head = "providers:\n  g: {builtin: grounding}\nplugins:\n";
  const std::string where = "plugins[1](devflow-agent-gate): edges[\"designing->ready\"].inputs[";
  const std::string why =
      " is not a kind the artifact gate defines (prd, design): nothing requires an artifact of "
      "this kind, and a check sends only the kinds registered on the card, so a misspelt kind is "
      "skipped and the checker judges without it; ";
  const std::string or_define =
      " (or define the kind under the artifact gate's kinds: and require it on this edge)";
  CHECK(ConfigWarnings(Loaded(head + artifact + agent)) ==
        std::vector<std::string>{
            where + "1] \"desing\"" + why + "did you mean \"design\"?" + or_define,
            where + "2] \"notes\"" + why + "fix the kind" + or_define});
  // Without an artifact gate there is no list of kinds to hold the inputs to: silent.
  CHECK(ConfigWarnings(Loaded(head + agent)).empty());
}

}  // namespace
}  // namespace devflow

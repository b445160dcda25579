// The command line (SPEC §7). Parsing is CLI11's; each command is a small function that wires
// the store, the config, the policies and the checker, and maps outcomes to exit codes.
#include "host/cli/cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checker/ground_command.h"
#include "checker/grounding_checker.h"
#include "checker/subprocess.h"
#include "config/config.h"
#include "host/cleanup.h"
#include "host/decision_ledger.h"
#include "host/executor.h"
#include "host/os.h"
#include "host/store.h"
#include "host/warnings.h"
#include "plugin/agent_gate.h"
#include "plugin/artifact_gate.h"
#include "plugin/grounding_gate.h"
#include "reports/audit.h"

namespace devflow {
namespace {

using ojson = nlohmann::ordered_json;

// Exit codes (SPEC §7).
constexpr int kExitOk = 0;
constexpr int kExitVetoed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitFailedClosed = 3;
constexpr int kExitRejected = 4;

struct Globals {
  std::string root;    // --root
  std::string config;  // --config
};

std::string ResolveRoot(const Globals& g) {
  if (!g.root.empty()) return AbsolutePath(g.root);
  if (const char* env = std::getenv("DEVFLOW_ROOT"); env && *env) return AbsolutePath(env);
  return AbsolutePath(".devflow");
}

std::string ResolveConfig(const Globals& g, const std::string& root) {
  if (!g.config.empty()) return AbsolutePath(g.config);
  return JoinPath(ParentPath(root), "devflow-gate.yaml");
}

std::string SelfPath(const char* argv0) {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  return AbsolutePath(argv0);
}

std::string Dump(const ojson& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

ojson ChecksJson(const std::vector<GateCheck>& checks) {
  return ojson::parse(EncodeChecksJson(checks));
}

ojson CardBrief(const Card& c) {
  ojson j;
  j["id"] = c.id;
  j["stage"] = std::string(LocationName(c.stage));
  j["stageRevision"] = c.stage_revision;
  if (c.blocked_from) j["blockedFrom"] = std::string(LocationName(*c.blocked_from));
  return j;
}

ojson CardFull(const Card& c) {
  ojson j = CardBrief(c);
  j["title"] = c.title;
  j["serviceClass"] = std::string(ServiceClassName(c.service_class));
  if (c.parent) j["parent"] = *c.parent;
  j["root"] = c.root;
  j["path"] = c.path;
  j["createdAt"] = c.created_at;
  j["updatedAt"] = c.updated_at;
  ojson arts = ojson::array();
  for (const auto& a : c.artifact_records) {
    ojson r;
    r["path"] = a.path;
    if (a.kind) r["kind"] = *a.kind;
    r["rev"] = a.rev;
    r["stage"] = std::string(LocationName(a.stage));
    arts.push_back(r);
  }
  j["artifacts"] = arts;
  j["body"] = c.body;
  return j;
}

// Parses `--by KIND[:NAME]`: human[:name], agent[:session], command[:name].
std::optional<Actor> ParseActor(const std::string& text) {
  std::string kind = text.substr(0, text.find(':'));
  std::optional<std::string> rest;
  if (text.find(':') != std::string::npos) rest = text.substr(text.find(':') + 1);
  if (rest && rest->empty()) return std::nullopt;
  if (kind == "human" || kind == "command") return Actor{kind, rest, std::nullopt};
  if (kind == "agent") return Actor{kind, std::nullopt, rest};
  return std::nullopt;
}

// Human text on a terminal: a checker's words must not carry escape sequences or line breaks
// into it (the journal and --json keep them verbatim, escaped).
std::string Terminal(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return out;
}

int Fail(const std::string& message, int code = kExitUsage) {
  std::cerr << "devflow-gate: " << message << "\n";
  return code;
}

int ExitFor(const std::string& code) {
  if (code == "not-found" || code == "usage" || code == "config" || code == "empty-title" ||
      code == "invalid-slug" || code == "invalid-kind") {
    return kExitUsage;
  }
  return kExitRejected;
}

// Everything a gated command needs, built from --root and --config.
struct Deployment {
  std::string root;
  GateConfig config;
  std::unique_ptr<Store> store;
  std::unique_ptr<SubprocessChecker> checker;
  std::vector<std::unique_ptr<Policy>> owned;
  std::vector<Policy*> policies;
};

Result<std::unique_ptr<Deployment>> LoadDeployment(const Globals& g, const char* argv0) {
  auto d = std::make_unique<Deployment>();
  d->root = ResolveRoot(g);
  Result<GateConfig> config = LoadConfigFile(ResolveConfig(g, d->root));
  if (!config.ok()) return config.status();
  d->config = std::move(*config);
  d->store = std::make_unique<Store>(d->root, RealFileSystem(), SystemClock(), StderrWarnings());
  d->checker = std::make_unique<SubprocessChecker>(d->config.providers, SelfPath(argv0));
  Store* store = d->store.get();
  CardReader reader = [store](const std::string& root, const std::string& id) -> Result<Card> {
    if (root != store->root()) {
      return Status::Error("not-found", "card " + id + " belongs to root " + root +
                                            ", which this deployment does not serve");
    }
    return store->Read(id);
  };
  for (const PluginConfig& plugin : d->config.plugins) {
    if (plugin.agent) {
      d->owned.push_back(
          std::make_unique<AgentGate>(*plugin.agent, reader, *d->checker, RealFileSystem()));
    } else if (plugin.artifact) {
      d->owned.push_back(
          std::make_unique<ArtifactGate>(*plugin.artifact, reader, RealFileSystem()));
    } else if (plugin.grounding) {
      d->owned.push_back(
          std::make_unique<GroundingGate>(*plugin.grounding, reader, RealFileSystem()));
    } else {
      return Status::Error("config", d->config.file + ":" + std::to_string(plugin.line) +
                                         ": plugin " + plugin.id + " has no configuration");
    }
    d->policies.push_back(d->owned.back().get());
  }
  return d;
}

int PrintConfigProblem(const Status& s) {
  if (s.code() == "config") {
    std::cerr << s.message() << "\n";
    return kExitUsage;
  }
  return Fail(s.message());
}

// ---- card ----------------------------------------------------------------------------------

int CardCreate(const Globals& g, const std::string& title, const std::string& body,
               const std::string& body_file, const std::string& slug, const std::string& cls) {
  if (!body.empty() && !body_file.empty()) return Fail("pass --body or --body-file, not both");
  CreateRequest req;
  req.title = title;
  req.body = body;
  if (!body_file.empty()) {
    Result<std::string> text = RealFileSystem().ReadFile(body_file);
    if (!text.ok()) return Fail("cannot read --body-file: " + text.status().message());
    req.body = *text;
  }
  if (!slug.empty()) req.slug = slug;
  if (!cls.empty()) {
    auto c = ParseServiceClass(cls);
    if (!c) return Fail("--class must be express or emergency, not \"" + cls + "\"");
    req.service_class = *c;
  }
  Store store(ResolveRoot(g), RealFileSystem(), SystemClock(), StderrWarnings());
  Result<Card> card = store.Create(req);
  if (!card.ok()) return Fail(card.status().message(), ExitFor(card.status().code()));
  std::cout << card->id << "\n";
  return kExitOk;
}

int CardShow(const Globals& g, const std::string& id, bool json) {
  Store store(ResolveRoot(g), RealFileSystem(), SystemClock(), StderrWarnings());
  Result<Card> card = store.Read(id);
  if (!card.ok()) return Fail(card.status().message(), ExitFor(card.status().code()));
  if (json) {
    std::cout << Dump(CardFull(*card), 2) << "\n";
    return kExitOk;
  }
  const Card& c = *card;
  std::cout << c.id << ": " << c.title << "\n";
  std::cout << "  stage:    " << LocationName(c.stage);
  if (c.blocked_from) std::cout << " (from " << LocationName(*c.blocked_from) << ")";
  std::cout << "\n  revision: " << c.stage_revision << "\n";
  if (c.service_class != ServiceClass::kStandard) {
    std::cout << "  class:    " << ServiceClassName(c.service_class) << "\n";
  }
  std::cout << "  updated:  " << c.updated_at << "\n";
  if (!c.artifact_records.empty()) {
    std::cout << "  artifacts:\n";
    for (const auto& a : c.artifact_records) {
      std::cout << "    r" << a.rev << " " << (a.kind ? *a.kind : "(no kind)") << " " << a.path
                << "\n";
    }
  }
  std::cout << "  history:\n";
  for (const auto& e : c.entries) {
    std::cout << "    r" << e.rev << " " << e.at << " " << EntryTypeName(e.type);
    if (e.from && e.to) std::cout << " " << LocationName(*e.from) << "->" << LocationName(*e.to);
    if (e.kind) std::cout << " " << *e.kind;
    if (e.reason) std::cout << " (" << *e.reason << ")";
    if (e.gate) {
      for (const auto& check : e.gate->checks) {
        std::cout << "\n        check by " << check.by.kind << ": "
                  << Terminal(check.summary.value_or(""));
      }
    }
    std::cout << "\n";
  }
  return kExitOk;
}

int CardList(const Globals& g, bool json) {
  Store store(ResolveRoot(g), RealFileSystem(), SystemClock(), StderrWarnings());
  Result<std::vector<Card>> cards = store.List();
  if (!cards.ok()) return Fail(cards.status().message(), ExitFor(cards.status().code()));
  if (json) {
    ojson arr = ojson::array();
    for (const auto& c : *cards) {
      ojson j = CardBrief(c);
      j["title"] = c.title;
      arr.push_back(j);
    }
    std::cout << Dump(arr, 2) << "\n";
    return kExitOk;
  }
  for (const auto& c : *cards) {
    std::string stage(LocationName(c.stage));
    std::printf("%-32s %-11s r%-4lld %s\n", c.id.c_str(), stage.c_str(),
                static_cast<long long>(c.stage_revision), c.title.c_str());
  }
  return kExitOk;
}

// ---- artifact ------------------------------------------------------------------------------

int ArtifactAdd(const Globals& g, const std::string& id, const std::string& kind,
                const std::string& file, const std::string& by, std::optional<int64_t> expect) {
  auto actor = ParseActor(by);
  if (!actor) return Fail("--by must be human[:NAME], agent[:SESSION] or command[:NAME]");
  if (expect && *expect < 1) return Fail("--expect-revision must be a revision (1 or more)");
  Result<std::string> content = RealFileSystem().ReadFile(file);
  if (!content.ok()) return Fail("cannot read the artifact file: " + content.status().message());
  Store store(ResolveRoot(g), RealFileSystem(), SystemClock(), StderrWarnings());
  Result<Card> card = store.Read(id);
  if (!card.ok()) return Fail(card.status().message(), ExitFor(card.status().code()));
  ArtifactRequest req;
  req.id = id;
  req.expected_revision = expect.value_or(card->stage_revision);
  req.by = *actor;
  req.kind = kind;
  req.content = *content;
  Result<Card> after = store.AddArtifact(req);
  if (!after.ok()) return Fail(after.status().message(), ExitFor(after.status().code()));
  const ArtifactRecord* rec = after->NewestOfKind(kind);
  std::cout << "registered " << kind << " on card " << id << " as "
            << (rec ? rec->path : std::string("?")) << " (revision " << after->stage_revision
            << ")\n";
  return kExitOk;
}

// ---- move ----------------------------------------------------------------------------------

struct MoveArgs {
  std::string id, to, by = "human", reason;
  std::optional<int64_t> expect;
  bool dry_run = false, explain = false, json = false;
  bool reason_given = false;
};

int MoveExplain(Deployment& d, const MoveRequest& req, bool json) {
  Executor executor(*d.store, d.policies, SystemClock(), StderrWarnings());
  Result<Attempt> attempt = executor.Resolve(req);
  if (!attempt.ok()) {
    return Fail(attempt.status().message(), ExitFor(attempt.status().code()));
  }
  ojson plugins = ojson::array();
  std::string text = "explain: card " + req.id + " " + std::string(LocationName(attempt->from)) +
                     "->" + std::string(LocationName(attempt->to)) + " at revision " +
                     std::to_string(attempt->expected_revision) +
                     " (nothing is dispatched or written)\n";
  for (size_t i = 0; i < d.policies.size(); ++i) {
    std::string part = d.policies[i]->Explain(*attempt);
    text += "\n[" + std::to_string(i + 1) + "] " + d.policies[i]->id() + "\n" + part + "\n";
    ojson p;
    p["id"] = d.policies[i]->id();
    p["explain"] = part;
    plugins.push_back(p);
  }
  if (d.policies.empty()) text += "\nno plugins are configured: the move would be admitted\n";
  if (json) {
    ojson j;
    j["card"] = req.id;
    j["edge"] =
        std::string(LocationName(attempt->from)) + "->" + std::string(LocationName(attempt->to));
    j["plugins"] = plugins;
    std::cout << Dump(j) << "\n";
  } else {
    std::cout << text;
  }
  return kExitOk;
}

int Move(const Globals& g, const MoveArgs& a, const char* argv0) {
  auto to = ParseLocation(a.to);
  if (!to) {
    return Fail("\"" + a.to +
                "\" is not a location; use draft, designing, ready, developing, reviewing, "
                "testing, done or blocked");
  }
  auto actor = ParseActor(a.by);
  if (!actor) return Fail("--by must be human[:NAME], agent[:SESSION] or command[:NAME]");
  if (a.dry_run && a.explain) return Fail("pass --dry-run or --explain, not both");
  if (a.expect && *a.expect < 1) return Fail("--expect-revision must be a revision (1 or more)");
  Result<std::unique_ptr<Deployment>> d = LoadDeployment(g, argv0);
  if (!d.ok()) return PrintConfigProblem(d.status());
  MoveRequest req;
  req.id = a.id;
  req.to = *to;
  req.expected_revision = a.expect;
  req.by = *actor;
  if (a.reason_given) req.reason = a.reason;
  req.dry_run = a.dry_run;
  if (a.explain) return MoveExplain(**d, req, a.json);

  // Temp files of writers that died mid-write are removed before anything reads these dirs
  // (they are never read as records anyway: their names never match one).
  std::vector<std::string> swept = {(*d)->store->CardDir(req.id),
                                    JoinPath((*d)->store->CardDir(req.id), "artifacts")};
  for (const auto& policy : (*d)->owned) {
    if (auto* gate = dynamic_cast<AgentGate*>(policy.get())) {
      swept.push_back(gate->ReportDir((*d)->root));
      if (!gate->CacheDir((*d)->root).empty()) swept.push_back(gate->CacheDir((*d)->root));
    }
  }
  if (!req.dry_run && IsValidCardId(req.id)) {
    for (const auto& problem : RemoveStaleTemps(RealFileSystem(), swept).errors) {
      StderrWarnings().Warn("devflow-gate: could not remove a stale temporary file: " + problem);
    }
  }

  Executor executor(*(*d)->store, (*d)->policies, SystemClock(), StderrWarnings());
  MoveOutcome out = executor.Move(req);
  if (!req.dry_run && out.code != "not-found") {
    Status logged = AppendDecision(RealFileSystem(), (*d)->root, req, out, SystemClock().NowIso());
    if (!logged.ok()) {
      StderrWarnings().Warn("devflow-gate: could not record the decision in " +
                            DecisionLedgerPath((*d)->root) + ": " + logged.message());
    }
  }
  int exit = kExitOk;
  if (out.ok) {
    exit = kExitOk;
  } else if (out.code == "vetoed") {
    exit = out.failed_closed ? kExitFailedClosed : kExitVetoed;
  } else {
    exit = ExitFor(out.code);
  }
  std::optional<std::string> report;
  for (const auto& r : out.reports) report = r.path;
  if (a.json) {
    ojson j;
    j["ok"] = out.ok;
    j["code"] = out.code;
    j["message"] = out.message;
    j["card"] = out.card ? CardBrief(*out.card) : ojson(nullptr);
    j["checks"] = ChecksJson(out.checks);
    j["parked"] = out.parked;
    j["report"] = report ? ojson(*report) : ojson(nullptr);
    if (a.dry_run) {
      j["dryRun"] = true;
      if (!out.park_message.empty()) j["wouldPark"] = out.park_message;
      if (!out.reports.empty()) j["reportText"] = out.reports.back().text;
    }
    std::cout << Dump(j) << "\n";
    return exit;
  }
  if (exit == kExitUsage) return Fail(out.message, exit);
  std::cout << Terminal(out.message) << "\n";
  if (out.ok) {
    for (const auto& c : out.checks) {
      std::cout << "  check by " << c.by.kind << ": " << Terminal(c.summary.value_or("")) << "\n";
    }
  }
  if (a.dry_run) {
    for (const auto& r : out.reports) {
      std::cout << "dry run: the veto report that would be written to " << r.path << ":\n"
                << r.text;
    }
    if (!out.park_message.empty()) std::cout << "dry run: " << out.park_message << "\n";
    if (!out.ok) std::cout << "dry run: nothing was written\n";
  } else if (out.failed_closed && !out.parked) {
    std::cout << "the card was NOT parked: " << out.park_message << "\n";
  } else if (out.parked && out.card) {
    std::cout << "card " << out.card->id << " parked blocked (revision " << out.card->stage_revision
              << "); recover with: devflow-gate move " << out.card->id << " "
              << LocationName(out.attempt.from) << "\n";
  }
  return exit;
}

// ---- config check --------------------------------------------------------------------------

int ConfigCheck(const Globals& g, bool json) {
  std::string root = ResolveRoot(g);
  std::string file = ResolveConfig(g, root);
  Result<GateConfig> config = LoadConfigFile(file);
  if (!config.ok()) {
    if (json) {
      ojson j;
      j["ok"] = false;
      j["file"] = file;
      ojson problems = ojson::array();
      std::string line;
      for (char c : config.status().message() + "\n") {
        if (c == '\n') {
          if (!line.empty()) problems.push_back(line);
          line.clear();
        } else {
          line += c;
        }
      }
      j["problems"] = problems;
      std::cout << Dump(j) << "\n";
      return kExitUsage;
    }
    return PrintConfigProblem(config.status());
  }
  std::vector<std::string> warnings = ConfigWarnings(*config);
  if (json) {
    ojson j;
    j["ok"] = true;
    j["file"] = file;
    ojson plugins = ojson::array();
    for (const auto& p : config->plugins) plugins.push_back(p.id);
    j["plugins"] = plugins;
    ojson providers = ojson::array();
    for (const auto& p : config->providers) providers.push_back(p.name);
    j["providers"] = providers;
    SubprocessChecker checker(config->providers, SelfPath("devflow-gate"));
    ojson sandbox = ojson::object();
    for (const auto& p : config->providers) sandbox[p.name] = checker.SandboxLevel(p);
    j["sandbox"] = sandbox;
    j["warnings"] = warnings;
    std::cout << Dump(j) << "\n";
    return kExitOk;
  }
  std::cout << file << ": ok\n";
  std::cout << "  waterfall:";
  for (const auto& p : config->plugins) std::cout << " " << p.id;
  std::cout << (config->plugins.empty() ? " (empty: every move is admitted)" : "") << "\n";
  SubprocessChecker checker(config->providers, SelfPath("devflow-gate"));
  std::cout << "  providers:" << (config->providers.empty() ? " none" : "") << "\n";
  for (const auto& p : config->providers) {
    std::cout << "    " << p.name << ": "
              << (p.builtin ? "builtin " + *p.builtin : "command " + p.command.front())
              << ", sandbox " << checker.SandboxLevel(p) << (p.network ? ", network" : "") << "\n";
  }
  for (const auto& w : warnings) std::cout << "warning: " << w << "\n";
  return kExitOk;
}

}  // namespace

int RunCli(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a checker that exits early must not kill the host
  // Global options come first; the commands below parse their own arguments (release_gate.py's
  // flags for `ground`, the checker's for `checker grounding`, the operators' sub-words), so
  // they are dispatched before CLI11 sees them.
  Globals pre;
  int at = 1;
  while (at < argc) {
    const std::string word = argv[at];
    auto take = [&](const char* name, std::string& into) {
      const std::string flag = name;
      if (word == flag && at + 1 < argc) {
        into = argv[at + 1];
        at += 2;
        return true;
      }
      if (word.rfind(flag + "=", 0) == 0) {
        into = word.substr(flag.size() + 1);
        at += 1;
        return true;
      }
      return false;
    };
    if (!take("--root", pre.root) && !take("--config", pre.config)) break;
  }
  const std::string command = at < argc ? argv[at] : "";
  const std::vector<std::string> rest(argv + std::min(at + 1, argc), argv + argc);
  if (command == "checker" && !rest.empty() && rest[0] == "grounding") {
    return RunGroundingChecker({rest.begin() + 1, rest.end()}, std::cin, std::cout, std::cerr);
  }
  if (command == "ground") return RunGroundCommand(rest, std::cout, std::cerr);
  if (command == "audit" || command == "reports" || command == "cache") {
    std::string root = ResolveRoot(pre);
    std::string file = ResolveConfig(pre, root);
    GateConfig loaded;
    Result<FileKind> kind = RealFileSystem().Kind(file);
    if (kind.ok() && *kind != FileKind::kNone) {
      Result<GateConfig> config = LoadConfigFile(file);
      if (!config.ok()) return PrintConfigProblem(config.status());
      loaded = *config;
    }
    OperatorContext ctx{root, loaded, RealFileSystem(), RealHostProbe()};
    if (command == "audit") return RunAuditCommand(rest, ctx, std::cout, std::cerr);
    if (command == "reports") return RunReportsCommand(rest, ctx, std::cout, std::cerr);
    return RunCacheCommand(rest, ctx, std::cout, std::cerr);
  }

  CLI::App app{
      "devflow-gate: an admission plugin host for devflow card transitions.\n"
      "Runs the waterfall of admission policies in devflow-gate.yaml before a card moves."};
  app.name("devflow-gate");
  app.require_subcommand(1);
  app.fallthrough();
  Globals g;
  app.add_option("--root", g.root, "devflow root (default: $DEVFLOW_ROOT, else ./.devflow)");
  app.add_option("--config", g.config, "config file (default: <workspace>/devflow-gate.yaml)");

  int rc = kExitOk;

  // card
  auto* card = app.add_subcommand("card", "create, show and list cards");
  card->require_subcommand(1);
  std::string title, body, body_file, slug, cls, card_id;
  bool json = false;
  auto* create = card->add_subcommand("create", "create a card in draft; prints its id");
  create->add_option("--title", title, "card title")->required();
  create->add_option("--body", body, "Markdown body");
  create->add_option("--body-file", body_file, "read the body from a file");
  create->add_option("--slug", slug, "slug (default: derived from the title)");
  create->add_option("--class", cls, "service class: express or emergency");
  create->callback([&] { rc = CardCreate(g, title, body, body_file, slug, cls); });
  auto* show = card->add_subcommand("show", "show one card, its artifacts and its journal");
  show->add_option("ID", card_id, "card id, e.g. 0001-login-page")->required();
  show->add_flag("--json", json, "print JSON");
  show->callback([&] { rc = CardShow(g, card_id, json); });
  auto* list = card->add_subcommand("list", "list the active cards");
  list->add_flag("--json", json, "print JSON");
  list->callback([&] { rc = CardList(g, json); });

  // artifact
  auto* artifact = app.add_subcommand("artifact", "register artifacts on a card");
  artifact->require_subcommand(1);
  std::string art_kind, art_file, art_by = "human";
  std::optional<int64_t> art_expect;
  auto* add = artifact->add_subcommand(
      "add", "copy FILE into the card as artifacts/<rev>-<kind>.md and journal it");
  add->add_option("ID", card_id, "card id")->required();
  add->add_option("KIND", art_kind, "artifact kind, e.g. design")->required();
  add->add_option("FILE", art_file, "file to register")->required();
  add->add_option("--by", art_by, "actor: human[:NAME], agent[:SESSION], command[:NAME]");
  add->add_option("--expect-revision", art_expect, "revision the card must be at");
  add->callback([&] { rc = ArtifactAdd(g, card_id, art_kind, art_file, art_by, art_expect); });

  // move
  MoveArgs mv;
  auto* move = app.add_subcommand("move", "move a card along an edge, through the waterfall");
  move->add_option("ID", mv.id, "card id")->required();
  move->add_option("TO", mv.to, "target location (stage name or blocked)")->required();
  move->add_option("--by", mv.by, "actor: human[:NAME], agent[:SESSION], command[:NAME]");
  auto* reason_opt = move->add_option("--reason", mv.reason, "why (required for rework moves)");
  move->add_option("--expect-revision", mv.expect,
                   "revision the card must be at (default: current)");
  move->add_flag("--dry-run", mv.dry_run, "run the whole waterfall and the checker; write nothing");
  move->add_flag("--explain", mv.explain, "dispatch nothing, write nothing; show what would run");
  move->add_flag("--json", mv.json, "print one JSON object");
  move->callback([&] {
    mv.reason_given = reason_opt->count() > 0;
    rc = Move(g, mv, argv[0]);
  });

  // config
  auto* config = app.add_subcommand("config", "configuration");
  config->require_subcommand(1);
  auto* check = config->add_subcommand("check", "load and validate the config file");
  check->add_flag("--json", json, "print JSON");
  check->callback([&] { rc = ConfigCheck(g, json); });

  // checker
  auto* checker = app.add_subcommand("checker", "built-in checkers (run by the agent gate)");
  checker->require_subcommand(1);
  auto* grounding = checker->add_subcommand(
      "grounding", "read an agent-gate prompt on stdin; veto ungrounded dates, URLs, refs, hashes");
  grounding->allow_extras();
  grounding->prefix_command();
  grounding->callback(
      [&] { rc = RunGroundingChecker(grounding->remaining(), std::cin, std::cout, std::cerr); });

  // Listed for --help; dispatched above with their own argument parsing.
  app.add_subcommand("audit",
                     "health report of the root: journals, locks, parked cards, cache, ledger");
  app.add_subcommand("reports", "veto reports: list | show PATH|NAME");
  app.add_subcommand("cache", "verdict cache: list | verify | prune [--dry-run]");
  app.add_subcommand("ground",
                     "release_gate.py drop-in: --claim F --evidence F… (see docs/grounding.md)")
      ->allow_extras();

  // CLI11 reports an unknown first word as "A subcommand is required"; name it instead.
  if (!command.empty() && command[0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == command;
    }
    if (!known) {
      std::cerr << "devflow-gate: unknown command \"" << command
                << "\"; commands: card, artifact, move, config, ground, checker, audit, reports, "
                   "cache\n"
                << "run 'devflow-gate --help' (or '<command> --help') for usage\n";
      return kExitUsage;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "devflow-gate: " << e.what() << "\n"
              << "run 'devflow-gate --help' (or '<command> --help') for usage\n";
    return kExitUsage;
  }
  std::cout.flush();
  return rc;
}

}  // namespace devflow

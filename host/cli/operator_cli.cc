#include "host/cli/operator_cli.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <tuple>

#include "host/terminal.h"
#include "reports/audit.h"
#include "reports/cache_command.h"
#include "reports/ledger_command.h"
#include "reports/report_command.h"

namespace devflow {
namespace {

constexpr int kExitUsage = 2;

// Each command's `--help` ends with what its exit codes mean (docs/operations.md).
const char kReadExits[] =
    "exit codes: 0 done; 1 a directory or file could not be read; 2 usage error or the root "
    "does not exist";

struct Shared {
  WithOperatorContext with;
  int* rc;
  std::ostream* out;
  std::ostream* err;
  void Run(const std::function<int(const OperatorContext&, std::ostream&, std::ostream&)>& fn) {
    *rc = with([&](const OperatorContext& ctx) { return fn(ctx, *out, *err); });
  }
};

CLI::App* Sub(CLI::App& parent, const std::string& name, const std::string& about,
              const std::string& exits) {
  CLI::App* sub = parent.add_subcommand(name, about);
  sub->footer(exits);
  return sub;
}

void AddLedgerCommands(CLI::App& app, const std::shared_ptr<Shared>& shared,
                       const std::shared_ptr<bool>& json, const LazyCommands& lazy);

const char kPruneExits[] =
    "exit codes: 0 done; 1 a file could not be read, replaced or removed; 2 usage error (no "
    "--older-than or --keep: nothing is pruned by default) or the root does not exist";

// `--older-than`, `--keep`, `--dry-run` of `reports prune` and `ledger prune`.
struct RetentionArgs {
  std::string older_than;
  std::optional<size_t> keep;
  bool dry_run = false;
};

using PruneCommand = int (*)(const OperatorContext&, const RetentionRule&, bool dry_run, bool json,
                             std::ostream&, std::ostream&);

void AddRetentionOptions(CLI::App* sub, RetentionArgs& args) {
  sub->add_option("--older-than", args.older_than,
                  "remove what is at least this old: a duration (30d, 12h, 45m, 0s) or an "
                  "ISO-8601 UTC time");
  sub->add_option("--keep", args.keep, "keep the newest N whatever their age");
  sub->add_flag("--dry-run", args.dry_run, "say what would be removed; remove nothing");
}

// The rule the options give, or nullopt after a usage error on `err`: without --older-than
// or --keep nothing is pruned (docs/operations.md "Retention").
std::optional<RetentionRule> Retention(const RetentionArgs& args, const char* command,
                                       const OperatorContext& ctx, std::ostream& err) {
  RetentionRule rule;
  rule.keep = args.keep;
  if (!args.older_than.empty()) {
    rule.cut_ms = ParseTimeArg(args.older_than, ctx.probe.NowMs());
    if (!rule.cut_ms) {
      err << "devflow-gate: " << command << ": --older-than " << TerminalLine(args.older_than)
          << " is not a duration; pass one like 30d, 12h, 45m or 0s (or an ISO-8601 UTC time)\n";
      return std::nullopt;
    }
  }
  if (!rule.cut_ms && !rule.keep) {
    err << "devflow-gate: " << command
        << ": pass --older-than DURATION, --keep N, or both; nothing is pruned by default\n";
    return std::nullopt;
  }
  return rule;
}

// `<group> prune` with the retention options, --json, and `run` as what it does.
void AddPruneCommand(CLI::App& group, const char* command, const std::string& about,
                     const std::shared_ptr<Shared>& shared, const std::shared_ptr<bool>& json,
                     PruneCommand run) {
  auto args = std::make_shared<RetentionArgs>();
  CLI::App* prune = Sub(group, "prune", about, kPruneExits);
  AddRetentionOptions(prune, *args);
  prune->add_flag("--json", *json, "print JSON");
  prune->callback([=] {
    shared->Run([=](const OperatorContext& ctx, std::ostream& o, std::ostream& e) {
      auto rule = Retention(*args, command, ctx, e);
      if (!rule) return kExitUsage;
      return run(ctx, *rule, args->dry_run, *json, o, e);
    });
  });
}

}  // namespace

Status CheckRootExists(FileSystem& fs, const std::string& root) {
  Result<FileKind> kind = fs.Kind(root);
  if (!kind.ok()) {
    return Status::Error("usage", "the devflow root " + root +
                                      " cannot be checked: " + kind.status().message() +
                                      " (pass --root DIR or set DEVFLOW_ROOT)");
  }
  if (*kind == FileKind::kDir) return Status::Ok();
  return Status::Error("usage",
                       "the devflow root " + root +
                           (*kind == FileKind::kNone ? " does not exist" : " is not a directory") +
                           " (pass --root DIR or set DEVFLOW_ROOT)");
}

void LazyCommands::Add(CLI::App* command, std::function<void()> build) const {
  if (invoked_.empty() || invoked_[0] == '-' || invoked_ == command->get_name()) {
    build();
    return;
  }
  command->preparse_callback([build = std::move(build)](std::size_t) { build(); });
}

void AddOperatorCommands(CLI::App& app, WithOperatorContext with, int& rc, std::ostream& out,
                         std::ostream& err, const LazyCommands& lazy) {
  auto shared = std::make_shared<Shared>(Shared{std::move(with), &rc, &out, &err});
  auto json = std::make_shared<bool>(false);
  auto dry_run = std::make_shared<bool>(false);
  auto what = std::make_shared<std::string>();

  // audit
  CLI::App* audit = Sub(app, "audit",
                        "health report of the root: journals, locks, parked cards, cache, "
                        "reports, ledger",
                        "exit codes: 0 healthy (warnings allowed); 1 problems found; 2 usage "
                        "error or the root does not exist");
  lazy.Add(audit, [=] {
    audit->add_flag("--json", *json, "print one JSON object");
    audit->callback(
        [=] { shared->Run([=](auto& ctx, auto& o, auto& e) { return Audit(ctx, *json, o, e); }); });
  });

  // reports
  CLI::App* reports =
      Sub(app, "reports", "veto and fault reports: list | show PATH|NAME | prune", kReadExits);
  lazy.Add(reports, [=] {
    reports->require_subcommand(1);
    CLI::App* rlist =
        Sub(*reports, "list", "every veto report of every agent gate's report dir, sorted by path",
            kReadExits);
    rlist->add_flag("--json", *json, "print JSON");
    rlist->callback([=] {
      shared->Run([=](auto& ctx, auto& o, auto& e) { return ReportsList(ctx, *json, o, e); });
    });
    CLI::App* rshow =
        Sub(*reports, "show", "print one report (a bare file name resolves inside the report dirs)",
            "exit codes: 0 printed; 1 the report cannot be read; 2 usage error, "
            "unknown report, or a path outside the report dirs");
    rshow->add_option("REPORT", *what, "PATH or file NAME of the report")->required();
    rshow->add_flag("--json", *json, "print {\"path\", \"text\"} with the text verbatim");
    rshow->callback([=] {
      shared->Run(
          [=](auto& ctx, auto& o, auto& e) { return ReportsShow(ctx, *what, *json, o, e); });
    });

    AddPruneCommand(*reports, "reports prune",
                    "remove old veto and fault reports; never one a cached veto or a newer "
                    "ledger row names",
                    shared, json, ReportsPrune);
  });

  // cache
  CLI::App* cache =
      Sub(app, "cache", "verdict cache: list | verify | prune [--dry-run]", kReadExits);
  lazy.Add(cache, [=] {
    cache->require_subcommand(1);
    CLI::App* clist =
        Sub(*cache, "list", "every record of every verdict cache dir with its state", kReadExits);
    clist->add_flag("--json", *json, "print JSON");
    clist->callback([=] {
      shared->Run([=](auto& ctx, auto& o, auto& e) { return CacheList(ctx, *json, o, e); });
    });
    CLI::App* cverify =
        Sub(*cache, "verify", "exit 1 if a record is corrupt, misnamed or unreadable",
            "exit codes: 0 every record current or stale; 1 corrupt, misnamed or "
            "unreadable files, or a dir cannot be listed; 2 usage error");
    cverify->add_flag("--json", *json, "print JSON");
    cverify->callback([=] {
      shared->Run([=](auto& ctx, auto& o, auto& e) { return CacheVerify(ctx, *json, o, e); });
    });
    CLI::App* cprune = Sub(*cache, "prune",
                           "delete stale, corrupt and misnamed records and leftover temp files; "
                           "never a current record",
                           "exit codes: 0 done; 1 a file could not be removed or a dir listed; 2 "
                           "usage error");
    cprune->add_flag("--dry-run", *dry_run, "say what would be removed; remove nothing");
    cprune->add_flag("--json", *json, "print JSON");
    cprune->callback([=] {
      shared->Run(
          [=](auto& ctx, auto& o, auto& e) { return CachePrune(ctx, *dry_run, *json, o, e); });
    });
  });

  AddLedgerCommands(app, shared, json, lazy);
}

namespace {

void AddLedgerCommands(CLI::App& app, const std::shared_ptr<Shared>& shared,
                       const std::shared_ptr<bool>& json, const LazyCommands& lazy) {
  CLI::App* ledger =
      Sub(app, "ledger", "decision ledger: list | show DECISION-ID | prune", kReadExits);
  lazy.Add(ledger, [=] {
    ledger->require_subcommand(1);

    struct ListArgs {
      LedgerFilter filter;
      std::string since, until;
    };
    auto args = std::make_shared<ListArgs>();
    CLI::App* list = Sub(*ledger, "list", "the decisions recorded, oldest first, one line each",
                         "exit codes: 0 listed; 1 the ledger cannot be read or has bad lines "
                         "(named on stderr); 2 usage error or the root does not exist");
    list->add_option("--card", args->filter.card, "only this card id");
    list->add_option("--edge", args->filter.edge, "only this edge, e.g. designing->ready");
    list->add_option("--outcome", args->filter.outcome, "only this outcome")
        ->check(CLI::IsMember(
            {"allowed", "vetoed", "fault", "parked", "interrupted", "rejected", "intent"}));
    list->add_option("--since", args->since,
                     "only rows at or after T: ISO-8601 UTC (2026-09-16, 2026-09-16T08:00Z) or a "
                     "duration ago (12h, 7d)");
    list->add_option("--until", args->until, "only rows before T (same forms as --since)");
    list->add_flag("--json", *json, "print JSON");
    list->callback([=] {
      shared->Run([=](const OperatorContext& ctx, std::ostream& o, std::ostream& e) {
        LedgerFilter filter = args->filter;
        for (auto [text, into, flag] : {std::tuple{&args->since, &filter.since_ms, "--since"},
                                        std::tuple{&args->until, &filter.until_ms, "--until"}}) {
          if (text->empty()) continue;
          *into = ParseTimeArg(*text, ctx.probe.NowMs());
          if (!*into) {
            e << "devflow-gate: ledger list: " << flag << " " << TerminalLine(*text)
              << " is not a time; pass ISO-8601 UTC (2026-09-16T08:00:00Z) or a duration (12h, "
                 "7d)\n";
            return kExitUsage;
          }
        }
        return LedgerList(ctx, filter, *json, o, e);
      });
    });

    auto id = std::make_shared<std::string>();
    CLI::App* show = Sub(*ledger, "show", "every field of one decision",
                         "exit codes: 0 shown; 2 usage error, or no decision has that id");
    show->add_option("DECISION-ID", *id, "the id `ledger list` prints first on each line")
        ->required();
    show->add_flag("--json", *json, "print JSON (the row itself under \"row\")");
    show->callback([=] {
      shared->Run([=](auto& ctx, auto& o, auto& e) { return LedgerShow(ctx, *id, *json, o, e); });
    });

    AddPruneCommand(*ledger, "ledger prune",
                    "rewrite the ledger without old decisions (under its append lock); rows it "
                    "cannot read are kept",
                    shared, json, LedgerPrune);
  });
}

}  // namespace

std::optional<std::string> UnknownSubcommand(CLI::App& app, const std::vector<std::string>& words) {
  CLI::App* at = &app;
  std::string path;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--root" || w == "--config") {
      ++i;
      continue;
    }
    if (w.empty() || w[0] == '-') continue;
    std::vector<CLI::App*> subs = at->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) return std::nullopt;  // a leaf command: the rest are its arguments
    CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (CLI::App* sub : subs) {
      names.push_back(sub->get_name());
      if (sub->get_name() == w) next = sub;
    }
    if (!next) {
      if (at == &app) return std::nullopt;  // the top level names its own unknown commands
      std::string list;
      for (size_t k = 0; k < names.size(); ++k) {
        list += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + names[k];
      }
      return "unknown " + path + " subcommand \"" + w + "\"; use " + list;
    }
    path += (path.empty() ? "" : " ") + w;
    at = next;
  }
  return std::nullopt;
}

int RunOperatorCommand(const std::vector<std::string>& args, const OperatorContext& ctx,
                       std::ostream& out, std::ostream& err) {
  CLI::App app{"devflow-gate operator commands"};
  app.name("devflow-gate");
  app.require_subcommand(1);
  app.fallthrough();
  std::string ignored_root, ignored_config;
  app.add_option("--root", ignored_root);
  app.add_option("--config", ignored_config);
  int rc = 0;
  AddOperatorCommands(
      app,
      [&](const std::function<int(const OperatorContext&)>& body) {
        if (Status s = CheckRootExists(ctx.fs, ctx.root); !s.ok()) {
          err << "devflow-gate: " << TerminalLine(s.message()) << "\n";
          return kExitUsage;
        }
        return body(ctx);
      },
      rc, out, err);
  if (auto unknown = UnknownSubcommand(app, args)) {
    err << "devflow-gate: " << TerminalLine(*unknown) << "\n"
        << "run 'devflow-gate --help' (or '<command> --help') for usage\n";
    return kExitUsage;
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "devflow-gate: " << TerminalLine(e.what()) << "\n"
        << "run 'devflow-gate --help' (or '<command> --help') for usage\n";
    return kExitUsage;
  }
  return rc;
}

}  // namespace devflow

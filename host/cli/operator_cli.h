// The operator commands on the command line (SPEC §7; issue 10 item 11): `audit`, `reports`,
// `cache` and `ledger`, as CLI11 subcommands of the one `devflow-gate` app, so the global
// `--root` / `--config` work before or after the command word and each command's `--help`
// shows its own usage and exit codes. The commands themselves are in reports/.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "host/os.h"
#include "host/status.h"
#include "reports/operator.h"

namespace CLI {
class App;
}

namespace devflow {

/// Ok when `root` is a directory; else code "usage", message
/// `the devflow root <root> does not exist (pass --root DIR or set DEVFLOW_ROOT)` (or "is not a
/// directory", or the lstat error). Every command that reads a root asks this first.
Status CheckRootExists(FileSystem& fs, const std::string& root);

/// Runs `body` with the context of this invocation and returns its exit code, or prints why no
/// context can be built (the config does not load, the root does not exist) and returns 2.
using WithOperatorContext =
    std::function<int(const std::function<int(const OperatorContext&)>& body)>;

/// Builds a top-level command's options, flags, subcommands and callbacks only when that
/// command is parsed (issue 11 item 3: building all ~180 options of every command cost a move
/// ~1.2M instructions). The command itself (name, description) is always added, so the
/// top-level `--help` and the unknown-command messages see every command. `invoked` is the
/// first word after the global options: when it names the command (or is empty or an option,
/// e.g. `--help`), the command is built before parsing; otherwise CLI11's pre-parse callback
/// builds it when the parser meets the command, before the command reads its first argument.
/// Either way CLI11 parses the same options with the same help and errors.
class LazyCommands {
 public:
  explicit LazyCommands(std::string invoked) : invoked_(std::move(invoked)) {}
  void Add(CLI::App* command, std::function<void()> build) const;

 private:
  std::string invoked_;
};

/// Adds `audit`, `reports list|show|prune`, `cache list|verify|prune` and
/// `ledger list|show|prune` to `app`, each built as `lazy` says; a command's callback stores
/// its exit code in `rc`.
void AddOperatorCommands(CLI::App& app, WithOperatorContext with, int& rc, std::ostream& out,
                         std::ostream& err, const LazyCommands& lazy = LazyCommands(""));

/// CLI11 reports an unknown word after a command group ("reports frob") as "A subcommand is
/// required"; this names it instead: `unknown reports subcommand "frob"; use list or show`.
/// `words` are the arguments after the program name; global `--root X` / `--config X` are
/// skipped. nullopt when the words name known commands (or no group).
std::optional<std::string> UnknownSubcommand(CLI::App& app, const std::vector<std::string>& words);

/// The operator commands alone, in process (tests): `args` are the words after
/// `devflow-gate` (e.g. {"cache", "prune", "--dry-run"}); global options are accepted and
/// ignored (`ctx` is given). Parse errors print `devflow-gate: <problem>` plus a hint and
/// return 2; `--help` prints to `out` and returns 0.
int RunOperatorCommand(const std::vector<std::string>& args, const OperatorContext& ctx,
                       std::ostream& out, std::ostream& err);

}  // namespace devflow

// What `devflow-gate config check` finds beyond the load (issue 10 item 12): problems the
// config file parses past but that would make moves fail later — an agent edge naming a
// provider `providers` does not define, a provider program that cannot be found or run, a
// `require:` pattern RE2 rejects, a reportDir or verdictCacheDir through a symlink — and dirs that
// resolve outside the workspace. Nothing is written or run.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "host/os.h"

namespace devflow {

struct ConfigUseFindings {
  /// Each would fail moves later: `config check` exits 2. One line each, naming the item, the
  /// path or pattern, what fails and the fix, e.g.
  /// `providers.claude: program "claude" is not on PATH (/usr/bin:/bin); every check by this
  /// provider would fail closed; install it or give its absolute path in
  /// providers.claude.command`.
  std::vector<std::string> errors;
  /// Worth knowing, not failing: `plugins[1](devflow-agent-gate): reportDir "/srv/r" resolves
  /// to /srv/r, outside the workspace /w; …`. Also (trial12), for each confined provider: a
  /// file its command names beyond the program that lies outside its readable set
  /// (checker/sandbox.h CheckerReadable, ReadableIn); a home directory (the host's $HOME,
  /// /root, each login account's) or a tree holding one that its program's symlink chain, a
  /// PATH entry or a `read:` entry puts in that set; a `read:` path the sandbox masks
  /// (MaskedSecrets).
  std::vector<std::string> warnings;
};

/// `config` as LoadPinnedConfig loaded it for `root` (programs already resolved against
/// `search_path` and the workspace, the parent of `root`). Programs are checked with
/// access(2) X_OK on a regular file; dirs with SymlinkOnPath (the gate's own rule); patterns
/// with checker/grounding.h CheckRequirePatterns (the gate's own compile).
///
/// `unsearched_path` are the host's $PATH entries the gate does not search (checker/sandbox.h
/// UnsearchedPathEntries: relative ones, "" for an empty one): when a provider runs a program,
/// each is a warning (issue 7 item 8), e.g. `PATH holds the relative entry "node_modules/.bin":
/// a provider program found through it is whatever the working directory holds, so whoever
/// controls that directory (the judged agent, in the workspace) could swap it; the gate does
/// not search it (it searches /usr/bin:/bin, and so does every checker); remove it from the
/// gate's PATH`.
ConfigUseFindings CheckConfigUse(const GateConfig& config, const std::string& root,
                                 const std::string& search_path, FileSystem& fs,
                                 const std::vector<std::string>& unsearched_path = {});

}  // namespace devflow

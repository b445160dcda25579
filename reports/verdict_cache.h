// The verdict cache (reference/devflow-upstream.md §4.9): SHA-256-keyed, atomically written,
// the key and file name byte-compatible with the TypeScript agent gate's. A record carries two
// fields more than upstream's: `checkerSha256`, the identity of the checker that gave the
// verdict (issue 7 item 3: its definition and the content of the files its command names), and
// `inputsSha256`, the hash of the input contents it judged (an input edited in place keeps its
// `kind:rev`); a hit needs both to match (docs/decisions.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/os.h"
#include "host/status.h"
#include "host/warnings.h"

namespace devflow {

struct ProviderConfig;

/// One file a command provider's command names (CommandFiles).
struct CommandFile {
  size_t index = 0;  // its position in the command: 0 is the program
  std::string path;  // absolute, except a program that was not found on PATH (as written)
};

/// The files a command provider's command names, what actually runs: `command[0]`, the program
/// (absolute once the config has loaded, host/config ResolveProviderPrograms; a relative one
/// with a '/' resolves against `workspace`, the checker's cwd; a bare name, not found on PATH
/// when the config loaded, stays as written), then each later argument that names an existing
/// regular file, relative ones against `workspace`: an interpreter's script ([python3,
/// check.py], [/bin/sh, check.sh]) or a file the program reads. Empty for nullptr and for a
/// builtin. `config check`'s trust warnings look at the same files (config/config.h).
std::vector<CommandFile> CommandFiles(const ProviderConfig* provider, const std::string& workspace);

/// Files up to this size are pinned by their bytes' SHA-256 (FileIdentity).
constexpr int64_t kFileBytesHashed = 64 * 1024;

/// How the checker identity pins the content of the file at `path` (absolute): `sha256:<hex>`
/// of its bytes when it is a regular file of at most kFileBytesHashed bytes (a checker script,
/// a small program); a bigger one (an interpreter such as /usr/bin/python3, a compiled checker,
/// an LLM CLI) is not read: `stat:<dev>:<ino>:<size>:<mtime ns>:<ctime ns>` (a rewrite in place
/// changes the ctime, which no unprivileged process can set back; a reinstall changes the
/// inode). A file's bytes are hashed once per process: the result is remembered by (dev, ino,
/// size, mtime ns, ctime ns), a bounded map. Errors: the open, fstat or read error naming the
/// path (`open /x/check.sh: Permission denied (EACCES)`), EINVAL for a relative path or a file
/// that is not regular.
Result<std::string> FileIdentity(const std::string& path);

/// The identity of the checker behind a verdict (issue 7 item 3): lowercase hex SHA-256 of the
/// compact JSON
///   {"provider":{"builtin":<name>|null,"args":[…],"command":[…],"env":[…],"network":<bool>,
///    "sandbox":"off"|"on"[,"read":[…]][,"files":[[<path>,<FileIdentity>],…]]
///    [,"envSha256":<EnvIdentity>]},
///    "verdictNonce":<bool>,"replyRules":<kReplyRulesSha256>}
/// (`"provider":null` when `provider` is nullptr: the edge names a provider no config defines;
/// `"files"` only when `files` is not empty: CommandFiles with their FileIdentity, see
/// CurrentCheckerIdentity; `"envSha256"` only when `env_sha256` is not empty: EnvIdentity;
/// `"read"`, the provider's `read:` paths as written, only when it has some). The
/// provider's name is not part of it: the same definition under another name is the same
/// checker. Any change of argv, builtin or its args, env names or values, network or sandbox
/// setting, `read:` paths, of the edge's verdictNonce, of a file's content, or of the reply
/// rules' sources (reports/reply_rules.h), gives another identity.
std::string CheckerIdentity(const ProviderConfig* provider, bool verdict_nonce,
                            const std::vector<std::pair<std::string, std::string>>& files = {},
                            const std::string& env_sha256 = "");

/// What the provider's `env:` variables hold now in the gate's environment (issue 7, ident7
/// item 1: an LLM CLI picks model, endpoint and account from them): lowercase hex SHA-256 over
/// each listed name in listed order, framed `<name>\n<byte length>\n<value>` when set and
/// `<name>\n-\n` when unset; "" when the provider lists none. Only this digest enters the
/// identity, and only the identity's digest is recorded: no value is ever written.
std::string EnvIdentity(const ProviderConfig& provider);

/// CheckerIdentity of `provider` with the content its command's files have now (CommandFiles
/// against `workspace`, each FileIdentity) and the values its `env:` names have now (EnvIdentity):
/// the identity a cached verdict must carry to be
/// hit. A builtin's and an undefined provider's identity has no files. Error: a file that
/// cannot be identified (unreadable, gone, not regular, a program not found on PATH): there
/// is no identity, so no cached verdict is hit and none is stored (fail closed).
Result<std::string> CurrentCheckerIdentity(const ProviderConfig* provider, bool verdict_nonce,
                                           const std::string& workspace);

/// What a verdict judged: lowercase hex SHA-256 over the collected inputs sorted by label (the
/// key's order), each framed as `<label>\n<byte length>\n<bytes>`. `inputs` holds
/// (label `kind:rev`, verbatim content) pairs. Two inputs that differ in any byte, or a label
/// with other content, give another hash; the framing keeps boundaries unambiguous.
std::string InputsIdentity(std::vector<std::pair<std::string, std::string_view>> inputs);

/// What a check judged, as the cache record's and the ledger's `inputsSha256`: the
/// InputsIdentity of everything its prompt carries from the card, its `title` and `body`
/// (framed under the labels `#title` and `#body`, which no `kind:rev` label can be) beside its
/// `inputs`. A card whose title or body changed, with no new artifact registered, is other
/// bytes: a cached verdict on the old ones is a miss (trial17 B1: a rework that added a
/// requirement to the card body was admitted `[cached]`). `inputs` come in the order the
/// prompt lists them (the edge's `inputs:`), and that order is framed too, under `#order`
/// (each label and a `\n`): the key's `inputs` are sorted as upstream's are, but an instruction
/// may refer to position ("the first artifact is the specification"), so a reordered edge is a
/// miss (trial19 1a).
std::string JudgedIdentity(std::string_view title, std::string_view body,
                           std::vector<std::pair<std::string, std::string_view>> inputs);

/// VerdictCacheKey, serialised in exactly this field order.
struct VerdictCacheKey {
  std::string edge;                 // "designing->ready"
  std::string root;                 // absolute devflow root
  std::string card;                 // card id
  std::vector<std::string> inputs;  // "kind:rev" of collected inputs (sorted by Compute)
  std::string prompt_sha256;        // lowercase hex SHA-256 of the configured instruction

  /// Builds a key: sorts `inputs` (byte order == JS default sort for kind grammar strings)
  /// and hashes `instruction`.
  static VerdictCacheKey Compute(std::string edge, std::string root, std::string card,
                                 std::vector<std::string> inputs, const std::string& instruction);
  /// Compact JSON, JS JSON.stringify style:
  /// {"edge":…,"root":…,"card":…,"inputs":[…],"promptSha256":…}
  std::string CompactJson() const;
  /// First 16 hex of SHA-256(CompactJson()) + ".json".
  std::string FileName() const;
};

/// A cache record: {key, verdict, summary, reportPath (veto only), at, checkerSha256,
/// inputsSha256}.
struct VerdictCacheRecord {
  VerdictCacheKey key;
  bool allow = false;
  std::string summary;
  std::optional<std::string> report_path;  // veto only
  std::string at;
  /// CheckerIdentity of the checker that gave the verdict; "" renders no field (an upstream
  /// record, which no lookup hits).
  std::string checker_sha256;
  /// InputsIdentity of the contents the verdict judged; "" renders no field (an upstream record,
  /// or one written before the field, which no lookup hits).
  std::string inputs_sha256;
};

/// JSON.stringify(record, null, 2) + "\n", fields in the order above (`checkerSha256` and
/// `inputsSha256` last, after upstream's five).
std::string RenderCacheRecord(const VerdictCacheRecord& record);

/// Whether a FileSystem::ReadOwnFile error code says the cache file is not a record the gate
/// wrote: a symlink ("ELOOP"), a file with more than one link ("EMLINK"), a FIFO or device
/// ("EINVAL"). Lookup misses it with a warning; `cache verify` and `audit` count it a problem.
bool IsForeignRecord(std::string_view code);

/// The cache directory of one agent gate. Lookups and stores never fail the decision:
/// problems become the upstream warnings (prefix `devflow-agent-gate: `).
class VerdictCache {
 public:
  VerdictCache(std::string dir, FileSystem& fs) : dir_(std::move(dir)), fs_(fs) {}
  const std::string& dir() const { return dir_; }
  std::string PathFor(const VerdictCacheKey& key) const;

  /// The record is read with FileSystem::ReadOwnFile. Absent → silent miss; a symlink, a file
  /// with more than one link, a FIFO or device (IsForeignRecord) → warning `devflow-agent-gate:
  /// the verdict cache at <file> is not a record the gate wrote (<error>); remove it
  /// with devflow-gate cache prune; treating it as a miss` + miss; unreadable → warning
  /// `devflow-agent-gate: could not read the verdict cache at <file>: <error>` + miss; invalid →
  /// `devflow-agent-gate: the verdict cache at <file> is corrupt; treating it as a miss` + miss;
  /// stored key (re-serialised compactly in its stored order) ≠ computed key → silent miss;
  /// `inputsSha256` absent or not a string → silent miss; ≠ `inputs` (an input's bytes changed
  /// under the same `kind:rev`) → warning `devflow-agent-gate: the verdict cache at <file> judged
  /// other contents of [<labels>] (an input was changed in place, without a new registration);
  /// treating it as a miss` + miss, whatever `checkerSha256` says (checked first, so a checker
  /// identity that changed too never hides the edit); `checkerSha256` absent, not a string or ≠
  /// `checker` (another provider definition or nonce setting, or an upstream record) → silent
  /// miss. A veto whose
  /// report is not a regular file any more → warning `devflow-agent-gate: the cached veto at <file>
  /// names the report <path>, which is gone; treating it as a miss`
  /// (`…, which is not a regular file; …`, `…, which cannot be checked: <error>; …`) + miss (issue
  /// 7 item 4).
  std::optional<VerdictCacheRecord> Lookup(const VerdictCacheKey& key, std::string_view checker,
                                           std::string_view inputs, Warnings& warnings) const;

  /// Refuses a cache directory that is, or passes through, a symlink (SymlinkOnPath below
  /// `workspace`, host/os.h), so cache records are never read from or written to wherever a
  /// link points. Refused → warning `devflow-agent-gate: the verdict cache directory
  /// <component> is a symlink; point verdictCacheDir at a real directory; not caching this
  /// attempt` (an lstat error: `devflow-agent-gate: could not check the verdict cache
  /// directory <dir>: <error>; not caching this attempt`) and false. True: usable.
  bool CheckDir(const std::string& workspace, Warnings& warnings) const;

  /// mkdir -p + durable atomic write. Failure → warning `devflow-agent-gate: could not cache
  /// the <allow|veto> verdict at <file>: <error>`; returns false.
  bool Store(const VerdictCacheRecord& record, Warnings& warnings) const;

 private:
  std::string dir_;
  FileSystem& fs_;
};

}  // namespace devflow

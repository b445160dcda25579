#include "reports/verdict_cache.h"

#include "host/json_depth.h"
#include "reports/reply_rules.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <compare>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "config/config.h"
#include "host/json_string.h"
#include "reports/sha256.h"

namespace devflow {
namespace {

using nlohmann::ordered_json;

constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

/// The key as an object in the upstream field order.
ordered_json KeyJson(const VerdictCacheKey& key) {
  ordered_json j = ordered_json::object();
  j["edge"] = key.edge;
  j["root"] = key.root;
  j["card"] = key.card;
  j["inputs"] = key.inputs;
  j["promptSha256"] = key.prompt_sha256;
  return j;
}

/// JS JSON.stringify: no whitespace, '/' and non-ASCII literal.
std::string Compact(const ordered_json& j) { return j.dump(-1, ' ', false, kReplace); }

/// Rebuilds the key from a stored key object that already compared equal to a computed one
/// (so it has exactly the five string fields, in order).
VerdictCacheKey KeyFrom(const ordered_json& j) {
  VerdictCacheKey key;
  key.edge = j.at("edge").get<std::string>();
  key.root = j.at("root").get<std::string>();
  key.card = j.at("card").get<std::string>();
  key.inputs = j.at("inputs").get<std::vector<std::string>>();
  key.prompt_sha256 = j.at("promptSha256").get<std::string>();
  return key;
}

/// decodeCacheRecord's shape rules (reference §4.9): a non-null object, verdict allow|veto,
/// a string summary (empty is fine), and a string reportPath on a veto. `at` is not checked.
bool IsValidRecord(const ordered_json& j) {
  if (!j.is_object()) return false;
  auto verdict = j.find("verdict");
  if (verdict == j.end() || !verdict->is_string()) return false;
  const auto& v = verdict->get_ref<const std::string&>();
  if (v != "allow" && v != "veto") return false;
  auto summary = j.find("summary");
  if (summary == j.end() || !summary->is_string()) return false;
  if (v == "veto") {
    auto report = j.find("reportPath");
    if (report == j.end() || !report->is_string()) return false;
  }
  return true;
}

}  // namespace

std::vector<CommandFile> CommandFiles(const ProviderConfig* provider,
                                      const std::string& workspace) {
  std::vector<CommandFile> files;
  if (!provider || provider->builtin || provider->command.empty()) return files;
  const std::string& program = provider->command[0];
  if (!program.empty()) {
    files.push_back(
        {0, program.find('/') == std::string::npos ? program : ResolveAgainst(workspace, program)});
  }
  for (size_t i = 1; i < provider->command.size(); ++i) {
    if (provider->command[i].empty()) continue;
    std::string file = ResolveAgainst(workspace, provider->command[i]);
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      files.push_back({i, std::move(file)});
    }
  }
  return files;
}

namespace {

// What FileIdentity remembers a hash by: a file whose content changed has another stamp.
struct FileStamp {
  dev_t dev;
  ino_t ino;
  off_t size;
  int64_t mtime_ns;
  int64_t ctime_ns;
  auto operator<=>(const FileStamp&) const = default;
};

FileStamp StampOf(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size,
          int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
          int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec};
}

std::mutex hashed_mutex;
std::map<FileStamp, std::string>& Hashed() {
  static std::map<FileStamp, std::string> hashed;
  return hashed;
}

// The identity of a regular file that needs none of its bytes read: a file over
// kFileBytesHashed is pinned by its stamp, a smaller one whose hash is remembered by its stamp
// has that hash; nullopt when the bytes must be hashed.
std::optional<std::string> KnownIdentity(const struct stat& st) {
  const FileStamp stamp = StampOf(st);
  if (st.st_size > kFileBytesHashed) {
    return "stat:" + std::to_string(stamp.dev) + ":" + std::to_string(stamp.ino) + ":" +
           std::to_string(stamp.size) + ":" + std::to_string(stamp.mtime_ns) + ":" +
           std::to_string(stamp.ctime_ns);
  }
  std::lock_guard<std::mutex> lock(hashed_mutex);
  if (auto found = Hashed().find(stamp); found != Hashed().end()) return found->second;
  return std::nullopt;
}

}  // namespace

Result<std::string> FileIdentity(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return Status::Error("EINVAL", "\"" + path +
                                       "\" is not an absolute path (a program not found "
                                       "on PATH when the config loaded)");
  }
  // A file whose stamp alone is its identity (a big one) or whose hash is remembered by its
  // stamp needs no descriptor: a stat of the path is the same snapshot as the open and fstat
  // below (issue 8: 2 system calls of every cache-hit decision per command file). Anything
  // else (a stat that fails, not a regular file, a stamp not remembered) goes the open path,
  // with its messages.
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    if (std::optional<std::string> known = KnownIdentity(st)) return *known;
  }
  // O_NONBLOCK: a FIFO planted where the program should be cannot hang the gate.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return OsError(errno, "open", path);
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return OsError(errno, "fstat", path);
  if (!S_ISREG(st.st_mode)) {
    return Status::Error("EINVAL", "open " + path + ": not a regular file (EINVAL)");
  }
  const FileStamp stamp = StampOf(st);
  if (std::optional<std::string> known = KnownIdentity(st)) return *known;
  // Its size and one byte more: a file that grew since the fstat is read up to that, and its
  // stamp (below) is then not remembered.
  std::string bytes(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t used = 0;
  while (used < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + used, bytes.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OsError(errno, "read", path);
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  bytes.resize(used);
  std::string identity = "sha256:" + Sha256Hex(bytes);
  // Remembered only when the file did not change while it was read, and last changed at least
  // a second ago: the kernel stamps ctime from a coarse clock, so a rewrite of the same size in
  // the same tick as the change before it could keep the stamp (git's "racily clean" entries).
  struct stat after {};
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const int64_t now_ns = int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
  if (::fstat(fd, &after) == 0 && StampOf(after) == stamp && stamp.ctime_ns < now_ns - 1000000000) {
    std::lock_guard<std::mutex> lock(hashed_mutex);
    if (Hashed().size() >= 1024) Hashed().clear();  // bounded: a long `serve`, rewritten files
    Hashed().emplace(stamp, identity);
  }
  return identity;
}

Result<std::string> CurrentCheckerIdentity(const ProviderConfig* provider, bool verdict_nonce,
                                           const std::string& workspace) {
  std::vector<std::pair<std::string, std::string>> files;
  for (CommandFile& file : CommandFiles(provider, workspace)) {
    Result<std::string> identity = FileIdentity(file.path);
    if (!identity.ok()) return identity.status();
    files.emplace_back(std::move(file.path), std::move(*identity));
  }
  return CheckerIdentity(provider, verdict_nonce, files, provider ? EnvIdentity(*provider) : "");
}

std::string EnvIdentity(const ProviderConfig& provider) {
  if (provider.env.empty()) return "";
  // Each listed name as the gate's environment has it now, framed `<name>\n<byte length>\n<value>`
  // when set and `<name>\n-\n` when unset (a length is digits, so the two never collide).
  std::vector<std::string> frames;
  std::vector<std::string_view> pieces;
  frames.reserve(provider.env.size());
  pieces.reserve(provider.env.size() * 2);
  for (const std::string& name : provider.env) {
    const char* value = std::getenv(name.c_str());
    if (!value) {
      frames.push_back(name + "\n-\n");
      pieces.push_back(frames.back());
      continue;
    }
    frames.push_back(name + '\n' + std::to_string(std::strlen(value)) + '\n');
    pieces.push_back(frames.back());
    pieces.push_back(value);
  }
  return Sha256Hex(pieces);
}

namespace {

// Every member of ProviderConfig but its name, by reference, in declaration order: what the
// identity covers (ComputeCheckerIdentity hashes them, IdentityInputs::Same compares them).
// The structured binding names every member, so a member added to ProviderConfig stops the
// build here ("only N names provided" / "type ... decomposes into M elements") until it is
// added to the binding, and so to both users, or deliberately left out like `name` (issue 7
// item 5: a size assert missed a bool that fit in padding).
auto IdentityFields(const ProviderConfig& provider) {
  const auto& [name, builtin, args, command, env, network, sandbox_off, reply_block_only, read] =
      provider;
  static_cast<void>(name);  // the same definition under another name is the same checker
  return std::tie(builtin, args, command, env, network, sandbox_off, reply_block_only, read);
}

std::string ComputeCheckerIdentity(const ProviderConfig* provider, bool verdict_nonce,
                                   const std::vector<std::pair<std::string, std::string>>& files,
                                   const std::string& env_sha256) {
  ordered_json j = ordered_json::object();
  if (provider) {
    const auto& [builtin, args, command, env, network, sandbox_off, reply_block_only, read] =
        IdentityFields(*provider);
    ordered_json p = ordered_json::object();
    p["builtin"] = builtin ? ordered_json(*builtin) : ordered_json(nullptr);
    p["args"] = args;
    p["command"] = command;
    p["env"] = env;
    p["network"] = network;
    p["sandbox"] = sandbox_off ? "off" : "on";
    // Only when set: an identity without `read:` stays the one a cache already holds.
    if (!read.empty()) p["read"] = read;
    // Likewise: only `reply: block-only` adds a field (another reply rule, another checker).
    if (reply_block_only) p["reply"] = "block-only";
    if (!files.empty()) {
      ordered_json list = ordered_json::array();
      for (const auto& [path, identity] : files) list.push_back({path, identity});
      p["files"] = std::move(list);
    }
    if (!env_sha256.empty()) p["envSha256"] = env_sha256;
    j["provider"] = std::move(p);
  } else {
    j["provider"] = nullptr;
  }
  j["verdictNonce"] = verdict_nonce;
  j["replyRules"] = std::string(kReplyRulesSha256);
  return Sha256Hex(Compact(j));
}

// Everything ComputeCheckerIdentity reads, as values: two equal inputs give one identity.
// Same compares IdentityFields, the fields the identity hashes, so the memo can never answer
// for a definition it did not hash (a new ProviderConfig member stops the build there).
struct IdentityInputs {
  bool has_provider = false;
  ProviderConfig provider;  // name blank: the identity does not cover it
  bool verdict_nonce = false;
  std::vector<std::pair<std::string, std::string>> files;
  std::string env_sha256;

  bool Same(const ProviderConfig* p, bool nonce,
            const std::vector<std::pair<std::string, std::string>>& f,
            const std::string& env) const {
    if (has_provider != (p != nullptr) || verdict_nonce != nonce || env_sha256 != env ||
        files != f) {
      return false;
    }
    if (!p) return true;
    return IdentityFields(provider) == IdentityFields(*p);
  }
};

std::mutex identities_mutex;
std::vector<std::pair<IdentityInputs, std::string>>& Identities() {
  static std::vector<std::pair<IdentityInputs, std::string>> identities;
  return identities;
}

}  // namespace

// Remembered by the whole of its inputs, compared as values (issue 8: the JSON and its hash
// were ~47K instructions of a ~470K cache-hit decision, the same for every attempt of a
// provider): nothing about a file or the environment is assumed, its callers pass them in.
std::string CheckerIdentity(const ProviderConfig* provider, bool verdict_nonce,
                            const std::vector<std::pair<std::string, std::string>>& files,
                            const std::string& env_sha256) {
  {
    std::lock_guard<std::mutex> lock(identities_mutex);
    for (const auto& [seen, identity] : Identities()) {
      if (seen.Same(provider, verdict_nonce, files, env_sha256)) return identity;
    }
  }
  std::string identity = ComputeCheckerIdentity(provider, verdict_nonce, files, env_sha256);
  IdentityInputs in;
  in.has_provider = provider != nullptr;
  if (provider) {
    in.provider = *provider;
    in.provider.name.clear();
  }
  in.verdict_nonce = verdict_nonce;
  in.files = files;
  in.env_sha256 = env_sha256;
  std::lock_guard<std::mutex> lock(identities_mutex);
  if (Identities().size() >= 64) Identities().clear();  // bounded: reloads, rewritten checkers
  Identities().emplace_back(std::move(in), identity);
  return identity;
}

std::string InputsIdentity(std::vector<std::pair<std::string, std::string_view>> inputs) {
  std::sort(inputs.begin(), inputs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // The framing is hashed piece by piece: the contents are not copied into one string (that
  // was a second copy of every input, 32 MiB for two 16 MiB ones; issue 11 item 2).
  std::vector<std::string> frames;
  frames.reserve(inputs.size());
  std::vector<std::string_view> pieces;
  pieces.reserve(inputs.size() * 2);
  for (const auto& [label, content] : inputs) {
    frames.push_back(label + '\n' + std::to_string(content.size()) + '\n');
    pieces.push_back(frames.back());
    pieces.push_back(content);
  }
  return Sha256Hex(pieces);
}

std::string JudgedIdentity(std::string_view title, std::string_view body,
                           std::vector<std::pair<std::string, std::string_view>> inputs) {
  // The order the prompt lists the inputs in (the edge's `inputs:`), before InputsIdentity sorts
  // them: an instruction may refer to position (trial19 1a).
  std::string order;
  for (const auto& each : inputs) order.append(each.first).push_back('\n');
  inputs.emplace_back("#title", title);
  inputs.emplace_back("#body", body);
  inputs.emplace_back("#order", order);
  return InputsIdentity(std::move(inputs));
}

VerdictCacheKey VerdictCacheKey::Compute(std::string edge, std::string root, std::string card,
                                         std::vector<std::string> inputs,
                                         const std::string& instruction) {
  // std::string compares bytes as unsigned char: for kind-grammar strings (ASCII) this is
  // exactly JS's default UTF-16 code-unit sort.
  std::sort(inputs.begin(), inputs.end());
  VerdictCacheKey key;
  key.edge = std::move(edge);
  key.root = std::move(root);
  key.card = std::move(card);
  key.inputs = std::move(inputs);
  key.prompt_sha256 = Sha256Hex(instruction);
  return key;
}

// Compact(KeyJson(*this)), written directly (issue 8: it is worked out on every lookup); the
// same bytes: tests/reports/verdict_cache_test.cc compares the two.
std::string VerdictCacheKey::CompactJson() const {
  std::string out = "{\"edge\":";
  AppendJsonString(out, edge);
  out += ",\"root\":";
  AppendJsonString(out, root);
  out += ",\"card\":";
  AppendJsonString(out, card);
  out += ",\"inputs\":[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, inputs[i]);
  }
  out += "],\"promptSha256\":";
  AppendJsonString(out, prompt_sha256);
  out += '}';
  return out;
}

namespace {
// First 16 hex of SHA-256(compact) + ".json", for a key whose CompactJson() is `compact`.
std::string FileNameOf(const std::string& compact) {
  return Sha256Hex(compact).substr(0, 16) + ".json";
}
}  // namespace

std::string VerdictCacheKey::FileName() const { return FileNameOf(CompactJson()); }

std::string RenderCacheRecord(const VerdictCacheRecord& record) {
  ordered_json j = ordered_json::object();
  j["key"] = KeyJson(record.key);
  j["verdict"] = record.allow ? "allow" : "veto";
  j["summary"] = record.summary;
  if (!record.allow) j["reportPath"] = record.report_path.value_or("");
  j["at"] = record.at;
  if (!record.checker_sha256.empty()) j["checkerSha256"] = record.checker_sha256;
  if (!record.inputs_sha256.empty()) j["inputsSha256"] = record.inputs_sha256;
  return j.dump(2, ' ', false, kReplace) + "\n";
}

bool IsForeignRecord(std::string_view code) {
  return code == "ELOOP" || code == "EMLINK" || code == "EINVAL";
}

std::string VerdictCache::PathFor(const VerdictCacheKey& key) const {
  return JoinPath(dir_, key.FileName());
}

namespace {

// What Lookup needs of a record's bytes, worked out once per distinct bytes. `valid`: parsed,
// not too deep, IsValidRecord. `key_compact`: the stored key re-serialised in its stored order
// (absent: no key). The two identities when present as strings. `record`: key (when the stored
// key has the five fields), verdict, summary, reportPath, at.
struct DecodedRecord {
  bool valid = false;
  std::optional<std::string> key_compact;
  std::optional<std::string> checker_sha256;
  std::optional<std::string> inputs_sha256;
  VerdictCacheRecord record;
};

std::shared_ptr<const DecodedRecord> DecodeBytes(const std::string& raw) {
  auto out = std::make_shared<DecodedRecord>();
  // Too deep to be a record, and re-serialising it below would recurse: corrupt.
  ordered_json j = JsonNestingDepth(raw) > kMaxJsonDepth
                       ? ordered_json(ordered_json::value_t::discarded)
                       : ordered_json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !IsValidRecord(j)) return out;
  out->valid = true;
  if (auto stored_key = j.find("key"); stored_key != j.end()) {
    out->key_compact = Compact(*stored_key);
    try {
      out->record.key = KeyFrom(*stored_key);
    } catch (const nlohmann::json::exception&) {
      // Not the five string fields: its compact form cannot equal a computed key's.
    }
  }
  if (auto c = j.find("checkerSha256"); c != j.end() && c->is_string()) {
    out->checker_sha256 = c->get<std::string>();
  }
  if (auto i = j.find("inputsSha256"); i != j.end() && i->is_string()) {
    out->inputs_sha256 = i->get<std::string>();
  }
  VerdictCacheRecord& record = out->record;
  record.allow = j["verdict"] == "allow";
  record.summary = j["summary"].get<std::string>();
  if (!record.allow) record.report_path = j["reportPath"].get<std::string>();
  if (auto at = j.find("at"); at != j.end() && at->is_string()) record.at = at->get<std::string>();
  return out;
}

// Decoding is a function of the bytes alone, so the decoding of bytes seen before is reused:
// the record is still read from disk on every lookup (no stat-keyed memo: docs/decisions.md),
// only its parse is skipped when the bytes are equal to ones already decoded (issue 8: the
// parse was ~80K instructions of a ~470K cache-hit decision). Bounded; a long `serve` that
// sees many records starts over.
std::mutex decoded_mutex;
std::unordered_map<std::string, std::shared_ptr<const DecodedRecord>>& Decoded() {
  static std::unordered_map<std::string, std::shared_ptr<const DecodedRecord>> decoded;
  return decoded;
}

std::shared_ptr<const DecodedRecord> Decode(const std::string& raw) {
  {
    std::lock_guard<std::mutex> lock(decoded_mutex);
    if (auto found = Decoded().find(raw); found != Decoded().end()) return found->second;
  }
  std::shared_ptr<const DecodedRecord> decoded = DecodeBytes(raw);
  if (raw.size() <= 64 * 1024) {  // a record of our writing is well under 1 KiB
    std::lock_guard<std::mutex> lock(decoded_mutex);
    if (Decoded().size() >= 256) Decoded().clear();
    Decoded().emplace(raw, decoded);
  }
  return decoded;
}

}  // namespace

std::optional<VerdictCacheRecord> VerdictCache::Lookup(const VerdictCacheKey& key,
                                                       std::string_view checker,
                                                       std::string_view inputs,
                                                       Warnings& warnings) const {
  // The key's JSON is built once: it names the file and is compared with the stored key.
  const std::string compact = key.CompactJson();
  const std::string file = JoinPath(dir_, FileNameOf(compact));
  // Only the regular file the gate wrote is a record: a symlink or a hard link in its place
  // (a planted allow anywhere) is never read, as a symlinked cache directory is never used.
  auto raw = fs_.ReadOwnFile(file);
  if (!raw.ok()) {
    const std::string code = raw.status().code();
    if (IsForeignRecord(code)) {
      warnings.Warn("devflow-agent-gate: the verdict cache at " + file +
                    " is not a record the gate wrote (" + raw.status().message() +
                    "); remove it with `devflow-gate cache prune`; treating it as a miss");
    } else if (code != "ENOENT") {
      warnings.Warn("devflow-agent-gate: could not read the verdict cache at " + file + ": " +
                    raw.status().message());
    }
    return std::nullopt;
  }
  std::shared_ptr<const DecodedRecord> decoded = Decode(*raw);
  if (!decoded->valid) {
    warnings.Warn("devflow-agent-gate: the verdict cache at " + file +
                  " is corrupt; treating it as a miss");
    return std::nullopt;
  }
  // The filename-hash collision guard: the stored key, re-serialised in its stored order,
  // must equal the computed one; a reordered, extra or missing field is a silent miss.
  if (!decoded->key_compact || *decoded->key_compact != compact) return std::nullopt;
  // The verdict belongs to the contents it judged: `kind:rev` names a registration, and the
  // file behind it can be edited in place (the producer can write it); so can card.md, whose
  // title and body the prompt carries too (`inputs` is their JudgedIdentity; trial17 B1). A record
  // without the field (upstream's, or ours before it) is a silent miss; other contents are a miss
  // the operator is told of, whatever checker gave the record: checked before the checker, so an
  // edit in place is never hidden behind a checker identity that changed too (a stat identity moves
  // with the program's ctime; trial15: the warning went missing 1 run in 150).
  if (!decoded->inputs_sha256) return std::nullopt;
  if (*decoded->inputs_sha256 != inputs) {
    std::string labels;
    for (const std::string& l : key.inputs) labels += (labels.empty() ? "" : ", ") + l;
    warnings.Warn("devflow-agent-gate: the verdict cache at " + file +
                  " judged other contents of [" + labels +
                  "] or of the card's title and body (one was changed in place, without a new "
                  "registration), or them in another order (the edge's inputs were reordered); "
                  "treating it as a miss");
    return std::nullopt;
  }
  // The verdict belongs to the checker that gave it: another provider definition, another
  // verdictNonce setting, or a record without the field (upstream's, or ours before it) is a
  // silent miss, and the checker runs again.
  if (checker.empty() || !decoded->checker_sha256 || *decoded->checker_sha256 != checker) {
    return std::nullopt;
  }

  VerdictCacheRecord record = decoded->record;
  record.checker_sha256 = std::string(checker);
  record.inputs_sha256 = std::string(inputs);
  if (!record.allow) {
    // A veto is quoted with its report; a record pointing at a report that is gone is a miss,
    // never a message naming a missing file.
    Result<FileKind> kind = fs_.Kind(*record.report_path);
    if (!kind.ok() || *kind != FileKind::kFile) {
      warnings.Warn("devflow-agent-gate: the cached veto at " + file + " names the report " +
                    *record.report_path +
                    (!kind.ok() ? ", which cannot be checked: " + kind.status().message()
                     : *kind == FileKind::kNone ? std::string(", which is gone")
                                                : std::string(", which is not a regular file")) +
                    "; treating it as a miss");
      return std::nullopt;
    }
  }
  return record;
}

bool VerdictCache::CheckDir(const std::string& workspace, Warnings& warnings) const {
  Result<std::optional<std::string>> link = SymlinkOnPath(fs_, workspace, dir_);
  if (!link.ok()) {
    warnings.Warn("devflow-agent-gate: could not check the verdict cache directory " + dir_ + ": " +
                  link.status().message() + "; not caching this attempt");
    return false;
  }
  if (*link) {
    warnings.Warn("devflow-agent-gate: the verdict cache directory " + **link +
                  " is a symlink; point verdictCacheDir at a real directory; not caching this "
                  "attempt");
    return false;
  }
  return true;
}

bool VerdictCache::Store(const VerdictCacheRecord& record, Warnings& warnings) const {
  const std::string file = PathFor(record.key);
  Status status = fs_.CreateDirs(dir_);
  if (status.ok()) status = fs_.WriteFileAtomic(file, RenderCacheRecord(record));
  if (!status.ok()) {
    warnings.Warn(std::string("devflow-agent-gate: could not cache the ") +
                  (record.allow ? "allow" : "veto") + " verdict at " + file + ": " +
                  status.message());
    return false;
  }
  return true;
}

}  // namespace devflow

#include "support/support.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "host/store.h"
#include "host/warnings.h"
#include "reports/verdict_cache.h"

namespace devflow::test {
namespace fs = std::filesystem;

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/dg-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  // Give back permissions a test may have removed, then delete.
  for (auto it = fs::recursive_directory_iterator(
           path_, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
  fs::remove_all(path_, ec);
}

std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

void MakeExecutable(const std::string& path) { ::chmod(path.c_str(), 0755); }

int64_t DeadPid() {
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) ::_exit(0);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return child;
}

int64_t LivePid() { return ::getpid(); }

std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    auto rel = fs::relative(e.path(), dir).string();
    if (e.is_directory()) {
      out[rel + "/"] = "";
    } else {
      out[rel] = Slurp(e.path().string()).value_or("<unreadable>");
    }
  }
  return out;
}

void FaultyFileSystem::Fail(std::string op, std::string path_part, int err, int times) {
  rules_.push_back(Rule{std::move(op), std::move(path_part), err, times});
}

std::optional<Status> FaultyFileSystem::Match(const std::string& op, const std::string& path,
                                              const std::string& shown_op,
                                              const std::string& shown_path) {
  for (auto& r : rules_) {
    if (r.op == op && r.times != 0 && path.find(r.path_part) != std::string::npos) {
      if (r.times > 0) --r.times;
      return OsError(r.err, shown_op, shown_path);
    }
  }
  return std::nullopt;
}

std::optional<Status> FaultyFileSystem::Check(const std::string& op, const std::string& path) {
  if (auto s = Match(op, path, op, path)) return s;
  if (before) before(op, path);
  return std::nullopt;
}

Result<std::string> FaultyFileSystem::ReadFile(const std::string& p) {
  if (auto s = Check("read", p)) return *s;
  return base_.ReadFile(p);
}
Status FaultyFileSystem::WriteFileAtomic(const std::string& p, std::string_view d, Replace replace,
                                         std::string_view read_before) {
  if (auto s = Check("write-atomic", p)) return *s;
  Status written = base_.WriteFileAtomic(p, d, replace, read_before);
  if (!written.ok()) return written;
  // The file is in place; what fails is the fsync of its directory that makes the rename durable.
  if (auto s = Match("write-atomic-placed", p, "fsync", p.substr(0, p.find_last_of('/')))) {
    return *s;
  }
  return written;
}
Status FaultyFileSystem::AppendDurable(const std::string& p, std::string_view d) {
  if (auto s = Check("append", p)) return *s;
  return base_.AppendDurable(p, d);
}
Status FaultyFileSystem::ReplaceLocked(
    const std::string& p,
    const std::function<std::optional<std::string>(const std::string&)>& rewrite) {
  if (auto s = Check("replace-locked", p)) return *s;
  return base_.ReplaceLocked(p, rewrite);
}
Status FaultyFileSystem::CreateExclusive(const std::string& p, std::string_view d) {
  if (auto s = Check("create-exclusive", p)) return *s;
  return base_.CreateExclusive(p, d);
}
Status FaultyFileSystem::CreateDirs(const std::string& p) {
  if (auto s = Check("mkdirs", p)) return *s;
  return base_.CreateDirs(p);
}
Status FaultyFileSystem::CreateDirExclusive(const std::string& p) {
  if (auto s = Check("mkdir-exclusive", p)) return *s;
  return base_.CreateDirExclusive(p);
}
Status FaultyFileSystem::RemoveFile(const std::string& p) {
  if (auto s = Check("remove", p)) return *s;
  return base_.RemoveFile(p);
}
Result<std::vector<std::string>> FaultyFileSystem::ListDir(const std::string& p) {
  if (auto s = Check("list", p)) return *s;
  return base_.ListDir(p);
}
Result<FileKind> FaultyFileSystem::Kind(const std::string& p) {
  if (auto s = Check("kind", p)) return *s;
  return base_.Kind(p);
}
Result<std::string> FaultyFileSystem::ReadFileBeneath(const std::string& base,
                                                      const std::string& rel) {
  if (auto s = Check("read", JoinPath(base, rel))) return *s;
  return base_.ReadFileBeneath(base, rel);
}

Status FaultyFileSystem::RemoveDir(const std::string& p) {
  if (auto s = Check("rmdir", p)) return *s;
  return base_.RemoveDir(p);
}

Result<std::string> FaultyFileSystem::ReadOwnFile(const std::string& p) {
  if (auto s = Check("read", p)) return *s;
  return base_.ReadOwnFile(p);
}

Result<std::string> FaultyFileSystem::ReadNamedFile(const std::string& p) {
  if (auto s = Check("read", p)) return *s;
  return base_.ReadNamedFile(p);
}

RunResult RunProgram(const std::vector<std::string>& argv, const std::string& cwd,
                     const std::map<std::string, std::string>& env, const std::string& stdin_text) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC))
    throw std::runtime_error("pipe2 failed");
  // PATH, HOME and LANG unless `env` names them (a name must appear once: getenv takes the
  // first).
  std::map<std::string, std::string> all = env;
  const char* path = std::getenv("PATH");
  all.emplace("PATH", path ? path : "/usr/bin:/bin");
  const char* home = std::getenv("HOME");
  all.emplace("HOME", home ? home : "/tmp");
  all.emplace("LANG", "C.UTF-8");
  std::vector<std::string> envs;
  for (auto& [k, v] : all) envs.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (auto& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::signal(SIGPIPE, SIG_DFL);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(126);
    ::execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  RunResult r;
  size_t written = 0;
  int infd = in[1];
  if (stdin_text.empty()) {
    ::close(infd);
    infd = -1;
  }
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    pollfd p[3];
    int n = 0;
    int iout = -1, ierr = -1, iin = -1;
    if (out_open) {
      p[n] = {out[0], POLLIN, 0};
      iout = n++;
    }
    if (err_open) {
      p[n] = {err[0], POLLIN, 0};
      ierr = n++;
    }
    if (infd >= 0) {
      p[n] = {infd, POLLOUT, 0};
      iin = n++;
    }
    if (::poll(p, n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (iin >= 0 && p[iin].revents) {
      ssize_t w = ::write(infd, stdin_text.data() + written, stdin_text.size() - written);
      if (w > 0) written += w;
      if (w < 0 || written == stdin_text.size()) {
        ::close(infd);
        infd = -1;
      }
    }
    if (iout >= 0 && p[iout].revents) {
      ssize_t k = ::read(out[0], buf, sizeof buf);
      if (k > 0)
        r.out.append(buf, k);
      else
        out_open = false;
    }
    if (ierr >= 0 && p[ierr].revents) {
      ssize_t k = ::read(err[0], buf, sizeof buf);
      if (k > 0)
        r.err.append(buf, k);
      else
        err_open = false;
    }
  }
  if (infd >= 0) ::close(infd);
  ::close(out[0]);
  ::close(err[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  return r;
}

RunResult RunGate(const std::vector<std::string>& args, const std::string& cwd,
                  const std::map<std::string, std::string>& env, const std::string& stdin_text) {
  std::vector<std::string> argv{GateBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, cwd, env, stdin_text);
}

std::string GateBinary() { return DG_BINARY; }
std::string SourceDir() { return DG_SOURCE_DIR; }

std::string JudgedInputsOf(const std::string& root, const std::string& id,
                           std::vector<std::string> labels, const std::vector<std::string>& kinds) {
  auto position = [&kinds](const std::string& label) {
    const std::string kind = label.substr(0, label.find(':'));
    return std::find(kinds.begin(), kinds.end(), kind) - kinds.begin();
  };
  std::stable_sort(labels.begin(), labels.end(), [&](const std::string& a, const std::string& b) {
    return position(a) < position(b);
  });
  CollectedWarnings warnings;
  Store store(root, RealFileSystem(), SystemClock(), warnings);
  Result<Card> card = store.Read(id);
  if (!card.ok()) return "";
  std::vector<std::string> contents;
  for (const std::string& label : labels) {
    const ArtifactRecord* found = nullptr;
    for (const ArtifactRecord& record : card->artifact_records) {
      if (record.kind && std::string(*record.kind) + ":" + std::to_string(record.rev) == label) {
        found = &record;
      }
    }
    if (!found) return "";
    Result<std::string> content = ReadArtifact(RealFileSystem(), card->dir, found->path);
    if (!content.ok()) return "";
    contents.push_back(std::move(*content));
  }
  std::vector<std::pair<std::string, std::string_view>> inputs;
  for (size_t i = 0; i < labels.size(); ++i) inputs.emplace_back(labels[i], contents[i]);
  return JudgedIdentity(card->title, card->body, std::move(inputs));
}

}  // namespace devflow::test

// SubprocessChecker against real processes: fake checker scripts in tests/fixtures/checkers.
#include "checker/subprocess.h"

#include <dirent.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "checker/checker_support.h"
#include "support/support.h"

namespace devflow {
namespace {

using test::TempDir;
using Clock = std::chrono::steady_clock;

std::string Fixture(const std::string& name) {
  return test::SourceDir() + "/tests/fixtures/checkers/" + name;
}

ProviderConfig Command(std::string name, std::vector<std::string> command,
                       std::vector<std::string> env = {}) {
  ProviderConfig p;
  p.name = std::move(name);
  p.command = std::move(command);
  p.env = std::move(env);
  return p;
}

// A request whose workspace is `workspace` (the checker's cwd).
CheckRequest Request(const std::string& provider, const std::string& workspace,
                     PromptPieces prompt = "check this\n", int64_t timeout_ms = 20000) {
  CheckRequest r;
  r.provider = provider;
  r.prompt = std::move(prompt);
  r.timeout_ms = timeout_ms;
  r.card_id = "0007-login";
  r.edge = "designing->ready";
  r.root = workspace + "/.devflow";
  r.workspace = workspace;
  return r;
}

// Agent-gate prompt parts with inputs of `sizes` bytes, each input a pattern of its own (its
// number on every line), so a piece dropped, written twice or swapped changes the bytes.
PromptParts PatternParts(const std::vector<size_t>& sizes, bool nonce = false) {
  PromptParts parts;
  parts.instruction = "Check the inputs.";
  parts.card_id = "0007-login";
  parts.edge = "designing->ready";
  parts.title = "Login";
  parts.body = "Body of the card.";
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string line = "input " + std::to_string(i) + " of the streamed prompt\n";
    std::string content;
    content.reserve(sizes[i] + line.size());
    while (content.size() < sizes[i]) content += line;
    content.resize(sizes[i]);
    parts.inputs.push_back(
        PromptInput{"k" + std::to_string(i), static_cast<int64_t>(i + 1), std::move(content)});
  }
  if (nonce) parts.nonce = "0123456789abcdef0123456789abcdef";
  return parts;
}

// The prompt the agent gate sends for such parts: pieces, never joined.
PromptPieces GatePrompt(const std::vector<size_t>& sizes) {
  return AssemblePromptPieces(PatternParts(sizes));
}

SubprocessOptions FastOptions(const std::string& scratch_parent = "") {
  SubprocessOptions o;
  o.term_grace_ms = 200;
  o.scratch_parent = scratch_parent;
  o.bwrap = test::TestBwrap();
  return o;
}

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Pids of running processes whose process group is `pgid`.
std::vector<pid_t> RunningMembers(pid_t pgid) {
  std::vector<pid_t> members;
  DIR* dir = ::opendir("/proc");
  REQUIRE(dir != nullptr);
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    // A process may end between readdir and the read (ESRCH): it is then no member.
    std::string text;
    int fd = ::open((std::string("/proc/") + e->d_name + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[1024];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
      text.append(buf, static_cast<size_t>(n));
    ::close(fd);
    size_t paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(text.substr(paren + 1));
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (!(rest >> state >> ppid >> pgrp)) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') members.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return members;
}

std::string Canonical(const std::string& path) {
  return std::filesystem::weakly_canonical(path).string();
}

TEST_CASE("an allow reply passes through byte for byte") {
  TempDir ws;
  SubprocessChecker checker({Command("fake", {Fixture("allow.sh")})}, "/nonexistent/devflow-gate",
                            FastOptions());
  auto reply = checker.Dispatch(Request("fake", ws.path()));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text ==
        "Looks grounded.\n\n```json\n{\"verdict\":\"allow\",\"summary\":\"ok\",\"findings\":[]}"
        "\n```\n");
}

TEST_CASE("the prompt reaches the checker's stdin byte for byte") {
  TempDir ws;
  std::string prompt = "Check: caf\xc3\xa9 \r\n\ttabs and a NUL \0 byte\n";
  prompt.append(std::string("\0", 1));
  for (int i = 0; prompt.size() < 3 * 1024 * 1024; ++i)
    prompt += "line " + std::to_string(i) + "\n";
  SubprocessChecker checker({Command("echo", {Fixture("echo_prompt.sh")})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("echo", ws.path(), prompt));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text.size() == prompt.size());
  CHECK(reply->text == prompt);
}

TEST_CASE("an empty prompt reaches the checker as an immediate EOF") {
  TempDir ws;
  SubprocessChecker checker({Command("echo", {Fixture("echo_prompt.sh")})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("echo", ws.path(), ""));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text == "");
}

TEST_CASE(
    "the checker gets only the minimal environment, no host fd, the workspace as cwd and "
    "a scratch HOME that is removed afterwards") {
  TempDir ws, scratch_parent;
  ::setenv("DG_SECRET", "must-not-leak", 1);
  ::setenv("DG_PASS", "passed-through", 1);
  ::unsetenv("DG_UNSET");
  // Host fds without CLOEXEC: the 1.81 launcher would hand them to the child (cpp-notes §1.4).
  int leaky_file = ::open("/dev/null", O_RDONLY);
  int leaky_pipe[2];
  REQUIRE(leaky_file >= 0);
  REQUIRE(::pipe(leaky_pipe) == 0);

  SubprocessChecker checker(
      {Command("probe", {Fixture("probe.py")}, {"DG_PASS", "DG_UNSET", "HOME"})}, "",
      FastOptions(scratch_parent.path()));
  auto reply = checker.Dispatch(Request("probe", ws.path()));
  ::close(leaky_file);
  ::close(leaky_pipe[0]);
  ::close(leaky_pipe[1]);
  ::unsetenv("DG_SECRET");
  ::unsetenv("DG_PASS");
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());

  auto probe = nlohmann::json::parse(reply->text);
  std::set<std::string> names;
  for (auto& [name, value] : probe["env"].items()) names.insert(name);
  INFO("checker environment: ", probe["env"].dump());
  CHECK(names == std::set<std::string>{"DEVFLOW_GATE_CARD", "DEVFLOW_GATE_EDGE",
                                       "DEVFLOW_GATE_INPUTS", "DEVFLOW_GATE_ROOT", "DG_PASS",
                                       "HOME", "LANG", "PATH", "TMPDIR"});
  std::map<std::string, std::string> env = probe["env"];
  // The checker got "passed-through"; the reply that quotes it comes back redacted (14 bytes:
  // the short marker, checker/redact.h).
  CHECK(env["DG_PASS"] == "[secret]");
  CHECK(env["DEVFLOW_GATE_CARD"] == "0007-login");
  CHECK(env["DEVFLOW_GATE_EDGE"] == "designing->ready");
  CHECK(env["DEVFLOW_GATE_ROOT"] == ws.path() + "/.devflow");
  CHECK(env["PATH"] == std::string(std::getenv("PATH")));
  const char* lang = std::getenv("LANG");
  CHECK(env["LANG"] == std::string(lang && *lang ? lang : "C.UTF-8"));

  std::string home = env["HOME"];
  CHECK(env["TMPDIR"] == home);
  // Below the per-user parent the gate owns (mode 0700), which stays for the next check.
  const std::string mine = scratch_parent.path() + "/devflow-gate-" + std::to_string(::geteuid());
  CHECK(std::filesystem::path(home).parent_path().string() == mine);
  CHECK_FALSE(std::filesystem::exists(home));  // removed, with the file the probe left in it
  CHECK(std::filesystem::is_empty(mine));

  CHECK(probe["fds"].dump() == "[0,1,2]");
  CHECK(Canonical(probe["cwd"].get<std::string>()) == Canonical(ws.path()));
}

TEST_CASE(
    "the checker starts with no signal ignored and none blocked, whatever the host ignores and "
    "blocks, at every level") {
  TempDir ws;
  // The host ignores SIGUSR2 and SIGPIPE (doctest_main) and blocks SIGUSR1 while it dispatches;
  // the reaper ignores the terminal's signals: none of it may reach the checker.
  struct sigaction ignore {
  }, saved_usr2{};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGUSR2, &ignore, &saved_usr2) == 0);
  sigset_t usr1, saved_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  REQUIRE(::pthread_sigmask(SIG_BLOCK, &usr1, &saved_mask) == 0);
  SubprocessChecker checker({Command("signals", {Fixture("signal_state.sh")})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("signals", ws.path()));
  ::pthread_sigmask(SIG_SETMASK, &saved_mask, nullptr);
  ::sigaction(SIGUSR2, &saved_usr2, nullptr);
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST_CASE("a bare program name is searched on the host PATH") {
  TempDir ws;
  // The script in the workspace: a confined checker reads only its readable set (issue 7).
  test::Spit(ws / "allow.sh", test::Slurp(Fixture("allow.sh")).value());
  SubprocessChecker checker({Command("sh", {"sh", "allow.sh"})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("sh", ws.path()));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text.rfind("Looks grounded.\n", 0) == 0);
}

TEST_CASE("an unregistered provider fails closed naming it") {
  TempDir ws;
  SubprocessChecker checker({Command("fake", {Fixture("allow.sh")})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("claude", ws.path()));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == "fault");
  CHECK(reply.status().message() == "subagent provider \"claude\" is not registered");
}

TEST_CASE("a program missing from PATH is a start fault naming the program and the OS error") {
  TempDir ws;
  SubprocessChecker checker({Command("nope", {"devflow-gate-no-such-checker", "-p"})}, "",
                            FastOptions());
  auto reply = checker.Dispatch(Request("nope", ws.path()));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == "fault");
  CHECK(reply.status().message() ==
        "cannot start checker \"devflow-gate-no-such-checker\": No such file or directory");
}

TEST_CASE("a program path that does not exist is a start fault naming the OS error") {
  TempDir ws;
  std::string missing = ws / "bin/absent-checker";
  SubprocessChecker checker({Command("nope", {missing})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("nope", ws.path()));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() ==
        "cannot start checker \"" + missing + "\": No such file or directory");
}

TEST_CASE("a program that is not executable is a start fault naming the OS error") {
  TempDir ws;
  std::string script = ws / "not-executable.sh";
  test::Spit(script, "#!/bin/sh\necho hi\n");
  ::chmod(script.c_str(), 0644);
  SubprocessChecker checker({Command("noexec", {script})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("noexec", ws.path()));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == "fault");
  CHECK(reply.status().message() == "cannot start checker \"" + script + "\": Permission denied");
}

TEST_CASE("a workspace that does not exist is a start fault naming it") {
  TempDir ws;
  SubprocessChecker checker({Command("fake", {Fixture("allow.sh")})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("fake", ws / "gone"));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "cannot start checker \"" + Fixture("allow.sh") +
                                        "\": workspace " + (ws / "gone") +
                                        ": No such file or directory");
}

TEST_CASE("a non-zero exit reports the code and the last non-blank stderr line") {
  TempDir ws;
  SubprocessChecker checker({Command("fail", {Fixture("fail.sh")})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("fail", ws.path()));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == "fault");
  CHECK(reply.status().message() == "the checker ended with exit code 7: boom");
}

TEST_CASE("a non-zero exit without stderr reports only the code") {
  TempDir ws;
  SubprocessChecker checker({Command("false", {"false"})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("false", ws.path()));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker ended with exit code 1");
}

TEST_CASE(
    "a passed env value the checker writes is redacted in the fault, the evidence and the reply "
    "(trial15 L1)") {
  TempDir ws;
  ::setenv("DG_API_KEY", "sk-T15SECRETKEY-0123456789", 1);
  ::setenv("DG_SHORT", "1", 1);
  const std::string script =
      "cat >/dev/null; echo \"reply $DG_API_KEY $DG_SHORT\"; "
      "echo \"key '$DG_API_KEY' short $DG_SHORT\" >&2; exit \"$1\"";
  SubprocessChecker checker(
      {Command("leak", {"/bin/sh", "-c", script, "leak", "1"}, {"DG_API_KEY", "DG_SHORT"}),
       Command("ok", {"/bin/sh", "-c", script, "ok", "0"}, {"DG_API_KEY", "DG_SHORT"})},
      "", FastOptions());
  CheckEvidence evidence;
  CheckRequest request = Request("leak", ws.path());
  request.evidence = &evidence;
  auto failed = checker.Dispatch(request);
  auto replied = checker.Dispatch(Request("ok", ws.path()));
  ::unsetenv("DG_API_KEY");
  ::unsetenv("DG_SHORT");
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().message() ==
        "the checker ended with exit code 1: key '[redacted: DG_API_KEY]' short 1");
  CHECK(evidence.ran);
  CHECK(evidence.reply == "reply [redacted: DG_API_KEY] 1\n");
  CHECK(evidence.reply_bytes == 35);  // what the checker wrote, counted before redaction
  CHECK(evidence.stderr_tail == "key '[redacted: DG_API_KEY]' short 1\n");
  CHECK(checker.last_stderr() == "key '[redacted: DG_API_KEY]' short 1\n");
  REQUIRE_MESSAGE(replied.ok(), replied.status().message());
  CHECK(replied->text == "reply [redacted: DG_API_KEY] 1\n");
  CHECK(replied->stderr_tail == "key '[redacted: DG_API_KEY]' short 1\n");
}

TEST_CASE("a checker killed by a signal reports the signal's name") {
  TempDir ws;
  SubprocessChecker checker({Command("kill", {Fixture("kill_self.sh"), "KILL"}),
                             Command("segv", {Fixture("kill_self.sh"), "SEGV"})},
                            "", FastOptions());
  auto killed = checker.Dispatch(Request("kill", ws.path()));
  REQUIRE_FALSE(killed.ok());
  CHECK(killed.status().message() == "the checker ended with signal SIGKILL");
  auto segv = checker.Dispatch(Request("segv", ws.path()));
  REQUIRE_FALSE(segv.ok());
  CHECK(segv.status().message() == "the checker ended with signal SIGSEGV");
}

TEST_CASE("a hanging checker times out at the deadline and nothing of its group survives") {
  TempDir ws;
  SubprocessChecker checker({Command("hang", {Fixture("hang.sh")})}, "", FastOptions());
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(Request("hang", ws.path(), "x", 300));
  double took = SecondsSince(t0);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == "fault");
  CHECK(reply.status().message() == "the checker exceeded checkTimeoutMs (300ms)");
  CHECK(took >= 0.3);
  CHECK(took < 3.0);
  REQUIRE(checker.last_pgid() > 0);
  CHECK(RunningMembers(checker.last_pgid()).empty());
}

TEST_CASE("a timeout sends SIGTERM first and stays a timeout even if the checker then exits 0") {
  TempDir ws;
  SubprocessChecker checker({Command("term", {Fixture("term_aware.sh")})}, "", FastOptions());
  auto reply = checker.Dispatch(Request("term", ws.path(), "x", 300));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker exceeded checkTimeoutMs (300ms)");
  CHECK(checker.last_stderr() == "term\n");  // the checker's own TERM trap ran
  CHECK(RunningMembers(checker.last_pgid()).empty());
}

TEST_CASE("a checker that ignores SIGTERM is killed once the term grace has passed") {
  TempDir ws;
  SubprocessChecker checker({Command("stubborn", {Fixture("term_ignored.sh")})}, "",
                            FastOptions());  // term grace 200 ms
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(Request("stubborn", ws.path(), "x", 300));
  double took = SecondsSince(t0);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker exceeded checkTimeoutMs (300ms)");
  CHECK(took >= 0.5);
  CHECK(took < 3.0);
  CHECK(RunningMembers(checker.last_pgid()).empty());
}

TEST_CASE("a grandchild holding stdout open does not outlive a checker that exits 0") {
  TempDir ws;
  SubprocessChecker checker({Command("gc", {Fixture("grandchild_exit0.sh")})}, "", FastOptions());
  CheckRequest request = Request("gc", ws.path(), "x", 10000);
  request.card_id = test::UniqueCard();
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(request);
  double took = SecondsSince(t0);
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text == "no verdict here\n");
  CHECK(took < 2.0);  // well inside the 10 s deadline: the group is killed once the child exits
  CHECK(test::SurvivorsOfCard(request.card_id).empty());
  CHECK(RunningMembers(checker.last_pgid()).empty());
}

TEST_CASE(
    "a hanging checker with a grandchild that ignores SIGTERM ends by the timeout and "
    "leaves nothing running") {
  TempDir ws;
  SubprocessChecker checker({Command("gc", {Fixture("grandchild_hang.sh")})}, "", FastOptions());
  CheckRequest request = Request("gc", ws.path(), "x", 300);
  request.card_id = test::UniqueCard();
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(request);
  double took = SecondsSince(t0);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker exceeded checkTimeoutMs (300ms)");
  CHECK(took < 3.0);
  CHECK(test::SurvivorsOfCard(request.card_id).empty());
  CHECK(RunningMembers(checker.last_pgid()).empty());
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);  // no zombie child of ours is left
  CHECK(errno == ECHILD);
}

TEST_CASE(
    "a 20 MiB reply written before a 20 MiB prompt is read hits the reply cap without "
    "deadlock") {
  TempDir ws;
  SubprocessChecker checker({Command("flood", {Fixture("flood_stdout_first.sh")})}, "",
                            FastOptions());
  // The gate's prompt: pieces (two 10 MiB inputs) written while the reply floods in.
  CheckRequest request = Request("flood", ws.path(), GatePrompt({10 << 20, 10 << 20}), 60000);
  request.max_reply_bytes = 8 * 1024 * 1024;
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(request);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == "fault");
  CHECK(reply.status().message() == "the checker reply exceeded 8388608 bytes");
  CHECK(SecondsSince(t0) < 30.0);
  CHECK(RunningMembers(checker.last_pgid()).empty());
}

TEST_CASE(
    "a grandchild that escapes the group with setsid delays the reply by the EOF grace at most") {
  TempDir ws;
  SubprocessOptions options = FastOptions();
  options.eof_grace_ms = 200;
  SubprocessChecker checker({Command("esc", {Fixture("setsid_escape.sh")})}, "", options);
  CheckRequest request = Request("esc", ws.path(), "x", 10000);
  request.card_id = test::UniqueCard();
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(request);
  double took = SecondsSince(t0);
  std::vector<pid_t> left = test::SurvivorsOfCard(request.card_id);
  test::KillProcessesOfCard(request.card_id, request.root);
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text == "reply before the escape\n");
  CHECK(took < 2.0);
  // At every level the check's reaper killed the escaper when the checker exited (issue 7
  // item 7), so nothing held stdout and nothing is left.
  CHECK(left.empty());
}

TEST_CASE("a reply of exactly the cap is accepted") {
  TempDir ws;
  SubprocessChecker checker({Command("echo", {Fixture("echo_prompt.sh")})}, "", FastOptions());
  CheckRequest request = Request("echo", ws.path(), std::string(1000, 'r'));
  request.max_reply_bytes = 1000;
  auto reply = checker.Dispatch(request);
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text.size() == 1000);
  request.prompt.Append("!");
  auto over = checker.Dispatch(request);
  REQUIRE_FALSE(over.ok());
  CHECK(over.status().message() == "the checker reply exceeded 1000 bytes");
}

TEST_CASE(
    "the prompt written from its pieces reaches the checker byte for byte as the assembled "
    "prompt (issue 11 item 2)") {
  TempDir ws;
  SubprocessChecker checker({Command("echo", {Fixture("echo_prompt.sh")})}, "", FastOptions());
  // No inputs; empty inputs; small ones; pieces larger than the 64 KiB pipe buffer (and one
  // an odd size); 100 inputs, 201 pieces, more than one gathered write can take (64 buffers).
  const std::vector<std::vector<size_t>> cases = {
      {}, {0, 0, 0}, {1, 100, 5000}, {1 << 20, 0, (3 << 20) + 1}, std::vector<size_t>(100, 1000)};
  for (const std::vector<size_t>& sizes : cases) {
    for (bool nonce : {false, true}) {
      CAPTURE(sizes.size());
      CAPTURE(nonce);
      PromptParts parts = PatternParts(sizes, nonce);
      const std::string expected = AssemblePrompt(parts);  // the whole-string assembly
      PromptPieces pieces = AssemblePromptPieces(std::move(parts));
      // Each input is a piece of its own, moved in: the parts keep none of its bytes.
      REQUIRE(pieces.pieces().size() == 2 * sizes.size() + 1);
      for (size_t i = 0; i < sizes.size(); ++i) {
        CHECK(pieces.pieces()[2 * i + 1].size() == sizes[i]);
        CHECK(parts.inputs[i].content.empty());  // NOLINT(bugprone-use-after-move): the point
      }
      CHECK(pieces.size() == expected.size());
      CHECK(pieces.Joined() == expected);
      // What the checker read on stdin (`cat` echoes it): the same bytes, in order.
      CheckRequest request = Request("echo", ws.path(), std::move(pieces), 60000);
      request.max_reply_bytes = static_cast<int64_t>(expected.size()) + 1;
      auto reply = checker.Dispatch(request);
      REQUIRE_MESSAGE(reply.ok(), reply.status().message());
      CHECK(reply->text.size() == expected.size());
      CHECK(reply->text == expected);
    }
  }
}

TEST_CASE(
    "a checker that exits without reading a 20 MiB gate prompt still has its reply returned") {
  TempDir ws;
  SubprocessChecker checker({Command("early", {Fixture("early_exit.sh")})}, "", FastOptions());
  // The gate's prompt: its pieces (two 10 MiB inputs); the write ends at EPIPE, no SIGPIPE.
  auto reply =
      checker.Dispatch(Request("early", ws.path(), GatePrompt({10 << 20, 10 << 20}), 60000));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text ==
        "```json\n{\"verdict\":\"allow\",\"summary\":\"early\",\"findings\":[]}\n```\n");
}

TEST_CASE("a 50 MiB stderr flood does not deadlock and its last line is reported") {
  TempDir ws;
  SubprocessChecker checker({Command("flood", {Fixture("flood_stderr.sh")})}, "", FastOptions());
  auto t0 = Clock::now();
  auto reply = checker.Dispatch(Request("flood", ws.path(), "x", 60000));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "the checker ended with exit code 3: flood-end");
  CHECK(SecondsSince(t0) < 30.0);
}

TEST_CASE("a builtin provider runs the devflow-gate binary itself as `checker <name> args`") {
  TempDir ws;
  ProviderConfig grounding;
  grounding.name = "grounding";
  grounding.builtin = "grounding";
  grounding.args = {"--claim-kind", "design"};
  std::string self = Fixture("print_argv.sh");
  SubprocessChecker checker({grounding}, self, FastOptions());
  auto reply = checker.Dispatch(Request("grounding", ws.path()));
  REQUIRE_MESSAGE(reply.ok(), reply.status().message());
  CHECK(reply->text == self + "\nchecker\ngrounding\n--claim-kind\ndesign\n");
}

}  // namespace
}  // namespace devflow

// A killed writer's temporary under the pid the next move gets (issue 7 item 13). A move that
// is SIGKILLed inside WriteFileAtomic leaves `.<name>.<pid>.<seq>.tmp`; the kernel hands out
// pids again (pid_max is 32768 on many hosts, and a machine busy with compilers wraps it in
// minutes), and the next attempt on the same card and revision writes the same report name.
// That attempt must write its report and veto as the checker said, not fail closed with EEXIST
// and park the card.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "e2e/workspace.h"
#include "reports/gate_layout.h"

namespace devflow::e2e {
namespace {

TEST_CASE("a temp a killed writer left under the next move's pid does not fail its report write") {
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("e2e/veto.sh")};
  ws.WriteConfig(yaml.Text() + "      reportDir: .gate-reports\n");
  ws.CardInDesigning();
  const std::string dir = ws / ".gate-reports/" + RootReportTag(ws.root());
  const std::string name = "0001-export-the-audit-log-designing-ready-r4.md";
  REQUIRE(std::filesystem::create_directories(dir));

  // The move runs in a child whose pid is known before it execs the gate (exec keeps the pid).
  int go[2];
  REQUIRE(::pipe(go) == 0);
  const std::string out_file = ws / "move.out";
  const std::string binary = test::GateBinary();
  const std::string home = "HOME=" + ws.path();
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(go[1]);
    char byte;
    if (::read(go[0], &byte, 1) != 1) ::_exit(125);
    int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(out, 2);
    if (::chdir(ws.path().c_str()) != 0) ::_exit(126);
    const char* argv[] = {binary.c_str(), "move", ws.card().c_str(), "ready", nullptr};
    const char* envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", home.c_str(), "LANG=C.UTF-8",
                          nullptr};
    ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp));
    ::_exit(127);
  }
  ::close(go[0]);
  // What earlier writers with this pid left when they were killed: the first names the new
  // process's temp counter can take for this report.
  for (int seq = 0; seq < 32; ++seq) {
    test::Spit(dir + "/." + name + "." + std::to_string(pid) + "." + std::to_string(seq) + ".tmp",
               "# Agent check veto: a torn repo");
  }
  REQUIRE(::write(go[1], "g", 1) == 1);
  ::close(go[1]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  const std::string out = test::Slurp(out_file).value_or("");
  INFO("move: " << out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);  // vetoed, as the checker said; a fault would be 3
  CHECK(out.find("agent check vetoed designing->ready: design cites REQ-9; full report: " + dir +
                 "/" + name) != std::string::npos);
  CHECK(out.find("could not run") == std::string::npos);
  const std::string report = test::Slurp(dir + "/" + name).value_or("");
  CHECK(report.rfind("# Agent check veto: card 0001-export-the-audit-log, edge designing->ready\n",
                     0) == 0);
  CHECK(ws.ShowJson()["stage"] == "designing");  // not parked
}

}  // namespace
}  // namespace devflow::e2e

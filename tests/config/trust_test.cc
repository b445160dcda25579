// The config and the checker program are inside the trust boundary (issue 7 item 8): a
// provider's program is pinned to an absolute path when the config loads, `config check` warns
// when the config or a program lies inside the workspace or is writable by group/others, and a
// layout with both outside the workspace (--config or DEVFLOW_GATE_CONFIG) is clean.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"
#include "support/support.h"

namespace devflow {
namespace {

std::string Config(const std::string& program) {
  return "providers:\n  checker:\n    command: [" + program +
         "]\nplugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n"
         "        'designing->ready':\n          provider: checker\n"
         "          inputs: [prd]\n          prompt: Check it.\n";
}

nlohmann::json Check(const std::vector<std::string>& args, const std::string& cwd,
                     const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> all = args;
  all.push_back("config");
  all.push_back("check");
  all.push_back("--json");
  auto r = test::RunGate(all, cwd, env);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

bool HasWarning(const nlohmann::json& j, const std::string& part) {
  for (const auto& w : j["warnings"]) {
    if (w.get<std::string>().find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("trust: a config and a ./check.sh inside the workspace are warned about") {
  test::TempDir ws;
  test::Spit(ws / "check.sh", "#!/bin/sh\nexit 0\n");
  test::MakeExecutable(ws / "check.sh");
  test::Spit(ws / "devflow-gate.yaml", Config("./check.sh"));
  auto j = Check({}, ws.path());
  CHECK(HasWarning(j, "the config file " + ws.path() +
                          "/devflow-gate.yaml lies inside the "
                          "workspace " +
                          ws.path()));
  CHECK(HasWarning(j, "providers.checker program " + ws.path() +
                          "/check.sh lies inside the "
                          "workspace " +
                          ws.path()));
}

TEST_CASE("trust: config and program outside the workspace, by --config or DEVFLOW_GATE_CONFIG") {
  test::TempDir ws, trusted;
  ::chmod(trusted.path().c_str(), 0755);
  test::Spit(trusted / "check.sh", "#!/bin/sh\nexit 0\n");
  test::MakeExecutable(trusted / "check.sh");
  test::Spit(trusted / "gate.yaml", Config(trusted / "check.sh"));
  ::chmod((trusted / "gate.yaml").c_str(), 0644);
  for (int how = 0; how < 2; ++how) {
    CAPTURE(how);
    auto j = how == 0 ? Check({"--config", trusted / "gate.yaml"}, ws.path())
                      : Check({}, ws.path(), {{"DEVFLOW_GATE_CONFIG", trusted / "gate.yaml"}});
    CHECK(j["file"] == trusted / "gate.yaml");
    CHECK(j["warnings"] == nlohmann::json::array());
  }
  // A program others can write is warned about wherever it lies.
  ::chmod((trusted / "check.sh").c_str(), 0777);
  auto loose = Check({"--config", trusted / "gate.yaml"}, ws.path());
  CHECK(HasWarning(loose, "providers.checker program " + trusted / "check.sh" +
                              " is writable by others; chmod go-w " + trusted / "check.sh"));
}

TEST_CASE("trust: a program is pinned when the config loads, whatever PATH or cwd become") {
  test::TempDir ws, first, second;
  for (const auto* dir : {&first, &second}) {
    test::Spit(*dir / "my-checker", "#!/bin/sh\nexit 0\n");
    test::MakeExecutable(*dir / "my-checker");
  }
  auto config = LoadConfigText(Config("my-checker") + "", "gate.yaml");
  REQUIRE(config.ok());
  auto relative = LoadConfigText(Config("./tools/check.sh"), "gate.yaml");
  REQUIRE(relative.ok());
  ResolveProviderPrograms(*config, ws.path(), first.path() + ":" + second.path());
  ResolveProviderPrograms(*relative, ws.path(), first.path());
  // The absolute path found at load; the checker then runs that path (subprocess.cc uses a
  // program with a '/' as it is, with no PATH search and no cwd).
  CHECK(config->providers[0].command[0] == first / "my-checker");
  CHECK(relative->providers[0].command[0] == ws / "tools/check.sh");
  auto programs = ProviderPrograms(*config, "/usr/bin/devflow-gate");
  REQUIRE(programs.size() == 1);
  CHECK(programs[0] == std::pair<std::string, std::string>("checker", first / "my-checker"));
}

}  // namespace devflow

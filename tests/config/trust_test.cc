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
         "          inputs: [prd]\n          prompt: Check it.\n          verdictNonce: true\n"
         // Gated too, so that express cards pass the check (else config check warns, W1).
         "        'draft->developing':\n          provider: checker\n"
         "          inputs: [prd]\n          prompt: Check it.\n          verdictNonce: true\n";
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

// trial21 8-1: `npx` (the config and the launcher outside the workspace) ran a package the
// agent planted in the workspace's node_modules, and `config check` said nothing.
TEST_CASE("trust: a launcher that reads its working directory is warned about") {
  test::TempDir ws, trusted;
  ::chmod(trusted.path().c_str(), 0755);
  test::Spit(trusted / "npx", "#!/bin/sh\nexit 0\n");
  test::MakeExecutable(trusted / "npx");
  test::Spit(trusted / "gate.yaml", Config(trusted / "npx"));
  ::chmod((trusted / "gate.yaml").c_str(), 0644);
  auto j = Check({"--config", trusted / "gate.yaml"}, ws.path());
  CHECK(HasWarning(j,
                   "providers.checker runs npx, which reads code or instructions from its "
                   "working directory, the card workspace the judged agent can write"));
}

// trial21 8-3: `--config ""` (a wrapper's unset variable) loaded the workspace's own config, the
// one the judged agent can write.
TEST_CASE("trust: an empty --config or --root is a usage error, not the default") {
  test::TempDir ws;
  test::Spit(ws / "devflow-gate.yaml", Config("/bin/true"));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--config", "", "config", "check"}, {"--root", "", "config", "check"}}) {
    auto r = test::RunGate(args, ws.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is empty (an unset variable?); pass a path") != std::string::npos);
  }
  auto env = test::RunGate({"config", "check"}, ws.path(), {{"DEVFLOW_GATE_CONFIG", ""}});
  CHECK(env.exit_code == 2);
  CHECK(env.err.find("DEVFLOW_GATE_CONFIG is set but empty") != std::string::npos);
}

// A path is in the workspace when, as written, it lies there, or a symlink along it does (the
// agent retargets the link), or what it resolves to does (the trial of 2026-12-03: a
// `command: [./checker]` linking to a strict checker outside drew no warning, and the agent
// pointed the link at its own script).
const std::string kRetarget =
    ", which the judged agent can write: it can retarget the link and change what decides its "
    "own moves; ";

TEST_CASE("trust: a program reached through a symlink in the workspace is warned about") {
  test::TempDir ws, trusted;
  ::chmod(trusted.path().c_str(), 0755);
  test::Spit(trusted / "strict", "#!/bin/sh\nexit 0\n");
  test::MakeExecutable(trusted / "strict");
  REQUIRE(::symlink((trusted / "strict").c_str(), (ws / "checker").c_str()) == 0);
  test::Spit(trusted / "gate.yaml", Config("./checker"));
  ::chmod((trusted / "gate.yaml").c_str(), 0644);
  auto j = Check({"--config", trusted / "gate.yaml"}, ws.path());
  CHECK(j["warnings"] ==
        nlohmann::json::array({"providers.checker program " + ws / "checker" +
                               " goes through the symlink " + ws / "checker" +
                               " inside the workspace " + ws.path() + " (now resolving to " +
                               trusted / "strict" + ")" + kRetarget +
                               "install the checker outside the workspace and name it by "
                               "absolute path"}));
  // Both ends outside, the link between them inside: the agent still retargets it.
  REQUIRE(::symlink((ws / "checker").c_str(), (trusted / "via").c_str()) == 0);
  test::Spit(trusted / "gate.yaml", Config(trusted / "via"));
  auto via = Check({"--config", trusted / "gate.yaml"}, ws.path());
  CHECK(via["warnings"] ==
        nlohmann::json::array({"providers.checker program " + trusted / "via" +
                               " goes through the symlink " + ws / "checker" +
                               " inside the workspace " + ws.path() + " (now resolving to " +
                               trusted / "strict" + ")" + kRetarget +
                               "install the checker outside the workspace and name it by "
                               "absolute path"}));
}

TEST_CASE("trust: a config file that is a symlink in the workspace is warned about") {
  test::TempDir ws, trusted;
  ::chmod(trusted.path().c_str(), 0755);
  test::Spit(trusted / "check.sh", "#!/bin/sh\nexit 0\n");
  test::MakeExecutable(trusted / "check.sh");
  test::Spit(trusted / "gate.yaml", Config(trusted / "check.sh"));
  ::chmod((trusted / "gate.yaml").c_str(), 0644);
  REQUIRE(::symlink((trusted / "gate.yaml").c_str(), (ws / "devflow-gate.yaml").c_str()) == 0);
  auto j = Check({}, ws.path());
  CHECK(j["warnings"] ==
        nlohmann::json::array({"the config file " + ws / "devflow-gate.yaml" +
                               " goes through the symlink " + ws / "devflow-gate.yaml" +
                               " inside the workspace " + ws.path() + " (now resolving to " +
                               trusted / "gate.yaml" + ")" + kRetarget +
                               "keep it outside (pass --config FILE or set DEVFLOW_GATE_CONFIG; "
                               "docs/security.md)"}));
}

TEST_CASE("trust: an interpreter's script in the workspace is warned about") {
  test::TempDir ws, trusted;
  ::chmod(trusted.path().c_str(), 0755);
  test::Spit(ws / "check.sh", "exit 0\n");
  // A later argument that is no file ("-e") is not a script; one that is, relative or ./, is.
  for (const std::string script : {"check.sh", "./check.sh"}) {
    CAPTURE(script);
    test::Spit(trusted / "gate.yaml", Config("/bin/sh, -e, " + script));
    ::chmod((trusted / "gate.yaml").c_str(), 0644);
    auto j = Check({"--config", trusted / "gate.yaml"}, ws.path());
    CHECK(j["warnings"] ==
          nlohmann::json::array(
              {"providers.checker command[2] " + ws / "check.sh" +
               " (a file the command names: for an interpreter, the script that runs) lies "
               "inside the workspace " +
               ws.path() +
               ", which the judged agent can write: it can replace that file and change what "
               "decides its own moves; install it outside the workspace and name it by absolute "
               "path"}));
  }
}

TEST_CASE("trust: a program outside the workspace through a symlink outside it is not warned") {
  test::TempDir ws, trusted;
  ::chmod(trusted.path().c_str(), 0755);
  ::mkdir((trusted / "real").c_str(), 0755);
  test::Spit(trusted / "real/check.sh", "#!/bin/sh\nexit 0\n");
  test::MakeExecutable(trusted / "real/check.sh");
  test::Spit(trusted / "real/check.py", "exit 0\n");
  REQUIRE(::symlink((trusted / "real/check.sh").c_str(), (trusted / "checker").c_str()) == 0);
  REQUIRE(::symlink("real", (trusted / "lib").c_str()) == 0);
  test::Spit(trusted / "gate.yaml", Config(trusted / "checker" + ", " + trusted / "lib/check.py"));
  ::chmod((trusted / "gate.yaml").c_str(), 0644);
  auto j = Check({"--config", trusted / "gate.yaml"}, ws.path());
  CHECK(j["warnings"] == nlohmann::json::array());
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

namespace devflow {

TEST_CASE("trust: a provider with sandbox: off is warned about, in text and --json, exit 0") {
  // The fresh trial: `sandbox: off` drew no word from config check, though its checker runs
  // unconfined. A warning, not an error: it is the operator's explicit opt-out (SPEC §8).
  test::TempDir outside;
  test::TempDir ws;
  test::Spit(outside / "check.sh", "#!/bin/sh\nexit 0\n");
  test::MakeExecutable(outside / "check.sh");
  std::string yaml = Config(outside / "check.sh");
  const std::string off = yaml.replace(yaml.find("]\n") + 2, 0, "    sandbox: off\n");
  test::Spit(outside / "off.yaml", off);
  test::Spit(outside / "on.yaml", Config(outside / "check.sh"));
  const std::string warning =
      "providers.checker sets `sandbox: off`: its checker runs unconfined, as the host's user, so "
      "it can read the host's secrets";

  auto j = Check({"--config", outside / "off.yaml"}, ws.path());
  CHECK(j["ok"] == true);
  CHECK(j["sandbox"]["checker"] == "off");
  CHECK(HasWarning(j, warning));
  CHECK(HasWarning(j, "write anywhere the host can"));
  auto text = test::RunGate({"--config", outside / "off.yaml", "config", "check"}, ws.path());
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("\nwarning: " + warning) != std::string::npos);

  // The control: the same provider confined draws no such warning.
  CHECK_FALSE(HasWarning(Check({"--config", outside / "on.yaml"}, ws.path()), "sandbox: off"));
}

}  // namespace devflow

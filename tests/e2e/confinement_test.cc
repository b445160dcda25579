// What the sandbox promises at every level, through the real binary (issue 7 items 5, 6, 12):
// no host secret readable by a checker, no silent unconfined run when no sandbox is usable
// (a real PATH without bubblewrap; the Landlock probe failed through its test seam), the level
// in every ledger row, and nothing written under $HOME by `--dry-run` or `config check`.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

namespace fs = std::filesystem;

std::string FallbackLevel() {
  long abi = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, 1U);
  REQUIRE(abi > 0);
  return "landlock-abi" + std::to_string(abi) + "+seccomp";
}

// A config whose one provider runs `command`, optionally with `sandbox: off`.
std::string Config(std::vector<std::string> command, bool sandbox_off = false) {
  GateYaml yaml;
  yaml.command = std::move(command);
  std::string text = yaml.Text();
  if (sandbox_off) {
    const std::string line = "    command: " + YamlList(yaml.command) + "\n";
    text.replace(text.find(line), line.size(), line + "    sandbox: off\n");
  }
  return text;
}

nlohmann::json LastLedgerRow(const Workspace& ws) {
  auto rows = Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
  REQUIRE(!rows.empty());
  return nlohmann::json::parse(rows.back());
}

// Every path under `dir` (directories included) with the content of each file.
std::map<std::string, std::string> Tree(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    out[rel] = e.is_regular_file() ? test::Slurp(e.path().string()).value_or("?") : "<dir>";
  }
  return out;
}

TEST_CASE("with neither bubblewrap nor Landlock a move fails closed with the fix, nothing runs") {
  PathWithoutBwrap no_bwrap;
  Workspace ws(Config({Fixture("checkers/touch_allow.sh"), "RAN"}));
  ws.CardInDesigning();
  const std::map<std::string, std::string> env = {{"PATH", no_bwrap.path()},
                                                  {"DEVFLOW_GATE_TEST_NO_LANDLOCK", "1"}};

  auto r = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 3);
  const std::string fault =
      "no sandbox is usable for provider \"checker\": bubblewrap: \"bwrap\" is not on PATH; "
      "Landlock + seccomp: landlock_create_ruleset: Function not implemented. Install "
      "bubblewrap (apt-get install bubblewrap), or set `sandbox: off` on provider \"checker\" to "
      "run its checker unconfined";
  CHECK(r.out.find(fault) != std::string::npos);
  CHECK(!fs::exists(ws / "RAN"));  // the checker never started
  auto row = LastLedgerRow(ws);
  CHECK(row["sandbox"] == nlohmann::json::array({"none"}));
  CHECK(row["parked"] == true);

  auto check = ws.Gate({"config", "check"}, env);
  INFO("config check: " << check.out << check.err);
  CHECK(check.exit_code == 2);
  CHECK(check.out.rfind(ws / "devflow-gate.yaml" + ": not usable\n", 0) == 0);
  CHECK(check.out.find("    checker: command " + Fixture("checkers/touch_allow.sh") +
                       ", sandbox none\n") != std::string::npos);
  CHECK(check.err == "error: " + ws / "devflow-gate.yaml" + ": providers.checker: " + fault + "\n");
  auto json = ws.Gate({"config", "check", "--json"}, env);
  CHECK(json.exit_code == 2);
  auto j = nlohmann::json::parse(json.out);
  CHECK(j["ok"] == false);
  CHECK(j["sandbox"]["checker"] == "none");
  CHECK(j["problems"] ==
        nlohmann::json::array({ws / "devflow-gate.yaml" + ": providers.checker: " + fault}));
}

// The fresh trial: on a host where bubblewrap runs but cannot install a seccomp filter, the
// probe (`bwrap … /bin/true`, no filter) said bwrap, `config check` reported it, and every move
// then failed closed blaming the checker (`the checker ended with exit code 1: bwrap: Unable to
// set up system call filtering`). The probe now runs bubblewrap as a check does, the checker's
// filter on `--seccomp FD`, so such a bubblewrap is unusable, exactly like a missing one. The
// fault is real: a `bwrap` that runs the real one unless given --seccomp, when it says what
// bubblewrap says on such a host and exits 1. A positive result remembered by the old probe
// (the v1 entry its key would have matched) is planted under $HOME and must not be reused.
TEST_CASE("a bubblewrap that cannot install the seccomp filter is unusable: fallback or fault") {
  REQUIRE(fs::exists("/usr/bin/bwrap"));
  PathWithoutBwrap path;
  path.Plant(
      "bwrap",
      "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = --seccomp ] && [ -e \"$0.refuse\" ]; then\n"
      "    echo 'bwrap: Unable to set up system call filtering' >&2\n    exit 1\n  fi\n"
      "done\nexec /usr/bin/bwrap \"$@\"\n");
  const std::string fake = path.path() + "/bwrap";
  test::Spit(fake + ".refuse", "");
  test::TempDir home;
  {  // what the probe before --seccomp remembered for this bwrap (checker/sandbox.cc ProbeKey)
    struct stat st {};
    REQUIRE(::stat(fake.c_str(), &st) == 0);
    struct utsname uts {};
    REQUIRE(::uname(&uts) == 0);
    auto small = [](const std::string& file) {
      std::string v = test::Slurp(file).value_or("-");
      while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
      return v;
    };
    test::Spit(home / ".cache/devflow-gate/bwrap-probe",
               "v1 " + fake + " " + std::to_string(st.st_size) + " " +
                   std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) +
                   " " + uts.release + " " + uts.version + " uid=" + std::to_string(::getuid()) +
                   " userns=" + small("/proc/sys/user/max_user_namespaces") +
                   " clone=" + small("/proc/sys/kernel/unprivileged_userns_clone") + "\n");
  }
  const std::string stale = test::Slurp(home / ".cache/devflow-gate/bwrap-probe").value();
  Workspace ws(Config({Fixture("checkers/allow.sh")}));
  ws.CardInDesigning();
  std::map<std::string, std::string> env = {{"PATH", path.path()}, {"HOME", home.path()}};

  // Without Landlock either: the "no sandbox" fault with its fix, bubblewrap's line in it.
  env["DEVFLOW_GATE_TEST_NO_LANDLOCK"] = "1";
  const std::string fault =
      "no sandbox is usable for provider \"checker\": bubblewrap: `" + fake +
      " ... --seccomp FD ... /bin/true` did not exit 0: bwrap: Unable to set up system call "
      "filtering; Landlock + seccomp: landlock_create_ruleset: Function not implemented. Let the "
      "installed bubblewrap (" +
      fake +
      ") run a checker: it needs unprivileged user namespaces (sysctl user.max_user_namespaces > 0 "
      "and kernel.unprivileged_userns_clone=1, no AppArmor or systemd RestrictNamespaces= rule "
      "denying them) and seccomp, or set `sandbox: off` on provider \"checker\" to run its "
      "checker unconfined";
  auto check = ws.Gate({"config", "check"}, env);
  INFO("config check: " << check.out << check.err);
  CHECK(check.exit_code == 2);
  CHECK(check.out.find("    checker: command " + Fixture("checkers/allow.sh") +
                       ", sandbox none\n") != std::string::npos);
  CHECK(check.err == "error: " + ws / "devflow-gate.yaml" + ": providers.checker: " + fault + "\n");
  auto refused = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("move: " << refused.out << refused.err);
  CHECK(refused.exit_code == 3);
  CHECK(refused.out.find(fault) != std::string::npos);
  CHECK(refused.out.find("the checker ended with exit code") == std::string::npos);
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array({"none"}));
  REQUIRE(ws.Gate({"move", ws.card(), "designing", "--reason", "retry"}, env).exit_code == 0);

  // With Landlock: the fallback confines the checker and the move is admitted.
  env.erase("DEVFLOW_GATE_TEST_NO_LANDLOCK");
  check = ws.Gate({"config", "check"}, env);
  CHECK(check.exit_code == 0);
  CHECK(check.out.find("    checker: command " + Fixture("checkers/allow.sh") + ", sandbox " +
                       FallbackLevel() + "\n") != std::string::npos);
  auto moved = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("move: " << moved.out << moved.err);
  CHECK(moved.exit_code == 0);
  CHECK(moved.out.find("check by agent: ok") != std::string::npos);
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array({FallbackLevel()}));
  // A failed probe remembers nothing: the stale entry is as planted.
  CHECK(test::Slurp(home / ".cache/devflow-gate/bwrap-probe") == stale);

  // The control: with --seccomp working again (the same program), the probe passes and
  // remembers exactly the planted entry but for its version, so the old probe's key would have
  // matched that entry and reused it.
  fs::remove(fake + ".refuse");
  REQUIRE(ws.Gate({"move", ws.card(), "developing"}, env).exit_code == 0);
  REQUIRE(ws.Gate({"move", ws.card(), "designing", "--reason", "again"}, env).exit_code == 0);
  auto bwrap = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("move: " << bwrap.out << bwrap.err);
  CHECK(bwrap.exit_code == 0);
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array({"bwrap"}));
  CHECK(test::Slurp(home / ".cache/devflow-gate/bwrap-probe") == "v3" + stale.substr(2));
}

// trial11 7c: a positive probe was remembered, then the host's user namespaces were taken away
// (a systemd unit's RestrictNamespaces=, AppArmor, a sysctl: none of them in the probe's key).
// Every move then failed closed blaming the checker ("the checker ended with exit code 1: bwrap:
// No permissions to create new namespace") until someone removed the entry by hand. Now the
// failed start names bubblewrap and forgets the probe, so the next move probes again and runs at
// the level the host still has. The fault is real: a `bwrap` that runs the real one until its
// ".nouserns" flag exists, then fails every call as bubblewrap does on such a host.
TEST_CASE("a bubblewrap that loses its namespaces after a remembered probe is probed again") {
  REQUIRE(fs::exists("/usr/bin/bwrap"));
  PathWithoutBwrap path;
  path.Plant("bwrap",
             "#!/bin/sh\nif [ -e \"$0.nouserns\" ]; then\n"
             "  echo 'bwrap: No permissions to create new namespace' >&2\n  exit 1\nfi\n"
             "exec /usr/bin/bwrap \"$@\"\n");
  const std::string fake = path.path() + "/bwrap";
  test::TempDir home;
  const std::string remembered = home / ".cache/devflow-gate/bwrap-probe";
  Workspace ws(Config({Fixture("checkers/allow.sh")}));
  ws.CardInDesigning();
  std::map<std::string, std::string> env = {{"PATH", path.path()}, {"HOME", home.path()}};
  auto back_to_designing = [&] {
    return ws.Gate({"move", ws.card(), "developing"}, env).exit_code == 0 &&
           ws.Gate({"move", ws.card(), "designing", "--reason", "again"}, env).exit_code == 0;
  };

  auto first = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("first: " << first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array({"bwrap"}));
  REQUIRE(fs::exists(remembered));
  REQUIRE(back_to_designing());

  test::Spit(fake + ".nouserns", "");
  auto refused = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("refused: " << refused.out << refused.err);
  CHECK(refused.exit_code == 3);
  CHECK(refused.out.find("bubblewrap could not start the checker: bwrap: No permissions to "
                         "create new namespace; the sandbox is probed again on the next check") !=
        std::string::npos);
  CHECK(refused.out.find("the checker ended with exit code") == std::string::npos);
  CHECK(LastLedgerRow(ws)["parked"] == true);
  CHECK(!fs::exists(remembered));  // forgotten
  REQUIRE(ws.Gate({"move", ws.card(), "designing", "--reason", "retry"}, env).exit_code == 0);

  // The next move probes again: bubblewrap is unusable now, the fallback confines the checker.
  auto moved = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("moved: " << moved.out << moved.err);
  CHECK(moved.exit_code == 0);
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array({FallbackLevel()}));
  CHECK(!fs::exists(remembered));  // a failed probe remembers nothing

  // And without Landlock too, the fault says to let the installed bubblewrap run, not to
  // install it (trial11 7b).
  REQUIRE(back_to_designing());
  env["DEVFLOW_GATE_TEST_NO_LANDLOCK"] = "1";
  auto none = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("none: " << none.out << none.err);
  CHECK(none.exit_code == 3);
  CHECK(none.out.find("Let the installed bubblewrap (" + fake + ") run a checker") !=
        std::string::npos);
  CHECK(none.out.find("apt-get install bubblewrap") == std::string::npos);
}

TEST_CASE("sandbox: off is the explicit way to run unconfined, and the ledger row says off") {
  PathWithoutBwrap no_bwrap;
  Workspace ws(Config({Fixture("checkers/touch_allow.sh"), "RAN"}, /*sandbox_off=*/true));
  ws.CardInDesigning();
  const std::map<std::string, std::string> env = {{"PATH", no_bwrap.path()},
                                                  {"DEVFLOW_GATE_TEST_NO_LANDLOCK", "1"}};
  auto r = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(ws / "RAN"));
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array({"off"}));
  auto check = ws.Gate({"config", "check"}, env);
  CHECK(check.exit_code == 0);
  CHECK(check.err.empty());
}

TEST_CASE(
    "every ledger row names the level: bubblewrap, the fallback without it, [] when none ran") {
  PathWithoutBwrap no_bwrap;
  Workspace ws(Config({Fixture("checkers/allow.sh")}));
  ws.CardInDesigning();
  auto fallback = ws.Gate({"move", ws.card(), "ready"}, {{"PATH", no_bwrap.path()}});
  INFO("stdout: " << fallback.out << "\nstderr: " << fallback.err);
  REQUIRE(fallback.exit_code == 0);
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array({FallbackLevel()}));
  auto on = ws.Gate({"move", ws.card(), "developing"});
  REQUIRE(on.exit_code == 0);
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array());  // no check on this edge
  auto back = ws.Gate({"move", ws.card(), "designing", "--reason", "again"});
  REQUIRE(back.exit_code == 0);
  auto bwrap = ws.Gate({"move", ws.card(), "ready"});
  INFO("stdout: " << bwrap.out << "\nstderr: " << bwrap.err);
  REQUIRE(bwrap.exit_code == 0);
  CHECK(LastLedgerRow(ws)["sandbox"] == nlohmann::json::array({"bwrap"}));
}

TEST_CASE("--dry-run and config check write nothing under $HOME, the probe cache included") {
  Workspace ws(Config({Fixture("checkers/allow.sh")}));
  ws.CardInDesigning();
  test::TempDir home;
  test::Spit(home / "keep.txt", "keep\n");
  const std::map<std::string, std::string> env = {{"HOME", home.path()}};
  const auto before = Tree(home.path());
  const auto root_before = test::Snapshot(ws.path());

  auto dry = ws.Gate({"move", ws.card(), "ready", "--dry-run"}, env);
  INFO("dry run: " << dry.out << dry.err);
  CHECK(dry.exit_code == 0);
  CHECK(ws.Gate({"config", "check"}, env).exit_code == 0);
  CHECK(ws.Gate({"config", "check", "--json"}, env).exit_code == 0);
  CHECK(Tree(home.path()) == before);
  CHECK(test::Snapshot(ws.path()) == root_before);

  // The control: a real move does remember the probe there, so the check above can fail.
  auto real = ws.Gate({"move", ws.card(), "ready"}, env);
  INFO("move: " << real.out << real.err);
  CHECK(real.exit_code == 0);
  CHECK(fs::exists(home / ".cache/devflow-gate/bwrap-probe"));
}

// The host holds the secret in its environment (so on its stack); the probe looks for it in
// every /proc/<pid>/environ it can read and in the stack and heap of each of its ancestors.
test::RunResult HuntSecret(bool bwrap, bool sandbox_off, std::string* level) {
  PathWithoutBwrap no_bwrap;
  const std::string secret = "dg-secret-" + std::to_string(::getpid()) + "-4f1c9e";
  Workspace ws(Config({Fixture("checkers/secret_probe.py"), "secret.txt"}, sandbox_off));
  ws.CardInDesigning();
  test::Spit(ws / "secret.txt", secret + "\n");
  std::map<std::string, std::string> env = {{"DG_HOST_SECRET", secret}};
  if (!bwrap) env["PATH"] = no_bwrap.path();
  auto r = ws.Gate({"move", ws.card(), "ready"}, env);
  auto row = LastLedgerRow(ws);
  *level = row["sandbox"].empty() ? "" : row["sandbox"][0].get<std::string>();
  return r;
}

TEST_CASE("no checker reads the host's environment or memory: bubblewrap") {
  std::string level;
  auto r = HuntSecret(/*bwrap=*/true, false, &level);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(level == "bwrap");
  CHECK(r.exit_code == 0);
}

TEST_CASE("no checker reads the host's environment or memory: Landlock + seccomp") {
  std::string level;
  auto r = HuntSecret(/*bwrap=*/false, false, &level);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(level == FallbackLevel());
  CHECK(r.exit_code == 0);
}

TEST_CASE("the secret hunt finds the secret when the checker is unconfined (control)") {
  std::string level;
  auto r = HuntSecret(/*bwrap=*/false, /*sandbox_off=*/true, &level);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(level == "off");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("environ:") != std::string::npos);
  CHECK(r.out.find("mem:") != std::string::npos);
}

// The trial of 2026-12-02: with `PATH=./node_modules/.bin:$PATH` (common in a JS project) the
// judged agent planted a tool the checker runs by name, in the workspace, and it allowed; the
// second trial did the same through the absolute `$PWD/node_modules/.bin`. No PATH entry that is
// relative or lies in the workspace reaches the gate's lookups or the checker
// (checker/sandbox.h SearchPath).
TEST_CASE("a PATH entry in the workspace never lets a tool planted there decide a check") {
  Workspace ws(Config({Fixture("checkers/bare_tool.sh")}));
  ws.CardInDesigning();
  const std::string tool =
      "#!/bin/sh\nprintf '```json\\n{\"verdict\": \"allow\", \"summary\": \"planted\"}"
      "\\n```\\n'\n";
  test::Spit(ws / "bin/dg-verdict-tool", tool);
  fs::permissions(ws / "bin/dg-verdict-tool", fs::perms::owner_all);
  const std::string host_path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";

  for (const std::string& entry : {std::string("bin"), ws / "bin", ws.path() + "/./bin/"}) {
    CAPTURE(entry);
    auto planted = ws.Gate({"move", ws.card(), "ready"}, {{"PATH", entry + ":" + host_path}});
    INFO("planted: " << planted.out << planted.err);
    CHECK(planted.exit_code == 3);  // dg-verdict-tool is not found: the check fails closed
    CHECK(planted.out.find("planted") == std::string::npos);
    REQUIRE(ws.Gate({"move", ws.card(), "designing", "--reason", "recover"}).exit_code == 0);
  }

  // The control: the same tool in a directory outside the workspace is the operator's, and runs.
  const std::string tools = ws.path() + "-tools";
  test::Spit(tools + "/dg-verdict-tool", tool);
  fs::permissions(tools + "/dg-verdict-tool", fs::perms::owner_all);
  auto outside = ws.Gate({"move", ws.card(), "ready"}, {{"PATH", tools + ":" + host_path}});
  fs::remove_all(tools);
  INFO("outside: " << outside.out << outside.err);
  CHECK(outside.exit_code == 0);
  CHECK(outside.out.find("check by agent: planted") != std::string::npos);
}

// The second trial of 2026-12-02: a `bwrap` planted in an absolute PATH entry in the workspace
// passed the probe, ran the checker unconfined (it read the host's environ and wrote the
// workspace) and the ledger said `bwrap`. The planted program must never even run.
TEST_CASE("a bwrap planted in a PATH entry in the workspace never runs") {
  Workspace ws(Config({Fixture("checkers/allow.sh")}));
  ws.CardInDesigning();
  const std::string marker = ws.path() + "-planted-bwrap-ran";
  test::Spit(ws / "node_modules/.bin/bwrap",
             "#!/bin/sh\ntouch '" + marker +
                 "'\nwhile [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n");
  fs::permissions(ws / "node_modules/.bin/bwrap", fs::perms::owner_all);
  const std::string host_path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  auto r =
      ws.Gate({"move", ws.card(), "ready"}, {{"PATH", ws / "node_modules/.bin" + ":" + host_path}});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK_FALSE(fs::exists(marker));
  fs::remove(marker);
  CHECK(r.exit_code == 0);  // the real bubblewrap (or Landlock) confined the checker
}

}  // namespace
}  // namespace devflow::e2e

// `config check` finds what loads but fails later (issue 10 item 12,
// host/deployment/config_check.h): the exact lines an operator reads, and the exit code 2.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

const std::map<std::string, std::string> kPath = {{"PATH", "/usr/bin:/bin"}};

// trial12 F-CACHE: the reference config put the verdict cache in the workspace, outside the
// devflow root; the judged agent flipped its cached veto to an allow and the next move
// committed. config check now says so, for the cache and the reports; in the root: silent.
TEST_CASE("config check warns about a cache or report dir the judged agent can write") {
  const std::string head =
      "providers:\n  g: {builtin: grounding}\nplugins:\n  - id: devflow-agent-gate\n"
      "    config:\n      edges:\n        'designing->ready': {provider: g, prompt: p}\n";
  Workspace ws(head +
               "      reportDir: .devflow-agent-gate-reports\n"
               "      verdictCacheDir: .devflow-agent-gate-cache\n");
  auto r = ws.Gate({"config", "check"}, kPath);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const std::string where = "warning: plugins[0](devflow-agent-gate): ";
  CHECK(r.out.find(where + "verdictCacheDir \".devflow-agent-gate-cache\" resolves to " +
                   ws.path() + "/.devflow-agent-gate-cache, inside the workspace " + ws.path() +
                   " but outside the devflow root " + ws.root() +
                   ": the judged agent can write there, so it can turn a cached veto into an "
                   "allow (or write an allow for its next revision); keep it under the devflow "
                   "root (e.g. " +
                   ws.root() + "/cache/agent-gate) or outside the workspace\n") !=
        std::string::npos);
  CHECK(r.out.find(where + "reportDir \".devflow-agent-gate-reports\" resolves to " + ws.path() +
                   "/.devflow-agent-gate-reports, inside the workspace " + ws.path() +
                   " but outside the devflow root " + ws.root() +
                   ": the judged agent can write there, so it can rewrite or remove the veto "
                   "reports the operator reads; keep it under the devflow root (e.g. " +
                   ws.root() + "/reports/agent-gate) or outside the workspace\n") !=
        std::string::npos);
  // Under the root: no such warning.
  Workspace inside(head +
                   "      reportDir: .devflow/reports/agent-gate\n"
                   "      verdictCacheDir: .devflow/cache/agent-gate\n");
  auto ok = inside.Gate({"config", "check"}, kPath);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("the judged agent can write there") == std::string::npos);
}

// trial12 M1: `command: [/usr/bin/python3, /work/trial/fake.py]` with the script outside the
// readable set: config check said ok, every move failed closed with "can't open file".
TEST_CASE("config check warns about a script the command names outside what the checker reads") {
  test::TempDir outside;
  test::Spit(outside / "check.sh", "#!/bin/sh\necho ok\n");
  Workspace ws("providers:\n  unread: {command: [/bin/sh, " + outside / "check.sh" +
               "]}\n  listed: {command: [/bin/sh, " + outside / "check.sh" + "], read: [" +
               outside.path() + "]}\n  inws: {command: [/bin/sh, /bin/true]}\nplugins: []\n");
  auto r = ws.Gate({"config", "check"}, kPath);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("warning: providers.unread: command[1] " + outside / "check.sh" +
                   " (a file the command names: for an interpreter, the script that runs) lies "
                   "outside what the checker may read (docs/security.md), so a confined checker "
                   "cannot open it (an interpreter: \"No such file or directory\") and every check "
                   "that needs it fails closed; add it (or its directory) to "
                   "providers.unread.read\n") != std::string::npos);
  // Named in read:, or in a system tree: no such warning.
  CHECK(r.out.find("providers.listed: command[1]") == std::string::npos);
  CHECK(r.out.find("providers.inws: command[1]") == std::string::npos);
}

// trial12 "LEAK by the documented rule": a program linked onto PATH from $HOME, a PATH entry
// that is $HOME, or `read: [/]` put the whole home in the readable set (0600 files and ssh keys
// READABLE at both levels) while config check said ok. Here $HOME is a temporary home.
TEST_CASE("config check warns about a home directory in the readable set and how it got in") {
  test::TempDir host;
  std::filesystem::create_directories(host / "home");
  std::filesystem::create_directories(host / "bin");
  test::Spit(host / "home/check.sh", "#!/bin/sh\necho ok\n");
  std::filesystem::permissions(host / "home/check.sh", std::filesystem::perms::owner_all);
  std::filesystem::create_symlink(host / "home/check.sh", host / "bin/check");
  const std::string home = std::filesystem::canonical(host / "home").string();
  const std::string top = std::filesystem::canonical(host.path()).string();
  Workspace ws("providers:\n  linked: {command: [" + host / "bin/check" + "], read: [/usr/share, " +
               host.path() + "]}\nplugins: []\n");
  auto r = ws.Gate({"config", "check"},
                   {{"PATH", "/usr/bin:/bin:" + host / "home"}, {"HOME", host / "home"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const std::string all =
      ": a confined checker can read every file there (0600 files, ssh keys and tokens "
      "included; docs/security.md); ";
  CHECK(r.out.find("warning: the gate's PATH entry \"" + host / "home" +
                   "\" (every checker's PATH) puts " + home +
                   " in the checker's readable set, a home directory" + all +
                   "remove it from the gate's PATH and install the programs a checker runs "
                   "outside any home directory\n") != std::string::npos);
  CHECK(r.out.find("warning: providers.linked: the program " + host / "bin/check" +
                   " (its directory, or one along its symlink chain) puts " + home +
                   " in the checker's readable set, a home directory" + all +
                   "install the checker outside any home directory (e.g. "
                   "/usr/local/lib/linked/) and name it by absolute path\n") != std::string::npos);
  CHECK(r.out.find("warning: providers.linked: read[1] \"" + host.path() + "\" puts " + top +
                   " in the checker's readable set, which holds the home directory " + home + all +
                   "list in read: only the single files or the directories outside any home "
                   "directory that the checker needs\n") != std::string::npos);
  // read[0] /usr/share lies in a system tree and holds no home: nothing about it.
  CHECK(r.out.find("read[0]") == std::string::npos);
  // With $HOME elsewhere, none of these (unless the host's own homes are involved: not here).
  auto other = ws.Gate({"config", "check"}, {{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}});
  CHECK(other.exit_code == 0);
  CHECK(other.out.find("in the checker's readable set") == std::string::npos);
}

// trial14 W1: with only designing->ready gated, `card create --class express` made a card that
// moved draft->developing with no check, and config check said nothing.
TEST_CASE("config check warns when a service class's extra edge skips a gated edge") {
  const std::string head =
      "providers:\n  g: {builtin: grounding}\nplugins:\n  - id: devflow-agent-gate\n"
      "    config:\n      edges:\n        'designing->ready': {provider: g, prompt: p}\n";
  Workspace ws(head);
  auto r = ws.Gate({"config", "check"}, kPath);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("warning: cards of class express and emergency may move draft->developing, "
                   "which no plugin gates, and so skip designing->ready, which the config gates: "
                   "such a card passes no check on the way (reference §1.4); gate "
                   "draft->developing too (the same policy as designing->ready), or do not "
                   "create cards of that class\n") != std::string::npos);
  // reviewing->done and developing->done skip no gated edge here.
  CHECK(r.out.find("may move reviewing->done") == std::string::npos);
  CHECK(r.out.find("may move developing->done") == std::string::npos);
  // Gating the extra edge too (here with the artifact gate) ends the warning.
  Workspace both(head +
                 "  - id: devflow-artifact-gate\n    config:\n      kinds:\n        design: {}\n"
                 "      edges:\n        'draft->developing': [design]\n");
  auto gated = both.Gate({"config", "check"}, kPath);
  INFO(gated.out << gated.err);
  CHECK(gated.exit_code == 0);
  CHECK(gated.out.find("may move draft->developing") == std::string::npos);
}

// trial12/13 k30: `command: [~/.pyenv/shims/python3, …]` passed config check, yet the shim runs
// ~/.pyenv/libexec/pyenv, which a confined checker cannot see: every check failed closed.
TEST_CASE("config check warns about a program that lies under a home directory") {
  test::TempDir host;
  std::filesystem::create_directories(host / "home/.pyenv/shims");
  test::Spit(host / "home/.pyenv/shims/python3",
             "#!/bin/sh\nexec \"$HOME/.pyenv/libexec/pyenv\"\n");
  std::filesystem::permissions(host / "home/.pyenv/shims/python3",
                               std::filesystem::perms::owner_all);
  const std::string home = std::filesystem::canonical(host / "home").string();
  Workspace ws("providers:\n  shim: {command: [" + host / "home/.pyenv/shims/python3" +
               ", /bin/true]}\n  system: {command: [/bin/true]}\nplugins: []\n");
  auto r = ws.Gate({"config", "check"}, {{"PATH", "/usr/bin:/bin"}, {"HOME", host / "home"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("warning: providers.shim: the program " + host / "home/.pyenv/shims/python3" +
                   " lies under the home directory " + home +
                   ", of which a confined checker sees only the program's own directory: a "
                   "program that runs something else from that home (a pyenv, nvm or asdf shim, "
                   "a virtualenv's interpreter) fails closed on every check; install the checker "
                   "outside any home directory (e.g. /usr/local/lib/shim/), or name the real "
                   "interpreter (e.g. /usr/bin/python3) by absolute path\n") != std::string::npos);
  CHECK(r.out.find("providers.system: the program") == std::string::npos);
  // With $HOME elsewhere the directory is no home (unless a passwd entry's: not here).
  auto other = ws.Gate({"config", "check"}, {{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}});
  CHECK(other.out.find("lies under the home directory") == std::string::npos);
}

// trial12 k29: `read: [/etc/shadow]` was accepted silently, yet the file stays masked.
TEST_CASE("config check warns about a read path the sandbox masks") {
  REQUIRE(std::filesystem::exists("/etc/shadow"));
  test::TempDir host;
  std::filesystem::create_symlink("/etc/shadow", host / "shadow-link");
  Workspace ws("providers:\n  t: {command: [/bin/true], read: [/etc/passwd, /etc/shadow, " +
               host / "shadow-link" + "]}\nplugins: []\n");
  auto r = ws.Gate({"config", "check"}, kPath);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const std::string tail =
      " a host secret the sandbox masks at both levels (docs/security.md), so it stays "
      "unreadable to the checker (EACCES) whatever read: says; remove it from providers.t.read "
      "(a checker that needs it needs another design, or `sandbox: off`)\n";
  CHECK(r.out.find("warning: providers.t: read[1] \"/etc/shadow\" is" + tail) != std::string::npos);
  CHECK(r.out.find("warning: providers.t: read[2] \"" + host / "shadow-link" +
                   "\" (resolving to /etc/shadow) is" + tail) != std::string::npos);
  CHECK(r.out.find("read[0]") == std::string::npos);
}

// docs/decisions.md "The decision is the verdict block": a command provider left at the
// default `reply: text` gets a note (not a warning: nothing fails later), in text and --json;
// a block-only provider and the built-in checker get none.
TEST_CASE("config check notes a command provider left at reply text") {
  Workspace ws(
      "providers:\n  prose: {command: [/bin/true]}\n  strict: {command: [/bin/true], reply: "
      "block-only}\n  g: {builtin: grounding}\nplugins: []\n");
  auto r = ws.Gate({"config", "check"}, kPath);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("note: providers.prose: reply: text (the default) reads the prose before the "
                   "verdict block with word lists that cannot be complete; if this checker can "
                   "answer with the block alone, set reply: block-only (docs/decisions.md \"The "
                   "decision is the verdict block\")\n") != std::string::npos);
  CHECK(r.out.find("note: providers.strict") == std::string::npos);
  CHECK(r.out.find("note: providers.g") == std::string::npos);
  CHECK(r.out.find("warning: providers.prose: reply") == std::string::npos);
  auto j = ws.Gate({"config", "check", "--json"}, kPath);
  INFO(j.out);
  CHECK(j.out.find("\"notes\":[\"providers.prose: reply: text (the default)") != std::string::npos);
}

TEST_CASE("config check says tabs are not allowed in YAML indentation, at the tab") {
  Workspace ws("plugins:\n\t- id: devflow-artifact-gate\n");
  auto r = ws.Gate({"config", "check"});
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  const std::string file = ws / "devflow-gate.yaml";
  CHECK(r.err == file + ":2:1: tabs are not allowed in YAML indentation; indent with spaces\n" +
                     file + ":2:2: illegal block entry\n");
}

TEST_CASE("config check refuses a byte that is not UTF-8, at its line and column") {
  Workspace ws("plugins: []\n# caf\xe9\n");
  auto r = ws.Gate({"config", "check"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == ws / "devflow-gate.yaml" +
                     ":2:6: byte 0xe9 is not UTF-8; the config file must be UTF-8 text (re-save "
                     "it as UTF-8)\n");
  // A move loads the same config: it refuses it the same way, before any policy runs.
  auto moved = ws.Gate({"card", "list"});
  CHECK(moved.exit_code == 2);
}

TEST_CASE(
    "config check names a missing or unrunnable program, an undefined provider, a dir through "
    "a symlink and a require pattern RE2 rejects") {
  Workspace ws(
      "providers:\n"
      "  missing: {command: [no-such-checker-program]}\n"
      "  unrunnable: {command: [./not-executable.sh]}\n"
      "  ok: {command: [/bin/true]}\n"
      "plugins:\n"
      "  - id: devflow-agent-gate\n"
      "    config:\n"
      "      edges:\n"
      "        'designing->ready': {provider: ghost, inputs: [prd], prompt: p}\n"
      "      reportDir: /srv/devflow-reports\n"
      "      verdictCacheDir: linked/cache\n"
      "  - id: devflow-grounding-gate\n"
      "    config:\n"
      "      edges:\n"
      "        'designing->ready': {claim: design, require: ['(unclosed', 'REQ-\\d+', "
      "'(?=x)']}\n");
  test::Spit(ws / "not-executable.sh", "#!/bin/sh\n");
  std::filesystem::create_directories(ws / "real");
  std::filesystem::create_directory_symlink(ws / "real", ws / "linked");
  auto r = ws.Gate({"config", "check"}, kPath);
  CHECK(r.exit_code == 2);
  const std::string file = ws / "devflow-gate.yaml";
  CHECK(r.err ==
        "error: " + file +
            ": providers.missing: program \"no-such-checker-program\" is not on PATH "
            "(/usr/bin:/bin); every check by this provider would fail closed; install it or fix "
            "providers.missing.command\n"
            "error: " +
            file + ": providers.unrunnable: program " + ws / "not-executable.sh" +
            " cannot be run: Permission denied; every check by this provider would fail "
            "closed; install it or fix providers.unrunnable.command\n"
            "error: " +
            file +
            ": plugins[0](devflow-agent-gate): edges[\"designing->ready\"].provider \"ghost\" is "
            "not defined under providers; moves on this edge will fail closed; define it under "
            "providers or fix the name\n"
            "error: " +
            file +
            ": plugins[0](devflow-agent-gate): verdictCacheDir \"linked/cache\" goes through the "
            "symlink " +
            ws / "linked" +
            "; the gate does not cache through a symlink; point verdictCacheDir at a real "
            "directory\n"
            "error: " +
            file +
            ": plugins[1](devflow-grounding-gate): edges[\"designing->ready\"].require[0]: bad "
            "--require regex '(unclosed': missing ): (unclosed; every move on this edge would "
            "fail closed (RE2 syntax: no backreferences or lookarounds)\n"
            "error: " +
            file +
            ": plugins[1](devflow-grounding-gate): edges[\"designing->ready\"].require[2]: bad "
            "--require regex '(?=x)': invalid perl operator: (?=; every move on this edge would "
            "fail closed (RE2 syntax: no backreferences or lookarounds)\n");
  CHECK(r.out.rfind(file + ": not usable\n", 0) == 0);
  CHECK(r.out.find("warning: plugins[0](devflow-agent-gate): reportDir \"/srv/devflow-reports\" "
                   "resolves to /srv/devflow-reports, outside the workspace " +
                   ws.path() +
                   "; relative paths resolve against the workspace, so a path meant to be in it "
                   "should be relative\n") != std::string::npos);
  auto j = ws.Gate({"config", "check", "--json"}, kPath);
  CHECK(j.exit_code == 2);
  auto parsed = nlohmann::json::parse(j.out);
  CHECK(parsed["ok"] == false);
  CHECK(parsed["problems"].size() == 6);
}

// Item 8 of issue 7: a relative or empty PATH entry resolves against the working directory, the
// workspace the judged agent writes, and an absolute one may name a directory in it. The gate
// never searches either (checker/sandbox.h SearchPath); config check says so, once per entry,
// as written.
TEST_CASE(
    "config check warns about each relative, empty or in-workspace PATH entry, which the gate "
    "skips") {
  Workspace ws("providers:\n  ok: {command: [/bin/true]}\nplugins: []\n");
  const std::map<std::string, std::string> path = {
      {"PATH", "node_modules/.bin::/usr/bin:./bin:/bin:" + ws.path() + "/node_modules/.bin:"}};
  auto r = ws.Gate({"config", "check"}, path);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  const std::string tail =
      ": a provider program found through it is whatever that directory holds, so "
      "whoever controls that directory (the judged agent, in the workspace) could swap it; the "
      "gate does not search it (it searches /usr/bin:/bin, and so does every checker); remove it "
      "from the gate's PATH\n";
  const std::string warnings =
      "warning: PATH holds the relative entry \"node_modules/.bin\"" + tail +
      "warning: PATH holds an empty entry, which means the current directory" + tail +
      "warning: PATH holds the relative entry \"./bin\"" + tail +
      "warning: PATH holds the entry \"" + ws.path() + "/node_modules/.bin\" inside the workspace" +
      tail;
  CHECK(r.out.find(warnings) != std::string::npos);
  CHECK(r.out.find("warning: PATH") == r.out.find(warnings));  // each entry once
  // An absolute-only PATH: no such warning.
  auto clean = ws.Gate({"config", "check"}, kPath);
  CHECK(clean.out.find("warning: PATH") == std::string::npos);
}

// The fresh trial: a PATH entry outside the workspace that reaches it through a symlink in it
// (outside/bin -> <ws>/hop -> /usr/bin) was searched: the agent can retarget <ws>/hop. The same
// walk as a program's (host/symlinks.h SymlinksAlong, 2ce65b6) drops it.
TEST_CASE("a PATH entry outside the workspace that goes through a symlink in it is not searched") {
  Workspace ws("providers:\n  ok: {command: [/bin/true]}\nplugins: []\n");
  test::TempDir outside;
  std::filesystem::create_directory_symlink("/usr/bin", ws / "hop");
  std::filesystem::create_directory_symlink(ws / "hop", outside / "bin");
  const std::string entry = outside / "bin";
  auto r = ws.Gate({"config", "check"}, {{"PATH", entry + ":/usr/bin:/bin"}});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("warning: PATH holds the entry \"" + entry + "\"") != std::string::npos);
  // The control: a link outside the workspace to the same directory is searched, no warning.
  std::filesystem::remove(outside / "bin");
  std::filesystem::create_directory_symlink("/usr/bin", outside / "bin");
  auto clean = ws.Gate({"config", "check"}, {{"PATH", entry + ":/usr/bin:/bin"}});
  CHECK(clean.out.find("warning: PATH") == std::string::npos);
}

TEST_CASE("move --explain names a provider that is not defined") {
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  yaml.provider = "ghost";
  Workspace ws(yaml.Text());
  ws.CardInDesigning();
  auto r = ws.Gate({"move", ws.card(), "ready", "--explain"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("edge designing->ready is configured: provider \"ghost\", checkTimeoutMs "
                   "20000\nprovider \"ghost\" is not defined under providers: this check would "
                   "fail closed (see devflow-gate config check)\n") != std::string::npos);
}

}  // namespace
}  // namespace devflow::e2e

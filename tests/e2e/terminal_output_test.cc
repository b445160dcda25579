// One terminal-safe printer (issue 10 item 10) through the real binary: a checker summary and a
// configured prompt holding ESC[31m, U+202E (right-to-left override), U+0085 (C1 NEL) and BEL
// reach stdout only escaped, in `move --dry-run`, `move --explain` and their `--json` forms,
// while the files the gate keeps (none in a dry run) would hold them verbatim.
#include <doctest/doctest.h>

#include <string>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

// The hostile bytes, raw: ESC [31m, U+202E, U+0085, BEL.
const std::string kRaw = "\x1b[31mred\xe2\x80\xae\xc2\x85\x07";
// As a JSON string's content in the checker's reply (and in every --json output).
const char kJson[] = "\\u001b[31mred\\u202e\\u0085\\u0007";
// As the terminal printer shows them in human output (host/terminal.h).
const char kShown[] = "\\x1b[31mred\\u202e\\u0085\\x07";
// What a checker's verdict carries: the same without U+202E, since a bidi override in a
// verdict block leaves no verdict at all (docs/checker-protocol.md; tests/grounding/
// verdict_shapes_test.cc); the printer's handling of it is shown by the prompt below.
const std::string kCheckerRaw = "\x1b[31mred\xc2\x85\x07";
const char kCheckerJson[] = "\\u001b[31mred\\u0085\\u0007";
const char kCheckerShown[] = "\\x1b[31mred\\u0085\\x07";

// Not one of the four raw sequences anywhere in `out`.
void NoRawControls(const std::string& out) {
  CHECK(out.find('\x1b') == std::string::npos);
  CHECK(out.find('\x07') == std::string::npos);
  CHECK(out.find("\xe2\x80\xae") == std::string::npos);
  CHECK(out.find("\xc2\x85") == std::string::npos);
}

// A checker that vetoes with the hostile summary and finding.
std::string HostileChecker(Workspace& ws) {
  const std::string path = ws / "hostile.sh";
  test::Spit(path, std::string("#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '```json' "
                               "'{\"verdict\":\"veto\",\"summary\":\"") +
                       kCheckerJson + "\",\"findings\":[\"" + kCheckerJson + "\"]}' '```'\n");
  test::MakeExecutable(path);
  return path;
}

void Prepare(Workspace& ws, const std::string& prompt = "") {
  GateYaml yaml;
  yaml.command = {HostileChecker(ws)};
  // A YAML double-quoted prompt: \e ESC, \u202e, \u0085, \a BEL.
  if (!prompt.empty()) yaml.prompt = prompt;
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
}

TEST_CASE("move --dry-run shows a checker's escape sequences escaped, in text and in --json") {
  Workspace ws("");
  Prepare(ws);
  auto r = ws.Gate({"move", ws.card(), "ready", "--dry-run"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 1);
  NoRawControls(r.out);
  CHECK(r.out.find(std::string("agent check vetoed designing->ready: ") + kCheckerShown +
                   "; the full report would be written to ") != std::string::npos);
  // The would-be report, through TerminalText: its lines kept, its controls shown.
  CHECK(r.out.find(std::string("## Summary\n\n") + kCheckerShown + "\n\n## Findings\n\n- " +
                   kCheckerShown + "\n") != std::string::npos);

  auto j = ws.Gate({"move", ws.card(), "ready", "--dry-run", "--json"});
  CHECK(j.exit_code == 1);
  NoRawControls(j.out);
  CHECK(j.out.find(std::string("\"message\":\"devflow: transition of card "
                               "0001-export-the-audit-log to \\\"ready\\\" was rejected: agent "
                               "check vetoed designing->ready: ") +
                   kCheckerJson) != std::string::npos);
  CHECK(j.out.find(std::string("## Summary\\n\\n") + kCheckerJson + "\\n\\n## Findings\\n\\n- " +
                   kCheckerJson) != std::string::npos);
  // Still the same JSON: it parses back to the raw bytes.
  auto parsed = nlohmann::json::parse(j.out);
  CHECK(parsed["reportText"].get<std::string>().find("## Summary\n\n" + kCheckerRaw + "\n") !=
        std::string::npos);
}

TEST_CASE(
    "move --explain shows a configured prompt's escape sequences escaped, in text and "
    "in --json") {
  Workspace ws("");
  Prepare(ws, "\"Check \\e[31mred\\u202e\\u0085\\a here.\"");
  auto r = ws.Gate({"move", ws.card(), "ready", "--explain"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  NoRawControls(r.out);
  CHECK(r.out.find(std::string("Check ") + kShown + " here.") != std::string::npos);

  auto j = ws.Gate({"move", ws.card(), "ready", "--explain", "--json"});
  CHECK(j.exit_code == 0);
  NoRawControls(j.out);
  CHECK(j.out.find(std::string("Check ") + kJson + " here.") != std::string::npos);
  auto parsed = nlohmann::json::parse(j.out);
  CHECK(parsed["plugins"][0]["explain"].get<std::string>().find("Check " + kRaw + " here.") !=
        std::string::npos);
}

// trial14 T1: arguments echoed in usage errors reached the terminal raw (CLI11's "not expected"
// and "could not convert", `serve --listen`, `checker grounding --kinds`), and `ground`'s
// release_gate.py-style "cannot read" quoted the path without Python's repr escapes.
TEST_CASE("usage errors show the argument they quote escaped") {
  Workspace ws("");
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"move", "x", "y", "--fl" + kRaw},
                                             {"move", "x", "y", "--expect-revision", kRaw},
                                             {"serve", "--listen", kRaw},
                                             {"checker", "grounding", "--kinds", kRaw}}) {
    auto r = ws.Gate(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    NoRawControls(r.err);
    NoRawControls(r.out);
    CHECK(r.err.find(kShown) != std::string::npos);
  }
  // As Python's repr() prints the path: what release_gate.py prints for it.
  auto g = ws.Gate({"ground", "--claim", kRaw, "--evidence", "x"});
  CHECK(g.exit_code != 0);
  NoRawControls(g.err);
  NoRawControls(g.out);
  CHECK((g.out + g.err)
            .find("cannot read: [Errno 2] No such file or directory: "
                  "'\\x1b[31mred\\u202e\\x85\\x07'") != std::string::npos);
}

}  // namespace
}  // namespace devflow::e2e

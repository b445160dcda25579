// The help and usage errors of every command stay byte for byte what they were before each
// command's options were built only when the command is parsed (LazyCommands, issue 11 item 3).
// tests/fixtures/cli/usage.txt was written by main's binary before that change (849f003): for
// each case, `=== ARGS` (words split on spaces), the exit code, stdout and stderr. The cases
// cover `--help` of every command and subcommand, help given before or after another command,
// and the usage errors of leaf commands, groups, unknown words, option values and a word that
// names another command after a command's own arguments.
#include <doctest/doctest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/support.h"

namespace devflow::test {
namespace {

struct UsageCase {
  std::string args;
  std::string expected;  // everything after the `=== ARGS` line
};

std::vector<UsageCase> Cases() {
  const std::optional<std::string> read = Slurp(SourceDir() + "/tests/fixtures/cli/usage.txt");
  REQUIRE(read.has_value());
  const std::string& text = *read;
  std::vector<UsageCase> cases;
  size_t at = 0;
  while (at < text.size()) {
    REQUIRE(text.compare(at, 4, "=== ") == 0);
    const size_t eol = text.find('\n', at);
    size_t next = text.find("\n=== ", eol);
    next = next == std::string::npos ? text.size() : next + 1;
    cases.push_back({text.substr(at + 4, eol - at - 4), text.substr(eol + 1, next - eol - 1)});
    at = next;
  }
  return cases;
}

TEST_CASE("every command's help and usage errors are byte for byte those of the eager CLI") {
  const std::vector<UsageCase> cases = Cases();
  REQUIRE(cases.size() >= 60);
  TempDir dir;
  for (const UsageCase& c : cases) {
    std::vector<std::string> args;
    std::istringstream words(c.args);
    for (std::string w; words >> w;) args.push_back(w);
    const RunResult r = RunGate(args, dir.path());
    CAPTURE(c.args);
    CHECK("exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" +
              r.err ==
          c.expected);
  }
}

}  // namespace
}  // namespace devflow::test

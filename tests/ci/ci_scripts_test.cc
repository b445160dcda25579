// CI fails when a build fails (issue 7, code paths): .ci/setup, .ci/sanitize and .ci/fuzz run
// against a copy of themselves in a throwaway tree whose CMake project fails to build while a
// stale binary from an earlier build is still in place. Each script must exit non-zero and say
// the build failed, instead of going on to test the stale binary; the same tree with a project
// that builds passes, so the failure is the build's.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "support/support.h"

namespace devflow::test {
namespace {

namespace fs = std::filesystem;

const char kBroken[] = R"(cmake_minimum_required(VERSION 3.25)
project(broken LANGUAGES NONE)
add_custom_target(does_not_build ALL COMMAND false)
add_custom_target(fuzz_targets COMMAND false)
)";

const char kBuilds[] = R"(cmake_minimum_required(VERSION 3.25)
project(builds LANGUAGES NONE)
add_custom_target(builds ALL COMMAND true)
add_custom_target(fuzz_targets COMMAND true)
)";

// A tree with `script` copied to .ci/, `cmake_lists` as its project, and the stale outputs each
// script would otherwise go on to test.
void Lay(const TempDir& tree, const std::string& script, const std::string& cmake_lists) {
  fs::create_directories(tree / ".ci");
  fs::copy_file(SourceDir() + "/.ci/" + script, tree / (".ci/" + script));
  Spit(tree / "CMakeLists.txt", cmake_lists);
  const std::string stale = "#!/bin/sh\nexit 0\n";
  for (const char* bin :
       {"build/devflow-gate", "build-asan/devflow_gate_tests", "build-fuzz/journal_fuzz"}) {
    Spit(tree / bin, stale);
    MakeExecutable(tree / bin);
  }
  Spit(tree / "tests/fuzz/journal_fuzz.cc", "// stand-in\n");
  Spit(tree / "tests/fuzz/corpus/journal/seed", "{}\n");
}

RunResult RunScript(const TempDir& tree, const std::string& script) {
  return RunProgram({"/bin/bash", tree / (".ci/" + script)}, tree.path(),
                    {{"DG_FUZZ_SECONDS", "1"}});
}

}  // namespace

TEST_CASE("ci: a failed build fails .ci/setup, .ci/sanitize and .ci/fuzz, stale binaries or not") {
  for (const std::string script : {"setup", "sanitize", "fuzz"}) {
    CAPTURE(script);
    {
      TempDir tree;
      Lay(tree, script, kBroken);
      RunResult r = RunScript(tree, script);
      INFO("stdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("the build failed") != std::string::npos);
    }
    {
      TempDir tree;
      Lay(tree, script, kBuilds);
      RunResult r = RunScript(tree, script);
      INFO("stdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.exit_code == 0);
    }
  }
}

}  // namespace devflow::test

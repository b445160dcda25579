#include "host/cli/cli.h"

#include <cstdio>

namespace devflow {
int RunCli(int argc, char** argv) {
  std::fprintf(stderr, "devflow-gate: the command line is being built\n");
  return 2;
}
}  // namespace devflow

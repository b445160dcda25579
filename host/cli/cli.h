// The command line of SPEC §7. Wires the store, the config, the policies and the checker.
#pragma once

namespace devflow {
/// Parses argv and runs one command; returns the process exit code (SPEC §7).
int RunCli(int argc, char** argv);
}  // namespace devflow

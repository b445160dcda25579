// devflow-gate: the admission plugin host's command line (SPEC §7).
#include "host/cli/cli.h"

int main(int argc, char** argv) { return devflow::RunCli(argc, argv); }

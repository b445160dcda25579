// devflow-gate: the admission plugin host's command line (SPEC §7).
#include "host/cli/cli.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sys/prctl.h>

// Sanitizer builds only (DG_SANITIZE, .ci/sanitize). LeakSanitizer stops the world at exit with
// ptrace, which the checker sandbox's seccomp filter denies (checker/sandbox.cc, issue 7): a
// sanitized `devflow-gate checker grounding` inside the sandbox would end with LSan's fatal error
// (exit 1) instead of its verdict, and the move would fail closed. So under a seccomp filter
// (PR_GET_SECCOMP = 2) the exit-time leak check is skipped; the same code runs in-process in
// tests/grounding/grounding_checker_test.cc, where LeakSanitizer does check it.
extern "C" int __lsan_is_turned_off() { return ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2 ? 1 : 0; }
#endif

int main(int argc, char** argv) { return devflow::RunCli(argc, argv); }

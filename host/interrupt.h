// Interrupts of a running command (issue 7 item 10): SIGTERM, SIGINT and SIGHUP are caught,
// not fatal, so a `move` can kill its checker's tree, refuse to commit, write an `interrupted`
// ledger row and exit 128 + the signal with a message. Process-wide state, async-signal-safe
// on the signal side: the handler stores the first signal and writes one byte to a self-pipe,
// which stays readable from then on, so an event loop (the checker's) wakes up on it.
#pragma once

namespace devflow {

/// Installs the handlers (SA_RESTART) for SIGTERM, SIGINT and SIGHUP and creates the
/// self-pipe (O_CLOEXEC | O_NONBLOCK). Idempotent; call once at start-up, before any thread.
/// Returns false (with errno) when the pipe or a handler cannot be set up.
bool CatchInterrupts();

/// The first interrupting signal caught (SIGTERM, SIGINT or SIGHUP), 0 when none (or when
/// CatchInterrupts was never called).
int InterruptSignal();

/// Read end of the self-pipe: readable once InterruptSignal() != 0; -1 before CatchInterrupts.
/// Never read from it (that would un-signal other waiters): poll it only.
int InterruptFd();

/// "SIGTERM", "SIGINT", "SIGHUP" (or "signal N").
const char* InterruptName(int sig);

}  // namespace devflow

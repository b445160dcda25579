// Port of upstream tests/fail-closed.spec.ts (reference/devflow-upstream.md §5.4). Upstream's
// faults come from a subagent runtime; ours from the checker subprocess (SPEC §5), so the
// runtime-shaped cases run the real SubprocessChecker against real programs.
#include <chrono>

#include "gate/fixture.h"

namespace devflow::gatetest {
namespace {

// The fail-closed veto reason on designing->ready when the park did not commit (`why`: the
// park's own message): the executor replaces upstream's park claim with what happened
// (docs/decisions.md "Failed closed, but the park did not commit").
std::string CouldNotRunNotParked(const std::string& fault, const std::string& why) {
  return "agent check for designing->ready could not run: " + fault +
         "; nothing was committed and the card was NOT parked: " + why;
}

ProviderConfig ShellProvider(const std::string& script) {
  ProviderConfig p;
  p.name = "checker";
  p.command = {"/bin/sh", "-c", script};
  return p;
}

SubprocessOptions Quick() {
  SubprocessOptions o;
  o.term_grace_ms = 200;
  return o;
}

TEST_CASE(
    "fail-closed.spec 1: fails closed when the configured subagent provider is not registered: "
    "veto and the card parks blocked") {
  // Not registered = no `providers` entry of that name in the dispatcher.
  Rig rig;
  ProviderConfig other = ShellProvider("exit 0");
  other.name = "other-checker";
  SubprocessChecker real({other}, test::GateBinary());
  RecordingChecker recorder(real);
  rig.checker = &recorder;
  WriteCard(rig.root, "0101-no-provider");
  MoveOutcome outcome = rig.Move("0101-no-provider");
  ExpectParked(rig, outcome, "0101-no-provider", "subagent provider \"checker\" is not registered");
  CHECK(recorder.requests.size() == 1);
}

TEST_CASE(
    "fail-closed.spec 2: fails closed when the checker dispatch rejects: veto and the card parks "
    "blocked") {
  Rig rig;
  rig.scripted.Fault("spawn backend down");
  WriteCard(rig.root, "0102-rejects");
  ExpectParked(rig, rig.Move("0102-rejects"), "0102-rejects", "spawn backend down");
  CHECK(rig.scripted.requests.size() == 1);
}

TEST_CASE(
    "fail-closed.spec 3: fails closed when the checker exceeds checkTimeoutMs: veto and the card "
    "parks blocked") {
  // Upstream's hanging reply = a checker that never answers; "aborted and disposed" = no process
  // of the checker's group survives the attempt.
  Rig rig;
  SubprocessChecker real({ShellProvider("sleep 30")}, test::GateBinary(), Quick());
  RecordingChecker recorder(real);
  rig.checker = &recorder;
  rig.config.check_timeout_ms = 1000;
  WriteCard(rig.root, "0103-timeout");
  auto start = std::chrono::steady_clock::now();
  MoveOutcome outcome = rig.Move("0103-timeout");
  auto took = std::chrono::steady_clock::now() - start;
  ExpectParkedWithEvidence(rig, outcome, "0103-timeout",
                           "the checker exceeded checkTimeoutMs (1000ms)", "");
  CHECK(recorder.requests.size() == 1);
  CHECK(recorder.requests[0].timeout_ms == 1000);
  CHECK(took < std::chrono::seconds(10));
  CHECK(GroupGone(real.last_pgid()));
}

TEST_CASE(
    "fail-closed.spec 4: fails closed when the checker verdict cannot be parsed: veto and the "
    "card parks blocked") {
  Rig rig;
  rig.scripted.Reply("I looked at it and I think it is mostly fine.\n");
  WriteCard(rig.root, "0104-prose");
  ExpectParkedWithEvidence(rig, rig.Move("0104-prose"), "0104-prose",
                           "the checker replied without a parsable verdict block",
                           "the reply has no fenced block");
}

TEST_CASE(
    "fail-closed.spec 5: fails closed when the checker program cannot be started (runtime not "
    "composed)") {
  // Upstream: the subagent runtime is not composed. Ours: the provider's program is not there.
  Rig rig;
  ProviderConfig p;
  p.name = "checker";
  p.command = {"/nonexistent/devflow-checker"};
  SubprocessChecker real({p}, test::GateBinary());
  rig.checker = &real;
  WriteCard(rig.root, "0105-no-program");
  MoveOutcome outcome = rig.Move("0105-no-program");
  ExpectParked(rig, outcome, "0105-no-program",
               "cannot start checker \"/nonexistent/devflow-checker\": No such file or directory");
}

TEST_CASE("fail-closed.spec 6: fails closed when the checker exits abnormally, with a diagnostic") {
  // Upstream: stopReason error + diagnostic. Ours: non-zero exit + the last stderr line.
  Rig rig;
  SubprocessChecker real(
      {ShellProvider(
          "cat >/dev/null; echo 'warming up' >&2; echo 'model transport failed' >&2; exit 3")},
      test::GateBinary());
  rig.checker = &real;
  WriteCard(rig.root, "0106-exit-diag");
  const std::string report =
      ExpectParkedWithEvidence(rig, rig.Move("0106-exit-diag"), "0106-exit-diag",
                               "the checker ended with exit code 3: model transport failed", "");
  CHECK(report.find("\n## Stderr\n\n```\nwarming up\nmodel transport failed\n\n```\n") !=
        std::string::npos);
}

TEST_CASE(
    "fail-closed.spec 7: fails closed when the checker exits abnormally, without a diagnostic") {
  // Upstream: stopReason refusal, no diagnostic. Ours: non-zero exit, empty stderr.
  Rig rig;
  SubprocessChecker real({ShellProvider("cat >/dev/null; exit 4")}, test::GateBinary());
  rig.checker = &real;
  WriteCard(rig.root, "0107-exit-bare");
  ExpectParkedWithEvidence(rig, rig.Move("0107-exit-bare"), "0107-exit-bare",
                           "the checker ended with exit code 4", "");
}

TEST_CASE("fail-closed.spec 8: disposes a child whose start only settles after the deadline") {
  // Upstream: the start resolves after a 20 ms deadline and the late child is disposed. Ours: the
  // deadline passes while the checker is still starting, and the checker ignores SIGTERM; the
  // SIGKILL after the grace still removes its whole group.
  Rig rig;
  SubprocessChecker real({ShellProvider("trap '' TERM; sleep 30; sleep 30")}, test::GateBinary(),
                         Quick());
  rig.checker = &real;
  rig.config.check_timeout_ms = 20;
  WriteCard(rig.root, "0108-late");
  auto start = std::chrono::steady_clock::now();
  MoveOutcome outcome = rig.Move("0108-late");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  ExpectParkedWithEvidence(rig, outcome, "0108-late", "the checker exceeded checkTimeoutMs (20ms)",
                           "");
  CHECK(GroupGone(real.last_pgid()));
}

TEST_CASE(
    "fail-closed.spec 9: recovers cleanly: repairing the fault and unblocking the card lets the "
    "same gate admit the retry") {
  Rig rig;
  SubprocessChecker unregistered({}, test::GateBinary());
  rig.checker = &unregistered;
  WriteCard(rig.root, "0109-recover");
  ExpectParked(rig, rig.Move("0109-recover"), "0109-recover",
               "subagent provider \"checker\" is not registered");

  // The deployment recovers: the provider is registered (a real checker program).
  const std::string script = rig.workspace + "/bin/checker.sh";
  test::Spit(script,
             "#!/bin/sh\ncat >/dev/null\ncat <<'EOF'\nAll good.\n```json\n"
             "{\"verdict\": \"allow\", \"summary\": \"design holds after recovery\"}\n```\nEOF\n");
  test::MakeExecutable(script);
  ProviderConfig p;
  p.name = "checker";
  p.command = {script};
  SubprocessChecker registered({p}, test::GateBinary());
  RecordingChecker recorder(registered);
  rig.checker = &recorder;

  MoveOutcome unblock = rig.Move("0109-recover", Location::kDesigning);
  CHECK(unblock.code == "committed");
  MoveOutcome retry = rig.Move("0109-recover");
  CHECK(retry.code == "committed");
  CHECK(recorder.requests.size() == 1);
  Card card = rig.Read("0109-recover");
  CHECK(card.stage == Location::kReady);
  CHECK(!card.blocked_from.has_value());
  CHECK(card.stage_revision == 5);
  CHECK(rig.Journal("0109-recover").find("\"summary\":\"design holds after recovery\"") !=
        std::string::npos);
}

TEST_CASE(
    "fail-closed.spec 10: warns when the parking move is itself vetoed downstream, keeping the "
    "original veto") {
  Rig rig;
  LambdaPolicy no_parking("freeze", [](const Attempt& a, AttemptContext&, const Next& next) {
    if (a.to == Location::kBlocked) return Decision::Veto("parking is frozen");
    return next();
  });
  rig.after = {&no_parking};
  rig.scripted.Fault("spawn backend down");
  WriteCard(rig.root, "0109-park-vetoed");
  const std::string before = rig.Journal("0109-park-vetoed");
  MoveOutcome outcome = rig.Move("0109-park-vetoed");
  CHECK(outcome.code == "vetoed");
  // Upstream keeps its park claim here; the message says the park did not happen instead.
  CHECK(outcome.message ==
        Rejected("0109-park-vetoed",
                 CouldNotRunNotParked("spawn backend down",
                                      "devflow: transition of card 0109-park-vetoed to "
                                      "\"blocked\" was rejected: parking is frozen")));
  CHECK(outcome.failed_closed);
  CHECK(!outcome.parked);
  CHECK(rig.warnings.lines ==
        std::vector<std::string>{
            "devflow-agent-gate: failed to park card 0109-park-vetoed blocked: " +
            Rejected("0109-park-vetoed", "parking is frozen", "blocked")});
  Card card = rig.Read("0109-park-vetoed");
  CHECK(card.stage == Location::kDesigning);
  CHECK(card.stage_revision == 2);
  CHECK(rig.Journal("0109-park-vetoed") == before);
}

}  // namespace
}  // namespace devflow::gatetest

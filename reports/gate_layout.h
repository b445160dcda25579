// Where the gates keep their files, and what names them (issue 10 item 13): the one place the
// agent gate (plugin/agent_gate.cc) and the operator commands (reports/*_command.cc, audit)
// both ask, so the rules are stated once. Upstream sources: reference/devflow-upstream.md
// §4.8 (report dir), §4.9 (cache dir, key inputs), §3.3 (temp files of atomic writes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "host/store.h"

namespace devflow {

/// `<root>/reports/agent-gate` when `reportDir` is unset; a relative reportDir resolves
/// against the workspace (the parent of the root), never the process cwd.
std::string AgentReportDir(const AgentGateConfig& gate, const std::string& root);

/// Where an agent gate keeps its fault reports (reports/fault_report.h): `<reportDir>/faults`,
/// a subdirectory, so the report dir itself holds only upstream's veto reports.
std::string FaultReportDir(const std::string& report_dir);

/// `<reportDir>/faults/<card>-<from>-<to>-r<revision>-<at, basic form>.md`, e.g.
/// `0002-b-designing-ready-r4-20260916T080000.000Z.md`: one file per failed attempt (a card
/// can fault at the same revision again when its park did not commit). `copy` > 1 names the
/// copy-th attempt with the same name (`…000Z-2.md`): a `POST /v1/admit` caller's `at` may
/// repeat (trial13 R6), and a fault report is never overwritten.
std::string FaultReportPath(const std::string& report_dir, const std::string& card_id,
                            const std::string& from, const std::string& to, int64_t revision,
                            const std::string& at, int copy = 1);

/// The resolved `verdictCacheDir` (relative: against the workspace), or "" when it is unset
/// (caching disabled).
std::string AgentCacheDir(const AgentGateConfig& gate, const std::string& root);

/// The cache-key input labels the agent gate collects for `edge` on `card` now: `kind:rev` of
/// the newest registration of each configured input kind, in configured order; kinds with no
/// registration are skipped (their presence is the artifact gate's job, reference §4.4).
std::vector<std::string> InputLabels(const Card& card, const AgentEdgeConfig& edge);

/// Temp files of FileSystem::WriteFileAtomic (`.<name>.<pid>.<seq>.tmp`) and of upstream's
/// cache writer (`<16 hex>.json.<pid>.tmp`).
bool IsTempFileName(const std::string& name);

/// A temp file this old (ms) or older is a leftover of an interrupted write; a younger one may
/// be a write in flight.
constexpr int64_t kTempLeftoverAgeMs = 60 * 1000;

}  // namespace devflow

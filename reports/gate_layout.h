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

/// The configured report dir as resolved: `<root>/reports/agent-gate` when `reportDir` is
/// unset; a relative reportDir resolves against the workspace (the parent of the root), never
/// the process cwd. Several roots may resolve to the same one (an absolute reportDir); what
/// one root's reports use is AgentReportDir.
std::string AgentReportBase(const AgentGateConfig& gate, const std::string& root);

/// The directory of `root`'s own reports under a report dir shared by roots (issue 7,
/// trial20b 2-1): `<workspace basename>-<first 12 hex of SHA-256 of the canonical root>`, e.g.
/// `shop-3f9a0c21b7de`. The canonical root is its realpath, or the lexically normalised path
/// when it cannot be resolved (it does not exist yet); a workspace of "/" is named `root`.
std::string RootReportTag(const std::string& root);

/// True when `path` is `dir` or lies below it (lexically; both normalised absolute paths).
bool PathWithin(const std::string& path, const std::string& dir);

/// Where the agent gate keeps `root`'s veto and fault reports, the one place every reader and
/// writer asks (the gate, `reports list|show|prune`, audit, the sweep): AgentReportBase when
/// it lies within the root (the default: upstream's names, byte for byte), else
/// `<AgentReportBase>/<RootReportTag(root)>`, so two roots sharing a report dir never write
/// (or list, or prune) each other's reports.
std::string AgentReportDir(const AgentGateConfig& gate, const std::string& root);

/// Two agent-gate plugins of `config` that check a same edge and whose report dirs
/// (AgentReportBase) or verdict cache dirs resolve, for `root`, to the same directory: one
/// message per pair and key, `plugins[i](devflow-agent-gate): reportDir <dir> is used by
/// plugins #i and #j (both check <edge>); reports would replace each other` (the cache:
/// `verdictCacheDir <dir> ...; cached verdicts would replace each other`), `#i` counting
/// plugins from 0 as `plugins[i]` does. Plugins on disjoint edges may share a dir: report
/// names and cache keys carry the edge. Empty when none.
std::vector<std::string> SharedGateDirs(const GateConfig& config, const std::string& root);

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

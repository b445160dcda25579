#include "reports/gate_layout.h"

#include "host/os.h"

namespace devflow {
namespace {
std::string Workspace(const std::string& root) { return ParentPath(root); }
bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::string AgentReportDir(const AgentGateConfig& gate, const std::string& root) {
  if (!gate.report_dir) return JoinPath(root, "reports/agent-gate");
  return ResolveAgainst(Workspace(root), *gate.report_dir);
}

std::string FaultReportDir(const std::string& report_dir) { return JoinPath(report_dir, "faults"); }

std::string FaultReportPath(const std::string& report_dir, const std::string& card_id,
                            const std::string& from, const std::string& to, int64_t revision,
                            const std::string& at, int copy) {
  std::string basic;
  for (char c : at) {  // "2026-09-16T08:00:00.000Z" → "20260916T080000.000Z"
    if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || c == '.') basic += c;
  }
  return JoinPath(FaultReportDir(report_dir),
                  card_id + "-" + from + "-" + to + "-r" + std::to_string(revision) + "-" + basic +
                      (copy > 1 ? "-" + std::to_string(copy) : "") + ".md");
}

std::string AgentCacheDir(const AgentGateConfig& gate, const std::string& root) {
  if (!gate.verdict_cache_dir) return "";
  return ResolveAgainst(Workspace(root), *gate.verdict_cache_dir);
}

std::vector<std::string> InputLabels(const Card& card, const AgentEdgeConfig& edge) {
  std::vector<std::string> labels;
  for (const std::string& kind : edge.inputs) {
    if (const ArtifactRecord* r = card.NewestOfKind(kind)) {
      labels.push_back(kind + ":" + std::to_string(r->rev));
    }
  }
  return labels;
}

bool IsTempFileName(const std::string& name) {
  return EndsWith(name, ".tmp") &&
         (name.rfind('.', 0) == 0 || name.find(".json.") != std::string::npos);
}

}  // namespace devflow

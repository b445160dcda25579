// devflow-artifact-gate (reference/devflow-upstream.md §6.1): the mechanical gate. Before a
// configured edge, every required artifact kind must be registered and structurally sound
// (front matter fields, section headings, non-empty sections). Read-only; never parks.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "host/os.h"
#include "host/waterfall.h"
#include "plugin/agent_gate.h"

namespace devflow {

/// Veto text: `required artifacts are missing or malformed: <defect>; <defect>; …` (all defects
/// at once). No defects → delegates untouched (adds no check).
class ArtifactGate : public Policy {
 public:
  ArtifactGate(ArtifactGateConfig config, CardReader read_card, FileSystem& fs);
  std::string id() const override { return "devflow-artifact-gate"; }
  Decision Admit(const Attempt& attempt, AttemptContext& context, const Next& next) override;
  std::string Explain(const Attempt& attempt) override;

  /// The defects of one artifact's content against its kind (empty when sound). `label` names
  /// the artifact in messages, e.g. "design (artifacts/4-design.md)".
  static std::vector<std::string> Inspect(const ArtifactKindConfig& kind,
                                          const std::string& content, const std::string& label);

 private:
  // `context`: the attempt's, whose card is used when it carries one (CardForAttempt).
  Result<std::vector<std::string>> Defects(const Attempt& attempt,
                                           const std::vector<std::string>& kinds,
                                           const AttemptContext& context);
  ArtifactGateConfig config_;
  CardReader read_card_;
  FileSystem& fs_;
};

}  // namespace devflow

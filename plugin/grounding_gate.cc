#include "plugin/grounding_gate.h"

#include <optional>
#include <vector>

#include "checker/grounding.h"
#include "reports/ledger.h"

namespace devflow {
namespace {

const Actor kGateActor{"command", std::string("devflow-grounding-gate"), std::nullopt};

// LoadEvidence's conversion for content already read safely (ReadArtifact): a ".json" path
// (any case) goes through the JSON evidence text, anything else is verbatim minus a BOM.
Result<std::string> EvidenceText(const std::string& content, const std::string& path,
                                 const GroundingOptions& options) {
  std::string lower = path;
  for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".json") == 0) {
    return options.compat ? CompatJsonEvidenceText(content, path, options.exclude_keys)
                          : JsonEvidenceText(content, path, options.exclude_keys);
  }
  return std::string(StripBom(content));
}

std::string Noun(const std::string& kind) {
  if (kind == "url") return "URL";
  if (kind == "ref") return "ticket ref";
  if (kind == "path") return "file path";
  if (kind == "date-text") return "written date";
  return kind;
}

std::string NounList(const std::vector<std::string>& kinds, const std::string& last) {
  std::string out;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " " + last + " " : ", ";
    out += Noun(kinds[i]);
  }
  return out;
}

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

struct Loaded {
  const ArtifactRecord* claim = nullptr;
  std::string claim_text;
  std::vector<std::string> texts;   // evidence: title, body, then each evidence artifact
  std::vector<std::string> labels;  // "title", "body", "<kind>:<rev>"
};

Result<Loaded> Load(const Card& card, const GroundingEdgeConfig& edge, FileSystem& fs) {
  Loaded out;
  out.texts = {card.title, card.body};
  out.labels = {"title", "body"};
  // The journal is agent-writable: `..`, absolute paths and symlinks out are unreadable.
  auto read = [&](const ArtifactRecord& record) -> Result<std::string> {
    Result<std::string> content = ReadArtifact(fs, card.dir, record.path);
    if (!content.ok()) return content.status();
    return EvidenceText(*content, JoinPath(card.dir, record.path), edge.options);
  };
  out.claim = card.NewestOfKind(edge.claim);
  if (out.claim) {
    Result<std::string> text = ReadArtifact(fs, card.dir, out.claim->path);
    if (!text.ok()) return text.status();
    out.claim_text = std::string(StripBom(*text));
  }
  for (const std::string& kind : edge.evidence) {
    const ArtifactRecord* record = card.NewestOfKind(kind);
    if (!record || record == out.claim) continue;
    Result<std::string> text = read(*record);
    if (!text.ok()) return text.status();
    out.texts.push_back(std::move(*text));
    out.labels.push_back(kind + ":" + std::to_string(record->rev));
  }
  return out;
}

std::string Workspace(const std::string& root) { return ParentPath(root); }

}  // namespace

GroundingGate::GroundingGate(GroundingGateConfig config, CardReader read_card, FileSystem& fs)
    : config_(std::move(config)), read_card_(std::move(read_card)), fs_(fs) {}

const GroundingEdgeConfig* GroundingGate::Find(const Edge& edge) const {
  for (const GroundingEdgeConfig& e : config_.edges) {
    if (e.edge == edge) return &e;
  }
  return nullptr;
}

std::string GroundingGate::LedgerPath(const std::string& root) const {
  if (!config_.ledger) return JoinPath(root, "ledger/grounding.jsonl");
  return ResolveAgainst(Workspace(root), *config_.ledger);
}

Decision GroundingGate::Admit(const Attempt& attempt, AttemptContext& context, const Next& next) {
  const GroundingEdgeConfig* edge = Find(attempt.edge());
  if (!edge) return next();
  const std::string edge_name = attempt.edge().Name();
  const GroundingOptions& options = edge->options;

  auto fail_closed = [&](const std::string& fault) {
    context.parks.push_back(ParkRequest{
        kGateActor, "grounding check for " + edge_name + " failed closed: " + fault, id()});
    return Decision::Veto("grounding check for " + edge_name + " could not run: " + fault +
                          kParkClaim);
  };

  std::optional<Card> held;
  Result<const Card*> read = CardForAttempt(attempt, context, read_card_, held);
  if (!read.ok()) return fail_closed("the card cannot be read: " + read.status().message());
  const Card* card = *read;
  if (Status bad = CheckRequirePatterns(options.require); !bad.ok()) {
    return fail_closed(bad.message());
  }
  Result<Loaded> loaded = Load(*card, *edge, fs_);
  if (!loaded.ok()) {
    return fail_closed("a required input cannot be read: " + loaded.status().message());
  }

  std::vector<std::string> reasons;
  std::string veto;
  if (!loaded->claim) {
    reasons = {"claim artifact " + edge->claim + " is missing"};
    veto = "ungrounded specifics in " + edge->claim + ": the card has no " + edge->claim +
           " artifact to ground; register one with devflow-gate artifact add " + card->id + " " +
           edge->claim + " FILE";
  } else {
    std::vector<std::string_view> evidence(loaded->texts.begin(), loaded->texts.end());
    reasons = VerifyClaim(loaded->claim_text, evidence, options);
    if (!reasons.empty())
      veto = "ungrounded specifics in " + edge->claim + ": " + Join(reasons, "; ");
  }
  const bool verified = reasons.empty();

  if (!context.dry_run) {
    LedgerRow row;
    row.ts = LedgerTimestamp(attempt.at);
    row.label = card->id + " " + edge_name;
    row.verified = verified;
    row.state = verified ? "allowed" : "vetoed";
    row.kinds = options.kinds;
    row.reasons = reasons;
    if (!verified && loaded->claim) row.rejected_claim = loaded->claim_text;
    row.extra.emplace_back("card", PyJsonString(card->id));
    row.extra.emplace_back("edge", PyJsonString(edge_name));
    row.extra.emplace_back("claim",
                           "{\"kind\": " + PyJsonString(edge->claim) + ", \"rev\": " +
                               (loaded->claim ? std::to_string(loaded->claim->rev) : "null") + "}");
    row.extra.emplace_back("evidence", PyJsonList(loaded->labels));
    std::vector<std::string> excluded = DefaultExcludedKeys();
    excluded.insert(excluded.end(), options.exclude_keys.begin(), options.exclude_keys.end());
    row.extra.emplace_back("options",
                           "{\"compat\": " + std::string(options.compat ? "true" : "false") +
                               ", \"exclude_keys\": " + PyJsonList(excluded) +
                               ", \"require\": " + PyJsonList(options.require) + ", \"repo\": " +
                               (options.repo.empty() ? "null" : PyJsonString(options.repo)) + "}");
    const std::string path = LedgerPath(attempt.root);
    Status written = fs_.CreateDirs(ParentPath(path));
    if (written.ok()) written = AppendLocked(path, FormatLedgerRow(row));
    if (!written.ok()) {
      return fail_closed("the grounding ledger could not be written: " + written.message());
    }
  }

  if (!verified) return Decision::Veto(veto);
  Decision downstream = next();
  if (!downstream.allowed) return downstream;
  const std::string label = edge->claim + " (rev " + std::to_string(loaded->claim->rev) + ")";
  const GroundingResult counted =
      Ground(loaded->claim_text, {}, options.kinds,
             options.compat ? GroundingMode::kCompat : GroundingMode::kStrict);
  const std::string summary =
      counted.checked == 0
          ? label + " cites no " + NounList(options.kinds, "or") + ", so there is nothing to ground"
          : "every " + NounList(options.kinds, "and") + " in " + label + " appears in the evidence";
  downstream.checks.push_back(GateCheck{kGateActor, summary});
  return downstream;
}

std::string GroundingGate::Explain(const Attempt& attempt) {
  const GroundingEdgeConfig* edge = Find(attempt.edge());
  if (!edge) {
    return "edge " + attempt.edge().Name() + " is not configured: delegates to the next policy";
  }
  std::string out = "edge " + attempt.edge().Name() + " is configured: claim " + edge->claim +
                    ", evidence title, body" + (edge->evidence.empty() ? "" : ", ") +
                    Join(edge->evidence, ", ") + "; kinds " + Join(edge->options.kinds, ",") +
                    (edge->options.compat ? " (compat matching)" : "") + "\nledger " +
                    LedgerPath(attempt.root);
  Result<Card> card = read_card_(attempt.root, attempt.id);
  if (!card.ok()) return out + "\nthe card cannot be read: " + card.status().message();
  const ArtifactRecord* claim = card->NewestOfKind(edge->claim);
  return out + "\n" +
         (claim ? "claim: " + edge->claim + " (rev " + std::to_string(claim->rev) + ")"
                : "would veto: the card has no " + edge->claim + " artifact");
}

}  // namespace devflow

#include "plugin/agent_gate.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <vector>

#include "checker/prompt.h"
#include "checker/verdict.h"
#include "reports/fault_report.h"
#include "reports/gate_layout.h"
#include "reports/sha256.h"
#include "reports/verdict_cache.h"
#include "reports/veto_report.h"

namespace devflow {
namespace {

// Fault reports of one name kept side by side before the next is refused (FaultReportPath).
constexpr int kFaultReportCopies = 100;

const Actor kParkActor{"command", std::string("devflow-agent-gate"), std::nullopt};
const char kPrefix[] = "devflow-agent-gate: ";

// What Explain shows where a dispatch would put its fresh nonce.
const char kNoncePlaceholder[] = "<a fresh random nonce per dispatch>";

// 16 bytes from getrandom(2) as 32 lowercase hex digits (verdictNonce, issue 4).
Result<std::string> FreshNonce() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return OsError(errno, "getrandom", "16 bytes");
    }
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

struct Collected {
  std::vector<PromptInput> inputs;
  std::vector<std::string> paths;   // each input's record path (card-relative), as `inputs`
  std::vector<std::string> labels;  // "kind:rev", configured order
};

// Newest registration of each configured kind, in configured order; kinds with no
// registration are skipped (presence is the artifact gate's job, reference §4.4).
Result<Collected> CollectInputs(const Card& card, const AgentEdgeConfig& edge, FileSystem& fs) {
  Collected out;
  for (const std::string& kind : edge.inputs) {
    const ArtifactRecord* record = card.NewestOfKind(kind);
    if (!record) continue;
    // The journal is agent-writable: `..`, absolute paths and symlinks out are unreadable.
    Result<std::string> content = ReadArtifact(fs, card.dir, record->path);
    if (!content.ok()) return content.status();
    out.inputs.push_back(PromptInput{kind, record->rev, std::move(*content)});
    out.paths.emplace_back(record->path);
  }
  out.labels = InputLabels(card, edge);  // the cache key's labels (reports/gate_layout.h)
  return out;
}

// JudgedIdentity of the card's text and what was collected (reports/verdict_cache.h): what a
// cached verdict judged.
std::string JudgedInputs(const Card& card, const Collected& collected) {
  std::vector<std::pair<std::string, std::string_view>> inputs;
  for (const PromptInput& in : collected.inputs) {
    inputs.emplace_back(in.kind + ":" + std::to_string(in.rev), in.content);
  }
  return JudgedIdentity(card.title, card.body, std::move(inputs));
}

// Takes the inputs' contents out of `collected` (the prompt is their one copy; issue 11).
PromptParts MakePrompt(const Card& card, const AgentEdgeConfig& edge, Collected& collected,
                       std::optional<std::string> nonce, const ProviderConfig* provider) {
  PromptParts parts;
  // `reply: block-only`: the contract sentence asks for the block alone (checker/prompt.h).
  parts.block_only = provider != nullptr && provider->reply_block_only;
  parts.instruction = edge.prompt;
  parts.card_id = card.id;
  parts.edge = edge.edge.Name();
  parts.title = card.title;
  parts.body = card.body;
  parts.inputs = std::move(collected.inputs);
  parts.nonce = std::move(nonce);
  return parts;
}

std::string Workspace(const std::string& root) { return ParentPath(root); }

// The warning when CurrentCheckerIdentity fails: the attempt neither reads nor writes the cache.
std::string UnidentifiedChecker(const std::string& provider, const Status& why) {
  return std::string(kPrefix) + "the checker of provider \"" + provider +
         "\" cannot be identified: " + why.message() +
         "; not using the verdict cache for this attempt";
}

// A fail-closed veto (SPEC §5): the park request in `context`, upstream's reason.
Decision FailClosed(const std::string& edge_name, const std::string& fault,
                    AttemptContext& context) {
  context.parks.push_back(ParkRequest{kParkActor,
                                      "agent check for " + edge_name + " failed closed: " + fault,
                                      "devflow-agent-gate"});
  return Decision::Veto("agent check for " + edge_name + " could not run: " + fault + kParkClaim);
}

// A fault once the checker ran keeps its evidence (issue 10 item 8): the reply and the end of
// stderr go to a fault report (not under --dry-run, which writes nothing), `facts.why` and the
// report's path to the message (and so the ledger row); the park reason stays upstream's text,
// so journal lines stay identical.
Decision FailClosedWithReport(FileSystem& fs, const std::string& report_dir,
                              const std::string& workspace, const Edge& edge,
                              FaultReportFacts facts, AttemptContext& context) {
  std::string where;
  if (!context.dry_run) {
    auto path_of = [&](int copy) {
      return FaultReportPath(report_dir, facts.card_id, std::string(LocationName(edge.from)),
                             std::string(LocationName(edge.to)), facts.revision, facts.at, copy);
    };
    std::string path = path_of(1);
    AttemptContext::Report report{path, RenderFaultReport(facts), false, true};
    Status made = CheckReportDir(fs, workspace, ParentPath(path));
    if (made.ok()) made = fs.CreateDirs(ParentPath(path));
    // Never over another attempt's report of the same name (the next free copy number).
    for (int copy = 1; made.ok(); ++copy) {
      path = path_of(copy);
      made = fs.WriteFileAtomic(path, report.text, Replace::kNever);
      if (made.ok() || made.code() != "EEXIST" || copy == kFaultReportCopies) break;
      made = Status::Ok();
    }
    report.path = path;
    if (made.ok()) {
      where = "; fault report: " + path;
      report.written = true;
      report.text.clear();  // on disk; the outcome only names it
      context.reports.push_back(std::move(report));
    } else {
      where = "; the fault report could not be written: " + made.message();
    }
  }
  const std::string edge_name = edge.Name();
  Decision vetoed = FailClosed(edge_name, facts.fault, context);
  vetoed.reason = "agent check for " + edge_name + " could not run: " + facts.fault +
                  (facts.why.empty() ? "" : ": " + facts.why) + kParkClaim + where;
  return vetoed;
}

// The text a card's prompt carries from card.md, its title and body, as one hash: what the
// commit re-checks beside the artifacts (trial17 B1).
std::string CardTextSha256(std::string_view title, std::string_view body) {
  return JudgedIdentity(title, body, {});
}

// The input artifacts a checker judged, as the commit re-checks them under its lock (host/
// waterfall.h JudgedBytes; issue 7): each registered file's path and the SHA-256 of the bytes
// the prompt carried, the card's title and body as the prompt carried them (card.md read again
// as the store reads it), and what a fault report of this check needs (the allow reply
// included: it is what the checker said of the bytes it saw).
class JudgedArtifacts : public JudgedBytes {
 public:
  struct Piece {
    std::string record_path;  // card-relative, as the journal registers it
    std::string sha256;       // Sha256Hex of the bytes judged
  };
  JudgedArtifacts(FileSystem& fs, const Card& card, std::vector<Piece> pieces,
                  std::string inputs_sha256, std::string report_dir, std::string workspace,
                  Edge edge, FaultReportFacts facts)
      : fs_(fs),
        card_dir_(card.dir),
        card_path_(card.path),
        card_id_(card.id),
        card_text_sha256_(CardTextSha256(card.title, card.body)),
        pieces_(std::move(pieces)),
        inputs_sha256_(std::move(inputs_sha256)),
        report_dir_(std::move(report_dir)),
        workspace_(std::move(workspace)),
        edge_(edge),
        facts_(std::move(facts)) {}

  std::optional<Status> Changed() override {
    for (const Piece& piece : pieces_) {
      // Read as the gate read it (ReadArtifact: beneath the card dir, no symlink out).
      Result<std::string> now = ReadArtifact(fs_, card_dir_, piece.record_path);
      const std::string path = JoinPath(card_dir_, piece.record_path);
      if (!now.ok()) {
        return Status::Error("inputs-changed",
                             path +
                                 " changed while the checker judged it (it cannot be read now: " +
                                 now.status().message() + "); move again to judge the new bytes");
      }
      if (Sha256Hex(*now) != piece.sha256) {
        return Status::Error("inputs-changed", path +
                                                   " changed while the checker judged it; move "
                                                   "again to judge the new bytes");
      }
    }
    // card.md's title and body are in the prompt too: edited while the checker ran, the check
    // judged other text than the card now holds.
    Result<CardFile> now = ReadCardText(fs_, card_id_, card_dir_);
    if (!now.ok()) {
      return Status::Error("card-edited",
                           card_path_ +
                               " changed while the checker judged it (the card cannot be read "
                               "now: " +
                               now.status().message() + "); move again to judge the new text");
    }
    if (CardTextSha256(now->title, now->body) != card_text_sha256_) {
      return Status::Error("card-edited", card_path_ +
                                              "'s title or body changed while the checker judged "
                                              "it; move again to judge the new text");
    }
    return std::nullopt;
  }

  Decision FailClosed(const std::string& fault, AttemptContext& context) override {
    FaultReportFacts facts = facts_;
    facts.fault = fault;
    Decision vetoed =
        FailClosedWithReport(fs_, report_dir_, workspace_, edge_, std::move(facts), context);
    vetoed.judged.push_back(Judged{inputs_sha256_, nullptr});
    return vetoed;
  }

 private:
  FileSystem& fs_;
  std::string card_dir_;
  std::string card_path_;
  std::string card_id_;
  std::string card_text_sha256_;  // CardTextSha256 of the card the prompt was built from
  std::vector<Piece> pieces_;
  std::string inputs_sha256_;
  std::string report_dir_;
  std::string workspace_;
  Edge edge_;
  FaultReportFacts facts_;
};

}  // namespace

Result<const Card*> CardForAttempt(const Attempt& attempt, const AttemptContext& context,
                                   const CardReader& read, std::optional<Card>& held) {
  const Card* given = context.card;
  if (given && given->root == attempt.root && given->id == attempt.id &&
      given->stage_revision == attempt.expected_revision) {
    return given;
  }
  Result<Card> card = read(attempt.root, attempt.id);
  if (!card.ok()) return card.status();
  held = std::move(*card);
  return &*held;
}

AgentGate::AgentGate(AgentGateConfig config, CardReader read_card, CheckerDispatch& checker,
                     FileSystem& fs)
    : config_(std::move(config)), read_card_(std::move(read_card)), checker_(checker), fs_(fs) {}

std::string AgentGate::ReportDir(const std::string& root) const {
  return AgentReportDir(config_, root);
}

std::string AgentGate::CacheDir(const std::string& root) const {
  return AgentCacheDir(config_, root);
}

Decision AgentGate::Admit(const Attempt& attempt, AttemptContext& context, const Next& next) {
  const Edge edge = attempt.edge();
  const AgentEdgeConfig* configured = config_.Find(edge);
  if (!configured) return next();  // unconfigured edge: delegate without reading the card
  const std::string edge_name = edge.Name();

  auto fail_closed = [&](const std::string& fault) {
    return FailClosed(edge_name, fault, context);
  };
  auto allow_with = [&](const std::string& summary) {
    Decision downstream = next();
    if (!downstream.allowed) return downstream;  // a downstream veto passes back unchanged
    downstream.checks.push_back(GateCheck{Actor{"agent", std::nullopt, std::nullopt}, summary});
    return downstream;
  };

  std::optional<Card> held;
  Result<const Card*> read = CardForAttempt(attempt, context, read_card_, held);
  if (!read.ok()) return fail_closed("the card cannot be read: " + read.status().message());
  const Card* card = *read;
  // The id names the report file: whatever the reader returned, it must not leave the dir.
  if (!IsValidCardId(card->id)) {
    return fail_closed("the card cannot be read: card id \"" + card->id +
                       "\" is not a valid card id (<digits>-<slug>)");
  }

  Result<Collected> collected = CollectInputs(*card, *configured, fs_);
  if (!collected.ok()) {
    return fail_closed("a required input cannot be read: " + collected.status().message());
  }

  CollectedWarnings dropped;
  Warnings& warnings = context.warnings ? *context.warnings : dropped;
  const std::string cache_dir = CacheDir(attempt.root);
  std::optional<VerdictCache> cache;
  // The key is upstream's; the record also names the checker that gave the verdict (provider
  // definition and verdictNonce setting), and a hit needs that to match (issue 7 item 3).
  VerdictCacheKey key = VerdictCacheKey::Compute(edge_name, attempt.root, card->id,
                                                 collected->labels, configured->prompt);
  // The identity covers the content of the files the provider's command names (its program,
  // an interpreter's script): a checker rewritten in place is another checker. No identity (a
  // file that cannot be read) means no cache for this attempt: no hit, no record. Worked out
  // only when there is a cache.
  std::string checker_id;
  // ... and the contents it judged (an input edited in place keeps its kind:rev).
  std::string inputs_id = JudgedInputs(*card, *collected);
  // Every decision on these inputs says which bytes it judged (the ledger's inputsSha256).
  auto judged = [&](Decision decided) {
    decided.judged.push_back(Judged{inputs_id, nullptr});
    return decided;
  };
  if (!cache_dir.empty()) {
    const std::string workspace = Workspace(attempt.root);
    Result<std::string> identified = CurrentCheckerIdentity(checker_.Provider(configured->provider),
                                                            configured->verdict_nonce, workspace);
    cache.emplace(cache_dir, fs_);
    if (!identified.ok()) {
      warnings.Warn(UnidentifiedChecker(configured->provider, identified.status()));
      cache.reset();
    } else if (!cache->CheckDir(workspace, warnings)) {
      cache.reset();
    }
    if (identified.ok()) checker_id = std::move(*identified);
  }
  if (cache) {
    if (auto hit = cache->Lookup(key, checker_id, inputs_id, warnings)) {
      // A record another writer made is bounded like a reply (ours already are).
      const std::string summary = BoundVerdictLine(hit->summary);
      if (!hit->allow) {
        return judged(Decision::Veto("agent check vetoed " + edge_name + " (cached): " + summary +
                                     "; full report: " + hit->report_path.value_or("")));
      }
      // Read and hashed once, just now: nothing for the commit to re-check (issue 11).
      Decision allowed = allow_with("[cached] " + summary);
      if (allowed.allowed) allowed.judged.push_back(Judged{std::move(inputs_id), nullptr});
      return allowed;
    }
  }

  std::optional<std::string> nonce;
  if (configured->verdict_nonce) {
    Result<std::string> fresh = FreshNonce();
    if (!fresh.ok()) {
      return judged(
          fail_closed("the verdict nonce could not be drawn: " + fresh.status().message()));
    }
    nonce = std::move(*fresh);
  }

  // What the commit re-checks if the checker allows (JudgedArtifacts): each input's digest,
  // taken before the prompt takes the bytes. Only when time will pass with the bytes out of
  // sight, a checker running, and something may be committed (not under --dry-run).
  std::vector<JudgedArtifacts::Piece> pieces;
  if (!context.dry_run) {
    for (size_t i = 0; i < collected->inputs.size(); ++i) {
      pieces.push_back({collected->paths[i], Sha256Hex(collected->inputs[i].content)});
    }
  }

  CheckRequest request;
  request.provider = configured->provider;
  request.inputs_manifest = InputManifest(collected->inputs);  // before the prompt takes them
  request.prompt = AssemblePromptPieces(
      MakePrompt(*card, *configured, *collected, nonce, checker_.Provider(configured->provider)));
  request.timeout_ms = config_.check_timeout_ms;
  request.max_reply_bytes = config_.max_reply_bytes;
  request.card_id = card->id;
  request.edge = edge_name;
  request.root = attempt.root;
  request.workspace = Workspace(attempt.root);
  CheckEvidence evidence;
  request.evidence = &evidence;
  const std::string report_dir = ReportDir(attempt.root);
  // The facts a fault report of this check starts from (FailClosedWithReport).
  auto fault_facts = [&]() {
    FaultReportFacts facts;
    facts.card_id = card->id;
    facts.edge = edge_name;
    facts.revision = attempt.expected_revision;
    facts.checked_inputs = collected->labels;
    facts.at = attempt.at;
    if (!PathWithin(report_dir, attempt.root)) facts.root = attempt.root;
    facts.provider = configured->provider;
    return facts;
  };
  auto fail_with_evidence = [&](const std::string& fault, const std::string& why) {
    FaultReportFacts facts = fault_facts();
    facts.sandbox = evidence.sandbox;
    facts.fault = fault;
    facts.why = why;
    facts.reply = std::move(evidence.reply);
    facts.reply_bytes = evidence.reply_bytes;
    facts.reply_over = evidence.reply_over;
    facts.stderr_tail = std::move(evidence.stderr_tail);
    facts.stderr_bytes = evidence.stderr_bytes;
    facts.reply_redacted = evidence.reply_redacted;
    facts.stderr_cut = evidence.stderr_cut;
    facts.stderr_redacted = evidence.stderr_redacted;
    return judged(FailClosedWithReport(fs_, report_dir, Workspace(attempt.root), edge,
                                       std::move(facts), context));
  };
  Result<CheckReply> reply = checker_.Dispatch(request);
  if (!reply.ok() && reply.status().code() == "deadline") {
    // The caller's budget, not the deployment's fault: a veto, no park, no report (trial15 R3).
    return judged(Decision::Veto("agent check for " + edge_name +
                                 " was not started: " + reply.status().message()));
  }
  if (!reply.ok()) {
    if (reply.status().code() == "fault" && evidence.ran) {
      return fail_with_evidence(reply.status().message(), "");
    }
    return judged(fail_closed(reply.status().message()));
  }

  // The provider's `reply:` rule (docs/providers.md): block-only admits no text around the block.
  const ProviderConfig* definition = checker_.Provider(configured->provider);
  const ReplyRule rule =
      definition && definition->reply_block_only ? ReplyRule::kBlockOnly : ReplyRule::kText;
  const std::optional<Verdict> said = ParseLastVerdict(reply->text, nonce, rule);
  if (!said) {
    evidence = CheckEvidence{true,
                             std::move(reply->text),
                             0,
                             false,
                             std::move(reply->stderr_tail),
                             reply->stderr_bytes,
                             reply->sandbox,
                             reply->reply_redacted,
                             reply->stderr_cut,
                             reply->stderr_redacted};
    evidence.reply_bytes = static_cast<int64_t>(evidence.reply.size());
    const std::string why = VerdictFaultReason(evidence.reply, nonce, rule);
    return fail_with_evidence("the checker replied without a parsable verdict block", why);
  }
  // The one place a checker's words enter the system: from here on (journal check, cache
  // record, decision message → terminal and ledger) they are bounded; only the veto report
  // gets them whole, within maxReplyBytes (issue 7 item 11).
  const Verdict verdict = BoundVerdict(*said);

  if (verdict.allow) {
    // Cached before delegating, so it is cached even if a later policy vetoes (reference §4.3).
    if (cache && !context.dry_run) {
      cache->Store(VerdictCacheRecord{key, true, verdict.summary, std::nullopt, attempt.at,
                                      checker_id, inputs_id},
                   warnings);
    }
    Decision allowed = allow_with(verdict.summary);
    if (!allowed.allowed) return allowed;  // a downstream veto passes back unchanged
    // The checker saw the bytes as they were when the prompt was built; the commit re-hashes
    // them under its lock and fails closed if they changed meanwhile (issue 7).
    std::shared_ptr<JudgedBytes> recheck;
    if (!context.dry_run) {
      FaultReportFacts facts = fault_facts();
      facts.sandbox = reply->sandbox;
      facts.reply_bytes = static_cast<int64_t>(reply->text.size());
      facts.reply = std::move(reply->text);
      facts.stderr_tail = std::move(reply->stderr_tail);
      facts.stderr_bytes = reply->stderr_bytes;
      facts.reply_redacted = reply->reply_redacted;
      facts.stderr_cut = reply->stderr_cut;
      facts.stderr_redacted = reply->stderr_redacted;
      recheck =
          std::make_shared<JudgedArtifacts>(fs_, *card, std::move(pieces), inputs_id, report_dir,
                                            Workspace(attempt.root), edge, std::move(facts));
    }
    allowed.judged.push_back(Judged{std::move(inputs_id), std::move(recheck)});
    return allowed;
  }

  VetoReportFacts facts;
  facts.card_id = card->id;
  facts.edge = edge_name;
  facts.revision = attempt.expected_revision;
  facts.checked_inputs = collected->labels;
  facts.at = attempt.at;
  facts.summary = said->summary;
  facts.findings = said->findings;
  facts.sandbox = reply->sandbox;
  if (!PathWithin(report_dir, attempt.root)) facts.root = attempt.root;
  const std::string& dir = report_dir;
  const std::string path =
      VetoReportPath(dir, card->id, std::string(LocationName(edge.from)),
                     std::string(LocationName(edge.to)), attempt.expected_revision);
  AttemptContext::Report report{path, RenderVetoReport(facts), false};
  if (!context.dry_run) {
    Status made = CheckReportDir(fs_, Workspace(attempt.root), dir);
    if (made.ok()) made = fs_.CreateDirs(dir);
    if (made.ok()) made = fs_.WriteFileAtomic(path, report.text);
    if (!made.ok()) {
      return judged(fail_closed("the veto report could not be written: " + made.message()));
    }
    report.written = true;
    if (cache) {
      cache->Store(
          VerdictCacheRecord{key, false, verdict.summary, path, attempt.at, checker_id, inputs_id},
          warnings);
    }
  }
  context.reports.push_back(report);
  // Under --dry-run the report is not written: the message must not name it as a file (the
  // CLI prints its text instead, move --json carries it as reportText).
  return judged(Decision::Veto(
      "agent check vetoed " + edge_name + ": " + verdict.summary +
      (report.written ? "; full report: " : "; the full report would be written to ") + path));
}

std::string AgentGate::Explain(const Attempt& attempt) {
  const Edge edge = attempt.edge();
  const AgentEdgeConfig* configured = config_.Find(edge);
  if (!configured)
    return "edge " + edge.Name() + " is not configured: delegates to the next policy";
  std::string out = "edge " + edge.Name() + " is configured: provider \"" + configured->provider +
                    "\", checkTimeoutMs " + std::to_string(config_.check_timeout_ms) + "\n";
  if (!checker_.Provider(configured->provider)) {
    out += "provider \"" + configured->provider +
           "\" is not defined under providers: this check would fail closed (see devflow-gate "
           "config check)\n";
  }
  Result<Card> card = read_card_(attempt.root, attempt.id);
  if (!card.ok()) return out + "the card cannot be read: " + card.status().message();
  Result<Collected> collected = CollectInputs(*card, *configured, fs_);
  if (!collected.ok()) {
    return out +
           "would fail closed: a required input cannot be read: " + collected.status().message();
  }
  std::string labels;
  for (const auto& l : collected->labels) labels += (labels.empty() ? "" : ", ") + l;
  out += "inputs: " + (labels.empty() ? std::string("none") : labels) + "\n";
  out += "report would be written to: " +
         VetoReportPath(ReportDir(attempt.root), card->id, std::string(LocationName(edge.from)),
                        std::string(LocationName(edge.to)), attempt.expected_revision) +
         "\n";
  VerdictCacheKey key = VerdictCacheKey::Compute(edge.Name(), attempt.root, card->id,
                                                 collected->labels, configured->prompt);
  const std::string cache_dir = CacheDir(attempt.root);
  out += "cache key: " + key.CompactJson() + "\n";
  if (cache_dir.empty()) {
    out += "cache: disabled (verdictCacheDir is not set)\n";
  } else {
    VerdictCache cache(cache_dir, fs_);
    out += "cache file: " + cache.PathFor(key) + "\n";
    CollectedWarnings warnings;
    std::optional<VerdictCacheRecord> hit;
    Result<std::string> checker_id =
        CurrentCheckerIdentity(checker_.Provider(configured->provider), configured->verdict_nonce,
                               Workspace(attempt.root));
    if (!checker_id.ok()) {
      warnings.Warn(UnidentifiedChecker(configured->provider, checker_id.status()));
    } else if (cache.CheckDir(Workspace(attempt.root), warnings)) {
      hit = cache.Lookup(key, *checker_id, JudgedInputs(*card, *collected), warnings);
    }
    for (const auto& w : warnings.lines) out += "warning: " + w + "\n";
    if (hit) {
      out += std::string("cached verdict: ") + (hit->allow ? "allow" : "veto") + ": " +
             BoundVerdictLine(hit->summary) + " (at " + hit->at + ")\n";
    } else {
      out += "cached verdict: none (the checker would be dispatched)\n";
    }
  }
  std::optional<std::string> nonce;
  if (configured->verdict_nonce) nonce = kNoncePlaceholder;
  const std::string prompt = AssemblePrompt(
      MakePrompt(*card, *configured, *collected, nonce, checker_.Provider(configured->provider)));
  out += "prompt that would be sent (" + std::to_string(prompt.size()) + " bytes" +
         (nonce ? ", with a fresh nonce in place of the placeholder" : "") + "):\n";
  out += "----- prompt begin -----\n" + prompt + "\n----- prompt end -----";
  return out;
}

}  // namespace devflow

// The built-in grounding checker: prompt in, one fenced JSON verdict out (SPEC §6).
#include "checker/grounding_checker.h"

#include <cstdlib>
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "checker/grounding.h"
#include "checker/prompt.h"
#include "host/terminal.h"

namespace devflow {
namespace {

constexpr std::string_view kUsage =
    "usage: devflow-gate checker grounding [--claim-kind KIND] [--kinds date,url,ref,hash,...]"
    " [--require RE]... [--repo OWNER/NAME] [--compat]";

struct Options {
  std::optional<std::string> claim_kind;
  std::vector<std::string> kinds = DefaultTokenKinds();
  std::vector<std::string> require;
  std::string repo;
  bool compat = false;
  bool help = false;
};

bool IsArtifactKind(std::string_view kind) {
  if (kind.empty()) return false;
  for (size_t i = 0; i < kind.size(); ++i) {
    const char c = kind[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && c == '-');
    if (!ok) return false;
  }
  return true;
}

Result<Options> ParseArgs(const std::vector<std::string>& args) {
  Options options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      continue;
    }
    if (arg == "--compat") {
      options.compat = true;
      continue;
    }
    std::string name = arg;
    std::optional<std::string> value;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    if (name != "--claim-kind" && name != "--kinds" && name != "--require" && name != "--repo") {
      return Status::Error("usage", "unknown option \"" + arg + "\"");
    }
    if (!value) {
      if (i + 1 >= args.size()) return Status::Error("usage", name + " needs a value");
      value = args[++i];
    }
    if (name == "--repo") {
      if (Status bad = CheckRepoName(*value); !bad.ok()) return bad;
      options.repo = *value;
    } else if (name == "--require") {
      if (Status bad = CheckRequirePatterns({*value}); !bad.ok()) return bad;
      options.require.push_back(*value);
    } else if (name == "--claim-kind") {
      if (!IsArtifactKind(*value)) {
        return Status::Error("usage", "--claim-kind \"" + *value +
                                          "\" is not an artifact kind (lowercase letters, digits "
                                          "and '-', starting with a letter or digit)");
      }
      options.claim_kind = *value;
    } else {
      Result<std::vector<std::string>> kinds = ParseTokenKinds(*value);
      if (!kinds.ok()) return kinds.status();
      options.kinds = std::move(kinds).value();
    }
  }
  return options;
}

std::string Noun(std::string_view kind) {
  if (kind == "url") return "URL";
  if (kind == "ref") return "ticket ref";
  if (kind == "path") return "file path";
  return std::string(kind);
}

// "date, URL, ticket ref and hash" (or "... or hash" with `last_word` = "or").
std::string NounList(const std::vector<std::string>& kinds, std::string_view last_word) {
  std::string out;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " " + std::string(last_word) + " " : ", ";
    out += Noun(kinds[i]);
  }
  return out;
}

// The whole stream in blocks: sgetn on a synchronised std::cin is one fread per block, where an
// istreambuf_iterator is one getc per character (issue 11 item 2). The buffer doubles as it fills.
std::string ReadAll(std::istream& in) {
  std::string out;
  size_t used = 0;
  out.resize(64 * 1024);
  std::streambuf* buf = in.rdbuf();
  if (!buf) return {};
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
    const std::streamsize got = buf->sgetn(out.data() + used, std::streamsize(out.size() - used));
    if (got <= 0) break;
    used += size_t(got);
  }
  out.resize(used);
  return out;
}

std::string Label(const PromptInput& input) {
  return input.kind + " (rev " + std::to_string(input.rev) + ")";
}

void WriteVerdict(std::ostream& out, bool allow, const std::string& summary,
                  const std::vector<std::string>& findings,
                  const std::optional<std::string>& nonce) {
  nlohmann::ordered_json block;
  block["verdict"] = allow ? "allow" : "veto";
  block["summary"] = summary;
  block["findings"] = findings;
  if (nonce) block["nonce"] = *nonce;
  out << "\n```json\n"
      << block.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n```\n";
}

}  // namespace

int RunGroundingChecker(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                        std::ostream& err) {
  Result<Options> options = ParseArgs(args);
  if (!options.ok()) {
    err << "devflow-gate checker grounding: " << TerminalLine(options.status().message()) << "; "
        << kUsage << "\n";
    return 2;
  }
  if (options->help) {
    out << kUsage << "\n"
        << "Reads an agent-gate prompt on stdin, grounds the newest input of the claim kind "
           "against the card and the other inputs, and replies with one fenced JSON verdict.\n";
    return 0;
  }

  const std::string prompt = ReadAll(in);
  // The gate hands the exact layout of the artifact sections out of band; cut by it, a forged
  // separator inside an artifact cannot replace the claim or add evidence (docs/security.md).
  const char* manifest = std::getenv("DEVFLOW_GATE_INPUTS");
  Result<PromptParts> parsed =
      manifest ? ParsePrompt(prompt, std::string_view(manifest)) : ParsePrompt(prompt);
  if (!parsed.ok()) {
    err << "devflow-gate checker grounding: " << TerminalLine(parsed.status().message()) << "\n";
    return 2;
  }
  const PromptParts& parts = *parsed;
  // The prompt of a `reply: block-only` provider asks for the block alone (checker/prompt.h):
  // the account of what was grounded then goes to stderr, which the gate keeps in a fault
  // report's stderr tail and never parses, and stdout holds the verdict block only.
  std::ostream& prose = parts.block_only ? err : out;
  prose << "grounding checker: card " << parts.card_id << ", edge " << parts.edge << "\n";

  // The claim: the newest input of the claim kind (the later one on equal revisions).
  std::optional<size_t> claim;
  const std::string claim_kind =
      options->claim_kind.value_or(parts.inputs.empty() ? std::string() : parts.inputs.back().kind);
  for (size_t i = 0; i < parts.inputs.size(); ++i) {
    if (parts.inputs[i].kind == claim_kind &&
        (!claim || parts.inputs[i].rev >= parts.inputs[*claim].rev)) {
      claim = i;
    }
  }
  if (!claim) {
    std::string present;
    for (const PromptInput& input : parts.inputs) {
      present += (present.empty() ? "" : ", ") + Label(input);
    }
    const std::string what = claim_kind.empty() ? std::string("the prompt carries no input")
                                                : "the prompt carries no " + claim_kind + " input";
    prose << "claim: missing (" << what << ")\n";
    const std::string summary =
        (claim_kind.empty() ? std::string("the claim artifact is missing")
                            : "the claim artifact " + claim_kind + " is missing") +
        " from the prompt, so nothing could be grounded";
    WriteVerdict(out, false, summary,
                 {what + (present.empty() ? "" : " (inputs: " + present + ")")}, parts.nonce);
    return 0;
  }

  const PromptInput& claim_input = parts.inputs[*claim];
  std::vector<std::string_view> evidence = {parts.title, parts.body};
  std::string evidence_inputs;
  for (size_t i = 0; i < parts.inputs.size(); ++i) {
    if (i == *claim) continue;
    evidence.push_back(parts.inputs[i].content);
    evidence_inputs += ", " + Label(parts.inputs[i]);
  }
  const GroundingResult result =
      Ground(claim_input.content, evidence, options->kinds,
             options->compat ? GroundingMode::kCompat : GroundingMode::kStrict, options->repo);
  std::vector<std::string> reasons = GroundingReasons(result);
  for (std::string& reason : RequireReasons(claim_input.content, options->require)) {
    reasons.push_back(std::move(reason));
  }

  std::string kinds_text;
  for (const std::string& kind : options->kinds)
    kinds_text += (kinds_text.empty() ? "" : ", ") + kind;
  prose << "claim: " << Label(claim_input) << ", " << claim_input.content.size() << " bytes\n"
        << "evidence: card title and body" << evidence_inputs << "\n"
        << "kinds: " << kinds_text << "\n"
        << result.checked << " distinct specific(s) in the claim, " << reasons.size()
        << " ungrounded\n";
  for (const std::string& reason : reasons) prose << "  - " << reason << "\n";

  if (reasons.empty()) {
    const std::string summary =
        result.checked == 0 ? Label(claim_input) + " cites no " + NounList(options->kinds, "or") +
                                  ", so there is nothing to ground"
                            : "every " + NounList(options->kinds, "and") + " in " +
                                  Label(claim_input) + " appears in the evidence";
    WriteVerdict(out, true, summary, {}, parts.nonce);
  } else {
    const size_t ungrounded = reasons.size() - result.bidi.size();
    std::string summary = std::to_string(ungrounded) + " ungrounded specific" +
                          (ungrounded == 1 ? "" : "s") + " in " + Label(claim_input);
    if (!result.bidi.empty()) {  // docs/grounding.md, "Markup and bidi controls"
      summary = Label(claim_input) +
                " holds a bidi control, so the order a reader sees cannot be checked" +
                (ungrounded == 0 ? "" : "; " + summary);
    }
    WriteVerdict(out, false, summary, reasons, parts.nonce);
  }
  return 0;
}

}  // namespace devflow

#include "plugin/artifact_gate.h"

#include <yaml-cpp/yaml.h>

#include <sstream>

namespace devflow {
namespace {

bool IsBlank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string RTrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

const std::vector<std::string>* EdgeKinds(const ArtifactGateConfig& config, const Edge& edge) {
  for (const auto& [e, kinds] : config.edges) {
    if (e == edge) return &kinds;
  }
  return nullptr;
}

}  // namespace

ArtifactGate::ArtifactGate(ArtifactGateConfig config, CardReader read_card, FileSystem& fs)
    : config_(std::move(config)), read_card_(std::move(read_card)), fs_(fs) {}

std::vector<std::string> ArtifactGate::Inspect(const ArtifactKindConfig& kind,
                                               const std::string& content,
                                               const std::string& label) {
  std::vector<std::string> defects;
  std::vector<std::string> lines = SplitLines(content);
  size_t body_start = 0;
  bool has_block = !lines.empty() && RTrim(lines[0]) == "---";
  std::string front;
  if (has_block) {
    size_t end = 1;
    while (end < lines.size() && RTrim(lines[end]) != "---") ++end;
    if (end == lines.size()) {
      has_block = false;
    } else {
      for (size_t i = 1; i < end; ++i) front += lines[i] + "\n";
      body_start = end + 1;
    }
  }
  if (!kind.frontmatter.empty()) {
    if (!has_block) {
      defects.push_back(label +
                        ": has no front matter block (a first line \"---\" and a closing \"---\")");
    } else {
      try {
        YAML::Node node = YAML::Load(front);
        if (!node.IsMap()) {
          defects.push_back(label + ": front matter is not a mapping of fields");
        } else {
          for (const auto& field : kind.frontmatter) {
            YAML::Node value = node[field.title];
            if (!value.IsDefined() || value.IsNull()) {
              defects.push_back(label + ": front matter field \"" + field.title + "\" is missing");
            }
          }
        }
      } catch (const YAML::Exception& e) {
        defects.push_back(label + ": front matter is not valid YAML: " + e.msg);
      }
    }
  }
  auto find_heading = [&](const std::string& title) -> std::optional<size_t> {
    for (size_t i = body_start; i < lines.size(); ++i) {
      if (RTrim(lines[i]) == "## " + title) return i;
    }
    return std::nullopt;
  };
  for (const auto& section : kind.sections) {
    if (!find_heading(section.title)) {
      defects.push_back(label + ": section \"## " + section.title + "\" is missing");
    }
  }
  for (const auto& section : kind.non_empty_sections) {
    auto at = find_heading(section.title);
    if (!at) {
      defects.push_back(label + ": section \"## " + section.title + "\" is missing");
      continue;
    }
    bool filled = false;
    for (size_t i = *at + 1; i < lines.size() && (lines[i].empty() || lines[i][0] != '#'); ++i) {
      if (!IsBlank(lines[i])) {
        filled = true;
        break;
      }
    }
    if (!filled) defects.push_back(label + ": section \"## " + section.title + "\" is empty");
  }
  return defects;
}

Result<std::vector<std::string>> ArtifactGate::Defects(const Attempt& attempt,
                                                       const std::vector<std::string>& kinds,
                                                       const AttemptContext& context) {
  std::optional<Card> held;
  Result<const Card*> read = CardForAttempt(attempt, context, read_card_, held);
  if (!read.ok()) return read.status();
  const Card* card = *read;
  std::vector<std::string> defects;
  for (const std::string& kind : kinds) {
    const ArtifactRecord* record = card->NewestOfKind(kind);
    if (!record) {
      defects.push_back(kind + ": no artifact of this kind is registered on card " + card->id);
      continue;
    }
    // The journal is agent-writable: `..`, absolute paths and symlinks out are unreadable.
    Result<std::string> content = ReadArtifact(fs_, card->dir, record->path);
    if (!content.ok()) {
      defects.push_back(kind + ": " + std::string(record->path) +
                        " cannot be read: " + content.status().message());
      continue;
    }
    const ArtifactKindConfig* shape = config_.FindKind(kind);
    if (!shape) continue;
    for (auto& d : Inspect(*shape, *content, kind + " (" + std::string(record->path) + ")"))
      defects.push_back(d);
  }
  return defects;
}

Decision ArtifactGate::Admit(const Attempt& attempt, AttemptContext& context, const Next& next) {
  const std::vector<std::string>* kinds = EdgeKinds(config_, attempt.edge());
  if (!kinds) return next();
  Result<std::vector<std::string>> defects = Defects(attempt, *kinds, context);
  if (!defects.ok()) {
    return Decision::Veto("required artifacts cannot be checked: " + defects.status().message());
  }
  if (defects->empty()) return next();
  std::string reason = "required artifacts are missing or malformed: ";
  for (size_t i = 0; i < defects->size(); ++i) reason += (i ? "; " : "") + (*defects)[i];
  return Decision::Veto(reason);
}

std::string ArtifactGate::Explain(const Attempt& attempt) {
  const Edge edge = attempt.edge();
  const std::vector<std::string>* kinds = EdgeKinds(config_, edge);
  if (!kinds) return "edge " + edge.Name() + " is not configured: delegates to the next policy";
  std::string list;
  for (const auto& k : *kinds) list += (list.empty() ? "" : ", ") + k;
  std::string out = "edge " + edge.Name() + " requires: " + list + "\n";
  Result<std::vector<std::string>> defects = Defects(attempt, *kinds, AttemptContext());
  if (!defects.ok()) return out + "cannot check: " + defects.status().message();
  if (defects->empty()) return out + "every required artifact is present and sound";
  out += "would veto:";
  for (const auto& d : *defects) out += "\n  - " + d;
  return out;
}

}  // namespace devflow

#include "host/card_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace devflow {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view TrimEnd(std::string_view s) {
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// card.md split into its lines (without '\n'); `close` is the index of the closing marker.
struct Split {
  std::vector<std::string> lines;
  size_t close = 0;
  std::string body;  // bytes after the closing marker line's '\n'
  bool closing_has_newline = false;
};

std::optional<Split> SplitFrontMatter(std::string_view raw) {
  Split s;
  size_t start = 0;
  while (true) {
    size_t end = raw.find('\n', start);
    if (end == std::string_view::npos) {
      s.lines.emplace_back(raw.substr(start));
      break;
    }
    s.lines.emplace_back(raw.substr(start, end - start));
    start = end + 1;
  }
  if (s.lines.empty() || TrimEnd(s.lines[0]) != "---") return std::nullopt;
  size_t offset = s.lines[0].size() + 1;
  for (size_t i = 1; i < s.lines.size(); ++i) {
    if (TrimEnd(s.lines[i]) == "---") {
      s.close = i;
      offset += s.lines[i].size();
      s.closing_has_newline = offset < raw.size();
      s.body = s.closing_has_newline ? std::string(raw.substr(offset + 1)) : std::string();
      s.lines.resize(i + 1);
      return s;
    }
    offset += s.lines[i].size() + 1;
  }
  return std::nullopt;
}

std::string YamlText(const Split& s) {
  std::string yaml;
  for (size_t i = 1; i < s.close; ++i) {
    if (i > 1) yaml += '\n';
    // yaml-cpp keeps a CR in plain scalars; CRLF files must read like LF ones.
    std::string_view line = s.lines[i];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    yaml += line;
  }
  return yaml;
}

Status Corrupt(std::string_view path, const std::string& problem) {
  return Status::Error("corrupt", std::string(path) + ": " + problem);
}

// The top-level key a front-matter line starts, or "" for anything else (indented lines,
// comments, sequence items, blank lines).
std::string TopLevelKey(std::string_view line) {
  if (line.empty() || IsSpace(line[0]) || line[0] == '#' || line[0] == '-') return "";
  size_t key_end;
  std::string key;
  if (line[0] == '"' || line[0] == '\'') {
    size_t q = line.find(line[0], 1);
    if (q == std::string_view::npos) return "";
    key = std::string(line.substr(1, q - 1));
    key_end = q + 1;
  } else {
    size_t colon = 0;
    while (true) {
      colon = line.find(':', colon);
      if (colon == std::string_view::npos) return "";
      if (colon + 1 == line.size() || IsSpace(line[colon + 1])) break;
      ++colon;
    }
    key = std::string(TrimEnd(line.substr(0, colon)));
    key_end = colon;
  }
  std::string_view rest = line.substr(key_end);
  while (!rest.empty() && (rest[0] == ' ' || rest[0] == '\t')) rest.remove_prefix(1);
  if (rest.empty() || rest[0] != ':') return "";
  if (rest.size() > 1 && !IsSpace(rest[1])) return "";
  return key;
}

// Lines that belong to the value of the key line before them: indented lines and block
// sequence items at column 0.
bool IsContinuation(std::string_view line) {
  if (line.empty()) return false;
  if (line[0] == ' ' || line[0] == '\t') return !TrimEnd(line).empty();
  return line[0] == '-' && (line.size() == 1 || IsSpace(line[1]));
}

// Front-matter lines (between the markers) with textual key edits.
class FrontMatterLines {
 public:
  FrontMatterLines(std::vector<std::string> lines, std::string eol)
      : lines_(std::move(lines)), eol_(std::move(eol)) {}

  void Set(const std::string& key, const std::string& value) {
    std::string text = key + ": " + value + eol_;
    bool placed = false;
    for (size_t i = 0; i < lines_.size();) {
      if (TopLevelKey(lines_[i]) != key) {
        ++i;
        continue;
      }
      size_t end = i + 1;
      while (end < lines_.size() && IsContinuation(lines_[end])) ++end;
      if (!placed) {
        lines_.erase(lines_.begin() + static_cast<long>(i) + 1,
                     lines_.begin() + static_cast<long>(end));
        lines_[i] = text;
        placed = true;
        ++i;
      } else {  // a duplicate key: the first occurrence carries the value
        lines_.erase(lines_.begin() + static_cast<long>(i),
                     lines_.begin() + static_cast<long>(end));
      }
    }
    if (!placed) lines_.push_back(text);
  }

  void Remove(const std::string& key) {
    for (size_t i = 0; i < lines_.size();) {
      if (TopLevelKey(lines_[i]) != key) {
        ++i;
        continue;
      }
      size_t end = i + 1;
      while (end < lines_.size() && IsContinuation(lines_[end])) ++end;
      lines_.erase(lines_.begin() + static_cast<long>(i), lines_.begin() + static_cast<long>(end));
    }
  }

  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;
  std::string eol_;  // "\r" when the file uses CRLF line ends
};

bool IsYamlSpecialWord(std::string_view s) {
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const char* const kWords[] = {"true", "false", "yes",   "no",   "on",   "off",
                                       "null", "y",     "n",     "~",    ".inf", ".nan",
                                       "<<",   "=",     "+.inf", "-.inf"};
  for (const char* w : kWords) {
    if (lower == w) return true;
  }
  return false;
}

// A scalar that starts with a digit and uses only number/date/time characters may resolve to
// a number or a timestamp in some YAML schema; quote it to keep it a string everywhere.
bool LooksNumeric(std::string_view s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
           c == '+' || c == '-' || c == 'x' || c == 'X' || c == 'o' || c == 'O' || c == 'T' ||
           c == 't' || c == 'Z' || c == 'z';
  });
}

}  // namespace

std::string_view TrimAscii(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  return TrimEnd(s);
}

std::string YamlScalar(std::string_view s) {
  bool plain = !s.empty() && !IsSpace(s.front()) && !IsSpace(s.back()) && !IsYamlSpecialWord(s) &&
               !LooksNumeric(s) &&
               std::string_view("-?:,[]{}#&*!|>'\"%@`").find(s[0]) == std::string_view::npos &&
               s.find(": ") == std::string_view::npos && s.find(" #") == std::string_view::npos &&
               s.back() != ':';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) plain = false;
  }
  if (plain) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          static const char* const kHex = "0123456789abcdef";
          out += "\\x";
          out += kHex[u >> 4];
          out += kHex[u & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

Result<CardFile> ParseCardFile(std::string_view path, std::string_view raw) {
  auto split = SplitFrontMatter(raw);
  if (!split) return Corrupt(path, "card file must start with a YAML frontmatter block");
  YAML::Node data;
  try {
    data = YAML::Load(YamlText(*split));
  } catch (const YAML::Exception& e) {
    return Corrupt(path, std::string("invalid YAML frontmatter: ") + e.what());
  }
  if (!data.IsMap()) return Corrupt(path, "frontmatter must be a YAML mapping");
  CardFile card;
  try {
    YAML::Node title = data["title"];
    if (!title || !title.IsScalar() || title.Scalar().empty()) {
      return Corrupt(path, "frontmatter requires a non-empty \"title\"");
    }
    card.title = title.Scalar();
    if (YAML::Node stage = data["stage"]) {
      if (!stage.IsScalar() || !ParseLocation(stage.Scalar())) {
        return Corrupt(path, "frontmatter \"stage\" is not a stage or \"blocked\"");
      }
      card.stage = stage.Scalar();
    }
    if (YAML::Node rev = data["stageRevision"]) {
      card.stage_revision = rev.IsScalar() ? rev.Scalar() : std::string("(not a scalar)");
    }
  } catch (const YAML::Exception& e) {
    return Corrupt(path, std::string("invalid YAML frontmatter: ") + e.what());
  }
  card.body = std::string(TrimAscii(split->body));
  return card;
}

Result<std::string> RenderProjection(std::string_view path, std::string_view raw,
                                     const Projection& p) {
  // Parsing first rejects exactly what a read would reject (no block, bad YAML, no title).
  auto parsed = ParseCardFile(path, raw);
  if (!parsed.ok()) return parsed.status();
  auto split = SplitFrontMatter(raw);
  std::string eol = (!split->lines[0].empty() && split->lines[0].back() == '\r') ? "\r" : "";
  FrontMatterLines fm(
      std::vector<std::string>(split->lines.begin() + 1, split->lines.begin() + split->close), eol);
  fm.Set("stage", std::string(LocationName(p.stage)));
  fm.Set("stageRevision", std::to_string(p.stage_revision));
  if (p.blocked_from) {
    fm.Set("blockedFrom", std::string(LocationName(*p.blocked_from)));
  } else {
    fm.Remove("blockedFrom");
  }
  if (p.parent) {
    fm.Set("parent", YamlScalar(*p.parent));
  } else {
    fm.Remove("parent");
  }
  if (p.service_class != ServiceClass::kStandard) {
    fm.Set("serviceClass", std::string(ServiceClassName(p.service_class)));
  } else {
    fm.Remove("serviceClass");
  }
  std::string out = split->lines[0] + "\n";
  for (const std::string& line : fm.lines()) out += line + "\n";
  out += split->lines[split->close];
  if (split->closing_has_newline) out += "\n";
  out += split->body;

  // Prove the textual edit: the result must parse, keep the title and carry the projection.
  auto check = ParseCardFile(path, out);
  if (!check.ok()) {
    return Corrupt(path, "the projection rewrite would not leave valid front matter (" +
                             check.status().message() + ")");
  }
  if (check->title != parsed->title || check->stage != std::string(LocationName(p.stage)) ||
      check->stage_revision != std::to_string(p.stage_revision)) {
    return Corrupt(path,
                   "the front matter is not a plain block mapping, so the projection keys "
                   "cannot be rewritten in place");
  }
  return out;
}

std::string NewCardFile(std::string_view title, std::string_view body, const Projection& p) {
  std::string out = "---\ntitle: " + YamlScalar(title) + "\n";
  out += "stage: " + std::string(LocationName(p.stage)) + "\n";
  out += "stageRevision: " + std::to_string(p.stage_revision) + "\n";
  if (p.blocked_from) out += "blockedFrom: " + std::string(LocationName(*p.blocked_from)) + "\n";
  if (p.parent) out += "parent: " + YamlScalar(*p.parent) + "\n";
  if (p.service_class != ServiceClass::kStandard) {
    out += "serviceClass: " + std::string(ServiceClassName(p.service_class)) + "\n";
  }
  out += "---\n\n";
  out += TrimAscii(body);
  out += "\n";
  return out;
}

}  // namespace devflow

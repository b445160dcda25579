// `devflow-gate ground`: release_gate.py's command line and exit contract over the grounding
// core. The flags are parsed by hand to reproduce argparse's behaviour and messages.
#include "checker/ground_command.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <ostream>
#include <string_view>

#include "checker/grounding.h"
#include "config/config.h"
#include "host/utf8.h"
#include "reports/ledger.h"

namespace devflow {
namespace {

constexpr std::string_view kProg = "devflow-gate ground";
constexpr std::string_view kUsage =
    "usage: devflow-gate ground [-h] --claim CLAIM --evidence EVIDENCE [--kinds KINDS]\n"
    "                           [--exclude-key EXCLUDE_KEY] [--require REQUIRE]\n"
    "                           [--fallback FALLBACK] [--ledger LEDGER] [--label LABEL]\n"
    "                           [--repo REPO] [--compat]\n";
constexpr std::string_view kHelp =
    "\n"
    "Release a claim only when every date, URL, ticket ref and hash it cites (optionally file\n"
    "paths, numbers and dates in words) stands in the evidence; else print the fallback.\n"
    "A drop-in for release_gate.py. Exit 0 VERIFIED, 1 REJECTED, 2 usage error, 3 the ledger\n"
    "could not be written.\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --claim CLAIM         the artifact about to ship\n"
    "  --evidence EVIDENCE   an input the producer was allowed to cite (repeatable)\n"
    "  --kinds KINDS         comma list from ['date', 'date-text', 'hash', 'number', 'path',\n"
    "                        'ref', 'url'] (default date,url,ref,hash)\n"
    "  --exclude-key EXCLUDE_KEY\n"
    "                        JSON key that never grounds a claim, at any depth (repeatable)\n"
    "  --require REQUIRE     RE2 regex the claim must match (repeatable)\n"
    "  --fallback FALLBACK   printed to stdout instead of the claim on rejection\n"
    "  --ledger LEDGER       append one JSON row per run here\n"
    "  --label LABEL         free text for the ledger row (role, run id)\n"
    "  --repo REPO           owner/name whose forge links are matched by what they name\n"
    "                        (default: the one repository the evidence links to)\n"
    "  --compat              release_gate.py's exact matching: substring search, its regexes,\n"
    "                        top-level JSON keys only (see docs/grounding.md)\n";

struct Flag {
  std::string_view name;
  bool takes_value;
};
constexpr Flag kFlags[] = {{"-h", false},        {"--help", false},    {"--claim", true},
                           {"--evidence", true}, {"--kinds", true},    {"--exclude-key", true},
                           {"--require", true},  {"--fallback", true}, {"--ledger", true},
                           {"--label", true},    {"--repo", true},     {"--compat", false}};

struct Args {
  bool help = false;
  std::optional<std::string> claim;
  std::vector<std::string> evidence;
  std::string kinds = "date,url,ref,hash";
  std::vector<std::string> exclude_keys;
  std::vector<std::string> require;
  std::optional<std::string> fallback;
  std::optional<std::string> ledger;
  std::optional<std::string> label;
  std::string repo;
  bool compat = false;
};

// argparse's `_negative_number_matcher`: '^-\d+$|^-\d*\.\d+$'.
bool LooksNegativeNumber(std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return false;
  std::string_view rest = arg.substr(1);
  const size_t dot = rest.find('.');
  auto digits = [](std::string_view s) {
    return s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (dot == std::string_view::npos) return digits(rest);
  return digits(rest.substr(0, dot)) && dot + 1 < rest.size() && digits(rest.substr(dot + 1));
}

struct Match {
  const Flag* flag = nullptr;
  std::optional<std::string> explicit_value;
  std::string ambiguous;  // "--evidence, --exclude-key" when a prefix names several flags
};

// argparse's _parse_optional: exact name, `--name=value`, or an unambiguous prefix.
std::optional<Match> ParseOptional(std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return std::nullopt;
  for (const Flag& f : kFlags) {
    if (arg == f.name) return Match{&f, std::nullopt, ""};
  }
  std::string_view name = arg;
  std::optional<std::string> value;
  if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
    name = arg.substr(0, eq);
    value = std::string(arg.substr(eq + 1));
    for (const Flag& f : kFlags) {
      if (name == f.name) return Match{&f, value, ""};
    }
  }
  if (name.rfind("--", 0) == 0 && name.size() > 2) {
    std::vector<const Flag*> hits;
    for (const Flag& f : kFlags) {
      if (f.name.rfind("--", 0) == 0 && f.name.rfind(name, 0) == 0) hits.push_back(&f);
    }
    if (hits.size() == 1) return Match{hits[0], value, ""};
    if (hits.size() > 1) {
      Match m;
      for (const Flag* f : hits)
        m.ambiguous += (m.ambiguous.empty() ? "" : ", ") + std::string(f->name);
      return m;
    }
  }
  if (LooksNegativeNumber(arg) || arg.find(' ') != std::string_view::npos) return std::nullopt;
  return Match{};  // an option nobody knows: unrecognized
}

Result<Args> ParseArgs(const std::vector<std::string>& argv) {
  Args args;
  std::vector<std::string> unrecognized;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--") {
      unrecognized.insert(unrecognized.end(), argv.begin() + static_cast<long>(i) + 1, argv.end());
      break;
    }
    std::optional<Match> match = ParseOptional(arg);
    if (!match) {
      unrecognized.push_back(arg);
      continue;
    }
    if (!match->ambiguous.empty()) {
      return Status::Error("usage", "ambiguous option: " + arg.substr(0, arg.find('=')) +
                                        " could match " + match->ambiguous);
    }
    if (!match->flag) {
      unrecognized.push_back(arg);
      continue;
    }
    const std::string name(match->flag->name);
    if (!match->flag->takes_value) {
      if (match->explicit_value) {
        return Status::Error("usage", "argument " + std::string(name == "-h" ? "-h/--help" : name) +
                                          ": ignored explicit argument '" + *match->explicit_value +
                                          "'");
      }
      if (name == "--compat") {
        args.compat = true;
        continue;
      }
      args.help = true;
      return args;  // argparse prints the help as soon as it meets the flag
    }
    std::string value;
    if (match->explicit_value) {
      value = *match->explicit_value;
    } else {
      if (i + 1 >= argv.size() || (argv[i + 1] != "-" && ParseOptional(argv[i + 1]))) {
        return Status::Error("usage", "argument " + name + ": expected one argument");
      }
      value = argv[++i];
    }
    if (name == "--claim") args.claim = value;
    if (name == "--evidence") args.evidence.push_back(value);
    if (name == "--kinds") args.kinds = value;
    if (name == "--exclude-key") args.exclude_keys.push_back(value);
    if (name == "--require") args.require.push_back(value);
    if (name == "--fallback") args.fallback = value;
    if (name == "--ledger") args.ledger = value;
    if (name == "--label") args.label = value;
    if (name == "--repo") args.repo = value;
  }
  std::string missing;
  if (!args.claim) missing = "--claim";
  if (args.evidence.empty()) missing += (missing.empty() ? "" : ", ") + std::string("--evidence");
  if (!missing.empty()) {
    return Status::Error("usage", "the following arguments are required: " + missing);
  }
  if (!unrecognized.empty()) {
    std::string list;
    for (const std::string& a : unrecognized) list += (list.empty() ? "" : " ") + a;
    return Status::Error("usage", "unrecognized arguments: " + list);
  }
  return args;
}

std::string PyStrip(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\v\f\x1c\x1d\x1e\x1f";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(kSpace) - b + 1));
}

// release_gate.py's kind list: comma-split, stripped, blanks dropped, order and repeats kept.
std::vector<std::string> SplitKinds(std::string_view csv) {
  std::vector<std::string> kinds;
  size_t pos = 0;
  while (pos <= csv.size()) {
    const size_t comma = std::min(csv.find(',', pos), csv.size());
    std::string kind = PyStrip(csv.substr(pos, comma - pos));
    if (!kind.empty()) kinds.push_back(std::move(kind));
    pos = comma + 1;
  }
  return kinds;
}

std::string PyQuote(std::string_view path) {
  const bool dq =
      path.find('\'') != std::string_view::npos && path.find('"') == std::string_view::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  const auto hex = [&out](const char* form, unsigned value) {
    char buf[12];
    std::snprintf(buf, sizeof buf, form, value);
    out += buf;
  };
  // As Python's repr() prints a str (trial14 T1: the path reached the terminal raw, escape
  // sequences included): \t \n \r, other controls as \xNN, invisible and format code points
  // as \uNNNN, an ill-formed byte as the surrogate escape Python's file system decoding gives it
  // (\udcNN); every other character as it is.
  for (size_t i = 0; i < path.size();) {
    const Utf8Step step = DecodeUtf8At(path, i);
    const char32_t cp = step.cp;
    if (!step.valid) {
      for (size_t k = 0; k < step.length; ++k) {
        hex("\\udc%02x", static_cast<unsigned char>(path[i + k]));
      }
    } else if (cp == '\\' || cp == static_cast<char32_t>(q)) {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) {
      hex("\\x%02x", static_cast<unsigned>(cp));
    } else if ((cp > 0x7F && (IsDefaultIgnorable(cp) || IsUnicodeWhiteSpace(cp))) || cp == 0x2028 ||
               cp == 0x2029) {
      hex(cp > 0xFFFF ? "\\U%08x" : "\\u%04x", static_cast<unsigned>(cp));
    } else {
      out.append(path.substr(i, step.length));
    }
    i += step.length;
  }
  return out + q;
}

// An OS error the way Python's OSError prints: `[Errno 2] No such file or directory: 'x'`.
std::string ReadError(const Status& status, const std::string& path) {
  for (int n = 1; n < 200; ++n) {
    if (ErrnoName(n) == status.code()) {
      return "[Errno " + std::to_string(n) + "] " + std::strerror(n) + ": " + PyQuote(path);
    }
  }
  return status.message();
}

std::string JoinComma(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

int RunGroundCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err,
                     FileSystem& fs, Clock& clock) {
  Result<Args> parsed = ParseArgs(argv);
  if (!parsed.ok()) {
    err << kUsage << kProg << ": error: " << parsed.status().message() << "\n";
    return 2;
  }
  const Args& args = *parsed;
  if (args.help) {
    out << kUsage << kHelp;
    return 0;
  }

  const std::vector<std::string> kinds = SplitKinds(args.kinds);
  std::vector<std::string> unknown;
  for (const std::string& kind : kinds) {
    const auto& all = AllTokenKinds();
    if (std::find(all.begin(), all.end(), kind) == all.end()) unknown.push_back(kind);
  }
  if (!unknown.empty()) {
    err << "unknown kinds: " << JoinComma(unknown) << "\n";
    return 2;
  }
  if (Status bad = CheckRequirePatterns(args.require); !bad.ok()) {
    err << bad.message() << "\n";
    return 2;
  }
  if (!args.repo.empty()) {
    if (Status bad = CheckRepoName(args.repo); !bad.ok()) {
      err << bad.message() << "\n";
      return 2;
    }
  }

  const GroundingMode mode = args.compat ? GroundingMode::kCompat : GroundingMode::kStrict;
  // The claim and the fallback are read as files an operator names (FileSystem::ReadNamedFile):
  // the claim is the agent's own output, which it can replace with a link to what the gate can
  // read and it cannot, and whose tokens not in evidence the gate prints (trial19 5g).
  auto read = [&](const std::string& path) -> Result<std::string> {
    Result<std::string> bytes = fs.ReadNamedFile(path);
    if (!bytes.ok()) return Status::Error(bytes.status().code(), ReadError(bytes.status(), path));
    if (Status utf8 = CheckUtf8(*bytes, path); !utf8.ok()) return utf8;
    return bytes;
  };
  // Everything is read before any verdict is ledgered: a "recovered" row must never exist
  // without the fallback that recovery prints (release_gate.py R5).
  Result<std::string> claim_bytes = read(*args.claim);
  if (!claim_bytes.ok()) {
    err << "cannot read: " << claim_bytes.status().message() << "\n";
    return 2;
  }
  // Evidence is mapped, not copied (issue 11 item 4: peak memory near the evidence's size): a
  // text file is grounded in place, past its BOM; a JSON file yields the text of its values.
  // It is named like the claim (FileSystem::MapNamedFile): a link planted at an evidence path
  // would show its target's words in the "evidence has ..." hints.
  std::vector<FileBytes> evidence_files;
  std::vector<std::string> evidence_json;
  std::vector<std::string_view> evidence;
  evidence_files.reserve(args.evidence.size());
  evidence_json.reserve(args.evidence.size());
  // A text file's UTF-8 check waits for the grounding scan, which checks the bytes it reads
  // (issue 11 item 4: one pass over the evidence); the rest is checked after it. Every outcome
  // stays as if each file were checked as it is read: a later file's error first reports an
  // earlier file's ill-formed bytes, and a file the scan did not finish is checked in full.
  struct Deferred {
    size_t index;  // in `evidence`
    size_t bom;    // bytes before the text (a BOM)
  };
  std::vector<Deferred> deferred;
  auto deferred_error = [&](const std::vector<size_t>& checked) -> std::optional<Status> {
    for (const Deferred& d : deferred) {
      const size_t done = d.index < checked.size() ? checked[d.index] : 0;
      if (Status utf8 =
              CheckUtf8(evidence_files[d.index].view(), args.evidence[d.index], d.bom + done);
          !utf8.ok()) {
        return utf8;
      }
    }
    return std::nullopt;
  };
  auto fail = [&](const std::string& message) {
    if (std::optional<Status> earlier = deferred_error({})) {
      err << "cannot read: " << earlier->message() << "\n";
    } else {
      err << "cannot read: " << message << "\n";
    }
    return 2;
  };
  for (const std::string& path : args.evidence) {
    Result<FileBytes> mapped = fs.MapNamedFile(path);
    if (!mapped.ok()) return fail(ReadError(mapped.status(), path));
    const std::string_view bytes = evidence_files.emplace_back(std::move(*mapped)).view();
    std::string lower = path;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
    const bool json = lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".json") == 0;
    if (!json && mode == GroundingMode::kStrict) {
      const std::string_view text = StripBom(bytes);
      deferred.push_back({evidence.size(), bytes.size() - text.size()});
      evidence.push_back(text);
      continue;
    }
    if (Status utf8 = CheckUtf8(bytes, path); !utf8.ok()) return fail(utf8.message());
    if (json) {
      Result<std::string> text = mode == GroundingMode::kCompat
                                     ? CompatJsonEvidenceText(bytes, path, args.exclude_keys)
                                     : JsonEvidenceText(bytes, path, args.exclude_keys);
      if (!text.ok()) return fail(text.status().message());
      evidence.push_back(evidence_json.emplace_back(std::move(*text)));
      evidence_files.back() = FileBytes();  // the JSON bytes are done with
    } else {
      evidence.push_back(StripBom(bytes));
    }
  }
  std::optional<std::string> fallback;
  if (args.fallback) {
    Result<std::string> bytes = read(*args.fallback);
    if (!bytes.ok()) return fail(bytes.status().message());
    fallback = std::move(*bytes);
  }

  const std::string_view claim = StripBom(*claim_bytes);
  GroundingOptions options;
  options.kinds = kinds;
  options.require = args.require;
  options.exclude_keys = args.exclude_keys;
  options.compat = args.compat;
  options.repo = args.repo;
  std::vector<size_t> utf8_checked;
  const std::vector<std::string> reasons = VerifyClaim(claim, evidence, options, &utf8_checked);
  // The deferred UTF-8 checks, past what the scan checked: ill-formed evidence is refused before
  // any row is written, as when it was checked on reading.
  if (std::optional<Status> bad = deferred_error(utf8_checked)) {
    err << "cannot read: " << bad->message() << "\n";
    return 2;
  }
  const bool verified = reasons.empty();

  // The row goes first, then what ships (issue 7: a claim on stdout whose row then failed
  // was shipped unrecorded by any pipeline that ignores the exit code). The row is
  // release_gate.py's, written before the bytes as release_gate.py writes it; the bytes are then
  // flushed and the stream checked (a closed pipe, a full disk, a stdout of /dev/full), and a
  // stdout that refused them gets a second row, `unreleased` (`unrecovered`) with the error, that
  // supersedes the first. So exit 0 means the `released` row was durable before the claim
  // reached stdout, and a ledger that cannot be written leaves stdout empty (exit 3).
  const std::string* shipped = verified ? &*claim_bytes : (fallback ? &*fallback : nullptr);
  const std::string ts = LedgerTimestamp(clock.NowIso());
  auto append_row = [&](const std::string& state,
                        const std::optional<std::string>& output_error) -> Status {
    LedgerRow row;
    row.ts = ts;
    row.label = args.label;
    row.verified = verified;
    row.state = state;
    row.kinds = kinds;
    row.reasons = reasons;
    if (!verified) row.rejected_claim = std::string(claim);
    std::vector<std::string> excluded = DefaultExcludedKeys();
    excluded.insert(excluded.end(), args.exclude_keys.begin(), args.exclude_keys.end());
    row.extra.emplace_back(
        "options", "{\"compat\": " + std::string(args.compat ? "true" : "false") +
                       ", \"exclude_keys\": " + PyJsonList(excluded) + ", \"require\": " +
                       PyJsonList(args.require) + ", \"claim\": " + PyJsonString(*args.claim) +
                       ", \"evidence\": " + PyJsonList(args.evidence) +
                       ", \"fallback\": " + PyJsonOptional(args.fallback) + ", \"repo\": " +
                       (args.repo.empty() ? "null" : PyJsonString(args.repo)) + "}");
    if (output_error) row.extra.emplace_back("output_error", PyJsonString(*output_error));
    return AppendLocked(*args.ledger, FormatLedgerRow(row));
  };

  if (args.ledger) {
    if (Status written = append_row(verified ? "released" : "recovered", std::nullopt);
        !written.ok()) {
      err << "cannot write the ledger: " << written.message() << "; nothing was released\n";
      return 3;
    }
  }

  if (shipped) {
    errno = 0;
    out << *shipped;
    out.flush();
    if (!out) {
      const int e = errno;
      const std::string output_error =
          e != 0 ? std::string(std::strerror(e)) + " (" + ErrnoName(e) + ")"
                 : std::string("the stream refused the bytes");
      std::string uncorrected;
      if (args.ledger) {
        if (Status written = append_row(verified ? "unreleased" : "unrecovered", output_error);
            !written.ok()) {
          uncorrected = std::string("; the ledger's `") + (verified ? "released" : "recovered") +
                        "` row for it stands uncorrected: cannot write its `" +
                        (verified ? "unreleased" : "unrecovered") + "` row: " + written.message();
        }
      }
      err << (verified ? "VERIFIED, but " : "REJECTED, and ")
          << (verified ? "the claim" : "the fallback")
          << " could not be written to stdout: " << output_error << "; nothing was released"
          << uncorrected << "\n";
      return 4;
    }
  }
  if (verified) {
    err << "VERIFIED\n";
    return 0;
  }
  err << "REJECTED\n";
  for (const std::string& reason : reasons) err << "  - " << reason << "\n";
  return 1;
}

int RunGroundCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return RunGroundCommand(args, out, err, RealFileSystem(), SystemClock());
}

}  // namespace devflow

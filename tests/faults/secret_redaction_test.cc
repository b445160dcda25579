// Issue 7 item 5, trial15 L1, through the real binary: a provider's `env:` value that the
// checker prints (on stderr, like a failing LLM CLI or a wrapper under `set -x`, or in its
// reply) reaches none of the gate's own records (journal, decision ledger, fault report, veto
// report, cache record) nor the terminal: each holds the marker instead (checker/redact.h).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "faults/faults.h"

namespace devflow::faults {
namespace {

namespace fs = std::filesystem;

const char kCacheDir[] = ".devflow/cache/agent-gate";
const char kKey[] = "sk-T15SECRETKEY-0123456789";
const char kMarker[] = "[redacted: DG_API_KEY]";

// The files below `dir` whose bytes hold `needle`.
std::vector<std::string> FilesHolding(const std::string& dir, const std::string& needle) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string text = test::Slurp(e.path().string()).value_or("");
    if (text.find(needle) != std::string::npos) found.push_back(e.path().string());
  }
  return found;
}

bool Holds(const std::string& path, const std::string& needle) {
  return test::Slurp(path).value_or("").find(needle) != std::string::npos;
}

// A workspace whose provider passes DG_API_KEY to the /bin/sh script `body` (after it read
// its prompt), with a verdict cache.
void Configure(Workspace& ws, const std::string& body) {
  const std::string script = ws / "checker.sh";
  test::Spit(script, "cat >/dev/null\n" + body);
  GateYaml yaml;
  yaml.command = {"/bin/sh", script};
  yaml.env = {"DG_API_KEY"};
  yaml.cache_dir = kCacheDir;
  ws.WriteConfig(yaml.Text());
}

TEST_CASE(
    "redaction: an env value the checker prints on stderr reaches the journal, ledger, fault "
    "report and terminal only as the marker") {
  Workspace ws("");
  Configure(ws,
            "echo \"+ curl -H 'x-api-key: $DG_API_KEY' https://llm.example\" >&2\n"
            "echo \"Error: 401 Unauthorized: invalid x-api-key '$DG_API_KEY'\" >&2\n"
            "exit 1\n");
  ws.CardInDesigning();
  auto r = ws.Gate({"move", kCard, "ready"}, {{"DG_API_KEY", kKey}});
  INFO("stdout: " << r.out << "stderr: " << r.err);
  CHECK(r.exit_code == 3);
  const std::string fault = std::string(
                                "the checker ended with exit code 1: Error: 401 "
                                "Unauthorized: invalid x-api-key '") +
                            kMarker + "'";
  CHECK(r.out == CouldNotRunWithReport(ws, fault) + ParkedLine());
  CHECK((r.out + r.err).find(kKey) == std::string::npos);
  RequireParked(ws, fault);
  CHECK(Holds(ws.journal_path(), kMarker));
  CHECK(Holds(ws.root() + "/ledger/decisions.jsonl", kMarker));
  const std::string report = OnlyFaultReport(ws.root());
  CHECK(Holds(report, kMarker));
  CHECK(Holds(report, std::string("+ curl -H 'x-api-key: ") + kMarker + "'"));  // the tail
  CHECK(FilesHolding(ws.path(), kKey).empty());
  // The counts are of what the checker wrote; the text is whole, shortened only by markers,
  // and the report says so rather than "the last <k> kept" (a cut that did not happen).
  const size_t written =
      (std::string("+ curl -H 'x-api-key: ") + kKey + "' https://llm.example\n").size() +
      (std::string("Error: 401 Unauthorized: invalid x-api-key '") + kKey + "'\n").size();
  CHECK(Holds(report, "- stderr: " + std::to_string(written) +
                          " bytes (all kept below; env: values redacted)\n"));
  CHECK(Holds(report, "- reply: 0 bytes (all kept below)\n"));
}

TEST_CASE(
    "redaction: a verdict quoting an env value is still parsed and its report and cache record "
    "hold the marker") {
  Workspace ws("");
  Configure(ws,
            "printf 'Tried the key %s.\\n```json\\n{\"verdict\": \"veto\", \"summary\": \"the key "
            "%s was refused\", \"findings\": [\"key %s\"]}\\n```\\n' \"$DG_API_KEY\" "
            "\"$DG_API_KEY\" \"$DG_API_KEY\"\n");
  ws.CardInDesigning();
  auto r = ws.Gate({"move", kCard, "ready"}, {{"DG_API_KEY", kKey}});
  INFO("stdout: " << r.out << "stderr: " << r.err);
  CHECK(r.exit_code == 1);
  const std::string summary = std::string("the key ") + kMarker + " was refused";
  CHECK(r.out == Vetoed(summary, ReportPath(ws)));
  RequireUnmoved(ws);
  CHECK(Holds(ReportPath(ws), summary));
  CHECK(Holds(ReportPath(ws), std::string("- key ") + kMarker + "\n"));
  const std::string cache = CacheFile(ws, ws / kCacheDir);
  CHECK(Holds(cache, summary));
  CHECK(Holds(ws.root() + "/ledger/decisions.jsonl", summary));
  CHECK(FilesHolding(ws.path(), kKey).empty());
  CHECK((r.out + r.err).find(kKey) == std::string::npos);
}

TEST_CASE("redaction: an env value shorter than 8 bytes such as 1 is not redacted") {
  Workspace ws("");
  Configure(ws, "echo \"retries=$DG_API_KEY exhausted\" >&2\nexit 1\n");
  ws.CardInDesigning();
  auto r = ws.Gate({"move", kCard, "ready"}, {{"DG_API_KEY", "1"}});
  INFO("stdout: " << r.out << "stderr: " << r.err);
  CHECK(r.exit_code == 3);
  const std::string fault = "the checker ended with exit code 1: retries=1 exhausted";
  CHECK(r.out == CouldNotRunWithReport(ws, fault) + ParkedLine());
  RequireParked(ws, fault);
}

}  // namespace
}  // namespace devflow::faults

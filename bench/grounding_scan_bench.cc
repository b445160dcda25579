// The one-pass evidence scan alone (issue 11 item 4), side by side on one file in one run:
//   ScanSkipping        the scanner Ground runs: the skip to the next hot byte (32 bytes at a
//                       time with AVX2 where the CPU has it, else SSE2), then the per-word step
//                       around it
//   ScanSkippingSse2    the same with the 16-byte SSE2 skip alone
//   ScanSkippingScalar  the same with the portable byte-at-a-time skip
//   ScanReference       the per-word step at every position (the scanner before the skip, kept
//                       as the tests' oracle)
//   MemchrNewlines      memchr over the file's newlines (the memory floor)
//   WcW                 `wc -w FILE` spawned and waited for (wall time; the yardstick)
// every one timed by wall time (a spawned `wc -w` has no other clock here; on a loaded machine
// all of them stretch alike), and, after the table, each throughput as a ratio to memchr, to `wc
// -w` and to the reference (the median of the repetitions when there are some, else the one run).
// bench/grounding/scan.py runs it on the evidence it also gives `ground`.
//
//   SCAN_BENCH_FILE=PATH build/grounding_scan_bench [--benchmark_* flags]
//
// SCAN_BENCH_ONCE=skipping|sse2|scalar|reference|none runs one scan (or none) and exits, for
// callgrind:
//   SCAN_BENCH_ONCE=skipping valgrind --tool=callgrind build/grounding_scan_bench
// less the same with `none` is the instructions of one scan.
// Without SCAN_BENCH_FILE it reads docs/*.md of this source tree, repeated to 16 MiB, and writes
// that to a temporary file for `wc -w`.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "checker/grounding.h"

extern char** environ;

namespace devflow {
namespace {

struct Corpus {
  std::string text;
  std::string path;  // the same bytes on disk, for `wc -w`
};

const Corpus& TheCorpus() {
  static const Corpus corpus = [] {
    Corpus c;
    if (const char* path = std::getenv("SCAN_BENCH_FILE"); path && *path) {
      std::ifstream in(path, std::ios::binary);
      c.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      if (c.text.empty()) {
        std::fprintf(stderr, "grounding_scan_bench: cannot read %s (or it is empty)\n", path);
        std::exit(2);
      }
      c.path = path;
      return c;
    }
    std::string docs;
    for (const auto& entry : std::filesystem::directory_iterator(DG_SOURCE_DIR "/docs")) {
      if (entry.path().extension() != ".md") continue;
      std::ifstream in(entry.path(), std::ios::binary);
      docs.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    while (!docs.empty() && c.text.size() < (16u << 20)) c.text += docs;
    c.path = (std::filesystem::temp_directory_path() /
              ("grounding_scan_bench." + std::to_string(getpid()) + ".txt"))
                 .string();
    std::ofstream out(c.path, std::ios::binary);
    out << c.text;
    if (!out.flush()) {
      std::fprintf(stderr, "grounding_scan_bench: cannot write %s\n", c.path.c_str());
      std::exit(2);
    }
    std::atexit([] { std::filesystem::remove(TheCorpus().path); });
    return c;
  }();
  return corpus;
}

void Scan(benchmark::State& state, OnePassScanner scanner) {
  const std::string& text = TheCorpus().text;
  size_t tokens = 0;
  for (auto _ : state) {
    tokens = CountOnePassTokensForTesting(text, scanner);
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

void BM_ScanSkipping(benchmark::State& state) { Scan(state, OnePassScanner::kSkipping); }
void BM_ScanSkippingSse2(benchmark::State& state) { Scan(state, OnePassScanner::kSkippingSse2); }
void BM_ScanSkippingScalar(benchmark::State& state) {
  Scan(state, OnePassScanner::kSkippingScalar);
}
void BM_ScanReference(benchmark::State& state) { Scan(state, OnePassScanner::kReference); }

void BM_MemchrNewlines(benchmark::State& state) {
  const std::string& text = TheCorpus().text;
  for (auto _ : state) {
    size_t lines = 0;
    const char* end = text.data() + text.size();
    for (const char* at = text.data();
         (at = static_cast<const char*>(std::memchr(at, '\n', end - at))); ++at) {
      ++lines;
    }
    benchmark::DoNotOptimize(lines);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

// `wc -w FILE`, its output to /dev/null: a whole process, so wall time (UseRealTime).
void BM_WcW(benchmark::State& state) {
  const Corpus& corpus = TheCorpus();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::string wc = "wc", flag = "-w", path = corpus.path;
  char* argv[] = {wc.data(), flag.data(), path.data(), nullptr};
  for (auto _ : state) {
    pid_t pid = 0;
    int status = 0;
    if (posix_spawnp(&pid, "wc", &actions, nullptr, argv, environ) != 0 ||
        waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("wc -w did not run");
      break;
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus.text.size()));
}

BENCHMARK(BM_ScanSkipping)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ScanSkippingSse2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ScanSkippingScalar)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ScanReference)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MemchrNewlines)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WcW)->Unit(benchmark::kMillisecond)->UseRealTime();

// The console table, then the ratios of the throughputs it holds (the medians when the run has
// repetitions). Ratios > 1: the scan is faster.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const auto bps = run.counters.find("bytes_per_second");
      if (bps == run.counters.end()) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      if (median || single) gbps_[run.run_name.function_name] = bps->second.value / 1e9;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto get = [this](const char* name) {
      const auto it = gbps_.find(name);
      return it == gbps_.end() ? 0.0 : it->second;
    };
    const double memchr = get("BM_MemchrNewlines"), wc = get("BM_WcW");
    const double reference = get("BM_ScanReference");
    std::printf("\nthroughput on %.1f MiB (%s), GB/s and ratios (> 1: faster):\n",
                static_cast<double>(TheCorpus().text.size()) / (1 << 20), TheCorpus().path.c_str());
    std::printf("%-22s %9s %12s %10s %14s\n", "scan", "GB/s", ": memchr", ": wc -w", ": reference");
    for (const char* name : {"BM_ScanSkipping", "BM_ScanSkippingSse2", "BM_ScanSkippingScalar",
                             "BM_ScanReference", "BM_MemchrNewlines", "BM_WcW"}) {
      const double v = get(name);
      if (v == 0) continue;
      std::printf("%-22s %9.3f %11.3fx %9.2fx %13.2fx\n", name + 3, v, memchr ? v / memchr : 0.0,
                  wc ? v / wc : 0.0, reference ? v / reference : 0.0);
    }
    std::fflush(stdout);
  }

 private:
  std::map<std::string, double> gbps_;
};

}  // namespace
}  // namespace devflow

int main(int argc, char** argv) {
  // Read before Initialize, which takes the --benchmark_* flags out of argv.
  const std::string format = [&] {
    for (int k = 1; k < argc; ++k) {
      if (std::strncmp(argv[k], "--benchmark_format=", 19) == 0) return std::string(argv[k] + 19);
    }
    return std::string("console");
  }();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  devflow::TheCorpus();  // read (and write) the file before the first timing
  // SCAN_BENCH_ONCE=skipping|sse2|scalar|reference|none: one scan, no benchmark (for callgrind: the
  // instructions of one scan are the run's minus those of `none`'s).
  if (const char* once = std::getenv("SCAN_BENCH_ONCE"); once && *once) {
    const std::string which = once;
    size_t tokens = 0;
    if (which == "skipping") {
      tokens = devflow::CountOnePassTokensForTesting(devflow::TheCorpus().text,
                                                     devflow::OnePassScanner::kSkipping);
    } else if (which == "sse2") {
      tokens = devflow::CountOnePassTokensForTesting(devflow::TheCorpus().text,
                                                     devflow::OnePassScanner::kSkippingSse2);
    } else if (which == "scalar") {
      tokens = devflow::CountOnePassTokensForTesting(devflow::TheCorpus().text,
                                                     devflow::OnePassScanner::kSkippingScalar);
    } else if (which == "reference") {
      tokens = devflow::CountOnePassTokensForTesting(devflow::TheCorpus().text,
                                                     devflow::OnePassScanner::kReference);
    } else if (which != "none") {
      std::fprintf(stderr,
                   "grounding_scan_bench: SCAN_BENCH_ONCE=%s is not "
                   "skipping, sse2, scalar, reference or none\n",
                   once);
      return 2;
    }
    std::printf("%zu bytes, %zu tokens\n", devflow::TheCorpus().text.size(), tokens);
    return 0;
  }
  if (format == "console") {
    devflow::RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

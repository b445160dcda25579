// The server's counters, rendered in the Prometheus text exposition format (version 0.0.4)
// for GET /metrics. Thread-safe: the I/O thread and the attempt workers both record.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace devflow {

/// Latency histogram with fixed buckets (seconds): 1 ms × 2^(k/4) up to 600 s, so any
/// quantile from 1 ms to 600 s is located within a factor of 1.19.
class LatencyHistogram {
 public:
  LatencyHistogram();
  void Observe(double seconds);
  /// `<name>_bucket{<labels>,le="…"} n` lines, then `_sum` and `_count`.
  void Render(const std::string& name, const std::string& labels, std::string& out) const;
  static const std::vector<double>& Bounds();

 private:
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

/// Every figure /metrics shows. Label values are escaped when rendered.
class ServerMetrics {
 public:
  /// One HTTP request answered: endpoint ("/v1/admit", …, "other") and status code.
  void Request(const std::string& endpoint, int status);
  /// One decision: endpoint, outcome ("allowed", "vetoed", "parked", "committed", a store
  /// code, …) and its latency.
  void Decision(const std::string& endpoint, const std::string& outcome, double seconds);
  /// One checker run: provider and outcome ("ok", "fault", "not-started").
  void CheckerRun(const std::string& provider, const std::string& outcome);
  /// A fail-closed fault by kind (timeout, exit, signal, start, reply-cap, no-verdict, input,
  /// inputs-changed, report, provider, other). A check the caller's deadline did not start is
  /// a veto, not a fault (trial15 R3).
  void Fault(const std::string& kind);
  void CacheHit();
  void CacheMiss();
  void Park();
  void LedgerRowNotWritten();
  void ConnectionRefused(const std::string& reason);
  void SetAttempts(int64_t in_flight, int64_t queued);
  void AddCheckersRunning(int64_t delta);
  void SetConnections(int64_t open);
  /// The config generation now serving, its hash, and the last reload's outcome.
  void SetConfig(int64_t generation, const std::string& hash, bool last_reload_ok);
  void ReloadFailed();

  std::string Render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::pair<std::string, std::string>, uint64_t> decisions_;
  std::map<std::string, LatencyHistogram> latency_;
  std::map<std::pair<std::string, std::string>, uint64_t> checker_runs_;
  std::map<std::string, uint64_t> faults_;
  std::map<std::string, uint64_t> refused_;
  uint64_t cache_hits_ = 0, cache_misses_ = 0, parks_ = 0, ledger_not_written_ = 0;
  uint64_t reload_failures_ = 0;
  int64_t in_flight_ = 0, queued_ = 0, checkers_running_ = 0, connections_ = 0;
  int64_t generation_ = 0;
  std::string hash_;
  bool last_reload_ok_ = true;
};

/// The fault kind of a fail-closed reason (the park reason's `<fault>` text).
std::string FaultKind(const std::string& reason);

}  // namespace devflow

#include "host/server/metrics.h"

#include <cmath>
#include <cstdio>

namespace devflow {
namespace {

// Prometheus text escaping (\\, \", \n), and a control character other than \n written as
// the text \xHH (its backslash escaped, so a scraper reads the four characters "\x1b"): the
// format has no escape for them, and raw they reached the terminal of whoever curled /metrics
// (an ESC in a provider name, trial20). A name holding the text "\x1b" itself renders the same.
std::string Escape(const std::string& v) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void Header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

const std::vector<double>& LatencyHistogram::Bounds() {
  static const std::vector<double> bounds = [] {
    std::vector<double> b;
    for (int k = 0;; ++k) {
      double v = 0.001 * std::pow(2.0, k / 4.0);
      b.push_back(v);
      if (v >= 600) break;
    }
    return b;
  }();
  return bounds;
}

LatencyHistogram::LatencyHistogram() : counts_(Bounds().size() + 1, 0) {}

void LatencyHistogram::Observe(double seconds) {
  const auto& b = Bounds();
  size_t i = 0;
  while (i < b.size() && seconds > b[i]) ++i;
  ++counts_[i];
  sum_ += seconds;
  ++count_;
}

void LatencyHistogram::Render(const std::string& name, const std::string& labels,
                              std::string& out) const {
  const auto& b = Bounds();
  uint64_t cumulative = 0;
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < b.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{" + labels + sep + "le=\"" + Num(b[i]) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  cumulative += counts_.back();
  out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(cumulative) + "\n";
  out += name + "_sum{" + labels + "} " + Num(sum_) + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

void ServerMetrics::Request(const std::string& endpoint, int status) {
  std::lock_guard lock(mu_);
  ++requests_[{endpoint, status}];
}

void ServerMetrics::Decision(const std::string& endpoint, const std::string& outcome,
                             double seconds) {
  std::lock_guard lock(mu_);
  ++decisions_[{endpoint, outcome}];
  latency_[endpoint].Observe(seconds);
}

void ServerMetrics::CheckerRun(const std::string& provider, const std::string& outcome) {
  std::lock_guard lock(mu_);
  ++checker_runs_[{provider, outcome}];
}

void ServerMetrics::Fault(const std::string& kind) {
  std::lock_guard lock(mu_);
  ++faults_[kind];
}
void ServerMetrics::CacheHit() {
  std::lock_guard lock(mu_);
  ++cache_hits_;
}
void ServerMetrics::CacheMiss() {
  std::lock_guard lock(mu_);
  ++cache_misses_;
}
void ServerMetrics::Park() {
  std::lock_guard lock(mu_);
  ++parks_;
}
void ServerMetrics::LedgerRowNotWritten() {
  std::lock_guard lock(mu_);
  ++ledger_not_written_;
}
void ServerMetrics::ConnectionRefused(const std::string& reason) {
  std::lock_guard lock(mu_);
  ++refused_[reason];
}
void ServerMetrics::SetAttempts(int64_t in_flight, int64_t queued) {
  std::lock_guard lock(mu_);
  in_flight_ = in_flight;
  queued_ = queued;
}
void ServerMetrics::AddCheckersRunning(int64_t delta) {
  std::lock_guard lock(mu_);
  checkers_running_ += delta;
}
void ServerMetrics::SetConnections(int64_t open) {
  std::lock_guard lock(mu_);
  connections_ = open;
}
void ServerMetrics::SetConfig(int64_t generation, const std::string& hash, bool last_reload_ok) {
  std::lock_guard lock(mu_);
  generation_ = generation;
  hash_ = hash;
  last_reload_ok_ = last_reload_ok;
}
void ServerMetrics::ReloadFailed() {
  std::lock_guard lock(mu_);
  ++reload_failures_;
  last_reload_ok_ = false;
}

std::string ServerMetrics::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  Header(out, "devflow_gate_requests_total", "counter", "HTTP requests by endpoint and status");
  for (const auto& [k, v] : requests_) {
    out += "devflow_gate_requests_total{endpoint=\"" + Escape(k.first) + "\",code=\"" +
           std::to_string(k.second) + "\"} " + std::to_string(v) + "\n";
  }
  Header(out, "devflow_gate_decisions_total", "counter", "decisions by endpoint and outcome");
  for (const auto& [k, v] : decisions_) {
    out += "devflow_gate_decisions_total{endpoint=\"" + Escape(k.first) + "\",outcome=\"" +
           Escape(k.second) + "\"} " + std::to_string(v) + "\n";
  }
  Header(out, "devflow_gate_decision_duration_seconds", "histogram",
         "time from request to decision, by endpoint");
  for (const auto& [endpoint, h] : latency_) {
    h.Render("devflow_gate_decision_duration_seconds", "endpoint=\"" + Escape(endpoint) + "\"",
             out);
  }
  Header(out, "devflow_gate_checker_runs_total", "counter", "checker runs by provider and outcome");
  for (const auto& [k, v] : checker_runs_) {
    out += "devflow_gate_checker_runs_total{provider=\"" + Escape(k.first) + "\",outcome=\"" +
           Escape(k.second) + "\"} " + std::to_string(v) + "\n";
  }
  Header(out, "devflow_gate_faults_total", "counter", "fail-closed faults by kind");
  for (const auto& [k, v] : faults_) {
    out += "devflow_gate_faults_total{kind=\"" + Escape(k) + "\"} " + std::to_string(v) + "\n";
  }
  Header(out, "devflow_gate_cache_hits_total", "counter", "verdicts answered from the cache");
  out += "devflow_gate_cache_hits_total " + std::to_string(cache_hits_) + "\n";
  Header(out, "devflow_gate_cache_misses_total", "counter", "checks that dispatched a checker");
  out += "devflow_gate_cache_misses_total " + std::to_string(cache_misses_) + "\n";
  Header(out, "devflow_gate_parks_total", "counter",
         "parks asked for (admit) or committed (moves)");
  out += "devflow_gate_parks_total " + std::to_string(parks_) + "\n";
  Header(out, "devflow_gate_attempts_in_flight", "gauge", "attempts being decided now");
  out += "devflow_gate_attempts_in_flight " + std::to_string(in_flight_) + "\n";
  Header(out, "devflow_gate_attempts_queued", "gauge", "attempts waiting for a worker or a card");
  out += "devflow_gate_attempts_queued " + std::to_string(queued_) + "\n";
  Header(out, "devflow_gate_checks_in_flight", "gauge", "checker subprocesses running now");
  out += "devflow_gate_checks_in_flight " + std::to_string(checkers_running_) + "\n";
  Header(out, "devflow_gate_connections", "gauge", "open client connections");
  out += "devflow_gate_connections " + std::to_string(connections_) + "\n";
  Header(out, "devflow_gate_connections_refused_total", "counter",
         "connections refused at accept (answered 403 or 503), by reason");
  for (const auto& [k, v] : refused_) {
    out += "devflow_gate_connections_refused_total{reason=\"" + Escape(k) + "\"} " +
           std::to_string(v) + "\n";
  }
  Header(out, "devflow_gate_config_generation", "gauge", "config generation serving new attempts");
  out += "devflow_gate_config_generation " + std::to_string(generation_) + "\n";
  Header(out, "devflow_gate_config_info", "gauge", "SHA-256 of the config serving new attempts");
  out += "devflow_gate_config_info{hash=\"" + Escape(hash_) + "\"} 1\n";
  Header(out, "devflow_gate_config_last_reload_ok", "gauge", "1 when the last reload succeeded");
  out += "devflow_gate_config_last_reload_ok " + std::string(last_reload_ok_ ? "1" : "0") + "\n";
  Header(out, "devflow_gate_config_reload_failures_total", "counter",
         "reloads that kept the last good config");
  out += "devflow_gate_config_reload_failures_total " + std::to_string(reload_failures_) + "\n";
  Header(out, "devflow_gate_ledger_rows_not_written_total", "counter",
         "decision-ledger rows that could not be written (must stay 0)");
  out += "devflow_gate_ledger_rows_not_written_total " + std::to_string(ledger_not_written_) + "\n";
  return out;
}

std::string FaultKind(const std::string& reason) {
  auto has = [&](const char* s) { return reason.find(s) != std::string::npos; };
  if (has("exceeded checkTimeoutMs")) return "timeout";
  if (has("reply exceeded")) return "reply-cap";
  if (has("ended with signal")) return "signal";
  if (has("ended with exit code")) return "exit";
  if (has("cannot start checker")) return "start";
  if (has("is not registered")) return "provider";
  if (has("without a parsable verdict")) return "no-verdict";
  if (has("required input cannot be read")) return "input";
  if (has("changed while the checker judged it")) return "inputs-changed";
  if (has("veto report could not be written")) return "report";
  return "other";
}

}  // namespace devflow

// The admission server's I/O: listeners, HTTP sessions, the attempt scheduler, reload and
// drain. Everything that touches Boost.Asio / Beast is in this file (compile cost, STYLE.md).
//
// Threads: one runs everything. One io_context accepts, parses, routes, schedules and writes,
// and runs every attempt as a coroutine on it; a check's checker is driven on the same
// io_context (CheckWaiter), no thread per request or per check (docs/server.md "How attempts
// run"). The one exception: a TCP listener's peer screens run on two threads of their own
// (screen_pool.h), which touch no I/O object and post each result back.
#include "host/server/server.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <boost/asio/spawn.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>

#include "checker/sandbox.h"
#include "checker/subprocess.h"
#include "host/decision_ledger.h"
#include "host/deployment/check_budget.h"
#include "host/deployment/config_check.h"
#include "host/deployment/deployment.h"
#include "host/os.h"
#include "host/pause.h"
#include "host/server/api.h"
#include "host/server/metrics.h"
#include "host/server/peer.h"
#include "host/server/screen_pool.h"
#include "host/terminal.h"
#include "host/unwind.h"
#include "reports/sha256.h"

namespace devflow {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using local_stream = asio::local::stream_protocol;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

// ---- logging --------------------------------------------------------------------------------

class Logger {
 public:
  void Write(const std::string& level, const std::vector<LogField>& fields) {
    const std::string line = LogLine(SystemClock().NowIso(), level, fields) + "\n";
    std::lock_guard lock(mu_);
    std::cerr << line << std::flush;
  }

 private:
  std::mutex mu_;
};

Logger& Log() {
  static Logger logger;
  return logger;
}

// Policy and store warnings become log lines (decisions never depend on them).
class LogWarnings : public Warnings {
 public:
  void Warn(const std::string& line) override { Log().Write("warn", {{"msg", line}}); }
};

// The id the ledger row of this attempt carries too (host/decision_ledger.h NewDecisionId).
std::string DecisionId() { return NewDecisionId(SystemClock().NowIso()); }

std::string Ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ms);
  return buf;
}

// ---- HTTP plumbing --------------------------------------------------------------------------

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

Reply JsonReply(int status, std::string body) {
  Reply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Reply ErrorReply(int status, const std::string& field, const std::string& message) {
  return JsonReply(status, ErrorJson(BodyError{field, message}));
}

// A card that cannot be read or moved as it is: 404 when there is none, else 409 `{error,
// code}` with the store's code (a refused edge, a corrupt journal or card.md, a file over the
// read bound: EFBIG). The card's files are the workspace's, not the request: never a 500.
Reply CardErrorReply(const Status& status) {
  return JsonReply(status.code() == "not-found" ? 404 : 409,
                   "{\"error\":" + JsonString(status.message()) +
                       ",\"code\":" + JsonString(status.code()) + "}");
}

Reply Busy(const std::string& why, const std::string& code = "") {
  Reply r = JsonReply(503, ErrorJson(BodyError{"", why}, code));
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() + 0 && i + 2 <= s.size() - 1 + 1) {
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      int hi = i + 1 < s.size() ? hex(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? hex(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        out += s[i];
        continue;
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> ParseQuery(std::string_view q) {
  std::map<std::string, std::string> out;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view part = q.substr(0, amp);
    size_t eq = part.find('=');
    std::string key = PercentDecode(part.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : PercentDecode(part.substr(eq + 1));
    if (!key.empty()) out[key] = value;
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return out;
}

// Constant-time comparison of a presented bearer token with the configured one: the time
// depends only on the lengths.
bool SameToken(std::string_view presented, std::string_view expected) {
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  const size_t n = std::max(presented.size(), expected.size());
  for (size_t i = 0; i < n; ++i) {
    unsigned char a = i < presented.size() ? presented[i] : 0;
    unsigned char b = i < expected.size() ? expected[i] : 0;
    diff |= a ^ b;
  }
  return diff == 0 && !expected.empty();
}

// ---- config generations ---------------------------------------------------------------------

// One loaded config for every served root. Attempts hold the generation they started under,
// so a reload never changes the policies of an attempt in flight.
struct Generation {
  int64_t number = 0;
  std::string hash;  // SHA-256 over the config files' bytes, in root order
  std::map<std::string, std::unique_ptr<Deployment>> by_root;
};

// ---- checks on the io_context ----------------------------------------------------------------

// One attempt runs as a stackful coroutine on the server's io_context: its waterfall is plain
// synchronous code, and where a check waits for its checker (checker/subprocess.h CheckWaiter)
// the coroutine suspends and the io_context serves everything else meanwhile. A cache hit or a
// veto before any check completes without leaving the I/O thread.
//
// `halted`: the drain timed out (Core::Drain). From then on no attempt is resumed: the drain
// has killed its check and recorded and answered it as interrupted, and the process ends
// without unwinding it (a coroutine destroyed while suspended is unwound by forced_unwind,
// host/unwind.h; the server never relies on that). Resumed, it would decide on a killed
// check after its interrupted row, or stop in the checker's BlockIfHalted on the I/O thread
// before the 503s are written. No test loses that race today: the answers are written before
// the killed checks' ends are seen.
class CoroutineWaiter : public CheckWaiter {
 public:
  CoroutineWaiter(asio::io_context& io, asio::yield_context yield, const bool& halted)
      : io_(io), yield_(std::move(yield)), wake_(io), halted_(halted) {}
  asio::io_context& io() override { return io_; }
  void Wait(const std::function<bool()>& ready) override {
    // What is per attempt on this thread is set aside while others run: the request deadline
    // (check_budget.h), the pauser (host/pause.h) and the waiter itself; all are this
    // attempt's again on resumption.
    BudgetedChecker::Scope no_deadline(std::nullopt);
    PauseScope no_pauser(nullptr);
    CheckWaiter::Scope no_waiter(nullptr);
    while (halted_ || !ready()) {
      wake_.expires_at(asio::steady_timer::time_point::max());
      boost::system::error_code ec;
      wake_.async_wait(yield_[ec]);  // cancelled by Wake
    }
  }
  // host/pause.h on the server: this attempt is suspended for `duration` (the commit lock's
  // retry) while the I/O thread serves everything else. After a drain timed out it is never
  // resumed, as in Wait.
  void Pause(std::chrono::milliseconds duration) {
    {
      BudgetedChecker::Scope no_deadline(std::nullopt);
      PauseScope no_pauser(nullptr);
      CheckWaiter::Scope no_waiter(nullptr);
      asio::steady_timer timer(io_, duration);
      boost::system::error_code ec;
      timer.async_wait(yield_[ec]);
    }
    if (halted_) Wait([] { return true; });
  }
  void Wake() override {
    if (!halted_) wake_.cancel();
  }

 private:
  asio::io_context& io_;
  asio::yield_context yield_;
  asio::steady_timer wake_;
  const bool& halted_;
};

// The coroutine's stack: the waterfall's deepest path (YAML, RE2, JSON) with room to spare
// (a thread's default size).
constexpr size_t kAttemptStackBytes = 8 << 20;

// ---- the core: routing, scheduling, reload, drain -------------------------------------------

// What a connection may still touch after the server's core is gone (handlers destroyed with
// the io_context at exit).
struct Shared {
  ServerMetrics metrics;
  int open = 0;      // connections open now (under --max-connections)
  int refusing = 0;  // connections past the cap whose 503 is being written or lingers
  int writes = 0;    // answers being written now
  // Called when an answer has been written: a drain stops once nothing runs or is written.
  std::function<void()> written;
};

// One of --max-connections' places, held from the accept until the connection is closed:
// through the peer screen, a refusal's answer and every request of a kept-alive connection.
// Taken before any screen runs, so connections being screened count, and a flood of
// connects past the cap costs one accept and close each, never a screen.
// A connection refused past the cap holds a place of its own (`over_cap`), counted in
// Shared::refusing, while its 503 is written and the connection lingers (at most
// kRefusalsLingering of them; more are closed after a plain send).
class ConnectionSlot {
 public:
  explicit ConnectionSlot(std::shared_ptr<Shared> shared, bool over_cap = false)
      : shared_(std::move(shared)), over_cap_(over_cap) {
    if (over_cap_) {
      ++shared_->refusing;
      return;
    }
    ++shared_->open;
    shared_->metrics.SetConnections(shared_->open);
  }
  ConnectionSlot(ConnectionSlot&& other) noexcept
      : shared_(std::move(other.shared_)), over_cap_(other.over_cap_) {}
  ConnectionSlot& operator=(ConnectionSlot&&) = delete;
  ~ConnectionSlot() {
    if (!shared_) return;
    if (over_cap_) {
      --shared_->refusing;
      return;
    }
    --shared_->open;
    shared_->metrics.SetConnections(shared_->open);
  }

 private:
  std::shared_ptr<Shared> shared_;
  bool over_cap_ = false;
};

struct PeerInfo {
  bool tcp = false;
  std::string peer;  // "uid=1000" or "127.0.0.1:5555"
};

class Core {
 public:
  Core(asio::io_context& io, const ServerOptions& options)
      : io_(io),
        options_(options),
        shared_(std::make_shared<Shared>()),
        metrics_(shared_->metrics) {
    shared_->written = [this] { MaybeStop(); };
  }
  ~Core() { shared_->written = nullptr; }

  ServerMetrics& metrics() { return metrics_; }
  const std::shared_ptr<Shared>& shared() const { return shared_; }
  const ServerOptions& options() const { return options_; }
  bool draining() const { return draining_; }

  // Loads every root's config into a new generation; on failure keeps the last good one.
  Status Reload() {
    auto gen = std::make_shared<Generation>();
    gen->number = current_ ? current_->number + 1 : 1;
    std::string hashed;
    for (const std::string& root : options_.roots) {
      DeploymentOptions o;
      o.root = root;
      o.config_file = options_.config_file.empty() ? JoinPath(ParentPath(root), "devflow-gate.yaml")
                                                   : options_.config_file;
      o.self_path = options_.self_path;
      o.warnings = &warnings_;
      o.wrap_checker = [this](CheckerDispatch& inner) -> std::unique_ptr<CheckerDispatch> {
        return std::make_unique<BudgetedChecker>(
            inner,
            [this](const CheckRequest& req, bool started, const Result<CheckReply>& r, double) {
              metrics_.CheckerRun(req.provider, !started ? "not-started" : r.ok() ? "ok" : "fault");
              if (started) metrics_.CacheMiss();
            },
            [this](int delta) { metrics_.AddCheckersRunning(delta); });
      };
      Result<std::unique_ptr<Deployment>> d = LoadDeployment(o);
      if (d.ok()) {
        // What `config check` calls not usable (a provider not defined, a program that cannot
        // run, a `require:` RE2 refuses) loads, then fails closed and parks every card moved
        // on the edge: refused here as a load error is, the last good config kept (trial20 1e:
        // a typo in a reload parked cards while /readyz said ready).
        ConfigUseFindings use = CheckConfigUse((*d)->config, root, ProgramSearchPath(),
                                               RealFileSystem(), UnsearchedPathEntries());
        if (!use.errors.empty()) {
          std::string message = o.config_file + " is not usable:";
          for (const std::string& e : use.errors) message += "\n  " + o.config_file + ": " + e;
          d = Status::Error("config", message);
        }
      }
      if (!d.ok()) {
        last_reload_error_ = d.status().message();
        metrics_.ReloadFailed();
        return d.status();
      }
      Result<std::string> bytes = RealFileSystem().ReadFile(o.config_file);
      hashed += bytes.ok() ? *bytes : "";
      hashed.push_back('\0');
      gen->by_root[root] = std::move(*d);
    }
    gen->hash = Sha256Hex(hashed);
    current_ = gen;
    last_reload_error_.clear();
    metrics_.SetConfig(gen->number, gen->hash, true);
    return Status::Ok();
  }

  // What is decided from a request's headers alone, before its body is read (and before a
  // `100 Continue` invites it): the bearer token on TCP. A refusal is answered without reading
  // the body. The body's size is Beast's (body_limit at the Content-Length header: 413).
  // A header that says one thing (the token, the deadline) sent twice is refused 400: which of
  // the two counts would be the server's guess (it took the first), and a proxy or a client
  // library between may have taken the other (trial20).
  std::optional<Reply> Screen(const http::request_header<>& req, const PeerInfo& peer) {
    std::string_view target(req.target().data(), req.target().size());
    const std::string endpoint = EndpointName(std::string(target.substr(0, target.find('?'))));
    for (const char* name : {"Authorization", "X-Devflow-Deadline-Ms"}) {
      if (req.count(name) > 1) {
        Reply r = ErrorReply(400, name,
                             "header " + std::string(name) +
                                 " was sent more than once; send it once (which one would "
                                 "count is not guessed)");
        metrics_.Request(endpoint, r.status);
        return r;
      }
    }
    if (!peer.tcp || token_.empty()) return std::nullopt;
    auto auth = req.find(http::field::authorization);
    std::string_view presented;
    if (auth != req.end()) presented = std::string_view(auth->value().data(), auth->value().size());
    // The scheme is matched without regard to case (RFC 7235 2.1: "bearer" is "Bearer"), and
    // one or more spaces part it from the token.
    const std::string_view scheme = "Bearer";
    bool ok = presented.size() > scheme.size() &&
              beast::iequals(presented.substr(0, scheme.size()), scheme) &&
              presented[scheme.size()] == ' ';
    if (ok) {
      std::string_view token = presented.substr(scheme.size());
      token.remove_prefix(std::min(token.find_first_not_of(' '), token.size()));
      ok = SameToken(token, token_);
    }
    if (ok) return std::nullopt;
    Reply r = ErrorReply(401, "Authorization",
                         "a bearer token is required: send Authorization: Bearer <token>");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    Log().Write("warn", {{"msg", "request refused: no valid bearer token"},
                         {"peer", peer.peer},
                         {"endpoint", endpoint}});
    metrics_.Request(endpoint, r.status);
    return r;
  }

  // Answers one request; `done` runs on the I/O thread.
  void Handle(http::request<http::string_body>& req, const PeerInfo& peer,
              std::function<void(Reply)> done) {
    const auto received = Clock::now();
    std::string_view target(req.target().data(), req.target().size());
    std::string path(target.substr(0, target.find('?')));
    std::map<std::string, std::string> query;
    if (target.find('?') != std::string_view::npos) {
      query = ParseQuery(target.substr(target.find('?') + 1));
    }
    const std::string endpoint = EndpointName(path);
    // The test seam (docs/server.md "Test seams"): a request that asks for a fault gets it.
    std::string fault;
    if (test_faults_) {
      if (auto h = req.find("X-Devflow-Test-Fault"); h != req.end()) {
        fault.assign(h->value().data(), h->value().size());
      }
      if (fault == "handler") {
        throw std::runtime_error("test fault: the handler threw (X-Devflow-Test-Fault: handler)");
      }
    }
    auto finish = [this, endpoint, done](Reply r) {
      metrics_.Request(endpoint, r.status);
      done(std::move(r));
    };
    const bool get = req.method() == http::verb::get;
    const bool post = req.method() == http::verb::post;
    if (path == "/healthz" && get) return finish(JsonReply(200, "{\"ok\":true}"));
    if (path == "/readyz" && get) return finish(Ready());
    if (path == "/metrics" && get) {
      Reply r = JsonReply(200, metrics_.Render());
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return finish(std::move(r));
    }
    if (path == "/v1/reload" && post) return finish(ReloadReply());
    if (path.rfind("/v1/cards/", 0) == 0 && get) return finish(CardReply(path.substr(10), query));
    if (path == "/v1/explain" && get) return finish(ExplainReply(query));
    if ((path == "/v1/admit" || path == "/v1/moves") && post) {
      if (draining_) return finish(Busy("the server is shutting down; retry on its successor"));
      std::optional<int64_t> header_deadline;
      if (auto h = req.find("X-Devflow-Deadline-Ms"); h != req.end()) {
        std::string v(h->value().data(), h->value().size());
        char* end = nullptr;
        errno = 0;
        long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || n < 1 || n > kMaxDeadlineMs) {
          return finish(ErrorReply(400, "X-Devflow-Deadline-Ms",
                                   "header X-Devflow-Deadline-Ms must be an integer from 1 to " +
                                       std::to_string(kMaxDeadlineMs) + " (ms)"));
        }
        header_deadline = n;
      }
      if (path == "/v1/admit") return Admit(req.body(), header_deadline, received, fault, finish);
      return Moves(req.body(), header_deadline, received, fault, finish);
    }
    static const std::set<std::string> known = {
        "/healthz", "/readyz", "/metrics", "/v1/reload", "/v1/explain", "/v1/admit", "/v1/moves"};
    if (known.count(path) || path.rfind("/v1/cards/", 0) == 0) {
      return finish(ErrorReply(
          405, "", "method " + std::string(req.method_string()) + " is not allowed on " + path));
    }
    return finish(ErrorReply(404, "", "no endpoint " + path + "; see docs/server.md"));
  }

  // SIGTERM: stop taking attempts, answer the queued ones 503, let running ones finish up to
  // the drain timeout; then kill the checks still running, write an `interrupted` row for each
  // attempt still running, answer it 503, and exit 0 once the answers are written.
  void Drain(std::function<void()> stop_listening) {
    if (draining_) return;
    draining_ = true;
    // Listeners close before the log line, so whoever reads "draining" can rely on it.
    stop_listening();
    Log().Write("info", {{"msg", "draining"},
                         {"inFlight", std::to_string(running_), true},
                         {"queued", std::to_string(waiting_.size()), true}});
    for (Job& job : waiting_) job.done(Busy("the server is shutting down; retry on its successor"));
    waiting_.clear();
    UpdateGauges();
    if (running_ == 0) return MaybeStop();
    drain_timer_.emplace(io_, std::chrono::milliseconds(options_.drain_timeout_ms));
    drain_timer_->async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      // No attempt is resumed any more (CoroutineWaiter): whatever its check's end would
      // wake, it stays suspended until the process ends, so none decides, writes or answers
      // after this. The trees of the checks still running die first, and only then does the
      // process end: when the server's exit is seen, nothing a check started runs any more.
      halted_ = true;
      KillRunningChecks();
      const std::string why = "the server was stopped (SIGTERM) and its drain timeout of " +
                              std::to_string(options_.drain_timeout_ms) +
                              "ms ended before this attempt was decided";
      for (auto& [id, job] : in_flight_) {
        RecordUnfinished(*job, "interrupted", why);
        Reply r =
            JsonReply(503, "{\"error\":" +
                               JsonString(why + ": nothing was decided or committed; retry on "
                                                "the server's successor") +
                               ",\"decisionId\":" + JsonString(job->decision_id) + "}");
        r.headers.emplace_back("Retry-After", "1");
        job->done(std::move(r));
      }
      Log().Write("warn", {{"msg", "drain timeout: attempts still running were interrupted"},
                           {"interrupted", std::to_string(in_flight_.size()), true}});
      MaybeStop();
    });
  }

  // An exception out of a request's handling on the I/O thread (issue 7 item 10): 500 with a
  // JSON error, and the server goes on serving.
  Reply HandlerFailed(const std::string& target, const std::string& what) {
    const std::string message =
        "internal error while serving " + target + ": " + what + "; report this with the request";
    Log().Write("error", {{"msg", message}});
    metrics_.Request(EndpointName(target.substr(0, target.find('?'))), 500);
    return ErrorReply(500, "", message);
  }

  void set_token(std::string token) { token_ = std::move(token); }
  // DEVFLOW_GATE_TEST_FAULTS=1: requests may ask for a fault (X-Devflow-Test-Fault).
  void set_test_faults(bool on) { test_faults_ = on; }
  const std::string& last_reload_error() const { return last_reload_error_; }

 private:
  struct Job {
    uint64_t seq = 0;
    std::string key;       // root + '\0' + card id: attempts on one card run one at a time
    std::string endpoint;  // "/v1/admit" or "/v1/moves"
    std::shared_ptr<const Generation> generation;
    Deployment* deployment = nullptr;
    std::optional<Clock::time_point> deadline;
    Clock::time_point received;
    // Drawn when the attempt starts: its ledger row, its answer and its log line carry it,
    // whatever ends it (a decision, a fault, the drain).
    std::string decision_id;
    // Decides the attempt on its coroutine; sets `recorded` once its ledger row is written.
    std::function<Reply(Job&)> work;
    std::function<void(Reply)> done;
    // What the ledger row of an attempt that did not finish says (a fault, the drain): the
    // request, and the attempt once it is known (/v1/admit: the caller's; /v1/moves: as the
    // executor resolved it).
    MoveRequest move;
    std::optional<Attempt> attempt;
    bool recorded = false;
    std::string test_fault;  // X-Devflow-Test-Fault (DEVFLOW_GATE_TEST_FAULTS=1 only)
    // While the attempt waits in the queue with a deadline: the timer that answers it at that
    // deadline (ExpireQueued). Destroying the job (its start, the drain) cancels it.
    std::unique_ptr<asio::steady_timer> expiry;
  };

  static std::string EndpointName(const std::string& path) {
    if (path.rfind("/v1/cards/", 0) == 0) return "/v1/cards";
    static const std::set<std::string> known = {
        "/healthz", "/readyz", "/metrics", "/v1/reload", "/v1/explain", "/v1/admit", "/v1/moves"};
    return known.count(path) ? path : "other";
  }

  Reply Ready() {
    std::string reason;
    if (!current_) reason = "no config is loaded";
    if (reason.empty()) {
      for (const auto& [root, d] : current_->by_root) {
        for (const ProviderConfig& p : d->config.providers) {
          if (!p.sandbox_off && d->checker->SandboxLevel(p) == "none") {
            reason = "provider " + p.name +
                     " has no usable sandbox (neither bubblewrap nor Landlock+seccomp); install "
                     "bubblewrap or set sandbox: off on the provider";
            break;
          }
        }
        if (!reason.empty()) break;
        // The decision ledger must be writable: its directory, or the root that will hold it.
        // (the nearest existing directory on its path, which the first row will create under).
        std::string dir = JoinPath(root, "ledger");
        while (::access(dir.c_str(), F_OK) != 0 && dir != ParentPath(dir)) dir = ParentPath(dir);
        if (::access(dir.c_str(), W_OK) != 0) {
          reason = "the decision ledger under " + dir + " is not writable: " + std::strerror(errno);
          break;
        }
      }
    }
    std::string body = "{\"ready\":" + std::string(reason.empty() ? "true" : "false");
    if (!reason.empty()) body += ",\"reason\":" + JsonString(reason);
    if (current_) {
      body += ",\"generation\":" + std::to_string(current_->number) +
              ",\"configHash\":" + JsonString(current_->hash);
    }
    if (!last_reload_error_.empty())
      body += ",\"lastReloadError\":" + JsonString(last_reload_error_);
    body += "}";
    return JsonReply(reason.empty() ? 200 : 503, body);
  }

  Reply ReloadReply() {
    Status s = Reload();
    Log().Write(
        s.ok() ? "info" : "error",
        {{"msg", s.ok() ? "config reloaded" : "config reload failed; keeping the last good config"},
         {"generation", std::to_string(current_ ? current_->number : 0), true},
         {"error", s.ok() ? "" : s.message()}});
    if (!s.ok()) {
      return JsonReply(422, "{\"ok\":false,\"error\":" + JsonString(s.message()) +
                                ",\"generation\":" + std::to_string(current_->number) + "}");
    }
    return JsonReply(200, "{\"ok\":true,\"generation\":" + std::to_string(current_->number) +
                              ",\"configHash\":" + JsonString(current_->hash) + "}");
  }

  // The root a request names (absolute: the body's parser and QueryRoot refuse a relative
  // one), which must be one the server was started with.
  Deployment* RootOf(const std::optional<std::string>& named, BodyError& error) {
    const std::string root = named ? AbsolutePath(*named) : options_.roots.front();
    auto it = current_->by_root.find(root);
    if (it == current_->by_root.end()) {
      error = {"root", "root " + root + " is not served here; this server serves " + [&] {
                 std::string all;
                 for (const auto& r : options_.roots) all += (all.empty() ? "" : ", ") + r;
                 return all;
               }()};
      return nullptr;
    }
    return it->second.get();
  }

  // The root a query names (`?root=`), or a 400 when it is not absolute: as a body's root
  // (api.cc GetRoot), it is not made absolute against the server's working directory, which is
  // not the caller's (trial20).
  static std::optional<Reply> QueryRoot(const std::map<std::string, std::string>& query,
                                        std::optional<std::string>& root) {
    auto it = query.find("root");
    if (it == query.end()) return std::nullopt;
    if (it->second.empty() || it->second[0] != '/') {
      return ErrorReply(400, "root", "query parameter \"root\" must be an absolute path");
    }
    root = it->second;
    return std::nullopt;
  }

  Reply CardReply(const std::string& id, const std::map<std::string, std::string>& query) {
    std::optional<std::string> root;
    if (auto refused = QueryRoot(query, root)) return std::move(*refused);
    BodyError error;
    Deployment* d = RootOf(root, error);
    if (!d) return ErrorReply(403, error.field, error.message);
    Result<Card> card = d->store->Read(PercentDecode(id));
    if (!card.ok()) return CardErrorReply(card.status());
    return JsonReply(200, CardJson(*card));
  }

  Reply ExplainReply(const std::map<std::string, std::string>& query) {
    static const std::set<std::string> known = {"id", "to",     "root",
                                                "by", "reason", "expectRevision"};
    for (const auto& [k, v] : query) {
      if (!known.count(k)) return ErrorReply(400, k, "unknown query parameter \"" + k + "\"");
    }
    MoveRequest req;
    auto id = query.find("id");
    auto to = query.find("to");
    if (id == query.end()) return ErrorReply(400, "id", "query parameter \"id\" is required");
    if (to == query.end()) return ErrorReply(400, "to", "query parameter \"to\" is required");
    req.id = id->second;
    auto loc = ParseLocation(to->second);
    if (!loc) return ErrorReply(400, "to", "query parameter \"to\" names no location");
    req.to = *loc;
    if (auto by = query.find("by"); by != query.end()) {
      auto actor = ParseActorText(by->second);
      if (!actor) return ErrorReply(400, "by", "query parameter \"by\" must be kind[:name]");
      req.by = *actor;
    }
    if (auto r = query.find("reason"); r != query.end()) req.reason = r->second;
    if (auto e = query.find("expectRevision"); e != query.end()) {
      char* end = nullptr;
      long long n = std::strtoll(e->second.c_str(), &end, 10);
      if (e->second.empty() || *end != '\0' || n < 1) {
        return ErrorReply(400, "expectRevision",
                          "query parameter \"expectRevision\" must be a revision (1 or more)");
      }
      req.expected_revision = n;
    }
    std::optional<std::string> root;
    if (auto refused = QueryRoot(query, root)) return std::move(*refused);
    BodyError error;
    Deployment* d = RootOf(root, error);
    if (!d) return ErrorReply(403, error.field, error.message);
    Result<Explanation> ex = ExplainMove(*d, req);
    if (!ex.ok()) return CardErrorReply(ex.status());
    return JsonReply(200, ex->json);
  }

  static std::optional<Clock::time_point> DeadlineOf(Clock::time_point received,
                                                     std::optional<int64_t> header,
                                                     std::optional<int64_t> body) {
    std::optional<int64_t> ms = header;
    if (body && (!ms || *body < *ms)) ms = body;
    if (!ms) return std::nullopt;
    return received + std::chrono::milliseconds(*ms);
  }

  void Admit(const std::string& body, std::optional<int64_t> header_deadline,
             Clock::time_point received, const std::string& fault,
             std::function<void(Reply)> finish) {
    BodyError error;
    std::optional<AdmitBody> parsed = ParseAdmitBody(body, error);
    if (!parsed) return finish(ErrorReply(400, error.field, error.message));
    Deployment* d = RootOf(parsed->admit.attempt.root, error);
    if (!d) return finish(ErrorReply(403, error.field, error.message));
    parsed->admit.attempt.root = d->root;
    Job job;
    job.key = d->root + std::string(1, '\0') + parsed->admit.attempt.id;
    job.endpoint = "/v1/admit";
    job.deployment = d;
    job.deadline = DeadlineOf(received, header_deadline, parsed->deadline_ms);
    job.received = received;
    job.test_fault = fault;
    job.move.id = parsed->admit.attempt.id;
    job.move.to = parsed->admit.attempt.to;
    job.move.expected_revision = parsed->admit.attempt.expected_revision;
    job.move.by = parsed->admit.attempt.by;
    job.move.reason = parsed->admit.attempt.reason;
    job.move.dry_run = parsed->admit.dry_run;
    job.attempt = parsed->admit.attempt;
    AdmitRequest admit = parsed->admit;
    job.work = [this, admit, received](Job& job) {
      const std::string& decision_id = job.decision_id;
      TestFault(job);
      bool ledger_failed = false;
      AdmitOutcome out = RunAdmit(*job.deployment, admit, warnings_, &ledger_failed, decision_id);
      job.recorded = true;
      if (ledger_failed) metrics_.LedgerRowNotWritten();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - received).count();
      std::string outcome = out.decision.allowed ? "allowed" : out.park ? "parked" : "vetoed";
      if (out.code != "admitted" && out.code != "vetoed") outcome = out.code;
      CountCache(out.decision);
      if (out.park) {
        metrics_.Park();
        metrics_.Fault(FaultKind(out.park->reason));
      }
      metrics_.Decision("/v1/admit", outcome, ms / 1000.0);
      Log().Write("info", {{"msg", "decision"},
                           {"decisionId", decision_id},
                           {"endpoint", "/v1/admit"},
                           {"card", admit.attempt.id},
                           {"edge", admit.attempt.edge().Name()},
                           {"outcome", outcome},
                           {"dryRun", admit.dry_run ? "true" : "false", true},
                           {"ms", Ms(ms), true}});
      return JsonReply(200, AdmitJson(out, decision_id));
    };
    job.done = std::move(finish);
    Submit(std::move(job));
  }

  void Moves(const std::string& body, std::optional<int64_t> header_deadline,
             Clock::time_point received, const std::string& fault,
             std::function<void(Reply)> finish) {
    BodyError error;
    std::optional<MovesBody> parsed = ParseMovesBody(body, error);
    if (!parsed) return finish(ErrorReply(400, error.field, error.message));
    Deployment* d = RootOf(parsed->root, error);
    if (!d) return finish(ErrorReply(403, error.field, error.message));
    Job job;
    job.key = d->root + std::string(1, '\0') + parsed->move.id;
    job.endpoint = "/v1/moves";
    job.deployment = d;
    job.deadline = DeadlineOf(received, header_deadline, parsed->deadline_ms);
    job.received = received;
    job.test_fault = fault;
    job.move = parsed->move;
    MoveRequest move = parsed->move;
    job.work = [this, move, received](Job& job) {
      const std::string& decision_id = job.decision_id;
      TestFault(job);
      bool ledger_failed = false;
      MoveOutcome out = RunMove(*job.deployment, move, warnings_, &ledger_failed, decision_id,
                                [&job](const Attempt& attempt) { job.attempt = attempt; });
      job.recorded = true;
      if (ledger_failed) metrics_.LedgerRowNotWritten();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - received).count();
      std::string outcome = out.code;
      if (out.failed_closed) outcome = out.parked ? "parked" : "failed-closed";
      Decision seen;
      seen.allowed = out.ok;
      seen.checks = out.checks;
      seen.reason = out.message;
      CountCache(seen);
      if (out.failed_closed) {
        metrics_.Fault(FaultKind(out.message));
        if (out.parked) metrics_.Park();
      }
      metrics_.Decision("/v1/moves", outcome, ms / 1000.0);
      Log().Write("info", {{"msg", "decision"},
                           {"decisionId", decision_id},
                           {"endpoint", "/v1/moves"},
                           {"card", move.id},
                           {"edge", out.attempt.id.empty()
                                        ? std::string("?->") + std::string(LocationName(move.to))
                                        : out.attempt.edge().Name()},
                           {"outcome", outcome},
                           {"dryRun", move.dry_run ? "true" : "false", true},
                           {"ms", Ms(ms), true}});
      std::string json = MoveJson(move, out);
      json.insert(json.size() - 1, ",\"decisionId\":" + JsonString(decision_id));
      return JsonReply(200, json);
    };
    job.done = std::move(finish);
    Submit(std::move(job));
  }

  void CountCache(const Decision& d) {
    if (d.allowed) {
      for (const GateCheck& c : d.checks) {
        if (c.summary && c.summary->rfind("[cached] ", 0) == 0) metrics_.CacheHit();
      }
    } else if (d.reason.find(" (cached): ") != std::string::npos) {
      metrics_.CacheHit();
    }
  }

  void Submit(Job job) {
    job.seq = ++seq_;
    job.generation = current_;
    const bool can_start = running_ < options_.max_checks && !busy_.count(job.key);
    if (!can_start && static_cast<int>(waiting_.size()) >= options_.max_queue) {
      job.done(Busy("the server is at --max-checks " + std::to_string(options_.max_checks) +
                    " with --max-queue " + std::to_string(options_.max_queue) +
                    " attempts waiting; retry after the Retry-After delay"));
      return;
    }
    const uint64_t seq = job.seq;
    waiting_.push_back(std::move(job));
    Pump();
    ArmExpiry(seq);
  }

  // An attempt left waiting (behind its card's attempt in flight, or --max-checks) is answered
  // at its caller's deadline, not when it would leave the queue (trial20b 1b-3: a caller
  // waiting for its answer up to that deadline, devflow-gate-cordis, timed out first and parked
  // the card while the ledger row said "vetoed ... not parked"). One timer per queued attempt
  // on the io_context; an attempt that starts at once never arms one.
  void ArmExpiry(uint64_t seq) {
    auto it = std::find_if(waiting_.begin(), waiting_.end(),
                           [seq](const Job& j) { return j.seq == seq; });
    if (it == waiting_.end() || !it->deadline) return;
    it->expiry = std::make_unique<asio::steady_timer>(io_, *it->deadline);
    it->expiry->async_wait([this, seq](const boost::system::error_code& ec) {
      if (!ec) ExpireQueued(seq);
    });
  }

  // The deadline of a queued attempt came: it leaves the queue (no check starts for it) and is
  // answered now, under the config current now, as Start would have answered it (Expired).
  void ExpireQueued(uint64_t seq) {
    auto it = std::find_if(waiting_.begin(), waiting_.end(),
                           [seq](const Job& j) { return j.seq == seq; });
    if (it == waiting_.end()) return;  // started or drained meanwhile
    Job job = std::move(*it);
    waiting_.erase(it);
    UpdateGauges();
    job.decision_id = DecisionId();
    job.generation = current_;
    job.deployment = current_->by_root.at(job.deployment->root).get();
    Reply reply = Expired(job);
    job.done(std::move(reply));
  }

  // Starts every waiting attempt that may run now, oldest first. Start runs the attempt's
  // coroutine inline up to its first suspension (asio::spawn dispatches), and an attempt that
  // never suspends (a revision mismatch, a cache hit, a veto before any check) ends there and
  // pumps again: trial14 S1 crashed the server when that inner Pump erased the element the outer
  // loop's iterator pointed at. So Pump does not nest (an inner call asks the running one for
  // another pass), and no iterator is held across Start.
  void Pump() {
    if (pumping_) {
      pump_again_ = true;
      return;
    }
    pumping_ = true;
    do {
      pump_again_ = false;
      for (size_t i = 0; i < waiting_.size() && running_ < options_.max_checks; ++i) {
        if (busy_.count(waiting_[i].key)) continue;
        Job job = std::move(waiting_[i]);
        waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
        Start(std::move(job));
        pump_again_ = true;  // waiting_ may have changed under Start: scan it again
        break;
      }
    } while (pump_again_);
    pumping_ = false;
    UpdateGauges();
  }

  void Start(Job job) {
    job.expiry.reset();  // cancels its queue deadline's timer: the attempt's budget takes over
    busy_.insert(job.key);
    ++running_;
    job.decision_id = DecisionId();
    // An attempt is decided under the config current when it starts, not when it arrived: a
    // reload (SIGHUP, /v1/reload) that tightened an edge applies to the attempts still queued
    // (trial20 1h: one queued before the reload was admitted by the retired checkers). The
    // roots never change across generations; only attempts in flight keep theirs.
    job.generation = current_;
    job.deployment = current_->by_root.at(job.deployment->root).get();
    auto shared = std::make_shared<Job>(std::move(job));
    in_flight_[shared->seq] = shared;
    asio::spawn(
        io_, std::allocator_arg, stacks_,
        [this, shared](asio::yield_context yield) {
          Reply reply;
          {
            CoroutineWaiter waiter(io_, yield, halted_);
            CheckWaiter::Scope on_io(&waiter);
            PauseScope pausing([&waiter](std::chrono::milliseconds d) { waiter.Pause(d); });
            BudgetedChecker::Scope scope(shared->deadline);
            // Nothing crosses into the io_context (asio::detached would drop it, leaving the
            // card busy for ever) but the coroutine's own forced unwind (host/unwind.h).
            try {
              reply = DeadlinePassed(*shared) ? Expired(*shared) : shared->work(*shared);
            } catch (...) {
              const std::string what = CurrentExceptionWhat();
              reply = Failed(*shared, what);
            }
          }
          --running_;
          busy_.erase(shared->key);
          in_flight_.erase(shared->seq);
          shared->done(std::move(reply));
          if (draining_) return MaybeStop();
          Pump();
        },
        asio::detached);
  }

  static bool DeadlinePassed(const Job& job) {
    return job.deadline && Clock::now() >= *job.deadline;
  }

  // An attempt whose caller's deadline passed while it waited in the queue is vetoed without
  // running (trial20 2e: one committed 3.3 s after its 500 ms deadline, and a cache hit admitted
  // late): nothing is checked or committed and the card is not parked, as when the deadline
  // leaves a check too little time (docs/server.md "Limits and deadlines"). Its ledger row is
  // `vetoed` with the reason and the attempt's edge and revision, none under dryRun. It is
  // answered at the deadline by its queue timer (ExpireQueued); Start answers the same way one
  // whose timer was due but had not run yet when the attempt could start.
  Reply Expired(Job& job) {
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - job.received).count();
    const std::string why =
        "the caller's deadline passed while the attempt waited in the server's queue (" +
        std::to_string(static_cast<int64_t>(ms)) +
        "ms since it arrived); nothing was checked or committed and the card is not parked; "
        "give the move more time (the request's deadlineMs or X-Devflow-Deadline-Ms, "
        "devflow-gate-cordis's timeoutMs) or retry when the server is less busy" +
        ResolveUnrun(job);
    RecordUnfinished(job, "vetoed", why);
    job.recorded = true;
    metrics_.Decision(job.endpoint, "deadline-passed", ms / 1000.0);
    Log().Write("info", {{"msg", "decision"},
                         {"decisionId", job.decision_id},
                         {"endpoint", job.endpoint},
                         {"card", job.move.id},
                         {"outcome", "deadline-passed"},
                         {"ms", Ms(ms), true}});
    if (job.endpoint == "/v1/admit") {
      AdmitOutcome out;
      out.decision.allowed = false;
      out.decision.reason = why;
      out.code = "vetoed";
      return JsonReply(200, AdmitJson(out, job.decision_id));
    }
    MoveOutcome out;
    out.code = "vetoed";
    out.message = why;
    if (job.attempt) out.attempt = *job.attempt;
    std::string json = MoveJson(job.move, out);
    json.insert(json.size() - 1, ",\"decisionId\":" + JsonString(job.decision_id));
    return JsonReply(200, json);
  }

  // The attempt of a /v1/moves request that never ran, for its ledger row's edge and revision
  // (trial20b 1b-3: `"edge":"?->ready","revision":null`): the card as it stands, and the
  // revision the request expected or else the card's. Returns what to add to the message when
  // the card cannot be read (the row then keeps "?->" and the request's revision).
  std::string ResolveUnrun(Job& job) {
    if (job.attempt) return "";
    Result<Card> card = job.deployment->store->Read(job.move.id, FoldKeeps::kState);
    if (!card.ok()) {
      return "; the card could not be read for this row's edge and revision: " +
             card.status().message();
    }
    Attempt a;
    a.id = job.move.id;
    a.from = card->stage;
    a.to = job.move.to;
    a.expected_revision = job.move.expected_revision.value_or(card->stage_revision);
    a.by = job.move.by;
    a.reason = job.move.reason;
    a.root = job.deployment->root;
    a.at = SystemClock().NowIso();
    job.attempt = std::move(a);
    return "";
  }

  // A drain ends when no attempt runs and every answer has been written; a drain that timed
  // out, when the interrupted attempts' answers are written (each write is bounded by
  // --read-timeout-ms). Its suspended attempts are never unwound: the process ends first.
  void MaybeStop() {
    if (halted_) {
      if (shared_->writes != 0) return;
      std::cerr.flush();
      std::_Exit(kExitOk);
    }
    if (!draining_ || running_ != 0 || shared_->writes != 0) return;
    asio::post(io_, [this] { io_.stop(); });
  }

  void UpdateGauges() { metrics_.SetAttempts(running_, static_cast<int64_t>(waiting_.size())); }

  // The ledger row of an attempt that ends without writing its own (a fault, the drain): the
  // attempt as far as it is known, under the attempt's decision id. None under dryRun (which
  // writes nothing) and none once the attempt's own row is written.
  void RecordUnfinished(const Job& job, const std::string& code, const std::string& message) {
    if (job.recorded || job.move.dry_run) return;
    MoveOutcome out;
    out.code = code;
    out.message = message;
    if (job.attempt) out.attempt = *job.attempt;
    Status s = AppendDecision(RealFileSystem(), job.deployment->root, job.move, out,
                              SystemClock().NowIso(), IdentityOf(*job.deployment), job.decision_id);
    if (!s.ok()) {
      metrics_.LedgerRowNotWritten();
      Log().Write("error", {{"msg", "could not write the " + code + " row: " + s.message()},
                            {"decisionId", job.decision_id},
                            {"card", job.move.id}});
    }
  }

  // An exception out of an attempt (issue 7 item 10): the attempt's ledger row when it has
  // none yet, and a 500 with a JSON error; the caller frees the card for its next attempt.
  Reply Failed(Job& job, const std::string& what) {
    const std::string message = "internal error while deciding card " + job.move.id + " (" +
                                job.endpoint + "): " + what +
                                "; report this with the request that failed";
    RecordUnfinished(job, "internal-error", message);
    job.recorded = true;
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - job.received).count();
    metrics_.Decision(job.endpoint, "internal-error", ms / 1000.0);
    Log().Write("error", {{"msg", message},
                          {"decisionId", job.decision_id},
                          {"endpoint", job.endpoint},
                          {"card", job.move.id},
                          {"outcome", "internal-error"},
                          {"dryRun", job.move.dry_run ? "true" : "false", true},
                          {"ms", Ms(ms), true}});
    return JsonReply(500, "{\"error\":" + JsonString(message) +
                              ",\"decisionId\":" + JsonString(job.decision_id) + "}");
  }

  // The test seam's faults on an attempt's coroutine, after its decision id is drawn and
  // before it is decided (docs/server.md "Test seams").
  static void TestFault(const Job& job) {
    if (job.test_fault == "decision") {
      throw std::runtime_error("test fault: the decision threw (X-Devflow-Test-Fault: decision)");
    }
    if (job.test_fault == "decision-nonstd") throw 42;
  }

  asio::io_context& io_;
  const ServerOptions& options_;
  std::shared_ptr<Shared> shared_;
  ServerMetrics& metrics_;
  LogWarnings warnings_;
  std::shared_ptr<const Generation> current_;
  std::string last_reload_error_;
  std::string token_;
  bool test_faults_ = false;
  std::deque<Job> waiting_;
  std::set<std::string> busy_;
  std::map<uint64_t, std::shared_ptr<Job>> in_flight_;
  int running_ = 0;
  uint64_t seq_ = 0;
  bool draining_ = false;
  bool pumping_ = false;     // Pump is running (on this thread, further up the stack)
  bool pump_again_ = false;  // and must scan waiting_ once more before it returns
  bool halted_ = false;      // the drain timed out: no attempt is resumed (CoroutineWaiter)
  std::optional<asio::steady_timer> drain_timer_;
  // The attempts' coroutine stacks, kept for reuse: a fresh mapping per attempt costs a page
  // fault for every page the waterfall touches.
  boost::context::pooled_fixedsize_stack stacks_{kAttemptStackBytes};
};

// ---- sessions -------------------------------------------------------------------------------

template <class Protocol>
class Session : public std::enable_shared_from_this<Session<Protocol>> {
 public:
  using Socket = typename Protocol::socket;

  Session(Socket socket, Core& core, PeerInfo peer, ConnectionSlot slot)
      : stream_(std::move(socket)),
        timer_(stream_.get_executor()),
        core_(core),
        peer_(std::move(peer)),
        shared_(core.shared()),
        slot_(std::move(slot)) {}

  // The first request must arrive within --read-timeout-ms of the connect; later ones on a
  // kept-alive connection within --idle-timeout-ms of the previous answer.
  void Start() { Read(core_.options().read_timeout_ms); }

  // A peer refused at accept gets one answer when its first request's headers are in, and the
  // connection closes (LingerClose: its body, if any, is never read). `code` is the refusal's
  // metric reason, also in the body.
  void Refuse(int status, const std::string& message, const std::string& code) {
    refusal_ = JsonReply(status, ErrorJson(BodyError{"", message}, code));
    Start();
  }

  // A connection refused before any request is read (past --max-connections, or screened
  // after a drain began): `reply` is written at once (the socket's send buffer is empty, so
  // the write completes without waiting for the peer), then the connection lingers as after
  // any refusal (LingerClose), so the peer reads the answer rather than a reset.
  void RefuseNow(Reply reply) { Write(std::move(reply), false, /*unread=*/true); }

 private:
  void Read(int64_t header_timeout_ms) {
    parser_.emplace();
    parser_->body_limit(static_cast<uint64_t>(core_.options().max_body_bytes));
    parser_->header_limit(16 * 1024);
    // Headers within the timeout, then the body within --read-timeout-ms: a slow client is
    // dropped.
    ExpireAfter(header_timeout_ms);
    http::async_read_header(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnHeader, this->shared_from_this()));
  }

  // The headers are in: refusals that need no body are answered now, with the body unread
  // (a peer refused at accept, a missing bearer token); otherwise `Expect: 100-continue` is
  // answered (RFC 9110 §10.1.1) and the body is read within --read-timeout-ms.
  void OnHeader(beast::error_code ec, size_t) {
    if (ec) return OnError(ec);
    std::optional<Reply> refused = std::move(refusal_);
    refusal_.reset();
    if (!refused) refused = core_.Screen(parser_->get(), peer_);
    if (refused) return Write(std::move(*refused), false, /*unread=*/true);
    ExpireAfter(core_.options().read_timeout_ms);
    const auto& req = parser_->get();
    auto expect = req.find(http::field::expect);
    const bool has_body =
        parser_->chunked() || (parser_->content_length() && *parser_->content_length() > 0);
    if (expect != req.end() && req.version() >= 11 && !parser_->is_done()) {
      if (!beast::iequals(expect->value(), "100-continue")) {
        return Write(ErrorReply(417, "Expect",
                                "only Expect: 100-continue is understood, not \"" +
                                    std::string(expect->value()) + "\""),
                     false, /*unread=*/true);
      }
      if (has_body) {
        static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        auto self = this->shared_from_this();
        return asio::async_write(stream_, asio::buffer(kContinue),
                                 [self](beast::error_code ec, size_t) {
                                   if (ec) return self->Close();
                                   self->ReadBody();
                                 });
      }
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, this->shared_from_this()));
  }

  void OnError(beast::error_code ec) {
    if (timed_out_) ec = beast::error::timeout;  // the deadline cancelled the read (OnTimer)
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset) {
      return Close();
    }
    if (ec == beast::error::timeout) {
      if (parser_ && (parser_->got_some() || buffer_.size() > 0)) {
        Log().Write("warn", {{"msg",
                              "slow client dropped: the request did not arrive within "
                              "--read-timeout-ms"},
                             {"peer", peer_.peer}});
        core_.metrics().ConnectionRefused("slow-client");
      }
      return Close();
    }
    // A Content-Length past the limit fails here, at the header, before any of the body is
    // read (and before any `100 Continue`); a chunked body fails when it grows past the limit.
    if (ec == http::error::body_limit) {
      return Write(ErrorReply(413, "",
                              "the body exceeds " + std::to_string(core_.options().max_body_bytes) +
                                  " bytes"),
                   false, /*unread=*/true);
    }
    if (ec == http::error::header_limit) {
      return Write(ErrorReply(431, "", "the request headers exceed 16384 bytes"), false, true);
    }
    return Write(ErrorReply(400, "", "malformed HTTP request: " + ec.message()), false, true);
  }

  void OnRead(beast::error_code ec, size_t) {
    if (ec) return OnError(ec);
    ExpireNever();
    request_ = parser_->release();
    const bool keep = request_.keep_alive();
    auto self = this->shared_from_this();
    // One answer per request, whatever throws where: an exception out of the handling is a
    // 500 (when nothing was answered yet), never an exception out of the io_context.
    auto answered = std::make_shared<bool>(false);
    try {
      core_.Handle(request_, peer_, [self, keep, answered](Reply r) {
        if (*answered) return;
        *answered = true;
        self->Write(std::move(r), keep && !self->core_.draining());
      });
    } catch (...) {
      const std::string what = CurrentExceptionWhat();
      if (*answered) return;
      *answered = true;
      Write(core_.HandlerFailed(std::string(request_.target().data(), request_.target().size()),
                                what),
            false);
    }
  }

  // `unread`: the request's body may still be on its way; the connection then closes by
  // LingerClose, so that the peer reads this answer rather than a reset.
  void Write(Reply r, bool keep_alive, bool unread = false) {
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<http::status>(r.status));
    res->set(http::field::server, "devflow-gate");
    res->set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res->set(k, v);
    res->keep_alive(keep_alive);
    res->body() = std::move(r.body);
    res->prepare_payload();
    ExpireAfter(core_.options().read_timeout_ms);
    auto self = this->shared_from_this();
    ++shared_->writes;
    http::async_write(stream_, *res, [self, res, keep_alive, unread](beast::error_code ec, size_t) {
      --self->shared_->writes;
      if (!ec && unread) {
        self->LingerClose();
      } else if (ec || !keep_alive) {
        self->Close();
      } else {
        self->Read(self->core_.options().idle_timeout_ms);
      }
      if (self->shared_->written) self->shared_->written();
    });
  }

  // Closing a socket with unread bytes in its receive queue resets the connection (TCP sends
  // RST, and the peer may lose the answer it has not read yet). So: stop sending, discard what
  // still arrives (never parsed, never kept) until the peer closes, at most --read-timeout-ms and
  // kLingerBytes, then close.
  void LingerClose() {
    static constexpr size_t kLingerBytes = 4 << 20;
    beast::error_code ignored;
    stream_.shutdown(Protocol::socket::shutdown_send, ignored);
    ExpireAfter(core_.options().read_timeout_ms);
    auto self = this->shared_from_this();
    auto discard = std::make_shared<std::array<char, 16384>>();
    auto drained = std::make_shared<size_t>(0);
    auto step = std::make_shared<std::function<void()>>();
    *step = [self, discard, drained, step] {
      self->stream_.async_read_some(asio::buffer(*discard),
                                    [self, discard, drained, step](beast::error_code ec, size_t n) {
                                      *drained += n;
                                      if (ec || *drained > kLingerBytes) {
                                        *step = nullptr;  // breaks the cycle
                                        return self->Close();
                                      }
                                      (*step)();
                                    });
    };
    (*step)();
  }

  void Close() {
    beast::error_code ignored;
    stream_.shutdown(Protocol::socket::shutdown_both, ignored);
    stream_.close(ignored);
    timer_.cancel();  // its wait ends and lets go of this session
  }

  // ---- the connection's deadline ----
  //
  // Each operation on the connection (headers, body, answer, linger) has a deadline; when it
  // passes with the operation pending, the operation is cancelled and ends as
  // beast::error::timeout. One steady timer per connection, but not re-armed per operation as
  // Beast's basic_stream does (two timerfd_settime a request, issue 8): every deadline set at
  // time t is at least t + Slack() away (the timeouts are --read-timeout-ms and
  // --idle-timeout-ms), and the timer is armed at most Slack() ahead, so a pending wait always
  // ends at or before the deadline in force; when it ends early it is armed again towards the
  // deadline then in force. So a request moves a number, and the timer is set once per Slack()
  // per connection. A deadline nearer than the pending wait (none today) re-arms it.
  std::chrono::milliseconds Slack() const {
    return std::chrono::milliseconds(std::max<int64_t>(
        1, std::min(core_.options().read_timeout_ms, core_.options().idle_timeout_ms)));
  }

  void ExpireAfter(int64_t ms) {
    timed_out_ = false;
    deadline_ = Clock::now() + std::chrono::milliseconds(ms);
    if (!waiting_ || deadline_ < armed_) Arm();
  }

  void ExpireNever() {
    timed_out_ = false;
    deadline_ = Clock::time_point::max();
  }

  void Arm() {
    if (!stream_.is_open()) return;
    const Clock::time_point now = Clock::now();
    armed_ = deadline_ - now < Slack() ? deadline_ : now + Slack();
    waiting_ = true;
    timer_.expires_at(armed_);  // cancels a pending wait (its handler sees a newer `wait_`)
    timer_.async_wait([self = this->shared_from_this(), wait = ++wait_](beast::error_code ec) {
      self->OnTimer(ec, wait);
    });
  }

  void OnTimer(beast::error_code ec, uint64_t wait) {
    if (wait != wait_) return;  // re-armed since
    waiting_ = false;
    if (ec || !stream_.is_open()) return;  // closed (Close cancels the wait)
    if (Clock::now() < deadline_) return Arm();
    // Past the deadline: the pending operation (if any) ends with operation_aborted, which
    // OnError reads as the timeout; every other completion closes the connection.
    timed_out_ = true;
    beast::error_code ignored;
    stream_.cancel(ignored);
  }

  Socket stream_;
  asio::steady_timer timer_;
  Clock::time_point deadline_ = Clock::time_point::max();
  Clock::time_point armed_{};
  bool waiting_ = false;    // a wait on timer_ is pending
  uint64_t wait_ = 0;       // which one
  bool timed_out_ = false;  // the deadline passed with the current operation pending
  Core& core_;
  PeerInfo peer_;
  std::shared_ptr<Shared> shared_;
  ConnectionSlot slot_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::optional<Reply> refusal_;
};

// ---- listeners ------------------------------------------------------------------------------

// The TCP peer screen's pool (screen_pool.h): two threads, so a screen blocked in /proc leaves
// one to run. Every connection waiting for a screen holds its place under --max-connections,
// so the cap bounds the screens waiting too: a burst of callers up to the cap is screened and
// served, never refused for the screens' queue (issue 8: a separate bound of 64 refused 31 of
// 100 loopback callers arriving at once, unanswered).
constexpr int kScreenThreads = 2;

// Connections past --max-connections whose 503 is being written or lingers (LingerClose) at
// once; one more is closed right after a plain send of the same answer (the peer may then see
// a reset instead). Each holds a descriptor beyond the cap for at most --read-timeout-ms.
constexpr int kRefusalsLingering = 256;

// RefuseTcpPeer, behind the test seam DEVFLOW_GATE_TEST_HOLD_TCP_SCREEN=FIFO
// (tests/server/screen_test.cc): with it set, every TCP peer screen logs `peer screen held`
// and reads one byte from FIFO before it runs, so a test holds screens and lets them go one
// at a time; a byte `x` (or a FIFO that cannot be read) makes the screen throw, as a screen
// that fails would. Unset, the screen is RefuseTcpPeer alone.
server::PeerScreenPool::Screen TcpPeerScreen(std::vector<uid_t> allow_uids) {
  const char* hold = std::getenv("DEVFLOW_GATE_TEST_HOLD_TCP_SCREEN");
  std::string fifo = hold ? hold : "";
  return [allow = std::move(allow_uids), fifo](int fd) -> std::optional<server::PeerRefusal> {
    if (!fifo.empty()) {
      Log().Write("info", {{"msg", "peer screen held (DEVFLOW_GATE_TEST_HOLD_TCP_SCREEN)"}});
      char byte = 0;
      ssize_t n = -1;
      if (int f = ::open(fifo.c_str(), O_RDONLY | O_CLOEXEC); f >= 0) {
        do {
          n = ::read(f, &byte, 1);
        } while (n < 0 && errno == EINTR);
        ::close(f);
      }
      if (n != 1) throw std::runtime_error("the test hook's FIFO " + fifo + " cannot be read");
      if (byte == 'x') throw std::runtime_error("the test hook made the screen throw");
    }
    return server::RefuseTcpPeer(fd, allow);
  };
}

template <class Protocol>
class Listener : public std::enable_shared_from_this<Listener<Protocol>> {
 public:
  using Acceptor = typename Protocol::acceptor;
  using Socket = typename Protocol::socket;
  // `screens`: the pool of TCP peer screens (TCP listeners only); it must stop before this
  // listener is destroyed (RunServer declares it after the listeners).
  Listener(asio::io_context& io, Acceptor acceptor, Core& core, std::string name,
           server::PeerScreenPool* screens = nullptr)
      : io_(io),
        acceptor_(std::move(acceptor)),
        backoff_(io),
        core_(core),
        name_(std::move(name)),
        screens_(screens) {}

  void Accept() {
    acceptor_.async_accept([self = this->shared_from_this()](beast::error_code ec, Socket socket) {
      if (ec) {
        if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
        Log().Write("warn", {{"msg", "accept failed: " + ec.message()}});
        // Out of descriptors, the connection stays in the backlog and accept fails again at
        // once: wait for connections to close rather than spin (and log) on it.
        if (ec == asio::error::no_descriptors || ec.value() == ENFILE) {
          self->backoff_.expires_after(std::chrono::milliseconds(100));
          return self->backoff_.async_wait([self](beast::error_code wait_ec) {
            if (!wait_ec && self->acceptor_.is_open()) self->Accept();
          });
        }
        return self->Accept();
      }
      self->OnAccept(std::move(socket));
      self->Accept();
    });
  }

  void Stop() {
    beast::error_code ignored;
    acceptor_.close(ignored);
    backoff_.cancel();
  }

 private:
  // A TCP connection whose peer is being screened on the pool: its socket and its place under
  // --max-connections stay here, on the I/O thread; the pool has a dup of the descriptor and
  // the id.
  struct Screening {
    Socket socket;
    ConnectionSlot slot;
    PeerInfo peer;
  };

  // The cap first, before any screen: a connection past --max-connections costs an accept and
  // a close. Then the peer screen: inline for a Unix peer (SO_PEERCRED and the peer's own
  // /proc files), on the pool for a TCP one (a scan of every process's descriptors).
  void OnAccept(Socket socket) {
    PeerInfo peer;
    [[maybe_unused]] std::optional<struct ucred> cred;  // Unix peers
    if constexpr (std::is_same_v<Protocol, local_stream>) {
      struct ucred c {};
      socklen_t len = sizeof c;
      if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &c, &len) == 0) {
        cred = c;
        peer.peer = "uid=" + std::to_string(c.uid) + " pid=" + std::to_string(c.pid);
      }
    } else {
      peer.tcp = true;
      beast::error_code ec;
      auto ep = socket.remote_endpoint(ec);
      peer.peer = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
    }
    if (core_.shared()->open >= core_.options().max_connections) {
      return RefuseAtCap(std::move(socket), peer,
                         "the server has " + std::to_string(core_.shared()->open) +
                             " connections open, its --max-connections " +
                             std::to_string(core_.options().max_connections));
    }
    ConnectionSlot slot(core_.shared());
    if constexpr (std::is_same_v<Protocol, local_stream>) {
      std::optional<server::PeerRefusal> refuse = ScreenUnixPeer(socket, cred, peer);
      auto session =
          std::make_shared<Session<Protocol>>(std::move(socket), core_, peer, std::move(slot));
      if (refuse) return session->Refuse(403, refuse->message, refuse->reason);
      session->Start();
    } else {
      ScreenTcpPeer(std::move(socket), std::move(peer), std::move(slot));
    }
  }

  // A connection past the cap is answered 503 with Retry-After at once, before its request
  // is read, and never screened (so a flood of connects costs an accept, a send and a close
  // each): as a Session of its own, outside the cap, that writes the answer and lingers
  // (RefuseNow). Past kRefusalsLingering such sessions, the same answer is sent without
  // waiting (the send buffer of a new connection is empty) and the socket closed at once.
  void RefuseAtCap(Socket socket, PeerInfo peer, const std::string& why) {
    core_.metrics().ConnectionRefused("connection-cap");
    Log().Write("warn", {{"msg", "connection refused: " + why}, {"peer", peer.peer}});
    Reply reply = Busy("connection refused: " + why + "; retry later", "connection-cap");
    if (core_.shared()->refusing >= kRefusalsLingering) {
      return SendAndClose(socket, reply);
    }
    auto session = std::make_shared<Session<Protocol>>(std::move(socket), core_, std::move(peer),
                                                       ConnectionSlot(core_.shared(), true));
    session->RefuseNow(std::move(reply));
  }

  // `reply` in one non-blocking send, then close: the answer for a connection that no session
  // may hold.
  static void SendAndClose(Socket& socket, const Reply& reply) {
    std::string raw = "HTTP/1.1 " + std::to_string(reply.status) + " " +
                      std::string(http::obsolete_reason(static_cast<http::status>(reply.status))) +
                      "\r\nServer: devflow-gate\r\nContent-Type: " + reply.content_type;
    for (const auto& [k, v] : reply.headers) raw += "\r\n" + k + ": " + v;
    raw += "\r\nConnection: close\r\nContent-Length: " + std::to_string(reply.body.size()) +
           "\r\n\r\n" + reply.body;
    [[maybe_unused]] ssize_t n =
        ::send(socket.native_handle(), raw.data(), raw.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    beast::error_code ignored;
    socket.shutdown(Socket::shutdown_send, ignored);
    socket.close(ignored);
  }

  std::optional<server::PeerRefusal> ScreenUnixPeer(Socket& socket,
                                                    const std::optional<struct ucred>& cred,
                                                    const PeerInfo& peer) {
    if (!cred) {
      core_.metrics().ConnectionRefused("peer-unidentified");
      Log().Write("warn", {{"msg", "connection refused: the peer's credentials cannot be read"},
                           {"peer", peer.peer}});
      return server::PeerRefusal{"peer-unidentified", "the peer's credentials cannot be read"};
    }
    const auto& allow = core_.options().allow_uids;
    if (std::find(allow.begin(), allow.end(), cred->uid) == allow.end()) {
      core_.metrics().ConnectionRefused("peer-uid");
      Log().Write("warn", {{"msg", "connection refused: peer uid not on the allow list"},
                           {"peer", peer.peer}});
      return server::PeerRefusal{
          "peer-uid", "uid " + std::to_string(cred->uid) +
                          " is not allowed on this socket; start the server with --allow-uid " +
                          std::to_string(cred->uid) + " to allow it"};
    }
    if (auto why = server::RefuseConfinedPeer(socket.native_handle())) {
      // A checker runs as an allowed uid; it must still never reach the gate (issue 7).
      core_.metrics().ConnectionRefused("peer-confined");
      Log().Write("warn", {{"msg", "connection refused: " + *why}, {"peer", peer.peer}});
      return server::PeerRefusal{"peer-confined", *why};
    }
    return std::nullopt;
  }

  // A checker with `network: true` reaches a loopback listener (issue 7): the peer's socket is
  // looked up and its processes examined as a Unix peer's are, on the pool; the result comes
  // back to this thread (OnScreened). The pool screens a dup of the descriptor, which it
  // closes, so what it examines is this connection whatever happens to the socket meanwhile.
  void ScreenTcpPeer(Socket socket, PeerInfo peer, ConnectionSlot slot) {
    const int fd = ::fcntl(socket.native_handle(), F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {  // fail closed: a peer that cannot be screened is refused
      const int err = errno;
      const std::string why = std::string("the peer cannot be screened: dup of its socket: ") +
                              std::strerror(err) + " (" + ErrnoName(err) + ")";
      core_.metrics().ConnectionRefused("peer-unidentified");
      Log().Write("warn", {{"msg", "connection refused: " + why}, {"peer", peer.peer}});
      auto session =
          std::make_shared<Session<Protocol>>(std::move(socket), core_, peer, std::move(slot));
      return session->Refuse(403, why, "peer-unidentified");
    }
    const uint64_t id = ++screen_seq_;
    screening_.emplace(id, Screening{std::move(socket), std::move(slot), std::move(peer)});
    // A plain pointer: the pool posts nothing once it has stopped, and it stops before this
    // listener is destroyed; the function is destroyed on a pool thread, so it holds no socket.
    Listener* self = this;
    if (!screens_->Submit(fd, [self, id](std::optional<server::PeerRefusal> refused) {
          self->OnScreened(id, std::move(refused));
        })) {
      // Only once the pool has stopped (the server is going away): not answered.
      screening_.erase(id);
    }
  }

  // On the I/O thread: the screen's result for connection `id`.
  void OnScreened(uint64_t id, std::optional<server::PeerRefusal> refused) {
    auto node = screening_.extract(id);
    if (node.empty()) return;
    Screening& s = node.mapped();
    if (refused) {
      core_.metrics().ConnectionRefused(refused->reason);
      Log().Write("warn",
                  {{"msg", "connection refused: " + refused->message}, {"peer", s.peer.peer}});
    }
    auto session = std::make_shared<Session<Protocol>>(std::move(s.socket), core_,
                                                       std::move(s.peer), std::move(s.slot));
    // Draining: the listeners are closed, and a connection screened since is answered 503 at
    // once, unread, as a request arriving during the drain is.
    if (core_.draining()) {
      return session->RefuseNow(Busy("the server is shutting down; retry on its successor"));
    }
    if (refused) return session->Refuse(403, refused->message, refused->reason);
    session->Start();
  }

  asio::io_context& io_;
  Acceptor acceptor_;
  asio::steady_timer backoff_;  // the pause after accept ran out of descriptors
  Core& core_;
  std::string name_;
  server::PeerScreenPool* screens_;
  uint64_t screen_seq_ = 0;
  std::map<uint64_t, Screening> screening_;
};

// The descriptors `serve` may hold at once with these options: a socket per connection under
// --max-connections and, for one waiting for its TCP peer screen, the screen's dup of it;
// kRefusalsLingering refused connections; a running check's pipes, pidfd and files (16 is
// above what one uses); and the listeners, roots, log and ledger files.
uint64_t DescriptorsNeeded(const ServerOptions& options) {
  return 2 * static_cast<uint64_t>(options.max_connections) + kRefusalsLingering +
         16 * static_cast<uint64_t>(options.max_checks) + 64;
}

// Raises the soft RLIMIT_NOFILE towards DescriptorsNeeded (never above the hard limit, never
// lowering it): systemd and most shells start a process at a soft limit of 1024, where
// --max-connections' default would end in accept's EMFILE long before the cap. A hard limit
// below the need is logged, with the figure, once the logger runs. Returns the warning or "".
std::string RaiseOpenFileLimit(const ServerOptions& options) {
  const uint64_t need = DescriptorsNeeded(options);
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return "";
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
    const rlim_t want = rl.rlim_max == RLIM_INFINITY ? need : std::min<rlim_t>(rl.rlim_max, need);
    struct rlimit raised = rl;
    raised.rlim_cur = want;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) rl.rlim_cur = want;
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
    return "the open-file limit is " + std::to_string(rl.rlim_cur) + " (hard " +
           std::to_string(rl.rlim_max) + "), below the " + std::to_string(need) +
           " descriptors --max-connections " + std::to_string(options.max_connections) +
           " and --max-checks " + std::to_string(options.max_checks) +
           " may need: raise it (LimitNOFILE= in the unit) or lower --max-connections";
  }
  return "";
}

int Usage(const std::string& message) {
  std::cerr << "devflow-gate serve: " << TerminalLine(message) << "\n";  // argv in it (T1)
  return kExitUsage;
}

}  // namespace

int RunServer(const ServerOptions& in) {
  ServerOptions options = in;
  if (options.listen.empty()) return Usage("pass --listen unix:PATH or --listen 127.0.0.1:PORT");
  if (options.roots.empty()) return Usage("no devflow root to serve; pass --root DIR");
  if (options.max_checks < 1) return Usage("--max-checks must be at least 1");
  if (options.max_queue < 0) return Usage("--max-queue must be 0 or more");
  if (options.max_connections < 1) return Usage("--max-connections must be at least 1");
  // One directory under two spellings (a symlinked path, a bind mount) would get two per-card
  // queues, so two attempts on one card could run at once (trial20b 2-2): one spelling each.
  for (size_t i = 0; i < options.roots.size(); ++i) {
    struct stat a {};
    if (::stat(options.roots[i].c_str(), &a) != 0) continue;  // a missing root: refused below
    for (size_t j = 0; j < i; ++j) {
      struct stat b {};
      if (::stat(options.roots[j].c_str(), &b) == 0 && a.st_dev == b.st_dev &&
          a.st_ino == b.st_ino) {
        return Usage("--root " + options.roots[j] + " and --root " + options.roots[i] +
                     " are the same directory; serve it under one path");
      }
    }
  }
  if (options.allow_remote && options.token_file.empty()) {
    return Usage("--allow-remote needs --token-file FILE: remote callers must send a bearer token");
  }
  if (options.allow_uids.empty()) options.allow_uids.push_back(::getuid());
  std::string token;
  if (!options.token_file.empty()) {
    Result<std::string> text = RealFileSystem().ReadFile(options.token_file);
    if (!text.ok()) return Usage("cannot read --token-file: " + text.status().message());
    token = *text;
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
      token.pop_back();
    if (token.empty()) return Usage("--token-file " + options.token_file + " is empty");
    // One run of visible ASCII (devflow-gate-cordis reads the file by the same rule): a second
    // line, a blank first line, a leading space, a tab or a non-ASCII byte made a token no
    // client sends, and a server that answered 401 to everything (trial20 4d).
    for (unsigned char c : token) {
      if (c < 0x21 || c > 0x7e) {
        return Usage("--token-file " + options.token_file +
                     " does not hold one token alone on its first line (a second line, a blank "
                     "first line, a space, a tab or a non-ASCII byte); write the token, visible "
                     "ASCII only, and one newline");
      }
    }
  }
  for (const std::string& spec : options.listen) {
    if (spec.rfind("unix:", 0) == 0) continue;
    size_t colon = spec.rfind(':');
    std::string host = colon == std::string::npos ? spec : spec.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    beast::error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (colon == std::string::npos || ec) {
      return Usage("--listen " + spec + " is not unix:PATH or IP:PORT (e.g. 127.0.0.1:8417)");
    }
    if (!address.is_loopback() && !options.allow_remote) {
      return Usage("refusing to listen on " + spec +
                   ": not a loopback address; pass --allow-remote --token-file FILE to accept "
                   "remote callers");
    }
  }
  std::signal(SIGPIPE, SIG_IGN);

  if (std::string warning = RaiseOpenFileLimit(options); !warning.empty()) {
    Log().Write("warn", {{"msg", warning}});
  }
  asio::io_context io(1);
  Core core(io, options);
  core.set_token(token);
  if (const char* faults = std::getenv("DEVFLOW_GATE_TEST_FAULTS"); faults && *faults == '1') {
    core.set_test_faults(true);
  }
  if (Status s = core.Reload(); !s.ok()) {
    std::cerr << s.message() << "\n";
    return kExitUsage;
  }

  std::vector<std::function<void()>> stops;
  // The unix sockets this server bound, each with the (st_dev, st_ino) it had: at the end only a
  // path that still names our socket is removed. Another server may have been started on the
  // path after it was removed by hand; unlinking its socket left it running, unreachable
  // (trial19 3b).
  struct BoundSocket {
    std::string path;
    dev_t dev = 0;
    ino_t ino = 0;
  };
  std::vector<BoundSocket> socket_paths;
  auto unlink_ours = [&socket_paths] {
    for (const BoundSocket& b : socket_paths) {
      struct stat now {};
      if (::lstat(b.path.c_str(), &now) == 0 && now.st_dev == b.dev && now.st_ino == b.ino) {
        ::unlink(b.path.c_str());
      }
    }
  };
  // Whatever ends this function removes the sockets it bound: a start refused after a bind (a
  // --socket-group no group has, a later --listen that cannot be bound) left its socket file
  // behind, a path no server answers on (trial20).
  struct UnlinkAtExit {
    std::function<void()> unlink;
    ~UnlinkAtExit() { unlink(); }
  } unlink_at_exit{unlink_ours};
  // The TCP peer screens' threads, started with the first TCP listener (a server on unix
  // sockets only keeps one thread). Declared after the listeners' owners, so it stops (posts
  // nothing more) before any listener is destroyed; its results go to the I/O thread, which
  // runs every socket's handlers.
  std::unique_ptr<server::PeerScreenPool> screens;
  for (const std::string& spec : options.listen) {
    if (spec.rfind("unix:", 0) == 0) {
      const std::string path = AbsolutePath(spec.substr(5));
      struct stat st {};
      if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
          return Usage(path + " exists and is not a socket; remove it or pick another path");
        // A socket left by a dead server is replaced; a live one is not taken over.
        local_stream::socket probe(io);
        beast::error_code ec;
        probe.connect(local_stream::endpoint(path), ec);
        if (!ec) return Usage("another server is listening on " + path);
        ::unlink(path.c_str());
      }
      local_stream::acceptor acceptor(io);
      beast::error_code ec;
      acceptor.open(local_stream(), ec);
      // Created with the final mode at once (umask), so no other user can connect in between.
      mode_t old = ::umask(0777 & ~static_cast<mode_t>(options.socket_mode));
      if (!ec) acceptor.bind(local_stream::endpoint(path), ec);
      ::umask(old);
      if (ec) return Usage("cannot listen on unix:" + path + ": " + ec.message());
      struct stat bound {};
      if (::lstat(path.c_str(), &bound) != 0)
        return Usage("cannot stat " + path + " after binding it");
      socket_paths.push_back({path, bound.st_dev, bound.st_ino});
      acceptor.listen(asio::socket_base::max_listen_connections, ec);
      if (ec) return Usage("cannot listen on unix:" + path + ": " + ec.message());
      ::chmod(path.c_str(), static_cast<mode_t>(options.socket_mode));
      if (!options.socket_group.empty()) {
        struct group* g = ::getgrnam(options.socket_group.c_str());
        if (!g || ::chown(path.c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0) {
          return Usage("cannot give " + path + " to group " + options.socket_group);
        }
      }
      auto l = std::make_shared<Listener<local_stream>>(io, std::move(acceptor), core, path);
      l->Accept();
      stops.push_back([l] { l->Stop(); });
      Log().Write("info", {{"msg", "listening"}, {"listen", "unix:" + path}});
      continue;
    }
    size_t colon = spec.rfind(':');
    if (colon == std::string::npos)
      return Usage("--listen " + spec + " is not unix:PATH or HOST:PORT");
    std::string host = spec.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    std::string port_text = spec.substr(colon + 1);
    char* end = nullptr;
    long port = std::strtol(port_text.c_str(), &end, 10);
    if (port_text.empty() || *end != '\0' || port < 0 || port > 65535) {
      return Usage("--listen " + spec + ": the port must be 0..65535");
    }
    beast::error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (ec) return Usage("--listen " + spec + ": " + host + " is not an IP address");
    if (!address.is_loopback() && !options.allow_remote) {
      return Usage("refusing to listen on " + spec +
                   ": not a loopback address; pass --allow-remote --token-file FILE to accept "
                   "remote callers");
    }
    tcp::acceptor acceptor(io);
    tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Usage("cannot listen on " + spec + ": " + ec.message());
    const auto bound = acceptor.local_endpoint();
    if (!screens) {
      try {
        screens = std::make_unique<server::PeerScreenPool>(
            kScreenThreads, static_cast<size_t>(options.max_connections),
            TcpPeerScreen(options.allow_uids),
            [executor = io.get_executor()](std::function<void()> f) {
              asio::post(executor, std::move(f));
            });
      } catch (const std::system_error& e) {
        std::cerr << "devflow-gate serve: cannot start the TCP peer screen's threads: " << e.what()
                  << "\n";
        return kExitUsage;
      }
    }
    auto l = std::make_shared<Listener<tcp>>(io, std::move(acceptor), core, spec, screens.get());
    l->Accept();
    stops.push_back([l] { l->Stop(); });
    std::string shown = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                                : bound.address().to_string();
    Log().Write("info", {{"msg", "listening"},
                         {"listen", shown + ":" + std::to_string(bound.port())},
                         {"port", std::to_string(bound.port()), true}});
  }

  asio::signal_set signals(io, SIGHUP, SIGTERM, SIGINT);
  std::function<void()> wait_signal;
  wait_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (sig == SIGHUP) {
        Status s = core.Reload();
        Log().Write(
            s.ok() ? "info" : "error",
            {{"msg", s.ok() ? "config reloaded (SIGHUP)"
                            : "config reload failed (SIGHUP); keeping the last good config"},
             {"error", s.ok() ? "" : s.message()}});
        return wait_signal();
      }
      core.Drain([&] {
        for (auto& stop : stops) stop();
        unlink_ours();
        signals.cancel();
      });
    });
  };
  wait_signal();
  Log().Write("info", {{"msg", "ready"},
                       {"roots", std::to_string(options.roots.size()), true},
                       {"maxChecks", std::to_string(options.max_checks), true}});
  // A handler's exception that no request's handling caught (an I/O completion's own) ends
  // that handler, not the server: run() is resumed (issue 7 item 10). A coroutine's forced
  // unwind never reaches here: it ends inside its coroutine.
  for (;;) {
    try {
      io.run();
      break;
    } catch (...) {
      Log().Write("error", {{"msg", std::string("internal error in an I/O handler: ") +
                                        CurrentExceptionWhat() + "; the server goes on serving"}});
    }
  }
  unlink_ours();
  Log().Write("info", {{"msg", "stopped"}});
  return kExitOk;
}

}  // namespace devflow

// The TCP peer screen runs off the server's I/O thread, and connections being screened count
// toward --max-connections (issue 8). The screen (RefuseTcpPeer: every process's descriptors
// in /proc) ran inline on the one I/O thread, so one slow screen stalled every connection and
// every attempt, and --max-connections was checked only after it, counting no connection still
// being screened. The server runs with the test seam DEVFLOW_GATE_TEST_HOLD_TCP_SCREEN: each
// TCP screen logs `peer screen held` and waits for one byte from the test's FIFO, so the test
// holds a screen as long as it likes (a screen blocked in /proc) and synchronises on the log.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "server/serve_fixture.h"

namespace devflow::server_test {
namespace {

using e2e::Workspace;

constexpr const char* kHeld = "peer screen held";

// The FIFO the server's TCP screens wait on: each byte lets one held screen go (`x`: it
// throws). Held open read-write here, so the server's opens never block and bytes written
// before a screen opens it wait for that screen.
struct ScreenGate {
  explicit ScreenGate(std::string p) : path(std::move(p)) {
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
  }
  ~ScreenGate() { ::close(fd); }
  void Let(char byte = 'y', size_t n = 1) {
    const std::string bytes(n, byte);
    REQUIRE(::write(fd, bytes.data(), n) == static_cast<ssize_t>(n));
  }
  std::string path;
  int fd = -1;
};

// One connection, opened now; its request is sent now and its answer read later. Reads are
// bounded at 30 s (SO_RCVTIMEO), so a server that never answers fails the test (status 0)
// instead of hanging it.
struct Client {
  explicit Client(const std::string& where) : fd(Connect(where)) {
    REQUIRE(fd >= 0);
    timeval bound{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
  }
  ~Client() { ::close(fd); }
  void Send(const std::string& target, bool keep_alive = false) {
    WriteAll(fd, "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: " +
                     (keep_alive ? "keep-alive" : "close") + "\r\n\r\n");
  }
  // One answer: its head, then Content-Length bytes of body.
  HttpAnswer Answer() {
    std::string raw;
    size_t want = std::string::npos;
    char buf[4096];
    while (want == std::string::npos || raw.size() < want) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      raw.append(buf, static_cast<size_t>(n));
      const size_t split = raw.find("\r\n\r\n");
      if (want == std::string::npos && split != std::string::npos) {
        HttpAnswer head = Parse(raw);
        const std::string length = head.Header("Content-Length");
        want = split + 4 + (length.empty() ? 0 : std::stoul(length));
      }
    }
    return Parse(raw);
  }
  // The server closed the connection with no (further) byte of answer: a FIN, or a reset when
  // the request it never read was still queued; not merely nothing yet within the bound.
  bool ClosedUnanswered() {
    char byte;
    ssize_t n = ::read(fd, &byte, 1);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }
  int fd;
};

// A server on a unix socket and on 127.0.0.1 at once, its TCP screens held by a ScreenGate.
struct HeldScreenServer {
  explicit HeldScreenServer(const Workspace& ws, std::vector<std::string> extra = {})
      : gate(ws / "screen.fifo"), socket(ws / "gate.sock") {
    std::vector<std::string> args = {"--root",         ws.root(),  "serve",      "--listen",
                                     "unix:" + socket, "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    serve = std::make_unique<Serve>(
        ws.path(), args, false,
        std::map<std::string, std::string>{{"DEVFLOW_GATE_TEST_HOLD_TCP_SCREEN", gate.path}});
    const std::string listening = serve->WaitLog("\"port\":");
    INFO("server log:\n" << serve->Log());
    REQUIRE(!listening.empty());
    port = std::to_string(nlohmann::json::parse(listening)["port"].get<int>());
    REQUIRE(!serve->WaitLog("\"msg\":\"ready\"").empty());
  }
  // Metrics over the unix socket (screened inline, never held).
  std::string Metrics() {
    Client c(socket);
    c.Send("/metrics");
    return c.Answer().body;
  }
  ScreenGate gate;
  std::string socket;
  std::string port;
  std::unique_ptr<Serve> serve;
};

TEST_CASE(
    "serve: a TCP peer screen that hangs stalls no other connection, and one that throws "
    "refuses its peer") {
  Workspace ws("plugins: []\n");
  HeldScreenServer server(ws);
  INFO("server log:\n" << server.serve->Log());

  // A kept-alive TCP connection, screened once.
  Client kept(server.port);
  kept.Send("/healthz", /*keep_alive=*/true);
  REQUIRE(server.serve->WaitLogCount(kHeld, 1));
  server.gate.Let();
  CHECK(kept.Answer().status == 200);

  // A second TCP connection whose screen hangs.
  Client held(server.port);
  held.Send("/healthz");
  REQUIRE(server.serve->WaitLogCount(kHeld, 2));

  // Meanwhile a unix-socket connection and the kept-alive TCP one are both served.
  Client unix_peer(server.socket);
  unix_peer.Send("/healthz");
  HttpAnswer on_unix = unix_peer.Answer();
  CHECK(on_unix.status == 200);
  kept.Send("/healthz", /*keep_alive=*/true);
  CHECK(kept.Answer().status == 200);

  // The held screen throws: its peer is refused as one that cannot be identified.
  server.gate.Let('x');
  HttpAnswer refused = held.Answer();
  CHECK(refused.status == 403);
  CHECK(refused.body.find("the peer screen failed (the test hook made the screen throw)") !=
        std::string::npos);
  CHECK(server.Metrics().find(
            "devflow_gate_connections_refused_total{reason=\"peer-unidentified\"} 1") !=
        std::string::npos);
}

TEST_CASE("serve: a connection being screened counts toward --max-connections") {
  Workspace ws("plugins: []\n");
  HeldScreenServer server(ws, {"--max-connections", "1"});
  INFO("server log:\n" << server.serve->Log());

  Client screened(server.port);
  screened.Send("/healthz");
  REQUIRE(server.serve->WaitLogCount(kHeld, 1));

  // The one place is the screened connection's: the next is closed at accept, unanswered.
  Client over(server.socket);
  over.Send("/healthz");
  CHECK(over.ClosedUnanswered());
  CHECK(!server.serve->WaitLog("connection refused: --max-connections reached").empty());

  server.gate.Let();
  CHECK(screened.Answer().status == 200);
  // Its place is free once the server has closed it (in the handler that gives the place back,
  // so no later connect can find it taken).
  CHECK(screened.ClosedUnanswered());
  CHECK(server.Metrics().find(
            "devflow_gate_connections_refused_total{reason=\"connection-cap\"} 1") !=
        std::string::npos);
}

TEST_CASE(
    "serve: with both screen threads busy and 64 TCP connections waiting, the next is refused "
    "as past the connection cap") {
  Workspace ws("plugins: []\n");
  HeldScreenServer server(ws);
  INFO("server log:\n" << server.serve->Log());

  std::vector<std::unique_ptr<Client>> admitted;
  for (int i = 0; i < 2; ++i) {
    admitted.push_back(std::make_unique<Client>(server.port));
    admitted.back()->Send("/healthz");
  }
  REQUIRE(server.serve->WaitLogCount(kHeld, 2));  // both threads hold a screen
  for (int i = 0; i < 64; ++i) {
    admitted.push_back(std::make_unique<Client>(server.port));
    admitted.back()->Send("/healthz");
  }
  Client over(server.port);
  over.Send("/healthz");
  CHECK(over.ClosedUnanswered());
  CHECK(!server.serve->WaitLog("64 TCP peer screens are already waiting").empty());

  server.gate.Let('y', admitted.size());
  int served = 0;
  for (auto& c : admitted) served += c->Answer().status == 200 ? 1 : 0;
  CHECK(served == 66);
  CHECK(server.Metrics().find(
            "devflow_gate_connections_refused_total{reason=\"connection-cap\"} 1") !=
        std::string::npos);
}

}  // namespace
}  // namespace devflow::server_test

// A checker may not call the gate (issue 7, the trial of 2026-12-02): a checker runs as the
// gate's user, so the server's uid allow list admitted it, and it could POST /v1/moves to commit
// any edge the waterfall lets through. Every confined checker runs under one seccomp filter more
// than the host that started it (checker/sandbox.h), and the server refuses such peers
// (host/server/peer.h).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "host/server/peer.h"
#include "server/serve_fixture.h"

namespace devflow::server_test {
namespace {

using e2e::Fixture;
using e2e::Workspace;

TEST_CASE("ParseSeccompState reads the mode and the filter count of a /proc status") {
  auto none = server::ParseSeccompState(
      "Name:\tsh\nNoNewPrivs:\t0\nSeccomp:\t0\n"
      "Seccomp_filters:\t0\nSpeculation_Store_Bypass:\tx\n");
  REQUIRE(none);
  CHECK(none->mode == 0);
  CHECK(none->filters == 0);
  auto two = server::ParseSeccompState("Seccomp:\t2\nSeccomp_filters:\t2\n");
  REQUIRE(two);
  CHECK(two->mode == 2);
  CHECK(two->filters == 2);
  auto old_kernel = server::ParseSeccompState("Seccomp:\t2\n");  // before 5.9: no count
  REQUIRE(old_kernel);
  CHECK(old_kernel->filters == 1);
  CHECK_FALSE(server::ParseSeccompState("Name:\tsh\n"));
  CHECK_FALSE(server::ParseSeccompState("Seccomp:\tx\n"));
  CHECK_FALSE(server::ParseSeccompState("Seccomp:\t7\n"));
  CHECK_FALSE(server::ParseSeccompState("XSeccomp:\t0\n"));
}

// The gate on designing->ready runs call_gate.py, which asks the server it runs under to move
// the sibling card along an edge no policy guards. The provider keeps the network, so the
// socket is reachable (without it no socket opens at all, tests/checker/sandbox_test.cc).
std::string CallingConfig(const std::string& socket, const std::string& sibling) {
  return "providers:\n  checker:\n    command: ['" + Fixture("checkers/call_gate.py") + "', '" +
         socket + "', '" + sibling +
         "', 'designing']\n    network: true\n"
         "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n"
         "        'designing->ready':\n          provider: checker\n"
         "          inputs: [prd, design]\n          prompt: Check the design.\n"
         "      checkTimeoutMs: 20000\n";
}

std::string Stage(Workspace& ws, const std::string& card) {
  auto shown = ws.Gate({"card", "show", card, "--json"});
  REQUIRE(shown.exit_code == 0);
  return nlohmann::json::parse(shown.out)["stage"].get<std::string>();
}

TEST_CASE(
    "serve: a confined checker that calls the server is refused, from the server or the CLI") {
  Workspace ws("plugins: []\n");
  ws.CardInDesigning();  // before the gate's config: this move is not checked
  auto sibling = ws.Gate({"card", "create", "--title", "Sibling"});
  REQUIRE(sibling.exit_code == 0);
  const std::string card = e2e::Lines(sibling.out).at(0);
  const std::string socket = ws / "gate.sock";
  ws.WriteConfig(CallingConfig(socket, card));
  const std::string before = Stage(ws, card);
  REQUIRE(before != "designing");
  SocketServer server(ws);

  // Through the server: the checker of a /v1/moves the server runs.
  auto moved = server.Post("/v1/moves", "{\"id\":\"" + ws.card() + "\",\"to\":\"ready\"}");
  INFO("answer: " << moved.body << "\nserver log:\n" << server.serve->Log());
  CHECK(moved.status == 200);
  CHECK(moved.body.find("the gate answered: HTTP/1.1 403") != std::string::npos);
  CHECK(Stage(ws, card) == before);
  CHECK(!server.serve->WaitLog("no checker may call the gate").empty());

  // Through the CLI: its checker finds the same server and is refused the same way.
  REQUIRE(ws.Gate({"move", ws.card(), "developing"}).exit_code == 0);
  REQUIRE(ws.Gate({"move", ws.card(), "designing", "--reason", "again"}).exit_code == 0);
  auto cli = ws.Gate({"move", ws.card(), "ready", "--json"});
  INFO("cli: " << cli.out << cli.err);
  CHECK(cli.exit_code == 0);
  CHECK(cli.out.find("the gate answered: HTTP/1.1 403") != std::string::npos);
  CHECK(Stage(ws, card) == before);
  auto metrics = server.Get("/metrics");
  CHECK(metrics.body.find("devflow_gate_connections_refused_total{reason=\"peer-confined\"} 2") !=
        std::string::npos);

  // The control: the same request from an unconfined peer (this test) is served, so the
  // refusals above can fail.
  auto direct = server.Post("/v1/moves", "{\"id\":\"" + card + "\",\"to\":\"designing\"}");
  CHECK(direct.status == 200);
  CHECK(Stage(ws, card) == "designing");
}

// The trial of 2026-12-02: a server under a seccomp filter of its own (a hardened unit) saw the
// checker of an unconfined CLI move with as many filters as it has, and served it. The reaper
// among the peer's ancestors gives the checker away however the server is confined.
TEST_CASE("serve under a seccomp filter of its own still refuses a CLI move's checker") {
  Workspace ws("plugins: []\n");
  ws.CardInDesigning();
  auto sibling = ws.Gate({"card", "create", "--title", "Sibling"});
  REQUIRE(sibling.exit_code == 0);
  const std::string card = e2e::Lines(sibling.out).at(0);
  ws.WriteConfig(CallingConfig(ws / "gate.sock", card));
  const std::string before = Stage(ws, card);
  SocketServer server(ws, {}, /*under_filter=*/true);
  CHECK(server.Get("/healthz").status == 200);  // this test (no filter) is served

  auto cli = ws.Gate({"move", ws.card(), "ready", "--json"});
  INFO("cli: " << cli.out << cli.err << "\nserver log:\n" << server.serve->Log());
  CHECK(cli.exit_code == 0);
  CHECK(cli.out.find("the gate answered: HTTP/1.1 403") != std::string::npos);
  CHECK(Stage(ws, card) == before);
  CHECK(!server.serve->WaitLog("runs below the checker reaper").empty());
}

// The open defect of 2026-12-02: a checker with `network: true` reached the loopback TCP
// listener, read the token file (reads are not confined) and committed a sibling's edge. The
// server now looks the TCP peer's socket up (sock_diag) and examines the processes that hold
// it, as it does a Unix peer (host/server/peer.h RefuseTcpPeer).
TEST_CASE(
    "serve on loopback TCP refuses a checker that holds the token, from the server or the CLI") {
  Workspace ws("plugins: []\n");
  ws.CardInDesigning();
  auto sibling = ws.Gate({"card", "create", "--title", "Sibling"});
  REQUIRE(sibling.exit_code == 0);
  const std::string card = e2e::Lines(sibling.out).at(0);
  test::Spit(ws / "token", "s3cret-token\n");
  const std::string port_file = ws / "port";
  ws.WriteConfig("providers:\n  checker:\n    command: ['" + Fixture("checkers/call_gate.py") +
                 "', 'tcp:" + port_file + "', '" + card + "', 'designing', '" + (ws / "token") +
                 "']\n    network: true\n"
                 "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n"
                 "        'designing->ready':\n          provider: checker\n"
                 "          inputs: [prd, design]\n          prompt: Check the design.\n"
                 "      checkTimeoutMs: 20000\n");
  const std::string before = Stage(ws, card);
  REQUIRE(before != "designing");
  Serve serve(ws.path(), {"--root", ws.root(), "serve", "--listen", "127.0.0.1:0", "--token-file",
                          ws / "token"});
  std::string listening = serve.WaitLog("\"msg\":\"listening\"");
  REQUIRE(!listening.empty());
  const std::string port = std::to_string(nlohmann::json::parse(listening)["port"].get<int>());
  test::Spit(port_file, port + "\n");
  const std::vector<std::string> bearer = {"Authorization: Bearer s3cret-token"};

  // Through the server: the checker of a /v1/moves the server runs.
  auto moved =
      Request(port, "POST", "/v1/moves", "{\"id\":\"" + ws.card() + "\",\"to\":\"ready\"}", bearer);
  INFO("answer: " << moved.body << "\nserver log:\n" << serve.Log());
  CHECK(moved.status == 200);
  CHECK(moved.body.find("the gate answered: HTTP/1.1 403") != std::string::npos);
  CHECK(Stage(ws, card) == before);
  CHECK(!serve.WaitLog("runs below the checker reaper").empty());

  // Through the CLI: its checker reaches the same listener and is refused the same way.
  REQUIRE(ws.Gate({"move", ws.card(), "developing"}).exit_code == 0);
  REQUIRE(ws.Gate({"move", ws.card(), "designing", "--reason", "again"}).exit_code == 0);
  auto cli = ws.Gate({"move", ws.card(), "ready", "--json"});
  INFO("cli: " << cli.out << cli.err);
  CHECK(cli.exit_code == 0);
  CHECK(cli.out.find("the gate answered: HTTP/1.1 403") != std::string::npos);
  CHECK(Stage(ws, card) == before);

  // And at the Landlock + seccomp level (no bubblewrap on the CLI's PATH).
  REQUIRE(ws.Gate({"move", ws.card(), "developing"}).exit_code == 0);
  REQUIRE(ws.Gate({"move", ws.card(), "designing", "--reason", "third"}).exit_code == 0);
  e2e::PathWithoutBwrap no_bwrap;
  auto landlock = ws.Gate({"move", ws.card(), "ready", "--json"}, {{"PATH", no_bwrap.path()}});
  INFO("landlock: " << landlock.out << landlock.err);
  CHECK(landlock.exit_code == 0);
  CHECK(landlock.out.find("the gate answered: HTTP/1.1 403") != std::string::npos);
  {
    auto rows = e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
    REQUIRE(!rows.empty());
    const std::string level = nlohmann::json::parse(rows.back())["sandbox"].dump();
    CHECK(level.find("landlock-abi") != std::string::npos);
  }
  CHECK(Stage(ws, card) == before);

  auto metrics = Request(port, "GET", "/metrics", "", bearer);
  CHECK(metrics.body.find("devflow_gate_connections_refused_total{reason=\"peer-confined\"} 3") !=
        std::string::npos);

  // The control: this test, unconfined and holding the token, is served.
  auto direct =
      Request(port, "POST", "/v1/moves", "{\"id\":\"" + card + "\",\"to\":\"designing\"}", bearer);
  CHECK(direct.status == 200);
  CHECK(Stage(ws, card) == "designing");
}

TEST_CASE("ReaperAncestor finds no reaper above this test, and reads this process's parent") {
  CHECK_FALSE(server::ReaperAncestor(::getpid()));
}

}  // namespace
}  // namespace devflow::server_test

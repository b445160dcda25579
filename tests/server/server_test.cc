// The admission server through its real binary: endpoints, the same bytes on disk as
// `devflow-gate move`, bad input, bounded work, deadlines, reload and drain (docs/server.md).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "checker/checker_support.h"
#include "reports/verdict_cache.h"
#include "server/serve_fixture.h"

namespace devflow::server_test {
namespace {

using e2e::Fixture;
using e2e::Workspace;
using nlohmann::json;

// The agent gate on designing->ready with one provider running `script` (sandbox off, so a
// fixture may talk to the test through FIFOs).
std::string Config(const std::string& script, int timeout_ms = 20000,
                   const std::string& args = "") {
  std::string y = "providers:\n  checker:\n    command: ['" + script + "'" +
                  (args.empty() ? "" : ", '" + args + "'") + "]\n    sandbox: off\n";
  y += "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n";
  y += "        'designing->ready':\n          provider: checker\n";
  y += "          inputs: [prd, design]\n          prompt: Check the design.\n";
  y += "      checkTimeoutMs: " + std::to_string(timeout_ms) + "\n";
  y += "      verdictCacheDir: .devflow-agent-gate-cache\n";
  return y;
}

// Until `stop`, gives a "go" line to whoever holds the FIFO `go` of server/gated_allow.sh open
// and, with `drain_started`, takes the "started" line of any checker that says it: one writer's
// line can meet two readers of one FIFO (one reads it, the other the EOF), so checkers sharing
// the FIFOs each get theirs this way, and none waits for ever.
std::thread FeedGo(const test::TempDir& fifos, const std::atomic<bool>& stop, bool drain_started) {
  return std::thread([&fifos, &stop, drain_started] {
    while (!stop.load()) {
      if (drain_started) {
        char sink[64];
        int started = ::open((fifos / "started").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (started >= 0) {
          (void)!::read(started, sink, sizeof sink);
          ::close(started);
        }
      }
      int go = ::open((fifos / "go").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (go >= 0) {
        (void)!::write(go, "go\n", 3);
        ::close(go);
      }
      std::this_thread::yield();
    }
  });
}

std::string AttemptBody(const Workspace& ws, int64_t revision = 4, const std::string& extra = "") {
  json a = {{"id", ws.card()},
            {"from", "designing"},
            {"to", "ready"},
            {"expectedRevision", revision},
            {"by", {{"kind", "human"}}},
            {"root", ws.root()},
            {"at", "2026-09-16T08:00:00.000Z"}};
  std::string body = a.dump();
  if (!extra.empty()) body.insert(body.size() - 1, "," + extra);
  return body;
}

TEST_CASE("serve: healthz, readyz and metrics answer, the unix socket is created mode 0600") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  SocketServer server(ws);
  struct stat st {};
  REQUIRE(::stat(server.socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  HttpAnswer health = server.Get("/healthz");
  CHECK(health.status == 200);
  CHECK(health.json()["ok"] == true);
  HttpAnswer ready = server.Get("/readyz");
  INFO(ready.body);
  CHECK(ready.status == 200);
  CHECK(ready.json()["ready"] == true);
  CHECK(ready.json()["generation"] == 1);
  HttpAnswer metrics = server.Get("/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.Header("Content-Type").find("text/plain") == 0);
  CHECK(metrics.body.find("devflow_gate_ledger_rows_not_written_total 0\n") != std::string::npos);
  CHECK(metrics.body.find("devflow_gate_config_generation 1\n") != std::string::npos);
  CHECK(server.Get("/nope").status == 404);
  CHECK(server.Post("/healthz", "{}").status == 405);
}

TEST_CASE(
    "serve: /v1/moves writes the same bytes as devflow-gate move (allow, veto, fail closed)") {
  struct Case {
    const char* name;
    std::string script;
    const char* code;
  };
  for (const Case& c : {Case{"allow", Fixture("checkers/allow.sh"), "committed"},
                        Case{"veto", Fixture("e2e/veto.sh"), "vetoed"},
                        Case{"fault", Fixture("checkers/fail.sh"), "vetoed"}}) {
    CAPTURE(c.name);
    Workspace ws(Config(c.script));
    ws.CardInDesigning();
    const auto before = test::Snapshot(ws.root());

    auto cli = ws.Gate({"move", ws.card(), "ready", "--json"});
    INFO("cli: " << cli.out << cli.err);
    const json cli_json = json::parse(cli.out);
    const auto cli_disk = Disk(ws);

    Restore(ws, before);
    const std::string ledger_path = ws.root() + "/ledger/decisions.jsonl";
    const size_t rows_before = e2e::Lines(test::Slurp(ledger_path).value_or("")).size();
    SocketServer server(ws);
    HttpAnswer http = server.Post("/v1/moves", json{{"id", ws.card()}, {"to", "ready"}}.dump());
    INFO("http: " << http.body << "\nlog:\n" << server.serve->Log());
    REQUIRE(http.status == 200);
    json http_json = http.json();
    // The answer's id is the one every ledger row of this attempt carries (its commit intents
    // and its outcome row).
    const auto rows = e2e::Lines(test::Slurp(ledger_path).value_or(""));
    REQUIRE(rows.size() > rows_before);
    for (size_t i = rows_before; i < rows.size(); ++i) {
      CHECK(json::parse(rows[i])["decision"] == http_json["decisionId"]);
    }
    http_json.erase("decisionId");
    CHECK(http_json["code"] == c.code);
    CHECK(MaskTimes(http_json.dump()) == MaskTimes(cli_json.dump()));
    const auto http_disk = Disk(ws);
    CheckSameDisk(http_disk, cli_disk);
  }
}

TEST_CASE(
    "serve: /v1/admit decides, commits nothing, and hands back the park when it fails closed") {
  Workspace ws(Config(Fixture("checkers/fail.sh")));
  ws.CardInDesigning();
  SocketServer server(ws);
  const std::string journal = test::Slurp(ws.journal_path()).value();
  const std::string ledger_path = ws.root() + "/ledger/decisions.jsonl";
  const size_t rows_before = e2e::Lines(test::Slurp(ledger_path).value_or("")).size();
  HttpAnswer a = server.Post("/v1/admit", AttemptBody(ws));
  INFO(a.body);
  REQUIRE(a.status == 200);
  json d = a.json();
  CHECK(d["allowed"] == false);
  CHECK(d["reason"].get<std::string>().find("agent check for designing->ready could not run: "
                                            "the checker ended with exit code 7: boom") == 0);
  CHECK(d["park"]["by"] == json{{"kind", "command"}, {"name", "devflow-agent-gate"}});
  CHECK(d["park"]["reason"] ==
        "agent check for designing->ready failed closed: the checker ended with exit code 7: boom");
  CHECK(test::Slurp(ws.journal_path()).value() == journal);  // nothing committed, no park
  auto ledger = e2e::Lines(test::Slurp(ledger_path).value_or(""));
  REQUIRE(ledger.size() == rows_before + 1);
  CHECK(json::parse(ledger.back())["code"] == "vetoed");
  CHECK(json::parse(ledger.back())["outcome"] == "fault");  // the caller parks
  CHECK(d["decisionId"] == json::parse(ledger.back())["decision"]);
}

TEST_CASE("serve: an allowed /v1/admit returns the checks, under dryRun nothing is written") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  ws.CardInDesigning();
  SocketServer server(ws);
  auto before = test::Snapshot(ws.path());
  before.erase("gate.sock");
  HttpAnswer dry = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"));
  INFO(dry.body);
  REQUIRE(dry.status == 200);
  CHECK(dry.json()["allowed"] == true);
  CHECK(dry.json()["checks"] ==
        json::parse(R"([{"by":{"kind":"agent"},"verdict":"allowed","summary":"ok"}])"));
  auto after = test::Snapshot(ws.path());
  after.erase("gate.sock");
  CHECK(after == before);
  HttpAnswer real = server.Post("/v1/admit", AttemptBody(ws));
  CHECK(real.json()["allowed"] == true);
  CHECK(test::Snapshot(ws / ".devflow-agent-gate-cache").size() == 1);
  HttpAnswer cached = server.Post("/v1/admit", AttemptBody(ws));
  CHECK(cached.json()["checks"][0]["summary"] == "[cached] ok");
  CHECK(server.Get("/metrics").body.find("devflow_gate_cache_hits_total 1\n") != std::string::npos);
  HttpAnswer stale = server.Post("/v1/admit", AttemptBody(ws, 3));
  CHECK(stale.json()["allowed"] == false);
  CHECK(stale.json()["reason"].get<std::string>().find("is at revision 4, not the expected 3") !=
        std::string::npos);
  CHECK(!stale.json().contains("park"));
}

TEST_CASE("serve: bad input is refused with the field named (400), oversized bodies with 413") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  ws.CardInDesigning();
  SocketServer server(ws);
  auto field_of = [&](const std::string& body) {
    HttpAnswer a = server.Post("/v1/admit", body);
    INFO(a.body);
    CHECK(a.status == 400);
    return a.json().value("field", std::string("<none>"));
  };
  CHECK(field_of(AttemptBody(ws, 4, "\"colour\":\"red\"")) == "colour");
  CHECK(field_of(R"({"id":1})") == "id");
  json wrong = json::parse(AttemptBody(ws));
  wrong["expectedRevision"] = "4";
  CHECK(field_of(wrong.dump()) == "expectedRevision");
  wrong = json::parse(AttemptBody(ws));
  wrong["by"] = {{"kind", "robot"}};
  CHECK(field_of(wrong.dump()) == "by.kind");
  wrong = json::parse(AttemptBody(ws));
  wrong.erase("at");
  CHECK(field_of(wrong.dump()) == "at");
  CHECK(field_of("{\"id\":") == "<none>");
  CHECK(field_of(R"({"id":"a","id":"b"})") == "id");
  HttpAnswer moves = server.Post("/v1/moves", R"({"id":"0001-x","to":"ready","dryrun":true})");
  CHECK(moves.status == 400);
  CHECK(moves.json()["field"] == "dryrun");

  json other_root = json::parse(AttemptBody(ws));
  other_root["root"] = "/etc";
  HttpAnswer forbidden = server.Post("/v1/admit", other_root.dump());
  CHECK(forbidden.status == 403);
  CHECK(forbidden.json()["field"] == "root");

  // A number no double holds (this session's trial: each took the whole server down).
  std::string huge = AttemptBody(ws);
  const size_t rev_at = huge.find("\"expectedRevision\":4");
  REQUIRE(rev_at != std::string::npos);
  huge.replace(rev_at, std::string("\"expectedRevision\":4").size(), "\"expectedRevision\":1e400");
  CHECK(field_of(huge) == "expectedRevision");
  CHECK(field_of(AttemptBody(ws, 4, "\"deadlineMs\":-1e400")) == "deadlineMs");
  HttpAnswer huge_move =
      server.Post("/v1/moves", R"({"id":"0001-x","to":"ready","expectRevision":1e400})");
  CHECK(huge_move.status == 400);
  CHECK(huge_move.json()["field"] == "expectRevision");

  HttpAnswer big = server.Post("/v1/admit", std::string((1 << 20) + 1, ' '));
  CHECK(big.status == 413);
  CHECK(server.Get("/healthz").status == 200);  // still serving
}

TEST_CASE("serve: a client that sends its request too slowly is dropped") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  SocketServer server(ws, {"--read-timeout-ms", "300"});
  int fd = Connect(server.socket);
  REQUIRE(fd >= 0);
  WriteAll(fd, "POST /v1/admit HTTP/1.1\r\nHost: x\r\n");  // and never the rest
  const auto start = std::chrono::steady_clock::now();
  std::string got = ReadAll(fd);  // returns when the server closes
  ::close(fd);
  CHECK(got.empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  CHECK(!server.serve->WaitLog("slow client dropped").empty());
}

// One answer off a kept-alive connection: the head and Content-Length bytes of body.
std::string ReadOneAnswer(int fd) {
  std::string raw;
  char buf[4096];
  for (;;) {
    const size_t split = raw.find("\r\n\r\n");
    if (split != std::string::npos) {
      const HttpAnswer a = Parse(raw);
      const std::string length = a.Header("Content-Length");
      if (raw.size() >= split + 4 + (length.empty() ? 0 : std::stoul(length))) return raw;
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return raw;
    raw.append(buf, static_cast<size_t>(n));
  }
}

// The connection's deadlines ride on one timer that is not re-armed per request (issue 8):
// armed at most the shorter timeout ahead, and armed again towards the deadline then in force
// when it ends early. So after requests that each moved the deadline past the armed wait, an
// idle connection is still closed at --idle-timeout-ms (silently: nothing was sent), and a
// next request that stalls is still dropped at --read-timeout-ms.
TEST_CASE(
    "serve: deadlines moved by each request still close an idle or slow kept-alive connection") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  SocketServer server(ws, {"--read-timeout-ms", "300", "--idle-timeout-ms", "900"});
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

  int idle = Connect(server.socket);
  REQUIRE(idle >= 0);
  for (int i = 0; i < 3; ++i) {
    WriteAll(idle, get);
    CHECK(Parse(ReadOneAnswer(idle)).status == 200);
  }
  CHECK(ReadAll(idle).empty());  // returns when the server closes the idle connection
  ::close(idle);

  int slow = Connect(server.socket);
  REQUIRE(slow >= 0);
  WriteAll(slow, get);
  CHECK(Parse(ReadOneAnswer(slow)).status == 200);
  WriteAll(slow, "POST /v1/admit HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{\"id\"");
  CHECK(ReadAll(slow).empty());  // the body never completes: dropped
  ::close(slow);
  CHECK(!server.serve->WaitLog("slow client dropped").empty());
  // Only the stalled request was a slow client: the idle close logged nothing.
  const std::string log = server.serve->Log();
  size_t drops = 0;
  for (size_t at = log.find("slow client dropped"); at != std::string::npos;
       at = log.find("slow client dropped", at + 1)) {
    ++drops;
  }
  CHECK(drops == 1);
  CHECK(server.Get("/healthz").status == 200);  // still serving
}

TEST_CASE("serve: a peer uid not on the allow list is refused on the unix socket") {
  if (::getuid() != 0) {
    MESSAGE("needs root to connect as another uid");
    return;
  }
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  // The socket is 0600 root: nobody could not even connect; widen it to test the uid check.
  SocketServer server(ws, {"--socket-mode", "0666"});
  REQUIRE(::chmod(ws.path().c_str(), 0755) == 0);
  struct passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pipefd[0]);
    if (::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) ::_exit(2);
    int fd = Connect(server.socket);
    if (fd < 0) ::_exit(3);
    WriteAll(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    std::string raw = ReadAll(fd);
    if (::write(pipefd[1], raw.data(), raw.size()) != static_cast<ssize_t>(raw.size())) ::_exit(4);
    ::_exit(0);
  }
  ::close(pipefd[1]);
  std::string raw = ReadAll(pipefd[0]);
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  INFO("server log:\n" << server.serve->Log());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  HttpAnswer a = Parse(raw);
  CHECK(a.status == 403);
  CHECK(a.body.find("uid " + std::to_string(nobody->pw_uid) + " is not allowed") !=
        std::string::npos);
  CHECK(server.Get("/healthz").status == 200);  // our own uid still is
}

// docs21 F3: a server running as its own user (the unit's User=devflow) answered every allowed
// caller of another uid 403 "ended before its confinement could be checked": the liveness probe
// (pidfd_send_signal, signal 0) fails with EPERM for another uid's process, which still runs.
TEST_CASE("serve: a server that is not root serves an allowed caller of another uid") {
  if (::getuid() != 0) {
    MESSAGE("needs root to run the server as another uid");
    return;
  }
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  struct passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  REQUIRE(::chmod(ws.path().c_str(), 0755) == 0);
  test::TempDir run;
  REQUIRE(::chown(run.path().c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
  const std::string socket = run / "gate.sock";
  Serve serve(ws.path(),
              {"--root", ws.root(), "serve", "--listen", "unix:" + socket, "--allow-uid", "0"},
              false, {}, std::pair{nobody->pw_uid, nobody->pw_gid});
  INFO("server log:\n" << serve.Log());
  REQUIRE(!serve.WaitLog("\"msg\":\"listening\"").empty());
  HttpAnswer a = Request(socket, "GET", "/healthz");
  CHECK(a.status == 200);
  CHECK(a.body.find("peer-confined") == std::string::npos);
}

TEST_CASE("serve: TCP needs the bearer token when a token file is given (401 without it)") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  test::Spit(ws / "token", "s3cret-token\n");
  Serve serve(ws.path(), {"--root", ws.root(), "serve", "--listen", "127.0.0.1:0", "--token-file",
                          ws / "token"});
  std::string listening = serve.WaitLog("\"msg\":\"listening\"");
  REQUIRE(!listening.empty());
  const std::string port = std::to_string(json::parse(listening)["port"].get<int>());
  CHECK(Request(port, "GET", "/healthz").status == 401);
  CHECK(Request(port, "GET", "/healthz", "", {"Authorization: Bearer s3cret-tokeX"}).status == 401);
  CHECK(Request(port, "GET", "/healthz", "", {"Authorization: Bearer s3cret-token"}).status == 200);
  // The scheme is case-insensitive (RFC 7235), the token is not.
  CHECK(Request(port, "GET", "/healthz", "", {"Authorization: bearer s3cret-token"}).status == 200);
  CHECK(Request(port, "GET", "/healthz", "", {"Authorization: BEARER  s3cret-token"}).status ==
        200);
  CHECK(Request(port, "GET", "/healthz", "", {"Authorization: Bearer S3CRET-TOKEN"}).status == 401);
  CHECK(Request(port, "GET", "/healthz", "", {"Authorization: Bearers3cret-token"}).status == 401);
  // Two Authorization headers: refused, whichever holds the token (it took the first).
  for (const auto& pair :
       {std::vector<std::string>{"Authorization: Bearer s3cret-token", "Authorization: Bearer x"},
        std::vector<std::string>{"Authorization: Bearer x",
                                 "Authorization: Bearer s3cret-token"}}) {
    HttpAnswer twice = Request(port, "GET", "/healthz", "", pair);
    INFO(twice.body);
    CHECK(twice.status == 400);
    CHECK(twice.json()["field"] == "Authorization");
  }
}

// trial20: a second X-Devflow-Deadline-Ms was ignored (the first won), whatever it said.
TEST_CASE("serve: a repeated X-Devflow-Deadline-Ms header is refused 400") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  ws.CardInDesigning();
  SocketServer server(ws);
  HttpAnswer twice = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"),
                                 {"X-Devflow-Deadline-Ms: 60000", "X-Devflow-Deadline-Ms: 60000"});
  INFO(twice.body);
  CHECK(twice.status == 400);
  CHECK(twice.json()["field"] == "X-Devflow-Deadline-Ms");
  CHECK(twice.json()["error"].get<std::string>().find("was sent more than once") !=
        std::string::npos);
  HttpAnswer once = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"),
                                {"X-Devflow-Deadline-Ms: 60000"});
  CHECK(once.json()["allowed"] == true);
}

// trial20 4d: a token file with a blank first line, two lines or a leading space started a
// server that answered 401 to every client (each sends the first line's token).
TEST_CASE("serve: a token file that is not one token alone on its line is refused at start") {
  test::TempDir ws;
  for (const std::string text :
       {"\ns3cret\n", "s3cret\nsecond\n", " s3cret\n", "s3\tcret\n", "s3cr\xc3\xa9t\n"}) {
    test::Spit(ws / "token", text);
    auto r = test::RunGate({"--root", "/tmp/x/.devflow", "serve", "--listen", "127.0.0.1:0",
                            "--token-file", ws / "token"});
    INFO(text);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("does not hold one token alone on its first line") != std::string::npos);
  }
}

// trial20: a start refused after its socket was bound (`--socket-group` naming no group)
// left the socket file behind.
TEST_CASE("serve: a start refused after binding its unix socket removes the socket file") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  const std::string sock = ws / "gate.sock";
  auto r = test::RunGate({"--root", ws.root(), "serve", "--listen", "unix:" + sock,
                          "--socket-group", "devflow-no-such-group"},
                         ws.path());
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot give " + sock + " to group devflow-no-such-group") != std::string::npos);
  struct stat st {};
  CHECK(::lstat(sock.c_str(), &st) != 0);
  // A second --listen that cannot be bound: the first one's socket is removed too.
  auto r2 = test::RunGate({"--root", ws.root(), "serve", "--listen", "unix:" + sock, "--listen",
                           "unix:" + ws / "no-such-dir/gate.sock"},
                          ws.path());
  INFO(r2.err);
  CHECK(r2.exit_code == 2);
  CHECK(r2.err.find("cannot listen on unix:") != std::string::npos);
  CHECK(::lstat(sock.c_str(), &st) != 0);
}

TEST_CASE("serve: a non-loopback TCP address is refused without --allow-remote") {
  auto r = test::RunGate({"--root", "/tmp/x/.devflow", "serve", "--listen", "0.0.0.0:0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not a loopback address") != std::string::npos);
  auto r2 = test::RunGate(
      {"--root", "/tmp/x/.devflow", "serve", "--listen", "127.0.0.1:0", "--allow-remote"});
  CHECK(r2.exit_code == 2);
  CHECK(r2.err.find("--allow-remote needs --token-file") != std::string::npos);
}

// trial20b 2-2: one workspace served under two spellings got two per-card queues, so two
// attempts on one card ran at once (the store's revision check held, the serialisation did not).
TEST_CASE("serve: one root under two spellings is refused at start") {
  test::TempDir ws;
  REQUIRE(std::filesystem::create_directories(ws / ".devflow"));
  std::filesystem::create_directory_symlink(ws.path(), ws / "alias");
  auto r = test::RunGate({"--root", ws / ".devflow", "--root", ws / "alias/.devflow", "serve",
                          "--listen", "127.0.0.1:0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("are the same directory; serve it under one path") != std::string::npos);
}

TEST_CASE(
    "serve: attempts beyond --max-checks and --max-queue get 503 with Retry-After, one card runs "
    "one at a time") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  SocketServer server(ws, {"--max-checks", "1", "--max-queue", "1"});
  std::thread first([&] {
    HttpAnswer a = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"));
    CHECK(a.json()["allowed"] == true);
  });
  // The first attempt's checker is running once it says so.
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  std::thread second([&] {
    HttpAnswer a = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"));
    CHECK(a.status == 200);
  });
  // The second waits (queued behind the card and the worker); a third finds the queue full.
  for (int i = 0; i < 1000; ++i) {
    if (server.Get("/metrics").body.find("devflow_gate_attempts_queued 1\n") != std::string::npos)
      break;
    std::this_thread::yield();
  }
  HttpAnswer third = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"));
  CHECK(third.status == 503);
  CHECK(third.Header("Retry-After") == "1");
  test::Spit(fifos / "go", "go\n");
  first.join();
  // The queued attempt dispatches its own checker now.
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  test::Spit(fifos / "go", "go\n");
  second.join();
}

// trial14 S1: attempts queued behind a busy card that end without a suspension (here revision
// mismatches) ran inline from the pump and pumped again from inside it: the inner pump erased
// the queue element the outer loop pointed at, and the server died of heap corruption with every
// caller unanswered. A crash here is likely, not certain, without the fix (ASan: always).
TEST_CASE("serve: attempts queued on a busy card that end at once are all answered") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  SocketServer server(ws, {"--max-checks", "4", "--max-queue", "64"});
  HttpAnswer first;
  std::thread gated(
      [&] { first = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true")); });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  constexpr int kStale = 12;
  std::vector<HttpAnswer> stale(kStale);
  std::vector<std::thread> callers;
  for (int i = 0; i < kStale; ++i) {
    callers.emplace_back([&, i] { stale[i] = server.Post("/v1/admit", AttemptBody(ws, 3)); });
  }
  // Every stale attempt waits behind the card before the gated one ends.
  for (int i = 0; i < 100000; ++i) {
    if (server.Get("/metrics")
            .body.find("devflow_gate_attempts_queued " + std::to_string(kStale) + "\n") !=
        std::string::npos) {
      break;
    }
    std::this_thread::yield();
  }
  REQUIRE(server.Get("/metrics")
              .body.find("devflow_gate_attempts_queued " + std::to_string(kStale) + "\n") !=
          std::string::npos);
  test::Spit(fifos / "go", "go\n");
  gated.join();
  for (auto& t : callers) t.join();
  CHECK(first.json()["allowed"] == true);
  for (const HttpAnswer& a : stale) {
    REQUIRE(a.status == 200);
    CHECK(a.json()["allowed"] == false);
    CHECK(a.json()["reason"].get<std::string>().find("not the expected 3") != std::string::npos);
  }
  CHECK(server.Get("/healthz").status == 200);
  CHECK(server.Get("/metrics").body.find("devflow_gate_attempts_queued 0\n") != std::string::npos);
}

// The soft limit of open files of process `pid`, from /proc/<pid>/limits.
uint64_t SoftOpenFiles(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) == 0) return std::stoull(line.substr(26));
  }
  return 0;
}

// issue 8: the defaults (--max-connections 4096) meet a burst of 1,000 callers only with the
// descriptors for them; systemd and most shells start a process at a soft limit of 1024, where
// accept would fail with EMFILE first.
TEST_CASE("serve: started at a soft open-file limit of 1024, the server raises it to its need") {
  Workspace ws("plugins: []\n");
  struct rlimit own {};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &own) == 0);
  struct rlimit low = own;
  low.rlim_cur = std::min<rlim_t>(1024, own.rlim_cur);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  std::unique_ptr<SocketServer> server;
  try {
    server = std::make_unique<SocketServer>(ws);  // forked at the low limit
  } catch (...) {
    ::setrlimit(RLIMIT_NOFILE, &own);
    throw;
  }
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &own) == 0);
  INFO("server log:\n" << server->serve->Log());
  const uint64_t need = 2 * 4096 + 256 + 16 * 8 + 64;  // docs/server.md "Running it"
  const uint64_t soft = SoftOpenFiles(server->serve->pid());
  if (own.rlim_max == RLIM_INFINITY || own.rlim_max >= need) {
    CHECK(soft == need);
    CHECK(server->serve->Log().find("the open-file limit is") == std::string::npos);
  } else {  // the hard limit caps it, and the start says so
    CHECK(soft == own.rlim_max);
    CHECK(server->serve->Log().find("the open-file limit is") != std::string::npos);
  }
  CHECK(server->Get("/healthz").status == 200);
}

// The server's threads, from /proc (a test's view of the process, not the server's mechanism).
int ThreadsOf(int pid) {
  int n = 0;
  for ([[maybe_unused]] auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    ++n;
  }
  return n;
}

TEST_CASE(
    "serve: two checks in flight at once run on the server's one thread, a cache hit answers "
    "meanwhile") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  // A second card: the same directory under another id.
  const std::string second = "0099-" + ws.card().substr(ws.card().find('-') + 1);
  std::filesystem::copy(ws.root() + "/tasks/" + ws.card(), ws.root() + "/tasks/" + second,
                        std::filesystem::copy_options::recursive);
  SocketServer server(ws, {"--max-checks", "4"});
  auto body_for = [&](const std::string& id) {
    json b = json::parse(AttemptBody(ws, 4, "\"dryRun\":true"));
    b["id"] = id;
    return b.dump();
  };
  HttpAnswer a1, a2;
  std::thread t1([&] { a1 = server.Post("/v1/admit", body_for(ws.card())); });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  std::thread t2([&] { a2 = server.Post("/v1/admit", body_for(second)); });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  // Both checkers run now (each waits for "go"), and the server still answers, with one thread.
  CHECK(ThreadsOf(server.serve->pid()) == 1);
  CHECK(server.Get("/metrics").body.find("devflow_gate_checks_in_flight 2\n") != std::string::npos);
  CHECK(server.Get("/healthz").status == 200);
  // Both checkers wait on the one FIFO "go": one writer's "go\n" can meet both readers (one
  // reads the line, the other the EOF), so a second blocking write could wait forever. Feed a
  // line to whoever has it open until both answers are in.
  std::atomic<bool> answered{false};
  std::thread feeder = FeedGo(fifos, answered, false);
  t1.join();
  t2.join();
  answered = true;
  feeder.join();
  CHECK(a1.json()["allowed"] == true);
  CHECK(a2.json()["allowed"] == true);
  CHECK(a1.json()["checks"][0]["summary"] == "gated ok");
  CHECK(ThreadsOf(server.serve->pid()) == 1);
}

// The caller's own short budget is not a deployment fault (trial15 R3): the check is not
// started and the move is vetoed, naming the caller's deadline and how to raise it, with no park
// (it parked the card blocked before, and blamed the deployment).
TEST_CASE(
    "serve: a check that does not fit in the caller's deadline is not started, vetoed, not "
    "parked") {
  Workspace ws(Config(Fixture("checkers/allow.sh"), 20000));
  ws.CardInDesigning();
  SocketServer server(ws);
  auto says_deadline = [](const std::string& reason) {
    INFO(reason);
    CHECK(reason.find("agent check for designing->ready was not started: the caller's deadline "
                      "leaves ") != std::string::npos);
    CHECK(reason.find("less than checkTimeoutMs (20000ms); the check was not started, nothing "
                      "was committed and the card is not parked; give the move more time "
                      "(`move --timeout MS`, the request's deadlineMs or X-Devflow-Deadline-Ms, "
                      "devflow-gate-cordis's timeoutMs)") != std::string::npos);
    CHECK(reason.find("parked blocked") == std::string::npos);
  };
  auto last_row = [&] {
    auto rows = e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
    REQUIRE(!rows.empty());
    return json::parse(rows.back());
  };
  auto stage = [&] {
    return json::parse(ws.Gate({"card", "show", ws.card(), "--json"}).out)["stage"];
  };

  HttpAnswer a = server.Post("/v1/admit", AttemptBody(ws), {"X-Devflow-Deadline-Ms: 5000"});
  INFO(a.body);
  json d = a.json();
  CHECK(d["allowed"] == false);
  says_deadline(d["reason"]);
  CHECK(!d.contains("park"));
  json row = last_row();
  CHECK(row["code"] == "vetoed");
  CHECK(row["outcome"] == "vetoed");
  CHECK(row["decision"] == d["decisionId"]);
  says_deadline(row["message"]);

  HttpAnswer moved =
      server.Post("/v1/moves", R"({"id":")" + ws.card() + R"(","to":"ready","deadlineMs":5000})");
  INFO(moved.body);
  CHECK(moved.json()["code"] == "vetoed");
  CHECK(moved.json()["parked"] == false);
  says_deadline(moved.json()["message"]);
  CHECK(stage() == "designing");

  HttpAnswer body_deadline =
      server.Post("/v1/admit", AttemptBody(ws, 4, "\"deadlineMs\":60000,\"dryRun\":true"));
  CHECK(body_deadline.json()["allowed"] == true);
  CHECK(server.Get("/metrics")
            .body.find("devflow_gate_checker_runs_total{provider=\"checker\","
                       "outcome=\"not-started\"} 2") != std::string::npos);
  CHECK(server.Get("/metrics").body.find("devflow_gate_parks_total 0") != std::string::npos);

  // The CLI's move has the same budget: exit 1 (vetoed), not 3, and the card stays.
  auto cli = ws.Gate({"move", ws.card(), "ready", "--timeout", "100"});
  INFO(cli.out << cli.err);
  CHECK(cli.exit_code == 1);
  says_deadline(cli.err + cli.out);
  CHECK(stage() == "designing");
  row = last_row();
  CHECK(row["code"] == "vetoed");
  says_deadline(row["message"]);
}

TEST_CASE(
    "serve: reload keeps the last good config on error, attempts in flight finish on the old one") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  SocketServer server(ws);
  std::thread in_flight([&] {
    HttpAnswer a = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"));
    INFO(a.body);
    CHECK(a.json()["allowed"] == true);  // the old config's checker allowed it
  });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");

  ws.WriteConfig("plugins: [ {id: no-such-gate} ]\n");
  HttpAnswer bad = server.Post("/v1/reload", "");
  CHECK(bad.status == 422);
  CHECK(bad.json()["error"].get<std::string>().find("unknown plugin id") != std::string::npos);
  HttpAnswer ready = server.Get("/readyz");
  CHECK(ready.json()["generation"] == 1);
  CHECK(ready.json()["lastReloadError"].get<std::string>().find("unknown plugin id") !=
        std::string::npos);
  CHECK(server.Get("/metrics").body.find("devflow_gate_config_last_reload_ok 0\n") !=
        std::string::npos);

  ws.WriteConfig(Config(Fixture("e2e/veto.sh")));
  const size_t mark = server.serve->LogSize();
  server.serve->Signal(SIGHUP);
  CHECK(!server.serve->WaitLog("config reloaded (SIGHUP)", mark).empty());
  CHECK(server.Get("/readyz").json()["generation"] == 2);

  // The attempt in flight finishes under generation 1 (its checker allows); the next one on
  // the card (queued behind it by the per-card chain) runs under generation 2, which vetoes.
  test::Spit(fifos / "go", "go\n");
  in_flight.join();
  HttpAnswer after = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"));
  CHECK(after.json()["allowed"] == false);
}

// trial20 1e: a reload to a config `config check` calls not usable (an edge naming a provider
// that is not defined) was taken: /readyz said ready and every move on the edge parked.
TEST_CASE(
    "serve: a reload to a config that config check calls not usable keeps the last good one") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  ws.CardInDesigning();
  SocketServer server(ws);
  std::string typo = Config(Fixture("checkers/allow.sh"));
  const size_t at = typo.find("provider: checker");
  REQUIRE(at != std::string::npos);
  typo.replace(at, 17, "provider: nosuch");
  ws.WriteConfig(typo);
  auto check = ws.Gate({"config", "check"});
  CHECK(check.exit_code == 2);
  HttpAnswer reload = server.Post("/v1/reload", "");
  INFO(reload.body);
  CHECK(reload.status == 422);
  CHECK(reload.json()["error"].get<std::string>().find(
            "provider \"nosuch\" is not defined under providers") != std::string::npos);
  CHECK(server.Get("/readyz").json()["generation"] == 1);
  HttpAnswer a = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true"));
  CHECK(a.json()["allowed"] == true);  // the last good config's checker
}

// trial20 1h: an attempt that arrived before a reload but had not started (queued behind its
// card's attempt in flight) was decided by the retired config's checkers and admitted.
TEST_CASE("serve: an attempt queued when the config is reloaded is decided under the new one") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  SocketServer server(ws);
  HttpAnswer first, queued;
  std::thread in_flight(
      [&] { first = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true")); });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  std::thread waiting(
      [&] { queued = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true")); });
  // The second attempt waits behind the card's first (the per-card chain).
  while (server.Get("/metrics").body.find("devflow_gate_attempts_queued 1\n") ==
         std::string::npos) {
    std::this_thread::yield();
  }
  ws.WriteConfig(Config(Fixture("e2e/veto.sh")));
  const size_t mark = server.serve->LogSize();
  server.serve->Signal(SIGHUP);
  REQUIRE(!server.serve->WaitLog("config reloaded (SIGHUP)", mark).empty());
  // Whoever runs the gated checker now (the first attempt; the queued one too if it ran under
  // the retired config) gets its "go"; none is left waiting.
  std::atomic<bool> answered{false};
  std::thread feeder = FeedGo(fifos, answered, true);
  in_flight.join();
  waiting.join();
  answered = true;
  feeder.join();
  CHECK(first.json()["allowed"] == true);  // in flight: the old config's checker
  INFO(queued.body);
  CHECK(queued.json()["allowed"] == false);  // queued: the new config's checker vetoes
  CHECK(queued.json()["reason"].get<std::string>().find("design cites REQ-9") != std::string::npos);
}

// trial20 2e: an attempt whose caller's deadline passed while it was queued was still decided
// and committed seconds later (a cache hit admits without any check to refuse). trial20b 1b-3:
// it was vetoed only when it left the queue, so a caller that waits up to its deadline
// (devflow-gate-cordis) timed out first and parked the card; and its ledger row said
// `"edge":"?->ready","revision":null`.
TEST_CASE(
    "serve: an attempt queued past its deadline is vetoed at the deadline, while the card's "
    "check still runs") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  SocketServer server(ws);
  auto rows_now = [&] {
    return e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
  };
  const size_t rows_before = rows_now().size();
  HttpAnswer first, late_move, late_admit;
  std::atomic<bool> first_answered{false};
  std::atomic<int> late_answered{0};
  std::thread in_flight([&] {
    first = server.Post("/v1/admit", AttemptBody(ws));
    first_answered = true;
  });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  std::thread waiting_move([&] {
    late_move =
        server.Post("/v1/moves", R"({"id":")" + ws.card() + R"(","to":"ready","deadlineMs":200})");
    ++late_answered;
  });
  std::thread waiting_admit([&] {
    late_admit = server.Post("/v1/admit", AttemptBody(ws), {"X-Devflow-Deadline-Ms: 300"});
    ++late_answered;
  });
  // Both are answered at their deadlines while the card's first check is still held (its
  // checker waits for "go"); the bound only keeps a failing run from hanging.
  const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (late_answered.load() < 2 && std::chrono::steady_clock::now() < bound) {
    std::this_thread::yield();
  }
  CHECK(late_answered.load() == 2);
  CHECK(!first_answered.load());
  CHECK(server.Get("/metrics").body.find("devflow_gate_attempts_queued 0\n") != std::string::npos);
  test::Spit(fifos / "go", "go\n");
  in_flight.join();
  waiting_move.join();
  waiting_admit.join();
  CHECK(first.json()["allowed"] == true);
  INFO(late_move.body);
  INFO(late_admit.body);
  json moved = late_move.json();
  CHECK(moved["code"] == "vetoed");
  CHECK(moved["parked"] == false);
  CHECK(moved["message"].get<std::string>().find(
            "the caller's deadline passed while the attempt waited in the server's queue") == 0);
  json admitted = late_admit.json();
  CHECK(admitted["allowed"] == false);
  CHECK(!admitted.contains("park"));
  CHECK(admitted["reason"].get<std::string>().find(
            "the caller's deadline passed while the attempt waited in the server's queue") == 0);
  CHECK(json::parse(ws.Gate({"card", "show", ws.card(), "--json"}).out)["stage"] == "designing");
  // The rows: the first attempt's, and each late one's with its edge and revision.
  auto rows = rows_now();
  REQUIRE(rows.size() == rows_before + 3);
  int vetoed = 0;
  for (size_t i = rows_before; i < rows.size(); ++i) {
    json row = json::parse(rows[i]);
    INFO(rows[i]);
    CHECK(row["edge"] == "designing->ready");
    CHECK(row["revision"] == 4);
    if (row["decision"] == moved["decisionId"] || row["decision"] == admitted["decisionId"]) {
      CHECK(row["code"] == "vetoed");
      CHECK(row["parked"] == false);
      ++vetoed;
    }
  }
  CHECK(vetoed == 2);
  // No checker ran for the late ones: the first attempt's is the only run.
  const std::string metrics = server.Get("/metrics").body;
  INFO(metrics);
  CHECK(metrics.find("devflow_gate_checker_runs_total{provider=\"checker\",outcome=\"ok\"} "
                     "1\n") != std::string::npos);
}

// trial20 1j: the commit lock's retry slept on the server's one I/O thread, so five moves on a
// locked card froze every other request for 10 s.
TEST_CASE("serve: a move waiting for a held commit.lock does not stop the server answering") {
  // No check: the attempt goes straight from its start to the lock's retries, so without a
  // pause that yields the I/O thread nothing else is served until the move gives up.
  Workspace ws("plugins: []\n");
  ws.CardInDesigning();
  const std::string lock = ws.card_dir() + "/commit.lock";
  test::Spit(lock, std::to_string(test::LivePid()) + "\n");
  SocketServer server(ws);
  std::atomic<bool> answered{false};
  HttpAnswer moved;
  std::thread mover([&] {
    moved = server.Post("/v1/moves", R"({"id":")" + ws.card() + R"(","to":"ready"})");
    answered = true;
  });
  // The move is in flight, waiting for the lock (for about 2 s)...
  while (!answered.load() &&
         server.Get("/metrics").body.find("devflow_gate_attempts_in_flight 1\n") ==
             std::string::npos) {
    std::this_thread::yield();
  }
  // ...and the server answers meanwhile.
  CHECK(server.Get("/healthz").status == 200);
  CHECK_FALSE(answered.load());
  mover.join();
  INFO(moved.body);
  CHECK(moved.json()["code"] == "write-contended");
  CHECK(test::Slurp(lock).value_or("") == std::to_string(test::LivePid()) + "\n");
}

// trial20: a move whose deadline ran out while it waited for commit.lock still committed when
// the lock came free (here: removed once the deadline is behind the move).
TEST_CASE("serve: a move whose deadline passes while it waits for commit.lock does not commit") {
  Workspace ws("plugins: []\n");
  ws.CardInDesigning();
  const std::string lock = ws.card_dir() + "/commit.lock";
  test::Spit(lock, std::to_string(test::LivePid()) + "\n");
  SocketServer server(ws);
  std::atomic<bool> answered{false};
  HttpAnswer moved;
  const auto sent = std::chrono::steady_clock::now();
  std::thread mover([&] {
    moved =
        server.Post("/v1/moves", R"({"id":")" + ws.card() + R"(","to":"ready","deadlineMs":300})");
    answered = true;
  });
  // The lock comes free only once the move's deadline is behind it (or the move answered).
  while (!answered.load() &&
         std::chrono::steady_clock::now() - sent < std::chrono::milliseconds(400)) {
    std::this_thread::yield();
  }
  std::filesystem::remove(lock);
  mover.join();
  INFO(moved.body);
  CHECK(moved.json()["code"] == "write-contended");
  CHECK(moved.json()["message"].get<std::string>().find(
            "the caller's deadline passed while waiting for the commit lock") != std::string::npos);
  CHECK(json::parse(ws.Gate({"card", "show", ws.card(), "--json"}).out)["stage"] == "designing");
  // The CLI's `move --timeout` waits the same way.
  test::Spit(lock, std::to_string(test::LivePid()) + "\n");
  auto cli = ws.Gate({"move", ws.card(), "ready", "--timeout", "100"});
  INFO(cli.out << cli.err);
  CHECK(cli.exit_code == 4);
  CHECK(
      (cli.out + cli.err).find("the caller's deadline passed while waiting for the commit lock") !=
      std::string::npos);
  std::filesystem::remove(lock);
  CHECK(ws.Gate({"move", ws.card(), "ready"}).exit_code == 0);
}

TEST_CASE("serve: SIGTERM lets an attempt in flight finish and answer, then exits 0") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  SocketServer server(ws, {"--drain-timeout-ms", "20000"});
  HttpAnswer answer;
  std::thread in_flight(
      [&] { answer = server.Post("/v1/admit", AttemptBody(ws, 4, "\"dryRun\":true")); });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  const size_t mark = server.serve->LogSize();
  server.serve->Signal(SIGTERM);
  CHECK(!server.serve->WaitLog("\"msg\":\"draining\"", mark).empty());
  CHECK(Connect(server.socket) < 0);  // no longer accepting
  test::Spit(fifos / "go", "go\n");
  in_flight.join();
  INFO(answer.body);
  CHECK(answer.status == 200);
  CHECK(answer.json()["allowed"] == true);
  CHECK(server.serve->Stop(0) == 0);
}

// The answer and the ledger row of an attempt that a drain timeout interrupted: a 503 naming
// the drain, and one `interrupted` row with the attempt's edge, revision and decision id.
void CheckInterrupted(const Workspace& ws, const HttpAnswer& answer, const std::string& at) {
  INFO(answer.head << "\n" << answer.body);
  CHECK(answer.status == 503);
  CHECK(answer.Header("Retry-After") == "1");
  CHECK(answer.json()["error"] ==
        "the server was stopped (SIGTERM) and its drain timeout of 100ms ended before this "
        "attempt was decided: nothing was decided or committed; retry on the server's successor");
  auto rows = e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
  REQUIRE(rows.size() >= 2);
  json last = json::parse(rows.back());
  INFO(rows.back());
  CHECK(json::parse(rows[rows.size() - 2])["edge"] != "designing->ready");  // one row only
  CHECK(last["code"] == "interrupted");
  CHECK(last["outcome"] == "interrupted");
  CHECK(last["card"] == ws.card());
  CHECK(last["ok"] == false);
  CHECK(last["edge"] == "designing->ready");  // was "?->ready"
  CHECK(last["revision"] == 4);               // was null for a move without expectRevision
  CHECK(last["decision"] == answer.json()["decisionId"]);
  if (!at.empty()) CHECK(last["at"] == at);
  CHECK(last["message"].get<std::string>().find("drain timeout of 100ms") != std::string::npos);
}

TEST_CASE(
    "serve: a drain that times out answers the attempt in flight 503 and writes its interrupted "
    "row, edge and revision included") {
  for (const std::string endpoint : {"/v1/admit", "/v1/moves"}) {
    CAPTURE(endpoint);
    test::TempDir fifos;
    REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
    REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
    Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
    ws.CardInDesigning();
    SocketServer server(ws, {"--drain-timeout-ms", "100"});
    HttpAnswer answer;
    // The move names no revision: the row's is the one the executor resolved.
    const std::string body = endpoint == "/v1/admit"
                                 ? AttemptBody(ws)
                                 : json({{"id", ws.card()}, {"to", "ready"}}).dump();
    std::thread in_flight([&] { answer = server.Post(endpoint, body); });
    CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
    CHECK(server.serve->Stop(SIGTERM) == 0);
    in_flight.join();
    CheckInterrupted(ws, answer, endpoint == "/v1/admit" ? "2026-09-16T08:00:00.000Z" : "");
    CHECK(ws.JournalLines().size() == 4);  // nothing committed
  }
}

TEST_CASE(
    "serve: a drain that times out kills the hanging check's whole tree before the server exits") {
  test::TempDir fifos;
  const std::string held = fifos / "held";
  REQUIRE(::mkfifo(held.c_str(), 0600) == 0);
  // The checker leaves a setsid, double-forked sleeper holding `held` open and hangs itself.
  Workspace ws(Config(Fixture("server/hang_tree.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  SocketServer server(ws, {"--drain-timeout-ms", "100"});
  HttpAnswer answer;
  std::thread in_flight([&] { answer = server.Post("/v1/admit", AttemptBody(ws)); });
  // A blocking writer's open returns once a reader holds the FIFO: the sleeper is in place.
  int writer = ::open(held.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(writer >= 0);
  ::close(writer);
  CHECK(server.serve->Stop(SIGTERM) == 0);
  in_flight.join();
  CHECK(answer.status == 503);
  // The server has exited: nothing of the check may hold the FIFO (no reader: ENXIO at once).
  int late = ::open(held.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  const int late_errno = late < 0 ? errno : 0;
  if (late >= 0) ::close(late);
  CHECK(late_errno == ENXIO);
  auto rows = e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value_or(""));
  REQUIRE(!rows.empty());
  json last = json::parse(rows.back());
  CHECK(last["code"] == "interrupted");
  CHECK(last["card"] == ws.card());
  test::KillProcessesOfCard(ws.card(),
                            ws.root());  // whatever escaped (only when the check above fails)
}

TEST_CASE("serve: SIGTERM drains and exits 0, removing its socket") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  SocketServer server(ws);
  CHECK(server.serve->Stop(SIGTERM) == 0);
  CHECK(!std::filesystem::exists(server.socket));
}

TEST_CASE(
    "serve: GET /v1/cards/{id} and /v1/explain answer as card show --json and move --explain "
    "--json") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  ws.CardInDesigning();
  SocketServer server(ws);
  HttpAnswer card = server.Get("/v1/cards/" + ws.card());
  REQUIRE(card.status == 200);
  CHECK(card.json() == ws.ShowJson());
  CHECK(server.Get("/v1/cards/0009-missing").status == 404);
  HttpAnswer ex = server.Get("/v1/explain?id=" + ws.card() + "&to=ready");
  REQUIRE(ex.status == 200);
  auto cli = ws.Gate({"move", ws.card(), "ready", "--explain", "--json"});
  CHECK(ex.json() == json::parse(cli.out));
}

// trial20: a relative ?root= was made absolute against the server's working directory (here
// the workspace, where ".devflow" is the served root): answered 200, while a body's relative
// root is refused.
TEST_CASE("serve: a relative ?root= on /v1/cards and /v1/explain is refused 400") {
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  ws.CardInDesigning();
  SocketServer server(ws);
  for (const std::string& target : {"/v1/cards/" + ws.card() + "?root=.devflow",
                                    "/v1/explain?id=" + ws.card() + "&to=ready&root=.devflow",
                                    "/v1/cards/" + ws.card() + "?root="}) {
    HttpAnswer a = server.Get(target);
    INFO(target << " -> " << a.body);
    CHECK(a.status == 400);
    CHECK(a.json()["field"] == "root");
    CHECK(a.json()["error"] == "query parameter \"root\" must be an absolute path");
  }
  CHECK(server.Get("/v1/cards/" + ws.card() + "?root=" + ws.root()).status == 200);
  CHECK(server.Get("/v1/explain?id=" + ws.card() + "&to=ready&root=" + ws.root()).status == 200);
}

TEST_CASE("serve: GET /v1/cards/{id} answers 409 with the store's code for a card it cannot read") {
  // trial19: a card.md over the read bound was a 500 ("serving the request threw"). The card's
  // files are the workspace's, not the request: the answer names why, as `card show` exits 4.
  Workspace ws(Config(Fixture("checkers/allow.sh")));
  ws.CardInDesigning();
  const std::string md = ws.card_dir() + "/card.md";
  std::string text = test::Slurp(md).value();
  test::Spit(md, "---\ntitle: again\n" + text.substr(4));
  SocketServer server(ws);
  HttpAnswer card = server.Get("/v1/cards/" + ws.card());
  INFO(card.body);
  CHECK(card.status == 409);
  CHECK(card.json()["code"] == "corrupt");
  CHECK(card.json()["error"].get<std::string>().find("has the key \"title\" twice") !=
        std::string::npos);
  CHECK(ws.Gate({"card", "show", ws.card()}).exit_code == 4);
}

// Issue 7 (trial "Inputs changed during the check"): the server's paths re-check the bytes a
// checker judged. The checker says "started" once it has read its prompt and allows on "go";
// the test rewrites the design in place (same inode) in between.
void RewriteDesignInPlace(const Workspace& ws, const std::string& text) {
  const std::string design = ws.card_dir() + "/artifacts/4-design.md";
  struct stat before {};
  REQUIRE(::stat(design.c_str(), &before) == 0);
  {
    std::ofstream out(design, std::ios::binary | std::ios::trunc);
    out << text;
  }
  struct stat after {};
  REQUIRE(::stat(design.c_str(), &after) == 0);
  REQUIRE(after.st_ino == before.st_ino);
}

TEST_CASE(
    "serve: /v1/moves does not commit a design rewritten while the checker judged it, it fails "
    "closed and parks") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  SocketServer server(ws);
  HttpAnswer answer;
  std::thread mover([&] {
    answer = server.Post("/v1/moves", json{{"id", ws.card()}, {"to", "ready"}}.dump());
  });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  RewriteDesignInPlace(ws, "# Design\n\nEVIL: cites REQ-99\n");
  test::Spit(fifos / "go", "go\n");
  mover.join();
  INFO(answer.body << "\nlog:\n" << server.serve->Log());
  REQUIRE(answer.status == 200);
  const json j = answer.json();
  const std::string fault = ws.card_dir() +
                            "/artifacts/4-design.md changed while the checker judged it; move "
                            "again to judge the new bytes";
  CHECK(j["ok"] == false);
  CHECK(j["code"] == "vetoed");
  CHECK(j["parked"] == true);
  CHECK(j["card"]["stage"] == "blocked");
  CHECK(j["message"].get<std::string>().find(fault) != std::string::npos);
  CHECK(j["faultReport"].is_string());
  const auto lines = ws.JournalLines();
  REQUIRE(lines.size() == 5);  // the park, no transition to ready
  CHECK(json::parse(lines[4])["to"] == "blocked");
  CHECK(json::parse(lines[4])["reason"] ==
        "agent check for designing->ready failed closed: " + fault);
  const auto rows = e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value());
  const json row = json::parse(rows.back());
  CHECK(row["outcome"] == "parked");
  CHECK(row["inputsSha256"] == e2e::CardInDesigningJudged());
}

TEST_CASE(
    "serve: /v1/admit does not admit a design rewritten while the checker judged it, it answers "
    "a fail-closed veto with the park") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  const std::string journal = test::Slurp(ws.journal_path()).value();
  SocketServer server(ws);
  HttpAnswer answer;
  std::thread admitter([&] { answer = server.Post("/v1/admit", AttemptBody(ws)); });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  RewriteDesignInPlace(ws, "# Design\n\nEVIL: cites REQ-99\n");
  test::Spit(fifos / "go", "go\n");
  admitter.join();
  INFO(answer.body << "\nlog:\n" << server.serve->Log());
  REQUIRE(answer.status == 200);
  const json j = answer.json();
  const std::string fault = ws.card_dir() +
                            "/artifacts/4-design.md changed while the checker judged it; move "
                            "again to judge the new bytes";
  CHECK(j["allowed"] == false);
  CHECK(j["reason"].get<std::string>().find("could not run: " + fault) != std::string::npos);
  CHECK(j["park"]["reason"] == "agent check for designing->ready failed closed: " + fault);
  CHECK(test::Slurp(ws.journal_path()).value() == journal);  // admit commits nothing
  const auto rows = e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value());
  const json row = json::parse(rows.back());
  CHECK(row["ok"] == false);
  CHECK(row["inputsSha256"] == e2e::CardInDesigningJudged());
}

TEST_CASE(
    "serve: /v1/admit does not admit a card whose body was edited while the checker judged it, "
    "and answers the refusal without a park") {
  test::TempDir fifos;
  REQUIRE(::mkfifo((fifos / "started").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((fifos / "go").c_str(), 0600) == 0);
  Workspace ws(Config(Fixture("server/gated_allow.sh"), 20000, fifos.path()));
  ws.CardInDesigning();
  const std::string card_md = ws.card_dir() + "/card.md";
  const std::string journal = test::Slurp(ws.journal_path()).value();
  SocketServer server(ws);
  HttpAnswer answer;
  std::thread admitter([&] { answer = server.Post("/v1/admit", AttemptBody(ws)); });
  CHECK(test::Slurp(fifos / "started").value_or("") == "started\n");
  test::Spit(card_md, test::Slurp(card_md).value() + "\n- REQ-9: the export must be signed\n");
  test::Spit(fifos / "go", "go\n");
  admitter.join();
  INFO(answer.body << "\nlog:\n" << server.serve->Log());
  REQUIRE(answer.status == 200);
  const json j = answer.json();
  CHECK(j["allowed"] == false);
  CHECK(j["reason"] == card_md +
                           "'s title or body changed while the checker judged it; move again to "
                           "judge the new text");
  CHECK(!j.contains("park"));
  CHECK(test::Slurp(ws.journal_path()).value() == journal);
  const auto rows = e2e::Lines(test::Slurp(ws.root() + "/ledger/decisions.jsonl").value());
  const json row = json::parse(rows.back());
  CHECK(row["ok"] == false);
  CHECK(row["code"] == "card-edited");
  CHECK(row["inputsSha256"] == e2e::CardInDesigningJudged());
}

}  // namespace
}  // namespace devflow::server_test

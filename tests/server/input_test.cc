// Bad input at the admission server, through its real binary: every field of both POST bodies
// against docs/openapi.yaml and the store's types (400 naming the field), `Expect:
// 100-continue` answered only after the header checks, and an announced oversized body refused
// (413) without being read.
#include <doctest/doctest.h>
#include <poll.h>

#include "checker/checker_support.h"
#include "server/serve_fixture.h"

namespace devflow::server_test {
namespace {

using e2e::Fixture;
using e2e::Workspace;
using nlohmann::json;

std::string AllowConfig() {
  std::string y = "providers:\n  checker:\n    command: ['" + Fixture("checkers/allow.sh") +
                  "']\n    sandbox: off\n";
  y += "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n";
  y += "        'designing->ready':\n          provider: checker\n";
  y += "          inputs: [prd, design]\n          prompt: Check the design.\n";
  y += "      checkTimeoutMs: 20000\n      verdictCacheDir: .devflow-agent-gate-cache\n";
  return y;
}

json Attempt(const Workspace& ws) {
  return {{"id", ws.card()},
          {"from", "designing"},
          {"to", "ready"},
          {"expectedRevision", 4},
          {"by", {{"kind", "human"}}},
          {"root", ws.root()},
          {"at", "2026-12-02T04:05:06.789Z"},
          {"dryRun", true}};
}

// One field of a body set to a value (null `value` with erase=true removes it).
struct Case {
  std::string field;  // the top-level key set
  json value;
  std::string named;  // the field the 400 must name
};

// Reads from `fd` until `until` appears in what was read, the peer closes, or 20 s pass (a
// bound against a hang, not a synchronisation: the test waits for bytes).
std::string ReadUntil(int fd, const std::string& until) {
  std::string out;
  char buf[4096];
  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (out.find(until) == std::string::npos && std::chrono::steady_clock::now() < stop) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

TEST_CASE("serve: every field of a /v1/admit body is checked, a bad one is refused naming it") {
  Workspace ws(AllowConfig());
  ws.CardInDesigning();
  SocketServer server(ws);
  const std::vector<Case> cases = {
      {"id", 1, "id"},
      {"id", "../../etc", "id"},
      {"id", "0001", "id"},
      {"id", "", "id"},
      {"from", "nowhere", "from"},
      {"from", 2, "from"},
      {"to", "Ready", "to"},
      {"to", nullptr, "to"},
      {"expectedRevision", "4", "expectedRevision"},
      {"expectedRevision", 0, "expectedRevision"},
      {"expectedRevision", -3, "expectedRevision"},
      {"expectedRevision", 4.5, "expectedRevision"},
      {"expectedRevision", 9007199254740992LL, "expectedRevision"},
      {"by", "human", "by"},
      {"by", nullptr, "by"},
      {"by", json::object(), "by.kind"},
      {"by", {{"kind", "robot"}}, "by.kind"},
      {"by", {{"kind", "human"}, {"session", "s1"}}, "by.session"},
      {"by", {{"kind", "agent"}, {"name", "n"}}, "by.name"},
      {"by", {{"kind", "command"}, {"session", "s1"}}, "by.session"},
      {"by", {{"kind", "human"}, {"name", ""}}, "by.name"},
      {"by", {{"kind", "agent"}, {"session", ""}}, "by.session"},
      {"by", {{"kind", "human"}, {"name", 7}}, "by.name"},
      {"by", {{"kind", "human"}, {"colour", "red"}}, "by.colour"},
      {"reason", 3, "reason"},
      {"reason", nullptr, "reason"},
      {"root", "relative/.devflow", "root"},
      {"root", "", "root"},
      {"root", true, "root"},
      {"at", "2026-12-02", "at"},
      {"at", "2026-12-02T04:05:06Z", "at"},
      {"at", "2026-12-02T04:05:06.78Z", "at"},
      {"at", "2026-12-02T04:05:06.789", "at"},
      {"at", "2026-12-02T04:05:06.789+00:00", "at"},
      {"at", "2026-12-02 04:05:06.789Z", "at"},
      {"at", "2026-12-02t04:05:06.789z", "at"},
      {"at", "2026-13-02T04:05:06.789Z", "at"},
      {"at", "2026-00-02T04:05:06.789Z", "at"},
      {"at", "2026-02-29T04:05:06.789Z", "at"},  // 2026 is no leap year
      {"at", "2026-04-31T04:05:06.789Z", "at"},
      {"at", "2026-12-00T04:05:06.789Z", "at"},
      {"at", "2026-12-02T24:00:00.000Z", "at"},
      {"at", "2026-12-02T04:60:06.789Z", "at"},
      {"at", "2026-12-02T04:05:60.789Z", "at"},
      {"at", "+02026-12-02T04:05:06.789Z", "at"},
      {"at", "yesterday", "at"},
      {"at", "", "at"},
      {"at", 1764648306789LL, "at"},
      {"dryRun", "true", "dryRun"},
      {"dryRun", 1, "dryRun"},
      {"deadlineMs", 0, "deadlineMs"},
      {"deadlineMs", "5000", "deadlineMs"},
      {"deadlineMs", 2147483648LL, "deadlineMs"},
      {"deadlineMs", 1.5, "deadlineMs"},
      {"colour", "red", "colour"},
      {"expectRevision", 4, "expectRevision"},  // /v1/moves' name, not the attempt's
  };
  for (const Case& c : cases) {
    json body = Attempt(ws);
    body[c.field] = c.value;
    HttpAnswer a = server.Post("/v1/admit", body.dump());
    INFO(c.field << " = " << c.value.dump() << " -> " << a.status << " " << a.body);
    CHECK(a.status == 400);
    if (a.status != 400) continue;
    CHECK(a.json().value("field", "") == c.named);
    CHECK(a.json()["error"].get<std::string>().find(c.named) != std::string::npos);
  }
  for (const char* required : {"id", "from", "to", "expectedRevision", "by", "root", "at"}) {
    json body = Attempt(ws);
    body.erase(required);
    HttpAnswer a = server.Post("/v1/admit", body.dump());
    INFO(required << " missing -> " << a.body);
    CHECK(a.status == 400);
    CHECK(a.json().value("field", "") == required);
  }
  // What the store writes passes: each actor kind with its own field, a leap day, the optional
  // fields, a deadline at the limit.
  const std::vector<std::pair<std::string, json>> good = {
      {"by", {{"kind", "human"}, {"name", "ada"}}},
      {"by", {{"kind", "agent"}, {"session", "s-1"}}},
      {"by", {{"kind", "command"}, {"name", "devflow"}}},
      {"at", "2028-02-29T23:59:59.999Z"},
      {"at", "2000-02-29T00:00:00.000Z"},
      {"reason", ""},
      {"deadlineMs", 2147483647LL},
  };
  for (const auto& [field, value] : good) {
    json body = Attempt(ws);
    body[field] = value;
    HttpAnswer a = server.Post("/v1/admit", body.dump());
    INFO(field << " = " << value.dump() << " -> " << a.body);
    CHECK(a.status == 200);
    if (a.status == 200) CHECK(a.json()["allowed"] == true);
  }
  // The header deadline has the same bounds as deadlineMs.
  for (const char* bad : {"0", "-1", "5s", "2147483648", ""}) {
    HttpAnswer a = server.Post("/v1/admit", Attempt(ws).dump(),
                               {std::string("X-Devflow-Deadline-Ms: ") + bad});
    INFO(bad << " -> " << a.body);
    CHECK(a.status == 400);
    CHECK(a.json().value("field", "") == "X-Devflow-Deadline-Ms");
  }
  // A key an object repeats (nlohmann would keep the last silently), at the top or nested, is
  // refused naming it, even when both say the same; the same key in two objects is no repeat.
  const std::string attempt = Attempt(ws).dump();
  const std::vector<std::pair<std::string, std::string>> repeated = {
      {"{\"id\":\"0001-x\"," + attempt.substr(1), "id"},
      {"{\"dryRun\":true," + attempt.substr(1), "dryRun"},
      {attempt.substr(0, attempt.size() - 1) + ",\"at\":\"2026-12-02T04:05:06.789Z\"}", "at"},
  };
  for (const auto& [body, key] : repeated) {
    HttpAnswer a = server.Post("/v1/admit", body);
    INFO(body << " -> " << a.body);
    CHECK(a.status == 400);
    CHECK(a.json().value("field", "") == key);
    CHECK(a.json().value("error", "") == "field \"" + key + "\" appears twice");
  }
  json nested = Attempt(ws);
  nested["by"] = {{"kind", "human"}, {"name", "kind"}};  // "kind" as a value and a key: fine
  CHECK(server.Post("/v1/admit", nested.dump()).status == 200);
  std::string twice = nested.dump();
  twice.replace(twice.find("\"kind\":\"human\""), 14, "\"kind\":\"human\",\"kind\":\"agent\"");
  HttpAnswer a = server.Post("/v1/admit", twice);
  INFO(twice << " -> " << a.body);
  CHECK(a.status == 400);
  CHECK(a.json().value("field", "") == "kind");
}

// trial14 S2: JSON.stringify writes a lone surrogate in a string as the escape `\ud800`, which
// JSON.parse accepts; the server answered such a body 400 (and the plugin parked the card).
// It is read as JavaScript reads it: the reason carries U+FFFD.
TEST_CASE("serve: a body with a lone surrogate escape, as JSON.stringify writes it, is read") {
  Workspace ws(AllowConfig());
  ws.CardInDesigning();
  SocketServer server(ws);
  std::string body = Attempt(ws).dump();
  body.insert(body.size() - 1, ",\"reason\":\"why \\ud800 not\"");
  HttpAnswer a = server.Post("/v1/admit", body);
  INFO(a.body);
  CHECK(a.status == 200);
  CHECK(a.json()["allowed"] == true);
  // A body that is broken for JavaScript too is still refused.
  CHECK(server.Post("/v1/admit", body.substr(0, body.size() - 1)).status == 400);
}

TEST_CASE("serve: every field of a /v1/moves body is checked, a bad one is refused naming it") {
  Workspace ws(AllowConfig());
  ws.CardInDesigning();
  SocketServer server(ws);
  auto moves = [&] { return json{{"id", ws.card()}, {"to", "ready"}, {"dryRun", true}}; };
  const std::vector<Case> cases = {
      {"id", 1, "id"},
      {"id", "x/../../y", "id"},
      {"to", "nowhere", "to"},
      {"to", 5, "to"},
      {"by", "robot", "by"},
      {"by", "human:", "by"},
      {"by", 3, "by"},
      {"by", {{"kind", "agent"}, {"name", "n"}}, "by.name"},
      {"by", {{"kind", "human"}, {"name", ""}}, "by.name"},
      {"reason", false, "reason"},
      {"expectRevision", "4", "expectRevision"},
      {"expectRevision", 0, "expectRevision"},
      {"expectRevision", 9007199254740992LL, "expectRevision"},
      {"dryRun", "yes", "dryRun"},
      {"root", "relative", "root"},
      {"root", 1, "root"},
      {"deadlineMs", -5, "deadlineMs"},
      {"deadlineMs", 2147483648LL, "deadlineMs"},
      {"expectedRevision", 4, "expectedRevision"},  // /v1/admit's name, not the move's
      {"at", "2026-12-02T04:05:06.789Z", "at"},     // a move's time is the server's
      {"dryrun", true, "dryrun"},
  };
  for (const Case& c : cases) {
    json body = moves();
    body[c.field] = c.value;
    HttpAnswer a = server.Post("/v1/moves", body.dump());
    INFO(c.field << " = " << c.value.dump() << " -> " << a.status << " " << a.body);
    CHECK(a.status == 400);
    if (a.status != 400) continue;
    CHECK(a.json().value("field", "") == c.named);
  }
  for (const char* required : {"id", "to"}) {
    json body = moves();
    body.erase(required);
    CHECK(server.Post("/v1/moves", body.dump()).json().value("field", "") == required);
  }
  json ok = moves();
  ok["by"] = "agent:s-1";
  ok["expectRevision"] = 4;
  ok["root"] = ws.root();
  HttpAnswer a = server.Post("/v1/moves", ok.dump());
  INFO(a.body);
  CHECK(a.status == 200);
  CHECK(a.json()["code"] == "committed");
}

TEST_CASE("serve: Expect: 100-continue is answered after the header checks, then the body read") {
  Workspace ws(AllowConfig());
  ws.CardInDesigning();
  SocketServer server(ws);
  const std::string body = Attempt(ws).dump();
  int fd = Connect(server.socket);
  REQUIRE(fd >= 0);
  WriteAll(fd,
           "POST /v1/admit HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: "
           "application/json\r\nExpect: 100-continue\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n");
  // The client sends nothing more until the server invites the body.
  std::string got = ReadUntil(fd, "\r\n\r\n");
  CHECK(got == "HTTP/1.1 100 Continue\r\n\r\n");
  WriteAll(fd, body);
  HttpAnswer a = Parse(ReadAll(fd));
  ::close(fd);
  INFO(a.body);
  CHECK(a.status == 200);
  CHECK(a.json()["allowed"] == true);

  // An expectation the server does not know: 417, no 100.
  fd = Connect(server.socket);
  REQUIRE(fd >= 0);
  WriteAll(fd, "POST /v1/admit HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n");
  HttpAnswer odd = Parse(ReadAll(fd));
  ::close(fd);
  CHECK(odd.status == 417);
  CHECK(odd.json()["field"] == "Expect");
}

TEST_CASE("serve: a body announced past 1 MiB gets 413 at once, unread, and no 100 Continue") {
  Workspace ws(AllowConfig());
  // A read timeout far past the test's bound: a server that waited for the body would not
  // answer within it.
  SocketServer server(ws, {"--read-timeout-ms", "120000"});
  for (bool expect : {false, true}) {
    int fd = Connect(server.socket);
    REQUIRE(fd >= 0);
    WriteAll(fd, std::string("POST /v1/admit HTTP/1.1\r\nHost: x\r\n") +
                     (expect ? "Expect: 100-continue\r\n" : "") +
                     "Content-Length: " + std::to_string((1 << 20) + 1) + "\r\n\r\n");
    std::string got = ReadUntil(fd, "}");
    ::close(fd);
    INFO("expect=" << expect << ": " << got);
    CHECK(got.rfind("HTTP/1.1 413 ", 0) == 0);  // the first thing sent: no 100 before it
    CHECK(got.find("the body exceeds 1048576 bytes") != std::string::npos);
  }
  // Exactly the limit is read and judged on its content (400: not JSON), not refused as large.
  HttpAnswer at_limit = server.Post("/v1/admit", std::string(1 << 20, ' '));
  CHECK(at_limit.status == 400);
  CHECK(server.Get("/healthz").status == 200);
}

TEST_CASE("serve: on TCP a missing bearer token is refused at the headers, before any 100") {
  Workspace ws(AllowConfig());
  test::Spit(ws / "token", "s3cret-token\n");
  Serve serve(ws.path(), {"--root", ws.root(), "serve", "--listen", "127.0.0.1:0", "--token-file",
                          ws / "token", "--read-timeout-ms", "120000"});
  std::string listening = serve.WaitLog("\"msg\":\"listening\"");
  REQUIRE(!listening.empty());
  const std::string port = std::to_string(json::parse(listening)["port"].get<int>());
  int fd = Connect(port);
  REQUIRE(fd >= 0);
  WriteAll(fd,
           "POST /v1/admit HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: "
           "1000\r\n\r\n");
  std::string got = ReadUntil(fd, "}");
  ::close(fd);
  INFO(got);
  CHECK(got.rfind("HTTP/1.1 401 ", 0) == 0);
  CHECK(got.find("WWW-Authenticate: Bearer") != std::string::npos);
  // With the token the same request is invited to send its body.
  fd = Connect(port);
  REQUIRE(fd >= 0);
  WriteAll(fd,
           "POST /v1/admit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\nExpect: "
           "100-continue\r\nContent-Length: 2\r\n\r\n");
  CHECK(ReadUntil(fd, "\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n");
  WriteAll(fd, "{}");
  CHECK(ReadUntil(fd, "}").rfind("HTTP/1.1 400 ", 0) == 0);  // {} lacks the fields
  ::close(fd);
}

}  // namespace
}  // namespace devflow::server_test

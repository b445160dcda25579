// `devflow-gate serve`: the admission server (SPEC §9, docs/server.md). HTTP/1.1 on unix
// sockets and loopback TCP, one Boost.Asio io_context for all I/O; Boost.Beast / Asio live in
// host/server/server.cc only — this header is plain C++.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace devflow {

/// Everything `serve` is started with. Times in ms, sizes in bytes.
struct ServerOptions {
  /// "unix:PATH" or "HOST:PORT" with HOST an IP literal ("127.0.0.1", "[::1]"); port 0 picks
  /// a free port (named in the `listening` log line).
  std::vector<std::string> listen;
  /// The absolute devflow roots a request may name; the first is the default of /v1/moves.
  std::vector<std::string> roots;
  /// An explicit config file for every root, or "" for each root's
  /// `<workspace>/devflow-gate.yaml`.
  std::string config_file;
  std::string self_path;  // the devflow-gate binary (builtin providers)
  int max_checks = 8;     // attempts decided at once (each runs at most one checker at a time)
  int max_queue = 1024;   // attempts waiting beyond those; more answer 503 + Retry-After
  int64_t drain_timeout_ms = 30000;
  int socket_mode = 0600;
  std::string socket_group;       // chgrp of unix sockets, "" = keep
  std::vector<uid_t> allow_uids;  // peer uids allowed (unix sockets, local TCP); empty = own uid
  bool allow_remote = false;      // TCP on a non-loopback address (needs token_file)
  std::string token_file;         // bearer token required on TCP when set
  int64_t max_body_bytes = 1 << 20;
  int64_t read_timeout_ms = 10000;  // a request's headers and body must arrive within this
  int64_t idle_timeout_ms = 60000;  // a keep-alive connection idle this long is closed
  /// Connections open at once (through the peer screen and a queued attempt); one more is
  /// answered 503. Above max_checks + max_queue, so a burst that fills the queue is answered by
  /// the queue, not refused at accept (issue 8: 1,000 concurrent slow checks all answered).
  int max_connections = 4096;
};

/// Validates the options (usage errors go to stderr with exit 2), loads every root's config
/// (a bad config fails the start with exit 2), binds the listeners and serves until SIGTERM /
/// SIGINT, then drains (docs/server.md). Returns the process exit code.
int RunServer(const ServerOptions& options);

}  // namespace devflow

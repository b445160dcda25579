// The TCP peer screen off the I/O thread (issue 8). RefuseTcpPeer (peer.h) walks every
// process's descriptors in /proc, which takes milliseconds and may block (a /proc read waits on
// the examined process's locks); run on the server's one I/O thread it stalled every connection
// and every attempt for as long as it took. Screens run here instead, on a small fixed pool,
// and each result goes back to the I/O thread through `post`. Plain C++: no Asio here
// (server.cc supplies `post`), so the pool is tested without a server
// (tests/server/screen_pool_test.cc).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>

#include "host/server/peer.h"

namespace devflow::server {

/// A fixed set of threads that screen accepted TCP connections, with at most `max_waiting`
/// connections queued for a free thread. Threads: created with every signal blocked (signals
/// stay the I/O thread's), never joined (see the destructor).
class PeerScreenPool {
 public:
  /// What a screen found for one connection's descriptor: nullopt admits it.
  using Screen = std::function<std::optional<PeerRefusal>(int fd)>;
  /// Runs a function on the I/O thread (asio::post to the socket's executor). Called on a pool
  /// thread.
  using Post = std::function<void(std::function<void()>)>;
  /// The result of one screen, called through `post`. Destroyed on a pool thread when the
  /// pool stops first, so it must hold nothing the I/O thread owns by value (an id, not the
  /// socket).
  using Done = std::function<void(std::optional<PeerRefusal>)>;

  /// `threads` ≥ 1 threads running `screen`; `max_waiting` connections may wait beyond them.
  /// Throws std::system_error when a thread cannot be created.
  PeerScreenPool(int threads, size_t max_waiting, Screen screen, Post post);
  /// Stops: queued screens are dropped (their descriptors closed, `done` never called), and no
  /// result is posted after it returns. A screen still running is not waited for (it may be
  /// blocked in /proc): its thread finishes it, drops the result and ends.
  ~PeerScreenPool();
  PeerScreenPool(const PeerScreenPool&) = delete;
  PeerScreenPool& operator=(const PeerScreenPool&) = delete;

  /// Queues the screen of `fd` (a descriptor the pool owns from here on and closes after the
  /// screen: pass a dup of the socket's, so the socket can never be another by the time it is
  /// examined). false, with `fd` closed, when `max_waiting` screens are already waiting.
  /// A screen that throws yields a `peer-unidentified` refusal: fail closed.
  bool Submit(int fd, Done done);

 private:
  void Start(int threads);
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace devflow::server

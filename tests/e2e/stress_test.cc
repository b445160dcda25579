// No spurious fault under load (issue 7 item 13). Real moves of one card through the binary,
// each one checked by a checker that answers at once, while the test keeps every core busy with
// spinning threads and, in the same root, a sibling card's moves are started and SIGKILLed at
// random points (what the trial that found the fault did: their temporaries, commit.lock and
// ledger rows land next to ours, and the pids they burn make the kernel hand pids out again).
// Every checked move must decide as its checker said: zero faults, zero parks.
// DG_STRESS_MOVES sets the number of checked moves (default 500); skip with -tse=stress.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "e2e/workspace.h"

namespace devflow::e2e {
namespace {

// Spins one thread per core until destroyed.
class BusyCores {
 public:
  explicit BusyCores(unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        volatile unsigned long x = 0;
        while (!stop_.load(std::memory_order_relaxed)) x = x + 1;
      });
    }
  }
  ~BusyCores() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Starts `devflow-gate move <card> <stage>` around the stage cycle again and again in `ws`, and
// SIGKILLs each after a random 0-60 ms (before, during or after its check), until destroyed.
// After each kill it removes the card's commit.lock, as an operator would.
class KilledSibling {
 public:
  KilledSibling(const Workspace& ws, std::string card)
      : ws_(ws), card_(std::move(card)), thread_([this] { Loop(); }) {}
  ~KilledSibling() {
    stop_ = true;
    thread_.join();
  }
  int started() const { return started_; }

 private:
  void Loop() {
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> delay_us(0, 60000);
    const std::string binary = test::GateBinary();
    const std::string home = "HOME=" + ws_.path();
    const char* stages[] = {"ready", "developing", "designing"};
    for (int i = 0; !stop_; ++i) {
      const char* to = stages[i % 3];
      pid_t pid = ::fork();
      if (pid == 0) {
        int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
        if (::chdir(ws_.path().c_str()) != 0) ::_exit(126);
        const char* argv[] = {binary.c_str(), "move",  card_.c_str(), to,
                              "--reason",     "again", nullptr};
        const char* envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", home.c_str(), "LANG=C.UTF-8",
                              nullptr};
        ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp));
        ::_exit(127);
      }
      if (pid < 0) continue;
      ++started_;
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      std::error_code ignored;
      std::filesystem::remove(ws_.root() + "/tasks/" + card_ + "/commit.lock", ignored);
    }
  }
  const Workspace& ws_;
  const std::string card_;
  std::atomic<bool> stop_{false};
  std::atomic<int> started_{0};
  std::thread thread_;
};

TEST_CASE(
    "500 checked moves with a fast checker on busy cores next to SIGKILLed moves give no fault" *
    doctest::test_suite("stress") * doctest::timeout(1500)) {
  const char* env = std::getenv("DG_STRESS_MOVES");
  const int moves = env && std::atoi(env) > 0 ? std::atoi(env) : 500;
  // The checker guards every edge of the cycle, so each move runs it (no cache: it always runs).
  std::string yaml = "providers:\n  checker:\n    command: ['" + Fixture("checkers/allow.sh") +
                     "']\nplugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n";
  for (const char* edge : {"designing->ready", "ready->developing", "developing->designing"}) {
    yaml += std::string("        '") + edge +
            "':\n          provider: checker\n          inputs: [prd, design]\n"
            "          prompt: Check it.\n";
  }
  yaml += "      checkTimeoutMs: 20000\n      reportDir: .gate-reports\n";
  Workspace ws(yaml);
  ws.CardInDesigning();
  auto sibling = ws.Gate({"card", "create", "--title", "Sibling"});
  REQUIRE(sibling.exit_code == 0);
  const std::string sibling_card = Lines(sibling.out).at(0);
  REQUIRE(ws.Gate({"move", sibling_card, "designing"}).exit_code == 0);
  for (const char* kind : {"prd", "design"}) {
    REQUIRE(ws.Gate({"artifact", "add", sibling_card, kind, "inputs/" + std::string(kind) + ".md"})
                .exit_code == 0);
  }

  const char* cycle[] = {"ready", "developing", "designing"};
  int faults = 0, decided = 0;
  std::string first_fault;
  int sibling_moves = 0;
  {
    BusyCores busy(std::max(2u, std::thread::hardware_concurrency()));
    KilledSibling killed(ws, sibling_card);
    for (int i = 0; i < moves; ++i) {
      const std::string to = cycle[i % 3];
      auto r = ws.Gate({"move", ws.card(), to, "--reason", "again"});
      if (r.exit_code == 0 && r.out.find("check by agent: ok") != std::string::npos) {
        ++decided;
        continue;
      }
      if (++faults == 1) {
        first_fault = "move " + std::to_string(i) + " to " + to + ": exit " +
                      std::to_string(r.exit_code) + ": " + r.out + r.err;
      }
      break;  // the stage cycle is broken; the first fault says why
    }
    sibling_moves = killed.started();
  }
  MESSAGE("stress: " << decided << " checked moves decided, " << sibling_moves
                     << " sibling moves started and SIGKILLed");
  INFO("first fault: " << first_fault);
  CHECK(faults == 0);
  CHECK(decided == moves);
  CHECK(sibling_moves > 0);
}

}  // namespace
}  // namespace devflow::e2e

// `devflow-gate ground`'s heap on huge pages (issue 11 item 4): after UseBatchHeap, the blocks
// malloc serves next, small and large, lie in the heap and in a range advised onto transparent
// huge pages, so a run that builds megabytes of them takes a few faults instead of thousands.
// Run in a forked child: the allocator's settings last for the process.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "host/os.h"

namespace devflow {
namespace {

struct Vma {
  uintptr_t from = 0, to = 0;
  std::string name;
  bool huge = false;  // VmFlags has `hg` (MADV_HUGEPAGE)
};

std::vector<Vma> ReadSmaps() {
  std::vector<Vma> out;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  while (std::getline(in, line)) {
    unsigned long from = 0, to = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &from, &to, perms) == 3) {
      Vma vma{from, to, "", false};
      if (const size_t slash = line.find_first_of("/["); slash != std::string::npos) {
        vma.name = line.substr(slash);
      }
      out.push_back(vma);
    } else if (line.rfind("VmFlags:", 0) == 0 && !out.empty()) {
      out.back().huge = line.find(" hg") != std::string::npos;
    }
  }
  return out;
}

// 0: every block in a huge-page-advised part of [heap]; 1: some block elsewhere.
int ChildBlocksOnHugeHeap() {
  UseBatchHeap(size_t{32} << 20);
  std::vector<char*> blocks;
  for (int k = 0; k < 2000; ++k) blocks.push_back(static_cast<char*>(std::malloc(4000)));
  blocks.push_back(static_cast<char*>(std::malloc(size_t{3} << 20)));  // mmap'd by default
  const std::vector<Vma> vmas = ReadSmaps();
  int bad = 0;
  for (char* block : blocks) {
    std::memset(block, 1, 64);
    const auto at = reinterpret_cast<uintptr_t>(block);
    bool ok = false;
    for (const Vma& vma : vmas) {
      if (at >= vma.from && at < vma.to) ok = vma.huge && vma.name == "[heap]";
    }
    bad += ok ? 0 : 1;
  }
  std::printf("batch heap: %d of %zu blocks off the huge-page heap\n", bad, blocks.size());
  return bad == 0 ? 0 : 1;
}

#if !defined(__SANITIZE_ADDRESS__)  // the sanitizer's allocator is not glibc's heap
TEST_CASE("UseBatchHeap serves small and large blocks from a heap advised onto huge pages") {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(ChildBlocksOnHugeHeap());
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
#endif

}  // namespace
}  // namespace devflow

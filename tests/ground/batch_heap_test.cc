// `devflow-gate ground`'s heap on huge pages (issue 11 item 4): after UseBatchHeap, the blocks
// malloc serves next, a large one and (all but reused chunks) small ones, lie in the heap and in
// a range advised onto transparent huge pages, so a run that builds megabytes of them takes a few
// faults instead of thousands. Run in a forked child: the allocator's settings last for the
// process.
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

// Not built under ASan: the sanitizer's allocator is not glibc's heap, so UseBatchHeap has
// nothing to arrange there.
#if !defined(__SANITIZE_ADDRESS__)
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

// 0: the large block and nearly all small ones lie in a huge-page-advised part of [heap]; 1: not.
// (A small block may reuse a free chunk the process's heap held before, below the huge pages.)
int ChildBlocksOnHugeHeap() {
  UseBatchHeap(size_t{32} << 20);
  std::vector<char*> small;
  for (int k = 0; k < 2000; ++k) small.push_back(static_cast<char*>(std::malloc(4000)));
  char* const large = static_cast<char*>(std::malloc(size_t{3} << 20));  // mmap'd by default
  const std::vector<Vma> vmas = ReadSmaps();
  auto on_huge_heap = [&](char* block) {
    std::memset(block, 1, 64);
    const auto at = reinterpret_cast<uintptr_t>(block);
    for (const Vma& vma : vmas) {
      if (at >= vma.from && at < vma.to) return vma.huge && vma.name == "[heap]";
    }
    return false;
  };
  size_t off = 0;
  for (char* block : small) off += on_huge_heap(block) ? 0 : 1;
  const bool large_on = on_huge_heap(large);
  std::printf("batch heap: %zu of %zu small blocks off the huge-page heap, the large one %s\n", off,
              small.size(), large_on ? "on it" : "off it");
  return large_on && off <= small.size() / 20 ? 0 : 1;
}

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

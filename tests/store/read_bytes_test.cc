// The journal's reads (issue 11 item 1): FileSystem::ReadFileBytes reads what ReadFile reads,
// into a buffer that is not zero-filled first, and fails exactly as ReadFile does for the same
// paths; a decorating FileSystem keeps its faults; ReadFile's shortened end (no second read
// after exactly st_size bytes) still reads a file that reports size 0 (/proc) to its end.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "host/os.h"
#include "support/support.h"

namespace devflow {
namespace {

using test::FaultyFileSystem;
using test::Spit;
using test::TempDir;

TEST_CASE("ReadFileBytes gives ReadFile's bytes, and ReadFile's errors for the same paths") {
  TempDir tmp;
  FileSystem& fs = PosixFileSystem();
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{3 * 65536 + 17}}) {
    const std::string file = tmp.path() + "/journal-" + std::to_string(size) + ".jsonl";
    std::string bytes(size, 'x');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    Spit(file, bytes);
    Result<FileBytes> read = fs.ReadFileBytes(file);
    REQUIRE(read.ok());
    CHECK(read->view() == bytes);
    CHECK(*fs.ReadFile(file) == bytes);
    FileBytes moved = std::move(*read);  // the buffer moves with its owner
    CHECK(moved.view() == bytes);
    CHECK(read->view().empty());
  }

  // st_size 0, content after it: both read to EOF.
  Result<std::string> proc = fs.ReadFile("/proc/self/cmdline");
  REQUIRE(proc.ok());
  CHECK_FALSE(proc->empty());
  Result<FileBytes> proc_bytes = fs.ReadFileBytes("/proc/self/cmdline");
  REQUIRE(proc_bytes.ok());
  CHECK(proc_bytes->view() == *proc);

  const std::string fifo = tmp.path() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {tmp.path() + "/missing.jsonl", tmp.path(), fifo}) {
    Result<FileBytes> a = fs.ReadFileBytes(path);  // a FIFO is refused without blocking
    Result<std::string> b = fs.ReadFile(path);
    REQUIRE_FALSE(a.ok());
    REQUIRE_FALSE(b.ok());
    CHECK(a.status().code() == b.status().code());
    CHECK(a.status().message() == b.status().message());
  }
  CHECK(fs.ReadFile(fifo).status().message() == "read " + fifo + ": not a regular file (EINVAL)");
  CHECK(fs.ReadFile(tmp.path()).status().code() == "EISDIR");
}

TEST_CASE("ReadFileBytes through a decorating FileSystem keeps its read faults") {
  TempDir tmp;
  const std::string file = tmp.path() + "/journal.jsonl";
  Spit(file, "{}\n");
  FaultyFileSystem faulty;
  faulty.Fail("read", "journal.jsonl", EIO);
  Result<FileBytes> read = faulty.ReadFileBytes(file);
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().code() == "EIO");
}

}  // namespace
}  // namespace devflow

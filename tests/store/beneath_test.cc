// No symlink below a devflow root is followed, by a write or a read (issue 7, trial 0353 F3):
// the judged agent can write the workspace, so a link planted under .devflow would hand it the
// gate's (root's) append and create on any host file, and a read through one would put a host
// file's bytes into a report or reply. The OS seam opens the directory holding each name from
// the root's fd (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) and acts through that fd, so a
// link planted before the operation is refused ("ELOOP", the path, the link, the fix) and one
// planted while it runs is never used.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <thread>

#include "host/os.h"
#include "support/support.h"

namespace devflow {
namespace {

using test::Slurp;
using test::Spit;
using test::TempDir;

// `link` is the planted component, as the path spells it.
void RequireRefused(const Status& s, const std::string& path, const std::string& link) {
  INFO(s.message());
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == "ELOOP");
  CHECK(s.message().find(path + ": " + link + " is a symbolic link below the devflow root ") !=
        std::string::npos);
  CHECK(s.message().find("replace " + link + " with a real ") != std::string::npos);
}

template <typename T>
void RequireRefused(const Result<T>& r, const std::string& path, const std::string& link) {
  REQUIRE_FALSE(r.ok());
  RequireRefused(r.status(), path, link);
}

// A workspace whose root the operator names through a symlink (it is resolved once), a card
// with its journal, card.md and artifacts, a ledger, and a host directory outside the root
// whose files must stay as they are.
struct Planted {
  TempDir tmp;
  FileSystem& fs = PosixFileSystem();
  const std::string host = tmp.path() + "/host";
  const std::string host_file = host + "/f";
  const std::string real_root = tmp.path() + "/ws/.devflow";
  const std::string root = tmp.path() + "/named-root";
  const std::string card = root + "/tasks/0001-a";

  Planted() {
    REQUIRE(fs.CreateDirs(host).ok());
    REQUIRE(fs.CreateDirs(real_root + "/tasks/0001-a/artifacts").ok());
    REQUIRE(fs.CreateDirs(real_root + "/ledger").ok());
    REQUIRE(::symlink(real_root.c_str(), root.c_str()) == 0);
    RegisterNoSymlinkRoot(root);
    Spit(host_file, "HOST FILE\n");
  }
  // Moves `dir` below the root aside and puts a link to the host directory in its place.
  void LinkDir(const std::string& rel) {
    const std::string at = real_root + "/" + rel;
    REQUIRE(::rename(at.c_str(), (tmp.path() + "/aside").c_str()) == 0);
    REQUIRE(::symlink(host.c_str(), at.c_str()) == 0);
  }
  void RequireHostUntouched() {
    CHECK(Slurp(host_file) == std::optional<std::string>("HOST FILE\n"));
    Result<std::vector<std::string>> names = fs.ListDir(host);
    REQUIRE(names.ok());
    CHECK(*names == std::vector<std::string>{"f"});
  }
};

TEST_CASE("the OS seam writes below a devflow root through no planted symlink") {
  Planted w;
  FileSystem& fs = w.fs;
  const std::string& root = w.root;
  // With no link below the root, writes go through, by the named root and the resolved one.
  REQUIRE(fs.AppendDurable(root + "/ledger/decisions.jsonl", "{}\n").ok());
  REQUIRE(fs.AppendDurable(w.real_root + "/ledger/decisions.jsonl", "{}\n").ok());
  REQUIRE(fs.WriteFileAtomic(w.card + "/card.md", "x").ok());
  REQUIRE(fs.AppendDurable(w.card + "/journal.jsonl", "{}\n").ok());
  REQUIRE(fs.CreateDirs(root + "/cache/agent-gate").ok());
  CHECK(Slurp(w.real_root + "/ledger/decisions.jsonl") == std::optional<std::string>("{}\n{}\n"));

  SUBCASE("ledger file -> host file") {
    const std::string p = root + "/ledger/decisions.jsonl";
    REQUIRE(::unlink(p.c_str()) == 0);
    REQUIRE(::symlink(w.host_file.c_str(), p.c_str()) == 0);
    RequireRefused(fs.AppendDurable(p, "{}\n"), p, p);
    CHECK(fs.AppendDurable(p, "{}\n").message().find("; nothing was written; replace " + p +
                                                     " with a real file and retry") !=
          std::string::npos);
    RequireRefused(fs.ReplaceLocked(p, [](const std::string&) { return std::string("{}\n"); }), p,
                   p);
    RequireRefused(fs.ReadFile(p), p, p);
  }
  SUBCASE("ledger dir -> host dir") {
    w.LinkDir("ledger");
    const std::string p = root + "/ledger/decisions.jsonl";
    RequireRefused(fs.CreateDirs(root + "/ledger"), root + "/ledger", root + "/ledger");
    RequireRefused(fs.AppendDurable(p, "{}\n"), p, root + "/ledger");
    CHECK(fs.AppendDurable(p, "{}\n").message().find(
              "replace " + root + "/ledger with a real directory and retry") != std::string::npos);
    RequireRefused(fs.AppendDurable(root + "/ledger/f", "{}\n"), root + "/ledger/f",
                   root + "/ledger");
  }
  SUBCASE("tasks dir -> host dir") {
    w.LinkDir("tasks");
    const std::string t = root + "/tasks";
    RequireRefused(fs.CreateDirExclusive(t + "/0002-b"), t + "/0002-b", t);
    RequireRefused(fs.CreateDirs(t + "/0002-b"), t + "/0002-b", t);
    RequireRefused(fs.AppendDurable(t + "/f", "{}\n"), t + "/f", t);
    RequireRefused(fs.CreateExclusive(t + "/f", "1\n"), t + "/f", t);
    RequireRefused(fs.RemoveFile(t + "/f"), t + "/f", t);
    RequireRefused(fs.ListDir(t), t, t);
    RequireRefused(fs.Kind(t + "/f"), t + "/f", t);
  }
  SUBCASE("journal -> another file") {
    const std::string p = w.card + "/journal.jsonl";
    REQUIRE(::unlink(p.c_str()) == 0);
    REQUIRE(::symlink(w.host_file.c_str(), p.c_str()) == 0);
    RequireRefused(fs.AppendDurable(p, "{}\n"), p, p);
  }
  SUBCASE("artifacts dir -> host dir") {
    w.LinkDir("tasks/0001-a/artifacts");
    const std::string a = w.card + "/artifacts";
    RequireRefused(fs.CreateDirs(a), a, a);
    RequireRefused(fs.CreateExclusive(a + "/7-design.md", "x"), a + "/7-design.md", a);
    RequireRefused(fs.WriteFileAtomic(a + "/7-design.md", "x"), a + "/7-design.md", a);
  }
  SUBCASE("card dir -> host dir") {
    const std::string c = root + "/tasks/0002-evil";
    REQUIRE(::symlink(w.host.c_str(), c.c_str()) == 0);
    RequireRefused(fs.CreateDirExclusive(c + "/artifacts"), c + "/artifacts", c);
    RequireRefused(fs.WriteFileAtomic(c + "/card.md", "x"), c + "/card.md", c);
    RequireRefused(fs.AppendDurable(c + "/journal.jsonl", "{}\n"), c + "/journal.jsonl", c);
    RequireRefused(fs.RemoveDir(c + "/artifacts"), c + "/artifacts", c);
  }
  SUBCASE("the root itself, swapped for a link after it was resolved") {
    REQUIRE(::rename(w.real_root.c_str(), (w.tmp.path() + "/aside").c_str()) == 0);
    REQUIRE(::symlink(w.host.c_str(), w.real_root.c_str()) == 0);
    const Status s = fs.AppendDurable(w.real_root + "/f", "{}\n");
    INFO(s.message());
    CHECK(s.code() == "ELOOP");
    CHECK(s.message().find("the devflow root " + w.real_root +
                           " was replaced by a symbolic link") != std::string::npos);
  }
  // A card.md or cache record replaced by a link: the replace renames over the link itself.
  SUBCASE("card.md -> host file: replaced, never written through") {
    const std::string p = w.card + "/card.md";
    REQUIRE(::unlink(p.c_str()) == 0);
    REQUIRE(::symlink(w.host_file.c_str(), p.c_str()) == 0);
    REQUIRE(fs.WriteFileAtomic(p, "card\n").ok());
    CHECK(fs.Kind(p).value() == FileKind::kFile);
    CHECK(Slurp(p) == std::optional<std::string>("card\n"));
  }
  w.RequireHostUntouched();
}

TEST_CASE("the OS seam reads below a devflow root through no planted symlink") {
  Planted w;
  FileSystem& fs = w.fs;
  Spit(w.card + "/journal.jsonl", "{}\n");
  Spit(w.card + "/card.md", "---\n---\n");
  Spit(w.card + "/artifacts/1-design.md", "design\n");
  REQUIRE(fs.ReadFile(w.card + "/journal.jsonl").ok());
  REQUIRE(fs.ReadFileBeneath(w.card, "artifacts/1-design.md").ok());

  SUBCASE("journal, card.md, ledger -> host file") {
    for (const std::string& p :
         {w.card + "/journal.jsonl", w.card + "/card.md", w.root + "/ledger/decisions.jsonl"}) {
      CAPTURE(p);
      ::unlink(p.c_str());
      REQUIRE(::symlink(w.host_file.c_str(), p.c_str()) == 0);
      RequireRefused(fs.ReadFile(p), p, p);
      RequireRefused(fs.ReadFileBytes(p), p, p);
      RequireRefused(fs.MapFile(p), p, p);
      // A record that is itself a link keeps ReadOwnFile's message (the cache's warned miss).
      Result<std::string> own = fs.ReadOwnFile(p);
      REQUIRE_FALSE(own.ok());
      CHECK(own.status().code() == "ELOOP");
      CHECK(own.status().message() == "open " + p + ": a symlink, not a regular file (ELOOP)");
    }
  }
  SUBCASE("tasks dir -> a host copy of the card") {
    Spit(w.host + "/0001-a/journal.jsonl", "{\"host\":1}\n");
    w.LinkDir("tasks");
    const std::string t = w.root + "/tasks";
    RequireRefused(fs.ReadFile(t + "/0001-a/journal.jsonl"), t + "/0001-a/journal.jsonl", t);
    RequireRefused(fs.ReadFileBeneath(t + "/0001-a", "journal.jsonl"), t + "/0001-a/journal.jsonl",
                   t);
    REQUIRE(::unlink((w.host + "/0001-a/journal.jsonl").c_str()) == 0);
    REQUIRE(::rmdir((w.host + "/0001-a").c_str()) == 0);
  }
  w.RequireHostUntouched();
}

// The race the check-then-open of last session lost: the append opened the ledger and waits for
// its lock (held here); meanwhile the ledger directory is moved aside and a link to a host
// directory holding a file of the same name is put in its place. Reopening by name after the
// lock (the fstat-versus-stat check of a replace) would follow the link and append to the host
// file; through the directory fd the append was made with, it lands in the file it locked.
// Issue 8: the opened root is kept and reused while its path still names that directory
// (RootFd). A root renamed away and replaced by another directory is that other directory at
// the next read and write; one replaced by a link is refused, as before.
TEST_CASE("a devflow root replaced after it was used is read and written afresh") {
  Planted w;
  FileSystem& fs = w.fs;
  const std::string card_md = w.card + "/card.md";
  REQUIRE(fs.WriteFileAtomic(card_md, "old").ok());
  REQUIRE(fs.ReadFile(card_md).value() == "old");  // the root is opened and kept

  const std::string aside = w.tmp.path() + "/old-root";
  REQUIRE(::rename(w.real_root.c_str(), aside.c_str()) == 0);
  REQUIRE(fs.CreateDirs(w.real_root + "/tasks/0001-a").ok());
  Spit(w.real_root + "/tasks/0001-a/card.md", "new");
  CHECK(fs.ReadFile(card_md).value() == "new");
  REQUIRE(fs.WriteFileAtomic(card_md, "written").ok());
  CHECK(Slurp(w.real_root + "/tasks/0001-a/card.md") == std::optional<std::string>("written"));
  CHECK(Slurp(aside + "/tasks/0001-a/card.md") == std::optional<std::string>("old"));

  // Swapped for a link to the old one: refused, not read through the kept descriptor.
  const std::string newer = w.tmp.path() + "/new-root";
  REQUIRE(::rename(w.real_root.c_str(), newer.c_str()) == 0);
  REQUIRE(::symlink(aside.c_str(), w.real_root.c_str()) == 0);
  Result<std::string> linked = fs.ReadFile(card_md);
  REQUIRE_FALSE(linked.ok());
  CHECK(linked.status().code() == "ELOOP");
}

TEST_CASE("an append waiting for its lock writes through no link planted while it waited") {
  Planted w;
  const std::string ledger = w.root + "/ledger/decisions.jsonl";
  Spit(w.real_root + "/ledger/decisions.jsonl", "{\"n\":1}\n");
  Spit(w.host + "/decisions.jsonl", "HOST\n");
  int held = ::open((w.real_root + "/ledger/decisions.jsonl").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);
  Status appended;
  std::thread appender([&] { appended = w.fs.AppendDurable(ledger, "{\"n\":2}\n"); });
  struct stat st {};
  REQUIRE(::fstat(held, &st) == 0);
  // The event: the appender's flock on this inode is queued behind ours (/proc/locks lists a
  // waiter as `N: -> FLOCK  ADVISORY  WRITE <pid> <maj>:<min>:<ino> 0 EOF`).
  const std::string waiter = " " + std::to_string(::getpid()) + " ";
  const std::string inode = ":" + std::to_string(st.st_ino) + " ";
  for (bool queued = false; !queued; std::this_thread::yield()) {
    std::optional<std::string> locks = Slurp("/proc/locks");
    REQUIRE(locks.has_value());
    for (size_t at = 0; at < locks->size() && !queued;) {
      size_t end = locks->find('\n', at);
      if (end == std::string::npos) end = locks->size();
      const std::string line = locks->substr(at, end - at);
      queued = line.find("-> FLOCK") != std::string::npos &&
               line.find(waiter) != std::string::npos && line.find(inode) != std::string::npos;
      at = end + 1;
    }
  }
  const std::string aside = w.tmp.path() + "/ledger-aside";
  REQUIRE(::rename((w.real_root + "/ledger").c_str(), aside.c_str()) == 0);
  REQUIRE(::symlink(w.host.c_str(), (w.real_root + "/ledger").c_str()) == 0);
  REQUIRE(::flock(held, LOCK_UN) == 0);
  ::close(held);
  appender.join();
  INFO(appended.message());
  CHECK(appended.ok());
  CHECK(Slurp(w.host + "/decisions.jsonl") == std::optional<std::string>("HOST\n"));
  CHECK(Slurp(aside + "/decisions.jsonl") == std::optional<std::string>("{\"n\":1}\n{\"n\":2}\n"));
  // The next append meets the link and is refused.
  RequireRefused(w.fs.AppendDurable(ledger, "{}\n"), ledger, w.root + "/ledger");
}

// trial19 5d/5e: a FIFO at a journal or ledger path below a root took the appended line (to
// whoever read the FIFO, or to nobody) while the append reported success. Below a root only a
// regular file is appended to; outside the roots the operator's choice (a pipe) still is.
TEST_CASE("the one durable append writes below a devflow root only to a regular file") {
  Planted w;
  const std::string ledger = w.root + "/ledger/decisions.jsonl";
  REQUIRE(::mkfifo((w.real_root + "/ledger/decisions.jsonl").c_str(), 0600) == 0);
  const Status refused = w.fs.AppendDurable(ledger, "{\"row\":1}\n");
  CHECK(refused.code() == "EINVAL");
  CHECK(refused.message() == "append " + ledger +
                                 ": not a regular file (EINVAL); nothing was written; a FIFO, "
                                 "socket or device there keeps no record: remove it (rm " +
                                 ledger + "), and the next append creates the file");
  // Nothing went into the FIFO: a reader opened now sees no byte waiting.
  const int reader =
      ::open((w.real_root + "/ledger/decisions.jsonl").c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  char byte = 0;
  CHECK(::read(reader, &byte, 1) <= 0);
  ::close(reader);

  // Removed, the next append creates the regular file.
  REQUIRE(::unlink((w.real_root + "/ledger/decisions.jsonl").c_str()) == 0);
  REQUIRE(w.fs.AppendDurable(ledger, "{\"row\":1}\n").ok());
  CHECK(Slurp(ledger) == std::optional<std::string>("{\"row\":1}\n"));

  // Outside every root a pipe the operator names is theirs (`--ledger /dev/stderr`).
  const std::string pipe = w.tmp.path() + "/pipe";
  REQUIRE(::mkfifo(pipe.c_str(), 0600) == 0);
  const int outside = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(outside >= 0);
  REQUIRE(w.fs.AppendDurable(pipe, "line\n").ok());
  char got[8] = {};
  CHECK(::read(outside, got, sizeof got) == 5);
  CHECK(std::string(got, 5) == "line\n");
  ::close(outside);
}

}  // namespace
}  // namespace devflow

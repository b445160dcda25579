// An editor that writes card.md in place, slowly (trial20b 1a-1): it opens the file, truncates
// it, writes the front matter and part of the new text, pauses, writes the rest. A commit in
// the pause read the file, found it holding exactly the bytes it read, and renamed its
// projection over it; the editor's later writes went to the unlinked inode (433 of 1686 bytes
// kept, 3 of 3). The one atomic replace now takes a read lease on card.md before its compare,
// which the kernel refuses while any process holds the file open for writing. Real writers
// here: an fd of the test process held open across the real binary's commit, and across a
// WriteFileAtomic of the POSIX file system.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "faults/faults.h"
#include "host/os.h"

namespace devflow::faults {
namespace {

// Writes all of `text` to `fd` (REQUIREs it).
void WriteAllTo(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    REQUIRE(n > 0);
    done += static_cast<size_t>(n);
  }
}

// The person's edit of editslow.py: the old text, a new section of 40 lines.
std::string Edited(const std::string& old) {
  std::string text = old + "\n## Edited section\n";
  for (int i = 0; i < 40; ++i) {
    text += "edited line " + std::to_string(i) + " of the person's edit\n";
  }
  return text;
}

const char kLeftAsEdited[] =
    "devflow: failed to rewrite the projection for card 0001-export-the-audit-log: card.md "
    "changed 4 times while its projection was rewritten; left as edited, its front matter may "
    "lag; the journal remains authoritative\n";

TEST_CASE("fault: a commit while an editor writes card.md in place keeps the whole edit") {
  Workspace ws("");
  GateYaml yaml;
  yaml.command = {Fixture("checkers/allow.sh")};
  ws.WriteConfig(yaml.Text());
  ws.CardInDesigning();
  const std::string card_md = ws.card_dir() + "/card.md";
  const std::string old = test::Slurp(card_md).value();
  const std::string edited = Edited(old);
  const size_t cut = old.size() + 200;  // the front matter, the old body, 200 bytes of the new
  // The editor: O_TRUNC and the first part, then the commit runs while its fd is open.
  int fd = ::open(card_md.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  REQUIRE(fd >= 0);
  WriteAllTo(fd, edited.substr(0, cut));
  auto r = ws.Gate({"move", kCard, "ready"});
  WriteAllTo(fd, edited.substr(cut));  // the rest, after the commit
  REQUIRE(::close(fd) == 0);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == CommittedOut("ok"));
  CHECK(r.err == kLeftAsEdited);
  CHECK(test::Slurp(card_md).value() == edited);
  RequireCommitted(ws, "ok");
}

TEST_CASE("WriteFileAtomic kIfUnchanged leaves a file open for writing, though its bytes match") {
  test::TempDir dir;
  const std::string path = dir / "card.md";
  test::Spit(path, "---\ntitle: One\n---\n\nhalf of an edit");
  FileSystem& fs = PosixFileSystem();
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  REQUIRE(fd >= 0);
  Status held = fs.WriteFileAtomic(path, "rendered\n", Replace::kIfUnchanged,
                                   "---\ntitle: One\n---\n\nhalf of an edit");
  WriteAllTo(fd, ", and the rest\n");
  REQUIRE(::close(fd) == 0);
  CHECK(held.code() == "ESTALE");
  CHECK(held.message() == "rename " + path + ": the file changed since it was read (ESTALE)");
  CHECK(test::Slurp(path).value() == "---\ntitle: One\n---\n\nhalf of an edit, and the rest\n");
  CHECK(test::Snapshot(dir.path()).size() == 1);  // card.md alone: no temp left behind
  // Closed, the same bytes are replaced: the lease is not refused once the writer is gone.
  Status free = fs.WriteFileAtomic(path, "rendered\n", Replace::kIfUnchanged,
                                   "---\ntitle: One\n---\n\nhalf of an edit, and the rest\n");
  CHECK(free.ok());
  CHECK(test::Slurp(path).value() == "rendered\n");
}

}  // namespace
}  // namespace devflow::faults

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "host/os.h"

namespace devflow {
namespace {

// The segment walk AbsolutePath used on every path before issue 8's fast path for paths that
// are already normal: the fast path must give exactly its result.
std::string ReferenceNormalize(const std::string& abs) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= abs.size()) {
    size_t j = abs.find('/', i);
    if (j == std::string::npos) j = abs.size();
    std::string seg = abs.substr(i, j - i);
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!seg.empty() && seg != ".") {
      parts.push_back(seg);
    }
    i = j + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

TEST_CASE("AbsolutePath and ResolveAgainst normalise every absolute path as before") {
  // Every path of up to four segments over these pieces, with and without a trailing slash.
  const std::vector<std::string> pieces = {"", ".", "..", "a", "bc", ".d", "..e", "f.", "..."};
  std::vector<std::string> paths = {"/"};
  std::vector<std::string> frontier = {""};
  for (int depth = 0; depth < 4; ++depth) {
    std::vector<std::string> next;
    for (const std::string& p : frontier) {
      for (const std::string& piece : pieces) next.push_back(p + "/" + piece);
    }
    for (const std::string& p : next) {
      paths.push_back(p);
      paths.push_back(p + "/");
    }
    frontier = std::move(next);
  }
  for (const std::string& path : paths) {
    CAPTURE(path);
    CHECK(AbsolutePath(path) == ReferenceNormalize(path));
    CHECK(ResolveAgainst("/base", path) == ReferenceNormalize(path));
  }
  CHECK(ResolveAgainst("/base/x", "../y/./z") == "/base/y/z");
  CHECK(AbsolutePath("/work/ws/.devflow/cards/0002-b/card.md") ==
        "/work/ws/.devflow/cards/0002-b/card.md");
}

}  // namespace
}  // namespace devflow

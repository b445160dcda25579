#include "host/symlinks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "host/os.h"

namespace devflow {

std::vector<std::string> SymlinksAlong(const std::string& path) {
  std::vector<std::string> links;
  std::vector<std::string> todo;  // the components still to walk, the next one last
  auto prepend = [&todo](const std::string& p) {
    std::vector<std::string> parts;
    size_t at = 0;
    while (at <= p.size()) {
      size_t end = p.find('/', at);
      if (end == std::string::npos) end = p.size();
      if (end > at) parts.push_back(p.substr(at, end - at));
      at = end + 1;
    }
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  };
  prepend(path);
  std::string done = "/";
  while (!todo.empty()) {
    const std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      done = ParentPath(done);
      continue;
    }
    std::string next = JoinPath(done, part);
    struct stat st {};
    char target[PATH_MAX];
    ssize_t n = -1;
    if (links.size() < 40 && ::lstat(next.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      n = ::readlink(next.c_str(), target, sizeof target);
    }
    if (n <= 0) {
      done = std::move(next);
      continue;
    }
    links.push_back(std::move(next));
    if (target[0] == '/') done = "/";
    prepend(std::string(target, static_cast<size_t>(n)));
  }
  return links;
}

}  // namespace devflow

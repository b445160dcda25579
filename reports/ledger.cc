// The grounding ledger: Python-compatible JSONL rows, appended under flock with one write.
#include "reports/ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "host/os.h"

namespace devflow {
namespace {

// Closes the fd on every path out of AppendLocked (the flock goes with it).
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

int OpenAppend(const std::string& path, int flags) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | flags, 0644);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace

std::string PyJsonString(std::string_view text) {
  // nlohmann's escaping with ensure_ascii off equals Python's: \" \\ \b \f \n \r \t, other
  // control characters as \u00XX, everything else raw.
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string PyJsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += PyJsonString(items[i]);
  }
  return out + "]";
}

std::string PyJsonOptional(const std::optional<std::string>& text) {
  return text ? PyJsonString(*text) : "null";
}

std::string FormatLedgerRow(const LedgerRow& row) {
  std::string out = "{\"ts\": " + PyJsonString(row.ts);
  out += ", \"label\": " + PyJsonOptional(row.label);
  out += ", \"verdict\": ";
  out += row.verified ? "\"verified\"" : "\"rejected\"";
  out += ", \"state\": " + PyJsonString(row.state);
  out += ", \"kinds\": " + PyJsonList(row.kinds);
  out += ", \"reject_reasons\": " + PyJsonList(row.reasons);
  out += ", \"rejected_claim\": " + PyJsonOptional(row.rejected_claim);
  for (const auto& [key, json] : row.extra) out += ", " + PyJsonString(key) + ": " + json;
  return out + "}\n";
}

std::string LedgerTimestamp(std::string_view iso_ms) {
  // 2026-09-16T08:00:00.000Z
  if (iso_ms.size() == 24 && iso_ms[19] == '.' && iso_ms[23] == 'Z') {
    return std::string(iso_ms.substr(0, 19)) + "+00:00";
  }
  return std::string(iso_ms);
}

Status AppendLocked(const std::string& path, std::string_view row) {
  bool created = false;
  int raw = OpenAppend(path, 0);
  if (raw < 0 && errno == ENOENT) {
    raw = OpenAppend(path, O_CREAT);
    created = raw >= 0;
  }
  if (raw < 0) return OsError(errno, "open", path);
  Fd fd(raw);

  int rc;
  do {
    rc = ::flock(fd.get(), LOCK_EX);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return OsError(errno, "lock", path);

  size_t done = 0;
  while (done < row.size()) {  // one write(2) in practice; a short one is finished under lock
    const ssize_t n = ::write(fd.get(), row.data() + done, row.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OsError(errno, "write", path);
    if (n == 0) return OsError(EIO, "write", path);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return OsError(errno, "fsync", path);
  if (::close(fd.release()) != 0) return OsError(errno, "close", path);

  if (created) {  // the new directory entry must survive a crash too
    Fd dir(::open(ParentPath(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() >= 0 && ::fsync(dir.get()) != 0 && errno != EINVAL) {
      return OsError(errno, "fsync", ParentPath(path));
    }
  }
  return Status::Ok();
}

}  // namespace devflow

// Status and Result<T>: the error values that cross every module boundary (LevelDB style).
// Exceptions never cross a module edge; a function that can fail returns one of these.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace devflow {

/// The outcome of an operation: ok, or a machine-readable `code` plus a one-line human
/// `message` that names the thing, the problem and (where there is one) the fix.
///
/// Codes in use:
///  - store rejections (upstream names, reference §2.2): "revision-mismatch", "illegal-edge",
///    "reason-required", "write-contended", "archived", "invalid-slug", "empty-title",
///    "exists", "invalid-kind", "not-found";
///  - OS errors: the errno name, e.g. "ENOENT", "EACCES", "ENOSPC" (message carries path + text);
///  - "corrupt" for a journal or file that does not decode, "usage" for bad arguments,
///    "config" for configuration problems, "fault" for a checker fault.
///
/// [[nodiscard]]: a Status that is dropped is a failure nobody handled. A caller either acts on
/// it or ignores it visibly with `IgnoreStatus(s, "why")`, so each ignored failure carries its
/// reason at the call site.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string code, std::string message) {
    Status s;
    s.ok_ = false;
    s.code_ = std::move(code);
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return ok_; }
  const std::string& code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  bool ok_ = true;
  std::string code_;
  std::string message_;
};

/// Either a value or a failed Status. `status()` of a Result holding a value is Ok.
/// [[nodiscard]] for the same reason as Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "a Result built from a Status must carry an error");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

/// Drops `status` on purpose. `why` says at the call site why its failure cannot matter there
/// (e.g. "best-effort cleanup of a temp file; the next run sweeps it"); it is not used at run
/// time, it exists to be read.
inline void IgnoreStatus(const Status& status, const char* why) {
  (void)status;
  (void)why;
}

}  // namespace devflow

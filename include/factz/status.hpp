// Errors are values: every fallible library call returns Status or Result<T>.
// The library never prints, exits or lets an exception escape.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace factz {

/// Stable error codes (values are part of the C API later; never renumber).
enum class Code : int {
  ok = 0,
  invalid_argument = 1,
  corrupt_stream = 2,
  unsupported_version = 3,
  backend_unavailable = 4,
  io = 5,
  cuda = 6,
  internal = 7,
};

const char* code_name(Code c);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::ok; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "corrupt_stream: section table truncated" style text for users.
  std::string to_string() const;

 private:
  Code code_ = Code::ok;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {Code::invalid_argument, std::move(m)}; }
inline Status corrupt_stream(std::string m) { return {Code::corrupt_stream, std::move(m)}; }
inline Status io_error(std::string m) { return {Code::io, std::move(m)}; }

/// A value or the Status explaining why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}    // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace factz

/// Return early from the enclosing function when a Status-returning call fails.
#define FACTZ_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::factz::Status factz_status_ = (expr);   \
    if (!factz_status_.ok()) return factz_status_; \
  } while (0)

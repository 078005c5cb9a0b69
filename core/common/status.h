// Errors as values. Core code never throws across its public API: every fallible call returns
// Status (no value) or Expected<T>. Messages name the file, node, tensor or pad involved so that
// a user can act on them without a debugger.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace weave {

// A failure with a human-readable message. Cheap to move; never empty on a real failure.
class Error {
 public:
  Error() = default;
  explicit Error(std::string message) : message_(std::move(message)) {}
  [[nodiscard]] const std::string& message() const { return message_; }
  // Prefixes context, e.g. err.context("model.onnx") -> "model.onnx: <message>".
  [[nodiscard]] Error context(const std::string& where) const { return Error(where + ": " + message_); }

 private:
  std::string message_;
};

// Success, or an Error. `if (!s) return s.error();`
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)), ok_(false) {}  // NOLINT: implicit by design
  [[nodiscard]] bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  [[nodiscard]] const Error& error() const { return error_; }
  [[nodiscard]] const std::string& message() const { return error_.message(); }

 private:
  Error error_;
  bool ok_ = true;
};

// A value of type T, or an Error (a small std::expected stand-in; GCC 12 has no <expected>).
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error e) : v_(std::move(e)) {}      // NOLINT: implicit by design
  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  [[nodiscard]] const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  [[nodiscard]] T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  [[nodiscard]] const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }
  [[nodiscard]] const std::string& message() const { return error().message(); }
  [[nodiscard]] Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

// Builds an Error from pieces streamed together: make_error("node ", id, ": bad axis ", axis).
template <class... Args>
[[nodiscard]] Error make_error(Args&&... args);

}  // namespace weave

#include <sstream>
namespace weave {
template <class... Args>
Error make_error(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return Error(os.str());
}
}  // namespace weave

// Propagates a failed Status/Expected from the current function.
#define WEAVE_TRY(expr)                                            \
  do {                                                             \
    auto&& weave_try_status_ = (expr);                             \
    if (!weave_try_status_.ok()) return weave_try_status_.error(); \
  } while (0)

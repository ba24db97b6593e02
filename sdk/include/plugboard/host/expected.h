// plugboard/host/expected.h: errors as values, for the runtime and for deployers.
//
// Expected<T> holds either a T or an Error; Status is Expected<void>'s stand-in. Anything
// a user can cause (a bad file, a bad option, a broken frame) is reported through these,
// never through an exception. Header-only. Cheap on success; not thread-safe to mutate.
#ifndef PLUGBOARD_HOST_EXPECTED_H_
#define PLUGBOARD_HOST_EXPECTED_H_

#include <string>
#include <utility>
#include <variant>

namespace plugboard::host {

class Error {
 public:
  // What a caller may act on without reading the message: kCancelled, the call was
  // cancelled (by its caller, a deadline or a shutdown) before it ended.
  enum class Code { kInvalid, kNotFound, kIo, kUntrusted, kCancelled };
  explicit Error(std::string message, Code code = Code::kInvalid)
      : message_(std::move(message)), code_(code) {}
  const std::string& message() const { return message_; }
  Code code() const { return code_; }

 private:
  std::string message_;
  Code code_;
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // REQUIRES: ok()
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // REQUIRES: !ok()
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

class [[nodiscard]] Status {
 public:
  static Status Ok() { return Status(); }
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  // REQUIRES: !ok()
  const Error& error() const { return error_; }

 private:
  Status() : error_(""), ok_(true) {}
  Error error_;
  bool ok_;
};

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_EXPECTED_H_

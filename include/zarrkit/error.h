// Typed errors. Every failure zarrkit reports is one of these, with a message that names
// what was being done (array, chunk key, codec) and what was wrong. Bad input never
// crashes: it becomes one of these.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace zarrkit {

enum class ErrorCode {
  kInvalidArgument,    // bad caller input or bad metadata
  kDataLoss,           // corrupt or truncated stored bytes, checksum mismatch
  kNotFound,           // no such node / key
  kUnsupported,        // a codec, data type or feature zarrkit does not implement
  kResourceExhausted,  // a size limit was exceeded (allocation, JSON depth, ...)
  kIo,                 // the store or the operating system failed
  kInternal,           // a bug in zarrkit
};

std::string_view error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

class InvalidArgumentError : public Error {
 public:
  explicit InvalidArgumentError(std::string m) : Error(ErrorCode::kInvalidArgument, std::move(m)) {}
};
class DataLossError : public Error {
 public:
  explicit DataLossError(std::string m) : Error(ErrorCode::kDataLoss, std::move(m)) {}
};
class NotFoundError : public Error {
 public:
  explicit NotFoundError(std::string m) : Error(ErrorCode::kNotFound, std::move(m)) {}
};
class UnsupportedError : public Error {
 public:
  explicit UnsupportedError(std::string m) : Error(ErrorCode::kUnsupported, std::move(m)) {}
};
class ResourceExhaustedError : public Error {
 public:
  explicit ResourceExhaustedError(std::string m)
      : Error(ErrorCode::kResourceExhausted, std::move(m)) {}
};
class IoError : public Error {
 public:
  explicit IoError(std::string m) : Error(ErrorCode::kIo, std::move(m)) {}
};
class InternalError : public Error {
 public:
  explicit InternalError(std::string m) : Error(ErrorCode::kInternal, std::move(m)) {}
};

// Throws the typed error that matches `code`.
[[noreturn]] void throw_error(ErrorCode code, std::string message);

// Rethrows `error` as the same type with "context: " in front of its message. Used by the
// engine to add the array path and chunk key to an error raised deep inside a codec.
[[noreturn]] void rethrow_with_context(const Error& error, std::string_view context);

template <typename... Args>
[[noreturn]] void fail_invalid(fmt::format_string<Args...> f, Args&&... args) {
  throw InvalidArgumentError(fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
[[noreturn]] void fail_data_loss(fmt::format_string<Args...> f, Args&&... args) {
  throw DataLossError(fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
[[noreturn]] void fail_unsupported(fmt::format_string<Args...> f, Args&&... args) {
  throw UnsupportedError(fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
[[noreturn]] void fail_not_found(fmt::format_string<Args...> f, Args&&... args) {
  throw NotFoundError(fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
[[noreturn]] void fail_resource(fmt::format_string<Args...> f, Args&&... args) {
  throw ResourceExhaustedError(fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
[[noreturn]] void fail_io(fmt::format_string<Args...> f, Args&&... args) {
  throw IoError(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace zarrkit

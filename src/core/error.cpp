#include "zarrkit/error.h"

namespace zarrkit {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kDataLoss: return "data loss";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kResourceExhausted: return "resource exhausted";
    case ErrorCode::kIo: return "I/O error";
    case ErrorCode::kInternal: return "internal error";
  }
  return "error";
}

void throw_error(ErrorCode code, std::string message) {
  switch (code) {
    case ErrorCode::kInvalidArgument: throw InvalidArgumentError(std::move(message));
    case ErrorCode::kDataLoss: throw DataLossError(std::move(message));
    case ErrorCode::kNotFound: throw NotFoundError(std::move(message));
    case ErrorCode::kUnsupported: throw UnsupportedError(std::move(message));
    case ErrorCode::kResourceExhausted: throw ResourceExhaustedError(std::move(message));
    case ErrorCode::kIo: throw IoError(std::move(message));
    case ErrorCode::kInternal: break;
  }
  throw InternalError(std::move(message));
}

void rethrow_with_context(const Error& error, std::string_view context) {
  throw_error(error.code(), fmt::format("{}: {}", context, error.what()));
}

}  // namespace zarrkit

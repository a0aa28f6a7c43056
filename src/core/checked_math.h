// Overflow-checked arithmetic for sizes derived from untrusted metadata and data.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "zarrkit/error.h"

namespace zarrkit {

inline std::optional<std::uint64_t> try_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::uint64_t> try_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Multiply/add or throw InvalidArgumentError naming `what`.
inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what = "size") {
  auto r = try_mul(a, b);
  if (!r) fail_invalid("{} overflows 64 bits ({} * {})", what, a, b);
  return *r;
}
inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what = "size") {
  auto r = try_add(a, b);
  if (!r) fail_invalid("{} overflows 64 bits ({} + {})", what, a, b);
  return *r;
}

// Converts to size_t, failing on platforms where it would narrow.
inline std::size_t to_size(std::uint64_t v, const char* what = "size") {
  if (v > std::numeric_limits<std::size_t>::max()) fail_invalid("{} too large: {}", what, v);
  return static_cast<std::size_t>(v);
}

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

}  // namespace zarrkit

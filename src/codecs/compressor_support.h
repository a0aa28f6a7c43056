// Pieces shared by the bytes->bytes compressors (gzip, zlib, zstd, lz4, bz2, lzma):
// reading their JSON configuration strictly, and a decoder output that honours the
// SizeBound of codec.h (exact size, or a ceiling never exceeded).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"

namespace zarrkit::compressor_support {

// ---- Configuration -------------------------------------------------------------------------

// Which metadata form a factory is reading; they differ in names and in required keys.
enum class ConfigForm : std::uint8_t {
  kV3,           // a v3 "configuration" object of a codec in the v3 spec ("gzip", "zstd")
  kV3Numcodecs,  // a v3 "configuration" of a "numcodecs.*" codec: numcodecs keys, all optional
  kV2,           // a whole numcodecs object, "id" included
};

// Fails with InvalidArgumentError unless `config` is an object whose keys are all in
// `allowed`. An "id" key is accepted in the numcodecs forms when it equals `numcodecs_id`
// (some writers left it in v3 configurations).
void check_keys(const nlohmann::json& config, std::initializer_list<std::string_view> allowed,
                std::string_view codec, ConfigForm form, std::string_view numcodecs_id);

// The integer at `key`, checked to lie in [min, max]; nullopt when absent or null. A value
// of another JSON type (string, float, bool) is InvalidArgumentError.
std::optional<std::int64_t> optional_int(const nlohmann::json& config, std::string_view key, std::int64_t min,
                                         std::int64_t max, std::string_view codec);
// As optional_int, but absence is InvalidArgumentError.
std::int64_t required_int(const nlohmann::json& config, std::string_view key, std::int64_t min,
                          std::int64_t max, std::string_view codec);
// The boolean at `key`; nullopt when absent or null.
std::optional<bool> optional_bool(const nlohmann::json& config, std::string_view key, std::string_view codec);

// ---- Decoder output ------------------------------------------------------------------------

// The output of a decoder, grown on demand and never past the bound. With an exact bound
// the whole expected size is allocated up front; with a ceiling the first allocation is
// the size the data claims (capped by the ceiling) or a small multiple of the input, and
// growth doubles up to the ceiling, so memory stays within the ceiling whatever the data says.
class BoundedOutput {
 public:
  BoundedOutput(SizeBound bound, std::string_view codec, std::size_t encoded_size,
                std::optional<std::uint64_t> claimed_size = std::nullopt);

  // Unused space at the end of the output, grown when full. Empty only when the output
  // has reached the bound: a decoder with more to produce must then fail_too_large().
  MutableByteView room();
  // Records that `n` bytes were written at the start of the last room().
  void produced(std::size_t n);

  std::size_t size() const { return size_; }
  std::size_t limit() const { return limit_; }
  bool full() const { return size_ == limit_; }

  // The decoded data, after checking it against an exact bound.
  Buffer finish();

  // DataLossError "decoded size exceeds ...".
  [[noreturn]] void fail_too_large() const;
  // DataLossError for output that ended before an exact bound was reached.
  [[noreturn]] void fail_too_small(std::uint64_t decoded) const;

 private:
  void grow();

  Buffer buffer_;
  std::size_t size_ = 0;
  std::size_t limit_ = 0;
  bool exact_ = false;
  std::string codec_;
};

// Checks a decoded size against the bound (for decoders that learn the size before or
// after producing the data in one call, such as lz4 and libdeflate).
void check_decoded_size(std::uint64_t decoded, SizeBound bound, std::string_view codec);

// Returns `buffer` holding its first `used` bytes: shrunk in place when little would be
// wasted, otherwise copied, so that a compressor's worst-case allocation is not kept alive.
Buffer fit_to(Buffer buffer, std::size_t used);

}  // namespace zarrkit::compressor_support

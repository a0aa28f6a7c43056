#include "codecs/compressor_support.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit::compressor_support {

void check_keys(const nlohmann::json& config, std::initializer_list<std::string_view> allowed,
                std::string_view codec, ConfigForm form, std::string_view numcodecs_id) {
  if (!config.is_object()) fail_invalid("{} codec: configuration must be an object, got {}", codec, config.dump());
  for (const auto& [key, value] : config.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    if (key == "id" && form != ConfigForm::kV3) {
      if (value.is_string() && value.get_ref<const std::string&>() == numcodecs_id) continue;
      fail_invalid("{} codec: \"id\" must be \"{}\", got {}", codec, numcodecs_id, value.dump());
    }
    std::string names;
    for (auto name : allowed) names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", name);
    fail_invalid("{} codec: unexpected configuration key \"{}\" (allowed: {})", codec, key, names);
  }
}

std::optional<std::int64_t> optional_int(const nlohmann::json& config, std::string_view key, std::int64_t min,
                                         std::int64_t max, std::string_view codec) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) {
    fail_invalid("{} codec: \"{}\" must be an integer, got {}", codec, key, it->dump());
  }
  // Unsigned values above INT64_MAX would wrap when read as int64.
  bool in_range = false;
  std::int64_t value = 0;
  if (it->is_number_unsigned()) {
    auto u = it->get<std::uint64_t>();
    in_range = u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    value = static_cast<std::int64_t>(u);
  } else {
    value = it->get<std::int64_t>();
    in_range = true;
  }
  if (!in_range || value < min || value > max) {
    fail_invalid("{} codec: \"{}\" must be from {} to {}, got {}", codec, key, min, max, it->dump());
  }
  return value;
}

std::int64_t required_int(const nlohmann::json& config, std::string_view key, std::int64_t min,
                          std::int64_t max, std::string_view codec) {
  auto value = optional_int(config, key, min, max, codec);
  if (!value) fail_invalid("{} codec: configuration needs \"{}\" (an integer from {} to {})", codec, key, min, max);
  return *value;
}

std::optional<bool> optional_bool(const nlohmann::json& config, std::string_view key, std::string_view codec) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) fail_invalid("{} codec: \"{}\" must be true or false, got {}", codec, key, it->dump());
  return it->get<bool>();
}

// ---- BoundedOutput -------------------------------------------------------------------------

namespace {
// The first allocation for a ceiling when the data claims no size: enough for typical
// compression ratios without growing, small enough not to matter when the ceiling is huge.
constexpr std::size_t kMinimumFirstAllocation = 64 * 1024;
constexpr std::size_t kFirstAllocationRatio = 4;
}  // namespace

BoundedOutput::BoundedOutput(SizeBound bound, std::string_view codec, std::size_t encoded_size,
                             std::optional<std::uint64_t> claimed_size)
    : limit_(to_size(bound.bytes, "decoded size bound")), exact_(bound.exact), codec_(codec) {
  std::size_t first = limit_;
  if (!exact_) {
    std::uint64_t guess = claimed_size.value_or(
        std::max<std::uint64_t>(kMinimumFirstAllocation, try_mul(encoded_size, kFirstAllocationRatio).value_or(limit_)));
    first = static_cast<std::size_t>(std::min<std::uint64_t>(guess, limit_));
  }
  buffer_ = Buffer::allocate(first);
}

MutableByteView BoundedOutput::room() {
  if (size_ == buffer_.size()) grow();
  return buffer_.mutable_view().subspan(size_);
}

void BoundedOutput::produced(std::size_t n) {
  if (n > buffer_.size() - size_) {
    throw InternalError(fmt::format("{} codec: decoder reported {} bytes written into {} bytes of room", codec_, n,
                                    buffer_.size() - size_));
  }
  size_ += n;
}

void BoundedOutput::grow() {
  if (buffer_.size() >= limit_) return;  // at the bound: room() comes back empty
  std::size_t doubled = buffer_.size() > limit_ / 2 ? limit_ : buffer_.size() * 2;
  std::size_t capacity = std::min(limit_, std::max(doubled, kMinimumFirstAllocation));
  Buffer bigger = Buffer::allocate(capacity);
  if (size_ != 0) std::memcpy(bigger.data(), buffer_.data(), size_);
  buffer_ = std::move(bigger);
}

Buffer BoundedOutput::finish() {
  if (exact_ && size_ != limit_) fail_too_small(size_);
  return fit_to(std::move(buffer_), size_);
}

void BoundedOutput::fail_too_large() const {
  if (exact_) fail_data_loss("{} codec: decoded size exceeds the expected {} bytes", codec_, limit_);
  fail_data_loss("{} codec: decoded size exceeds the limit of {} bytes", codec_, limit_);
}

void BoundedOutput::fail_too_small(std::uint64_t decoded) const {
  fail_data_loss("{} codec: decoded {} bytes, expected exactly {}", codec_, decoded, limit_);
}

void check_decoded_size(std::uint64_t decoded, SizeBound bound, std::string_view codec) {
  if (bound.exact && decoded < bound.bytes) {
    fail_data_loss("{} codec: decoded {} bytes, expected exactly {}", codec, decoded, bound.bytes);
  }
  if (decoded > bound.bytes) {
    fail_data_loss("{} codec: decoded size exceeds the {} of {} bytes (the data holds {})", codec,
                   bound.exact ? "expected size" : "limit", bound.bytes, decoded);
  }
}

Buffer fit_to(Buffer buffer, std::size_t used) {
  const std::size_t waste = buffer.size() - std::min(used, buffer.size());
  if (waste <= std::max<std::size_t>(64 * 1024, used / 4)) {
    buffer.shrink(used);
    return buffer;
  }
  return Buffer::copy_of(buffer.view().first(used));
}

}  // namespace zarrkit::compressor_support

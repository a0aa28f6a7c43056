#include "codecs/vlen_support.h"

#include <cstring>
#include <limits>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit {

Buffer VarLengthCodec::encode(const NDBuffer&, const ChunkSpec& spec) const {
  fail_unsupported("codec '{}' serialises variable-length elements, not {} ones: use Array::write_var", name(),
                   spec.dtype.name());
}

NDBuffer VarLengthCodec::decode(ByteView, const ChunkSpec& spec, const BufferPrototype&) const {
  fail_unsupported("codec '{}' decodes variable-length elements, not {} ones: use Array::read_var", name(),
                   spec.dtype.name());
}

namespace vlen_support {
namespace {

constexpr std::uint64_t kMaxField = std::numeric_limits<std::uint32_t>::max();

std::uint32_t load_le32(const std::byte* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);  // little-endian hosts (dtype.h)
  return v;
}

void store_le32(std::byte* p, std::uint64_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  std::memcpy(p, &u, 4);
}

bool continuation(unsigned char c) { return (c & 0xC0u) == 0x80u; }

}  // namespace

bool is_valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length;
    unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;   // no overlong forms
      if (c == 0xED) high = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;  // nothing above U+10FFFF
    } else {
      return false;
    }
    if (n - i < length || p[i + 1] < low || p[i + 1] > high) return false;
    for (std::size_t k = 2; k < length; ++k) {
      if (!continuation(p[i + k])) return false;
    }
    i += length;
  }
  return true;
}

Buffer encode_items(const std::vector<std::string>& items, std::string_view codec) {
  if (items.size() > kMaxField) {
    fail_invalid("{} codec: {} items do not fit its 32-bit item count", codec, items.size());
  }
  std::uint64_t total = 4;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].size() > kMaxField) {
      fail_invalid("{} codec: item {} has {} bytes, more than its 32-bit length field holds", codec, i,
                   items[i].size());
    }
    total = checked_add(total, 4 + items[i].size(), "vlen encoded size");
  }
  Buffer out = Buffer::allocate(to_size(total));
  std::byte* p = out.data();
  store_le32(p, items.size());
  p += 4;
  for (const std::string& item : items) {
    store_le32(p, item.size());
    p += 4;
    if (!item.empty()) std::memcpy(p, item.data(), item.size());
    p += item.size();
  }
  return out;
}

std::vector<std::string> decode_items(ByteView encoded, std::uint64_t expected_count, std::string_view codec) {
  if (encoded.size() < 4) {
    fail_data_loss("{} codec: {} bytes, too short for the 4-byte item count", codec, encoded.size());
  }
  const std::uint64_t count = load_le32(encoded.data());
  if (count != expected_count) {
    fail_data_loss("{} codec: the data holds {} items, the chunk has {} elements", codec, count, expected_count);
  }
  // Every item takes at least its 4-byte length: refuse counts the bytes cannot hold before
  // allocating anything for them.
  const std::uint64_t rest = encoded.size() - 4;
  if (count > rest / 4) {
    fail_data_loss("{} codec: {} items need at least {} bytes, only {} follow the count", codec, count,
                   count * 4, rest);
  }
  std::vector<std::string> items;
  items.reserve(static_cast<std::size_t>(count));
  std::size_t position = 4;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (encoded.size() - position < 4) {
      fail_data_loss("{} codec: the data ends before the length of item {} of {}", codec, i, count);
    }
    const std::uint32_t length = load_le32(encoded.data() + position);
    position += 4;
    if (length > encoded.size() - position) {
      fail_data_loss("{} codec: item {} claims {} bytes, only {} remain", codec, i, length,
                     encoded.size() - position);
    }
    items.emplace_back(reinterpret_cast<const char*>(encoded.data() + position), length);
    position += length;
  }
  if (position != encoded.size()) {
    fail_data_loss("{} codec: {} bytes follow the last of {} items", codec, encoded.size() - position, count);
  }
  return items;
}

nlohmann::json NumcodecsVlenCodec::to_json() const {
  // zarr-python writes (and requires) the empty configuration.
  return {{"name", name()}, {"configuration", nlohmann::json::object()}};
}

std::optional<nlohmann::json> NumcodecsVlenCodec::to_v2_json() const { return nlohmann::json{{"id", name()}}; }

void NumcodecsVlenCodec::validate(const ChunkSpec& spec) const {
  const DataTypeKind wanted = utf8_ ? DataTypeKind::kString : DataTypeKind::kVarBytes;
  if (spec.dtype.kind() != wanted) {
    fail_invalid("codec '{}' serialises {} arrays, not {}", name(), utf8_ ? "string" : "bytes", spec.dtype.name());
  }
}

Buffer NumcodecsVlenCodec::encode_var(const VarNDBuffer& chunk, const ChunkSpec& spec) const {
  validate(spec);
  if (chunk.shape() != spec.shape || chunk.dtype().kind() != spec.dtype.kind()) {
    fail_invalid("codec '{}' cannot encode a {} chunk of shape [{}]: the chunk is {} of shape [{}]", name(),
                 chunk.dtype().name(), fmt::join(chunk.shape(), ","), spec.dtype.name(), fmt::join(spec.shape, ","));
  }
  if (utf8_) {
    for (std::size_t i = 0; i < chunk.elements().size(); ++i) {
      if (!is_valid_utf8(chunk[i])) fail_invalid("codec 'vlen-utf8': element {} is not valid UTF-8", i);
    }
  }
  return encode_items(chunk.elements(), name());
}

VarNDBuffer NumcodecsVlenCodec::decode_var(ByteView encoded, const ChunkSpec& spec) const {
  validate(spec);
  std::vector<std::string> items = decode_items(encoded, checked_num_elements(spec.shape), name());
  if (utf8_) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!is_valid_utf8(items[i])) fail_data_loss("codec 'vlen-utf8': item {} is not valid UTF-8", i);
    }
  }
  return VarNDBuffer(spec.shape, spec.dtype, std::move(items));
}

std::shared_ptr<const Codec> make_vlen_codec(const nlohmann::json& config, bool utf8) {
  const char* id = utf8 ? "vlen-utf8" : "vlen-bytes";
  if (!config.is_object()) fail_invalid("{} codec: configuration must be an object, got {}", id, config.dump());
  for (const auto& [key, value] : config.items()) {
    if (key == "id" && value == id) continue;
    fail_invalid("{} codec: unexpected configuration key \"{}\"", id, key);
  }
  return std::make_shared<NumcodecsVlenCodec>(utf8);
}

}  // namespace vlen_support
}  // namespace zarrkit

// The zarr-extensions "scale_offset" codec (array->array): encodes (x - offset) * scale and
// decodes x / scale + offset, in the array's own type, which it keeps. offset and scale are
// scalars of that type in the fill-value JSON encoding (defaults 0 and 1). As in
// zarr-python 3.4: integer arithmetic is exact, and a result outside the type, or a
// division with a remainder, is an error rather than a wrapped value; float arithmetic is
// IEEE arithmetic in the type (float16 computed in float32 and rounded after each
// operation, as NumPy does), overflowing to infinity. Usually followed by cast_value to
// store a narrower type.
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/ranges.h>

#include "codecs/register.h"
#include "core/half_float.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

bool is_supported(const DataType& t) {
  return t.kind() == DataTypeKind::kInt || t.kind() == DataTypeKind::kUInt || t.kind() == DataTypeKind::kFloat;
}

// An element of an integer type as a 128-bit value, or of a float type as a double.
__int128 load_int(const std::byte* p, const DataType& t) {
  std::uint64_t raw = 0;
  std::memcpy(&raw, p, t.size());  // little-endian hosts
  if (t.kind() == DataTypeKind::kUInt) return raw;
  const unsigned shift = static_cast<unsigned>(64 - 8 * t.size());
  return static_cast<std::int64_t>(raw << shift) >> shift;
}

void store_int(std::byte* p, __int128 v, const DataType& t) {
  const auto raw = static_cast<std::uint64_t>(v);
  std::memcpy(p, &raw, t.size());
}

double load_float(const std::byte* p, const DataType& t) {
  if (t.size() == 2) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return float16_bits_to_double(h);
  }
  if (t.size() == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

void store_float(std::byte* p, double v, const DataType& t) {
  if (t.size() == 2) {
    const std::uint16_t h = double_to_float16_bits(v);
    std::memcpy(p, &h, 2);
  } else if (t.size() == 4) {
    const auto f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &v, 8);
  }
}

__int128 int_min(const DataType& t) { return t.kind() == DataTypeKind::kUInt ? 0 : -(__int128{1} << (8 * t.size() - 1)); }
__int128 int_max(const DataType& t) {
  return t.kind() == DataTypeKind::kUInt ? (__int128{1} << (8 * t.size())) - 1 : (__int128{1} << (8 * t.size() - 1)) - 1;
}

// offset and scale read as values of the array's type.
struct Parameters {
  bool is_float = false;
  __int128 offset_i = 0, scale_i = 1;
  double offset_f = 0, scale_f = 1;
};

class ScaleOffsetCodec final : public ArrayToArrayCodec {
 public:
  ScaleOffsetCodec(nlohmann::json offset, nlohmann::json scale) : offset_(std::move(offset)), scale_(std::move(scale)) {}

  std::string_view name() const override { return "scale_offset"; }

  nlohmann::json to_json() const override {
    // As zarr-python writes it: the defaults left out, and no configuration when both are.
    nlohmann::json config = nlohmann::json::object();
    if (!(offset_.is_number() && offset_ == 0)) config["offset"] = offset_;
    if (!(scale_.is_number() && scale_ == 1)) config["scale"] = scale_;
    if (config.empty()) return nlohmann::json{{"name", name()}};
    return codec_json(name(), std::move(config));
  }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    const Parameters p = parameters(decoded.dtype);
    std::vector<std::byte> fill(decoded.dtype.size());
    if (auto why = encode_one(decoded.fill_value.bytes().data(), fill.data(), decoded.dtype, p)) {
      fail_invalid("scale_offset codec: the fill value cannot be encoded: {}", *why);
    }
    return ChunkSpec{decoded.shape, decoded.dtype, FillValue::from_bytes({fill.data(), fill.size()})};
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    check_input(decoded, decoded_spec, "encode");
    const Parameters p = parameters(decoded_spec.dtype);
    NDBuffer out = NDBuffer::allocate(decoded.shape(), decoded.dtype());
    const std::size_t size = decoded.dtype().size();
    for (std::uint64_t i = 0, n = decoded.num_elements(); i < n; ++i) {
      if (auto why = encode_one(decoded.data() + i * size, out.data() + i * size, decoded.dtype(), p)) {
        fail_invalid("scale_offset codec cannot encode: {}", *why);
      }
    }
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    check_input(encoded, decoded_spec, "decode");
    const Parameters p = parameters(decoded_spec.dtype);
    NDBuffer out = NDBuffer::allocate(encoded.shape(), encoded.dtype());
    const std::size_t size = encoded.dtype().size();
    for (std::uint64_t i = 0, n = encoded.num_elements(); i < n; ++i) {
      if (auto why = decode_one(encoded.data() + i * size, out.data() + i * size, encoded.dtype(), p)) {
        fail_data_loss("scale_offset codec cannot decode a stored value: {}", *why);
      }
    }
    return out;
  }

 private:
  Parameters parameters(const DataType& t) const {
    if (!is_supported(t)) {
      fail_invalid("scale_offset codec only works on integer and floating-point data, not {}", t.name());
    }
    auto value = [&](const nlohmann::json& json, const char* key) {
      try {
        return parse_fill_value_v3(json, t);
      } catch (const Error& e) {
        fail_invalid("scale_offset codec: {} {} is not a {} value: {}", key, json.dump(), t.name(), e.what());
      }
    };
    const FillValue offset = value(offset_, "offset");
    const FillValue scale = value(scale_, "scale");
    Parameters p;
    p.is_float = t.kind() == DataTypeKind::kFloat;
    if (p.is_float) {
      p.offset_f = load_float(offset.bytes().data(), t);
      p.scale_f = load_float(scale.bytes().data(), t);
    } else {
      p.offset_i = load_int(offset.bytes().data(), t);
      p.scale_i = load_int(scale.bytes().data(), t);
    }
    if (p.is_float ? p.scale_f == 0 : p.scale_i == 0) fail_invalid("scale_offset codec: scale must not be zero");
    return p;
  }

  // One arithmetic operation's result in type `t` (float16: from float32, as NumPy does).
  static double in_type(double v, const DataType& t) {
    if (t.size() == 8) return v;
    const auto single = static_cast<float>(v);
    return t.size() == 4 ? double{single} : float16_bits_to_double(double_to_float16_bits(single));
  }

  static std::optional<std::string> encode_one(const std::byte* in, std::byte* out, const DataType& t,
                                               const Parameters& p) {
    if (p.is_float) {
      const double x = load_float(in, t);
      store_float(out, in_type(in_type(x - p.offset_f, t) * p.scale_f, t), t);
      return std::nullopt;
    }
    const __int128 x = load_int(in, t);
    __int128 product;
    // (x - offset) fits 128 bits; the product may not, and is then out of range anyway.
    if (__builtin_mul_overflow(x - p.offset_i, p.scale_i, &product) || product < int_min(t) || product > int_max(t)) {
      return fmt::format("({} - offset) * scale is outside the range of {}", static_cast<double>(x), t.name());
    }
    store_int(out, product, t);
    return std::nullopt;
  }

  static std::optional<std::string> decode_one(const std::byte* in, std::byte* out, const DataType& t,
                                               const Parameters& p) {
    if (p.is_float) {
      const double x = load_float(in, t);
      store_float(out, in_type(in_type(x / p.scale_f, t) + p.offset_f, t), t);
      return std::nullopt;
    }
    const __int128 x = load_int(in, t);
    if (x % p.scale_i != 0) {
      return fmt::format("{} is not a multiple of the scale, so the result is not a {}", static_cast<double>(x),
                         t.name());
    }
    const __int128 result = x / p.scale_i + p.offset_i;
    if (result < int_min(t) || result > int_max(t)) {
      return fmt::format("{} / scale + offset is outside the range of {}", static_cast<double>(x), t.name());
    }
    store_int(out, result, t);
    return std::nullopt;
  }

  static void check_input(const NDBuffer& array, const ChunkSpec& spec, const char* what) {
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("scale_offset codec cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
    if (array.shape() != spec.shape || !(array.dtype() == spec.dtype)) {
      fail_invalid("scale_offset codec cannot {} a {} array of shape [{}]: expected {} of shape [{}]", what,
                   array.dtype().name(), fmt::join(array.shape(), ","), spec.dtype.name(),
                   fmt::join(spec.shape, ","));
    }
  }

  nlohmann::json offset_;
  nlohmann::json scale_;
};

std::shared_ptr<const Codec> make_scale_offset(const nlohmann::json& config, const CodecContext& context) {
  if (!config.is_object()) fail_invalid("scale_offset codec: configuration must be an object, got {}", config.dump());
  nlohmann::json offset = 0;
  nlohmann::json scale = 1;
  for (const auto& [key, value] : config.items()) {
    if (key != "offset" && key != "scale") fail_invalid("scale_offset codec: unexpected configuration key \"{}\"", key);
    if (!value.is_number() && !value.is_string()) {
      fail_invalid("scale_offset codec: \"{}\" must be a number or a string, got {}", key, value.dump());
    }
    (key == "offset" ? offset : scale) = value;
  }
  (void)context;  // offset and scale are read as the input's type, known from the chunk spec
  return std::make_shared<ScaleOffsetCodec>(std::move(offset), std::move(scale));
}

}  // namespace

void register_scale_offset_codec(CodecRegistry& registry) { registry.add_v3("scale_offset", make_scale_offset); }

}  // namespace zarrkit

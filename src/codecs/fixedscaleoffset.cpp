// The numcodecs "fixedscaleoffset" codec (array->array, lossy): stores
// round((x - offset) * scale) in `astype` (default: `dtype`) and reads back
// stored / scale + offset in `dtype`. The arithmetic follows NumPy 2 exactly, because the
// bytes must equal what numcodecs writes: offset and scale are Python scalars, so they take
// the array's type where they can (a float32 array computes in float32, a float16 array in
// float16, rounding after each operation; an integer array with an integer offset
// computes, wrapping, in its own integer type) and float64 otherwise;
// rounding is half to even; integer results of a float division are float64.
// Registered as v2 "fixedscaleoffset" and v3 "numcodecs.fixedscaleoffset" (whose "dtype"
// may be left out: it is then the array's type).
#include <cmath>
#include <cstring>

#include <fmt/ranges.h>

#include "codecs/numpy_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

namespace np = numpy_support;
using Scalar = np::Scalar;

bool same_element_type(const DataType& a, const DataType& b) { return a.kind() == b.kind() && a.size() == b.size(); }

// offset or scale: a JSON number that keeps whether it was written as an integer (as the
// Python int or float numcodecs receives).
struct PythonNumber {
  nlohmann::json json;
  bool is_int = false;
  bool negative = false;
  std::uint64_t magnitude = 0;  // |value| for integers
  double value = 0;             // the value as a float64

  static PythonNumber parse(const nlohmann::json& j, const char* key) {
    PythonNumber n;
    n.json = j;
    if (j.is_number_unsigned()) {
      n.is_int = true;
      n.magnitude = j.get<std::uint64_t>();
    } else if (j.is_number_integer()) {
      const auto v = j.get<std::int64_t>();
      n.is_int = true;
      n.negative = v < 0;
      n.magnitude = n.negative ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    } else if (!j.is_number_float()) {
      fail_invalid("fixedscaleoffset codec: \"{}\" must be a number, got {}", key, j.dump());
    }
    n.value = j.get<double>();
    return n;
  }

  // The integer as the bits of a 64-bit two's complement value.
  std::uint64_t bits() const { return negative ? 0 - magnitude : magnitude; }

  // NumPy 2 refuses a Python int that does not fit the array's integer type.
  void require_fits(const DataType& t, const char* key) const {
    const unsigned width = static_cast<unsigned>(8 * t.size());
    bool fits;
    if (t.kind() == DataTypeKind::kUInt) {
      fits = !negative && (width == 64 || magnitude < (std::uint64_t{1} << width));
    } else {
      const std::uint64_t limit = std::uint64_t{1} << (width - 1);  // |min|; max is limit - 1
      fits = negative ? magnitude <= limit : magnitude < limit;
    }
    if (!fits) {
      fail_invalid("fixedscaleoffset codec: {} {} does not fit the {} data it is applied to (NumPy refuses it)",
                   key, json.dump(), t.name());
    }
  }
};

// Truncates 64 bits to the width of integer type `t`, as NumPy's wrapping arithmetic does.
Scalar wrap_to(std::uint64_t bits, const DataType& t) {
  std::byte buffer[8];
  std::memcpy(buffer, &bits, 8);
  return np::load(buffer, t);
}

std::uint64_t integer_bits(const Scalar& s) {
  return s.kind == Scalar::Kind::kSigned ? static_cast<std::uint64_t>(s.i) : s.u;
}

double as_double(const Scalar& s) {
  return s.kind == Scalar::Kind::kFloat ? s.f : s.kind == Scalar::Kind::kSigned ? static_cast<double>(s.i)
                                                                               : static_cast<double>(s.u);
}

Scalar float_scalar(double v) {
  Scalar s;
  s.kind = Scalar::Kind::kFloat;
  s.f = v;
  return s;
}

bool is_supported(const DataType& t) { return np::is_integer(t) || np::is_float(t); }

DataType supported_dtype(const nlohmann::json& value, const char* key) {
  DataType t = np::parse_dtype(value, "fixedscaleoffset", key);
  if (!is_supported(t)) {
    fail_unsupported("fixedscaleoffset codec: \"{}\" {}: only integer and float types are supported", key,
                     value.dump());
  }
  return t;
}

class FixedScaleOffsetCodec final : public ArrayToArrayCodec {
 public:
  FixedScaleOffsetCodec(PythonNumber offset, PythonNumber scale, nlohmann::json dtype_json, nlohmann::json astype_json,
                        const DataType& array_dtype)
      : offset_(std::move(offset)),
        scale_(std::move(scale)),
        dtype_json_(std::move(dtype_json)),
        astype_json_(std::move(astype_json)) {
    if (dtype_json_.is_null()) {
      if (!is_supported(array_dtype)) {
        fail_unsupported("fixedscaleoffset codec: only integer and float arrays are supported, not {}",
                         array_dtype.name());
      }
      dtype_ = array_dtype;
    } else {
      dtype_ = supported_dtype(dtype_json_, "dtype");
    }
    astype_ = astype_json_.is_null() ? dtype_ : supported_dtype(astype_json_, "astype");
  }

  std::string_view name() const override { return "numcodecs.fixedscaleoffset"; }

  nlohmann::json to_json() const override {
    nlohmann::json config = {{"offset", offset_.json}, {"scale", scale_.json}};
    if (!dtype_json_.is_null()) config["dtype"] = dtype_json_;
    if (!astype_json_.is_null()) config["astype"] = astype_json_;
    return codec_json(name(), std::move(config));
  }

  std::optional<nlohmann::json> to_v2_json() const override {
    const nlohmann::json dtype = dtype_json_.is_null() ? dtype_to_v2_json(dtype_) : dtype_json_;
    return nlohmann::json{{"id", "fixedscaleoffset"}, {"offset", offset_.json}, {"scale", scale_.json},
                          {"dtype", dtype}, {"astype", astype_json_.is_null() ? dtype : astype_json_}};
  }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    if (!same_element_type(decoded.dtype, dtype_)) {
      fail_invalid("fixedscaleoffset codec configured for {} cannot work on {} chunks", dtype_.name(),
                   decoded.dtype.name());
    }
    if (same_element_type(dtype_, astype_)) return decoded;
    return ChunkSpec{decoded.shape, astype_, FillValue::zero(astype_)};
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    check_input(decoded, decoded_spec.shape, dtype_, "encode");
    const bool integer = np::is_integer(dtype_);
    if (integer && offset_.is_int) offset_.require_fits(dtype_, "offset");
    if (integer && offset_.is_int && scale_.is_int) scale_.require_fits(dtype_, "scale");
    NDBuffer out = NDBuffer::allocate(decoded.shape(), astype_);
    const std::uint64_t n = decoded.num_elements();
    const std::byte* src = decoded.data();
    std::byte* dst = out.data();
    for (std::uint64_t i = 0; i < n; ++i, src += dtype_.size(), dst += astype_.size()) {
      np::store(dst, encode_one(np::load(src, dtype_)), astype_);
    }
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    encoded_spec(decoded_spec);
    check_input(encoded, decoded_spec.shape, astype_, "decode");
    NDBuffer out = NDBuffer::allocate(decoded_spec.shape, decoded_spec.dtype);
    const std::uint64_t n = encoded.num_elements();
    const std::byte* src = encoded.data();
    std::byte* dst = out.data();
    const bool is_float = astype_.kind() == DataTypeKind::kFloat;
    const bool single = is_float && astype_.size() == 4;
    const bool half = is_float && astype_.size() == 2;
    for (std::uint64_t i = 0; i < n; ++i, src += astype_.size(), dst += dtype_.size()) {
      const Scalar stored = np::load(src, astype_);
      double value;
      if (single) {
        value = static_cast<float>(stored.f) / static_cast<float>(scale_.value) + static_cast<float>(offset_.value);
      } else if (half) {
        const float quotient = np::round_to_float16(static_cast<float>(stored.f) / np::round_to_float16(scale_.value));
        value = np::round_to_float16(quotient + np::round_to_float16(offset_.value));
      } else {
        // float64 data, or integers: NumPy's true division of integers gives float64.
        value = (is_float ? stored.f : as_double(stored)) / scale_.value + offset_.value;
      }
      np::store(dst, float_scalar(value), dtype_);
    }
    return out;
  }

 private:
  Scalar encode_one(const Scalar& x) const {
    if (dtype_.kind() == DataTypeKind::kFloat) {
      if (dtype_.size() == 4) {
        const float diff = static_cast<float>(x.f) - static_cast<float>(offset_.value);
        return float_scalar(std::nearbyint(diff * static_cast<float>(scale_.value)));
      }
      if (dtype_.size() == 2) {
        const float diff = np::round_to_float16(static_cast<float>(x.f) - np::round_to_float16(offset_.value));
        // Rounding to an integer keeps a float16 value a float16 value.
        return float_scalar(std::nearbyint(np::round_to_float16(diff * np::round_to_float16(scale_.value))));
      }
      return float_scalar(std::nearbyint((x.f - offset_.value) * scale_.value));
    }
    // Integer data: (x - offset) stays in the array's type for an integer offset.
    if (!offset_.is_int) return float_scalar(std::nearbyint((as_double(x) - offset_.value) * scale_.value));
    const Scalar diff = wrap_to(integer_bits(x) - offset_.bits(), dtype_);
    if (!scale_.is_int) return float_scalar(std::nearbyint(as_double(diff) * scale_.value));
    return wrap_to(integer_bits(diff) * scale_.bits(), dtype_);
  }

  static void check_input(const NDBuffer& array, const Shape& shape, const DataType& dtype, const char* what) {
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("fixedscaleoffset codec cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
    if (array.shape() != shape || !same_element_type(array.dtype(), dtype)) {
      fail_invalid("fixedscaleoffset codec cannot {} a {} array of shape [{}]: expected {} of shape [{}]", what,
                   array.dtype().name(), fmt::join(array.shape(), ","), dtype.name(), fmt::join(shape, ","));
    }
  }

  PythonNumber offset_;
  PythonNumber scale_;
  nlohmann::json dtype_json_;   // null when absent (v3)
  nlohmann::json astype_json_;  // null when absent
  DataType dtype_;
  DataType astype_;
};

std::shared_ptr<const Codec> make_fixedscaleoffset(const nlohmann::json& config, const CodecContext& context,
                                                   bool v2) {
  if (!config.is_object()) {
    fail_invalid("fixedscaleoffset codec: configuration must be an object, got {}", config.dump());
  }
  for (const auto& [key, value] : config.items()) {
    if (key == "offset" || key == "scale" || key == "dtype" || key == "astype") continue;
    if (key == "id" && value == "fixedscaleoffset") continue;
    fail_invalid("fixedscaleoffset codec: unexpected configuration key \"{}\"", key);
  }
  auto member = [&](const char* key, bool required) -> nlohmann::json {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) {
      if (required) fail_invalid("fixedscaleoffset codec needs \"{}\"", key);
      return nullptr;
    }
    return *it;
  };
  PythonNumber offset = PythonNumber::parse(member("offset", true), "offset");
  PythonNumber scale = PythonNumber::parse(member("scale", true), "scale");
  return std::make_shared<FixedScaleOffsetCodec>(std::move(offset), std::move(scale), member("dtype", v2),
                                                 member("astype", false), context.dtype);
}

}  // namespace

void register_fixedscaleoffset_codec(CodecRegistry& registry) {
  registry.add_v2("fixedscaleoffset",
                  [](const nlohmann::json& c, const CodecContext& x) { return make_fixedscaleoffset(c, x, true); });
  registry.add_v3("numcodecs.fixedscaleoffset",
                  [](const nlohmann::json& c, const CodecContext& x) { return make_fixedscaleoffset(c, x, false); });
}

}  // namespace zarrkit

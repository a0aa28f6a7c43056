// The numcodecs "quantize" codec (array->array, lossy): keeps about `digits` decimal
// digits of float data by rounding to a multiple of a power of two,
// round(x * 2^b) / 2^b, and stores the result in `astype` (default: `dtype`). Decoding only
// converts back to `dtype`. The number of bits b and the arithmetic (in the array's float
// type, float16 included) follow numcodecs and NumPy exactly so that the bytes match.
// Registered as v2 "quantize" and v3 "numcodecs.quantize" (whose "dtype" may be left out:
// the array's type).
#include <cmath>

#include <fmt/ranges.h>

#include "codecs/numpy_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

namespace np = numpy_support;

// Python raises OverflowError computing 10.0 ** -digits beyond about 308; stay well inside.
constexpr std::int64_t kMaxDigits = 300;

bool same_element_type(const DataType& a, const DataType& b) { return a.kind() == b.kind() && a.size() == b.size(); }

DataType float_dtype(const nlohmann::json& value, const char* key) {
  DataType t = np::parse_dtype(value, "quantize", key);
  if (t.kind() != DataTypeKind::kFloat) {
    fail_invalid("quantize codec: \"{}\" {} must be a floating point type", key, value.dump());
  }
  if (!np::is_float(t)) fail_unsupported("quantize codec: \"{}\" {}: only float16, float32 and float64 are supported",
                                         key, value.dump());
  return t;
}

// The scale numcodecs computes, step by step in Python floats (the same libm calls).
double quantize_scale(std::int64_t digits) {
  const double precision = std::pow(10.0, static_cast<double>(-digits));
  double exponent = std::log10(precision);
  exponent = exponent < 0 ? std::floor(exponent) : std::ceil(exponent);
  const double bits = std::ceil(std::log2(std::pow(10.0, -exponent)));
  return std::pow(2.0, bits);
}

class QuantizeCodec final : public ArrayToArrayCodec {
 public:
  QuantizeCodec(std::int64_t digits, nlohmann::json dtype_json, nlohmann::json astype_json, const DataType& array_dtype)
      : digits_(digits), dtype_json_(std::move(dtype_json)), astype_json_(std::move(astype_json)) {
    if (dtype_json_.is_null()) {
      if (array_dtype.kind() != DataTypeKind::kFloat) {
        fail_invalid("quantize codec works on floating point arrays, not {}", array_dtype.name());
      }
      if (!np::is_float(array_dtype)) {
        fail_unsupported("quantize codec: only float16, float32 and float64 arrays are supported, not {}",
                         array_dtype.name());
      }
      dtype_ = array_dtype;
    } else {
      dtype_ = float_dtype(dtype_json_, "dtype");
    }
    astype_ = astype_json_.is_null() ? dtype_ : float_dtype(astype_json_, "astype");
    scale_ = quantize_scale(digits_);
  }

  std::string_view name() const override { return "numcodecs.quantize"; }

  nlohmann::json to_json() const override {
    nlohmann::json config = {{"digits", digits_}};
    if (!dtype_json_.is_null()) config["dtype"] = dtype_json_;
    if (!astype_json_.is_null()) config["astype"] = astype_json_;
    return codec_json(name(), std::move(config));
  }

  std::optional<nlohmann::json> to_v2_json() const override {
    const nlohmann::json dtype = dtype_json_.is_null() ? dtype_to_v2_json(dtype_) : dtype_json_;
    return nlohmann::json{
        {"id", "quantize"}, {"digits", digits_}, {"dtype", dtype}, {"astype", astype_json_.is_null() ? dtype : astype_json_}};
  }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    if (!same_element_type(decoded.dtype, dtype_)) {
      fail_invalid("quantize codec configured for {} cannot work on {} chunks", dtype_.name(), decoded.dtype.name());
    }
    if (same_element_type(dtype_, astype_)) return decoded;
    return ChunkSpec{decoded.shape, astype_, FillValue::zero(astype_)};
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    check_input(decoded, decoded_spec.shape, dtype_, "encode");
    NDBuffer out = NDBuffer::allocate(decoded.shape(), astype_);
    const std::uint64_t n = decoded.num_elements();
    const std::byte* src = decoded.data();
    std::byte* dst = out.data();
    np::Scalar value;
    value.kind = np::Scalar::Kind::kFloat;
    for (std::uint64_t i = 0; i < n; ++i, src += dtype_.size(), dst += astype_.size()) {
      const double x = np::load(src, dtype_).f;
      if (dtype_.size() == 2) {
        // float16: the scale rounds to float16 (2^16 and up overflow to infinity, as in NumPy)
        // and each operation rounds back to float16.
        const float scale = np::round_to_float16(scale_);
        value.f = np::round_to_float16(std::nearbyint(np::round_to_float16(scale * static_cast<float>(x))) / scale);
      } else if (dtype_.size() == 4) {
        const float scale = static_cast<float>(scale_);  // NumPy casts the Python float to float32
        value.f = std::nearbyint(scale * static_cast<float>(x)) / scale;
      } else {
        value.f = std::nearbyint(scale_ * x) / scale_;
      }
      np::store(dst, value, astype_);
    }
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    encoded_spec(decoded_spec);
    check_input(encoded, decoded_spec.shape, astype_, "decode");
    NDBuffer out = NDBuffer::allocate(decoded_spec.shape, decoded_spec.dtype);
    np::cast_elements(encoded.data(), astype_, out.data(), dtype_, encoded.num_elements());
    return out;
  }

 private:
  static void check_input(const NDBuffer& array, const Shape& shape, const DataType& dtype, const char* what) {
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("quantize codec cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
    if (array.shape() != shape || !same_element_type(array.dtype(), dtype)) {
      fail_invalid("quantize codec cannot {} a {} array of shape [{}]: expected {} of shape [{}]", what,
                   array.dtype().name(), fmt::join(array.shape(), ","), dtype.name(), fmt::join(shape, ","));
    }
  }

  std::int64_t digits_;
  nlohmann::json dtype_json_;   // null when absent (v3)
  nlohmann::json astype_json_;  // null when absent
  DataType dtype_;
  DataType astype_;
  double scale_ = 1;
};

std::shared_ptr<const Codec> make_quantize(const nlohmann::json& config, const CodecContext& context, bool v2) {
  if (!config.is_object()) fail_invalid("quantize codec: configuration must be an object, got {}", config.dump());
  for (const auto& [key, value] : config.items()) {
    if (key == "digits" || key == "dtype" || key == "astype") continue;
    if (key == "id" && value == "quantize") continue;
    fail_invalid("quantize codec: unexpected configuration key \"{}\"", key);
  }
  auto digits = config.find("digits");
  if (digits == config.end()) fail_invalid("quantize codec needs \"digits\"");
  if (!digits->is_number_integer()) fail_invalid("quantize codec: \"digits\" must be an integer, got {}", digits->dump());
  const auto value = digits->get<std::int64_t>();
  if (digits->is_number_unsigned() && digits->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxDigits)) {
    fail_invalid("quantize codec: \"digits\" {} is out of range [-{}, {}]", digits->dump(), kMaxDigits, kMaxDigits);
  }
  if (value < -kMaxDigits || value > kMaxDigits) {
    fail_invalid("quantize codec: \"digits\" {} is out of range [-{}, {}]", value, kMaxDigits, kMaxDigits);
  }
  auto member = [&](const char* key) -> nlohmann::json {
    auto it = config.find(key);
    return it == config.end() ? nlohmann::json(nullptr) : *it;
  };
  nlohmann::json dtype = member("dtype");
  if (dtype.is_null() && v2) fail_invalid("quantize codec needs \"dtype\"");
  return std::make_shared<QuantizeCodec>(value, std::move(dtype), member("astype"), context.dtype);
}

}  // namespace

void register_quantize_codec(CodecRegistry& registry) {
  registry.add_v2("quantize", [](const nlohmann::json& c, const CodecContext& x) { return make_quantize(c, x, true); });
  registry.add_v3("numcodecs.quantize",
                  [](const nlohmann::json& c, const CodecContext& x) { return make_quantize(c, x, false); });
}

}  // namespace zarrkit

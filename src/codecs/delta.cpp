// The numcodecs "delta" codec (array->array): the chunk, flattened in its memory order,
// is stored as its first element followed by the differences between neighbours, in the
// type `astype` (default: `dtype`); decoding is the running sum. As in NumPy, integer
// differences and sums wrap, and a change of integer width truncates or extends the value
// (sign-extending signed sources). Registered as v2 "delta" and v3 "numcodecs.delta".
#include <cstring>
#include <string>

#include <fmt/ranges.h>

#include "codecs/delta.h"
#include "codecs/register.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

bool is_integer(const DataType& t) { return t.kind() == DataTypeKind::kInt || t.kind() == DataTypeKind::kUInt; }
bool is_float(const DataType& t) {
  return t.kind() == DataTypeKind::kFloat && (t.size() == 4 || t.size() == 8);
}

// Same element in memory, whatever byte order v2 records for storage.
bool same_element_type(const DataType& a, const DataType& b) { return a.kind() == b.kind() && a.size() == b.size(); }

// An integer element (native order) widened to 64 bits as NumPy casts it.
std::uint64_t load_integer(const std::byte* p, const DataType& t) {
  std::uint64_t value = 0;
  std::memcpy(&value, p, t.size());  // little-endian hosts (dtype.h)
  const unsigned bits = static_cast<unsigned>(8 * t.size());
  if (t.kind() == DataTypeKind::kInt && bits < 64 && ((value >> (bits - 1)) & 1u) != 0) {
    value |= ~std::uint64_t{0} << bits;
  }
  return value;
}

void store_integer(std::byte* p, std::uint64_t value, const DataType& t) { std::memcpy(p, &value, t.size()); }

// Truncates a 64-bit value to the width of `t` and widens it back as NumPy would.
std::uint64_t wrap_to(std::uint64_t value, const DataType& t) {
  std::byte buffer[8];
  store_integer(buffer, value, t);
  return load_integer(buffer, t);
}

double load_float(const std::byte* p, const DataType& t) {
  if (t.size() == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

void store_float(std::byte* p, double value, const DataType& t) {
  if (t.size() == 4) {
    auto f = static_cast<float>(value);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &value, 8);
  }
}

// Arithmetic in the precision of `t` (float32 differences are rounded to float32).
double round_to(double value, const DataType& t) { return t.size() == 4 ? static_cast<double>(static_cast<float>(value)) : value; }

// "dtype"/"astype" as numcodecs writes them ("<i4") or, in v3 configurations, a v3 name ("int32").
DataType parse_numcodecs_dtype(const nlohmann::json& value, const char* key) {
  if (!value.is_string()) fail_invalid("delta codec: \"{}\" must be a data type string, got {}", key, value.dump());
  DataType parsed;
  try {
    const std::string& s = value.get_ref<const std::string&>();
    parsed = (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|')) ? parse_dtype_v2(value) : parse_dtype_v3(value);
  } catch (const Error&) {
    fail_invalid("delta codec: \"{}\" {} is not a data type zarrkit knows", key, value.dump());
  }
  if (!is_integer(parsed) && !is_float(parsed)) {
    fail_invalid("delta codec: \"{}\" {} must be an integer or float32/float64 type", key, value.dump());
  }
  return parsed;
}

class DeltaCodec final : public ArrayToArrayCodec {
 public:
  DeltaCodec(nlohmann::json dtype_json, nlohmann::json astype_json)
      : dtype_json_(std::move(dtype_json)), astype_json_(std::move(astype_json)) {
    dtype_ = parse_numcodecs_dtype(dtype_json_, "dtype");
    astype_ = astype_json_.is_null() ? dtype_ : parse_numcodecs_dtype(astype_json_, "astype");
    if (is_integer(dtype_) != is_integer(astype_)) {
      fail_unsupported("delta codec: converting between integer and float ({} -> {}) is not supported",
                       dtype_.name(), astype_.name());
    }
  }

  std::string_view name() const override { return "numcodecs.delta"; }
  DeltaCodecTypes types() const { return {dtype_, astype_}; }

  nlohmann::json to_json() const override {
    nlohmann::json config = {{"dtype", dtype_json_}};
    if (!astype_json_.is_null()) config["astype"] = astype_json_;
    return codec_json(name(), std::move(config));
  }

  std::optional<nlohmann::json> to_v2_json() const override {
    nlohmann::json entry = {{"id", "delta"}, {"dtype", dtype_json_}};
    if (!astype_json_.is_null()) entry["astype"] = astype_json_;
    return entry;
  }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    if (!same_element_type(decoded.dtype, dtype_)) {
      fail_invalid("delta codec configured for {} cannot work on {} chunks", dtype_.name(), decoded.dtype.name());
    }
    if (same_element_type(dtype_, astype_)) return decoded;
    return ChunkSpec{decoded.shape, astype_, FillValue::zero(astype_)};
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    const ChunkSpec encoded_spec_ = encoded_spec(decoded_spec);
    check_input(decoded, decoded_spec, "encode");
    NDBuffer out = NDBuffer::allocate(decoded_spec.shape, encoded_spec_.dtype);
    const std::uint64_t n = decoded.num_elements();
    const std::byte* src = decoded.data();
    std::byte* dst = out.data();
    const std::size_t in_size = dtype_.size();
    const std::size_t out_size = astype_.size();
    if (is_integer(dtype_)) {
      std::uint64_t previous = 0;
      for (std::uint64_t i = 0; i < n; ++i, src += in_size, dst += out_size) {
        const std::uint64_t current = load_integer(src, dtype_);
        // The difference wraps in `dtype`, then is cast to `astype`.
        store_integer(dst, i == 0 ? current : wrap_to(current - previous, dtype_), astype_);
        previous = current;
      }
    } else {
      double previous = 0;
      for (std::uint64_t i = 0; i < n; ++i, src += in_size, dst += out_size) {
        const double current = load_float(src, dtype_);
        store_float(dst, i == 0 ? current : round_to(current - previous, dtype_), astype_);
        previous = current;
      }
    }
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    const ChunkSpec expected = encoded_spec(decoded_spec);
    check_input(encoded, expected, "decode");
    NDBuffer out = NDBuffer::allocate(decoded_spec.shape, decoded_spec.dtype);
    const std::uint64_t n = encoded.num_elements();
    const std::byte* src = encoded.data();
    std::byte* dst = out.data();
    const std::size_t in_size = astype_.size();
    const std::size_t out_size = dtype_.size();
    if (is_integer(dtype_)) {
      std::uint64_t sum = 0;  // wraps modulo 2^64, then truncated to `dtype`: the same as wrapping there
      for (std::uint64_t i = 0; i < n; ++i, src += in_size, dst += out_size) {
        sum += load_integer(src, astype_);
        store_integer(dst, sum, dtype_);
      }
    } else {
      double sum = 0;  // NumPy accumulates in the encoded type
      for (std::uint64_t i = 0; i < n; ++i, src += in_size, dst += out_size) {
        sum = round_to(sum + load_float(src, astype_), astype_);
        store_float(dst, sum, dtype_);
      }
    }
    return out;
  }

 private:
  static void check_input(const NDBuffer& array, const ChunkSpec& expected, const char* what) {
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("delta codec cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
    if (array.shape() != expected.shape || !same_element_type(array.dtype(), expected.dtype)) {
      fail_invalid("delta codec cannot {} a {} array of shape [{}]: expected {} of shape [{}]", what,
                   array.dtype().name(), fmt::join(array.shape(), ","), expected.dtype.name(),
                   fmt::join(expected.shape, ","));
    }
  }

  nlohmann::json dtype_json_;
  nlohmann::json astype_json_;  // null when absent
  DataType dtype_;
  DataType astype_;
};

std::shared_ptr<const Codec> make_delta(const nlohmann::json& config, const CodecContext&) {
  if (!config.is_object()) fail_invalid("delta codec: configuration must be an object, got {}", config.dump());
  for (const auto& [key, value] : config.items()) {
    if (key == "dtype" || key == "astype") continue;
    if (key == "id" && value == "delta") continue;
    fail_invalid("delta codec: unexpected configuration key \"{}\"", key);
  }
  auto dtype = config.find("dtype");
  if (dtype == config.end()) fail_invalid("delta codec needs \"dtype\"");
  auto astype = config.find("astype");
  nlohmann::json astype_json = astype == config.end() ? nlohmann::json(nullptr) : *astype;
  return std::make_shared<DeltaCodec>(*dtype, std::move(astype_json));
}

}  // namespace

DeltaCodecTypes delta_codec_types(const Codec& codec) {
  const auto* delta = dynamic_cast<const DeltaCodec*>(&codec);
  if (delta == nullptr) throw InternalError(fmt::format("'{}' is not the delta codec", codec.name()));
  return delta->types();
}

void register_delta_codec(CodecRegistry& registry) {
  registry.add_v2("delta", make_delta);
  registry.add_v3("numcodecs.delta", make_delta);
}

}  // namespace zarrkit

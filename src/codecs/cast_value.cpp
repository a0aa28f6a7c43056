// The zarr-extensions "cast_value" codec (array->array): stores each element converted by
// value to `data_type` and converts it back when reading, with a rounding mode, an
// out-of-range rule (error, clamp, wrap) and optional scalar maps for special values.
// The stored bytes must equal zarr-python 3.4's, which casts through cast-value-rs 0.5, so
// the steps follow what that library does:
//  - float -> integer: NaN and infinities are refused (unless a scalar_map entry maps them);
//    the value is rounded to an integer, then clamped, reduced modulo 2^bits ("wrap") or
//    refused when outside the target's range, all exactly.
//  - integer -> float and float -> float: converted to nearest (float16 from a wider type by
//    way of float32, which can round twice), then moved one step where another rounding
//    mode asks for it; a value beyond the largest finite one is rounded as if the exponent
//    had no limit and, if that still exceeds it, refused or made infinite under "clamp".
//  - integer -> integer: clamped, truncated ("wrap") or refused.
// The types are the integers int8..uint64 and float16/32/64, the ones zarr-python 3.4 can
// cast; the other types the specification allows are refused as unsupported.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <fmt/ranges.h>

#include "codecs/register.h"
#include "core/half_float.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

static_assert(std::numeric_limits<long double>::digits >= 64, "exact comparisons need a 64-bit long double mantissa");

enum class Rounding : std::uint8_t { kNearestEven, kTowardsZero, kTowardsPositive, kTowardsNegative, kNearestAway };
enum class OutOfRange : std::uint8_t { kError, kClamp, kWrap };

constexpr std::pair<const char*, Rounding> kRoundings[] = {
    {"nearest-even", Rounding::kNearestEven},       {"towards-zero", Rounding::kTowardsZero},
    {"towards-positive", Rounding::kTowardsPositive}, {"towards-negative", Rounding::kTowardsNegative},
    {"nearest-away", Rounding::kNearestAway},
};

// The element types the codec casts between, as one value: integers exactly in a 128-bit
// integer, floats exactly in a double (float16 and float32 values are doubles too).
struct Number {
  bool is_float = false;
  __int128 i = 0;
  double f = 0;
};

struct NumType {
  bool is_float = false;
  bool is_signed = false;
  int bits = 0;

  static std::optional<NumType> of(const DataType& t) {
    const int bits = static_cast<int>(8 * t.size());
    switch (t.kind()) {
      case DataTypeKind::kInt: return NumType{false, true, bits};
      case DataTypeKind::kUInt: return NumType{false, false, bits};
      case DataTypeKind::kFloat: return NumType{true, true, bits};
      default: return std::nullopt;
    }
  }
  __int128 min() const { return is_signed ? -(__int128{1} << (bits - 1)) : 0; }
  __int128 max() const { return is_signed ? (__int128{1} << (bits - 1)) - 1 : (__int128{1} << bits) - 1; }
  double max_finite() const {
    return bits == 16 ? 65504.0 : bits == 32 ? double{std::numeric_limits<float>::max()}
                                             : std::numeric_limits<double>::max();
  }

  // The nearest value of this float type (float16 from a double by way of float32, as the
  // `half` crate's conversions after Rust's `as f32` do).
  double nearest(double v) const {
    if (bits == 64) return v;
    const float single = static_cast<float>(v);
    if (bits == 32) return single;
    return float16_bits_to_double(double_to_float16_bits(single));
  }
  double nearest_from_int(__int128 v) const {
    if (bits == 64) return static_cast<double>(v);
    const float single = static_cast<float>(v);  // one correct rounding from the integer
    return bits == 32 ? double{single} : float16_bits_to_double(double_to_float16_bits(single));
  }

  // The next value of this float type above (up) or below `v`.
  double step(double v, bool up) const {
    if (bits == 64) return std::nextafter(v, up ? INFINITY : -INFINITY);
    if (bits == 32) return std::nextafter(static_cast<float>(v), up ? INFINITY : -INFINITY);
    std::uint16_t h = double_to_float16_bits(v);
    const bool negative = (h & 0x8000) != 0;
    if ((h & 0x7fff) == 0) {
      h = up ? 0x0001 : 0x8001;
    } else if (negative == up) {
      --h;  // towards zero
    } else {
      ++h;
    }
    return float16_bits_to_double(h);
  }

  Number load(const std::byte* p) const {
    Number n;
    n.is_float = is_float;
    if (is_float) {
      if (bits == 16) {
        std::uint16_t h;
        std::memcpy(&h, p, 2);
        n.f = float16_bits_to_double(h);
      } else if (bits == 32) {
        float v;
        std::memcpy(&v, p, 4);
        n.f = v;
      } else {
        std::memcpy(&n.f, p, 8);
      }
      return n;
    }
    std::uint64_t raw = 0;
    std::memcpy(&raw, p, static_cast<std::size_t>(bits / 8));  // little-endian hosts
    if (is_signed && bits < 64) {
      const unsigned shift = static_cast<unsigned>(64 - bits);
      n.i = static_cast<std::int64_t>(raw << shift) >> shift;
    } else {
      n.i = is_signed ? __int128{static_cast<std::int64_t>(raw)} : __int128{raw};
    }
    return n;
  }

  void store(std::byte* p, const Number& n) const {
    if (is_float) {
      if (bits == 16) {
        const std::uint16_t h = double_to_float16_bits(n.f);
        std::memcpy(p, &h, 2);
      } else if (bits == 32) {
        const float v = static_cast<float>(n.f);
        std::memcpy(p, &v, 4);
      } else {
        std::memcpy(p, &n.f, 8);
      }
      return;
    }
    const auto raw = static_cast<std::uint64_t>(n.i);  // the low bits: two's complement
    std::memcpy(p, &raw, static_cast<std::size_t>(bits / 8));
  }

  std::string name() const {
    return fmt::format("{}{}", is_float ? "float" : is_signed ? "int" : "uint", bits);
  }
};


struct MapEntry {
  Number from;
  Number to;
};

// One direction of the cast: from `src` to `dst` with the codec's rules.
class Caster {
 public:
  Caster(NumType src, NumType dst, Rounding rounding, OutOfRange out_of_range, std::vector<MapEntry> map)
      : src_(src), dst_(dst), rounding_(rounding), out_of_range_(out_of_range), map_(std::move(map)) {}

  // The converted value, or the reason it cannot be converted.
  std::variant<Number, std::string> convert(const Number& v) const {
    for (const MapEntry& e : map_) {
      if (matches(e.from, v)) return e.to;
    }
    if (src_.is_float && !dst_.is_float) return float_to_int(v.f);
    if (!src_.is_float && !dst_.is_float) return int_to_int(v.i);
    if (src_.is_float) {
      if (std::isnan(v.f)) return float_number(dst_.nearest(v.f));
      return to_float(dst_.nearest(v.f), v.f);
    }
    return to_float(dst_.nearest_from_int(v.i), static_cast<long double>(v.i));
  }

 private:
  static Number float_number(double f) { return Number{true, 0, f}; }
  static Number int_number(__int128 i) { return Number{false, i, 0}; }

  static bool matches(const Number& key, const Number& v) {
    if (!key.is_float) return key.i == v.i;
    return std::isnan(key.f) ? std::isnan(v.f) : key.f == v.f;
  }

  double round_to_integer(double x) const {
    switch (rounding_) {
      case Rounding::kNearestEven: return std::nearbyint(x);
      case Rounding::kTowardsZero: return std::trunc(x);
      case Rounding::kTowardsPositive: return std::ceil(x);
      case Rounding::kTowardsNegative: return std::floor(x);
      case Rounding::kNearestAway: return std::round(x);
    }
    return x;
  }

  std::variant<Number, std::string> float_to_int(double x) const {
    if (std::isnan(x) || std::isinf(x)) return fmt::format("cannot cast {} to {} without a scalar_map entry", x, dst_.name());
    const double r = round_to_integer(x);
    // |r| < 2^1024, so this is exact where it matters: below 2^127 it is the integer
    // itself, above it is out of every target's range.
    const __int128 limit = __int128{1} << 126;
    const __int128 v = std::fabs(r) < 0x1p126 ? static_cast<__int128>(r) : (r < 0 ? -limit : limit);
    if (v >= dst_.min() && v <= dst_.max()) return int_number(v);
    switch (out_of_range_) {
      case OutOfRange::kClamp: return int_number(v < dst_.min() ? dst_.min() : dst_.max());
      case OutOfRange::kWrap: {
        // Modulo 2^bits, exactly: fmod is exact, and leaves a value below 2^64 in magnitude.
        const double m = std::fmod(r, std::ldexp(1.0, dst_.bits));
        return wrapped(static_cast<__int128>(m));
      }
      case OutOfRange::kError: break;
    }
    return fmt::format("{} is out of the range of {} (out_of_range is not set)", x, dst_.name());
  }

  // The low bits of a two's complement value, read as the target type.
  Number wrapped(__int128 v) const {
    const auto low = static_cast<std::uint64_t>(v);
    std::byte buffer[8];
    std::memcpy(buffer, &low, 8);
    return dst_.load(buffer);
  }

  std::variant<Number, std::string> int_to_int(__int128 v) const {
    if (v >= dst_.min() && v <= dst_.max()) return int_number(v);
    switch (out_of_range_) {
      case OutOfRange::kClamp: return int_number(v < dst_.min() ? dst_.min() : dst_.max());
      case OutOfRange::kWrap: return wrapped(v);
      case OutOfRange::kError: break;
    }
    return fmt::format("{} is out of the range of {} (out_of_range is not set)", static_cast<double>(v), dst_.name());
  }

  // `nearest` is the source value rounded to nearest in the target type, `exact` the source
  // value itself: x87's long double holds every int64, uint64 and double exactly, so the
  // comparisons below are exact.
  std::variant<Number, std::string> to_float(double nearest, long double exact) const {
    if (std::isfinite(exact) && std::fabs(exact) > dst_.max_finite()) return beyond_max(exact);
    double result = nearest;
    if (rounding_ != Rounding::kNearestEven && result != exact) result = adjust(exact, result);
    return float_number(result);
  }

  // A finite value beyond the largest finite one: rounded as if the exponent had no limit,
  // it either comes back to that largest value or overflows (refused, or infinite under
  // "clamp"). Rounding towards zero never reaches infinity this way.
  std::variant<Number, std::string> beyond_max(long double value) const {
    const long double max = dst_.max_finite();
    const long double ulp = max - dst_.step(dst_.max_finite(), false);  // the spacing at the top
    const long double magnitude = std::fabs(value);
    const bool towards_zero = rounding_ == Rounding::kTowardsZero ||
                              (rounding_ == Rounding::kTowardsPositive && value < 0) ||
                              (rounding_ == Rounding::kTowardsNegative && value > 0);
    bool overflows;
    if (towards_zero) {
      overflows = magnitude >= max + ulp;
    } else if (rounding_ == Rounding::kNearestEven || rounding_ == Rounding::kNearestAway) {
      overflows = magnitude >= max + ulp / 2;  // a tie goes up: the largest value is odd
    } else {
      overflows = true;
    }
    const double sign = value < 0 ? -1.0 : 1.0;
    if (!overflows) return float_number(sign * dst_.max_finite());
    return overflow(static_cast<double>(value), sign * INFINITY);
  }

  std::variant<Number, std::string> overflow(double value, double infinite) const {
    if (out_of_range_ == OutOfRange::kClamp) return float_number(infinite);
    return fmt::format("{} is out of the finite range of {} (out_of_range is not set)", value, dst_.name());
  }

  double adjust(long double value, double result) const {
    switch (rounding_) {
      case Rounding::kNearestEven: return result;
      case Rounding::kTowardsZero:
        if (std::fabs(result) > std::fabs(value)) return dst_.step(result, value < 0);
        return result;
      case Rounding::kTowardsPositive: return result < value ? dst_.step(result, true) : result;
      case Rounding::kTowardsNegative: return result > value ? dst_.step(result, false) : result;
      case Rounding::kNearestAway: {
        const double other = dst_.step(result, value > result);
        const bool tie = (static_cast<long double>(result) + other) / 2 == value;
        return tie && std::fabs(other) > std::fabs(result) ? other : result;
      }
    }
    return result;
  }

  NumType src_;
  NumType dst_;
  Rounding rounding_;
  OutOfRange out_of_range_;
  std::vector<MapEntry> map_;
};

NumType castable(const DataType& t, std::string_view role) {
  if (auto n = NumType::of(t)) return *n;
  switch (t.kind()) {
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kMiniFloat:
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt:
      fail_unsupported("cast_value codec: {} data type {} is not supported (int8..uint64 and float16/32/64 are)",
                       role, t.name());
    default:
      fail_invalid("cast_value codec only casts integer and floating-point data, not {} ({} data type)", t.name(),
                   role);
  }
}

Number scalar_of(const nlohmann::json& value, const DataType& t, const char* what) {
  FillValue parsed;
  try {
    parsed = parse_fill_value_v3(value, t);
  } catch (const Error& e) {
    fail_invalid("cast_value codec: scalar_map {} {} is not a {} value: {}", what, value.dump(), t.name(), e.what());
  }
  return NumType::of(t)->load(parsed.bytes().data());
}

class CastValueCodec final : public ArrayToArrayCodec {
 public:
  CastValueCodec(nlohmann::json config, DataType target, Rounding rounding, OutOfRange out_of_range)
      : config_(std::move(config)), target_(std::move(target)), rounding_(rounding), out_of_range_(out_of_range) {}

  std::string_view name() const override { return "cast_value"; }
  nlohmann::json to_json() const override { return codec_json(name(), config_); }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    const Caster cast = caster(decoded.dtype, true);
    const NumType source = *NumType::of(decoded.dtype);
    std::vector<std::byte> fill(target_.size());
    auto converted = cast.convert(source.load(decoded.fill_value.bytes().data()));
    if (auto* why = std::get_if<std::string>(&converted)) {
      fail_invalid("cast_value codec: the fill value cannot be cast to {}: {}", target_.name(), *why);
    }
    NumType::of(target_)->store(fill.data(), std::get<Number>(converted));
    return ChunkSpec{decoded.shape, target_, FillValue::from_bytes({fill.data(), fill.size()})};
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    check_input(decoded, decoded_spec.shape, decoded_spec.dtype, "encode");
    NDBuffer out = NDBuffer::allocate(decoded.shape(), target_);
    run(caster(decoded_spec.dtype, true), decoded, out, [](const std::string& why) {
      fail_invalid("cast_value codec cannot encode: {}", why);
    });
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    check_input(encoded, decoded_spec.shape, target_, "decode");
    NDBuffer out = NDBuffer::allocate(decoded_spec.shape, decoded_spec.dtype);
    run(caster(decoded_spec.dtype, false), encoded, out, [](const std::string& why) {
      fail_data_loss("cast_value codec cannot decode a stored value: {}", why);
    });
    return out;
  }

 private:
  Caster caster(const DataType& array_dtype, bool encoding) const {
    const NumType source = castable(array_dtype, "source");
    const NumType target = *NumType::of(target_);
    std::vector<MapEntry> map;
    const char* direction = encoding ? "encode" : "decode";
    if (auto m = config_.find("scalar_map"); m != config_.end()) {
      if (auto entries = m->find(direction); entries != m->end()) {
        const DataType& from = encoding ? array_dtype : target_;
        const DataType& to = encoding ? target_ : array_dtype;
        for (const auto& entry : *entries) {
          map.push_back({scalar_of(entry[0], from, "key"), scalar_of(entry[1], to, "value")});
        }
      }
    }
    return encoding ? Caster(source, target, rounding_, out_of_range_, std::move(map))
                    : Caster(target, source, rounding_, out_of_range_, std::move(map));
  }

  template <typename Fail>
  static void run(const Caster& cast, const NDBuffer& in, NDBuffer& out, Fail fail) {
    const NumType from = *NumType::of(in.dtype());
    const NumType to = *NumType::of(out.dtype());
    const std::uint64_t n = in.num_elements();
    const std::byte* src = in.data();
    std::byte* dst = out.data();
    for (std::uint64_t i = 0; i < n; ++i, src += in.dtype().size(), dst += out.dtype().size()) {
      auto converted = cast.convert(from.load(src));
      if (auto* why = std::get_if<std::string>(&converted)) fail(*why);
      to.store(dst, std::get<Number>(converted));
    }
  }

  static void check_input(const NDBuffer& array, const Shape& shape, const DataType& dtype, const char* what) {
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("cast_value codec cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
    if (array.shape() != shape || !(array.dtype() == dtype)) {
      fail_invalid("cast_value codec cannot {} a {} array of shape [{}]: expected {} of shape [{}]", what,
                   array.dtype().name(), fmt::join(array.shape(), ","), dtype.name(), fmt::join(shape, ","));
    }
  }

  nlohmann::json config_;
  DataType target_;
  Rounding rounding_;
  OutOfRange out_of_range_;
};

void check_scalar_map(const nlohmann::json& map) {
  if (!map.is_object()) fail_invalid("cast_value codec: \"scalar_map\" must be an object, got {}", map.dump());
  for (const auto& [direction, entries] : map.items()) {
    if (direction != "encode" && direction != "decode") {
      fail_invalid("cast_value codec: unexpected scalar_map key \"{}\" (allowed: encode, decode)", direction);
    }
    if (!entries.is_array()) {
      fail_invalid("cast_value codec: scalar_map \"{}\" must be a list of [from, to] pairs, got {}", direction,
                   entries.dump());
    }
    for (const auto& entry : entries) {
      if (!entry.is_array() || entry.size() != 2) {
        fail_invalid("cast_value codec: scalar_map \"{}\" entry {} is not a [from, to] pair", direction, entry.dump());
      }
    }
  }
}

std::shared_ptr<const Codec> make_cast_value(const nlohmann::json& config, const CodecContext& context) {
  (void)context;
  if (!config.is_object()) fail_invalid("cast_value codec: configuration must be an object, got {}", config.dump());
  for (const auto& [key, value] : config.items()) {
    if (key != "data_type" && key != "rounding" && key != "out_of_range" && key != "scalar_map") {
      fail_invalid("cast_value codec: unexpected configuration key \"{}\"", key);
    }
  }
  auto data_type = config.find("data_type");
  if (data_type == config.end()) fail_invalid("cast_value codec needs \"data_type\"");
  DataType target = parse_dtype_v3(*data_type);
  castable(target, "target");

  Rounding rounding = Rounding::kNearestEven;
  if (auto r = config.find("rounding"); r != config.end()) {
    const auto* found = r->is_string() ? std::find_if(std::begin(kRoundings), std::end(kRoundings),
                                                      [&](const auto& p) { return *r == p.first; })
                                       : std::end(kRoundings);
    if (found == std::end(kRoundings)) {
      fail_invalid("cast_value codec: \"rounding\" {} is not one of nearest-even, towards-zero, towards-positive, "
                   "towards-negative, nearest-away",
                   r->dump());
    }
    rounding = found->second;
  }
  OutOfRange out_of_range = OutOfRange::kError;
  if (auto o = config.find("out_of_range"); o != config.end()) {
    if (*o == "clamp") {
      out_of_range = OutOfRange::kClamp;
    } else if (*o == "wrap") {
      out_of_range = OutOfRange::kWrap;
    } else if (*o != "error") {
      fail_invalid("cast_value codec: \"out_of_range\" {} is not one of error, clamp, wrap", o->dump());
    }
    if (out_of_range == OutOfRange::kWrap && NumType::of(target)->is_float) {
      fail_invalid("cast_value codec: out_of_range \"wrap\" needs an integer data_type, not {}", target.name());
    }
  }
  if (auto m = config.find("scalar_map"); m != config.end()) check_scalar_map(*m);
  return std::make_shared<CastValueCodec>(config, std::move(target), rounding, out_of_range);
}

}  // namespace

void register_cast_value_codec(CodecRegistry& registry) { registry.add_v3("cast_value", make_cast_value); }

}  // namespace zarrkit

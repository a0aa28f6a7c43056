#include "zarrkit/astype.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "core/minifloat.h"
#include "zarrkit/app.h"
#include "zarrkit/error.h"

namespace zarrkit::cli {
namespace {

// The ml_dtypes types: no NumPy type string, so no .npy descr of their own.
bool is_ml_type(const DataType& t) {
  switch (t.kind()) {
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kMiniFloat:
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt: return true;
    default: return false;
  }
}

std::string choices(const DataType& t) {
  return fmt::format("--astype float32 or float64 writes the values (exactly), --astype {0} their {1}-byte "
                     "patterns as 'V{1}' (np.load(f).view(ml_dtypes.{0}) reads them)",
                     t.name(), t.size());
}

// Every value of these types is a float32 (and a float64) exactly.
double ml_value(const std::byte* p, const DataType& t);

// bfloat16 is the high half of a float32: widening is a shift, exact for every pattern
// (NaN payloads included).
float bfloat16_to_float(std::uint16_t bits) {
  const std::uint32_t wide = std::uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

double ml_value(const std::byte* p, const DataType& t) {
  const auto byte = std::to_integer<std::uint8_t>(p[0]);
  switch (t.kind()) {
    case DataTypeKind::kBFloat16: {
      std::uint16_t bits;
      std::memcpy(&bits, p, 2);
      return bfloat16_to_float(bits);
    }
    case DataTypeKind::kMiniFloat: return minifloat_to_double(t.minifloat_format(), byte);
    case DataTypeKind::kSubByteInt: {
      const int bits = t.value_bits();
      const int value = byte & ((1 << bits) - 1);
      return value >= (1 << (bits - 1)) ? value - (1 << bits) : value;
    }
    default: return byte & ((1 << t.value_bits()) - 1);
  }
}

template <typename Out>
NDBuffer widen(const NDBuffer& values, const DataType& target) {
  NDBuffer out = NDBuffer::allocate(values.shape(), target);
  const DataType& source = values.dtype();
  const std::size_t count = values.nbytes() / source.size();
  const std::byte* in = values.data();
  std::byte* dest = out.data();
  for (std::size_t i = 0; i < count; ++i) {
    // bfloat16 -> float32 by the shift alone: through a double a signalling NaN would be quieted.
    if constexpr (std::is_same_v<Out, float>) {
      if (source.kind() == DataTypeKind::kBFloat16) {
        std::uint16_t bits;
        std::memcpy(&bits, in + 2 * i, 2);
        const float value = bfloat16_to_float(bits);
        std::memcpy(dest + sizeof(Out) * i, &value, sizeof(Out));
        continue;
      }
    }
    const auto value = static_cast<Out>(ml_value(in + source.size() * i, source));
    std::memcpy(dest + sizeof(Out) * i, &value, sizeof(Out));
  }
  return out;
}

}  // namespace

DataType export_type(const DataType& source, const std::string& astype) {
  const bool ml = is_ml_type(source);
  if (astype.empty()) {
    if (ml) throw UsageError(fmt::format("{} has no NumPy .npy type: {}", source.name(), choices(source)));
    return source;
  }
  if (astype == source.name() && !ml) return source;
  if (!ml) {
    throw UsageError(fmt::format("--astype {}: export converts only the types .npy has no name for (bfloat16, "
                                 "float8/6/4, int2/int4/uint2/uint4), and this array holds {}; leave --astype "
                                 "out to write them as they are", astype, source.name()));
  }
  if (astype == "float32") return DataType::float_(32);
  if (astype == "float64") return DataType::float_(64);
  if (astype == source.name()) return DataType::raw_bits(static_cast<int>(8 * source.size()));
  throw UsageError(fmt::format("--astype {}: not a type export converts {} to; {}", astype, source.name(),
                               choices(source)));
}

NDBuffer convert_for_export(NDBuffer values, const DataType& target) {
  const DataType& source = values.dtype();
  if (source == target) return values;
  if (is_ml_type(source)) {
    if (target.kind() == DataTypeKind::kRawBits && target.size() == source.size()) {
      return NDBuffer(std::move(values.buffer()), values.shape(), target);
    }
    if (target.kind() == DataTypeKind::kFloat && target.size() == 4) return widen<float>(values, target);
    if (target.kind() == DataTypeKind::kFloat && target.size() == 8) return widen<double>(values, target);
  }
  throw InternalError(fmt::format("export has no conversion from {} to {}", source.name(), target.name()));
}

}  // namespace zarrkit::cli

#include "zarrkit/astype.h"

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "zarrkit/app.h"
#include "zarrkit/error.h"

namespace zarrkit::cli {
namespace {

constexpr const char* kBFloat16Choices =
    "--astype float32 or float64 writes the values (exactly), --astype bfloat16 their 2-byte "
    "patterns as 'V2' (np.load(f).view(ml_dtypes.bfloat16) reads them)";

// bfloat16 is the high half of a float32: widening is a shift, exact for every pattern
// (NaN payloads included).
float bfloat16_to_float(std::uint16_t bits) {
  const std::uint32_t wide = std::uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

template <typename Out>
NDBuffer widen_bfloat16(const NDBuffer& values, const DataType& target) {
  NDBuffer out = NDBuffer::allocate(values.shape(), target);
  const std::size_t count = values.nbytes() / 2;
  const std::byte* in = values.data();
  std::byte* dest = out.data();
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, in + 2 * i, 2);
    const Out value = static_cast<Out>(bfloat16_to_float(bits));
    std::memcpy(dest + sizeof(Out) * i, &value, sizeof(Out));
  }
  return out;
}

}  // namespace

DataType export_type(const DataType& source, const std::string& astype) {
  const bool bfloat16 = source.kind() == DataTypeKind::kBFloat16;
  if (astype.empty()) {
    if (bfloat16) throw UsageError(fmt::format("bfloat16 has no NumPy .npy type: {}", kBFloat16Choices));
    return source;
  }
  if (astype != "float32" && astype != "float64" && astype != "bfloat16" && astype != source.name()) {
    throw UsageError(fmt::format("--astype {}: not a type export converts to (bfloat16 becomes float32, "
                                 "float64, or bfloat16 as raw 'V2')", astype));
  }
  if (astype == source.name() && !bfloat16) return source;
  if (!bfloat16) {
    throw UsageError(fmt::format("--astype {}: export converts only bfloat16 elements, and this array holds "
                                 "{}; leave --astype out to write them as they are", astype, source.name()));
  }
  if (astype == "float32") return DataType::float_(32);
  if (astype == "float64") return DataType::float_(64);
  return DataType::raw_bits(16);
}

NDBuffer convert_for_export(NDBuffer values, const DataType& target) {
  const DataType& source = values.dtype();
  if (source == target) return values;
  if (source.kind() == DataTypeKind::kBFloat16) {
    if (target.kind() == DataTypeKind::kRawBits && target.size() == 2) {
      return NDBuffer(std::move(values.buffer()), values.shape(), target);
    }
    if (target.kind() == DataTypeKind::kFloat && target.size() == 4) return widen_bfloat16<float>(values, target);
    if (target.kind() == DataTypeKind::kFloat && target.size() == 8) return widen_bfloat16<double>(values, target);
  }
  throw InternalError(fmt::format("export has no conversion from {} to {}", source.name(), target.name()));
}

}  // namespace zarrkit::cli

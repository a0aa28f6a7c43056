#include "zarrkit/astype.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

#include "core/half_float.h"
#include "core/minifloat.h"
#include "zarrkit/app.h"

namespace zarrkit::cli {
namespace {

// Every bfloat16 bit pattern, in order, as a 1-d array.
NDBuffer all_bfloat16_patterns() {
  NDBuffer values = NDBuffer::allocate({65536}, DataType::bfloat16());
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto bits = static_cast<std::uint16_t>(i);
    std::memcpy(values.data() + 2 * i, &bits, 2);
  }
  return values;
}

template <typename T>
T element(const NDBuffer& values, std::size_t i) {
  T value;
  std::memcpy(&value, values.data() + sizeof(T) * i, sizeof(T));
  return value;
}

TEST(ExportAsType, BFloat16NeedsAChoice) {
  try {
    export_type(DataType::bfloat16(), "");
    FAIL() << "bfloat16 without --astype was accepted";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--astype float32"), std::string::npos) << message;
    EXPECT_NE(message.find("--astype bfloat16"), std::string::npos) << message;
  }
}

TEST(ExportAsType, TypesForBFloat16) {
  EXPECT_EQ(export_type(DataType::bfloat16(), "float32"), DataType::float_(32));
  EXPECT_EQ(export_type(DataType::bfloat16(), "float64"), DataType::float_(64));
  EXPECT_EQ(export_type(DataType::bfloat16(), "bfloat16"), DataType::raw_bits(16));
  EXPECT_THROW(export_type(DataType::bfloat16(), "float16"), UsageError);
  EXPECT_THROW(export_type(DataType::bfloat16(), "f4"), UsageError);
}

TEST(ExportAsType, OtherTypesAreWrittenAsTheyAre) {
  EXPECT_EQ(export_type(DataType::int_(16), ""), DataType::int_(16));
  EXPECT_EQ(export_type(DataType::float_(32), "float32"), DataType::float_(32));
  EXPECT_EQ(export_type(DataType::string(), ""), DataType::string());
  EXPECT_THROW(export_type(DataType::int_(16), "float32"), UsageError);
  EXPECT_THROW(export_type(DataType::float_(64), "float32"), UsageError);
  EXPECT_THROW(export_type(DataType::string(), "bfloat16"), UsageError);
}

TEST(ExportAsType, Float32HoldsEveryBFloat16Exactly) {
  const NDBuffer out = convert_for_export(all_bfloat16_patterns(), DataType::float_(32));
  ASSERT_EQ(out.dtype(), DataType::float_(32));
  ASSERT_EQ(out.shape(), Shape{65536});
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const float value = element<float>(out, i);
    const double expected = bfloat16_bits_to_double(static_cast<std::uint16_t>(i));
    if (std::isnan(expected)) {
      // A NaN keeps its sign and payload: the float32's high half is the pattern itself.
      std::uint32_t bits;
      std::memcpy(&bits, &value, 4);
      EXPECT_EQ(bits, i << 16) << i;
    } else {
      EXPECT_EQ(static_cast<double>(value), expected) << i;
      EXPECT_EQ(std::signbit(value), std::signbit(expected)) << i;  // -0 stays -0
    }
  }
}

TEST(ExportAsType, Float64HoldsEveryBFloat16Exactly) {
  const NDBuffer out = convert_for_export(all_bfloat16_patterns(), DataType::float_(64));
  ASSERT_EQ(out.dtype(), DataType::float_(64));
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const double value = element<double>(out, i);
    const double expected = bfloat16_bits_to_double(static_cast<std::uint16_t>(i));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(value)) << i;
    } else {
      EXPECT_EQ(value, expected) << i;
      EXPECT_EQ(std::signbit(value), std::signbit(expected)) << i;
    }
  }
}

TEST(ExportAsType, RawBitsKeepThePatterns) {
  NDBuffer values = NDBuffer::allocate({3, 2}, DataType::bfloat16());
  const std::uint16_t patterns[6] = {0x3f80, 0xc000, 0x7fc0, 0x0001, 0x8000, 0x7f80};
  std::memcpy(values.data(), patterns, sizeof patterns);
  const NDBuffer out = convert_for_export(std::move(values), DataType::raw_bits(16));
  EXPECT_EQ(out.dtype(), DataType::raw_bits(16));
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  ASSERT_EQ(out.nbytes(), sizeof patterns);
  EXPECT_EQ(std::memcmp(out.data(), patterns, sizeof patterns), 0);
}

}  // namespace
}  // namespace zarrkit::cli

namespace zarrkit::cli {
namespace {

// The zarr-extensions ML types go the same ways as bfloat16.
TEST(ExportAsType, MachineLearningTypesNeedAChoiceToo) {
  for (const DataType& t : {DataType::minifloat(MiniFloat::kE4M3FN), DataType::minifloat(MiniFloat::kE2M1FN),
                            DataType::sub_byte_int(4), DataType::sub_byte_uint(2)}) {
    EXPECT_THROW(export_type(t, ""), UsageError) << t.name();
    EXPECT_EQ(export_type(t, "float32"), DataType::float_(32)) << t.name();
    EXPECT_EQ(export_type(t, "float64"), DataType::float_(64)) << t.name();
    EXPECT_EQ(export_type(t, t.name()), DataType::raw_bits(8)) << t.name();
    EXPECT_THROW(export_type(t, "int8"), UsageError) << t.name();
  }
}

TEST(ExportAsType, Float32HoldsEveryMiniFloatAndSubByteValue) {
  NDBuffer patterns = NDBuffer::allocate({256}, DataType::uint_(8));
  for (unsigned i = 0; i < 256; ++i) patterns.data()[i] = static_cast<std::byte>(i);
  for (MiniFloat f : {MiniFloat::kE3M4, MiniFloat::kE4M3, MiniFloat::kE4M3FN, MiniFloat::kE5M2FNUZ,
                      MiniFloat::kE8M0FNU, MiniFloat::kE3M2FN, MiniFloat::kE2M1FN}) {
    const DataType t = DataType::minifloat(f);
    const unsigned count = 1u << t.value_bits();
    NDBuffer values(Buffer::copy_of(patterns.buffer().view().first(count)), {count}, t);
    const NDBuffer wide = convert_for_export(values, DataType::float_(32));
    for (unsigned i = 0; i < count; ++i) {
      const double expected = minifloat_to_double(f, static_cast<std::uint8_t>(i));
      const float got = element<float>(wide, i);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(got)) << t.name() << " " << i;
      } else {
        EXPECT_EQ(static_cast<double>(got), expected) << t.name() << " " << i;
        EXPECT_EQ(std::signbit(got), std::signbit(expected)) << t.name() << " " << i;
      }
    }
    const NDBuffer raw = convert_for_export(values, DataType::raw_bits(8));
    EXPECT_EQ(std::memcmp(raw.data(), values.data(), count), 0);
  }
  NDBuffer int4(Buffer::copy_of(patterns.buffer().view().first(16)), {16}, DataType::sub_byte_int(4));
  NDBuffer uint4(Buffer::copy_of(patterns.buffer().view().first(16)), {16}, DataType::sub_byte_uint(4));
  const NDBuffer signed_values = convert_for_export(int4, DataType::float_(64));
  const NDBuffer unsigned_values = convert_for_export(uint4, DataType::float_(64));
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(element<double>(signed_values, static_cast<std::size_t>(i)), i < 8 ? i : i - 16);
    EXPECT_EQ(element<double>(unsigned_values, static_cast<std::size_t>(i)), i);
  }
}

}  // namespace
}  // namespace zarrkit::cli

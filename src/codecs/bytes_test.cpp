#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

const CodecRegistry& registry() {
  static const CodecRegistry r = [] {
    CodecRegistry reg;
    register_bytes_codec(reg);
    return reg;
  }();
  return r;
}

std::shared_ptr<const ArrayToBytesCodec> make(const nlohmann::json& entry, const DataType& dtype) {
  return std::dynamic_pointer_cast<const ArrayToBytesCodec>(registry().make_v3(entry, {dtype, 3}));
}

nlohmann::json bytes_with(const char* endian) { return {{"name", "bytes"}, {"configuration", {{"endian", endian}}}}; }

template <typename T>
NDBuffer array_of(const std::vector<T>& values, Shape shape, DataType dtype) {
  NDBuffer nd = NDBuffer::allocate(std::move(shape), std::move(dtype));
  std::memcpy(nd.data(), values.data(), values.size() * sizeof(T));
  return nd;
}

std::vector<std::uint8_t> bytes_of(const Buffer& b) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(b.data());
  return {p, p + b.size()};
}

ByteView view_of(const std::vector<std::uint8_t>& v) { return {reinterpret_cast<const std::byte*>(v.data()), v.size()}; }

TEST(BytesCodec, LittleAndBigEndianGiveExactBytes) {
  const DataType i32 = DataType::int_(32);
  const ChunkSpec spec{{2, 2}, i32, FillValue::zero(i32)};
  const NDBuffer chunk = array_of<std::int32_t>({0x01020304, -2, 7, 0x7f000001}, {2, 2}, i32);

  const auto little = make(bytes_with("little"), i32);
  const std::vector<std::uint8_t> le = {4, 3, 2, 1, 0xfe, 0xff, 0xff, 0xff, 7, 0, 0, 0, 1, 0, 0, 0x7f};
  EXPECT_EQ(bytes_of(little->encode(chunk, spec)), le);
  EXPECT_EQ(*little->encoded_size(spec), 16u);

  const auto big = make(bytes_with("big"), i32);
  const std::vector<std::uint8_t> be = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 7, 0x7f, 0, 0, 1};
  EXPECT_EQ(bytes_of(big->encode(chunk, spec)), be);
  // The input is left alone.
  EXPECT_EQ(reinterpret_cast<const std::int32_t*>(chunk.data())[0], 0x01020304);

  for (const auto& [codec, stored] : {std::pair{little, le}, std::pair{big, be}}) {
    NDBuffer back = codec->decode(view_of(stored), spec, BufferPrototype::host());
    EXPECT_EQ(back.shape(), spec.shape);
    EXPECT_EQ(back.dtype(), i32);
    EXPECT_EQ(std::memcmp(back.data(), chunk.data(), 16), 0);
  }
}

TEST(BytesCodec, ComplexSwapsEachPartAndFloatsRoundTrip) {
  const DataType c64 = DataType::complex_(64);
  const ChunkSpec spec{{1}, c64, FillValue::zero(c64)};
  const NDBuffer chunk = array_of<float>({1.0f, -2.0f}, {1}, c64);
  const auto big = make(bytes_with("big"), c64);
  // 1.0f = 0x3f800000, -2.0f = 0xc0000000, each part big-endian, real first.
  EXPECT_EQ(bytes_of(big->encode(chunk, spec)), (std::vector<std::uint8_t>{0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}));

  const DataType f64 = DataType::float_(64);
  const ChunkSpec fspec{{3}, f64, FillValue::zero(f64)};
  const NDBuffer floats = array_of<double>({0.5, -1e300, 3.25}, {3}, f64);
  Buffer enc = big->encode(floats, fspec);
  NDBuffer back = big->decode(enc.view(), fspec, BufferPrototype::host());
  EXPECT_EQ(std::memcmp(back.data(), floats.data(), 24), 0);
}

TEST(BytesCodec, JsonNamesEndianOnlyWhereItMatters) {
  // zarr-python writes {"name": "bytes"} for one-byte types.
  EXPECT_EQ(make("bytes", DataType::uint_(8))->to_json(), nlohmann::json::parse(R"({"name":"bytes"})"));
  EXPECT_EQ(make("bytes", DataType::boolean())->to_json(), nlohmann::json::parse(R"({"name":"bytes"})"));
  EXPECT_EQ(make(bytes_with("big"), DataType::int_(16))->to_json(),
            nlohmann::json::parse(R"({"name":"bytes","configuration":{"endian":"big"}})"));
}

TEST(BytesCodec, MissingEndianOnMultiByteTypeReadsAsLittleAndIsWrittenOut) {
  // SPEC-NOTES rule 17: zarr-python's own tests write float64 with a bare "bytes".
  const DataType f64 = DataType::float_(64);
  const auto codec = make(nlohmann::json::parse(R"({"name":"bytes"})"), f64);
  EXPECT_EQ(codec->to_json(), nlohmann::json::parse(R"({"name":"bytes","configuration":{"endian":"little"}})"));
  const std::vector<std::uint8_t> stored = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f};  // 1.0 little-endian
  NDBuffer back = codec->decode(view_of(stored), {{1}, f64, FillValue::zero(f64)}, BufferPrototype::host());
  EXPECT_EQ(*reinterpret_cast<const double*>(back.data()), 1.0);
}

TEST(BytesCodec, ReportsTheByteOrderItStoresElementsIn) {
  EXPECT_EQ(make(bytes_with("big"), DataType::int_(16))->element_byte_order(), Endian::kBig);
  EXPECT_EQ(make(bytes_with("little"), DataType::int_(16))->element_byte_order(), Endian::kLittle);
  // No "endian" (one-byte types): little, as it is read.
  EXPECT_EQ(make("bytes", DataType::uint_(8))->element_byte_order(), Endian::kLittle);
}

TEST(BytesCodec, WrongSizeIsDataLoss) {
  const DataType i16 = DataType::int_(16);
  const ChunkSpec spec{{3}, i16, FillValue::zero(i16)};
  const auto codec = make(bytes_with("little"), i16);
  for (std::size_t n : {0, 5, 7, 100}) {
    std::vector<std::uint8_t> stored(n, 1);
    EXPECT_THROW(codec->decode(view_of(stored), spec, BufferPrototype::host()), DataLossError) << n;
  }
}

TEST(BytesCodec, ZeroDimensionalAndEmptyChunks) {
  const DataType u16 = DataType::uint_(16);
  const auto codec = make(bytes_with("big"), u16);
  const ChunkSpec scalar{{}, u16, FillValue::zero(u16)};
  Buffer enc = codec->encode(array_of<std::uint16_t>({0xabcd}, {}, u16), scalar);
  EXPECT_EQ(bytes_of(enc), (std::vector<std::uint8_t>{0xab, 0xcd}));
  const ChunkSpec empty{{0, 4}, u16, FillValue::zero(u16)};
  EXPECT_EQ(codec->encode(NDBuffer::allocate({0, 4}, u16), empty).size(), 0u);
  EXPECT_EQ(codec->decode(ByteView{}, empty, BufferPrototype::host()).num_elements(), 0u);
}

TEST(BytesCodec, StructuredTypesSwapPerField) {
  const DataType rec = DataType::structured({{"a", DataType::int_(16), 0, {}}, {"b", DataType::uint_(8), 2, {}}});
  const ChunkSpec spec{{1}, rec, FillValue::zero(rec)};
  const auto codec = make(bytes_with("big"), rec);
  const NDBuffer chunk = array_of<std::uint8_t>({0x34, 0x12, 0x56}, {1}, rec);
  EXPECT_EQ(bytes_of(codec->encode(chunk, spec)), (std::vector<std::uint8_t>{0x12, 0x34, 0x56}));
  // A fixed-length byte string has no byte order: no endian needed in the JSON.
  EXPECT_EQ(make("bytes", DataType::fixed_bytes(7))->to_json(), nlohmann::json::parse(R"({"name":"bytes"})"));
}

TEST(BytesCodec, RejectsBadConfigurationAndVariableLengthTypes) {
  const DataType i32 = DataType::int_(32);
  EXPECT_THROW(make(bytes_with("middle"), i32), InvalidArgumentError);
  EXPECT_THROW(make(nlohmann::json::parse(R"({"name":"bytes","configuration":{"endian":1}})"), i32),
               InvalidArgumentError);
  EXPECT_THROW(make(nlohmann::json::parse(R"({"name":"bytes","configuration":{"order":"C"}})"), i32),
               InvalidArgumentError);
  const DataType str = DataType::string();
  const auto codec = make("bytes", str);
  const ChunkSpec spec{{2}, str, FillValue{}};
  EXPECT_THROW(codec->validate(spec), UnsupportedError);
  EXPECT_THROW(codec->decode(ByteView{}, spec, BufferPrototype::host()), UnsupportedError);
}

TEST(BytesCodec, ChunkThatDoesNotMatchTheSpecIsRejected) {
  const DataType i32 = DataType::int_(32);
  const auto codec = make(bytes_with("little"), i32);
  EXPECT_THROW(codec->encode(NDBuffer::allocate({3}, i32), {{4}, i32, FillValue::zero(i32)}), InvalidArgumentError);
}

// Sub-byte types take one byte each; the stored high bits are ignored when reading and
// written as zero (zarr-extensions int2/int4/uint2/uint4, float4/float6 "bytes" sections).
TEST(BytesCodec, SubByteTypesClearTheHighBits) {
  const std::pair<DataType, std::uint8_t> cases[] = {
      {DataType::sub_byte_int(4), 0x0f},
      {DataType::sub_byte_uint(2), 0x03},
      {DataType::minifloat(MiniFloat::kE2M1FN), 0x0f},
      {DataType::minifloat(MiniFloat::kE3M2FN), 0x3f},
  };
  for (const auto& [dtype, mask] : cases) {
    const ChunkSpec spec{{4}, dtype, FillValue::zero(dtype)};
    for (const auto& entry : {nlohmann::json{{"name", "bytes"}}, bytes_with("big")}) {
      const auto codec = make(entry, dtype);
      // One byte each: no endian is recorded, and one given is kept as written (the codecs
      // around it may still see a wider type, as after cast_value).
      EXPECT_EQ(codec->to_json(), entry) << dtype.name();
      const std::vector<std::uint8_t> stored = {0xf1, 0x02, 0x83, 0xff};
      std::vector<std::uint8_t> expected;
      for (auto b : stored) expected.push_back(static_cast<std::uint8_t>(b & mask));
      NDBuffer back = codec->decode(view_of(stored), spec, BufferPrototype::host());
      const auto* p = reinterpret_cast<const std::uint8_t*>(back.data());
      EXPECT_EQ(std::vector<std::uint8_t>(p, p + 4), expected) << dtype.name();
      std::vector<std::uint8_t> in_place = stored;
      ASSERT_TRUE(codec->decodes_in_place(spec));
      EXPECT_FALSE(codec->is_identity(spec));
      codec->decode_in_place({reinterpret_cast<std::byte*>(in_place.data()), in_place.size()}, spec);
      EXPECT_EQ(in_place, expected) << dtype.name();
      // Writing clears them too; values already clean are stored as they are.
      EXPECT_EQ(bytes_of(codec->encode(array_of<std::uint8_t>(stored, {4}, dtype), spec)), expected);
      EXPECT_EQ(bytes_of(codec->encode(array_of<std::uint8_t>(expected, {4}, dtype), spec)), expected);
    }
  }
  // Whole-byte ML types are stored as they are.
  const DataType e4m3fn = DataType::minifloat(MiniFloat::kE4M3FN);
  const ChunkSpec spec{{2}, e4m3fn, FillValue::zero(e4m3fn)};
  const auto codec = make(nlohmann::json{{"name", "bytes"}}, e4m3fn);
  EXPECT_TRUE(codec->is_identity(spec));
  const std::vector<std::uint8_t> raw = {0xff, 0x80};
  EXPECT_EQ(bytes_of(codec->encode(array_of<std::uint8_t>(raw, {2}, e4m3fn), spec)), raw);
}

}  // namespace
}  // namespace zarrkit

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

const CodecRegistry& registry() {
  static const CodecRegistry r = [] {
    CodecRegistry reg;
    register_delta_codec(reg);
    return reg;
  }();
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> make_v2(const nlohmann::json& entry, const DataType& dtype) {
  return std::dynamic_pointer_cast<const ArrayToArrayCodec>(registry().make_v2(entry, {dtype, 2}));
}

std::shared_ptr<const ArrayToArrayCodec> make_v3(const nlohmann::json& config, const DataType& dtype) {
  return std::dynamic_pointer_cast<const ArrayToArrayCodec>(
      registry().make_v3({{"name", "numcodecs.delta"}, {"configuration", config}}, {dtype, 3}));
}

template <typename T>
NDBuffer array_of(const std::vector<T>& values, Shape shape, DataType dtype) {
  NDBuffer nd = NDBuffer::allocate(std::move(shape), std::move(dtype));
  std::memcpy(nd.data(), values.data(), values.size() * sizeof(T));
  return nd;
}

Bytes bytes_of(const NDBuffer& nd) { return Bytes(nd.data(), nd.data() + nd.nbytes()); }

ChunkSpec spec_of(Shape shape, DataType dtype) { return {std::move(shape), dtype, FillValue::zero(dtype)}; }

// Encodes `values`, compares with numcodecs' bytes (little-endian hosts: native = "<"),
// decodes back and compares with the input.
template <typename T>
void expect_matches_numcodecs(const ArrayToArrayCodec& codec, const std::vector<T>& values, Shape shape,
                              const DataType& dtype, std::string_view numcodecs_hex) {
  const ChunkSpec spec = spec_of(std::move(shape), dtype);
  NDBuffer input = array_of(values, spec.shape, dtype);
  NDBuffer encoded = codec.encode(input, spec);
  EXPECT_EQ(bytes_of(encoded), from_hex(numcodecs_hex));
  EXPECT_EQ(encoded.shape(), spec.shape);
  NDBuffer decoded = codec.decode(encoded, spec);
  EXPECT_EQ(bytes_of(decoded), bytes_of(input));
  EXPECT_EQ(decoded.dtype(), dtype);
}

// numcodecs 0.16: Delta(...).encode(np.array([100,-5,32767,-32768,7,7,0,1000], '<i2'))
const std::vector<std::int16_t> kInt16Values = {100, -5, 32767, -32768, 7, 7, 0, 1000};

TEST(Delta, Int16MatchesNumcodecsWithWrappingDifferences) {
  const DataType i2 = parse_dtype_v2("<i2");
  auto codec = make_v2({{"id", "delta"}, {"dtype", "<i2"}}, i2);
  expect_matches_numcodecs(*codec, kInt16Values, {8}, i2, "640097ff0480010007800000f9ffe803");
  // The chunk's shape does not matter: numcodecs works on the flattened chunk.
  expect_matches_numcodecs(*codec, kInt16Values, {2, 4}, i2, "640097ff0480010007800000f9ffe803");
}

TEST(Delta, NarrowerAstypeTruncatesLikeNumcodecs) {
  const DataType i2 = parse_dtype_v2("<i2");
  auto codec = make_v2({{"id", "delta"}, {"dtype", "<i2"}, {"astype", "<i1"}}, i2);
  const ChunkSpec spec = spec_of({8}, i2);
  EXPECT_EQ(codec->encoded_spec(spec).dtype, parse_dtype_v2("<i1"));
  NDBuffer encoded = codec->encode(array_of(kInt16Values, {8}, i2), spec);
  EXPECT_EQ(bytes_of(encoded), from_hex("649704010700f9e8"));
  // Values that fit are recovered.
  std::vector<std::int16_t> small = {100, 102, 104, 90, 91};
  NDBuffer round = codec->decode(codec->encode(array_of(small, {5}, i2), spec_of({5}, i2)), spec_of({5}, i2));
  EXPECT_EQ(bytes_of(round), bytes_of(array_of(small, {5}, i2)));
}

TEST(Delta, WiderAstypeExtendsBySourceSignedness) {
  const DataType i2 = parse_dtype_v2("<i2");
  expect_matches_numcodecs(*make_v2({{"id", "delta"}, {"dtype", "<i2"}, {"astype", "<i4"}}, i2), kInt16Values, {8},
                           i2, "6400000097ffffff0480ffff010000000780ffff00000000f9ffffffe8030000");
  const DataType u2 = parse_dtype_v2("<u2");
  std::vector<std::uint16_t> unsigned_values = {10, 3, 65535, 0, 200};
  expect_matches_numcodecs(*make_v2({{"id", "delta"}, {"dtype", "<u2"}, {"astype", "<i4"}}, u2), unsigned_values,
                           {5}, u2, "0a000000f9ff0000fcff000001000000c8000000");
}

TEST(Delta, FloatsMatchNumcodecs) {
  const DataType f4 = parse_dtype_v2("<f4");
  // Float sums are not exact (3.0 is lost next to -1e10), so only the encoding is compared.
  auto f4_codec = make_v2({{"id", "delta"}, {"dtype", "<f4"}}, f4);
  EXPECT_EQ(bytes_of(f4_codec->encode(array_of(std::vector<float>{1.5f, 2.25f, -1e10f, 3.0f}, {4}, f4), spec_of({4}, f4))),
            from_hex("0000c03f0000403ff90215d0f9021550"));
  const DataType f8 = parse_dtype_v2("<f8");
  auto codec = make_v3({{"dtype", "float64"}}, f8);
  const std::vector<double> values = {0.1, 0.2, 0.7, 1e300};
  NDBuffer encoded = codec->encode(array_of(values, {4}, f8), spec_of({4}, f8));
  EXPECT_EQ(bytes_of(encoded), from_hex("9a9999999999b93f9a9999999999b93fffffffffffffdf3f9c7500883ce4377e"));
}

TEST(Delta, BigEndianDtypeWorksOnNativeElements) {
  // The chunk reaches array->array codecs in native order; ">i4" only says how the bytes
  // codec stores it. numcodecs: Delta('>i4').encode([1,2,3,1000]) -> 1,1,1,997 big-endian.
  const DataType be = parse_dtype_v2(">i4");
  auto codec = make_v2({{"id", "delta"}, {"dtype", ">i4"}}, be);
  const ChunkSpec spec = spec_of({4}, be);
  NDBuffer encoded = codec->encode(array_of(std::vector<std::int32_t>{1, 2, 3, 1000}, {4}, be), spec);
  EXPECT_EQ(bytes_of(encoded), bytes_of(array_of(std::vector<std::int32_t>{1, 1, 1, 997}, {4}, be)));
  EXPECT_EQ(codec->encoded_spec(spec).dtype.storage_endian(), Endian::kBig);
}

TEST(Delta, RoundTripsEveryIntegerWidth) {
  for (const char* name : {"<i1", "<u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8"}) {
    SCOPED_TRACE(name);
    const DataType dtype = parse_dtype_v2(name);
    auto codec = make_v2({{"id", "delta"}, {"dtype", name}}, dtype);
    Bytes raw = random_bytes(dtype.size() * 257);
    NDBuffer input = NDBuffer::allocate({257}, dtype);
    std::memcpy(input.data(), raw.data(), raw.size());
    const ChunkSpec spec = spec_of({257}, dtype);
    EXPECT_EQ(bytes_of(codec->decode(codec->encode(input, spec), spec)), raw);
  }
}

TEST(Delta, MetadataForms) {
  const DataType i4 = DataType::int_(32);
  auto v2 = make_v2({{"id", "delta"}, {"dtype", "<i4"}, {"astype", "<i2"}}, i4);
  EXPECT_EQ(v2->name(), "numcodecs.delta");
  EXPECT_EQ(*v2->to_v2_json(), (nlohmann::json{{"id", "delta"}, {"dtype", "<i4"}, {"astype", "<i2"}}));
  auto v3 = make_v3({{"dtype", "int32"}}, i4);
  EXPECT_EQ(v3->to_json(), (nlohmann::json{{"name", "numcodecs.delta"}, {"configuration", {{"dtype", "int32"}}}}));
}

TEST(Delta, BadConfigurationsAreInvalidArgument) {
  const DataType i4 = DataType::int_(32);
  expect_error<InvalidArgumentError>([&] { make_v2({{"id", "delta"}}, i4); }, "needs \"dtype\"");
  expect_error<InvalidArgumentError>([&] { make_v2({{"id", "delta"}, {"dtype", 4}}, i4); });
  expect_error<InvalidArgumentError>([&] { make_v2({{"id", "delta"}, {"dtype", "<q9"}}, i4); });
  expect_error<InvalidArgumentError>([&] { make_v2({{"id", "delta"}, {"dtype", "|b1"}}, i4); });
  expect_error<InvalidArgumentError>([&] { make_v2({{"id", "delta"}, {"dtype", "<i4"}, {"scale", 2}}, i4); },
                                     "unexpected configuration key");
  expect_error<InvalidArgumentError>([&] { make_v3({{"dtype", "int32"}, {"astype", "notatype"}}, i4); });
  // A dtype that does not match the chunk.
  auto codec = make_v2({{"id", "delta"}, {"dtype", "<i2"}}, i4);
  expect_error<InvalidArgumentError>([&] { codec->encoded_spec(spec_of({4}, i4)); }, "cannot work on");
}

TEST(Delta, MismatchedInputIsRejected) {
  const DataType i4 = DataType::int_(32);
  auto codec = make_v2({{"id", "delta"}, {"dtype", "<i4"}, {"astype", "<i2"}}, i4);
  // An encoded array of the wrong element type or shape for the spec.
  NDBuffer wrong_type = NDBuffer::allocate({4}, i4);
  expect_error<InvalidArgumentError>([&] { codec->decode(wrong_type, spec_of({4}, i4)); });
  NDBuffer wrong_shape = NDBuffer::allocate({3}, DataType::int_(16));
  expect_error<InvalidArgumentError>([&] { codec->decode(wrong_shape, spec_of({4}, i4)); });
}

}  // namespace
}  // namespace zarrkit

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/filter_test_support.h"
#include "codecs/register.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

const CodecRegistry& registry() {
  static const CodecRegistry r = registry_with(register_packbits_codec);
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> make_v2() {
  return as_array_codec(registry().make_v2({{"id", "packbits"}}, {DataType::boolean(), 2}));
}

std::shared_ptr<const ArrayToArrayCodec> make_v3() {
  return as_array_codec(registry().make_v3({{"name", "numcodecs.packbits"}}, {DataType::boolean(), 3}));
}

// numcodecs 0.16: PackBits().encode(np.arange(n) * 7 % 3 == 0) for several n.
TEST(PackBits, MatchesNumcodecs) {
  const DataType b1 = DataType::boolean();
  const struct {
    std::uint64_t n;
    const char* input;
    const char* packed;
  } cases[] = {
      {0, "", "00"},
      {1, "01", "0780"},
      {4, "01000001", "0490"},
      {8, "0100000100000100", "0092"},
      {11, "0100000100000100000100", "059240"},
      {16, "01000001000001000001000001000001", "009249"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.n);
    const ChunkSpec spec = spec_of({c.n}, b1);
    const ChunkSpec packed = make_v2()->encoded_spec(spec);
    EXPECT_EQ(packed.shape, (Shape{1 + (c.n + 7) / 8}));
    EXPECT_EQ(packed.dtype, DataType::uint_(8));
    expect_numcodecs_bytes(*make_v2(), array_of_bytes(from_hex(c.input), {c.n}, b1), spec, c.packed, c.input);
  }
}

TEST(PackBits, AnyNonZeroByteIsTrueAndShapesFlatten) {
  const DataType b1 = DataType::boolean();
  // NumPy views the bytes as bool; packbits sets a bit for every non-zero byte.
  const ChunkSpec spec = spec_of({2, 3}, b1);
  NDBuffer encoded = make_v3()->encode(array_of_bytes(from_hex("ff0002000001"), {2, 3}, b1), spec);
  EXPECT_EQ(bytes_of(encoded), from_hex("02a4"));
  EXPECT_EQ(bytes_of(make_v3()->decode(encoded, spec)), from_hex("010001000001"));
}

TEST(PackBits, RoundTripsRandomBits) {
  const DataType b1 = DataType::boolean();
  Bytes raw = random_bytes(1001);
  for (auto& b : raw) b = static_cast<std::byte>(std::to_integer<unsigned>(b) & 1u);
  const ChunkSpec spec = spec_of({7, 11, 13}, b1);
  NDBuffer encoded = make_v2()->encode(array_of_bytes(raw, spec.shape, b1), spec);
  EXPECT_EQ(encoded.nbytes(), 1u + 126u);
  EXPECT_EQ(bytes_of(make_v2()->decode(encoded, spec)), raw);
}

TEST(PackBits, CorruptDataIsDataLoss) {
  const DataType b1 = DataType::boolean();
  const DataType u1 = DataType::uint_(8);
  const ChunkSpec spec = spec_of({11}, b1);
  // The wrong size for 11 elements, and a header that disagrees with the element count.
  expect_error<DataLossError>([&] { make_v2()->decode(array_of_bytes(from_hex("0592"), {2}, u1), spec); }, "bytes");
  expect_error<DataLossError>([&] { make_v2()->decode(array_of_bytes(from_hex("03924000"), {4}, u1), spec); },
                              "expected");
  expect_error<DataLossError>([&] { make_v2()->decode(array_of_bytes(from_hex("049240"), {3}, u1), spec); },
                              "padding bits");
  expect_error<DataLossError>([&] { make_v2()->decode(array_of_bytes(from_hex("ff9240"), {3}, u1), spec); },
                              "padding bits");
}

TEST(PackBits, BadConfigurationsAreTypedErrors) {
  expect_error<InvalidArgumentError>([&] { registry().make_v2({{"id", "packbits"}, {"bits", 8}}, {}); },
                                     "unexpected configuration key");
  expect_error<InvalidArgumentError>([&] { make_v2()->encoded_spec(spec_of({4}, DataType::uint_(8))); },
                                     "bool arrays");
  EXPECT_EQ(*make_v2()->to_v2_json(), (nlohmann::json{{"id", "packbits"}}));
  EXPECT_EQ(make_v3()->to_json(),
            (nlohmann::json{{"name", "numcodecs.packbits"}, {"configuration", nlohmann::json::object()}}));
}

}  // namespace
}  // namespace zarrkit

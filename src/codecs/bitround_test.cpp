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
  static const CodecRegistry r = registry_with(register_bitround_codec);
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> make_v2(int keepbits) {
  return as_array_codec(registry().make_v2({{"id", "bitround"}, {"keepbits", keepbits}}, {}));
}

std::shared_ptr<const ArrayToArrayCodec> make_v3(const nlohmann::json& config) {
  return as_array_codec(registry().make_v3({{"name", "numcodecs.bitround"}, {"configuration", config}}, {}));
}

const std::vector<float> kFloat32 = {1.1f, 2.2f, 3.3f, 4.4f, -1e-5f, 65.5f, 3.14159f, 1e30f};

// numcodecs 0.16: BitRound(keepbits=k).encode(np.array(x, '<f4')); decoding is the identity.
TEST(BitRound, Float32MatchesNumcodecs) {
  const DataType f4 = DataType::float_(32);
  const ChunkSpec spec = spec_of({8}, f4);
  const struct {
    int keepbits;
    const char* hex;
  } cases[] = {
      {0, "0000803f000000400000804000008040000000b7000080420000804000008071"},
      {3, "0000903f000010400000504000009040000020b7000080420000504000005071"},
      {10, "00c08c3f00c00c400040534000c08c4000c027b7000083420000494000004a71"},
      {23, "cdcc8c3fcdcc0c4033335340cdcc8c40acc527b700008342d00f4940caf24971"},  // all bits: unchanged
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.keepbits);
    expect_numcodecs_bytes(*make_v2(c.keepbits), array_of(kFloat32, {8}, f4), spec, c.hex, c.hex);
  }
}

TEST(BitRound, Float64AndFloat16MatchNumcodecs) {
  const DataType f8 = DataType::float_(64);
  const std::vector<double> x8 = {1.1, 2.2, 3.3, 3.141592653589793, -1e300, 2.718281828459045};
  const char* hex8 =
      "0000000000a0f13f0000000000a001400000000000600a4000000000002009400000000000e037fe0000000000c00540";
  expect_numcodecs_bytes(*make_v3({{"keepbits", 7}}), array_of(x8, {2, 3}, f8), spec_of({2, 3}, f8), hex8, hex8);
  // float16 [1.1, 2.2, 3.3, -65504, 0.000123] as stored by NumPy.
  const DataType f2 = DataType::float_(16);
  const std::vector<std::uint16_t> x2 = {0x3c66, 0x4066, 0x429a, 0xfbff, 0x0808};
  expect_numcodecs_bytes(*make_v2(4), array_of(x2, {5}, f2), spec_of({5}, f2), "803c8040804200fc0008",
                         "803c8040804200fc0008");
}

TEST(BitRound, RoundingIsIdempotentAndKeepsTheTopBits) {
  const DataType f4 = DataType::float_(32);
  Bytes raw = random_bytes(4 * 4096);
  NDBuffer x = array_of_bytes(raw, {4096}, f4);
  const ChunkSpec spec = spec_of({4096}, f4);
  auto codec = make_v2(5);
  NDBuffer once = codec->encode(x, spec);
  EXPECT_EQ(bytes_of(codec->encode(once, spec)), bytes_of(once));
  const auto* bits = reinterpret_cast<const std::uint32_t*>(once.data());
  for (std::size_t i = 0; i < 4096; ++i) EXPECT_EQ(bits[i] & 0x3ffffu, 0u) << i;  // 23 - 5 bits dropped
}

TEST(BitRound, BadConfigurationsAreTypedErrors) {
  expect_error<InvalidArgumentError>([&] { make_v3(nlohmann::json::object()); }, "needs \"keepbits\"");
  expect_error<InvalidArgumentError>([&] { make_v3({{"keepbits", -1}}); }, "keepbits");
  expect_error<InvalidArgumentError>([&] { make_v3({{"keepbits", 2.5}}); }, "keepbits");
  expect_error<InvalidArgumentError>([&] { make_v3({{"keepbits", 53}}); }, "52");
  expect_error<InvalidArgumentError>([&] { make_v3({{"keepbits", 3}, {"dtype", "<f4"}}); },
                                     "unexpected configuration key");
  // Floats only; and no more bits than the type has (numcodecs: "Keepbits too large").
  const DataType i4 = DataType::int_(32);
  expect_error<InvalidArgumentError>([&] { make_v2(3)->encoded_spec(spec_of({4}, i4)); }, "float");
  const DataType f2 = DataType::float_(16);
  expect_error<InvalidArgumentError>(
      [&] { make_v2(11)->encode(array_of(std::vector<std::uint16_t>{1, 2}, {2}, f2), spec_of({2}, f2)); },
      "mantissa bits");
}

TEST(BitRound, MetadataForms) {
  EXPECT_EQ(make_v2(3)->name(), "numcodecs.bitround");
  EXPECT_EQ(*make_v2(3)->to_v2_json(), (nlohmann::json{{"id", "bitround"}, {"keepbits", 3}}));
  EXPECT_EQ(make_v3({{"keepbits", 3}})->to_json(),
            (nlohmann::json{{"name", "numcodecs.bitround"}, {"configuration", {{"keepbits", 3}}}}));
}

}  // namespace
}  // namespace zarrkit

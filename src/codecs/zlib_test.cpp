#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

// Reference encodings of reference_sample() (840 bytes), made with numcodecs 0.16:
// Zlib(level=1).encode(sample)
constexpr std::string_view kNumcodecsLevel1 =
    "7801ab4a2c2acace2c5148cecf2d284a2d2e4e2d5648ce28cdcb2eb656a81a951ad9a1c1c0c8c22920a962e810985239"
    "61e59187ac6a9e7953f7bd94f6aa5ef7583e62f20591d01977358bf6f2c7ad678fd92c987352b7ef63f42183d9bc356f"
    "536f859df73f137031f25ed6e766d1255667d399e7d8dcac553e562073b454fd5a8fcbcfadc5c61fb65439f15c5e58e8"
    "2cfee2c0acb21013b1afb70faf9dd95e9e191becedea686fefe8ea1d1c9b59de3e73ede1db5fc54c42ca661d7821ee5c"
    "b8f0328f53d5960fc6c55b7fbaf45c532f3d2a53704cb9f6a6cd1ce6f4b3564b449b3f67dd8bbc1870c6ff7cd8add4b7"
    "35bcb30d0e457fecd33d9923b839867d7d1cffde22cdbb3342452e4c8e907fbcaeda4bfae5bea9799e6aac0f8fac9c50"
    "9912e860a82229c0c9c248b2d701b04457c6";
// Zlib(level=9).encode(sample)
constexpr std::string_view kNumcodecsLevel9 =
    "78daab4a2c2acace2c5148cecf2d284a2d2e4e2d5648ce28cdcb2eb656a81a951ad9520c8c2c9c02922a860e81299513"
    "561e79c8aae6993775df4b69afea758fe523265f10099d7157b3682f7fdc7af698cd82392775fb3e461f3298cd5bf336"
    "f556d879ff33011723ef657d6e165d6275369d798ecdcd5ae5630532474bd5aff5b8fcdc5a6cfc614b9513cfe58585ce"
    "e22f0ecc2a0b3111fb7afbf0da99ede599b1c1deae8ef6f68eaedec1b199e5ed33d71ebefd55cc24a46cd68117e2ce85"
    "0b2ff338556df9605cbcf5a74bcf35f5d2a33205c7946b6fdacc614e3f6bb544b4f973d6bdc88b0167fccf87dd4a7d5b"
    "c33bdbe050f4c73edd9339829b63d8d7c7f1ef2dd2bc3b2354e4c2e408f9c7ebaabda45fee9b9ae7a9c6faf0c8ca0995"
    "29810e862a92029c2c8c247b1d00b04457c6";
// Zlib(level=1).encode(b"")
constexpr std::string_view kNumcodecsEmpty =
    "7801030000000001";

class ZlibTest : public ::testing::Test {
 protected:
  ZlibTest() { register_zlib_codec(registry_); }
  std::shared_ptr<const BytesToBytesCodec> v3(const nlohmann::json& config) {
    return as_bytes_codec(
        registry_.make_v3({{"name", "numcodecs.zlib"}, {"configuration", config}}, CodecContext{}));
  }
  std::shared_ptr<const BytesToBytesCodec> v2(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v2(entry, CodecContext{}));
  }
  Bytes decode(const Bytes& encoded, SizeBound bound) {
    return to_vector(v3({{"level", 1}})->decode(view(encoded), bound, ChunkSpec{}));
  }
  CodecRegistry registry_;
};

TEST_F(ZlibTest, RoundTripsAtEveryLevel) {
  for (int level : {-1, 0, 1, 6, 9}) {
    SCOPED_TRACE(level);
    expect_round_trips(*v3({{"level", level}}));
  }
}

TEST_F(ZlibTest, WritesAZlibStream) {
  Buffer encoded = v3({{"level", 1}})->encode(view(to_bytes("zarrkit")), ChunkSpec{});
  ASSERT_GE(encoded.size(), 6u);
  EXPECT_EQ(encoded.data()[0], std::byte{0x78});  // CM = 8 (deflate), 32 KiB window
  EXPECT_EQ((static_cast<unsigned>(encoded.data()[0]) * 256 + static_cast<unsigned>(encoded.data()[1])) % 31, 0u);
}

TEST_F(ZlibTest, DecodesNumcodecsOutput) {
  const Bytes sample = reference_sample();
  for (auto hex : {kNumcodecsLevel1, kNumcodecsLevel9}) {
    EXPECT_EQ(decode(from_hex(hex), exact(sample.size())), sample);
    EXPECT_EQ(decode(from_hex(hex), ceiling(sample.size())), sample);
    EXPECT_EQ(decode(from_hex(hex), ceiling(1 << 20)), sample);
  }
  EXPECT_EQ(decode(from_hex(kNumcodecsEmpty), exact(0)), Bytes{});
  EXPECT_EQ(decode(from_hex(kNumcodecsEmpty), ceiling(100)), Bytes{});
}

TEST_F(ZlibTest, RejectsDataAfterTheStream) {
  const Bytes trailing = concat(from_hex(kNumcodecsLevel1), to_bytes("xyz"));
  expect_error<DataLossError>([&] { decode(trailing, exact(840)); }, "3 bytes of unexpected data");
  expect_error<DataLossError>([&] { decode(trailing, ceiling(5000)); }, "3 bytes of unexpected data");
}

TEST_F(ZlibTest, RejectsTruncatedInput) {
  expect_truncations_rejected(*v3({{"level", 1}}), from_hex(kNumcodecsLevel1), 840);
  expect_truncations_rejected(*v3({{"level", 1}}), from_hex(kNumcodecsEmpty), 0);
}

TEST_F(ZlibTest, RejectsCorruptInput) {
  const Bytes encoded = from_hex(kNumcodecsLevel1);
  // Every byte is covered: the header by its check bits, the rest by the Adler-32.
  expect_corruptions_rejected(*v3({{"level", 1}}), encoded, reference_sample(), 0, encoded.size());
  expect_corruptions_rejected(*v3({{"level", 1}}), encoded, reference_sample(), 0, encoded.size(), 0x01);
}

TEST_F(ZlibTest, EnforcesSizeBounds) { expect_size_bounds_enforced(*v3({{"level", 1}})); }

TEST_F(ZlibTest, RejectsBadConfiguration) {
  expect_error<InvalidArgumentError>([&] { v3({{"level", 10}}); }, "from -1 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"level", -2}}); }, "from -1 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"level", "1"}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 1}, {"wbits", 15}}); }, "unexpected configuration key");
  expect_error<InvalidArgumentError>([&] { v3({{"id", "gzip"}}); }, "\"id\" must be \"zlib\"");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "zlib"}, {"level", 1.0}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { registry_.make_v3({{"name", "numcodecs.zlib"}, {"configuration", 3}}, {}); },
                                     "must be an object");
}

TEST_F(ZlibTest, JsonRoundTrip) {
  auto codec = v3({{"level", 4}});
  const nlohmann::json v3_json = {{"name", "numcodecs.zlib"}, {"configuration", {{"level", 4}}}};
  const nlohmann::json v2_json = {{"id", "zlib"}, {"level", 4}};
  EXPECT_EQ(codec->to_json(), v3_json);
  EXPECT_EQ(codec->to_v2_json(), v2_json);
  EXPECT_EQ(as_bytes_codec(registry_.make_v3(codec->to_json(), {}))->to_json(), v3_json);
  EXPECT_EQ(v2(*codec->to_v2_json())->to_v2_json(), v2_json);
  // zarr-python writes {} for the numcodecs default; some writers keep the "id".
  EXPECT_EQ(v3(nlohmann::json::object())->to_v2_json(), nlohmann::json({{"id", "zlib"}, {"level", 1}}));
  EXPECT_EQ(v3({{"id", "zlib"}, {"level", 2}})->to_json(),
            nlohmann::json({{"name", "numcodecs.zlib"}, {"configuration", {{"level", 2}}}}));
  EXPECT_EQ(v2({{"id", "zlib"}, {"level", -1}})->to_v2_json(), nlohmann::json({{"id", "zlib"}, {"level", -1}}));
}

}  // namespace
}  // namespace zarrkit

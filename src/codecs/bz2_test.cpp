#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

// Reference encodings made with numcodecs 0.16 / Python 3.11:
// BZ2(level=1).encode(reference_sample())
constexpr std::string_view kNumcodecsSample =
    "425a683131415926535999600ab10001637fffeea6e7accda26c1cfe38ef6f2effffbe08854a7c24238e035f26e93b28"
    "626a2030012d440d5534f500d1ea6868064001b5346807a8308191ea1e93269a0643d4f532326d4699a9a0f4d4f4c4ca"
    "2064c26004c980004c40c0000009813008c00004c00000092aa000000d000681a190069900d00000c400007a80da4d1e"
    "a0d00d1bd7103b9f59d804c604a1b371683e8a3a3cd101c923d019483e972187950bce6e150f51e854ca76fc1100111a"
    "9033c2f1b0f9c0d6efc9bd10e786df2db1f73dab82d56c78214d634d8d7c22113204b84ca11daf9bf13b947692a2951a"
    "4ac207db21b08c60ab547ac2e4b0ea0c718a0d37e560236404795816608ba047ecfdb4060110bc41153fd472a08b1043"
    "bdf190444c20462930087d0c11c8d6a41d1044d0221023a464111688114e088e0476b7046bf98218f6cdf59169e116d1"
    "56014662bde1dd0888948a9a123f1f1350b13a505b541c8059cae6a57a9bfa5253bf632430e27c81f621a420cd34f2de"
    "8e6a260f92eab86717f9d034c85a89078baeb645520e07b163167fb98968c3b551dcc1199274853e31376d1dd14176d1"
    "7a932966c553930ffc5dc914e1424265802ac4";
// bz2.compress(sample[:400], 1) + bz2.compress(sample[400:], 9): two streams
constexpr std::string_view kPythonTwoStreams =
    "425a683131415926535976d8fc810000c09980400000082a6bde1020007050d34c0011faaa7a8068f49ea50c8d60982c"
    "6d0247c391e09150645c1b8f858e050c8ee0c09162c62a0fc5dc914e14241db63f2040425a68393141592653595c2eda"
    "6d0000727fffeea6e7accda26c1cfe38ef6f2effffbe08854a7c24238e035f26e93b28626a203001194b435521a0c47a"
    "993268001a30d4c868184d34064c818984d190c08f53350c9faa641b53d194f4855261304d1a61313234c46043000991"
    "9181a8c260993086004c0260d00ca6094aa326868681a19000341a000698800068346869a68069ea03419a4d1e91b50d"
    "134d58b021bd9f644a2afa8754acc9177cd03b4cbae68286aaa3d890a65fcbc772d45c791b79734dd70a10509b415e77"
    "6dcd0722d0e59c9245245bea373f29dfbd5ad1889f58af9f6eb636ee8cdea2fed9b1d578bd14f9c769479f66e286589d"
    "806b92451695124844a49a3e8e3d30e1c919e98df108ce0ba430d098d6f60f8a11fd50b0fe6ccd0b811d728aa1272905"
    "33868868c84222cfe16d214884743b85505db095e830422b84207b211656bfc3259e0bb94c0cb5de1ad58642c87ea4af"
    "add6965c0a74021b2261a10ca47a3f310e7b5a59d8c96884b27da50c8086181ed88545a38044c0103f9a0a83722d2a41"
    "0827cc0302c104dbd628efc051ff2316edc0835b0efcf6a608b6ca6e2c728f3dc2700aa8ab89d671682b2ec4be9ff177"
    "2453850905c2eda6d0";
// BZ2(level=1).encode(b"")
constexpr std::string_view kNumcodecsEmpty = "425a683117724538509000000000";

class Bz2Test : public ::testing::Test {
 protected:
  Bz2Test() { register_bz2_codec(registry_); }
  std::shared_ptr<const BytesToBytesCodec> v3(const nlohmann::json& config) {
    return as_bytes_codec(registry_.make_v3({{"name", "numcodecs.bz2"}, {"configuration", config}}, CodecContext{}));
  }
  std::shared_ptr<const BytesToBytesCodec> v2(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v2(entry, CodecContext{}));
  }
  Bytes decode(const Bytes& encoded, SizeBound bound) {
    return to_vector(v3(nlohmann::json::object())->decode(view(encoded), bound, ChunkSpec{}));
  }
  CodecRegistry registry_;
};

TEST_F(Bz2Test, RoundTrips) {
  for (int level : {1, 9}) {
    SCOPED_TRACE(level);
    expect_round_trips(*v3({{"level", level}}));
  }
}

TEST_F(Bz2Test, EncodesLikeNumcodecs) {
  // bzip2 is deterministic: the same level gives the same bytes as Python's bz2 module.
  EXPECT_EQ(to_vector(v3({{"level", 1}})->encode(view(reference_sample()), ChunkSpec{})), from_hex(kNumcodecsSample));
  EXPECT_EQ(to_vector(v3({{"level", 1}})->encode({}, ChunkSpec{})), from_hex(kNumcodecsEmpty));
}

TEST_F(Bz2Test, DecodesNumcodecsOutput) {
  const Bytes sample = reference_sample();
  EXPECT_EQ(decode(from_hex(kNumcodecsSample), exact(sample.size())), sample);
  EXPECT_EQ(decode(from_hex(kNumcodecsSample), ceiling(sample.size())), sample);
  EXPECT_EQ(decode(from_hex(kNumcodecsSample), ceiling(1 << 20)), sample);
  EXPECT_EQ(decode(from_hex(kNumcodecsEmpty), exact(0)), Bytes{});
  EXPECT_EQ(decode(from_hex(kNumcodecsEmpty), ceiling(10)), Bytes{});
}

TEST_F(Bz2Test, DecodesConcatenatedStreams) {
  const Bytes sample = reference_sample();
  const Bytes two = from_hex(kPythonTwoStreams);
  EXPECT_EQ(decode(two, exact(sample.size())), sample);
  EXPECT_EQ(decode(two, ceiling(sample.size())), sample);
  EXPECT_EQ(decode(two, ceiling(100000)), sample);
  expect_error<DataLossError>([&] { decode(two, exact(sample.size() - 1)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(two, ceiling(401)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(two, exact(sample.size() + 1)); }, "expected exactly");
}

TEST_F(Bz2Test, RejectsDataAfterTheLastStream) {
  expect_error<DataLossError>([&] { decode(concat(from_hex(kNumcodecsSample), to_bytes("junk")), exact(840)); },
                              "no bzip2 header");
  expect_error<DataLossError>([&] { decode(concat(from_hex(kNumcodecsSample), Bytes(4, std::byte{0})), ceiling(900)); },
                              "no bzip2 header");
}

TEST_F(Bz2Test, RejectsTruncatedInput) {
  expect_truncations_rejected(*v3(nlohmann::json::object()), from_hex(kNumcodecsSample), 840);
  expect_truncations_rejected(*v3(nlohmann::json::object()), from_hex(kNumcodecsEmpty), 0);
}

TEST_F(Bz2Test, RejectsCorruptInput) {
  const Bytes encoded = from_hex(kNumcodecsSample);
  // Block and stream CRCs cover the data; a few bits (such as the block randomised flag's
  // neighbours in the bit stream) may decode the same data, never different data.
  for (std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0x10}}) {
    expect_corruptions_rejected(*v3(nlohmann::json::object()), encoded, reference_sample(), 0, encoded.size(), mask,
                                /*harmless_flips_allowed=*/true);
  }
  expect_error<DataLossError>([&] { decode(to_bytes("BZh9 but not really"), ceiling(100)); }, "corrupt bzip2 data");
}

TEST_F(Bz2Test, EnforcesSizeBounds) { expect_size_bounds_enforced(*v3(nlohmann::json::object())); }

TEST_F(Bz2Test, RejectsBadConfiguration) {
  expect_error<InvalidArgumentError>([&] { v3({{"level", 0}}); }, "from 1 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 10}}); }, "from 1 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"level", "9"}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "bz2"}, {"level", 1}, {"blocksize", 9}}); },
                                     "unexpected configuration key");
}

TEST_F(Bz2Test, JsonRoundTrip) {
  auto codec = v3({{"level", 5}});
  const nlohmann::json v3_json = {{"name", "numcodecs.bz2"}, {"configuration", {{"level", 5}}}};
  const nlohmann::json v2_json = {{"id", "bz2"}, {"level", 5}};
  EXPECT_EQ(codec->to_json(), v3_json);
  EXPECT_EQ(codec->to_v2_json(), v2_json);
  EXPECT_EQ(as_bytes_codec(registry_.make_v3(v3_json, {}))->to_v2_json(), v2_json);
  EXPECT_EQ(v2(v2_json)->to_json(), v3_json);
  EXPECT_EQ(v2({{"id", "bz2"}})->to_v2_json(), nlohmann::json({{"id", "bz2"}, {"level", 1}}));
}

}  // namespace
}  // namespace zarrkit

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

// Reference encodings of reference_sample() (840 bytes), made with numcodecs 0.16 and Python 3.11:
// GZip(level=1).encode(sample)
constexpr std::string_view kNumcodecsLevel1 =
    "1f8b08007666026b04ffab4a2c2acace2c5148cecf2d284a2d2e4e2d5648ce28cdcb2eb656a81a951ad9a1c1c0c8c229"
    "20a962e81098523961e59187ac6a9e7953f7bd94f6aa5ef7583e62f20591d01977358bf6f2c7ad678fd92c987352b7ef"
    "63f42183d9bc356f536f859df73f137031f25ed6e766d1255667d399e7d8dcac553e562073b454fd5a8fcbcfadc5c61f"
    "b65439f15c5e58e82cfee2c0acb21013b1afb70faf9dd95e9e191becedea686fefe8ea1d1c9b59de3e73ede1db5fc54c"
    "42ca661d7821ee5cb8f0328f53d5960fc6c55b7fbaf45c532f3d2a53704cb9f6a6cd1ce6f4b3564b449b3f67dd8bbc18"
    "70c6ff7cd8add4b735bcb30d0e457fecd33d9923b839867d7d1cffde22cdbb3342452e4c8e907fbcaeda4bfae5bea979"
    "9e6aac0f8fac9c509912e860a82229c0c9c248b2d70106ec82c948030000";
// GZip(level=9).encode(sample)
constexpr std::string_view kNumcodecsLevel9 =
    "1f8b08007666026b02ffab4a2c2acace2c5148cecf2d284a2d2e4e2d5648ce28cdcb2eb656a81a951ad9520c8c2c9c02"
    "922a860e81299513561e79c8aae6993775df4b69afea758fe523265f10099d7157b3682f7fdc7af698cd82392775fb3e"
    "461f3298cd5bf336f556d879ff33011723ef657d6e165d6275369d798ecdcd5ae5630532474bd5aff5b8fcdc5a6cfc61"
    "4b9513cfe58585cee22f0ecc2a0b3111fb7afbf0da99ede599b1c1deae8ef6f68eaedec1b199e5ed33d71ebefd55cc24"
    "a46cd68117e2ce850b2ff338556df9605cbcf5a74bcf35f5d2a33205c7946b6fdacc614e3f6bb544b4f973d6bdc88b01"
    "67fccf87dd4a7d5bc33bdbe050f4c73edd9339829b63d8d7c7f1ef2dd2bc3b2354e4c2e408f9c7ebaabda45fee9b9ae7"
    "a9c6faf0c8ca099529810e862a92029c2c8c247b1d0006ec82c948030000";
// GZip(level=1).encode(b"")
constexpr std::string_view kNumcodecsEmpty =
    "1f8b08007666026b04ff03000000000000000000";
// gzip.GzipFile(filename="chunk.bin", mtime=1700000000) holding sample[:100]: a header with FNAME
constexpr std::string_view kPythonNamedFirst100 =
    "1f8b080800f1536502ff6368756e6b2e62696e00ab4a2c2acace2c5148cecf2d284a2d2e4e2d5648ce28cdcb2eb656a8"
    "a29614009e532a8c64000000";
// gzip.compress(sample[:400], mtime=0) + gzip.compress(sample[400:], mtime=0): two members
constexpr std::string_view kPythonTwoMembers =
    "1f8b0800000000000203ab4a2c2acace2c5148cecf2d284a2d2e4e2d5648ce28cdcb2eb656a81a95a2bf140077e506b0"
    "900100001f8b0800000000000203cbcb2eb656a84a2c2acace2c5148cecf2d284a2d2e4e2d5648ce28cda3b71403230b"
    "a780a48aa143604ae58495471eb2aa79e64dddf752daab7add63f988c917444267dcd52cdacb1fb79e3d66b360ce49dd"
    "be8fd1870c66f3d6bc4dbd1576deff4cc0c5c87b599f9b4597589d4d679e6373b356f95881ccd152f56b3d2e3fb7161b"
    "7fd852e5c4737961a1b3f88b03b3ca424cc4bede3ebc76667b79666cb0b7aba3bdbda3ab77706c6679fbccb5876f7f15"
    "3309299b75e085b873e1c2cb3c4e555b3e18176ffde9d2734dbdf4a84cc131e5da9b367398d3cf5a2d116dfe9c752ff2"
    "62c019fff361b752dfd6f0ce363814fdb14ff7648ee0e618f6f571fc7b8b34efce0815b9303942fef1ba6a2fe997fba6"
    "e679aab13e3cb27242654aa083a18aa400270b23c95e0700383358fdb8010000";
// zlib.compress(sample, 1): a zlib stream, which gzip readers that detect headers accept
constexpr std::string_view kZlibLevel1 =
    "7801ab4a2c2acace2c5148cecf2d284a2d2e4e2d5648ce28cdcb2eb656a81a951ad9a1c1c0c8c22920a962e810985239"
    "61e59187ac6a9e7953f7bd94f6aa5ef7583e62f20591d01977358bf6f2c7ad678fd92c987352b7ef63f42183d9bc356f"
    "536f859df73f137031f25ed6e766d1255667d399e7d8dcac553e562073b454fd5a8fcbcfadc5c61fb65439f15c5e58e8"
    "2cfee2c0acb21013b1afb70faf9dd95e9e191becedea686fefe8ea1d1c9b59de3e73ede1db5fc54c42ca661d7821ee5c"
    "b8f0328f53d5960fc6c55b7fbaf45c532f3d2a53704cb9f6a6cd1ce6f4b3564b449b3f67dd8bbc1870c6ff7cd8add4b7"
    "35bcb30d0e457fecd33d9923b839867d7d1cffde22cdbb3342452e4c8e907fbcaeda4bfae5bea9799e6aac0f8fac9c50"
    "9912e860a82229c0c9c248b2d701b04457c6";

class GzipTest : public ::testing::Test {
 protected:
  GzipTest() { register_gzip_codec(registry_); }
  std::shared_ptr<const BytesToBytesCodec> v3(const nlohmann::json& config, std::string name = "gzip") {
    return as_bytes_codec(registry_.make_v3({{"name", name}, {"configuration", config}}, CodecContext{}));
  }
  std::shared_ptr<const BytesToBytesCodec> v2(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v2(entry, CodecContext{}));
  }
  Bytes decode(const Bytes& encoded, SizeBound bound) {
    return to_vector(v3({{"level", 1}})->decode(view(encoded), bound, ChunkSpec{}));
  }
  CodecRegistry registry_;
};

TEST_F(GzipTest, RoundTripsAtEveryLevel) {
  for (int level : {0, 1, 5, 9}) {
    SCOPED_TRACE(level);
    expect_round_trips(*v3({{"level", level}}));
  }
}

TEST_F(GzipTest, WritesAGzipStream) {
  Buffer encoded = v3({{"level", 6}})->encode(view(reference_sample()), ChunkSpec{});
  ASSERT_GE(encoded.size(), 18u);
  EXPECT_EQ(encoded.data()[0], std::byte{0x1f});  // RFC 1952 magic, not a zlib header
  EXPECT_EQ(encoded.data()[1], std::byte{0x8b});
  EXPECT_EQ(encoded.data()[2], std::byte{0x08});  // deflate
  EXPECT_LT(encoded.size(), reference_sample().size() / 2);
}

TEST_F(GzipTest, DecodesNumcodecsOutput) {
  const Bytes sample = reference_sample();
  for (auto hex : {kNumcodecsLevel1, kNumcodecsLevel9}) {
    EXPECT_EQ(decode(from_hex(hex), exact(sample.size())), sample);
    EXPECT_EQ(decode(from_hex(hex), ceiling(sample.size())), sample);
    EXPECT_EQ(decode(from_hex(hex), ceiling(1 << 20)), sample);
  }
  EXPECT_EQ(decode(from_hex(kNumcodecsEmpty), exact(0)), Bytes{});
  EXPECT_EQ(decode(from_hex(kNumcodecsEmpty), ceiling(0)), Bytes{});
}

TEST_F(GzipTest, DecodesHeadersWithFileName) {
  const Bytes sample = reference_sample();
  const Bytes first100(sample.begin(), sample.begin() + 100);
  EXPECT_EQ(decode(from_hex(kPythonNamedFirst100), exact(100)), first100);
  EXPECT_EQ(decode(from_hex(kPythonNamedFirst100), ceiling(1000)), first100);
}

TEST_F(GzipTest, DecodesMultiMemberStreams) {
  const Bytes sample = reference_sample();
  const Bytes two = from_hex(kPythonTwoMembers);
  EXPECT_EQ(decode(two, exact(sample.size())), sample);
  EXPECT_EQ(decode(two, ceiling(sample.size())), sample);
  EXPECT_EQ(decode(two, ceiling(100000)), sample);
  expect_error<DataLossError>([&] { decode(two, exact(sample.size() - 1)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(two, ceiling(500)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(two, exact(sample.size() + 1)); }, "expected exactly");
  // Zero padding between and after members is accepted, as Python's gzip module does.
  Bytes padded = from_hex(kPythonTwoMembers);
  padded.insert(padded.end(), 7, std::byte{0});
  EXPECT_EQ(decode(padded, exact(sample.size())), sample);
  // Members written by this codec concatenate too.
  auto codec = v3({{"level", 3}});
  Bytes a = to_vector(codec->encode(view(sample), ChunkSpec{}));
  Bytes joined = concat(concat(a, Bytes(3, std::byte{0})), a);
  EXPECT_EQ(decode(joined, exact(2 * sample.size())), concat(sample, sample));
}

TEST_F(GzipTest, RejectsGarbageAfterTheLastMember) {
  const Bytes garbage = concat(from_hex(kNumcodecsLevel1), to_bytes("trailing"));
  expect_error<DataLossError>([&] { decode(garbage, exact(840)); }, "corrupt gzip data");
  expect_error<DataLossError>([&] { decode(garbage, ceiling(10000)); }, "corrupt gzip data");
}

TEST_F(GzipTest, AcceptsAZlibStream) {
  EXPECT_EQ(decode(from_hex(kZlibLevel1), exact(840)), reference_sample());
  EXPECT_EQ(decode(from_hex(kZlibLevel1), ceiling(840)), reference_sample());
}

TEST_F(GzipTest, RejectsTruncatedInput) {
  expect_truncations_rejected(*v3({{"level", 1}}), from_hex(kNumcodecsLevel1), 840);
  expect_truncations_rejected(*v3({{"level", 1}}), from_hex(kNumcodecsEmpty), 0);
  expect_error<DataLossError>([&] { decode({}, ceiling(10)); }, "truncated");
}

TEST_F(GzipTest, RejectsCorruptInput) {
  const Bytes encoded = from_hex(kNumcodecsLevel1);
  // The 10-byte header holds mtime and OS bytes that no check covers; the deflate data and
  // the trailer (CRC-32, size) are covered.
  expect_corruptions_rejected(*v3({{"level", 1}}), encoded, reference_sample(), 10, encoded.size());
  Bytes bad_magic = encoded;
  bad_magic[1] = std::byte{0x8c};
  expect_error<DataLossError>([&] { decode(bad_magic, exact(840)); }, "corrupt gzip data");
}

TEST_F(GzipTest, ALyingSizeTrailerCannotCauseALargeAllocation) {
  // The trailer's ISIZE is only a hint for a ceiling; a lie is caught by zlib's length check.
  Bytes lying = from_hex(kNumcodecsLevel1);
  for (std::size_t i = lying.size() - 4; i < lying.size(); ++i) lying[i] = std::byte{0xff};
  expect_error<DataLossError>([&] { decode(lying, ceiling(1 << 20)); }, "corrupt gzip data");
  expect_error<DataLossError>([&] { decode(lying, exact(840)); }, "corrupt gzip data");
}

TEST_F(GzipTest, EnforcesSizeBounds) { expect_size_bounds_enforced(*v3({{"level", 1}})); }

TEST_F(GzipTest, RejectsBadConfiguration) {
  expect_error<InvalidArgumentError>([&] { v3(nlohmann::json::object()); }, "needs \"level\"");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 10}}); }, "from 0 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"level", -1}}); }, "from 0 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"level", "5"}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 5.5}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v3({{"level", true}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 5}, {"extra", 1}}); }, "unexpected configuration key");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 5}, {"id", "gzip"}}); }, "unexpected configuration key");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "gzip"}, {"level", 12}}); }, "from -1 to 9");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "gzip"}, {"level", 18446744073709551615ull}}); },
                                     "from -1 to 9");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "gzip"}, {"lvl", 1}}); }, "unexpected configuration key");
}

TEST_F(GzipTest, JsonRoundTrip) {
  auto codec = v3({{"level", 5}});
  const nlohmann::json v3_json = {{"name", "gzip"}, {"configuration", {{"level", 5}}}};
  const nlohmann::json v2_json = {{"id", "gzip"}, {"level", 5}};
  EXPECT_EQ(codec->to_json(), v3_json);
  EXPECT_EQ(codec->to_v2_json(), v2_json);
  EXPECT_EQ(as_bytes_codec(registry_.make_v3(codec->to_json(), {}))->to_json(), v3_json);
  EXPECT_EQ(v2(*codec->to_v2_json())->to_v2_json(), v2_json);
  // numcodecs defaults and spellings.
  EXPECT_EQ(v2({{"id", "gzip"}})->to_v2_json(), nlohmann::json({{"id", "gzip"}, {"level", 1}}));
  EXPECT_EQ(v2({{"id", "gzip"}, {"level", -1}})->to_v2_json(), nlohmann::json({{"id", "gzip"}, {"level", 6}}));
  EXPECT_EQ(v3({{"level", 2}}, "numcodecs.gzip")->to_json(), nlohmann::json({{"name", "gzip"}, {"configuration", {{"level", 2}}}}));
  EXPECT_EQ(v3(nlohmann::json::object(), "numcodecs.gzip")->to_json(),
            nlohmann::json({{"name", "gzip"}, {"configuration", {{"level", 1}}}}));
  // A v2 codec and its v3 form write the same bytes.
  const Bytes sample = reference_sample();
  EXPECT_EQ(to_vector(v2(v2_json)->encode(view(sample), {})), to_vector(codec->encode(view(sample), {})));
}

}  // namespace
}  // namespace zarrkit

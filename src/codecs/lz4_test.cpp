#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

// Reference encodings made with numcodecs 0.16:
// LZ4(acceleration=1).encode(reference_sample()): size 840 (48 03 00 00), then the block
constexpr std::string_view kNumcodecsSample =
    "48030000ff0c7a6172726b697420636f6d70726573736573206368756e6b733b201b00ffefffec000104091019243140"
    "51647990a9c4e10526496e95bee91b4a7baee31f5893d0145598dd2972bd0f5eaf075cb3116cc92d8ef15bc2309b0d7c"
    "ed65da56cf4fcc50d159de6af38315a43acd67039c3cd97d23c6701cc57527d68c44f9b57333f0b47a420cd3a1714317"
    "e8c09a76543416f5dbc3ad998777695d534b45413f3f41454b535d69778799adc3dbf5163454769ac0e8174371a1d30c"
    "427ab4f03373b5f9448cd62775c51c70c6237dd93c9c0367cd3aa41583f36ade59d150cc4fcf56da65ed7c0d9b30c25b"
    "f18e2dc96c11b35c07af5e0fbd7229dd985514d093581fe3ae7b4a1be9be956e492605e1c4a990796451403124191009"
    "0401fb001950b3116cc92d";
// LZ4().encode(b""): size 0, then an empty block (one zero token)
constexpr std::string_view kNumcodecsEmpty = "0000000000";

class Lz4Test : public ::testing::Test {
 protected:
  Lz4Test() { register_lz4_codec(registry_); }
  std::shared_ptr<const BytesToBytesCodec> v3(const nlohmann::json& config) {
    return as_bytes_codec(registry_.make_v3({{"name", "numcodecs.lz4"}, {"configuration", config}}, CodecContext{}));
  }
  std::shared_ptr<const BytesToBytesCodec> v2(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v2(entry, CodecContext{}));
  }
  Bytes decode(const Bytes& encoded, SizeBound bound) {
    return to_vector(v3(nlohmann::json::object())->decode(view(encoded), bound, ChunkSpec{}));
  }
  CodecRegistry registry_;
};

TEST_F(Lz4Test, RoundTrips) {
  for (int acceleration : {1, 10, 1000, 0, -5}) {
    SCOPED_TRACE(acceleration);
    expect_round_trips(*v3({{"acceleration", acceleration}}));
  }
}

TEST_F(Lz4Test, WritesNumcodecsFraming) {
  auto codec = v3({{"acceleration", 1}});
  const Bytes sample = reference_sample();
  // LZ4's output for a given input and acceleration is deterministic across versions in practice;
  // the framing at least must match: the size header, then the block.
  Bytes encoded = to_vector(codec->encode(view(sample), ChunkSpec{}));
  EXPECT_EQ(Bytes(encoded.begin(), encoded.begin() + 4), from_hex("48030000"));
  EXPECT_EQ(encoded, from_hex(kNumcodecsSample));
  EXPECT_EQ(to_vector(codec->encode({}, ChunkSpec{})), from_hex(kNumcodecsEmpty));
}

TEST_F(Lz4Test, DecodesNumcodecsOutput) {
  const Bytes sample = reference_sample();
  EXPECT_EQ(decode(from_hex(kNumcodecsSample), exact(sample.size())), sample);
  EXPECT_EQ(decode(from_hex(kNumcodecsSample), ceiling(sample.size())), sample);
  EXPECT_EQ(decode(from_hex(kNumcodecsSample), ceiling(1 << 20)), sample);
  EXPECT_EQ(decode(from_hex(kNumcodecsEmpty), exact(0)), Bytes{});
  EXPECT_EQ(decode(from_hex(kNumcodecsEmpty), ceiling(10)), Bytes{});
}

TEST_F(Lz4Test, TheSizeHeaderMustMatchTheBound) {
  Bytes encoded = from_hex(kNumcodecsSample);
  expect_error<DataLossError>([&] { decode(encoded, exact(839)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(encoded, exact(841)); }, "expected exactly 841");
  expect_error<DataLossError>([&] { decode(encoded, ceiling(839)); }, "decoded size exceeds");
  // A header claiming 4 GiB is refused before anything is allocated.
  Bytes huge = encoded;
  for (std::size_t i = 0; i < 4; ++i) huge[i] = std::byte{0xff};
  expect_error<DataLossError>([&] { decode(huge, ceiling(1 << 20)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(huge, exact(840)); }, "decoded size exceeds");
  // A header that disagrees with the block (within the bound) is caught by LZ4.
  Bytes smaller = encoded;
  smaller[0] = std::byte{0x47};  // 839
  expect_error<DataLossError>([&] { decode(smaller, ceiling(1000)); }, "corrupt LZ4 block");
  Bytes larger = encoded;
  larger[0] = std::byte{0x49};  // 841
  expect_error<DataLossError>([&] { decode(larger, ceiling(1000)); }, "header says 841");
}

TEST_F(Lz4Test, RejectsTruncatedInput) {
  expect_truncations_rejected(*v3(nlohmann::json::object()), from_hex(kNumcodecsSample), 840);
  expect_truncations_rejected(*v3(nlohmann::json::object()), from_hex(kNumcodecsEmpty), 0);
  expect_error<DataLossError>([&] { decode(from_hex("480300"), ceiling(1000)); }, "cannot hold the 4-byte size");
}

TEST_F(Lz4Test, RejectsCorruptInput) {
  const Bytes sample = reference_sample();
  expect_error<DataLossError>([&] { decode(concat(from_hex(kNumcodecsSample), from_hex("00")), exact(840)); },
                              "corrupt LZ4 block");
  // A match whose offset points before the start of the output.
  expect_error<DataLossError>([&] { decode(from_hex("1000000014" "61" "ff00" "00"), exact(16)); }, "corrupt LZ4 block");
  // A literal run longer than the input.
  expect_error<DataLossError>([&] { decode(from_hex("10000000f0" "0161"), exact(16)); }, "corrupt LZ4 block");
  expect_error<DataLossError>([&] { decode(concat(from_hex("48030000"), random_bytes(500)), exact(840)); });
  // LZ4 blocks carry no checksum: a flipped literal decodes to different data. Structural
  // damage is caught; flips anywhere never crash and never write past the bound.
  const Bytes encoded = from_hex(kNumcodecsSample);
  for (std::size_t i = 4; i < encoded.size(); ++i) {
    Bytes corrupt = encoded;
    corrupt[i] ^= std::byte{0x80};
    try {
      EXPECT_EQ(decode(corrupt, exact(840)).size(), 840u);
    } catch (const DataLossError&) {
    }
  }
}

TEST_F(Lz4Test, EnforcesSizeBounds) { expect_size_bounds_enforced(*v3(nlohmann::json::object())); }

TEST_F(Lz4Test, RejectsBadConfiguration) {
  expect_error<InvalidArgumentError>([&] { v3({{"acceleration", "fast"}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v3({{"acceleration", 1.5}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v3({{"acceleration", 4294967296LL}}); }, "must be from");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 1}}); }, "unexpected configuration key \"level\"");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "lz4"}, {"acceleration", nlohmann::json::array()}}); },
                                     "must be an integer");
}

TEST_F(Lz4Test, JsonRoundTrip) {
  auto codec = v3({{"acceleration", 7}});
  const nlohmann::json v3_json = {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 7}}}};
  const nlohmann::json v2_json = {{"id", "lz4"}, {"acceleration", 7}};
  EXPECT_EQ(codec->to_json(), v3_json);
  EXPECT_EQ(codec->to_v2_json(), v2_json);
  EXPECT_EQ(as_bytes_codec(registry_.make_v3(v3_json, {}))->to_v2_json(), v2_json);
  EXPECT_EQ(v2(v2_json)->to_json(), v3_json);
  // zarr-python writes {} for numcodecs' default.
  EXPECT_EQ(v3(nlohmann::json::object())->to_v2_json(), nlohmann::json({{"id", "lz4"}, {"acceleration", 1}}));
  EXPECT_EQ(v2({{"id", "lz4"}})->to_v2_json(), nlohmann::json({{"id", "lz4"}, {"acceleration", 1}}));
}

}  // namespace
}  // namespace zarrkit

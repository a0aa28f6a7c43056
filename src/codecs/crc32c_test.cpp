#include "codecs/crc32c.h"

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

// Known answers: "123456789" is the standard check value; the 32-byte vectors are from
// RFC 3720 (iSCSI) appendix B.4; the last was computed with Python's crc32c package.
struct KnownCrc {
  Bytes data;
  std::uint32_t crc;
};

std::vector<KnownCrc> known_crcs() {
  Bytes ascending(32);
  for (std::size_t i = 0; i < 32; ++i) ascending[i] = static_cast<std::byte>(i);
  Bytes pattern(1000);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::byte>((i * 31 + 7) % 256);
  return {
      {{}, 0x00000000u},
      {to_bytes("123456789"), 0xE3069283u},
      {Bytes(32, std::byte{0x00}), 0x8A9136AAu},
      {Bytes(32, std::byte{0xFF}), 0x62A8AB43u},
      {ascending, 0x46DD794Eu},
      {pattern, 0xFF52EE97u},
  };
}

TEST(Crc32c, PortableMatchesKnownValues) {
  for (const auto& [data, crc] : known_crcs()) {
    EXPECT_EQ(crc32c_detail::portable(view(data), 0), crc) << data.size() << " bytes";
  }
}

TEST(Crc32c, HardwareMatchesKnownValues) {
  if (!crc32c_detail::hardware_available()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  for (const auto& [data, crc] : known_crcs()) {
    EXPECT_EQ(crc32c_detail::hardware(view(data), 0), crc) << data.size() << " bytes";
  }
}

TEST(Crc32c, PathsAgreeOnEveryLengthAndAlignment) {
  Bytes data = random_bytes(300);
  for (std::size_t offset = 0; offset < 9; ++offset) {
    for (std::size_t length = 0; length + offset <= data.size(); length += 7) {
      ByteView part = view(data).subspan(offset, length);
      std::uint32_t portable = crc32c_detail::portable(part, 0);
      EXPECT_EQ(crc32c(part), portable);
      if (crc32c_detail::hardware_available()) {
        EXPECT_EQ(crc32c_detail::hardware(part, 0), portable);
      }
    }
  }
}

TEST(Crc32c, PathsAgreeOnLongInputs) {
  // Lengths around multiples of the hardware path's 3 x 2048-byte rounds.
  Bytes data = random_bytes(200000, 7);
  for (std::size_t length : {6143u, 6144u, 6145u, 12288u + 13u, 100000u, 199990u}) {
    for (std::size_t offset : {0u, 1u, 5u, 8u}) {
      ByteView part = view(data).subspan(offset, length);
      std::uint32_t portable = crc32c_detail::portable(part, 0);
      EXPECT_EQ(crc32c(part), portable) << length << " bytes at " << offset;
      EXPECT_EQ(crc32c(part.subspan(4000), crc32c(part.first(4000))), portable);
    }
  }
  // 1 MiB of zeros and of 0xFF, against Python's crc32c package.
  EXPECT_EQ(crc32c(view(Bytes(1 << 20, std::byte{0}))), 0x14298C12u);
  EXPECT_EQ(crc32c(view(Bytes(1 << 20, std::byte{0xFF}))), 0x91A3B1E6u);
}

TEST(Crc32c, ContinuesAcrossCalls) {
  Bytes data = to_bytes("123456789");
  for (std::size_t split = 0; split <= data.size(); ++split) {
    std::uint32_t first = crc32c(view(data).first(split));
    EXPECT_EQ(crc32c(view(data).subspan(split), first), 0xE3069283u) << "split at " << split;
    EXPECT_EQ(crc32c_detail::portable(view(data).subspan(split), crc32c_detail::portable(view(data).first(split), 0)),
              0xE3069283u);
  }
}

class Crc32cCodecTest : public ::testing::Test {
 protected:
  Crc32cCodecTest() { register_crc32c_codec(registry_); }
  std::shared_ptr<const BytesToBytesCodec> make(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v3(entry, CodecContext{}));
  }
  CodecRegistry registry_;
  ChunkSpec spec_;
};

TEST_F(Crc32cCodecTest, AppendsLittleEndianChecksumLikeNumcodecs) {
  auto codec = make({{"name", "crc32c"}});
  // numcodecs CRC32C().encode(b"zarrkit")
  EXPECT_EQ(to_vector(codec->encode(view(to_bytes("zarrkit")), spec_)), from_hex("7a6172726b6974b2166d2f"));
  EXPECT_EQ(to_vector(codec->encode(view(to_bytes("123456789")), spec_)),
            concat(to_bytes("123456789"), from_hex("839206e3")));
  EXPECT_EQ(codec->encoded_size(10), 14u);
}

TEST_F(Crc32cCodecTest, NumcodecsLocationStartPutsChecksumFirst) {
  auto codec = make({{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "start"}}}});
  // numcodecs CRC32C(location="start").encode(b"zarrkit")
  Bytes encoded = from_hex("b2166d2f7a6172726b6974");
  EXPECT_EQ(to_vector(codec->encode(view(to_bytes("zarrkit")), spec_)), encoded);
  EXPECT_EQ(to_vector(codec->decode(view(encoded), exact(7), spec_)), to_bytes("zarrkit"));
  expect_round_trip(*codec, random_bytes(1000));
}

TEST_F(Crc32cCodecTest, RoundTrips) {
  for (const char* name : {"crc32c", "numcodecs.crc32c"}) {
    auto codec = make(name);  // the v3.1 bare-name form
    for (std::size_t n : {0u, 1u, 3u, 4u, 5u, 4096u, 1u << 20}) expect_round_trip(*codec, random_bytes(n));
  }
}

TEST_F(Crc32cCodecTest, DecodesNumcodecsOutput) {
  auto codec = make({{"name", "crc32c"}});
  EXPECT_EQ(to_vector(codec->decode(view(from_hex("7a6172726b6974b2166d2f")), exact(7), spec_)), to_bytes("zarrkit"));
  EXPECT_EQ(to_vector(codec->decode(view(from_hex("00000000")), exact(0), spec_)), Bytes{});
}

TEST_F(Crc32cCodecTest, RejectsInputShorterThanChecksum) {
  auto codec = make({{"name", "crc32c"}});
  for (std::size_t n : {0u, 1u, 3u}) {
    Bytes short_input(n, std::byte{0});
    expect_error<DataLossError>([&] { codec->decode(view(short_input), ceiling(100), spec_); }, "cannot hold");
  }
}

TEST_F(Crc32cCodecTest, MismatchNamesBothValues) {
  auto codec = make({{"name", "crc32c"}});
  Bytes encoded = from_hex("7a6172726b6974b2166d2f");
  encoded[2] ^= std::byte{0x01};  // corrupt the payload
  expect_error<DataLossError>([&] { codec->decode(view(encoded), exact(7), spec_); },
                              "stored 0x2f6d16b2, computed 0x");
  Bytes bad_checksum = from_hex("7a6172726b6974b2166d2e");
  expect_error<DataLossError>([&] { codec->decode(view(bad_checksum), exact(7), spec_); }, "stored 0x2e6d16b2");
}

TEST_F(Crc32cCodecTest, ChecksSizeBound) {
  auto codec = make({{"name", "crc32c"}});
  Buffer encoded = codec->encode(view(random_bytes(100)), spec_);
  expect_error<DataLossError>([&] { codec->decode(encoded.view(), exact(99), spec_); }, "exceeds");
  expect_error<DataLossError>([&] { codec->decode(encoded.view(), exact(101), spec_); }, "expected exactly 101");
  expect_error<DataLossError>([&] { codec->decode(encoded.view(), ceiling(50), spec_); }, "exceeds the limit");
  EXPECT_EQ(codec->decode(encoded.view(), ceiling(100), spec_).size(), 100u);
}

TEST_F(Crc32cCodecTest, RejectsBadConfiguration) {
  expect_error<InvalidArgumentError>([&] { make({{"name", "crc32c"}, {"configuration", {{"level", 1}}}}); },
                                     "unexpected configuration key \"level\"");
  expect_error<InvalidArgumentError>(
      [&] { make({{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "middle"}}}}); }, "location");
  expect_error<InvalidArgumentError>(
      [&] { make({{"name", "numcodecs.crc32c"}, {"configuration", {{"location", 1}}}}); }, "location");
}

TEST_F(Crc32cCodecTest, JsonRoundTrip) {
  auto codec = make({{"name", "crc32c"}, {"configuration", nlohmann::json::object()}});
  EXPECT_EQ(codec->to_json(), nlohmann::json({{"name", "crc32c"}}));
  EXPECT_EQ(codec->to_v2_json(), std::nullopt);
  EXPECT_EQ(make(codec->to_json())->to_json(), codec->to_json());
  // numcodecs.crc32c with the default location is the standard codec.
  EXPECT_EQ(make({{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "end"}}}})->to_json(),
            nlohmann::json({{"name", "crc32c"}}));
  auto start = make({{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "start"}}}});
  nlohmann::json start_json = {{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "start"}}}};
  EXPECT_EQ(start->to_json(), start_json);
  EXPECT_EQ(make(start->to_json())->to_json(), start_json);
}

}  // namespace
}  // namespace zarrkit

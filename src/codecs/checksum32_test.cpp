// Tests of the numcodecs crc32, adler32 and fletcher32 codecs (checksum32_support.cpp and
// the three codec files).
#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

class Checksum32Test : public ::testing::Test {
 protected:
  Checksum32Test() {
    register_crc32_codec(registry_);
    register_adler32_codec(registry_);
    register_fletcher32_codec(registry_);
  }
  std::shared_ptr<const BytesToBytesCodec> v2(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v2(entry, CodecContext{}));
  }
  std::shared_ptr<const BytesToBytesCodec> v3(const std::string& name, const nlohmann::json& config = {}) {
    nlohmann::json entry = {{"name", name}};
    if (!config.is_null()) entry["configuration"] = config;
    return as_bytes_codec(registry_.make_v3(entry, {}));
  }
  CodecRegistry registry_;
  ChunkSpec spec_;
};

TEST_F(Checksum32Test, MatchNumcodecs) {
  // numcodecs 0.16: X().encode(b"zarrkit") and X(location="end").encode(b"zarrkit")
  const struct {
    const char* id;
    const char* start_hex;
    const char* end_hex;
  } cases[] = {{"adler32", "08032c0c7a6172726b6974", "7a6172726b697408032c0c"},
               {"crc32", "56162df37a6172726b6974", "7a6172726b697456162df3"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.id);
    auto by_default = v2({{"id", c.id}});
    auto at_end = v2({{"id", c.id}, {"location", "end"}});
    EXPECT_EQ(to_vector(by_default->encode(view(to_bytes("zarrkit")), spec_)), from_hex(c.start_hex));
    EXPECT_EQ(to_vector(at_end->encode(view(to_bytes("zarrkit")), spec_)), from_hex(c.end_hex));
    EXPECT_EQ(to_vector(by_default->decode(view(from_hex(c.start_hex)), exact(7), spec_)), to_bytes("zarrkit"));
    EXPECT_EQ(to_vector(at_end->decode(view(from_hex(c.end_hex)), exact(7), spec_)), to_bytes("zarrkit"));
    EXPECT_EQ(to_vector(v2({{"id", c.id}, {"location", "start"}})->encode(view(to_bytes("zarrkit")), spec_)),
              from_hex(c.start_hex));
  }
}

TEST_F(Checksum32Test, Fletcher32MatchesNumcodecs) {
  auto codec = v2({{"id", "fletcher32"}});
  // numcodecs Fletcher32().encode(...): odd and even lengths, the checksum appended.
  EXPECT_EQ(to_vector(codec->encode(view(to_bytes("zarrkit")), spec_)), from_hex("7a6172726b69743dccb08b"));
  EXPECT_EQ(to_vector(codec->encode(view(to_bytes("zarrkit!")), spec_)), from_hex("7a6172726b6974215eccd18b"));
  // Longer than one 360-word block: bytes((i*i) % 251 for i in range(2001)), and b"\xff" * 5000.
  Bytes squares;
  for (unsigned i = 0; i < 2001; ++i) squares.push_back(static_cast<std::byte>((i * i) % 251));
  Bytes encoded = to_vector(codec->encode(view(squares), spec_));
  EXPECT_EQ(Bytes(encoded.end() - 4, encoded.end()), from_hex("4460b070"));
  encoded = to_vector(codec->encode(view(Bytes(5000, std::byte{0xFF})), spec_));
  EXPECT_EQ(Bytes(encoded.end() - 4, encoded.end()), from_hex("ffffffff"));
  EXPECT_EQ(to_vector(codec->decode(view(from_hex("7a6172726b69743dccb08b")), exact(7), spec_)), to_bytes("zarrkit"));
}

TEST_F(Checksum32Test, RoundTripsAndRejectCorruption) {
  for (const char* name : {"numcodecs.crc32", "numcodecs.adler32", "numcodecs.fletcher32"}) {
    SCOPED_TRACE(name);
    auto codec = v3(name);
    for (std::size_t n : {0u, 1u, 2u, 3u, 719u, 720u, 721u, 100000u}) expect_round_trip(*codec, random_bytes(n));
    Bytes data = random_bytes(300);
    Bytes encoded = to_vector(codec->encode(view(data), spec_));
    EXPECT_EQ(codec->encoded_size(300), 304u);
    expect_corruptions_rejected(*codec, encoded, data, 0, encoded.size(), 0x01);
    expect_corruptions_rejected(*codec, encoded, data, 0, encoded.size(), 0x80);
    expect_truncations_rejected(*codec, encoded, data.size());
    // The decoded size is the spec's: a longer payload is data loss even with a valid checksum.
    expect_error<DataLossError>([&] { codec->decode(view(encoded), exact(299), spec_); });
    expect_error<DataLossError>([&] { codec->decode(view(encoded), ceiling(100), spec_); });
  }
}

TEST_F(Checksum32Test, ShortInputIsDataLoss) {
  for (const char* id : {"crc32", "adler32", "fletcher32"}) {
    auto codec = v2({{"id", id}});
    expect_error<DataLossError>([&] { codec->decode(view(from_hex("010203")), ceiling(10), spec_); }, "4-byte");
  }
}

TEST_F(Checksum32Test, BadConfigurationsAreInvalidArgument) {
  expect_error<InvalidArgumentError>([&] { v2({{"id", "crc32"}, {"location", "middle"}}); }, "location");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "adler32"}, {"location", 1}}); }, "location");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "adler32"}, {"level", 1}}); }, "unexpected");
  // numcodecs' Fletcher32 takes no location.
  expect_error<InvalidArgumentError>([&] { v2({{"id", "fletcher32"}, {"location", "start"}}); }, "unexpected");
  expect_error<InvalidArgumentError>([&] { v3("numcodecs.crc32", {{"id", "adler32"}}); });
}

TEST_F(Checksum32Test, MetadataForms) {
  EXPECT_EQ(*v2({{"id", "crc32"}})->to_v2_json(), (nlohmann::json{{"id", "crc32"}}));
  EXPECT_EQ(*v2({{"id", "crc32"}, {"location", "end"}})->to_v2_json(),
            (nlohmann::json{{"id", "crc32"}, {"location", "end"}}));
  // With the empty configuration zarr-python requires of numcodecs.* codecs.
  EXPECT_EQ(v3("numcodecs.adler32")->to_json(),
            (nlohmann::json{{"name", "numcodecs.adler32"}, {"configuration", nlohmann::json::object()}}));
  EXPECT_EQ(v2({{"id", "fletcher32"}})->name(), "numcodecs.fletcher32");
}

}  // namespace
}  // namespace zarrkit

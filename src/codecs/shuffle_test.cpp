#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

class ShuffleTest : public ::testing::Test {
 protected:
  ShuffleTest() { register_shuffle_codec(registry_); }
  std::shared_ptr<const BytesToBytesCodec> v2(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v2(entry, CodecContext{}));
  }
  std::shared_ptr<const BytesToBytesCodec> v3(const nlohmann::json& config) {
    return as_bytes_codec(registry_.make_v3({{"name", "numcodecs.shuffle"}, {"configuration", config}}, {}));
  }
  Bytes twelve() const {
    Bytes out;
    for (int i = 0; i < 12; ++i) out.push_back(static_cast<std::byte>(i));
    return out;
  }
  CodecRegistry registry_;
  ChunkSpec spec_;
};

TEST_F(ShuffleTest, MatchesNumcodecs) {
  // numcodecs Shuffle(n).encode(bytes(range(12)))
  const struct {
    int element_size;
    const char* hex;
  } cases[] = {{4, "00040801050902060a03070b"}, {2, "00020406080a01030507090b"}, {3, "000306090104070a0205080b"},
               {1, "000102030405060708090a0b"}, {0, "000102030405060708090a0b"}};
  for (const auto& c : cases) {
    auto codec = v2({{"id", "shuffle"}, {"elementsize", c.element_size}});
    EXPECT_EQ(to_vector(codec->encode(view(twelve()), spec_)), from_hex(c.hex)) << c.element_size;
    EXPECT_EQ(to_vector(codec->decode(view(from_hex(c.hex)), exact(12), spec_)), twelve()) << c.element_size;
  }
  // The default element size is 4.
  EXPECT_EQ(to_vector(v2({{"id", "shuffle"}})->encode(view(twelve()), spec_)), from_hex("00040801050902060a03070b"));
}

TEST_F(ShuffleTest, RoundTrips) {
  for (int element_size : {1, 2, 4, 8, 16}) {
    auto codec = v3({{"elementsize", element_size}});
    expect_round_trip(*codec, {});
    expect_round_trip(*codec, random_bytes(16 * 1000));
  }
}

TEST_F(ShuffleTest, SizesThatAreNotWholeElementsAreRejected) {
  auto codec = v2({{"id", "shuffle"}, {"elementsize", 5}});
  expect_error<InvalidArgumentError>([&] { codec->encode(view(twelve()), spec_); }, "whole number");
  expect_error<DataLossError>([&] { codec->decode(view(twelve()), exact(12), spec_); }, "whole number");
  // The size comes from the spec: a different length is data loss.
  auto four = v2({{"id", "shuffle"}, {"elementsize", 4}});
  expect_error<DataLossError>([&] { four->decode(view(twelve()), exact(16), spec_); });
  expect_error<DataLossError>([&] { four->decode(view(twelve()), ceiling(8), spec_); });
}

TEST_F(ShuffleTest, BadConfigurationsAreInvalidArgument) {
  expect_error<InvalidArgumentError>([&] { v2({{"id", "shuffle"}, {"elementsize", -1}}); });
  expect_error<InvalidArgumentError>([&] { v2({{"id", "shuffle"}, {"elementsize", "4"}}); });
  expect_error<InvalidArgumentError>([&] { v2({{"id", "shuffle"}, {"elementsize", 2.5}}); });
  expect_error<InvalidArgumentError>([&] { v3({{"elementsize", 4}, {"blocksize", 0}}); });
}

TEST_F(ShuffleTest, MetadataForms) {
  auto codec = v3({{"elementsize", 2}});
  EXPECT_EQ(codec->to_json(), (nlohmann::json{{"name", "numcodecs.shuffle"}, {"configuration", {{"elementsize", 2}}}}));
  EXPECT_EQ(*codec->to_v2_json(), (nlohmann::json{{"id", "shuffle"}, {"elementsize", 2}}));
}

}  // namespace
}  // namespace zarrkit

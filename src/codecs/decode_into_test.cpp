// decode_into (straight into the caller's memory) and decode_view (checksums) of the
// bytes->bytes codecs: the same bytes as decode(), and the same errors for data that does
// not decode to exactly the size asked for.
#include <cstring>

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using testing::Bytes;

const ChunkSpec kSpec{{1}, DataType::uint_(8), FillValue{}};

std::shared_ptr<const BytesToBytesCodec> make(const json& entry) {
  return testing::as_bytes_codec(CodecRegistry::builtin().make_v3(entry, CodecContext{DataType::uint_(8), 3}));
}

TEST(DecodeInto, EveryCompressorWritesWhatDecodeReturnsAndRefusesOtherSizes) {
  const std::vector<json> codecs = {
      {{"name", "zstd"}, {"configuration", {{"level", 3}}}},
      {{"name", "gzip"}, {"configuration", {{"level", 5}}}},
      {{"name", "numcodecs.zlib"}, {"configuration", {{"level", 1}}}},
      {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}},
      {{"name", "numcodecs.bz2"}, {"configuration", {{"level", 1}}}},  // the default: decode, then copy
      {{"name", "blosc"},
       {"configuration", {{"cname", "zstd"}, {"clevel", 3}, {"shuffle", "bitshuffle"}, {"typesize", 2}, {"blocksize", 0}}}},
  };
  for (const json& entry : codecs) {
    SCOPED_TRACE(entry.dump());
    const auto codec = make(entry);
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{300000}}) {
      SCOPED_TRACE(n);
      Bytes data = n % 2 == 0 ? testing::compressible_bytes(n) : testing::random_bytes(n);
      const Buffer encoded = codec->encode(testing::view(data), kSpec);
      Bytes out(n + 1, std::byte{0x5a});
      codec->decode_into(encoded.view(), MutableByteView(out.data(), n), kSpec);
      EXPECT_TRUE(std::equal(data.begin(), data.end(), out.begin()));
      EXPECT_EQ(out[n], std::byte{0x5a});  // nothing past the room given
      EXPECT_THROW(codec->decode_into(encoded.view(), MutableByteView(out.data(), n + 1), kSpec), DataLossError);
      if (n > 0) {
        EXPECT_THROW(codec->decode_into(encoded.view(), MutableByteView(out.data(), n - 1), kSpec), DataLossError);
      }
    }
    // Truncated data is DataLossError here too.
    Bytes data = testing::compressible_bytes(5000);
    const Buffer encoded = codec->encode(testing::view(data), kSpec);
    Bytes out(5000);
    EXPECT_THROW(codec->decode_into(encoded.view().first(encoded.size() / 2), MutableByteView(out), kSpec),
                 DataLossError);
  }
}

TEST(DecodeInto, Crc32cDecodesToAViewOfItsInputAndChecksIt) {
  for (const json& entry : {json{{"name", "crc32c"}},
                            json{{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "start"}}}}}) {
    SCOPED_TRACE(entry.dump());
    const auto codec = make(entry);
    ASSERT_TRUE(codec->decodes_to_view());
    Bytes data = testing::random_bytes(777);
    const Buffer encoded = codec->encode(testing::view(data), kSpec);
    const ByteView payload = codec->decode_view(encoded.view(), kSpec);
    ASSERT_EQ(payload.size(), data.size());
    EXPECT_GE(payload.data(), encoded.data());  // no copy
    EXPECT_TRUE(std::equal(data.begin(), data.end(), payload.begin()));
    Bytes corrupt = testing::to_vector(encoded);
    corrupt[100] ^= std::byte{1};
    EXPECT_THROW(codec->decode_view(testing::view(corrupt), kSpec), DataLossError);
    EXPECT_THROW(codec->decode_view(encoded.view().first(3), kSpec), DataLossError);
  }
  EXPECT_FALSE(make({{"name", "zstd"}, {"configuration", {{"level", 0}}}})->decodes_to_view());
}

}  // namespace
}  // namespace zarrkit

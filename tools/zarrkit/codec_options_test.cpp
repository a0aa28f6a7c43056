#include "zarrkit/codec_options.h"

#include <gtest/gtest.h>

#include "zarrkit/error.h"

namespace zarrkit::cli {
namespace {

using nlohmann::json;

TEST(CodecOptions, ParsesNameAndParameters) {
  EXPECT_EQ(parse_codec_option("zstd"), (CodecOption{"zstd", {}}));
  EXPECT_EQ(parse_codec_option("blosc:cname=lz4,clevel=5,shuffle=shuffle"),
            (CodecOption{"blosc", {{"cname", "lz4"}, {"clevel", "5"}, {"shuffle", "shuffle"}}}));
}

TEST(CodecOptions, SyntaxErrorsAreInvalidArgument) {
  for (const char* bad : {"", "snappy", "zstd:", "zstd:level", "zstd:=3", "zstd:level=", "zstd:lvl=3",
                          "zstd:level=1,level=2", "crc32c:x=1", "none:level=1"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_codec_option(bad), InvalidArgumentError);
  }
}

TEST(CodecOptions, V3FormsMatchZarrPython) {
  const DataType i4 = DataType::int_(32);
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("zstd:level=3"), i4),
            json::parse(R"({"name": "zstd", "configuration": {"level": 3}})"));
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("zstd:level=-5,checksum=true"), i4),
            json::parse(R"({"name": "zstd", "configuration": {"level": -5, "checksum": true}})"));
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("gzip:level=6"), i4),
            json::parse(R"({"name": "gzip", "configuration": {"level": 6}})"));
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("blosc:cname=lz4,clevel=5,shuffle=shuffle"), i4),
            json::parse(R"({"name": "blosc", "configuration":
                {"typesize": 4, "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}})"));
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("blosc"), DataType::uint_(8))["configuration"]["shuffle"],
            "bitshuffle");
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("crc32c"), i4), json::parse(R"({"name": "crc32c"})"));
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("zlib:level=1"), i4),
            json::parse(R"({"name": "numcodecs.zlib", "configuration": {"level": 1}})"));
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("bz2:level=9"), i4),
            json::parse(R"({"name": "numcodecs.bz2", "configuration": {"level": 9}})"));
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("lz4"), i4),
            json::parse(R"({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}})"));
  EXPECT_EQ(codec_option_to_v3(parse_codec_option("lzma:preset=6"), i4),
            json::parse(R"({"name": "numcodecs.lzma", "configuration": {"preset": 6}})"));
  EXPECT_TRUE(codec_option_to_v3(parse_codec_option("none"), i4).is_null());
}

TEST(CodecOptions, V2FormsMatchNumcodecs) {
  const DataType f8 = DataType::float_(64);
  EXPECT_EQ(codec_option_to_v2(parse_codec_option("zstd:level=3"), f8), json::parse(R"({"id": "zstd", "level": 3})"));
  EXPECT_EQ(codec_option_to_v2(parse_codec_option("blosc:cname=zstd,clevel=1,shuffle=bitshuffle"), f8),
            json::parse(R"({"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle": 2, "blocksize": 0})"));
  EXPECT_EQ(codec_option_to_v2(parse_codec_option("lz4"), f8), json::parse(R"({"id": "lz4", "acceleration": 1})"));
  EXPECT_EQ(codec_option_to_v2(parse_codec_option("lzma"), f8),
            json::parse(R"({"id": "lzma", "format": 1, "check": -1, "preset": null, "filters": null})"));
  EXPECT_EQ(codec_option_to_v2(parse_codec_option("gzip"), f8), json::parse(R"({"id": "gzip", "level": 5})"));
  EXPECT_TRUE(codec_option_to_v2(parse_codec_option("none"), f8).is_null());
  EXPECT_THROW(codec_option_to_v2(parse_codec_option("crc32c"), f8), InvalidArgumentError);
}

TEST(CodecOptions, ValuesAreRangeChecked) {
  const DataType i4 = DataType::int_(32);
  for (const char* bad : {"zstd:level=23", "zstd:level=x", "zstd:level=3x", "zstd:checksum=maybe", "gzip:level=10",
                          "gzip:level=-1", "bz2:level=0", "lz4:acceleration=0", "lzma:preset=10",
                          "blosc:cname=snappy", "blosc:shuffle=2", "blosc:clevel=10", "blosc:blocksize=-1"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(codec_option_to_v3(parse_codec_option(bad), i4), InvalidArgumentError);
    EXPECT_THROW(codec_option_to_v2(parse_codec_option(bad), i4), InvalidArgumentError);
  }
}

TEST(CodecOptions, Chains) {
  const DataType i2 = DataType::int_(16);
  EXPECT_EQ(v3_bytes_codecs({"zstd:level=1", "crc32c"}, i2),
            json::parse(R"([{"name": "zstd", "configuration": {"level": 1}}, {"name": "crc32c"}])"));
  EXPECT_EQ(v3_bytes_codecs({"none"}, i2), json::array());
  EXPECT_THROW(v3_bytes_codecs({"none", "zstd"}, i2), InvalidArgumentError);
  EXPECT_EQ(v2_compressor({"gzip:level=6"}, i2), json::parse(R"({"id": "gzip", "level": 6})"));
  EXPECT_TRUE(v2_compressor({"none"}, i2).is_null());
  EXPECT_THROW(v2_compressor({"zstd", "gzip"}, i2), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit::cli

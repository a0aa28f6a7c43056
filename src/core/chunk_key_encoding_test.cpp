#include <gtest/gtest.h>

#include "core/metadata_util.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using Index = std::vector<std::uint64_t>;

TEST(ChunkKeyEncoding, DefaultHasThePrefixAndSlashes) {
  ChunkKeyEncoding e;  // default "/"
  EXPECT_EQ(e.encode(Index{}), "c");
  EXPECT_EQ(e.encode(Index{0}), "c/0");
  EXPECT_EQ(e.encode(Index{1, 23, 456}), "c/1/23/456");
  e.separator = '.';
  EXPECT_EQ(e.encode(Index{1, 23}), "c.1.23");
  EXPECT_EQ(e.encode(Index{}), "c");
  EXPECT_EQ(e.encode(Index{18446744073709551615ull}), "c.18446744073709551615");
}

TEST(ChunkKeyEncoding, V2HasNoPrefix) {
  ChunkKeyEncoding e{ChunkKeyEncoding::Kind::kV2, '.'};
  EXPECT_EQ(e.encode(Index{}), "0");
  EXPECT_EQ(e.encode(Index{5}), "5");
  EXPECT_EQ(e.encode(Index{5, 5, 2}), "5.5.2");
  e.separator = '/';
  EXPECT_EQ(e.encode(Index{0, 1}), "0/1");
}

TEST(ChunkKeyEncoding, ParsesV3FormsAndDefaults) {
  using metadata_detail::parse_chunk_key_encoding_v3;
  const std::pair<json, ChunkKeyEncoding> cases[] = {
      {json::parse(R"({"name": "default", "configuration": {"separator": "/"}})"), {ChunkKeyEncoding::Kind::kDefault, '/'}},
      {json::parse(R"({"name": "default", "configuration": {"separator": "."}})"), {ChunkKeyEncoding::Kind::kDefault, '.'}},
      {json::parse(R"({"name": "default"})"), {ChunkKeyEncoding::Kind::kDefault, '/'}},
      {"default", {ChunkKeyEncoding::Kind::kDefault, '/'}},
      {json::parse(R"({"name": "v2", "configuration": {"separator": "."}})"), {ChunkKeyEncoding::Kind::kV2, '.'}},
      {json::parse(R"({"name": "v2", "configuration": {"separator": "/"}})"), {ChunkKeyEncoding::Kind::kV2, '/'}},
      {json::parse(R"({"name": "v2"})"), {ChunkKeyEncoding::Kind::kV2, '.'}},  // v2 defaults to "."
      {"v2", {ChunkKeyEncoding::Kind::kV2, '.'}},
  };
  for (const auto& [input, expected] : cases) {
    const ChunkKeyEncoding parsed = parse_chunk_key_encoding_v3(input);
    EXPECT_EQ(parsed, expected) << input.dump();
    EXPECT_EQ(parse_chunk_key_encoding_v3(parsed.to_json()), parsed);
  }
  EXPECT_EQ(ChunkKeyEncoding{}.to_json(), json::parse(R"({"name": "default", "configuration": {"separator": "/"}})"));

  EXPECT_THROW(parse_chunk_key_encoding_v3("nested"), UnsupportedError);
  for (const char* bad : {R"({"name": "default", "configuration": {"separator": "-"}})",
                          R"({"name": "default", "configuration": {"separator": "//"}})",
                          R"({"name": "default", "configuration": {"separator": 1}})",
                          R"({"name": "default", "configuration": {"sep": "/"}})",
                          R"({"name": "default", "must_understand": false})", R"({"configuration": {}})", "3"}) {
    EXPECT_THROW(parse_chunk_key_encoding_v3(json::parse(bad)), InvalidArgumentError) << bad;
  }
}

}  // namespace
}  // namespace zarrkit

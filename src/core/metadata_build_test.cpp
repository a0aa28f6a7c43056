#include <gtest/gtest.h>

#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const CodecRegistry& registry() { return CodecRegistry::builtin(); }

void require_zstd() {
  if (!registry().has_v3("zstd") || !registry().has_v2("zstd")) GTEST_SKIP() << "the zstd codec is not registered yet";
}

std::uint64_t chunk_bytes(const ArrayMetadata& m) {
  std::uint64_t n = m.dtype.size();
  for (auto c : m.chunk_shape) n *= c;
  return n;
}

TEST(MakeArrayMetadata, V3DefaultsFollowZarrPython) {
  require_zstd();
  ArraySpec spec;
  spec.shape = {100, 50};
  spec.chunks = {10, 10};
  spec.dtype = DataType::float_(32);
  const ArrayMetadata m = make_array_metadata(spec, registry());
  EXPECT_EQ(m.zarr_format, 3);
  EXPECT_EQ(m.fill_value, FillValue::of(0.0f));
  EXPECT_EQ(m.chunk_key_encoding, ChunkKeyEncoding{});
  const json doc = array_metadata_to_v3_json(m);
  EXPECT_EQ(doc["fill_value"], json(0.0));  // recorded explicitly
  ASSERT_EQ(doc["codecs"].size(), 2u) << doc.dump();
  EXPECT_EQ(doc["codecs"][0], json::parse(R"({"name": "bytes", "configuration": {"endian": "little"}})"));
  EXPECT_EQ(doc["codecs"][1]["name"], "zstd");
  EXPECT_EQ(doc["codecs"][1]["configuration"]["level"], 0);
  EXPECT_EQ(doc["chunk_grid"]["configuration"]["chunk_shape"], json::array({10, 10}));
  // What we write parses back to the same thing.
  EXPECT_EQ(array_metadata_to_v3_json(parse_array_metadata_v3(parse_json(dump_json(doc)), registry())), doc);

  spec.dtype = DataType::boolean();
  const json b = array_metadata_to_v3_json(make_array_metadata(spec, registry()));
  EXPECT_EQ(b["fill_value"], json(false));
  EXPECT_EQ(b["codecs"][0], json::parse(R"({"name": "bytes"})"));  // no endian for 1-byte types
}

TEST(MakeArrayMetadata, V3TakesTheCallersChoices) {
  ArraySpec spec;
  spec.shape = {6, 4};
  spec.chunks = {3, 2};
  spec.dtype = DataType::int_(16);
  spec.fill_value = json(-7);
  spec.codecs = json::parse(R"([{"name": "bytes", "configuration": {"endian": "big"}}, "crc32c"])");
  spec.chunk_key_encoding = ChunkKeyEncoding{ChunkKeyEncoding::Kind::kDefault, '.'};
  spec.dimension_names = std::vector<std::optional<std::string>>{"y", std::nullopt};
  spec.attributes = {{"a", 1}};
  const ArrayMetadata m = make_array_metadata(spec, registry());
  EXPECT_EQ(m.fill_value, FillValue::of<std::int16_t>(-7));
  EXPECT_EQ(m.chunk_key(std::vector<std::uint64_t>{1, 1}), "c.1.1");
  EXPECT_EQ(m.dimension_names, spec.dimension_names);
  EXPECT_EQ(m.attributes, spec.attributes);
  EXPECT_EQ(m.codecs->bytes_to_bytes().size(), 1u);

  // Everything the parser checks, make_array_metadata checks too.
  ArraySpec bad = spec;
  bad.chunks = {3, 0};
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.chunks = {3};
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.fill_value = json(1.5);
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.fill_value = json(40000);
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.dimension_names = std::vector<std::optional<std::string>>{"y"};
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.codecs = json::parse(R"(["crc32c"])");
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.codecs = json::parse(R"(["bytes", "no-such-codec"])");
  EXPECT_THROW(make_array_metadata(bad, registry()), UnsupportedError);
  bad = spec;
  bad.v2_compressor = json(nullptr);
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.zarr_format = 4;
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.shape = {std::uint64_t{1} << 62, 4};
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
}

TEST(MakeArrayMetadata, V2DefaultsAndChoices) {
  require_zstd();
  ArraySpec spec;
  spec.zarr_format = 2;
  spec.shape = {20, 30};
  spec.chunks = {5, 5};
  spec.dtype = DataType::int_(32);
  spec.attributes = {{"k", "v"}};
  const ArrayMetadata m = make_array_metadata(spec, registry());
  EXPECT_EQ(m.zarr_format, 2);
  EXPECT_EQ(m.chunk_key(std::vector<std::uint64_t>{3, 4}), "3.4");
  EXPECT_EQ(m.attributes, spec.attributes);
  const json zarray = array_metadata_to_v2_json(m);
  EXPECT_EQ(zarray, json::parse(R"({"zarr_format": 2, "shape": [20, 30], "chunks": [5, 5], "dtype": "<i4",
      "compressor": {"id": "zstd", "level": 0}, "fill_value": 0, "order": "C", "filters": null,
      "dimension_separator": "."})"));
}

TEST(MakeArrayMetadata, V2WithoutCompressorInFortranOrder) {
  ArraySpec spec;
  spec.zarr_format = 2;
  spec.shape = {20, 30};
  spec.chunks = {5, 5};
  spec.dtype = DataType::float_(64);
  spec.v2_compressor = json(nullptr);
  spec.v2_order = 'F';
  spec.fill_value = json("NaN");
  spec.chunk_key_encoding = ChunkKeyEncoding{ChunkKeyEncoding::Kind::kV2, '/'};
  const ArrayMetadata m = make_array_metadata(spec, registry());
  EXPECT_EQ(m.chunk_key(std::vector<std::uint64_t>{3, 4}), "3/4");
  const json zarray = array_metadata_to_v2_json(m);
  EXPECT_EQ(zarray["compressor"], nullptr);
  EXPECT_EQ(zarray["order"], "F");
  EXPECT_EQ(zarray["fill_value"], "NaN");
  EXPECT_EQ(m.codecs->array_to_array().size(), 1u);  // the transpose

  ArraySpec bad = spec;
  bad.codecs = json::array({"bytes"});
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  bad = spec;
  bad.chunk_key_encoding = ChunkKeyEncoding{};
  EXPECT_THROW(make_array_metadata(bad, registry()), InvalidArgumentError);
  // bfloat16 has no NumPy type string: v2 names it, as tensorstore does.
  ArraySpec named = spec;
  named.dtype = DataType::bfloat16();
  named.fill_value = json(1.5);
  EXPECT_EQ(array_metadata_to_v2_json(make_array_metadata(named, registry()))["dtype"], "bfloat16");
}

TEST(MakeArrayMetadata, DefaultChunksAreAboutOneMebibyte) {
  ArraySpec spec;
  spec.codecs = json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}}])");
  struct Case {
    Shape shape;
    DataType dtype;
    Shape expected;
  };
  const Case cases[] = {
      {{100, 100}, DataType::float_(64), {100, 100}},              // small: one chunk
      {{10000, 10000}, DataType::float_(64), {313, 313}},          // 783 KiB
      {{1u << 30}, DataType::uint_(8), {1u << 20}},                // exactly 1 MiB
      {{1000000, 3}, DataType::float_(32), {62500, 3}},            // 732 KiB
      {{0, 5}, DataType::int_(16), {1, 5}},                        // zero-length axis
      {{}, DataType::float_(64), {}},                              // 0-d
  };
  for (const auto& c : cases) {
    spec.shape = c.shape;
    spec.dtype = c.dtype;
    spec.codecs = c.dtype.size() > 1 ? json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}}])")
                                     : json::parse(R"(["bytes"])");
    const ArrayMetadata m = make_array_metadata(spec, registry());
    EXPECT_EQ(m.chunk_shape, c.expected) << json(c.shape).dump();
    EXPECT_LE(chunk_bytes(m), 1u << 20);
  }
  // Huge arrays: every chunk of a default grid stays within the target.
  spec.shape = {std::uint64_t{1} << 40, 1000, 1000};
  spec.dtype = DataType::float_(64);
  spec.codecs = json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}}])");
  const ArrayMetadata big = make_array_metadata(spec, registry());
  EXPECT_LE(chunk_bytes(big), 1u << 20);
  EXPECT_GT(chunk_bytes(big), 1u << 19);
}

}  // namespace
}  // namespace zarrkit

#include "zarrkit/chunk_grid.h"

#include <gtest/gtest.h>

#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

TEST(AxisGrid, RegularAxis) {
  const AxisGrid a = AxisGrid::regular(4);
  EXPECT_TRUE(a.is_regular());
  EXPECT_EQ(a.chunk_of(0), 0u);
  EXPECT_EQ(a.chunk_of(7), 1u);
  EXPECT_EQ(a.origin(3), 12u);
  EXPECT_EQ(a.size(100), 4u);
  EXPECT_EQ(a.num_chunks(10), 3u);
  EXPECT_EQ(a.num_chunks(0), 0u);
  EXPECT_THROW(AxisGrid::regular(0), InvalidArgumentError);
}

TEST(AxisGrid, ExplicitAxisWalksItsRuns) {
  // 10 10 5 5 7: runs merge where sizes repeat.
  const std::vector<ChunkRun> runs{{10, 1}, {10, 1}, {5, 2}, {7, 1}};
  const AxisGrid a = AxisGrid::explicit_runs(runs);
  EXPECT_FALSE(a.is_regular());
  EXPECT_EQ(std::vector<ChunkRun>(a.runs().begin(), a.runs().end()), (std::vector<ChunkRun>{{10, 2}, {5, 2}, {7, 1}}));
  EXPECT_EQ(a.covered(), 37u);
  EXPECT_EQ(a.listed_chunks(), 5u);
  EXPECT_EQ(a.largest(), 10u);
  EXPECT_EQ(a.smallest(), 5u);
  const std::uint64_t origins[] = {0, 10, 20, 25, 30};
  const std::uint64_t sizes[] = {10, 10, 5, 5, 7};
  for (std::uint64_t c = 0; c < 5; ++c) {
    EXPECT_EQ(a.origin(c), origins[c]) << c;
    EXPECT_EQ(a.size(c), sizes[c]) << c;
    for (std::uint64_t x = origins[c]; x < origins[c] + sizes[c]; ++x) EXPECT_EQ(a.chunk_of(x), c) << x;
  }
  EXPECT_EQ(a.num_chunks(37), 5u);
  EXPECT_EQ(a.num_chunks(30), 4u);  // chunks past the extent are listed but not counted
  EXPECT_EQ(a.num_chunks(21), 3u);
  EXPECT_EQ(a.num_chunks(0), 0u);
  EXPECT_THROW(a.chunk_of(37), InternalError);
  EXPECT_THROW(a.origin(5), InternalError);
}

TEST(AxisGrid, HugeRunsCostOneEntry) {
  // A billion billion chunks: lookups are arithmetic within the run, nothing is expanded.
  const std::vector<ChunkRun> runs{{3, 1}, {1, std::uint64_t{1} << 60}, {2, 1}};
  const AxisGrid a = AxisGrid::explicit_runs(runs);
  EXPECT_EQ(a.listed_chunks(), (std::uint64_t{1} << 60) + 2);
  EXPECT_EQ(a.chunk_of(std::uint64_t{1} << 59), (std::uint64_t{1} << 59) - 2);
  EXPECT_EQ(a.origin((std::uint64_t{1} << 60) + 1), (std::uint64_t{1} << 60) + 3);
  EXPECT_EQ(a.size((std::uint64_t{1} << 60) + 1), 2u);
}

TEST(AxisGrid, RefusesBadRuns) {
  const std::vector<ChunkRun> none;
  EXPECT_THROW(AxisGrid::explicit_runs(none), InvalidArgumentError);
  const std::vector<ChunkRun> zero_size{{0, 3}};
  EXPECT_THROW(AxisGrid::explicit_runs(zero_size), InvalidArgumentError);
  const std::vector<ChunkRun> zero_count{{4, 0}};
  EXPECT_THROW(AxisGrid::explicit_runs(zero_count), InvalidArgumentError);
  const std::vector<ChunkRun> overflow{{std::uint64_t{1} << 32, std::uint64_t{1} << 32}};
  EXPECT_THROW(AxisGrid::explicit_runs(overflow), InvalidArgumentError);
  const std::vector<ChunkRun> sum_overflow{{std::uint64_t{1} << 63, 1}, {std::uint64_t{1} << 63, 1}};
  EXPECT_THROW(AxisGrid::explicit_runs(sum_overflow), InvalidArgumentError);
}

TEST(AxisGrid, CoveringAppendsTheDifference) {
  const std::vector<ChunkRun> runs{{10, 2}};
  const AxisGrid a = AxisGrid::explicit_runs(runs);
  EXPECT_EQ(a.covering(15), a);
  const AxisGrid grown = a.covering(27);
  EXPECT_EQ(std::vector<ChunkRun>(grown.runs().begin(), grown.runs().end()), (std::vector<ChunkRun>{{10, 2}, {7, 1}}));
  EXPECT_EQ(AxisGrid::regular(4).covering(1000), AxisGrid::regular(4));
}

TEST(ChunkGrid, ShapesAndOrigins) {
  const std::vector<ChunkRun> runs{{10, 2}, {5, 2}};
  const ChunkGrid g({AxisGrid::explicit_runs(runs), AxisGrid::regular(4)});
  EXPECT_FALSE(g.is_regular());
  EXPECT_TRUE(ChunkGrid::regular({4, 3}).is_regular());
  EXPECT_EQ(g.grid_shape({30, 7}), (Shape{4, 2}));
  const std::uint64_t chunk[] = {2, 1};
  EXPECT_EQ(g.chunk_shape(chunk), (Shape{5, 4}));
  EXPECT_EQ(g.chunk_origin(chunk), (Shape{20, 4}));
  EXPECT_EQ(g.largest_chunk(), (Shape{10, 4}));
  EXPECT_THROW(g.check_covers({31, 7}), InvalidArgumentError);
  EXPECT_THROW(g.check_covers({30}), InvalidArgumentError);
  EXPECT_NO_THROW(g.check_covers({29, 1000}));
}

json rectilinear_array(const char* chunk_shapes, const char* shape = "[30, 7]") {
  json doc = parse_json(R"({
    "zarr_format": 3, "node_type": "array", "data_type": "int32",
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "attributes": {}, "storage_transformers": []})");
  doc["shape"] = parse_json(shape);
  doc["chunk_grid"] = {{"name", "rectilinear"},
                       {"configuration", {{"kind", "inline"}, {"chunk_shapes", parse_json(chunk_shapes)}}}};
  return doc;
}

TEST(RectilinearMetadata, ParsesWhatZarrPythonWrites) {
  // zarr-python 3.4.2, chunks=[[10, 10, 5, 5], 4] on a (30, 7) array.
  const ArrayMetadata m = parse_array_metadata_v3(rectilinear_array("[[[10, 2], [5, 2]], 4]"), CodecRegistry::builtin());
  ASSERT_TRUE(m.is_rectilinear());
  EXPECT_EQ(m.chunk_shape, (Shape{10, 4}));  // the largest chunk
  EXPECT_EQ(m.chunk_grid_shape(), (Shape{4, 2}));
  EXPECT_EQ(m.num_chunks(), 8u);
  const std::uint64_t chunk[] = {3, 1};
  EXPECT_EQ(m.chunk_spec(chunk).shape, (Shape{5, 4}));
  EXPECT_EQ(m.prepared_chain(chunk).spec().shape, (Shape{5, 4}));
  EXPECT_EQ(m.chunk_key(chunk), "c/3/1");
  EXPECT_TRUE(m.chunk_grid().axis(1).is_regular());
  EXPECT_EQ(array_metadata_to_v3_json(m)["chunk_grid"], rectilinear_array("[[[10, 2], [5, 2]], 4]")["chunk_grid"]);
}

TEST(RectilinearMetadata, SerialisesRunsAsZarrPythonDoes) {
  // Runs of one chunk as bare sizes; a run of equal bare sizes comes back as [size, count].
  const ArrayMetadata m = parse_array_metadata_v3(rectilinear_array("[[10, 20], [3, 3, 1]]"), CodecRegistry::builtin());
  EXPECT_EQ(array_metadata_to_v3_json(m)["chunk_grid"]["configuration"]["chunk_shapes"],
            parse_json("[[10, 20], [[3, 2], 1]]"));
  // Chunks may reach past the extent (after a shrink): accepted, and kept.
  const ArrayMetadata past = parse_array_metadata_v3(rectilinear_array("[[10, 10, 10], 4]", "[12, 7]"), CodecRegistry::builtin());
  EXPECT_EQ(past.chunk_grid_shape(), (Shape{2, 2}));
  EXPECT_EQ(array_metadata_to_v3_json(past)["chunk_grid"]["configuration"]["chunk_shapes"], parse_json("[[[10, 3]], 4]"));
}

TEST(RectilinearMetadata, MakeArrayMetadataBuildsOne) {
  ArraySpec spec;
  spec.shape = {30, 7};
  spec.dtype = DataType::int_(16);
  const std::vector<ChunkRun> runs{{10, 2}, {5, 2}};
  spec.rectilinear_chunks = ChunkGrid({AxisGrid::explicit_runs(runs), AxisGrid::regular(4)});
  const ArrayMetadata m = make_array_metadata(spec, CodecRegistry::builtin());
  ASSERT_TRUE(m.is_rectilinear());
  EXPECT_EQ(*m.rectilinear_grid, *spec.rectilinear_chunks);
  spec.zarr_format = 2;
  EXPECT_THROW(make_array_metadata(spec, CodecRegistry::builtin()), InvalidArgumentError);
  spec.zarr_format = 3;
  spec.shape = {31, 7};  // the sizes sum to 30
  EXPECT_THROW(make_array_metadata(spec, CodecRegistry::builtin()), InvalidArgumentError);
}

TEST(RectilinearMetadata, ShardingNeedsEverySizeDivisible) {
  json doc = rectilinear_array("[[10, 20], [8]]", "[30, 8]");
  doc["codecs"] = parse_json(R"([{"name": "sharding_indexed", "configuration": {"chunk_shape": [5, 4],
      "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
      "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
      "index_location": "end"}}])");
  const ArrayMetadata m = parse_array_metadata_v3(doc, CodecRegistry::builtin());
  const std::uint64_t first[] = {0, 0};
  const std::uint64_t second[] = {1, 0};
  EXPECT_EQ(m.prepared_chain(first).spec().shape, (Shape{10, 8}));
  EXPECT_EQ(m.prepared_chain(second).spec().shape, (Shape{20, 8}));
  doc["chunk_grid"]["configuration"]["chunk_shapes"] = parse_json("[[10, 15, 5], [8]]");  // 15 % 5 == 0
  EXPECT_NO_THROW(parse_array_metadata_v3(doc, CodecRegistry::builtin()));
  doc["chunk_grid"]["configuration"]["chunk_shapes"] = parse_json("[[10, 12, 8], [8]]");  // 12 % 5 != 0
  EXPECT_THROW(parse_array_metadata_v3(doc, CodecRegistry::builtin()), InvalidArgumentError);
}

TEST(RectilinearMetadata, RefusesBadGrids) {
  struct Case {
    const char* what;
    json grid;
    ErrorCode code;
  };
  const auto config = [](const char* text) { return json{{"name", "rectilinear"}, {"configuration", parse_json(text)}}; };
  const Case cases[] = {
      {"sizes short of the shape", config(R"({"kind": "inline", "chunk_shapes": [[10, 10, 5], 4]})"), ErrorCode::kInvalidArgument},
      {"zero size", config(R"({"kind": "inline", "chunk_shapes": [[10, 0, 20], 4]})"), ErrorCode::kInvalidArgument},
      {"negative size", config(R"({"kind": "inline", "chunk_shapes": [[10, -5, 25], 4]})"), ErrorCode::kInvalidArgument},
      {"zero bare size", config(R"({"kind": "inline", "chunk_shapes": [[30], 0]})"), ErrorCode::kInvalidArgument},
      {"fractional size", config(R"({"kind": "inline", "chunk_shapes": [[10.5, 20], 4]})"), ErrorCode::kInvalidArgument},
      {"zero run count", config(R"({"kind": "inline", "chunk_shapes": [[[10, 0], 30], 4]})"), ErrorCode::kInvalidArgument},
      {"negative run count", config(R"({"kind": "inline", "chunk_shapes": [[[10, -3], 30], 4]})"), ErrorCode::kInvalidArgument},
      {"run of three entries", config(R"({"kind": "inline", "chunk_shapes": [[[10, 3, 1]], 4]})"), ErrorCode::kInvalidArgument},
      {"absurd run length", config(R"({"kind": "inline", "chunk_shapes": [[[2, 18446744073709551615]], 4]})"),
       ErrorCode::kInvalidArgument},
      {"runs summing past 64 bits",
       config(R"({"kind": "inline", "chunk_shapes": [[[4294967296, 4294967295], [4294967296, 4294967295]], 4]})"),
       ErrorCode::kInvalidArgument},
      {"empty axis", config(R"({"kind": "inline", "chunk_shapes": [[], 4]})"), ErrorCode::kInvalidArgument},
      {"wrong rank", config(R"({"kind": "inline", "chunk_shapes": [[30]]})"), ErrorCode::kInvalidArgument},
      {"not a list", config(R"({"kind": "inline", "chunk_shapes": {"0": 30}})"), ErrorCode::kInvalidArgument},
      {"size a string", config(R"({"kind": "inline", "chunk_shapes": [["30"], 4]})"), ErrorCode::kInvalidArgument},
      {"no kind", config(R"({"chunk_shapes": [[30], 4]})"), ErrorCode::kInvalidArgument},
      {"other kind", config(R"({"kind": "external", "chunk_shapes": [[30], 4]})"), ErrorCode::kUnsupported},
      {"kind not a string", config(R"({"kind": 1, "chunk_shapes": [[30], 4]})"), ErrorCode::kInvalidArgument},
      {"no chunk_shapes", config(R"({"kind": "inline"})"), ErrorCode::kInvalidArgument},
      {"extra key", config(R"({"kind": "inline", "chunk_shapes": [[30], 4], "chunk_shape": [4, 4]})"),
       ErrorCode::kInvalidArgument},
      {"chunk beyond the chunk limit", config(R"({"kind": "inline", "chunk_shapes": [[30], 4294967296]})"),
       ErrorCode::kResourceExhausted},
      {"must_understand false",
       json{{"name", "rectilinear"}, {"must_understand", false},
            {"configuration", parse_json(R"({"kind": "inline", "chunk_shapes": [[30], 4]})")}},
       ErrorCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    json doc = rectilinear_array("[[30], 4]");
    doc["chunk_grid"] = c.grid;
    try {
      parse_array_metadata_v3(doc, CodecRegistry::builtin());
      ADD_FAILURE() << c.what << ": parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), c.code) << c.what << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace zarrkit

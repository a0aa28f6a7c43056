// Arrays of variable-length elements (string, bytes): read_var / write_var with every kind
// of selection, partial writes, fill values, v2 object arrays, and the stored bytes.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/selection_testing.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

ArrayMetadata metadata(int zarr_format, DataType dtype, Shape shape, Shape chunks, json fill = nullptr,
                       std::optional<json> codecs = std::nullopt, char order = 'C') {
  ArraySpec spec;
  spec.zarr_format = zarr_format;
  spec.dtype = std::move(dtype);
  spec.shape = std::move(shape);
  spec.chunks = std::move(chunks);
  if (!fill.is_null()) spec.fill_value = fill;
  spec.codecs = std::move(codecs);
  if (zarr_format == 2) spec.v2_order = order;
  return make_array_metadata(spec, CodecRegistry::builtin());
}

std::string stored(Store& store, const std::string& key) {
  auto value = store.get(key, BufferPrototype::host());
  return value ? std::string(as_chars(value->view())) : std::string("<absent>");
}

std::string hex(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("{:02x}", c);
  return out;
}

// Varied strings: empty, ASCII, multi-byte UTF-8, long.
std::string sample_string(std::mt19937_64& rng) {
  static const std::vector<std::string> pieces = {"a", "Zarr", " ", "é", "水", "\xF0\x9F\x99\x82", "0123456789"};
  std::string s;
  const int n = std::uniform_int_distribution<int>(0, 6)(rng);
  for (int i = 0; i < n; ++i) s += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
  return s;
}

VarNDBuffer strings(Shape shape, std::vector<std::string> values) {
  return VarNDBuffer(std::move(shape), DataType::string(), std::move(values));
}

TEST(VarArray, V3StringsRoundTripAndStoreNumcodecsBytes) {
  auto store = MemoryStore::create();
  const json vlen_only = json::array({{{"name", "vlen-utf8"}, {"configuration", json::object()}}});
  Array array = Array::create(store, "s", metadata(3, DataType::string(), {5}, {2}, "", vlen_only));
  EXPECT_EQ(array.metadata().fill_value.bytes().size(), 0u);
  array.write_var({}, strings({5}, {"a", "", "héllo", "水🙂", "zz"}));
  EXPECT_EQ(array.read_var(), strings({5}, {"a", "", "héllo", "水🙂", "zz"}));
  // numcodecs VLenUTF8().encode(np.array(['a', ''], dtype=object)), and the edge chunk
  // padded with the fill value "".
  EXPECT_EQ(hex(stored(*store, "s/c/0")), "02000000010000006100000000");
  EXPECT_EQ(hex(stored(*store, "s/c/2")), "02000000020000007a7a00000000");
  // Reopened from the store, with the default codecs (vlen-utf8 + zstd) this time.
  Array::create(store, "t", metadata(3, DataType::string(), {5}, {2}));
  Array reopened = Array::open(store, "t");
  EXPECT_EQ(reopened.metadata().codecs->to_json()[0], (json{{"name", "vlen-utf8"}, {"configuration", json::object()}}));
  reopened.write_var({Slice{1, 4}}, strings({3}, {"x", "yy", "zzz"}));
  EXPECT_EQ(reopened.read_var(), strings({5}, {"", "x", "yy", "zzz", ""}));
}

TEST(VarArray, RandomSelectionsReadAndWriteLikeNumPy) {
  std::mt19937_64 rng(20240517);
  for (int zarr_format : {2, 3}) {
    for (int round = 0; round < 40; ++round) {
      SCOPED_TRACE(fmt::format("v{} round {}", zarr_format, round));
      const Shape shape = {std::uniform_int_distribution<std::uint64_t>(1, 9)(rng),
                           std::uniform_int_distribution<std::uint64_t>(1, 7)(rng)};
      const Shape chunks = {std::uniform_int_distribution<std::uint64_t>(1, 4)(rng),
                            std::uniform_int_distribution<std::uint64_t>(1, 4)(rng)};
      auto store = MemoryStore::create();
      Array array = Array::create(store, "a", metadata(zarr_format, DataType::string(), shape, chunks, "fill",
                                                       std::nullopt, round % 3 == 0 ? 'F' : 'C'));
      // The model: a plain C-order vector, updated as NumPy would (last write wins).
      std::vector<std::string> model(shape[0] * shape[1], "fill");
      for (int step = 0; step < 6; ++step) {
        const Selection selection = testing::random_selection(rng, shape);
        SCOPED_TRACE(testing::describe_selection(selection));
        const auto axes = testing::reference_axes(selection, shape);
        const Shape out_shape = array.selection_shape(selection);
        std::vector<std::string> values;
        for (std::uint64_t k = 0, n = checked_num_elements(out_shape); k < n; ++k) {
          values.push_back(step % 3 == 2 && k % 2 == 0 ? "fill" : sample_string(rng));
        }
        array.write_var(selection, strings(out_shape, values));
        std::size_t k = 0;
        for (std::uint64_t i : axes[0].indices) {
          for (std::uint64_t j : axes[1].indices) model[i * shape[1] + j] = values[k++];
        }
        // Read back another random selection and the whole array.
        const Selection probe = testing::random_selection(rng, shape);
        const auto probe_axes = testing::reference_axes(probe, shape);
        std::vector<std::string> expected;
        for (std::uint64_t i : probe_axes[0].indices) {
          for (std::uint64_t j : probe_axes[1].indices) expected.push_back(model[i * shape[1] + j]);
        }
        EXPECT_EQ(array.read_var(probe), strings(array.selection_shape(probe), expected))
            << testing::describe_selection(probe);
      }
      EXPECT_EQ(Array::open(store, "a").read_var(), strings(shape, model));
    }
  }
}

// Shards of strings, as zarr-python writes them with `shards=`: the element ids travel
// through the sharding codec, and the vlen codec runs on each inner chunk.
TEST(VarArray, ShardedStrings) {
  const json sharded = json::array(
      {{{"name", "sharding_indexed"},
        {"configuration",
         {{"chunk_shape", {2, 2}},
          {"codecs", json::array({{{"name", "vlen-utf8"}, {"configuration", json::object()}}})},
          {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                        {{"name", "crc32c"}}})},
          {"index_location", "end"}}}}});
  std::mt19937_64 rng(7);
  auto store = MemoryStore::create();
  const Shape shape = {7, 5};
  Array array = Array::create(store, "a", metadata(3, DataType::string(), shape, {4, 4}, "", sharded));
  std::vector<std::string> model(35, "");
  for (int step = 0; step < 30; ++step) {
    const Selection selection = testing::random_selection(rng, shape);
    SCOPED_TRACE(testing::describe_selection(selection));
    const auto axes = testing::reference_axes(selection, shape);
    const Shape out_shape = array.selection_shape(selection);
    std::vector<std::string> values;
    for (std::uint64_t k = 0, n = checked_num_elements(out_shape); k < n; ++k) values.push_back(sample_string(rng));
    array.write_var(selection, strings(out_shape, values));
    std::size_t k = 0;
    for (std::uint64_t i : axes[0].indices) {
      for (std::uint64_t j : axes[1].indices) model[i * shape[1] + j] = values[k++];
    }
    ASSERT_EQ(array.read_var(), strings(shape, model));
  }
  // Shard c/1/1 covers [4:7, 4:5]; clearing it to the fill value deletes the shard.
  array.write_var({Slice{4, 7}, Slice{4, 5}}, strings({}, {""}));
  EXPECT_EQ(stored(*store, "a/c/1/1"), "<absent>");
}

// Coordinate (vindex), mask and block selections of strings, against a C-order model, in
// v2, v3 and sharded v3 arrays.
TEST(VarArray, CoordinateMaskAndBlockSelections) {
  const json sharded = json::array(
      {{{"name", "sharding_indexed"},
        {"configuration",
         {{"chunk_shape", {3, 1}},
          {"codecs", json::array({{{"name", "vlen-utf8"}, {"configuration", json::object()}}})},
          {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                        {{"name", "crc32c"}}})},
          {"index_location", "start"}}}}});
  const Shape shape = {7, 5};
  for (int layout = 0; layout < 3; ++layout) {
    SCOPED_TRACE(layout);
    std::mt19937_64 rng(100 + layout);
    auto store = MemoryStore::create();
    Array array = Array::create(
        store, "a",
        layout == 2 ? metadata(3, DataType::string(), shape, {3, 2}, "", sharded)
                    : metadata(layout == 0 ? 2 : 3, DataType::string(), shape, {3, 2}, "fill"));
    std::vector<std::string> model(35);
    for (auto& element : model) element = sample_string(rng);
    array.write_var({}, strings(shape, model));
    auto at = [&](std::int64_t i, std::int64_t j) { return model[i * 5 + j]; };

    // Points, with negative indices and a repeat; read in the coordinates' order.
    CoordinateSelection points = {{0, 6, 3, -4, 2}, {4, 0, 1, 1, -1}};
    EXPECT_EQ(array.read_var_coordinates(points),
              strings({5}, {at(0, 4), at(6, 0), at(3, 1), at(3, 1), at(2, 4)}));
    // 2-d coordinate arrays broadcast against a scalar.
    CoordinateSelection grid = {CoordinateArray(Shape{2, 2}, {0, 1, 5, 6}), CoordinateArray::scalar(2)};
    EXPECT_EQ(array.read_var_coordinates(grid), strings({2, 2}, {at(0, 2), at(1, 2), at(5, 2), at(6, 2)}));
    // Writing: the last value of a repeated point wins, as in NumPy.
    array.write_var_coordinates(points, strings({5}, {"p0", "p1", "first", "last", "p4"}));
    model[0 * 5 + 4] = "p0";
    model[6 * 5 + 0] = "p1";
    model[3 * 5 + 1] = "last";
    model[2 * 5 + 4] = "p4";
    EXPECT_EQ(array.read_var(), strings(shape, model));

    // A mask: every third element in C order.
    MaskSelection mask{shape, std::vector<std::uint8_t>(35)};
    std::vector<std::string> selected, replacement;
    for (std::size_t k = 0; k < 35; ++k) {
      mask.mask[k] = k % 3 == 0;
      if (k % 3 != 0) continue;
      selected.push_back(model[k]);
      replacement.push_back(k % 2 ? "m" + std::to_string(k) : std::string(layout == 2 ? "" : "fill"));
    }
    EXPECT_EQ(array.read_var_mask(mask), strings({selected.size()}, selected));
    array.write_var_mask(mask, strings({replacement.size()}, replacement));
    for (std::size_t k = 0, r = 0; k < 35; k += 3) model[k] = replacement[r++];
    EXPECT_EQ(array.read_var(), strings(shape, model));

    // Blocks: chunk row 1 (rows 3..5), chunk columns 2 and 0 (columns 4, then 0 and 1).
    const Selection blocks = {std::int64_t{1}, IndexArray{{2, 0}}};
    std::vector<std::string> expected;
    for (std::int64_t i = 3; i < 6; ++i) {
      for (std::int64_t j : {4, 0, 1}) expected.push_back(at(i, j));
    }
    EXPECT_EQ(array.read_var(array.block_selection(blocks)), strings({3, 3}, expected));
    EXPECT_THROW(array.read_var_coordinates({{0, 7}, {0, 0}}), InvalidArgumentError);  // out of bounds
  }
}

TEST(VarArray, ChunksOfOnlyTheFillValueAreErasedAndMissingOnesReadAsIt) {
  auto store = MemoryStore::create();
  Array array = Array::create(store, "a", metadata(3, DataType::string(), {6}, {3}, "zz"));
  EXPECT_EQ(array.read_var(), VarNDBuffer::filled({6}, DataType::string(), "zz"));
  array.write_var({}, strings({6}, {"zz", "q", "zz", "zz", "zz", "zz"}));
  EXPECT_NE(stored(*store, "a/c/0"), "<absent>");
  EXPECT_EQ(stored(*store, "a/c/1"), "<absent>");  // nothing but fill: not stored
  array.write_var({std::int64_t{1}}, VarNDBuffer::filled({}, DataType::string(), "zz"));
  EXPECT_EQ(stored(*store, "a/c/0"), "<absent>");  // and erased once it becomes so
  {
    ScopedConfig keep([](Config& c) { c.write_empty_chunks = true; });
    array.write_var({}, VarNDBuffer::filled({6}, DataType::string(), "zz"));
  }
  EXPECT_NE(stored(*store, "a/c/1"), "<absent>");
}

TEST(VarArray, AScalarBroadcastsOverTheSelection) {
  auto store = MemoryStore::create();
  Array array = Array::create(store, "a", metadata(3, DataType::string(), {3, 4}, {2, 3}));
  array.write_var({Slice{std::nullopt, std::nullopt, -2}, IndexArray{{3, 0}}}, strings({}, {"é"}));
  EXPECT_EQ(array.read_var(), strings({3, 4}, {"é", "", "", "é", "", "", "", "", "é", "", "", "é"}));
  EXPECT_EQ(array.read_var({std::int64_t{-1}, std::int64_t{0}}), strings({}, {"é"}));
}

TEST(VarArray, V2ObjectArraysInBothOrders) {
  auto store = MemoryStore::create();
  Array c_order = Array::create(store, "c", metadata(2, DataType::string(), {2, 3}, {2, 3}, ""));
  const json zarray = c_order.metadata().v2_filters.value_or(json());
  EXPECT_EQ(zarray, json::array({{{"id", "vlen-utf8"}}}));
  const VarNDBuffer values = strings({2, 3}, {"a", "b", "c", "d", "e", "f"});
  c_order.write_var({}, values);
  EXPECT_EQ(Array::open(store, "c").read_var(), values);
  // order "F" with no compressor: numcodecs sees the chunk in Fortran order (zarr-python 3
  // writes 06000000 01000000 61 01000000 64 ...: a d b e c f).
  ArraySpec spec;
  spec.zarr_format = 2;
  spec.dtype = DataType::string();
  spec.shape = {2, 3};
  spec.chunks = {2, 3};
  spec.v2_order = 'F';
  spec.v2_compressor = json(nullptr);
  Array f_order = Array::create(store, "f", make_array_metadata(spec, CodecRegistry::builtin()));
  f_order.write_var({}, values);
  EXPECT_EQ(hex(stored(*store, "f/0.0")), "06000000010000006101000000640100000062010000006501000000630100000066");
  EXPECT_EQ(Array::open(store, "f").read_var(), values);
  EXPECT_EQ(Array::open(store, "f").read_var({Slice::all(), std::int64_t{1}}), strings({2}, {"b", "e"}));
}

TEST(VarArray, VariableLengthBytesHoldAnyBytes) {
  for (int zarr_format : {2, 3}) {
    SCOPED_TRACE(zarr_format);
    auto store = MemoryStore::create();
    Array array = Array::create(store, "b", metadata(zarr_format, DataType::var_bytes(), {4}, {3}));
    const VarNDBuffer values(Shape{4}, DataType::var_bytes(),
                             {std::string("\0\xff", 2), "", std::string("\x80\x81\xfe", 3), "abc"});
    array.write_var({}, values);
    Array reopened = Array::open(store, "b");
    EXPECT_EQ(reopened.dtype().kind(), DataTypeKind::kVarBytes);
    EXPECT_EQ(reopened.read_var(), values);
  }
}

TEST(VarArray, RepetitiveTextCompressedFarBeyondNumbersStillReads) {
  auto store = MemoryStore::create();
  Array array = Array::create(store, "a", metadata(3, DataType::string(), {200000}, {200000}));
  const VarNDBuffer values = VarNDBuffer::filled({200000}, DataType::string(), std::string(100, 'x'));
  array.write_var({}, values);
  const auto size = store->size("a/c/0");
  ASSERT_TRUE(size.has_value());
  EXPECT_LT(*size * 64 + (1 << 20), 200000u * 104u) << "the chunk should compress more than 64 times";
  EXPECT_EQ(array.read_var(), values);
}

TEST(VarArray, TypedErrors) {
  auto store = MemoryStore::create();
  Array array = Array::create(store, "s", metadata(3, DataType::string(), {4}, {2}));
  EXPECT_THROW(array.read(), UnsupportedError);
  Array numbers = Array::create(store, "n", metadata(3, DataType::int_(32), {4}, {2}));
  EXPECT_THROW(numbers.read_var(), UnsupportedError);
  EXPECT_THROW(numbers.write_var({}, strings({4}, {"a", "b", "c", "d"})), UnsupportedError);
  // Bytes are not strings; strings must be UTF-8; shapes must broadcast.
  EXPECT_THROW(array.write_var({}, VarNDBuffer::filled({4}, DataType::var_bytes(), "x")), InvalidArgumentError);
  EXPECT_THROW(array.write_var({}, strings({4}, {"a", "\xff", "c", "d"})), InvalidArgumentError);
  EXPECT_THROW(array.write_var({}, strings({3}, {"a", "b", "c"})), InvalidArgumentError);
  EXPECT_THROW(VarNDBuffer(Shape{2}, DataType::string(), {"a"}), InvalidArgumentError);
  EXPECT_THROW(VarNDBuffer(Shape{1}, DataType::int_(8), {"a"}), InvalidArgumentError);
  // A stored chunk that claims 2^32-1 items: DataLoss, naming the chunk, before allocating.
  const std::string absurd("\xff\xff\xff\xff\x01\x00\x00\x00", 8);
  Array raw = Array::create(store, "r", metadata(3, DataType::string(), {4}, {2}, "",
                                                 json::array({{{"name", "vlen-utf8"}}})));
  store->set("r/c/1", as_bytes(absurd));
  try {
    (void)raw.read_var();
    ADD_FAILURE() << "no error";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("c/1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(raw.read_var({Slice{0, 2}}), VarNDBuffer::filled({2}, DataType::string(), ""));
}

}  // namespace
}  // namespace zarrkit

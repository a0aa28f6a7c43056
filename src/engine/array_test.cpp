#include "zarrkit/array.h"

#include <atomic>
#include <cmath>
#include <map>
#include <numeric>
#include <cstring>
#include <filesystem>

#include <unistd.h>
#include <random>

#include <gtest/gtest.h>

#include "engine/array_testing.h"
#include "engine/selection_testing.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/group.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using testing::describe_selection;
using testing::for_each_index;
using testing::random_selection;
using testing::reference_axes;

// ---- Fixtures and helpers ---------------------------------------------------------------

// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("zarrkit-engine-test-{}-{}", ::getpid(), counter++);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

ArrayMetadata make_metadata(ArraySpec spec) { return make_array_metadata(spec, CodecRegistry::builtin()); }

std::string value_of(Store& store, const std::string& key) {
  auto v = store.get(key, BufferPrototype::host());
  if (!v) return "<absent>";
  return std::string(as_chars(v->view()));
}

json json_of(Store& store, const std::string& key) { return json::parse(value_of(store, key)); }

// A C-order array of `shape` as plain bytes: the reference the engine is compared with.
struct Reference {
  Shape shape;
  std::size_t itemsize;
  std::vector<std::byte> data;

  Reference(Shape s, std::size_t item, ByteView fill) : shape(std::move(s)), itemsize(item) {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    data.resize(n * itemsize);
    for (std::size_t i = 0; i < n; ++i) std::memcpy(data.data() + i * itemsize, fill.data(), itemsize);
  }

  // Selected elements in C order of the selection.
  std::vector<std::byte> read(const Selection& sel) const {
    const auto axes = reference_axes(sel, shape);
    Shape counts;
    for (const auto& a : axes) counts.push_back(a.indices.size());
    std::vector<std::byte> out;
    for_each_index(counts, [&](const std::vector<std::uint64_t>& k) {
      std::vector<std::uint64_t> g(shape.size());
      for (std::size_t a = 0; a < shape.size(); ++a) g[a] = axes[a].indices[k[a]];
      const auto* p = data.data() + testing::linear_index(g, shape) * itemsize;
      out.insert(out.end(), p, p + itemsize);
    });
    return out;
  }

  // Writes `values` (C order of the selection; one element when `broadcast`).
  void write(const Selection& sel, const std::vector<std::byte>& values, bool broadcast) {
    const auto axes = reference_axes(sel, shape);
    Shape counts;
    for (const auto& a : axes) counts.push_back(a.indices.size());
    std::size_t i = 0;
    for_each_index(counts, [&](const std::vector<std::uint64_t>& k) {
      std::vector<std::uint64_t> g(shape.size());
      for (std::size_t a = 0; a < shape.size(); ++a) g[a] = axes[a].indices[k[a]];
      std::memcpy(data.data() + testing::linear_index(g, shape) * itemsize,
                  values.data() + (broadcast ? 0 : i++ * itemsize), itemsize);
    });
  }
};

std::vector<std::byte> bytes_of(const NDBuffer& b) {
  return {b.data(), b.data() + b.nbytes()};
}

std::vector<std::byte> random_elements(std::mt19937_64& rng, std::size_t n, const DataType& dtype) {
  std::vector<std::byte> out(n * dtype.size());
  for (auto& b : out) b = static_cast<std::byte>(rng());
  if (dtype.kind() == DataTypeKind::kBool) {
    for (auto& b : out) b = static_cast<std::byte>(static_cast<unsigned>(b) & 1u);
  }
  return out;
}

std::shared_ptr<Store> make_store(bool local, TempDir& dir) {
  if (local) return LocalStore::open(dir.path() / "data.zarr");
  return MemoryStore::create();
}

// ---- Round trips against the reference --------------------------------------------------

struct RoundTripCase {
  std::string name = {};
  DataType dtype = {};
  int zarr_format = 3;
  char order = 'C';
  std::optional<json> codecs = std::nullopt;         // v3
  std::optional<json> v2_compressor = std::nullopt;  // v2
  std::optional<json> fill_value = std::nullopt;
  // v3 codecs transpose(reversed axes) + bytes + gzip + crc32c, built for each rank.
  bool transpose_gzip_crc = false;
};

json transpose_gzip_crc_codecs(std::size_t ndim) {
  json order = json::array();
  for (std::size_t a = ndim; a-- > 0;) order.push_back(a);
  json codecs = json::array();
  if (ndim > 0) codecs.push_back({{"name", "transpose"}, {"configuration", {{"order", order}}}});
  codecs.push_back({{"name", "bytes"}, {"configuration", {{"endian", "little"}}}});
  codecs.push_back({{"name", "gzip"}, {"configuration", {{"level", 1}}}});
  codecs.push_back({{"name", "crc32c"}});
  return codecs;
}

class ArrayRoundTrip : public ::testing::TestWithParam<std::tuple<RoundTripCase, bool>> {};

TEST_P(ArrayRoundTrip, RandomWritesAndReadsMatchAPlainLoopReference) {
  const auto& [c, local] = GetParam();
  TempDir dir;
  auto store = make_store(local, dir);
  std::mt19937_64 rng(std::hash<std::string>{}(c.name) + local);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };

  const std::vector<std::pair<Shape, Shape>> geometries = {
      {{}, {}},           {{1}, {1}},          {{17}, {5}},           {{20}, {4}},
      {{7, 9}, {3, 4}},   {{6, 6}, {6, 6}},    {{5, 11}, {8, 2}},     {{4, 5, 6}, {2, 3, 4}},
      {{3, 0, 4}, {2, 2, 2}}, {{2, 3, 4, 5}, {1, 2, 3, 2}},
  };
  for (const auto& [shape, chunks] : geometries) {
    SCOPED_TRACE(fmt::format("shape [{}] chunks [{}]", fmt::join(shape, ","), fmt::join(chunks, ",")));
    ArraySpec spec;
    spec.zarr_format = c.zarr_format;
    spec.shape = shape;
    spec.chunks = chunks;
    spec.dtype = c.dtype;
    spec.codecs = c.transpose_gzip_crc ? transpose_gzip_crc_codecs(shape.size()) : c.codecs;
    spec.v2_compressor = c.v2_compressor;
    spec.v2_order = c.order;
    spec.fill_value = c.fill_value;
    if (shape.empty()) spec.chunks = {};
    Array array = Array::create(store, "group/arr", make_metadata(spec), /*overwrite=*/true);
    Reference ref(shape, c.dtype.size(), array.metadata().fill_value.bytes());

    const int steps = local ? 12 : 40;  // files are slower; the memory store covers more
    for (int step = 0; step < steps; ++step) {
      const Selection sel = random_selection(rng, shape);
      SCOPED_TRACE("selection " + describe_selection(sel));
      const Shape sel_shape = array.selection_shape(sel);
      std::uint64_t n = 1;
      for (auto d : sel_shape) n *= d;
      if (pick(0, 2) != 0) {
        const bool broadcast = pick(0, 4) == 0;
        auto values = random_elements(rng, broadcast ? 1 : n, c.dtype);
        const NDView view = broadcast ? view_of(values, {}, c.dtype) : view_of(values, sel_shape, c.dtype);
        array.write(sel, view);
        ref.write(sel, values, broadcast);
      }
      const NDBuffer got = array.read(sel);
      ASSERT_EQ(got.shape(), sel_shape);
      ASSERT_EQ(bytes_of(got), ref.read(sel));
    }
    // Reopen from the store and read everything.
    const Array reopened = Array::open(store, "group/arr");
    ASSERT_EQ(bytes_of(reopened.read()), ref.data);
  }
}

const RoundTripCase kRoundTripCases[] = {
    {.name = "bool", .dtype = DataType::boolean()},
    {.name = "int8", .dtype = DataType::int_(8)},
    {.name = "uint16", .dtype = DataType::uint_(16)},
    {.name = "int32_fill", .dtype = DataType::int_(32), .fill_value = json(-7)},
    {.name = "uint64", .dtype = DataType::uint_(64)},
    {.name = "float32_nan_fill", .dtype = DataType::float_(32), .fill_value = json("NaN")},
    {.name = "float64", .dtype = DataType::float_(64)},
    {.name = "complex128", .dtype = DataType::complex_(128)},
    {.name = "int16_big_endian_v3",
     .dtype = DataType::int_(16),
     .codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}}})},
    {.name = "float32_transpose_gzip_crc", .dtype = DataType::float_(32), .transpose_gzip_crc = true},
    {.name = "v2_int32", .dtype = DataType::int_(32), .zarr_format = 2},
    {.name = "v2_big_endian_F_order",
     .dtype = DataType::int_(32).with_storage_endian(Endian::kBig),
     .zarr_format = 2,
     .order = 'F',
     .v2_compressor = json(nullptr)},
    {.name = "v2_float64_F_blosc",
     .dtype = DataType::float_(64),
     .zarr_format = 2,
     .order = 'F',
     .v2_compressor = json{{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}}},
    {.name = "v2_uint8_null_fill", .dtype = DataType::uint_(8), .zarr_format = 2, .fill_value = json(nullptr)},
};

void PrintTo(const RoundTripCase& c, std::ostream* os) { *os << c.name; }

INSTANTIATE_TEST_SUITE_P(
    Engine, ArrayRoundTrip,
    ::testing::Combine(::testing::ValuesIn(kRoundTripCases), ::testing::Bool()),
    [](const auto& info) {
      return std::get<0>(info.param).name + (std::get<1>(info.param) ? "_local" : "_memory");
    });

// ---- Layout, fill values, empty chunks ------------------------------------------------

template <typename T>
NDView view_of_values(std::vector<T>& values, const Shape& shape, const DataType& dtype) {
  return NDView{reinterpret_cast<std::byte*>(values.data()), shape, NDView::c_strides(shape, sizeof(T)), dtype};
}

TEST(Array, V3KeysAndMetadataAreLaidOutLikeZarrPython) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {3, 4};
  spec.chunks = {2, 2};
  spec.dtype = DataType::int_(16);
  Array a = Array::create(store, "p/q", make_metadata(spec));
  std::vector<std::int16_t> one{1};
  a.write({std::int64_t{0}, std::int64_t{0}}, view_of_values(one, {}, a.dtype()));
  std::vector<std::int16_t> v{7};
  a.write({std::int64_t{2}, std::int64_t{3}}, view_of_values(v, {}, a.dtype()));
  // zarr-python 3.1: the same calls give exactly these keys and documents.
  EXPECT_EQ(store->list(""), (std::vector<std::string>{"p/q/c/0/0", "p/q/c/1/1", "p/q/zarr.json", "p/zarr.json",
                                                       "zarr.json"}));
  // The codec list is the codecs' business (zarrkit leaves out zstd's "checksum": false,
  // which zarr-python writes and the zstd spec says to omit); the rest must match.
  json doc = json_of(*store, "p/q/zarr.json");
  ASSERT_TRUE(doc.contains("codecs"));
  const json codecs = doc["codecs"];
  doc.erase("codecs");
  EXPECT_EQ(doc, json::parse(R"({
    "shape": [3, 4], "data_type": "int16",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "attributes": {}, "zarr_format": 3, "node_type": "array", "storage_transformers": []})"));
  ASSERT_EQ(codecs.size(), 2u);
  EXPECT_EQ(codecs[0], json::parse(R"({"name": "bytes", "configuration": {"endian": "little"}})"));
  EXPECT_EQ(codecs[1]["name"], "zstd");
  EXPECT_EQ(codecs[1]["configuration"]["level"], 0);
  const json group = json::parse(R"({"attributes": {}, "zarr_format": 3, "node_type": "group"})");
  EXPECT_EQ(json_of(*store, "p/zarr.json"), group);
  EXPECT_EQ(json_of(*store, "zarr.json"), group);
}

TEST(Array, V2BigEndianFortranOrderChunksMatchZarrPythonBytes) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.zarr_format = 2;
  spec.shape = {3, 4};
  spec.chunks = {2, 2};
  spec.dtype = DataType::int_(32).with_storage_endian(Endian::kBig);
  spec.v2_order = 'F';
  spec.v2_compressor = json(nullptr);
  Array a = Array::create(store, "p/q", make_metadata(spec));
  std::vector<std::int32_t> values(12);
  std::iota(values.begin(), values.end(), 0);
  a.write({}, view_of_values(values, {3, 4}, a.dtype()));
  EXPECT_EQ(store->list(""), (std::vector<std::string>{".zattrs", ".zgroup", "p/.zattrs", "p/.zgroup",
                                                       "p/q/.zarray", "p/q/.zattrs", "p/q/0.0", "p/q/0.1",
                                                       "p/q/1.0", "p/q/1.1"}));
  // From zarr-python: zarr.create_array(..., dtype=">i4", order="F", compressors=None).
  auto hex = [&](const std::string& key) {
    std::string out;
    for (char c : value_of(*store, key)) out += fmt::format("{:02x}", static_cast<unsigned char>(c));
    return out;
  };
  EXPECT_EQ(hex("p/q/0.0"), "00000000000000040000000100000005");
  EXPECT_EQ(hex("p/q/1.1"), "0000000a000000000000000b00000000");
  EXPECT_EQ(json_of(*store, "p/q/.zarray"), json::parse(R"({"shape": [3, 4], "chunks": [2, 2], "dtype": ">i4",
    "fill_value": 0, "order": "F", "filters": null, "dimension_separator": ".", "compressor": null,
    "zarr_format": 2})"));
  EXPECT_EQ(value_of(*store, "p/q/.zattrs"), "{}");
  EXPECT_EQ(json_of(*store, ".zgroup"), json::parse(R"({"zarr_format": 2})"));
  EXPECT_EQ(values_of<std::int32_t>(Array::open(store, "p/q").read()), values);
}

TEST(Array, ZeroDimensionalKeys) {
  for (int format : {2, 3}) {
    auto store = MemoryStore::create();
    ArraySpec spec;
    spec.zarr_format = format;
    spec.dtype = DataType::float_(64);
    Array a = Array::create(store, "", make_metadata(spec));
    std::vector<double> v{2.5};
    a.write({}, view_of_values(v, {}, a.dtype()));
    EXPECT_TRUE(store->exists(format == 3 ? "c" : "0"));
    EXPECT_EQ(values_of<double>(Array::open(store).read()), v);
    EXPECT_EQ(Array::open(store).read({Ellipsis{}}).shape(), Shape{});
  }
}

TEST(Array, MissingChunksReadAsTheFillValue) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {5, 5};
  spec.chunks = {2, 2};
  spec.dtype = DataType::int_(32);
  spec.fill_value = 42;
  Array a = Array::create(store, "a", make_metadata(spec));
  EXPECT_EQ(values_of<std::int32_t>(a.read()), std::vector<std::int32_t>(25, 42));
  std::vector<std::int32_t> row{1, 2, 3};
  a.write({std::int64_t{4}, Slice{1, 4, 1}}, view_of_values(row, {3}, a.dtype()));
  const auto all = values_of<std::int32_t>(a.read());
  for (int i = 0; i < 25; ++i) {
    const int r = i / 5, c = i % 5;
    EXPECT_EQ(all[i], r == 4 && c >= 1 && c <= 3 ? c : 42) << i;
  }
}

TEST(Array, V2NullFillReadsZerosAndZerosAreNotStored) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.zarr_format = 2;
  spec.shape = {5, 5};
  spec.chunks = {2, 2};
  spec.dtype = DataType::int_(32);
  spec.fill_value = json(nullptr);
  Array a = Array::create(store, "", make_metadata(spec));
  EXPECT_TRUE(a.metadata().fill_value.is_null());
  EXPECT_EQ(values_of<std::int32_t>(a.read()), std::vector<std::int32_t>(25, 0));
  // zarr-python 3 treats a null fill as 0 when deciding whether a chunk is empty.
  std::vector<std::int32_t> ones{1};
  a.write({}, view_of_values(ones, {}, a.dtype()));
  std::vector<std::int32_t> zero{0};
  a.write({Slice{0, 2, 1}, Slice{0, 2, 1}}, view_of_values(zero, {}, a.dtype()));
  EXPECT_FALSE(store->exists("0.0"));
  EXPECT_TRUE(store->exists("0.1"));
}

TEST(Array, PartialWritesKeepTheOtherValues) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {6, 7};
  spec.chunks = {4, 3};
  spec.dtype = DataType::uint_(16);
  Array a = Array::create(store, "", make_metadata(spec));
  std::vector<std::uint16_t> base(42);
  std::iota(base.begin(), base.end(), 100);
  a.write({}, view_of_values(base, {6, 7}, a.dtype()));
  std::vector<std::uint16_t> patch{1, 2, 3, 4};
  a.write({Slice{1, 5, 2}, Slice{2, 7, 3}}, view_of_values(patch, {2, 2}, a.dtype()));
  auto expect = base;
  expect[1 * 7 + 2] = 1;
  expect[1 * 7 + 5] = 2;
  expect[3 * 7 + 2] = 3;
  expect[3 * 7 + 5] = 4;
  EXPECT_EQ(values_of<std::uint16_t>(a.read()), expect);
}

TEST(Array, ChunksOfOnlyTheFillValueAreErasedUnlessWriteEmptyChunks) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {4, 4};
  spec.chunks = {2, 2};
  spec.dtype = DataType::float_(32);
  spec.fill_value = "NaN";
  Array a = Array::create(store, "x", make_metadata(spec));
  std::vector<float> one{1.0f}, nan{std::numeric_limits<float>::quiet_NaN()};
  a.write({}, view_of_values(one, {}, a.dtype()));
  EXPECT_EQ(store->list("x/c").size(), 4u);
  // A partial write that makes the chunk all-NaN (any NaN matches a NaN fill) erases it.
  a.write({Slice{0, 2, 1}, Slice{0, 2, 1}}, view_of_values(nan, {}, a.dtype()));
  EXPECT_FALSE(store->exists("x/c/0/0"));
  EXPECT_TRUE(store->exists("x/c/0/1"));
  a.write({Slice{0, 2, 1}, Slice{2, 4, 1}}, view_of_values(nan, {}, a.dtype()));
  EXPECT_FALSE(store->exists("x/c/0/1"));
  {
    ScopedConfig scoped([](Config& c) { c.write_empty_chunks = true; });
    a.write({Slice{0, 2, 1}}, view_of_values(nan, {}, a.dtype()));
  }
  EXPECT_TRUE(store->exists("x/c/0/0"));
  EXPECT_TRUE(store->exists("x/c/0/1"));
  const auto all = values_of<float>(a.read());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(std::isnan(all[i]), i < 8) << i;
}

TEST(Array, BroadcastsRowsAndScalars) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {3, 4};
  spec.chunks = {2, 3};
  spec.dtype = DataType::int_(64);
  Array a = Array::create(store, "", make_metadata(spec));
  std::vector<std::int64_t> row{1, 2, 3, 4};
  a.write({}, view_of_values(row, {4}, a.dtype()));
  std::vector<std::int64_t> col{7, 8};
  a.write({Slice{1, 3, 1}, Slice{0, 2, 1}}, view_of_values(col, {2, 1}, a.dtype()));
  EXPECT_EQ(values_of<std::int64_t>(a.read()),
            (std::vector<std::int64_t>{1, 2, 3, 4, 7, 7, 3, 4, 8, 8, 3, 4}));
  std::vector<std::int64_t> bad{1, 2, 3};
  EXPECT_THROW(a.write({}, view_of_values(bad, {3}, a.dtype())), InvalidArgumentError);
}

TEST(Array, ReadsIntoStridedViews) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {4, 6};
  spec.chunks = {3, 4};
  spec.dtype = DataType::int_(32);
  Array a = Array::create(store, "", make_metadata(spec));
  std::vector<std::int32_t> values(24);
  std::iota(values.begin(), values.end(), 0);
  a.write({}, view_of_values(values, {4, 6}, a.dtype()));
  // Read the transpose into a column-major buffer: out[c * 4 + r] = a[r, c].
  std::vector<std::int32_t> out(24, -1);
  NDView view{reinterpret_cast<std::byte*>(out.data()), {4, 6}, {4, 16}, a.dtype()};
  a.read_into({}, view);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 6; ++c) EXPECT_EQ(out[c * 4 + r], r * 6 + c);
  }
  std::vector<std::int32_t> small(4);
  EXPECT_THROW(a.read_into({}, view_of_values(small, {2, 2}, a.dtype())), InvalidArgumentError);
  EXPECT_THROW(a.read_into({std::int64_t{0}, Slice{0, 4, 1}}, view_of_values(small, {4}, DataType::float_(32))),
               InvalidArgumentError);
}

TEST(Array, SelectionShape) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {10, 20, 30};
  spec.chunks = {5, 5, 5};
  Array a = Array::create(store, "", make_metadata(spec));
  EXPECT_EQ(a.selection_shape({}), (Shape{10, 20, 30}));
  EXPECT_EQ(a.selection_shape({std::int64_t{-1}, Ellipsis{}, Slice{1, std::nullopt, 7}}), (Shape{20, 5}));
  EXPECT_THROW(a.selection_shape({std::int64_t{10}}), InvalidArgumentError);
  EXPECT_EQ(a.selection_shape({Slice{std::nullopt, std::nullopt, -3}, IndexArray{{1, 1, -1}}, IndexArray{}}),
            (Shape{4, 3, 0}));
  EXPECT_THROW(a.selection_shape({Slice{std::nullopt, std::nullopt, 0}}), InvalidArgumentError);
  EXPECT_THROW(a.selection_shape({IndexArray{{10}}}), InvalidArgumentError);
  EXPECT_THROW(a.selection_shape({BoolArray{{1, 0}}}), InvalidArgumentError);
}

// ---- Opening, creating, attributes, storage info ----------------------------------------

TEST(Array, OpenErrorsNameTheStoreAndPath) {
  auto store = MemoryStore::create();
  try {
    Array::open(store, "nope/arr");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("'nope/arr'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(store->describe()), std::string::npos) << e.what();
  }
  Group::create(store, "g");
  EXPECT_THROW(Array::open(store, "g"), InvalidArgumentError);
  Group::create(store, "g2", 2);
  EXPECT_THROW(Array::open(store, "g2"), InvalidArgumentError);
  store->set("bad/zarr.json", as_bytes("{not json"));
  try {
    Array::open(store, "bad");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("array 'bad'"), std::string::npos) << e.what();
  }
}

TEST(Array, CreateRefusesExistingNodesUnlessOverwrite) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {4};
  spec.chunks = {2};
  spec.dtype = DataType::uint_(8);
  Array a = Array::create(store, "a", make_metadata(spec));
  std::vector<std::uint8_t> v{1};
  a.write({}, view_of_values(v, {}, a.dtype()));
  EXPECT_TRUE(store->exists("a/c/1"));
  EXPECT_THROW(Array::create(store, "a", make_metadata(spec)), InvalidArgumentError);
  Group::create(store, "g");
  EXPECT_THROW(Array::create(store, "g", make_metadata(spec)), InvalidArgumentError);
  spec.shape = {8};
  Array b = Array::create(store, "a", make_metadata(spec), /*overwrite=*/true);
  EXPECT_FALSE(store->exists("a/c/1"));  // the old chunks are gone
  EXPECT_EQ(Array::open(store, "a").shape(), Shape{8});
  // Nodes cannot live inside an array, and names are checked.
  EXPECT_THROW(Array::create(store, "a/inner", make_metadata(spec)), InvalidArgumentError);
  EXPECT_THROW(Array::create(store, "__reserved", make_metadata(spec)), InvalidArgumentError);
  EXPECT_THROW(Array::create(store, "x/../y", make_metadata(spec)), InvalidArgumentError);
}

TEST(Array, SetAttributesRewritesTheMetadata) {
  for (int format : {2, 3}) {
    auto store = MemoryStore::create();
    ArraySpec spec;
    spec.zarr_format = format;
    spec.shape = {4};
    spec.chunks = {2};
    Array a = Array::create(store, "a", make_metadata(spec));
    a.set_attributes({{"units", "m"}, {"scale", 2}});
    EXPECT_EQ(a.metadata().attributes["units"], "m");
    const Array reopened = Array::open(store, "a");
    EXPECT_EQ(reopened.metadata().attributes, (json{{"units", "m"}, {"scale", 2}}));
    if (format == 2) {
      EXPECT_EQ(json_of(*store, "a/.zattrs"), (json{{"units", "m"}, {"scale", 2}}));
    } else {
      EXPECT_EQ(json_of(*store, "a/zarr.json")["attributes"]["scale"], 2);
    }
    EXPECT_THROW(a.set_attributes(json::array()), InvalidArgumentError);
  }
}

TEST(Array, StorageInfoCountsOnlyThisArraysChunks) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.zarr_format = 2;
  spec.shape = {10, 10};
  spec.chunks = {5, 5};
  spec.dtype = DataType::uint_(8);
  spec.v2_compressor = json(nullptr);
  Array a = Array::create(store, "", make_metadata(spec));
  std::vector<std::uint8_t> v{3};
  a.write({Slice{0, 5, 1}}, view_of_values(v, {}, a.dtype()));
  // Keys that are not chunks of this array: other nodes, out-of-grid and odd spellings.
  // (Group::create refuses to put a group inside the root array, so write one by hand.)
  store->set("sub/.zgroup", as_bytes(R"({"zarr_format": 2})"));
  store->set("sub/0.0", as_bytes("x"));
  store->set("0.2", as_bytes("x"));
  store->set("00.1", as_bytes("x"));
  store->set("0.1.0", as_bytes("x"));
  const StorageInfo info = a.storage_info();
  EXPECT_EQ(info.chunks_stored, 2u);
  EXPECT_EQ(info.chunks_total, 4u);
  EXPECT_EQ(info.bytes_stored, 50u);
  EXPECT_EQ(info.bytes_logical, 100u);
}

// ---- Errors and threads -----------------------------------------------------------------

TEST(Array, ChunkErrorsCarryTheArrayAndChunkKey) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {4, 4};
  spec.chunks = {2, 2};
  spec.dtype = DataType::int_(32);
  Array a = Array::create(store, "arr", make_metadata(spec));
  store->set("arr/c/1/0", as_bytes("this is not zstd"));
  const std::string where = fmt::format("array 'arr' in {}, chunk 'c/1/0': ", store->describe());
  try {
    a.read();
    FAIL();
  } catch (const DataLossError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with(where)) << e.what();
  }
  // A partial write has to decode the old chunk: the same error, the same context.
  std::vector<std::int32_t> v{5};
  try {
    a.write({std::int64_t{2}, std::int64_t{0}}, view_of_values(v, {}, a.dtype()));
    FAIL();
  } catch (const DataLossError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with(where)) << e.what();
  }
  // Reading other chunks still works.
  EXPECT_EQ(values_of<std::int32_t>(a.read({Slice{0, 2, 1}})), std::vector<std::int32_t>(8, 0));
}

TEST(Array, OneThreadAndEightThreadsGiveIdenticalResults) {
  std::vector<std::map<std::string, std::string>> contents;
  std::vector<std::vector<std::byte>> reads;
  for (std::size_t threads : {1u, 8u}) {
    ScopedConfig scoped([&](Config& c) { c.num_threads = threads; });
    auto store = MemoryStore::create();
    ArraySpec spec;
    spec.shape = {37, 23, 5};
    spec.chunks = {4, 5, 3};
    spec.dtype = DataType::float_(64);
    Array a = Array::create(store, "t", make_metadata(spec));
    std::mt19937_64 rng(99);
    for (int i = 0; i < 10; ++i) {
      const Selection sel = random_selection(rng, a.shape());
      const Shape s = a.selection_shape(sel);
      std::uint64_t n = 1;
      for (auto d : s) n *= d;
      auto values = random_elements(rng, n, a.dtype());
      a.write(sel, view_of(values, s, a.dtype()));
    }
    std::map<std::string, std::string> kv;
    for (const auto& key : store->list("")) kv[key] = value_of(*store, key);
    contents.push_back(std::move(kv));
    reads.push_back(bytes_of(a.read({Slice{1, std::nullopt, 2}, Ellipsis{}, Slice{0, 3, 1}})));
  }
  EXPECT_EQ(contents[0], contents[1]);
  EXPECT_EQ(reads[0], reads[1]);
}

TEST(Array, LocalStoreFilesAreLaidOutLikeTheKeys) {
  TempDir dir;
  auto store = LocalStore::open(dir.path() / "d.zarr");
  ArraySpec spec;
  spec.shape = {4, 4};
  spec.chunks = {2, 2};
  spec.dtype = DataType::int_(8);
  Array a = Array::create(store, "g/a", make_metadata(spec));
  std::vector<std::int8_t> v{9};
  a.write({std::int64_t{3}, std::int64_t{1}}, view_of_values(v, {}, a.dtype()));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "d.zarr/g/a/c/1/0"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "d.zarr/g/zarr.json"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "d.zarr/zarr.json"));
  EXPECT_EQ(values_of<std::int8_t>(Array::open(LocalStore::open(dir.path() / "d.zarr"), "g/a").read({std::int64_t{3}})),
            (std::vector<std::int8_t>{0, 9, 0, 0}));
}

TEST(Array, ReadingMoreThanCanBeAllocatedIsResourceExhausted) {
  auto store = MemoryStore::create();
  store->set("zarr.json", as_bytes(R"({"zarr_format": 3, "node_type": "array", "shape": [18446744073709551615],
    "data_type": "uint8", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1024]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
    "codecs": [{"name": "bytes"}], "attributes": {}})"));
  const Array a = Array::open(store);
  EXPECT_THROW(a.read(), ResourceExhaustedError);
  // A small selection of the same array is fine.
  EXPECT_EQ(a.read({Slice{-3, std::nullopt, 1}}).shape(), Shape{3});
}

TEST(Array, VariableLengthTypesAreUnsupported) {
  auto store = MemoryStore::create();
  store->set("zarr.json", as_bytes(R"({"zarr_format": 3, "node_type": "array", "shape": [2],
    "data_type": "string", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": "",
    "codecs": [{"name": "vlen-utf8"}], "attributes": {}})"));
  // Refused at open (by the metadata parser) or at the first read, never read as bytes.
  EXPECT_THROW(
      {
        const Array a = Array::open(store);
        a.read();
      },
      UnsupportedError);
}

}  // namespace
}  // namespace zarrkit

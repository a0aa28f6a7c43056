// The read paths of chunk_read.h: straight into the output (decode_into, pread of raw
// chunks), byte ranges of raw chunks, and decode-then-copy must give the same elements.
#include "engine/chunk_read.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "engine/selection_testing.h"
#include "stores/testing/temp_dir.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/selection.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

using zarrkit::testing::TempDir;

json bytes_codec(const char* endian) { return {{"name", "bytes"}, {"configuration", {{"endian", endian}}}}; }
const json kZstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};
const json kGzip = {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
const json kCrc = {{"name", "crc32c"}};
const json kLz4 = {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}};
json blosc(int typesize) {
  return {{"name", "blosc"},
          {"configuration",
           {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", typesize}, {"blocksize", 0}}}};
}
json transpose(std::size_t ndim) {
  json order = json::array();
  for (std::size_t a = ndim; a-- > 0;) order.push_back(a);
  return {{"name", "transpose"}, {"configuration", {{"order", order}}}};
}
json sharding(const Shape& inner, json codecs) {
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", inner},
            {"codecs", std::move(codecs)},
            {"index_codecs", json::array({bytes_codec("little"), kCrc})},
            {"index_location", "end"}}}};
}

// Every chain kind the read paths tell apart, for an array of `ndim` axes and `dtype`.
std::vector<std::pair<std::string, json>> chains(std::size_t ndim, const DataType& dtype, const Shape& inner) {
  const json le = bytes_codec("little");
  return {
      {"raw", json::array({le})},
      {"raw big-endian", json::array({bytes_codec("big")})},
      {"zstd", json::array({le, kZstd})},
      {"zstd big-endian", json::array({bytes_codec("big"), kZstd})},
      {"blosc", json::array({le, blosc(static_cast<int>(dtype.size()))})},
      {"gzip", json::array({le, kGzip})},
      {"lz4", json::array({le, kLz4})},
      {"crc32c", json::array({le, kCrc})},
      {"zstd crc32c", json::array({le, kZstd, kCrc})},
      {"crc32c zstd", json::array({le, kCrc, kZstd})},   // the checksum inside: decode then copy
      {"zstd gzip", json::array({le, kZstd, kGzip})},   // two compressors: decode then copy
      {"transpose zstd", json::array({transpose(ndim), le, kZstd})},
      {"sharded zstd", json::array({sharding(inner, json::array({le, kZstd}))})},
      {"sharded raw", json::array({sharding(inner, json::array({le}))})},
  };
}

std::vector<std::byte> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// The elements of `sel` of a C-order array, in C order of the selection.
std::vector<std::byte> reference_read(const std::vector<std::byte>& data, const Shape& shape, std::size_t itemsize,
                                      const Selection& sel) {
  const auto axes = testing::reference_axes(sel, shape);
  Shape counts;
  for (const auto& a : axes) counts.push_back(a.indices.size());
  std::vector<std::byte> out;
  testing::for_each_index(counts, [&](const std::vector<std::uint64_t>& k) {
    std::vector<std::uint64_t> g(shape.size());
    for (std::size_t a = 0; a < shape.size(); ++a) g[a] = axes[a].indices[k[a]];
    const auto* p = data.data() + testing::linear_index(g, shape) * itemsize;
    out.insert(out.end(), p, p + itemsize);
  });
  return out;
}

struct Geometry {
  Shape shape;
  Shape chunks;
  Shape inner;  // inner chunks of the sharded chains
};

TEST(ChunkRead, DirectPathsAndCopyPathsGiveTheSameElements) {
  const std::vector<Geometry> geometries = {
      {{37}, {8}, {4}},
      {{13, 17}, {4, 8}, {2, 4}},
      {{9, 10, 11}, {4, 5, 11}, {2, 5, 11}},
      {{6, 8, 8}, {3, 8, 8}, {3, 4, 8}},
      // Rows of 640 bytes (float64): whole raw chunks go row by row into the output's rows.
      {{5, 7, 200}, {2, 3, 80}, {1, 3, 80}},
      // Chunks spanning the last axis: their rows are adjacent in the output and merge.
      {{6, 4, 100}, {2, 2, 100}, {2, 1, 100}},
  };
  const std::vector<DataType> dtypes = {DataType::uint_(8), DataType::uint_(16), DataType::float_(64)};
  std::mt19937_64 rng(6);
  int checked = 0;
  for (const bool local : {true, false}) {
    TempDir dir;
    std::shared_ptr<Store> store =
        local ? std::shared_ptr<Store>(LocalStore::open(dir.path() / "a.zarr")) : MemoryStore::create();
    for (const Geometry& g : geometries) {
      for (const DataType& dtype : dtypes) {
        for (const auto& [name, codecs] : chains(g.shape.size(), dtype, g.inner)) {
          SCOPED_TRACE(fmt::format("{} store, shape [{}], chunks [{}], {}, {}", local ? "local" : "memory",
                                   fmt::join(g.shape, ","), fmt::join(g.chunks, ","), dtype.name(), name));
          ArraySpec spec;
          spec.shape = g.shape;
          spec.chunks = g.chunks;
          spec.dtype = dtype;
          spec.codecs = codecs;
          spec.fill_value = 7;
          Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()), true);
          std::uint64_t n = 1;
          for (auto d : g.shape) n *= d;
          std::vector<std::byte> data = random_bytes(rng, n * dtype.size());
          const NDView source{data.data(), g.shape, NDView::c_strides(g.shape, dtype.size()), dtype};
          array.write(Selection{}, source);

          // Whole, into a C-order buffer: interior chunks go straight into it.
          const NDBuffer whole = array.read(Selection{});
          ASSERT_EQ(std::vector<std::byte>(whole.data(), whole.data() + whole.nbytes()), data);

          // Whole, into a view whose last axis is padded: no chunk matches its layout, so
          // every chunk takes the copy path.
          Shape padded = g.shape;
          padded.back() += 3;
          std::vector<std::byte> room(checked_nbytes(padded, dtype), std::byte{0});
          NDView strided{room.data(), g.shape, NDView::c_strides(padded, dtype.size()), dtype};
          array.read_into(Selection{}, strided);
          std::vector<std::byte> compact(data.size());
          testing::for_each_index(g.shape, [&](const std::vector<std::uint64_t>& k) {
            std::int64_t from = 0;
            for (std::size_t a = 0; a < k.size(); ++a) from += strided.byte_strides[a] * static_cast<std::int64_t>(k[a]);
            std::memcpy(compact.data() + testing::linear_index(k, g.shape) * dtype.size(), room.data() + from,
                        dtype.size());
          });
          ASSERT_EQ(compact, data);

          // Parts: boxes, steps, lists, integers (raw chunks: byte ranges).
          for (int i = 0; i < 12; ++i) {
            const Selection sel = testing::random_selection(rng, g.shape);
            SCOPED_TRACE("selection " + testing::describe_selection(sel));
            const NDBuffer got = array.read(sel);
            ASSERT_EQ(std::vector<std::byte>(got.data(), got.data() + got.nbytes()),
                      reference_read(data, g.shape, dtype.size(), sel));
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 6 * 3 * 14);
}

// Counts the ranges of each read_into call.
class RangeCountingStore : public MemoryStore {
 public:
  std::vector<std::size_t> ranges_per_call;
  std::optional<std::uint64_t> read_into(std::string_view key, std::span<const ByteRange> ranges,
                                         std::span<const MutableByteView> dests) override {
    {
      std::lock_guard lock(mutex_);  // chunks are read on several threads
      ranges_per_call.push_back(ranges.size());
    }
    return MemoryStore::read_into(key, ranges, dests);
  }

 private:
  std::mutex mutex_;
};

TEST(ChunkRead, WholeRawChunksNarrowerThanTheArrayAreReadRowByRowIntoTheOutput) {
  auto store = std::make_shared<RangeCountingStore>();
  ArraySpec spec;
  spec.shape = {4, 6, 300};
  spec.chunks = {2, 3, 100};  // rows of 800 bytes, strided in the output
  spec.dtype = DataType::float_(64);
  spec.codecs = json::array({bytes_codec("little")});
  spec.fill_value = 0;
  Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()));
  std::mt19937_64 rng(3);
  std::vector<std::byte> data = random_bytes(rng, 4 * 6 * 300 * 8);
  array.write(Selection{}, NDView{data.data(), spec.shape, NDView::c_strides(spec.shape, 8), spec.dtype});
  store->ranges_per_call.clear();
  const NDBuffer whole = array.read(Selection{});
  ASSERT_EQ(std::vector<std::byte>(whole.data(), whole.data() + whole.nbytes()), data);
  // 12 chunks, each one call with its 6 rows.
  EXPECT_EQ(store->ranges_per_call, std::vector<std::size_t>(12, 6));
}

TEST(ChunkRead, LargeOutputsFaultedInAsTheyAreWrittenGetTheValues) {
  // 64 MiB of uint32 read with four threads, the output's pages faulted in span by span as
  // the tasks write them (output_faults.h): chunks in 8 slabs (taken one from each slab in
  // turn), and chunks of one slab (in C order); raw, compressed (in pieces), sharded, and a
  // missing chunk (the fill value).
  ScopedConfig threads([](Config& c) { c.num_threads = 4; });
  TempDir dir;
  auto store = LocalStore::open(dir.path() / "a.zarr");
  std::vector<std::uint32_t> values(16 * 1024 * 1024);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(i * 2654435761u >> 7);
  const Shape shape = {16, 1024, 1024};
  const NDView source{reinterpret_cast<std::byte*>(values.data()), shape, NDView::c_strides(shape, 4),
                      DataType::uint_(32)};
  for (const auto& [chunks, groups] : std::vector<std::pair<Shape, std::size_t>>{{{2, 512, 256}, 8}, {{16, 256, 256}, 0}}) {
    for (const json& codecs : {json::array({bytes_codec("little")}), json::array({bytes_codec("little"), kZstd}),
                               json::array({sharding({2, 128, 256}, json::array({bytes_codec("little"), kZstd}))})}) {
      SCOPED_TRACE(fmt::format("chunks [{}], {}", fmt::join(chunks, ","), codecs.dump()));
      ArraySpec spec;
      spec.shape = shape;
      spec.chunks = chunks;
      spec.dtype = DataType::uint_(32);
      spec.fill_value = 0;
      spec.codecs = codecs;
      Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()), true);
      array.write(Selection{}, source);
      const ChunkPlan plan(spec.shape, spec.chunks, Selection{});
      ASSERT_EQ(plan_read_order(plan, source, 4).groups, groups);  // output_faults.h
      const NDBuffer got = array.read(Selection{});
      ASSERT_EQ(got.nbytes(), values.size() * 4);
      EXPECT_EQ(std::memcmp(got.data(), values.data(), got.nbytes()), 0);
      // Without the last chunk: its elements read as the fill value.
      store->erase(chunks[0] == 2 ? "x/c/7/1/3" : "x/c/0/3/3");
      const NDBuffer partial = array.read(Selection{});
      std::vector<std::uint32_t> expected = values;
      const std::size_t last_plane = chunks[0] == 2 ? 14 : 0;
      for (std::size_t z = last_plane; z < 16; ++z) {
        for (std::size_t y = 1024 - chunks[1]; y < 1024; ++y) {
          std::fill_n(expected.begin() + static_cast<std::ptrdiff_t>((z * 1024 + y) * 1024 + 1024 - chunks[2]),
                      chunks[2], 0u);
        }
      }
      EXPECT_EQ(std::memcmp(partial.data(), expected.data(), partial.nbytes()), 0);
    }
  }
}

TEST(ChunkRead, RawChunksOfTheWrongSizeAreDataLossWholeOrInPart) {
  TempDir dir;
  auto store = LocalStore::open(dir.path() / "a.zarr");
  ArraySpec spec;
  spec.shape = {8, 8};
  spec.chunks = {8, 8};
  spec.dtype = DataType::uint_(16);
  spec.codecs = json::array({bytes_codec("little")});
  Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()), true);
  std::vector<std::uint16_t> values(64, 5);
  array.write(Selection{}, NDView{reinterpret_cast<std::byte*>(values.data()), {8, 8}, {16, 2}, spec.dtype});
  const auto chunk_file = dir.path() / "a.zarr" / "x" / "c" / "0" / "0";
  ASSERT_TRUE(std::filesystem::exists(chunk_file));
  const Selection part = {Slice{1, 3, 1}, Slice{2, 5, 1}};

  std::filesystem::resize_file(chunk_file, 100);  // short
  EXPECT_THROW(array.read(Selection{}), DataLossError);
  EXPECT_THROW(array.read(part), DataLossError);
  std::filesystem::resize_file(chunk_file, 200);  // long
  EXPECT_THROW(array.read(Selection{}), DataLossError);
  EXPECT_THROW(array.read(part), DataLossError);
  std::filesystem::remove(chunk_file);  // absent: the fill value
  const NDBuffer got = array.read(part);
  EXPECT_EQ(got.nbytes(), 2u * 3 * 2);
}

TEST(ChunkRead, CompressedChunksThatDecodeToTheWrongSizeAreDataLoss) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {16};
  spec.chunks = {16};
  spec.dtype = DataType::uint_(8);
  for (const json& compressor : {kZstd, kGzip, kLz4, blosc(1)}) {
    SCOPED_TRACE(compressor.dump());
    spec.codecs = json::array({bytes_codec("little"), compressor});
    Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()), true);
    // A chunk of 15 and one of 17 bytes, encoded by the same chain.
    for (const std::uint64_t wrong : {15u, 17u}) {
      ChunkSpec other{{wrong}, spec.dtype, array.metadata().fill_value};
      NDBuffer chunk = NDBuffer::allocate({wrong}, spec.dtype);
      std::memset(chunk.data(), 3, chunk.nbytes());
      const Buffer encoded = array.metadata().codecs->encode(chunk, other);
      store->set("x/c/0", encoded.view());
      EXPECT_THROW(array.read(Selection{}), DataLossError);
    }
  }
}

// zstd that counts how chunks are decoded: piece readers made, whole decodes.
class CountingZstd final : public BytesToBytesCodec {
 public:
  CountingZstd()
      : zstd_(std::dynamic_pointer_cast<const BytesToBytesCodec>(CodecRegistry::builtin().make_v3(kZstd, {}))) {}
  std::string_view name() const override { return "test.counting_zstd"; }
  nlohmann::json to_json() const override { return codec_json(name(), json::object()); }
  Buffer encode(ByteView decoded, const ChunkSpec& spec) const override { return zstd_->encode(decoded, spec); }
  Buffer decode(ByteView encoded, SizeBound bound, const ChunkSpec& spec) const override {
    ++whole;
    return zstd_->decode(encoded, bound, spec);
  }
  void decode_into(ByteView encoded, MutableByteView out, const ChunkSpec& spec) const override {
    ++whole;
    zstd_->decode_into(encoded, out, spec);
  }
  std::unique_ptr<PieceReader> decode_pieces(std::shared_ptr<ByteSource> encoded, std::uint64_t decoded_size,
                                             const ChunkSpec& spec) const override {
    ++pieces;
    return zstd_->decode_pieces(std::move(encoded), decoded_size, spec);
  }
  mutable std::atomic<int> whole{0};
  mutable std::atomic<int> pieces{0};

 private:
  std::shared_ptr<const BytesToBytesCodec> zstd_;
};

TEST(ChunkRead, LargeCompressedChunksNarrowerThanTheArrayAreDecodedInPieces) {
  const auto counting = std::make_shared<CountingZstd>();
  CodecRegistry registry;
  register_builtin_codecs(registry);
  registry.add_v3("test.counting_zstd", [counting](const json&, const CodecContext&) { return counting; });
  // Chunks of 1 MiB (uint16), ragged at the array's edge on every axis: 12 chunks.
  ArraySpec spec;
  spec.shape = {5, 300, 1100};
  spec.chunks = {4, 256, 512};
  spec.dtype = DataType::uint_(16);
  spec.fill_value = 7;
  std::vector<std::uint16_t> values(5 * 300 * 1100);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint16_t>((i / 3) % 1000 + i % 7);
  const std::vector<std::byte> data(reinterpret_cast<const std::byte*>(values.data()),
                                    reinterpret_cast<const std::byte*>(values.data() + values.size()));
  const NDView source{const_cast<std::byte*>(data.data()), spec.shape, NDView::c_strides(spec.shape, 2), spec.dtype};
  const std::vector<Selection> boxes = {
      Selection{Slice{1, 5, 1}, Slice{10, 290, 1}, Slice{500, 1100, 1}},
      Selection{Slice{std::nullopt, std::nullopt, -1}, Slice{299, 3, -1}, Slice{1000, 20, -1}},  // backwards
      Selection{2, Slice{}, Slice{255, 770, 1}},
  };
  for (const json& codecs : {json::array({bytes_codec("little"), {{"name", "test.counting_zstd"}}}),
                             json::array({bytes_codec("big"), kZstd, kCrc}), json::array({bytes_codec("little"), blosc(2)}),
                             json::array({bytes_codec("little"), {{"name", "blosc"},
                                                                  {"configuration",
                                                                   {{"cname", "zstd"}, {"clevel", 1}, {"shuffle", "bitshuffle"},
                                                                    {"typesize", 2}, {"blocksize", 48 << 10}}}}})}) {
    SCOPED_TRACE(codecs.dump());
    auto store = MemoryStore::create();
    spec.codecs = codecs;
    Array array = Array::create(store, "x", make_array_metadata(spec, registry), true);
    array.write(Selection{}, source);
    counting->whole = 0;
    counting->pieces = 0;
    const NDBuffer whole = array.read(Selection{});
    ASSERT_EQ(std::vector<std::byte>(whole.data(), whole.data() + whole.nbytes()), data);
    for (const Selection& sel : boxes) {
      SCOPED_TRACE(testing::describe_selection(sel));
      const NDBuffer got = array.read(sel);
      ASSERT_EQ(std::vector<std::byte>(got.data(), got.data() + got.nbytes()), reference_read(data, spec.shape, 2, sel));
    }
    if (codecs[1]["name"] == "test.counting_zstd") {
      EXPECT_EQ(counting->pieces, 12 + 8 + 12 + 4);  // every chunk of every box
      EXPECT_EQ(counting->whole, 0);
      // Steps other than 1 select more than one box of a chunk: decoded whole.
      const Selection strided{Slice{}, Slice{std::nullopt, std::nullopt, 2}, Slice{}};
      const NDBuffer got = array.read(strided);
      ASSERT_EQ(std::vector<std::byte>(got.data(), got.data() + got.nbytes()),
                reference_read(data, spec.shape, 2, strided));
      EXPECT_EQ(counting->whole, 12);
    }
  }
}

// A memory store whose values, opened for reading in parts, come a part at a time as from
// a file (not said to be in memory). Counts whole gets and the largest part read.
class PartReadingStore : public MemoryStore {
 public:
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    if (!range) ++whole_gets;
    return MemoryStore::get(key, prototype, range);
  }
  std::unique_ptr<ByteSource> open_reader(std::string_view key) override {
    auto value = MemoryStore::get(key, BufferPrototype::host(), std::nullopt);
    if (!value) return nullptr;
    return std::make_unique<Parts>(*this, std::move(*value));
  }
  std::atomic<int> whole_gets{0};
  std::atomic<std::size_t> largest_read{0};
  std::atomic<std::size_t> bytes_read{0};

 private:
  class Parts final : public ByteSource {
   public:
    Parts(PartReadingStore& store, Buffer value) : store_(store), value_(std::move(value)) {}
    std::uint64_t size() const override { return value_.size(); }
    std::size_t read(std::uint64_t offset, MutableByteView dest) override {
      std::size_t seen = store_.largest_read;
      while (dest.size() > seen && !store_.largest_read.compare_exchange_weak(seen, dest.size())) {
      }
      const std::size_t n = std::min<std::uint64_t>(dest.size(), value_.size() - std::min<std::uint64_t>(offset, value_.size()));
      if (n > 0) std::memcpy(dest.data(), value_.data() + offset, n);
      store_.bytes_read += n;
      return n;
    }

   private:
    PartReadingStore& store_;
    Buffer value_;
  };
};

TEST(ChunkRead, LargeChunksAreReadFromTheStoreAPartAtATimeAsTheyAreDecoded) {
  // Chunks of 2 MiB (uint16), a quarter of the array's rows each.
  ArraySpec spec;
  spec.shape = {4, 1024, 1024};
  spec.chunks = {4, 512, 512};
  spec.dtype = DataType::uint_(16);
  std::vector<std::uint16_t> values(4 * 1024 * 1024);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint16_t>(i * 2654435761u >> 20);
  const NDView source{reinterpret_cast<std::byte*>(values.data()), spec.shape, NDView::c_strides(spec.shape, 2),
                      spec.dtype};
  const json blosc_zstd = {{"name", "blosc"},
                           {"configuration",
                            {{"cname", "zstd"}, {"clevel", 1}, {"shuffle", "shuffle"}, {"typesize", 2}, {"blocksize", 65536}}}};
  for (const json& codecs : {json::array({bytes_codec("little"), kZstd}), json::array({bytes_codec("little"), blosc_zstd}),
                             json::array({bytes_codec("big"), kZstd, kCrc})}) {
    SCOPED_TRACE(codecs.dump());
    auto store = std::make_shared<PartReadingStore>();
    spec.codecs = codecs;
    Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()), true);
    array.write(Selection{}, source);
    store->whole_gets = 0;
    store->largest_read = 0;
    store->bytes_read = 0;
    const NDBuffer got = array.read(Selection{});
    ASSERT_EQ(got.nbytes(), values.size() * 2);
    EXPECT_EQ(std::memcmp(got.data(), values.data(), got.nbytes()), 0);
    EXPECT_EQ(store->whole_gets, 0);  // every chunk through open_reader
    std::size_t stored = 0;
    for (const std::string& key : store->list("x/c")) stored += *store->size(key);
    if (codecs.size() == 2) {
      // Parts of at most 256 KiB (zstd) or a piece's blocks (blosc), each byte read once.
      EXPECT_LE(store->largest_read, std::size_t{256} << 10);
      // (blosc reads its 16-byte header twice: alone, then with the block offsets).
      EXPECT_EQ(store->bytes_read, stored + (codecs[1]["name"] == "blosc" ? 4 * 16 : 0));
    } else {
      // The checksum covers the whole value: read whole, then decoded in pieces from memory.
      EXPECT_EQ(store->bytes_read, stored);
    }
  }
}

TEST(ChunkRead, ChunksTheirPiecesRefuseAreDecodedWholeWithTheSameErrors) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {4, 1024, 1024};
  spec.chunks = {4, 512, 512};  // 2 MiB of uint16, a quarter of each row of the array
  spec.dtype = DataType::uint_(16);
  spec.codecs = json::array({bytes_codec("little"), kZstd});
  Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()), true);
  std::vector<std::uint16_t> values(4 * 512 * 512);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint16_t>(i % 4099);
  const Shape chunk_shape = spec.chunks;
  array.write(Selection{Slice{}, Slice{0, 512, 1}, Slice{0, 512, 1}},
              NDView{reinterpret_cast<std::byte*>(values.data()), chunk_shape, NDView::c_strides(chunk_shape, 2),
                     spec.dtype});
  const Buffer stored = *store->get("x/c/0/0/0");
  const auto zstd = std::dynamic_pointer_cast<const BytesToBytesCodec>(CodecRegistry::builtin().make_v3(kZstd, {}));
  std::vector<std::byte> room(values.size() * 2);
  // Cut short, followed by junk: the array's error carries decode_into's words.
  std::vector<std::byte> junk(stored.view().begin(), stored.view().end());
  junk.push_back(std::byte{1});
  for (const ByteView bad : {stored.view().first(stored.size() - 3), ByteView(junk)}) {
    std::string expected;
    try {
      zstd->decode_into(bad, room, {});
    } catch (const DataLossError& e) {
      expected = e.what();
    }
    ASSERT_FALSE(expected.empty());
    store->set("x/c/0/0/0", bad);
    try {
      array.read(Selection{});
      ADD_FAILURE() << "no error";
    } catch (const DataLossError& e) {
      EXPECT_NE(std::string_view(e.what()).find(expected), std::string_view::npos) << e.what();
      EXPECT_NE(std::string_view(e.what()).find("chunk 'c/0/0/0'"), std::string_view::npos) << e.what();
    }
  }
}

TEST(ChunkRead, SlabPlanReadsTheRowsOfACropNotTheWholeChunk) {
  // A 32^3 crop of a float32 chunk of 64x256x256: 32 slabs of 32 rows each.
  ArraySpec spec;
  spec.shape = {64, 256, 256};
  spec.chunks = {64, 256, 256};
  spec.dtype = DataType::float_(32);
  spec.codecs = json::array({bytes_codec("little")});
  const ArrayMetadata m = make_array_metadata(spec, CodecRegistry::builtin());
  const ChunkPlan plan(m.shape, m.chunk_shape, Selection{Slice{10, 42, 1}, Slice{100, 132, 1}, Slice{7, 39, 1}});
  ASSERT_EQ(plan.num_tasks(), 1u);
  const SlabPlan slabs = plan_slabs(plan.task(0), NDView::c_strides(m.chunk_shape, 4), 4);
  EXPECT_EQ(slabs.outer_axes, 1u);
  EXPECT_EQ(slabs.num_slabs, 32u);
  EXPECT_EQ(slabs.slab_bytes, 31u * 256 * 4 + 32 * 4);
  EXPECT_EQ(slabs.box_begin, (std::vector<std::uint64_t>{10, 100, 7}));
  EXPECT_EQ(slabs.box_extent, (std::vector<std::uint64_t>{32, 32, 32}));
}

TEST(ChunkRead, ManyThreadsReadingAtOnceGetTheirOwnBuffers) {
  // Chunks large enough for the host block cache; readers on several threads at once,
  // each through the shared pool, must never see another's bytes.
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {8, 256, 256};
  spec.chunks = {1, 256, 256};
  spec.dtype = DataType::uint_(32);
  spec.codecs = json::array({bytes_codec("little"), kZstd});
  Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()), true);
  std::vector<std::uint32_t> values(8 * 256 * 256);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(i * 2654435761u);
  array.write(Selection{}, NDView{reinterpret_cast<std::byte*>(values.data()), spec.shape,
                                  NDView::c_strides(spec.shape, 4), spec.dtype});
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const std::uint64_t plane = static_cast<std::uint64_t>((t + i) % 8);
        // Alternate whole planes (straight into the output) and parts (decoded, copied).
        const auto p0 = static_cast<std::int64_t>(plane);
        const Selection sel = i % 2 == 0 ? Selection{Slice{p0, p0 + 1, 1}} : Selection{p0, Slice{3, 200, 2}};
        const NDBuffer got = array.read(sel);
        const auto* p = reinterpret_cast<const std::uint32_t*>(got.data());
        if (i % 2 == 0) {
          if (std::memcmp(p, values.data() + plane * 65536, 65536 * 4) != 0) ++mismatches;
        } else {
          for (std::size_t r = 0; r < got.shape()[0]; ++r) {
            for (std::size_t c = 0; c < 256; ++c) {
              if (p[r * 256 + c] != values[plane * 65536 + (3 + 2 * r) * 256 + c]) ++mismatches;
            }
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace zarrkit

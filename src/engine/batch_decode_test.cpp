// The batch decode API (zarrkit/batch_decode.h) into host memory: whole chunks, parts of
// them into strided outputs, absent chunks as the fill value, sharded chunks, and errors that
// name the request without stopping the others.
#include "zarrkit/batch_decode.h"


#include <gtest/gtest.h>

#include "zarrkit/codec_chain.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const DataType kInt32 = DataType::int_(32);
const Shape kChunk = {6, 8};

json bytes_codec() { return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}; }
const json kZstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};

CodecChain chain_of(const json& codecs) { return CodecChain::from_v3_json(codecs, kInt32, CodecRegistry::builtin()); }

ChunkSpec spec_with_fill(std::int32_t fill) { return ChunkSpec{kChunk, kInt32, FillValue::of<std::int32_t>(fill)}; }

// Chunk `k`: element (i, j) holds 1000 k + 10 i + j.
std::vector<std::int32_t> chunk_values(int k) {
  std::vector<std::int32_t> v(kChunk[0] * kChunk[1]);
  for (std::size_t i = 0; i < kChunk[0]; ++i) {
    for (std::size_t j = 0; j < kChunk[1]; ++j) v[i * kChunk[1] + j] = 1000 * k + 10 * static_cast<int>(i) + static_cast<int>(j);
  }
  return v;
}

Buffer encode(const CodecChain& chain, const ChunkSpec& spec, std::vector<std::int32_t> values) {
  const std::size_t n = values.size() * sizeof(std::int32_t);
  Buffer raw = Buffer::copy_of(ByteView(reinterpret_cast<const std::byte*>(values.data()), n));
  return chain.encode(NDBuffer(std::move(raw), spec.shape, spec.dtype), spec);
}

NDView view_of(std::vector<std::int32_t>& storage, Shape shape, std::vector<std::int64_t> byte_strides) {
  return NDView{reinterpret_cast<std::byte*>(storage.data()), std::move(shape), std::move(byte_strides), kInt32,
                MemoryKind::kHost};
}

TEST(BatchDecode, WholeChunksPartsAndAbsentChunks) {
  const CodecChain chain = chain_of(json::array({bytes_codec(), kZstd}));
  const ChunkSpec spec = spec_with_fill(-7);
  const Buffer c0 = encode(chain, spec, chunk_values(0));
  const Buffer c1 = encode(chain, spec, chunk_values(1));

  std::vector<std::int32_t> whole(48, 0), absent(48, 0);
  // Rows 1..4 step 2, columns 7 down to 2: written into every other column of a wider output.
  std::vector<std::int32_t> wide(2 * 12, 0);
  std::vector<std::int32_t> picked(3, 0);
  std::vector<ChunkDecodeRequest> requests(4);
  requests[0] = {c0.view(), {}, view_of(whole, kChunk, {32, 4})};
  requests[1] = {c1.view(), {Slice{1, 5, 2}, Slice{7, 1, -1}}, view_of(wide, {2, 6}, {48, 8})};
  requests[2] = {std::nullopt, {}, view_of(absent, kChunk, {32, 4})};
  requests[3] = {c1.view(), {std::int64_t{5}, IndexArray{{0, 7, -2}}}, view_of(picked, {3}, {4})};
  decode_chunks(chain, spec, requests);

  EXPECT_EQ(whole, chunk_values(0));
  for (const std::int32_t v : absent) EXPECT_EQ(v, -7);
  for (std::size_t r = 0; r < 2; ++r) {
    for (std::size_t c = 0; c < 12; ++c) {
      const std::int32_t expected = c % 2 ? 0 : 1000 + 10 * static_cast<int>(1 + 2 * r) + (7 - static_cast<int>(c / 2));
      EXPECT_EQ(wide[r * 12 + c], expected) << r << "," << c;
    }
  }
  EXPECT_EQ(picked, (std::vector<std::int32_t>{1050, 1057, 1056}));
}

TEST(BatchDecode, ShardedChunksDecodeTheirInnerChunks) {
  const json sharding = {{"name", "sharding_indexed"},
                         {"configuration",
                          {{"chunk_shape", {3, 4}},
                           {"codecs", json::array({bytes_codec(), kZstd})},
                           {"index_codecs", json::array({bytes_codec(), {{"name", "crc32c"}}})},
                           {"index_location", "end"}}}};
  const CodecChain chain = chain_of(json::array({sharding}));
  const ChunkSpec spec = spec_with_fill(0);
  const Buffer shard = encode(chain, spec, chunk_values(2));
  std::vector<std::int32_t> whole(48, 0), corner(4, 0);
  std::vector<ChunkDecodeRequest> requests(2);
  requests[0] = {shard.view(), {}, view_of(whole, kChunk, {32, 4})};
  requests[1] = {shard.view(), {Slice{2, 4, 1}, Slice{3, 5, 1}}, view_of(corner, {2, 2}, {8, 4})};
  decode_chunks(chain, spec, requests);
  EXPECT_EQ(whole, chunk_values(2));
  EXPECT_EQ(corner, (std::vector<std::int32_t>{2023, 2024, 2033, 2034}));
}

TEST(BatchDecode, AnErrorNamesItsRequestAndTheOthersAreDecoded) {
  const CodecChain chain = chain_of(json::array({bytes_codec(), kZstd}));
  const ChunkSpec spec = spec_with_fill(0);
  const Buffer good = encode(chain, spec, chunk_values(3));
  const Buffer bad = Buffer::copy_of(ByteView(good.data(), good.size() / 2));  // a truncated frame
  std::vector<std::int32_t> out0(48, 0), out1(48, 0), out2(48, 0);
  std::vector<ChunkDecodeRequest> requests(3);
  requests[0] = {good.view(), {}, view_of(out0, kChunk, {32, 4})};
  requests[1] = {bad.view(), {}, view_of(out1, kChunk, {32, 4})};
  requests[2] = {good.view(), {}, view_of(out2, kChunk, {32, 4})};
  try {
    decode_chunks(chain, spec, requests);
    FAIL() << "a corrupt chunk decoded";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("chunk 1 of the batch"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out0, chunk_values(3));
  EXPECT_EQ(out2, chunk_values(3));
}

TEST(BatchDecode, MismatchedOutputsAreInvalidArguments) {
  const CodecChain chain = chain_of(json::array({bytes_codec()}));
  const ChunkSpec spec = spec_with_fill(0);
  const Buffer c = encode(chain, spec, chunk_values(0));
  std::vector<std::int32_t> out(48, 0);
  // Wrong shape for the selection.
  std::vector<ChunkDecodeRequest> requests(1);
  requests[0] = {c.view(), {Slice{0, 2, 1}}, view_of(out, kChunk, {32, 4})};
  EXPECT_THROW(decode_chunks(chain, spec, requests), InvalidArgumentError);
  // Wrong data type.
  requests[0] = {c.view(), {}, view_of(out, kChunk, {32, 4})};
  requests[0].out.dtype = DataType::float_(32);
  EXPECT_THROW(decode_chunks(chain, spec, requests), InvalidArgumentError);
  // A selection outside the chunk.
  requests[0] = {c.view(), {std::int64_t{6}}, view_of(out, {8}, {4})};
  EXPECT_THROW(decode_chunks(chain, spec, requests), Error);
  EXPECT_EQ(out, std::vector<std::int32_t>(48, 0));
}

TEST(ReadChunks, ReadsTheKeysFromTheStoreAsDecodeChunksDecodesTheirBytes) {
  const CodecChain chain = chain_of(json::array({bytes_codec(), kZstd}));
  const ChunkSpec spec = spec_with_fill(-1);
  auto store = MemoryStore::create();
  store->set("a/c/0", encode(chain, spec, chunk_values(4)).view());
  store->set("a/c/1", encode(chain, spec, chunk_values(5)).view());
  std::vector<std::int32_t> whole(48, 0), part(2, 0), absent(48, 0);
  std::vector<ChunkReadRequest> requests(3);
  requests[0] = {"a/c/0", {}, view_of(whole, kChunk, {32, 4})};
  requests[1] = {"a/c/1", {std::int64_t{2}, Slice{3, 5, 1}}, view_of(part, {2}, {4})};
  requests[2] = {"a/c/9", {}, view_of(absent, kChunk, {32, 4})};
  read_chunks(*store, chain, spec, requests);
  EXPECT_EQ(whole, chunk_values(4));
  EXPECT_EQ(part, (std::vector<std::int32_t>{5023, 5024}));
  for (const std::int32_t v : absent) EXPECT_EQ(v, -1);
  // A value that does not decode is named by its place in the batch.
  store->set("a/c/1", ByteView(reinterpret_cast<const std::byte*>("junk"), 4));
  try {
    read_chunks(*store, chain, spec, requests);
    FAIL() << "junk decoded";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("chunk 1 of the batch"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrkit

// The batch decode API (zarrkit/batch_decode.h) into device memory against the same batch
// into host memory: chains with device halves, chains that fall back to the host, sharded
// chunks, parts of chunks into strided outputs (the gaps untouched), absent chunks, and a
// corrupt chunk named by its place in the batch.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/gpu_testing.h"
#include "zarrkit/batch_decode.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const DataType kUint16 = DataType::uint_(16);
const Shape kChunk = {20, 30, 8};

json bytes_codec() { return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}; }
json blosc_lz4() {
  return {{"name", "blosc"},
          {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}, {"blocksize", 0}}}};
}
json sharding(json inner_codecs) {
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", {10, 15, 8}},
            {"codecs", std::move(inner_codecs)},
            {"index_codecs", json::array({bytes_codec(), {{"name", "crc32c"}}})},
            {"index_location", "end"}}}};
}

std::vector<json> chains() {
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};
  const json lz4 = {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}};
  return {json::array({bytes_codec(), blosc_lz4()}),
          json::array({bytes_codec(), lz4, {{"name", "crc32c"}}}),
          json::array({{{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}}, bytes_codec(), blosc_lz4()}),
          json::array({bytes_codec(), zstd}),  // no device half unless nvCOMP is enabled: decoded on the host
          json::array({sharding(json::array({bytes_codec(), blosc_lz4()}))}),
          json::array({sharding(json::array({bytes_codec(), zstd}))})};
}

std::size_t chunk_elements() { return kChunk[0] * kChunk[1] * kChunk[2]; }

Buffer encoded_chunk(const CodecChain& chain, const ChunkSpec& spec, int k) {
  std::vector<std::uint16_t> v(chunk_elements());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint16_t>(k * 7919 + (i % 977) * (i / 977 + 1));
  Buffer raw = Buffer::copy_of(ByteView(reinterpret_cast<const std::byte*>(v.data()), v.size() * 2));
  return chain.encode(NDBuffer(std::move(raw), spec.shape, spec.dtype), spec);
}

// One request's part and output layout: the output is `rows` x `cols` elements of a bigger
// buffer (every other element along its last axis) or the whole chunk, C order.
struct Case {
  Selection selection;
  Shape out_shape;
  bool strided;
};

std::vector<Case> cases() {
  return {{{}, kChunk, false},
          {{Slice{2, 17, 3}, Slice{29, 0, -4}, std::int64_t{5}}, {5, 8}, true},
          {{IndexArray{{0, 19, 3, 3}}, Slice{}, Slice{1, 7, 1}}, {4, 30, 6}, false},
          {{std::int64_t{10}, Slice{}, Slice{}}, {30, 8}, true}};
}

std::vector<std::int64_t> strides_of(const Shape& shape, bool strided) {
  std::vector<std::int64_t> s = NDView::c_strides(shape, 2);
  if (strided) {
    for (auto& x : s) x *= 2;
  }
  return s;
}

std::size_t buffer_bytes(const Shape& shape, bool strided) {
  std::size_t n = 2;
  for (const auto d : shape) n *= d;
  return strided ? 2 * n : n;
}

TEST(GpuBatchDecode, DeviceOutputsMatchHostOutputs) {
  REQUIRE_GPU();
  const ChunkSpec spec{kChunk, kUint16, FillValue::of<std::uint16_t>(4242)};
  for (const json& codecs : chains()) {
    const CodecChain chain = CodecChain::from_v3_json(codecs, kUint16, CodecRegistry::builtin());
    std::vector<Buffer> encoded;
    for (int k = 0; k < 3; ++k) encoded.push_back(encoded_chunk(chain, spec, k));
    std::vector<ChunkDecodeRequest> host_requests, device_requests;
    std::vector<Buffer> host_outs, device_outs;
    for (std::size_t r = 0; r < 3 * cases().size(); ++r) {
      const Case c = cases()[r % cases().size()];
      const std::size_t bytes = buffer_bytes(c.out_shape, c.strided);
      std::vector<std::byte> sentinel(bytes, std::byte{0xab});
      host_outs.push_back(Buffer::copy_of(ByteView(sentinel.data(), bytes)));
      device_outs.push_back(to_device(ByteView(sentinel.data(), bytes)));
      // Every fourth request is an absent chunk; the others cycle through the encoded ones.
      std::optional<ByteView> input;
      if (r % 4 != 3) input = encoded[r % 3].view();
      const auto strides = strides_of(c.out_shape, c.strided);
      host_requests.push_back({input, c.selection, NDView{host_outs.back().data(), c.out_shape, strides, kUint16, MemoryKind::kHost}});
      device_requests.push_back(
          {input, c.selection, NDView{device_outs.back().data(), c.out_shape, strides, kUint16, MemoryKind::kDevice}});
    }
    decode_chunks(chain, spec, host_requests);
    decode_chunks(chain, spec, device_requests);
    for (std::size_t r = 0; r < host_outs.size(); ++r) {
      const Buffer back = to_host(device_outs[r]);
      ASSERT_EQ(back.size(), host_outs[r].size());
      EXPECT_EQ(std::memcmp(back.data(), host_outs[r].data(), back.size()), 0) << codecs.dump() << " request " << r;
    }
  }
}

TEST(GpuBatchDecode, ACorruptChunkIsNamedAndTheOthersAreDecoded) {
  REQUIRE_GPU();
  const ChunkSpec spec{kChunk, kUint16, FillValue::of<std::uint16_t>(0)};
  for (const json& codecs : {chains()[0], chains()[4]}) {
    const CodecChain chain = CodecChain::from_v3_json(codecs, kUint16, CodecRegistry::builtin());
    const Buffer good = encoded_chunk(chain, spec, 1);
    // Truncated: a blosc header that promises more bytes; a shard index read from the middle.
    const Buffer bad = Buffer::copy_of(ByteView(good.data(), good.size() / 2));
    const std::size_t bytes = chunk_elements() * 2;
    std::vector<Buffer> outs;
    std::vector<ChunkDecodeRequest> requests;
    for (int i = 0; i < 3; ++i) {
      outs.push_back(Buffer::allocate(bytes, device_allocator()));
      requests.push_back({i == 1 ? bad.view() : good.view(), {},
                          NDView{outs.back().data(), kChunk, NDView::c_strides(kChunk, 2), kUint16, MemoryKind::kDevice}});
    }
    try {
      decode_chunks(chain, spec, requests);
      ADD_FAILURE() << "a corrupt chunk decoded: " << codecs.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("chunk 1 of the batch"), std::string::npos) << e.what();
    }
    const Buffer expected = chain.decode(good.view(), spec, BufferPrototype::host()).buffer();
    for (const int i : {0, 2}) {
      const Buffer back = to_host(outs[i]);
      EXPECT_EQ(std::memcmp(back.data(), expected.data(), bytes), 0) << codecs.dump() << " request " << i;
    }
  }
}

TEST(GpuBatchDecode, ReadChunksFromAStoreMatchTheHost) {
  REQUIRE_GPU();
  const ChunkSpec spec{kChunk, kUint16, FillValue::of<std::uint16_t>(7)};
  for (const json& codecs : {chains()[0], chains()[3], chains()[4]}) {
    const CodecChain chain = CodecChain::from_v3_json(codecs, kUint16, CodecRegistry::builtin());
    auto store = MemoryStore::create();
    for (int k = 0; k < 3; ++k) store->set("c/" + std::to_string(k), encoded_chunk(chain, spec, k).view());
    std::vector<Buffer> host_outs, device_outs;
    std::vector<ChunkReadRequest> host_requests, device_requests;
    for (int k = 0; k < 4; ++k) {  // c/3 is absent
      const Case c = cases()[static_cast<std::size_t>(k) % cases().size()];
      const std::size_t n = buffer_bytes(c.out_shape, c.strided);
      std::vector<std::byte> sentinel(n, std::byte{0x11});
      host_outs.push_back(Buffer::copy_of(ByteView(sentinel.data(), n)));
      device_outs.push_back(to_device(ByteView(sentinel.data(), n)));
      const auto strides = strides_of(c.out_shape, c.strided);
      const std::string key = "c/" + std::to_string(k);
      host_requests.push_back({key, c.selection, NDView{host_outs.back().data(), c.out_shape, strides, kUint16, MemoryKind::kHost}});
      device_requests.push_back(
          {key, c.selection, NDView{device_outs.back().data(), c.out_shape, strides, kUint16, MemoryKind::kDevice}});
    }
    read_chunks(*store, chain, spec, host_requests);
    read_chunks(*store, chain, spec, device_requests);
    for (std::size_t r = 0; r < host_outs.size(); ++r) {
      const Buffer back = to_host(device_outs[r]);
      EXPECT_EQ(std::memcmp(back.data(), host_outs[r].data(), back.size()), 0) << codecs.dump() << " request " << r;
    }
  }
}

}  // namespace
}  // namespace zarrkit

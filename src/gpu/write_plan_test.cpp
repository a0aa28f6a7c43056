// The write path's byte streams, produced on the host by the same functions the kernels run
// and read back by c-blosc and by the codec chain (no GPU needed).
#include "gpu/write_plan.h"

#include <blosc.h>

#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "gpu/device_codecs.cuh"
#include "zarrkit/codec_registry.h"

namespace zarrkit::gpu {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes smooth(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(i % 7 == 0 ? rng() : (i / 13) >> (i % 3));
  return out;
}

// What the device does for one chunk: shuffle the blocks, encode every split (raw when it
// does not shrink), then the host frames it.
Buffer encode_like_the_device(const BloscWriteLayout& layout, const BloscWriteSettings& s, const Bytes& data) {
  Bytes shuffled = data;
  for (const BlockJob& b : layout.shuffles) {
    const std::uint8_t* in = data.data() + b.offset;
    std::uint8_t* out = shuffled.data() + b.offset;
    const std::uint32_t elements = b.size / b.typesize;
    if (b.shuffle == BlockShuffle::kByte) {
      for (std::uint32_t e = 0; e < elements; ++e) shuffle_element(in, out, elements, b.typesize, e);
    } else if (bitshuffle_applies(b.size, b.typesize)) {
      for (std::uint32_t g = 0; g < elements / 8; ++g) {
        for (unsigned j = 0; j < b.typesize; ++j) bitshuffle_column8(in, out, elements, b.typesize, g, j);
      }
    }
  }
  std::vector<std::uint32_t> table(1u << kLz4HashBits);
  std::vector<Bytes> encoded;
  std::vector<ByteView> payloads;
  for (const BloscSplit& split : layout.splits) {
    Bytes out(split.size);
    std::uint32_t n = s.compress ? lz4_encode_block(shuffled.data() + split.offset, split.size, out.data(),
                                                    split.size - 1, table.data())
                                 : 0;
    if (n == 0) {
      std::memcpy(out.data(), shuffled.data() + split.offset, split.size);
      n = split.size;
    }
    out.resize(n);
    encoded.push_back(std::move(out));
  }
  for (const Bytes& e : encoded) payloads.push_back({reinterpret_cast<const std::byte*>(e.data()), e.size()});
  return blosc_frame(layout, payloads);
}

TEST(GpuWritePlan, BloscFramesDecodeWithCBlosc) {
  int cases = 0;
  for (unsigned typesize : {1u, 2u, 4u, 8u, 3u, 16u, 32u}) {
    for (BlockShuffle shuffle : {BlockShuffle::kCopy, BlockShuffle::kByte, BlockShuffle::kBit}) {
      for (std::uint32_t blocksize : {0u, 1000u, 40000u}) {
        for (std::size_t size : {1u, 100u, 5000u, 300007u}) {
          for (bool compress : {true, false}) {
            BloscWriteSettings s{typesize, shuffle, blocksize, compress};
            const Bytes data = smooth(size, size + typesize);
            const BloscWriteLayout layout = plan_blosc_write(size, s);
            const Buffer frame = encode_like_the_device(layout, s, data);
            Bytes back(size);
            const int n = blosc_decompress_ctx(frame.data(), back.data(), back.size(), 1);
            ASSERT_EQ(n, static_cast<int>(size)) << typesize << " " << static_cast<int>(shuffle) << " " << blocksize
                                                 << " " << size << " " << compress;
            ASSERT_EQ(back, data);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 400);
}

TEST(GpuWritePlan, ChainsTheDeviceEncodes) {
  auto plan_for = [](const nlohmann::json& codecs, DataType dtype = DataType::float_(32)) {
    ArraySpec spec;
    spec.shape = {100, 100};
    spec.chunks = {10, 20};
    spec.dtype = dtype;
    spec.codecs = codecs;
    return plan_write(make_array_metadata(spec, CodecRegistry::builtin()));
  };
  const nlohmann::json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  auto blosc = [](const std::string& cname, const std::string& shuffle) {
    return nlohmann::json{{"name", "blosc"},
                          {"configuration", {{"cname", cname}, {"clevel", 5}, {"shuffle", shuffle}, {"typesize", 4}, {"blocksize", 0}}}};
  };
  auto p = plan_for(nlohmann::json::array({bytes, blosc("lz4", "bitshuffle"), {{"name", "crc32c"}}}));
  EXPECT_TRUE(p.on_gpu);
  EXPECT_EQ(p.compressor, WritePlan::Compressor::kBlosc);
  EXPECT_EQ(p.blosc.shuffle, BlockShuffle::kBit);
  EXPECT_EQ(p.checksums, std::vector<bool>{false});
  EXPECT_TRUE(plan_for(nlohmann::json::array({bytes, {{"name", "numcodecs.lz4"}}})).on_gpu);
  EXPECT_TRUE(plan_for(nlohmann::json::array({bytes})).on_gpu);
  EXPECT_FALSE(plan_for(nlohmann::json::array({bytes, blosc("zstd", "shuffle")})).on_gpu);
  EXPECT_FALSE(plan_for(nlohmann::json::array({bytes, {{"name", "zstd"}}})).on_gpu);
  EXPECT_FALSE(plan_for(nlohmann::json::array({bytes, {{"name", "crc32c"}}, {{"name", "numcodecs.lz4"}}})).on_gpu);
}

}  // namespace
}  // namespace zarrkit::gpu

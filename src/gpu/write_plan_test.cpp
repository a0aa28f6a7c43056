// The write path's byte streams, produced on the host by the same functions the kernels run
// and read back by c-blosc and by the codec chain (no GPU needed).
#include "gpu/write_plan.h"

#include <blosc.h>
#include <lz4.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/settings_env.h"
#include "gpu/device_codecs.cuh"
#include "gpu/write_export_cases.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit::gpu {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes smooth(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(i % 7 == 0 ? rng() : (i / 13) >> (i % 3));
  return out;
}

// A plan for `size`-byte chunks written with these blosc settings (what plan_write makes of
// a blosc codec), with crc32c codecs after it.
WritePlan blosc_plan(std::size_t size, const BloscWriteSettings& s, std::vector<bool> checksums = {}) {
  WritePlan plan;
  plan.on_gpu = true;
  plan.chunk_bytes = size;
  plan.compressor = WritePlan::Compressor::kBlosc;
  plan.blosc = s;
  plan.layout = plan_blosc_write(size, s);
  plan.checksums = std::move(checksums);
  plan_frames(plan);
  return plan;
}

ByteView view_of(const Bytes& b) { return {reinterpret_cast<const std::byte*>(b.data()), b.size()}; }

// Incompressible bytes and constant bytes besides the smooth ones.
Bytes data_of_kind(std::size_t size, int kind, std::uint64_t seed) {
  if (kind == 1) return Bytes(size, 0x42);
  if (kind == 2) {
    std::mt19937_64 rng(seed);
    Bytes out(size);
    for (auto& b : out) b = static_cast<std::uint8_t>(rng());
    return out;
  }
  return smooth(size, seed);
}

TEST(GpuWritePlan, BloscFramesDecodeWithCBlosc) {
  int cases = 0;
  for (unsigned typesize : {1u, 2u, 4u, 8u, 3u, 16u, 32u}) {
    for (BlockShuffle shuffle : {BlockShuffle::kCopy, BlockShuffle::kByte, BlockShuffle::kBit}) {
      for (std::uint32_t blocksize : {0u, 1000u, 40000u, 1u << 20}) {
        for (std::size_t size : {1u, 100u, 5000u, 300007u}) {
          for (bool compress : {true, false}) {
            const int kind = cases % 3;
            const BloscWriteSettings s{typesize, shuffle, blocksize, compress};
            const Bytes data = data_of_kind(size, kind, size + typesize);
            const WritePlan plan = blosc_plan(size, s);
            const Buffer frame = encode_chunk_like_the_device(plan, view_of(data));
            ASSERT_LE(frame.size(), plan.frame.max_stored_bytes);
            std::size_t nbytes = 0, cbytes = 0, bsize = 0;
            blosc_cbuffer_sizes(frame.data(), &nbytes, &cbytes, &bsize);
            ASSERT_EQ(cbytes, frame.size());
            Bytes back(size);
            const int n = blosc_decompress_ctx(frame.data(), back.data(), back.size(), 1);
            ASSERT_EQ(n, static_cast<int>(size)) << typesize << " " << static_cast<int>(shuffle) << " " << blocksize
                                                 << " " << size << " " << compress << " kind " << kind;
            ASSERT_EQ(back, data);
            if (compress && blocksize == 0) {  // about as small as c-blosc makes it (c-blosc 1.x
                                               // overrides small forced block sizes: compare its own)
              const int shuffle_code = shuffle == BlockShuffle::kByte ? BLOSC_SHUFFLE
                                       : shuffle == BlockShuffle::kBit ? BLOSC_BITSHUFFLE : BLOSC_NOSHUFFLE;
              Bytes theirs(size + BLOSC_MAX_OVERHEAD);
              const int m = blosc_compress_ctx(5, shuffle_code, typesize, size, data.data(), theirs.data(), theirs.size(),
                                               "lz4", blocksize, 1);
              ASSERT_GT(m, 0);
              EXPECT_LE(static_cast<double>(frame.size()), 1.1 * m + 256.0)
                  << typesize << " " << static_cast<int>(shuffle) << " " << blocksize << " " << size << " kind " << kind;
            }
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 7 * 3 * 4 * 4 * 2);
}

// The compression ratio against c-blosc's on the same data and settings (family-N-like
// float32): within a few percent, as the write path promises.
TEST(GpuWritePlan, BloscRatioCloseToCBlosc) {
  const std::size_t size = 4u << 20;
  std::vector<float> values(size / 4);
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = std::sin(static_cast<double>(i % 1024) * 6e-3) * std::cos(static_cast<double>(i / 1024) * 3e-3) * 10.0 + noise(rng);
    values[i] = static_cast<float>(std::round(v * 64.0) / 64.0);
  }
  Bytes data(size);
  std::memcpy(data.data(), values.data(), size);
  const Buffer ours = encode_chunk_like_the_device(blosc_plan(size, {4, BlockShuffle::kByte, 0, true}), view_of(data));
  Bytes theirs(size + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(5, BLOSC_SHUFFLE, 4, size, data.data(), theirs.data(), theirs.size(), "lz4", 0, 1);
  ASSERT_GT(n, 0);
  EXPECT_LT(static_cast<double>(ours.size()), 1.05 * n) << "ours " << ours.size() << " c-blosc " << n;
}

// numcodecs.lz4: a 4-byte size, then one LZ4 block (here of several segments).
TEST(GpuWritePlan, Lz4FramesDecodeWithLiblz4) {
  for (std::size_t size : {1u, 13u, 5000u, 300007u, 1u << 20}) {
    for (int kind = 0; kind < 3; ++kind) {
      WritePlan plan;
      plan.on_gpu = true;
      plan.chunk_bytes = size;
      plan.compressor = WritePlan::Compressor::kLz4;
      plan_frames(plan);
      const Bytes data = data_of_kind(size, kind, size);
      const Buffer frame = encode_chunk_like_the_device(plan, view_of(data));
      ASSERT_LE(frame.size(), plan.frame.max_stored_bytes);
      std::uint32_t declared = 0;
      std::memcpy(&declared, frame.data(), 4);
      ASSERT_EQ(declared, size);
      Bytes back(size);
      const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(frame.data()) + 4, reinterpret_cast<char*>(back.data()),
                                        static_cast<int>(frame.size() - 4), static_cast<int>(size));
      ASSERT_EQ(n, static_cast<int>(size)) << size << " kind " << kind;
      ASSERT_EQ(back, data);
    }
  }
}

ArrayMetadata metadata_with(const nlohmann::json& codecs, DataType dtype = DataType::float_(32)) {
  ArraySpec spec;
  spec.shape = {100, 100};
  spec.chunks = {10, 20};
  spec.dtype = dtype;
  spec.codecs = codecs;
  return make_array_metadata(spec, CodecRegistry::builtin());
}

// Checksums filled in from the frame's CRC (combined, as the device's result is) are the
// CPU crc32c codecs' own: byte for byte without a compressor, and the CPU chain (which
// verifies every checksum) decodes the compressed ones.
TEST(GpuWritePlan, ChecksumsEqualTheCpuCodecs) {
  install_gpu_support();  // the device halves say what the device encodes (no GPU needed)
  const nlohmann::json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  const nlohmann::json end = {{"name", "crc32c"}};
  const nlohmann::json start = {{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "start"}}}};
  const nlohmann::json lz4 = {{"name", "numcodecs.lz4"}};
  const nlohmann::json blosc = {
      {"name", "blosc"}, {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}, {"blocksize", 0}}}};
  const std::vector<nlohmann::json> chains = {
      nlohmann::json::array({bytes, end}),
      nlohmann::json::array({bytes, start}),
      nlohmann::json::array({bytes, end, start, end}),
      nlohmann::json::array({bytes, start, start, end, start}),
      nlohmann::json::array({bytes, lz4, end}),
      nlohmann::json::array({bytes, lz4, start, end}),
      nlohmann::json::array({bytes, blosc, end, start}),
  };
  for (const nlohmann::json& codecs : chains) {
    SCOPED_TRACE(codecs.dump());
    const ArrayMetadata m = metadata_with(codecs);
    const WritePlan plan = plan_write(m);
    ASSERT_TRUE(plan.on_gpu);
    const Bytes data = smooth(plan.chunk_bytes, 17);
    const Buffer ours = encode_chunk_like_the_device(plan, view_of(data));
    const NDBuffer chunk(Buffer::copy_of(view_of(data)), m.chunk_shape, m.dtype);
    if (plan.compressor == WritePlan::Compressor::kNone) {
      const Buffer cpu = m.codecs->encode(chunk, m.chunk_spec());
      ASSERT_EQ(cpu.size(), ours.size());
      EXPECT_EQ(std::memcmp(cpu.data(), ours.data(), cpu.size()), 0);
    }
    const NDBuffer back = m.codecs->decode(ours.view(), m.chunk_spec(), BufferPrototype::host());
    ASSERT_EQ(back.nbytes(), data.size());
    EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size()), 0);
    // A flipped bit in the frame is caught by the CPU chain's checks.
    Buffer damaged = Buffer::copy_of(ours.view());
    damaged.data()[plan.frame.reserve_start + 2] ^= std::byte{1};
    EXPECT_THROW(m.codecs->decode(damaged.view(), m.chunk_spec(), BufferPrototype::host()), Error);
  }
}

// The arrays GpuWrite.ExportForZarrPython writes from device memory, encoded instead by the
// host run of the device's steps: into ZARRKIT_GPU_HOST_EXPORT_DIR for
// tools/gpu_bench/check_gpu_written.py (zarr-python and numcodecs read them on any
// machine), else into a temporary folder; read back here by the CPU path.
TEST(GpuWritePlan, HostEncoderExportForZarrPython) {
  install_gpu_support();  // the device halves say what the device encodes (no GPU needed)
  const std::optional<std::string> env = environment_variable("ZARRKIT_GPU_HOST_EXPORT_DIR");
  const std::filesystem::path dir =
      env ? std::filesystem::path(*env)
                     : std::filesystem::temp_directory_path() / fmt::format("zarrkit_host_export_{}", ::getpid());
  std::filesystem::remove_all(dir);
  auto store = LocalStore::open(dir.string());
  for (const testing::ExportCase& c : testing::export_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<float> values = testing::export_values(c.spec.shape);
    Array array = Array::create(store, c.name, make_array_metadata(c.spec, CodecRegistry::builtin()));
    const WritePlan plan = plan_write(array.metadata());
    ASSERT_TRUE(plan.on_gpu);
    // The chunks in their stored layout: the same array without compressor or checksums,
    // written by the CPU.
    ArraySpec layout_spec = c.spec;
    if (layout_spec.zarr_format == 2) {
      layout_spec.v2_compressor = nlohmann::json(nullptr);
    } else {
      nlohmann::json codecs = nlohmann::json::array();
      for (const auto& codec : *c.spec.codecs) {
        codecs.push_back(codec);
        if (codec["name"] == "bytes") break;
      }
      layout_spec.codecs = codecs;
    }
    auto memory = MemoryStore::create();
    Array layout = Array::create(memory, "a", make_array_metadata(layout_spec, CodecRegistry::builtin()));
    layout.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), c.spec.shape, NDView::c_strides(c.spec.shape, 4),
                            layout.dtype(), MemoryKind::kHost});
    int chunks = 0;
    for (const std::string& key : memory->list("a")) {
      const std::string name = key.substr(key.rfind('/') + 1);
      if (name == "zarr.json" || name.starts_with(".")) continue;
      const Buffer value = encode_chunk_like_the_device(plan, memory->get(key)->view());
      store->set(c.name + key.substr(1), value.view());
      ++chunks;
    }
    EXPECT_GT(chunks, 0);
    const NDBuffer back = array.read();
    ASSERT_EQ(back.nbytes(), values.size() * 4);
    EXPECT_EQ(std::memcmp(back.data(), values.data(), back.nbytes()), 0);
  }
  if (!env) std::filesystem::remove_all(dir);
}

TEST(GpuWritePlan, ChainsTheDeviceEncodes) {
  install_gpu_support();  // the device halves say what the device encodes (no GPU needed)
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

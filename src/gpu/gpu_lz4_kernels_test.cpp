// Every stream-decode kernel variant (kernels.h, DecodeVariant) on the device against liblz4
// and c-blosc: valid LZ4 blocks of every kind and length (liblz4's and random sequences), the
// corrupted-block corpus, and blosc chunks (LZ4 and BloscLZ splits, raw copies, shuffles).
// Each stream decodes into its own slot with guard bytes after it; the statuses must equal
// the host decoder's and the bytes liblz4's. Then the read path's long-block rule. Skips
// without a device. ZARRKIT_GPU_TEST_QUICK=1 keeps a smaller corpus (for the sanitizers).
#include <blosc.h>
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/settings_env.h"
#include "gpu/codecs/blosc_device.h"
#include "gpu/device_codecs.cuh"
#include "gpu/device_read.h"
#include "gpu/gpu_testing.h"
#include "gpu/kernels.h"
#include "gpu/lz4_test_blocks.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit::gpu {
namespace {

using lz4_testing::Bytes;

constexpr DecodeVariant kVariants[] = {DecodeVariant::kDirect, DecodeVariant::kDirectUncapped,
                                       DecodeVariant::kStaged};

bool quick() {
  return environment_variable("ZARRKIT_GPU_TEST_QUICK") == "1";
}

// A failed CUDA call ends the test (gtest reports the exception).
void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}

template <typename T>
struct DeviceArray {
  T* ptr = nullptr;
  explicit DeviceArray(std::size_t n) { cuda_ok(cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

// A batch of independent LZ4 streams, each its own "chunk" (status slot), laid out back to
// back at varied alignments, each decoded slot followed by guard bytes.
struct StreamBatch {
  static constexpr std::uint64_t kGuard = 64;
  static constexpr std::uint8_t kPoison = 0xA5;
  std::vector<std::uint8_t> input;
  std::vector<StreamJob> jobs;
  std::vector<std::string> names;
  std::uint64_t output_bytes = 0;

  void add(const Bytes& block, std::uint32_t decoded_size, std::string name) {
    input.resize(input.size() + jobs.size() % 16);  // streams start at every alignment
    StreamJob job{input.size(), output_bytes, static_cast<std::uint32_t>(block.size()), decoded_size,
                  static_cast<std::uint32_t>(jobs.size()), StreamCodec::kLz4, 0};
    input.insert(input.end(), block.begin(), block.end());
    output_bytes += decoded_size + kGuard + jobs.size() % 16;
    jobs.push_back(job);
    names.push_back(std::move(name));
  }
};

struct BatchResult {
  std::vector<std::int32_t> status;
  std::vector<std::uint8_t> output;
};

BatchResult run_batch(const StreamBatch& batch, DecodeVariant variant) {
  BatchResult r;
  DeviceArray<std::uint8_t> input(batch.input.size()), output(batch.output_bytes);
  DeviceArray<StreamJob> jobs(batch.jobs.size());
  DeviceArray<std::int32_t> status(batch.jobs.size());
  cuda_ok(cudaMemcpy(input.ptr, batch.input.data(), batch.input.size(), cudaMemcpyHostToDevice), "upload");
  cuda_ok(cudaMemcpy(jobs.ptr, batch.jobs.data(), batch.jobs.size() * sizeof(StreamJob), cudaMemcpyHostToDevice),
          "upload");
  cuda_ok(cudaMemset(output.ptr, StreamBatch::kPoison, batch.output_bytes), "memset");
  cuda_ok(cudaMemset(status.ptr, 0, batch.jobs.size() * sizeof(std::int32_t)), "memset");
  cuda_ok(launch_decode_streams(jobs.ptr, static_cast<std::uint32_t>(batch.jobs.size()), input.ptr, output.ptr, nullptr,
                                status.ptr, nullptr, variant),
          "launch");
  cuda_ok(cudaDeviceSynchronize(), decode_variant_name(variant));
  r.status.resize(batch.jobs.size());
  r.output.resize(batch.output_bytes);
  cuda_ok(cudaMemcpy(r.status.data(), status.ptr, r.status.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost),
          "read back");
  cuda_ok(cudaMemcpy(r.output.data(), output.ptr, r.output.size(), cudaMemcpyDeviceToHost), "read back");
  return r;
}

// Long literal runs and long matches: data repeated from 1 byte to 70 KiB back (beyond LZ4's
// 64 KiB reach the repeats become literals).
Bytes runs_and_repeats(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes data;
  while (data.size() < size) {
    const Bytes noise = lz4_testing::sample(1 + rng() % 9000, 3, rng());
    data.insert(data.end(), noise.begin(), noise.end());
    const std::size_t repeat = 1 + rng() % 3000;
    const std::size_t distance = 1 + rng() % std::min<std::size_t>(data.size(), 70000);
    for (std::size_t k = 0; k < repeat; ++k) data.push_back(data[data.size() - distance]);
  }
  data.resize(size);
  return data;
}

TEST(GpuLz4Kernels, EveryVariantAgreesWithLiblz4) {
  REQUIRE_GPU();
  StreamBatch batch;
  std::vector<Bytes> expected;          // liblz4's bytes (when it decodes)
  std::vector<std::int32_t> host_status;  // the host decoder's verdict
  auto add = [&](const Bytes& block, std::size_t size, std::string name) {
    Bytes decoded;
    lz4_testing::liblz4_decodes(block, size, decoded);
    Bytes host(size + 1);
    host_status.push_back(lz4_decode_block(block.data(), block.size(), host.data(), size, 0, 1));
    expected.push_back(std::move(decoded));
    batch.add(block, static_cast<std::uint32_t>(size), std::move(name));
  };
  const std::vector<std::size_t> sizes = quick() ? std::vector<std::size_t>{1, 13, 1000, 65536, 65537, 200000}
                                                 : std::vector<std::size_t>{1, 5, 12, 13, 64, 1000, 65536, 65537,
                                                                            200000, 1u << 20};
  for (std::size_t size : sizes) {
    for (int kind = 0; kind < 4; ++kind) {
      for (bool high : {false, true}) {
        add(lz4_testing::lz4_compress(lz4_testing::sample(size, kind, size + kind), high), size,
            fmt::format("size {} kind {} high {}", size, kind, high));
      }
    }
  }
  for (std::size_t size : {std::size_t{65536}, quick() ? std::size_t{300000} : std::size_t{1} << 20}) {
    add(lz4_testing::lz4_compress(lz4_testing::family_n(size, size), false), size, fmt::format("family N {}", size));
  }
  const std::size_t long_size = quick() ? 300000 : 3u << 20;
  add(lz4_testing::lz4_compress(runs_and_repeats(long_size, 1), true), long_size, "runs and repeats");
  std::mt19937_64 random(17);
  for (int round = 0; round < (quick() ? 40 : 200); ++round) {
    const std::size_t size = round % 10 == 0 ? 1 + random() % 400000 : 1 + random() % 20000;
    const auto [block, data] = lz4_testing::random_block(random, size);
    add(block, size, fmt::format("random sequences {}", round));
  }
  std::mt19937_64 rng(42);
  const int corrupt = quick() ? 600 : 3000;
  for (int round = 0; round < corrupt; ++round) {
    const auto [block, size] = lz4_testing::mutated_block(rng);
    add(block, size, fmt::format("corrupt round {}", round));
  }

  for (const DecodeVariant variant : kVariants) {
    const BatchResult r = run_batch(batch, variant);
    int accepted = 0;
    for (std::size_t i = 0; i < batch.jobs.size(); ++i) {
      const StreamJob& job = batch.jobs[i];
      const std::string what = fmt::format("{}: {}", decode_variant_name(variant), batch.names[i]);
      ASSERT_EQ(r.status[i], host_status[i]) << what;
      if (r.status[i] == kDecodeOk) {
        ++accepted;
        ASSERT_EQ(std::memcmp(r.output.data() + job.dst, expected[i].data(), job.dst_size), 0) << what;
      }
      for (std::uint64_t k = 0; k < StreamBatch::kGuard; ++k) {
        ASSERT_EQ(r.output[job.dst + job.dst_size + k], StreamBatch::kPoison) << what << ": guard byte " << k;
      }
    }
    EXPECT_GT(accepted, corrupt / 10) << decode_variant_name(variant);
  }
}

// Blosc chunks: splits of LZ4 and BloscLZ, raw copies, both shuffles, decoded by every
// variant equal c-blosc's.
TEST(GpuLz4Kernels, EveryVariantDecodesBloscChunks) {
  REQUIRE_GPU();
  struct Chunk {
    Bytes packed, data;
    BloscJobs jobs;
  };
  std::vector<Chunk> chunks;
  for (const char* cname : {"lz4", "blosclz"}) {
    for (int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
      for (int clevel : {0, 5}) {
        Chunk c;
        c.data = lz4_testing::family_n(quick() ? 100000 : 1u << 20, static_cast<std::uint64_t>(shuffle + clevel));
        c.packed.resize(c.data.size() + BLOSC_MAX_OVERHEAD);
        const int n = blosc_compress_ctx(clevel, shuffle, 4, c.data.size(), c.data.data(), c.packed.data(),
                                         c.packed.size(), cname, 0, 1);
        ASSERT_GT(n, 0);
        c.packed.resize(static_cast<std::size_t>(n));
        auto jobs = plan_blosc_chunk({reinterpret_cast<const std::byte*>(c.packed.data()), c.packed.size()},
                                     SizeBound{c.data.size(), true});
        ASSERT_TRUE(jobs.has_value()) << cname;
        c.jobs = std::move(*jobs);
        chunks.push_back(std::move(c));
      }
    }
  }
  std::vector<std::uint8_t> input;
  std::vector<StreamJob> streams;
  std::vector<BlockJob> blocks;
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < chunks.size(); ++i) {
    const std::uint64_t in_at = input.size();
    input.insert(input.end(), chunks[i].packed.begin(), chunks[i].packed.end());
    input.resize(input.size() + 3);  // the next chunk starts misaligned
    for (StreamJob s : chunks[i].jobs.streams) {
      s.src += in_at;
      s.dst += total;
      s.chunk = i;
      streams.push_back(s);
    }
    for (BlockJob b : chunks[i].jobs.blocks) {
      b.offset += total;
      b.chunk = i;
      blocks.push_back(b);
    }
    total += chunks[i].data.size();
  }
  DeviceArray<std::uint8_t> d_input(input.size()), d_output(total), d_scratch(total);
  DeviceArray<StreamJob> d_streams(streams.size());
  DeviceArray<BlockJob> d_blocks(blocks.size());
  DeviceArray<std::int32_t> d_status(chunks.size());
  cuda_ok(cudaMemcpy(d_input.ptr, input.data(), input.size(), cudaMemcpyHostToDevice), "upload");
  cuda_ok(cudaMemcpy(d_streams.ptr, streams.data(), streams.size() * sizeof(StreamJob), cudaMemcpyHostToDevice),
          "upload");
  cuda_ok(cudaMemcpy(d_blocks.ptr, blocks.data(), blocks.size() * sizeof(BlockJob), cudaMemcpyHostToDevice), "upload");
  for (const DecodeVariant variant : kVariants) {
    cuda_ok(cudaMemset(d_output.ptr, 0xA5, total), "memset");
    cuda_ok(cudaMemset(d_status.ptr, 0, chunks.size() * sizeof(std::int32_t)), "memset");
    cuda_ok(launch_decode_streams(d_streams.ptr, static_cast<std::uint32_t>(streams.size()), d_input.ptr, d_output.ptr,
                                  d_scratch.ptr, d_status.ptr, nullptr, variant),
            "launch");
    cuda_ok(launch_unshuffle_blocks(d_blocks.ptr, static_cast<std::uint32_t>(blocks.size()), d_scratch.ptr, d_output.ptr,
                                    d_status.ptr, nullptr),
            "launch");
    cuda_ok(cudaDeviceSynchronize(), decode_variant_name(variant));
    std::vector<std::int32_t> status(chunks.size());
    std::vector<std::uint8_t> output(total);
    cuda_ok(cudaMemcpy(status.data(), d_status.ptr, status.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "back");
    cuda_ok(cudaMemcpy(output.data(), d_output.ptr, total, cudaMemcpyDeviceToHost), "back");
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      ASSERT_EQ(status[i], kDecodeOk) << decode_variant_name(variant) << " chunk " << i;
      ASSERT_EQ(std::memcmp(output.data() + at, chunks[i].data.data(), chunks[i].data.size()), 0)
          << decode_variant_name(variant) << " chunk " << i;
      at += chunks[i].data.size();
    }
  }
}

// The read path decodes numcodecs.lz4 chunks of up to kLongLz4BlockBytes on the GPU and
// longer ones on the host's threads (device_read.h), and reads what was written either way.
TEST(GpuLz4Kernels, ReadPathDecodesLongBlocksOnTheHost) {
  REQUIRE_GPU();
  const std::uint64_t chunks = quick() ? 6 : 24;
  for (const std::uint64_t rows : {256u, 512u, 1024u}) {  // chunks of 256 KiB, 512 KiB, 1 MiB
    const std::uint64_t chunk_bytes = rows * 256 * 4;
    const bool on_host = chunk_bytes > kLongLz4BlockBytes;
    auto store = MemoryStore::create();
    ArraySpec spec;
    spec.shape = {chunks, rows, 256};
    spec.chunks = {1, rows, 256};
    spec.dtype = DataType::float_(32);
    spec.codecs = nlohmann::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                         {{"name", "numcodecs.lz4"}}});
    Array array = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
    Bytes values = lz4_testing::family_n(chunks * chunk_bytes, rows);
    array.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), spec.shape, NDView::c_strides(spec.shape, 4),
                           spec.dtype, MemoryKind::kHost});
    const std::uint64_t gpu_before = read_stats().chunks_decoded_on_gpu.load();
    const std::uint64_t cpu_before = read_stats().chunks_decoded_on_cpu.load();
    NDBuffer gpu;
    {
      ScopedGpu device;
      gpu = array.read();
    }
    EXPECT_EQ(read_stats().chunks_decoded_on_gpu.load() - gpu_before, on_host ? 0 : chunks) << chunk_bytes;
    EXPECT_EQ(read_stats().chunks_decoded_on_cpu.load() - cpu_before, on_host ? chunks : 0) << chunk_bytes;
    const Buffer back = to_host(gpu.buffer());
    ASSERT_EQ(back.size(), values.size());
    EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size()), 0) << chunk_bytes;
  }
}

}  // namespace
}  // namespace zarrkit::gpu

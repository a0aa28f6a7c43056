// Mutation fuzzing of the device decoders: arrays of every chain the device decodes (LZ4 and
// numcodecs.lz4, blosc-lz4 and blosc-blosclz with their shuffles, crc32c, zstd through
// zarrkit's kernels, gzip and zlib through its deflate kernel, blosc with zstd or zlib inside
// through the same kernels, sharded inner chunks) have
// chunks damaged at random (bit flips anywhere, headers included, bytes dropped or
// inserted, cuts, garbage tails) and are read into device
// memory beside the same read on the CPU. The GPU may never decode a damaged chunk to values
// the CPU does not give, nor fail where the CPU succeeds; run under compute-sanitizer memcheck
// (tools/gpu_bench/device_session.sh, stage gpu_fuzz) it shows that no damaged chunk makes a
// kernel read or write outside its buffers.
// ZARRKIT_GPU_FUZZ_ROUNDS (default 6) rounds per chain, ZARRKIT_GPU_FUZZ_SEED the seed,
// ZARRKIT_GPU_FUZZ_VERBOSE names each read on stderr before it starts.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "core/settings_env.h"
#include "gpu/device_read.h"
#include "gpu/gpu_testing.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

struct FuzzChain {
  std::string name;
  json codecs;
};

json blosc(const std::string& cname, const std::string& shuffle) {
  return {{"name", "blosc"},
          {"configuration", {{"cname", cname}, {"clevel", 5}, {"shuffle", shuffle}, {"typesize", 4}, {"blocksize", 0}}}};
}

std::vector<FuzzChain> fuzz_chains() {
  const json little = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", false}}}};
  const json zstd_checked = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", true}}}};
  const json inner = json::array({little, {{"name", "numcodecs.lz4"}}});
  return {
      {"numcodecs.lz4", json::array({little, {{"name", "numcodecs.lz4"}}})},
      {"blosc-lz4 shuffle", json::array({little, blosc("lz4", "shuffle")})},
      {"blosc-lz4 bitshuffle", json::array({little, blosc("lz4", "bitshuffle")})},
      {"blosc-blosclz noshuffle", json::array({little, blosc("blosclz", "noshuffle")})},
      {"crc32c", json::array({little, {{"name", "crc32c"}}})},
      {"zstd", json::array({little, zstd})},
      {"zstd checksum", json::array({little, zstd_checked})},
      {"gzip", json::array({little, {{"name", "gzip"}, {"configuration", {{"level", 5}}}}})},
      {"zlib", json::array({little, {{"name", "numcodecs.zlib"}, {"configuration", {{"level", 1}}}}})},
      {"blosc-zstd shuffle", json::array({little, blosc("zstd", "shuffle")})},
      {"blosc-zlib bitshuffle", json::array({little, blosc("zlib", "bitshuffle")})},
      {"sharding lz4",
       json::array({{{"name", "sharding_indexed"},
                     {"configuration",
                      {{"chunk_shape", {16, 16}},
                       {"codecs", inner},
                       {"index_codecs", json::array({little, {{"name", "crc32c"}}})},
                       {"index_location", "end"}}}}})},
  };
}

// Values that compress (runs and a slope) with some noise, so every codec has real work.
std::vector<std::byte> fuzz_values(std::size_t elements, std::mt19937_64& rng) {
  std::vector<std::uint32_t> v(elements);
  for (std::size_t i = 0; i < elements; ++i) v[i] = static_cast<std::uint32_t>(i / 9 + (rng() % 5 == 0 ? rng() % 7 : 0));
  std::vector<std::byte> out(elements * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// One random damage: flips, a run overwritten, bytes dropped or inserted, a cut, a tail.
std::vector<std::byte> damage(std::vector<std::byte> b, std::mt19937_64& rng) {
  if (b.empty()) return b;
  switch (rng() % 6) {
    case 0:  // a few bit flips anywhere, headers included
      for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k) {
        b[rng() % b.size()] ^= static_cast<std::byte>(1u << (rng() % 8));
      }
      break;
    case 1: {  // a run of random bytes
      const std::size_t at = rng() % b.size();
      const std::size_t end = std::min(b.size(), at + 1 + rng() % 16);
      for (std::size_t i = at; i < end; ++i) b[i] = static_cast<std::byte>(rng());
      break;
    }
    case 2: {  // bytes dropped from the middle
      const std::size_t at = rng() % b.size();
      const std::size_t end = std::min(b.size(), at + 1 + rng() % 8);
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(end));
      break;
    }
    case 3:  // bytes inserted
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(rng() % b.size()), 1 + rng() % 8, static_cast<std::byte>(rng()));
      break;
    case 4:  // cut short
      b.resize(rng() % b.size());
      break;
    default:  // a garbage tail
      for (int k = 0, n = 1 + static_cast<int>(rng() % 64); k < n; ++k) b.push_back(static_cast<std::byte>(rng()));
      break;
  }
  return b;
}

int fuzz_rounds() {
  const auto text = environment_variable("ZARRKIT_GPU_FUZZ_ROUNDS");
  return text ? std::max(1, std::stoi(*text)) : 6;
}

std::uint64_t fuzz_seed() {
  const auto text = environment_variable("ZARRKIT_GPU_FUZZ_SEED");
  return text ? std::stoull(*text) : 2026;
}

TEST(GpuFuzz, DamagedChunksNeverDecodeWrongOnTheDevice) {
  REQUIRE_GPU();
  // zarrkit's zstd and deflate kernels leave reads this small to the host by default
  // (auto): forced on, the fuzzing covers them too.
  ScopedConfig own_kernels{[](Config& c) {
    c.gpu.zstd_kernels = KernelUse::kOn;
    c.gpu.deflate_kernels = KernelUse::kOn;
  }};
  std::mt19937_64 rng(fuzz_seed());
  const int rounds = fuzz_rounds();
  // ZARRKIT_GPU_FUZZ_VERBOSE: each read named before it starts, so a crash shows where.
  const bool verbose = environment_variable("ZARRKIT_GPU_FUZZ_VERBOSE").has_value();
  const std::uint64_t on_gpu_before = gpu::read_stats().chunks_decoded_on_gpu.load();
  int damaged_reads = 0;
  int failed_alike = 0;
  for (const FuzzChain& chain : fuzz_chains()) {
    for (int round = 0; round < rounds; ++round) {
      auto store = MemoryStore::create();
      ArraySpec spec;
      spec.shape = {96, 128};
      spec.chunks = chain.name.starts_with("sharding") ? Shape{32, 64} : Shape{32, 32};
      spec.dtype = DataType::uint_(32);
      spec.codecs = chain.codecs;
      spec.fill_value = json(7);
      Array array = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
      std::vector<std::byte> values = fuzz_values(96 * 128, rng);
      array.write({}, NDView{values.data(), spec.shape, NDView::c_strides(spec.shape, 4), spec.dtype, MemoryKind::kHost});
      // Damage one to three chunks, each in its own way.
      std::vector<std::string> keys = store->list("a/c");
      std::shuffle(keys.begin(), keys.end(), rng);
      const std::size_t damaged = 1 + rng() % 3;
      for (std::size_t k = 0; k < damaged && k < keys.size(); ++k) {
        auto bytes = store->get(keys[k]);
        ASSERT_TRUE(bytes.has_value()) << keys[k];
        const std::vector<std::byte> broken = damage({bytes->view().begin(), bytes->view().end()}, rng);
        store->set(keys[k], {broken.data(), broken.size()});
      }
      const std::string what = fmt::format("{} round {}", chain.name, round);
      if (verbose) std::cerr << what << std::endl;
      std::string cpu_error;
      NDBuffer cpu;
      try {
        cpu = array.read();
      } catch (const Error& e) {  // DataLossError mostly; a damaged shard index may say more
        cpu_error = e.what();
      }
      ++damaged_reads;
      ScopedGpu device;
      try {
        NDBuffer gpu = array.read();
        ASSERT_TRUE(cpu_error.empty()) << what << ": the device read succeeded, the CPU said: " << cpu_error;
        ASSERT_EQ(gpu.kind(), MemoryKind::kDevice) << what;
        const Buffer back = to_host(gpu.buffer());
        ASSERT_EQ(std::memcmp(back.data(), cpu.data(), cpu.nbytes()), 0)
            << what << ": the device decoded a damaged chunk to other values than the CPU";
      } catch (const Error& e) {
        EXPECT_FALSE(cpu_error.empty()) << what << ": the device read failed, the CPU read did not: " << e.what();
        EXPECT_NE(std::string(e.what()).find("c/"), std::string::npos) << what << ": " << e.what();
        ++failed_alike;
      }
    }
  }
  std::cout << "device fuzzing: " << damaged_reads << " reads of damaged arrays, " << failed_alike
            << " failed as on the CPU, the others read equal\n";
  EXPECT_GT(failed_alike, 0);
  EXPECT_GT(gpu::read_stats().chunks_decoded_on_gpu.load(), on_gpu_before);
}

}  // namespace
}  // namespace zarrkit

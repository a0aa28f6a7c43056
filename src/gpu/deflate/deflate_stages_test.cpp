// A launch of the deflate kernels' code over host memory (deflate_emulated.h): several
// emulated warps at once taking chunks of one batch, as the kernel's warps do; every chunk's
// status and bytes as the one-chunk host decoder gives them, output slots followed by guard
// bytes that must stay untouched (the sanitizer build checks every access).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>

#include "gpu/deflate/deflate_emulated.h"
#include "gpu/deflate/deflate_host_decoder.h"
#include "gpu/deflate/deflate_mutations.h"

namespace zarrkit::gpu::deflate {
namespace {

using testing::Bytes;

constexpr std::uint8_t kPoison = 0xA5;
constexpr std::size_t kGuard = 64;

TEST(DeflateStages, BatchOfGoodAndDamagedChunksOnFourWarps) {
  std::vector<testing::Stream> streams = testing::every(testing::standard_streams(true), testing::kSanitizerStep);
  std::mt19937 rng(7);
  const std::size_t good = streams.size();
  for (std::size_t k = 0; k < good; k += 3) {
    testing::Stream d = streams[k];
    d.bytes = testing::mutate(d.bytes, rng);
    d.name += ", damaged";
    streams.push_back(std::move(d));
  }
  const std::size_t n = streams.size();
  std::vector<std::unique_ptr<std::uint8_t[]>> slots;
  std::vector<DeflateChunkJob> jobs;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t size = streams[i].original.size();
    slots.push_back(std::make_unique<std::uint8_t[]>(size + 2 * kGuard));
    std::memset(slots.back().get(), kPoison, size + 2 * kGuard);
    DeflateChunkJob j{};
    j.input = reinterpret_cast<std::uint64_t>(streams[i].bytes.data());
    j.output = reinterpret_cast<std::uint64_t>(slots.back().get() + kGuard);
    j.input_size = static_cast<std::uint32_t>(streams[i].bytes.size());
    j.output_size = static_cast<std::uint32_t>(size);
    j.status = static_cast<std::uint32_t>(i);
    j.format = streams[i].format;
    jobs.push_back(j);
  }
  std::vector<std::int32_t> status(n, -1);
  DeflateLaunch launch;
  launch.chunks = jobs.data();
  launch.status = status.data();
  launch.chunk_count = static_cast<std::uint32_t>(n);
  testing::run_launch_emulated(launch, 4);
  int failed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const testing::Stream& s = streams[i];
    const std::size_t size = s.original.size();
    const std::uint8_t* slot = slots[i].get();
    for (std::size_t k = 0; k < kGuard; ++k) {
      ASSERT_EQ(slot[k], kPoison) << s.name << ": wrote before its slot";
      ASSERT_EQ(slot[kGuard + size + k], kPoison) << s.name << ": wrote after its slot";
    }
    Bytes host(size);
    HostDecodeResult h = decode_on_host(s.format, s.bytes.data(), s.bytes.size(), host.data(), size);
    if (h.error == kOk && h.size != size) h.error = kErrOutputSize;
    ASSERT_EQ(status[i], h.error) << s.name << ": " << error_name(status[i]) << ", host " << error_name(h.error);
    if (i < good) {
      ASSERT_EQ(status[i], kOk) << s.name;
    }
    if (status[i] != kOk) {
      ++failed;
      continue;
    }
    ASSERT_TRUE(size == 0 || std::memcmp(slot + kGuard, host.data(), size) == 0) << s.name;
    if (i < good) {
      ASSERT_TRUE(size == 0 || std::memcmp(slot + kGuard, s.original.data(), size) == 0) << s.name;
    }
  }
  EXPECT_GT(failed, 0);
}

}  // namespace
}  // namespace zarrkit::gpu::deflate

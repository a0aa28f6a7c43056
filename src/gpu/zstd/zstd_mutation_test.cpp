// The zstd decoder of the GPU path on damaged frames (zstd_mutations.h), against libzstd:
// where both decode a frame, the same bytes; where we decode it, libzstd does too (so a
// frame with a checksum never decodes to wrong values); where only libzstd decodes it, a
// stream that does not end exactly; never an access outside the buffers (this test runs
// under AddressSanitizer in the sanitizer build). ZARRKIT_ZSTD_MUTATIONS sets how many.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "gpu/zstd/zstd_host_decoder.h"
#include "gpu/zstd/zstd_mutations.h"

namespace zarrkit::gpu::zstd {
namespace {

using testing::Bytes;

int mutations() {
  const char* env = std::getenv("ZARRKIT_ZSTD_MUTATIONS");
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kDefault = 3000;  // the sanitizers' build is ten times slower
#else
  constexpr int kDefault = 12000;
#endif
  return env ? std::atoi(env) : kDefault;
}

TEST(ZstdHostDecoderFuzz, DamagedFramesDecodeAsLibzstdOrFail) {
  const std::vector<testing::Frame> frames = testing::standard_frames(true);
  std::vector<testing::HeaderSpots> spots;
  for (const auto& f : frames) spots.push_back(testing::header_spots(f.bytes));
  std::mt19937 rng(20261201);
  ZSTD_DCtx* d = ZSTD_createDCtx();
  int both = 0, neither = 0, libzstd_only = 0;
  const int n = mutations();
  for (int i = 0; i < n; ++i) {
    const std::size_t k = static_cast<std::size_t>(i) % frames.size();
    const auto& f = frames[k];
    const Bytes m = testing::mutate(f.bytes, frames[rng() % frames.size()].bytes, spots[k], rng);
    const std::size_t capacity = f.original.size() + (rng() % 4 == 0 ? rng() % 300 : 0);
    Bytes want(capacity), got(capacity, 0xA5);
    const std::size_t rc = ZSTD_decompressDCtx(d, want.data(), capacity, m.data(), m.size());
    const bool ref_ok = !ZSTD_isError(rc) && !m.empty();
    const HostDecodeResult ours = decode_on_host(m.data(), m.size(), got.data(), capacity);
    const std::string what = f.name + ", mutation " + std::to_string(i);
    if (ours.error == kOk) {
      ASSERT_TRUE(ref_ok) << what << ": we decode " << ours.size << " bytes, libzstd refuses: "
                          << ZSTD_getErrorName(rc);
      ASSERT_EQ(ours.size, rc) << what;
      ASSERT_TRUE(rc == 0 || std::memcmp(got.data(), want.data(), rc) == 0) << what << ": the bytes differ";
      ++both;
    } else if (ref_ok) {
      // libzstd is laxer at the end of a stream: its two-symbol Huffman decoder and its
      // sequence decoder accept streams that do not end exactly where their last symbol
      // does. Those are refused here (the device half then leaves them to the host).
      ASSERT_TRUE(ours.error == kErrHuffmanStream || ours.error == kErrSequenceStream)
          << what << ": libzstd decodes it, we say " << error_name(ours.error);
      ++libzstd_only;
    } else {
      ++neither;
    }
  }
  ZSTD_freeDCtx(d);
  std::printf("%d damaged frames: %d decoded by both, %d refused by both, %d decoded by libzstd only\n", n, both,
              neither, libzstd_only);
  EXPECT_GT(neither, n / 4);
}

}  // namespace
}  // namespace zarrkit::gpu::zstd

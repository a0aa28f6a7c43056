// The deflate decoder of the GPU path on damaged streams (deflate_mutations.h), against
// zlib: where we decode a stream, zlib decodes it to the same bytes; where zlib decodes it,
// so do we; never an access outside the buffers (this test runs under AddressSanitizer in
// the sanitizer build; the output is followed by guard bytes). ZARRKIT_DEFLATE_MUTATIONS
// sets how many.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "gpu/deflate/deflate_host_decoder.h"
#include "gpu/deflate/deflate_mutations.h"

namespace zarrkit::gpu::deflate {
namespace {

using testing::Bytes;

int mutations() {
  const char* env = std::getenv("ZARRKIT_DEFLATE_MUTATIONS");
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kDefault = 300;  // the sanitizers' build is ten times slower
#else
  constexpr int kDefault = 3000;
#endif
  return env ? std::atoi(env) : kDefault;
}

TEST(DeflateHostDecoderFuzz, DamagedStreamsDecodeAsZlibOrFail) {
  std::vector<testing::Stream> streams;
  for (auto& s : testing::standard_streams(true)) {
    if (s.original.size() <= 50000) streams.push_back(std::move(s));
  }
  std::mt19937 rng(20261127);
  int both = 0, neither = 0;
  const int n = mutations();
  constexpr std::size_t kGuard = 64;
  for (int i = 0; i < n; ++i) {
    const auto& s = streams[static_cast<std::size_t>(i) % streams.size()];
    const Bytes m = testing::mutate(s.bytes, rng);
    const std::size_t capacity = testing::mutated_capacity(s.original.size(), rng);
    Bytes got(capacity + kGuard, 0xA5);
    const HostDecodeResult ours = decode_on_host(s.format, m.data(), m.size(), got.data(), capacity);
    const std::string what = s.name + ", mutation " + std::to_string(i);
    for (std::size_t k = capacity; k < got.size(); ++k) ASSERT_EQ(got[k], 0xA5) << what << ": wrote past the output";
    const auto want = testing::zlib_reference(s.format, m, capacity);
    if (ours.error == kOk) {
      ASSERT_TRUE(want.has_value()) << what << ": we decode " << ours.size << " bytes, zlib refuses";
      ASSERT_EQ(ours.size, want->size()) << what;
      ASSERT_TRUE(ours.size == 0 || std::memcmp(got.data(), want->data(), ours.size) == 0) << what << ": the bytes differ";
      ++both;
    } else {
      ASSERT_FALSE(want.has_value()) << what << ": zlib decodes it, we say " << error_name(ours.error);
      ++neither;
    }
  }
  std::printf("%d damaged streams: %d decoded by both, %d refused by both\n", n, both, neither);
  EXPECT_GT(neither, n / 2);
}

}  // namespace
}  // namespace zarrkit::gpu::deflate

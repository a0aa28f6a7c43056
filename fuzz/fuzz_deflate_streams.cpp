// Fuzz target: the deflate decoder of the GPU path (src/gpu/deflate/, its warp code run on
// the host with an emulated warp) against zlib. Input: a format byte (raw, zlib, gzip: its
// value mod 3), a 4-byte little-endian output size (at most 4 MiB), then the stream.
// Findings: a sanitizer report; a stream we decode that zlib refuses or decodes to other
// bytes; a stream zlib decodes that we refuse.
// Seeds: the quick differential set of deflate_test_streams.h.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_target.h"
#include "gpu/deflate/deflate_host_decoder.h"
#include "gpu/deflate/deflate_test_streams.h"

namespace zarrkit::fuzz {

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (const auto& s : gpu::deflate::testing::standard_streams(true)) {
    if (s.original.size() > (4u << 20)) continue;
    std::string seed(1, static_cast<char>(s.format));
    const auto n = static_cast<std::uint32_t>(s.original.size());
    for (int k = 0; k < 4; ++k) seed.push_back(static_cast<char>(n >> (8 * k)));
    seed.append(reinterpret_cast<const char*>(s.bytes.data()), s.bytes.size());
    out.push_back(std::move(seed));
  }
  return out;
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit::gpu::deflate;
  if (size < 5) return 0;
  const auto format = static_cast<Format>(data[0] % 3);
  const std::size_t capacity = read_le32(data + 1) % ((4u << 20) + 1);
  const testing::Bytes in(data + 5, data + size);
  const auto want = testing::zlib_reference(format, in, capacity);
  std::vector<std::uint8_t> got(capacity);
  const HostDecodeResult ours = decode_on_host(format, in.data(), in.size(), got.data(), capacity);
  if (ours.error == kOk) {
    if (!want) {
      std::fprintf(stderr, "decoded %llu bytes that zlib refuses\n", static_cast<unsigned long long>(ours.size));
      std::abort();
    }
    if (ours.size != want->size() || (ours.size > 0 && std::memcmp(got.data(), want->data(), ours.size) != 0)) {
      std::fprintf(stderr, "decoded other bytes than zlib\n");
      std::abort();
    }
  } else if (want) {
    std::fprintf(stderr, "refused what zlib decodes: %s\n", error_name(ours.error));
    std::abort();
  }
  return 0;
}

// Fuzz target: the zstd decoder of the GPU path (src/gpu/zstd/, run on the host) against
// libzstd. Input: a 4-byte little-endian output size (at most 8 MiB), then zstd data.
// Findings: a sanitizer report; a frame we decode that libzstd refuses or decodes to other
// bytes; a frame libzstd decodes that we refuse for any reason but a stream that does not
// end exactly (where libzstd is laxer: zstd_mutation_test.cpp).
// Seeds: the quick differential set of zstd_test_frames.h.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_target.h"
#include "gpu/zstd/zstd_host_decoder.h"
#include "gpu/zstd/zstd_test_frames.h"

namespace zarrkit::fuzz {

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (const auto& f : gpu::zstd::testing::standard_frames(true)) {
    if (f.original.size() > (8u << 20)) continue;
    std::string s(4, '\0');
    const auto n = static_cast<std::uint32_t>(f.original.size());
    for (int k = 0; k < 4; ++k) s[static_cast<std::size_t>(k)] = static_cast<char>(n >> (8 * k));
    s.append(reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size());
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit::gpu::zstd;
  if (size < 4) return 0;
  const std::size_t capacity = read_le32(data) % ((8u << 20) + 1);
  const std::uint8_t* in = data + 4;
  const std::size_t in_size = size - 4;
  std::vector<std::uint8_t> want(capacity), got(capacity);
  static ZSTD_DCtx* dctx = ZSTD_createDCtx();
  const std::size_t rc = ZSTD_decompressDCtx(dctx, want.data(), capacity, in, in_size);
  const bool ref_ok = !ZSTD_isError(rc) && in_size > 0;
  const HostDecodeResult ours = decode_on_host(in, in_size, got.data(), capacity);
  if (ours.error == kOk) {
    if (!ref_ok) {
      std::fprintf(stderr, "decoded %llu bytes that libzstd refuses (%s)\n", static_cast<unsigned long long>(ours.size),
                   ZSTD_getErrorName(rc));
      std::abort();
    }
    if (ours.size != rc || (rc > 0 && std::memcmp(got.data(), want.data(), rc) != 0)) {
      std::fprintf(stderr, "decoded other bytes than libzstd\n");
      std::abort();
    }
  } else if (ref_ok && ours.error != kErrHuffmanStream && ours.error != kErrSequenceStream) {
    std::fprintf(stderr, "refused what libzstd decodes: %s (stage %d)\n", error_name(ours.error), ours.stage);
    std::abort();
  }
  return 0;
}

// XXH64 (seed 0), the content checksum of zstd frames (RFC 8878 3.1.1: its low 32 bits).
// Host and device (zstd_common.cuh).
//
// The four accumulators of XXH64's main loop each take one 8-byte lane of every 32-byte
// stripe and do not depend on each other, so four lanes can run them side by side:
// xxh64_lane(data, stripes, k) is accumulator k after the stripes, xxh64_finish() merges
// the four and hashes the tail. Without stripes (fewer than 32 bytes) the accumulators are
// not used.
#pragma once

#include <cstdint>

#include "gpu/zstd/zstd_common.cuh"

namespace zarrkit::gpu::zstd {

constexpr std::uint64_t kPrime64_1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kPrime64_2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kPrime64_3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t kPrime64_4 = 0x85EBCA77C2B2AE63ull;
constexpr std::uint64_t kPrime64_5 = 0x27D4EB2F165667C5ull;

ZSTD_HD_FORCE std::uint64_t rotl64(std::uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

ZSTD_HD_FORCE std::uint64_t xxh64_round(std::uint64_t acc, std::uint64_t input) {
  acc += input * kPrime64_2;
  acc = rotl64(acc, 31);
  return acc * kPrime64_1;
}

ZSTD_HD_FORCE std::uint64_t xxh64_merge(std::uint64_t acc, std::uint64_t v) {
  acc ^= xxh64_round(0, v);
  return acc * kPrime64_1 + kPrime64_4;
}

// Accumulator k (0..3) after `stripes` 32-byte stripes of data.
ZSTD_HD std::uint64_t xxh64_lane(const std::uint8_t* data, std::uint64_t stripes, unsigned k) {
  const std::uint64_t start[4] = {kPrime64_1 + kPrime64_2, kPrime64_2, 0, 0 - kPrime64_1};
  std::uint64_t acc = start[k];
  const std::uint8_t* p = data + 8 * k;
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<std::uintptr_t>(p) & 7u) == 0) {  // whole words (the GPU is little-endian)
    const auto* words = reinterpret_cast<const unsigned long long*>(p);
    for (std::uint64_t s = 0; s < stripes; ++s) acc = xxh64_round(acc, words[4 * s]);
    return acc;
  }
#endif
  for (std::uint64_t s = 0; s < stripes; ++s, p += 32) acc = xxh64_round(acc, read_le64(p));
  return acc;
}

// The hash of data[0, size) from the four accumulators of its size / 32 stripes.
ZSTD_HD std::uint64_t xxh64_finish(const std::uint64_t* acc, const std::uint8_t* data, std::uint64_t size) {
  std::uint64_t h;
  const std::uint64_t stripes = size / 32;
  if (stripes > 0) {
    h = rotl64(acc[0], 1) + rotl64(acc[1], 7) + rotl64(acc[2], 12) + rotl64(acc[3], 18);
    for (int k = 0; k < 4; ++k) h = xxh64_merge(h, acc[k]);
  } else {
    h = kPrime64_5;
  }
  h += size;
  const std::uint8_t* p = data + stripes * 32;
  std::uint64_t left = size - stripes * 32;
  for (; left >= 8; left -= 8, p += 8) {
    h ^= xxh64_round(0, read_le64(p));
    h = rotl64(h, 27) * kPrime64_1 + kPrime64_4;
  }
  if (left >= 4) {
    h ^= std::uint64_t{read_le32(p)} * kPrime64_1;
    h = rotl64(h, 23) * kPrime64_2 + kPrime64_3;
    p += 4;
    left -= 4;
  }
  for (; left > 0; --left, ++p) {
    h ^= *p * kPrime64_5;
    h = rotl64(h, 11) * kPrime64_1;
  }
  h ^= h >> 33;
  h *= kPrime64_2;
  h ^= h >> 29;
  h *= kPrime64_3;
  h ^= h >> 32;
  return h;
}

ZSTD_HD std::uint64_t xxh64(const std::uint8_t* data, std::uint64_t size) {
  std::uint64_t acc[4];
  for (unsigned k = 0; k < 4; ++k) acc[k] = xxh64_lane(data, size / 32, k);
  return xxh64_finish(acc, data, size);
}

}  // namespace zarrkit::gpu::zstd

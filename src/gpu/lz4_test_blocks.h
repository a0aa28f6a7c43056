// Test data for the LZ4 decoders, shared by the host tests (device_codecs_test.cpp) and the
// GPU tests (gpu_lz4_kernels_test.cpp): sample data of a few kinds, family N, liblz4's
// blocks of it, random valid blocks and the corrupted-block corpus.
#pragma once

#include <lz4.h>
#include <lz4hc.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace zarrkit::gpu::lz4_testing {

using Bytes = std::vector<std::uint8_t>;

// Data of a few kinds: smooth values with noise (typical arrays), runs, text-like repeats
// and uniform noise (incompressible).
inline Bytes sample(std::size_t size, int kind, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(size);
  switch (kind % 4) {
    case 0: {  // float32 field + noise
      for (std::size_t i = 0; i + 4 <= size; i += 4) {
        const float v = static_cast<float>(std::sin(static_cast<double>(i) * 1e-3) * 100.0 +
                                           static_cast<double>(rng() % 16) * 0.01);
        std::memcpy(out.data() + i, &v, 4);
      }
      for (std::size_t i = size / 4 * 4; i < size; ++i) out[i] = static_cast<std::uint8_t>(i);
      break;
    }
    case 1:
      for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>((i / 97) % 3);
      break;
    case 2: {
      const char* words[] = {"zarr ", "chunk ", "decode ", "gpu ", "warp "};
      std::size_t i = 0;
      while (i < size) {
        const char* w = words[rng() % 5];
        for (const char* p = w; *p && i < size; ++p) out[i++] = static_cast<std::uint8_t>(*p);
      }
      break;
    }
    default:
      for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  }
  return out;
}

// Family N of the benchmarks (smooth field + noise, rounded to 1/64, float32): matches of
// ~7 bytes every ~8 bytes, offsets up to 64 KiB.
inline Bytes family_n(std::size_t size, std::uint64_t seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::normal_distribution<float> noise(0.0f, 0.05f);
  Bytes out(size);
  for (std::size_t i = 0; i + 4 <= size; i += 4) {
    const std::size_t e = i / 4;
    const double x = static_cast<double>(e % 4096) / 4096.0, y = static_cast<double>(e / 4096) / 4096.0;
    const float v =
        static_cast<float>(std::round((std::sin(6.0 * x) * std::cos(3.0 * y) * 10.0 + noise(rng)) * 64.0) / 64.0);
    std::memcpy(out.data() + i, &v, 4);
  }
  return out;
}

inline Bytes lz4_compress(const Bytes& in, bool high) {
  Bytes out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
  const int n = high ? LZ4_compress_HC(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                                       static_cast<int>(in.size()), static_cast<int>(out.size()), 9)
                     : LZ4_compress_default(reinterpret_cast<const char*>(in.data()),
                                            reinterpret_cast<char*>(out.data()), static_cast<int>(in.size()),
                                            static_cast<int>(out.size()));
  EXPECT_GT(n, 0);
  out.resize(static_cast<std::size_t>(n > 0 ? n : 0));
  return out;
}

// liblz4's verdict on a block that must decode to `size` bytes: the bytes, or nothing.
inline bool liblz4_decodes(const Bytes& block, std::size_t size, Bytes& decoded) {
  decoded.assign(size + 64, 0);
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(block.data()), reinterpret_cast<char*>(decoded.data()),
                                    static_cast<int>(block.size()), static_cast<int>(size));
  decoded.resize(size);
  return n == static_cast<int>(size);
}

// True when the block's sequences reach a match with offset 0 (liblz4 then copies bytes it
// never wrote; the format forbids it and the GPU decoders refuse it).
inline bool has_zero_offset(const Bytes& block) {
  std::size_t ip = 0;
  while (ip < block.size()) {
    const unsigned token = block[ip++];
    std::size_t literals = token >> 4;
    if (literals == 15) {
      unsigned b = 255;
      while (b == 255 && ip < block.size()) literals += (b = block[ip++]);
    }
    ip += literals;
    if (ip + 2 > block.size()) return false;
    if ((block[ip] | block[ip + 1] << 8) == 0) return true;
    ip += 2;
    if ((token & 15u) == 15) {
      unsigned b = 255;
      while (b == 255 && ip < block.size()) b = block[ip++];
    }
  }
  return false;
}

// One block of the corrupted corpus: liblz4's block of `size` sample bytes, then one
// mutation (a flipped bit, a cut, a replaced byte or an appended byte).
struct MutatedBlock {
  Bytes block;
  std::size_t size = 0;  // the size it must decode to
};
inline MutatedBlock mutated_block(std::mt19937_64& rng, std::size_t max_size = 5000) {
  MutatedBlock m;
  m.size = 1 + rng() % max_size;
  const Bytes data = sample(m.size, static_cast<int>(rng() % 4), rng());
  m.block = lz4_compress(data, rng() % 2 == 0);
  switch (rng() % 4) {
    case 0: m.block[rng() % m.block.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
    case 1: m.block.resize(rng() % m.block.size()); break;
    case 2: m.block[rng() % m.block.size()] = static_cast<std::uint8_t>(rng()); break;
    default: m.block.push_back(static_cast<std::uint8_t>(rng())); break;
  }
  return m;
}

// A valid block of random sequences, with the bytes it decodes to: literal runs of 0 to
// hundreds of bytes, matches of 4 bytes to thousands, offsets from 1 (runs) to 65535,
// overlapping or not; the format's end rules kept (the last match starts 12 or more bytes
// before the end and ends 5 or more before it; literals close the block).
struct RandomBlock {
  Bytes block, data;
};
inline void put_length(Bytes& out, std::size_t rest) {
  for (; rest >= 255; rest -= 255) out.push_back(255);
  out.push_back(static_cast<std::uint8_t>(rest));
}
inline RandomBlock random_block(std::mt19937_64& rng, std::size_t size) {
  RandomBlock r;
  auto pick = [&](std::size_t lo, std::size_t hi) { return lo + rng() % (hi - lo + 1); };
  while (true) {
    const std::size_t op = r.data.size();
    if (op + 12 + 4 + 5 > size) break;
    const unsigned kind = static_cast<unsigned>(rng() % 10);
    std::size_t literals = kind < 4 && op > 0 ? 0 : kind < 8 ? pick(1, 15) : pick(16, 400);
    literals = std::min(literals, size - op - 12 - 4 - 5 + 4);  // the match still starts 12 before the end
    const std::size_t start = op + literals;                       // the match's first byte
    const std::size_t room = size - 5 - start;                      // it ends 5 or more before the end
    if (start + 12 > size || room < 4) break;
    const unsigned long_kind = static_cast<unsigned>(rng() % 10);
    std::size_t length = long_kind < 7 ? pick(4, 20) : long_kind < 9 ? pick(21, 300) : pick(301, 5000);
    length = std::min(length, room);
    for (std::size_t k = 0; k < literals; ++k) r.data.push_back(static_cast<std::uint8_t>(rng()));
    const unsigned far_kind = static_cast<unsigned>(rng() % 10);
    std::size_t offset = far_kind < 3 ? pick(1, 40) : far_kind < 7 ? pick(41, 4000) : pick(4001, 65535);
    offset = std::min<std::size_t>(offset, std::min<std::size_t>(start, 65535));
    const unsigned token = static_cast<unsigned>(std::min<std::size_t>(literals, 15) << 4 |
                                                 std::min<std::size_t>(length - 4, 15));
    r.block.push_back(static_cast<std::uint8_t>(token));
    if (literals >= 15) put_length(r.block, literals - 15);
    r.block.insert(r.block.end(), r.data.end() - static_cast<std::ptrdiff_t>(literals), r.data.end());
    r.block.push_back(static_cast<std::uint8_t>(offset));
    r.block.push_back(static_cast<std::uint8_t>(offset >> 8));
    if (length - 4 >= 15) put_length(r.block, length - 4 - 15);
    for (std::size_t k = 0; k < length; ++k) r.data.push_back(r.data[r.data.size() - offset]);
  }
  const std::size_t literals = size - r.data.size();  // the last sequence
  r.block.push_back(static_cast<std::uint8_t>(std::min<std::size_t>(literals, 15) << 4));
  if (literals >= 15) put_length(r.block, literals - 15);
  for (std::size_t k = 0; k < literals; ++k) {
    r.data.push_back(static_cast<std::uint8_t>(rng()));
    r.block.push_back(r.data.back());
  }
  return r;
}

}  // namespace zarrkit::gpu::lz4_testing

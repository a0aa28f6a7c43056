// Damaged deflate streams for the decoder's fuzz tests (host and device): bit flips (often
// in the first bytes, where the headers and a dynamic block's code lengths are), random
// bytes, cuts, insertions and deletions, garbage appended, wrong trailers, and output sizes
// larger or smaller than the stream's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gpu/deflate/deflate_test_streams.h"

namespace zarrkit::gpu::deflate::testing {

inline Bytes mutate(const Bytes& stream, std::mt19937& rng) {
  Bytes m = stream;
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    const std::size_t n = m.size();
    const auto at = [&](std::size_t limit) { return limit == 0 ? 0 : static_cast<std::size_t>(rng() % limit); };
    switch (rng() % 9) {
      case 0:
      case 1:  // a bit flip in the first 64 bytes: headers, code lengths
        if (n > 0) m[at(std::min<std::size_t>(n, 64))] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 2:  // a bit flip anywhere
        if (n > 0) m[at(n)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 3:  // a random byte
        if (n > 0) m[at(n)] = static_cast<std::uint8_t>(rng());
        break;
      case 4:  // cut
        m.resize(at(n + 1));
        break;
      case 5: {  // bytes inserted
        const std::size_t p = at(n + 1);
        const std::size_t k = 1 + rng() % 8;
        for (std::size_t j = 0; j < k; ++j) m.insert(m.begin() + static_cast<std::ptrdiff_t>(p), static_cast<std::uint8_t>(rng()));
        break;
      }
      case 6: {  // bytes deleted
        if (n == 0) break;
        const std::size_t p = at(n);
        const std::size_t k = std::min<std::size_t>(n - p, 1 + rng() % 8);
        m.erase(m.begin() + static_cast<std::ptrdiff_t>(p), m.begin() + static_cast<std::ptrdiff_t>(p + k));
        break;
      }
      case 7:  // garbage appended
        for (std::size_t k = 1 + rng() % 16; k > 0; --k) m.push_back(static_cast<std::uint8_t>(rng()));
        break;
      default:  // the trailer (the last 8 bytes)
        if (n > 0) m[n - 1 - at(std::min<std::size_t>(n, 8))] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        break;
    }
  }
  return m;
}

// The output size a damaged stream is decoded into: mostly the original's, sometimes larger
// (an oversized declared size) or smaller.
inline std::size_t mutated_capacity(std::size_t original, std::mt19937& rng) {
  switch (rng() % 8) {
    case 0: return original + 1 + rng() % 5000;
    case 1: return original > 0 ? original - 1 - rng() % original : 0;
    default: return original;
  }
}

}  // namespace zarrkit::gpu::deflate::testing

// Damaged zstd frames for the decoder's fuzz tests (host and device): random bit flips,
// bytes, truncations, insertions and deletions, and damage aimed at the headers the walk
// reads (frame header, block headers, literals and sequences section headers, table
// descriptions, jump tables), blocks swapped or taken from another frame.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gpu/zstd/zstd_host_decoder.h"
#include "gpu/zstd/zstd_test_frames.h"

namespace zarrkit::gpu::zstd::testing {

// Byte ranges of the headers of a valid frame (from the walk).
struct HeaderSpots {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;  // [begin, end)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> blocks;  // header + content of each block
};

inline HeaderSpots header_spots(const Bytes& frame) {
  HeaderSpots h;
  const ChunkWalk w = walk(frame.data(), frame.size(), ~std::uint32_t{0});
  if (w.error != kOk) return h;
  for (const BlockJob& b : w.blocks) {
    h.ranges.push_back({b.src - 3, b.src});  // the block header
    h.blocks.push_back({b.src - 3, b.src + b.src_size});
    if (b.type != kCompressedBlock) continue;
    h.ranges.push_back({b.src, std::min(b.src + 5, b.src + b.src_size)});  // literals header
    if (b.literals_type >= kHuffman1 && !b.treeless) h.ranges.push_back({b.huffman_src, b.huffman_src + 4});
    if (b.literals_type == kHuffman4) h.ranges.push_back({b.literals_src, b.literals_src + 6});
    const std::uint32_t seq = b.sequences_src;
    h.ranges.push_back({seq > 4 ? seq - 4 : 0, seq + 2});  // around the sequence header's end
    for (const TableRef& t : b.tables) {
      if (t.mode == kFseTable && t.src > b.src) h.ranges.push_back({t.src, t.src + 3});
    }
  }
  h.ranges.push_back({0, std::min<std::uint32_t>(14, static_cast<std::uint32_t>(frame.size()))});  // frame header
  for (auto& r : h.ranges) r.second = std::min<std::uint32_t>(r.second, static_cast<std::uint32_t>(frame.size()));
  h.ranges.erase(std::remove_if(h.ranges.begin(), h.ranges.end(), [](const auto& r) { return r.first >= r.second; }),
                 h.ranges.end());
  return h;
}

// One damaged copy of `frame` (`other`: another valid frame, for splices).
inline Bytes mutate(const Bytes& frame, const Bytes& other, const HeaderSpots& spots, std::mt19937& rng) {
  Bytes b = frame;
  auto below = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  const unsigned kind = rng() % 10;
  if (b.empty()) return b;
  switch (kind) {
    case 0:
    case 1: {  // a few bit flips anywhere
      const unsigned flips = 1 + rng() % 4;
      for (unsigned k = 0; k < flips; ++k) b[below(b.size())] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      break;
    }
    case 2:  // a byte set anywhere
      b[below(b.size())] = static_cast<std::uint8_t>(rng());
      break;
    case 3:  // cut short
      b.resize(below(b.size()));
      break;
    case 4: {  // a byte inserted or removed
      const std::size_t at = below(b.size());
      if (rng() % 2) {
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng()));
      } else {
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
      }
      break;
    }
    case 5:
    case 6:
    case 7: {  // headers that lie: a header byte set or a bit of it flipped
      if (spots.ranges.empty()) break;
      const auto& r = spots.ranges[below(spots.ranges.size())];
      const std::size_t at = r.first + below(r.second - r.first);
      if (rng() % 2) {
        b[at] = static_cast<std::uint8_t>(rng());
      } else {
        b[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      }
      break;
    }
    case 8: {  // two blocks swapped
      if (spots.blocks.size() < 2) break;
      const std::size_t i = below(spots.blocks.size()), j = below(spots.blocks.size());
      if (i == j) break;
      const auto first = std::min(i, j), second = std::max(i, j);
      const auto [a0, a1] = spots.blocks[first];
      const auto [b0, b1] = spots.blocks[second];
      Bytes out(frame.begin(), frame.begin() + a0);
      out.insert(out.end(), frame.begin() + b0, frame.begin() + b1);
      out.insert(out.end(), frame.begin() + a1, frame.begin() + b0);
      out.insert(out.end(), frame.begin() + a0, frame.begin() + a1);
      out.insert(out.end(), frame.begin() + b1, frame.end());
      b = std::move(out);
      break;
    }
    default: {  // a run of bytes from another frame spliced in
      if (other.size() < 8) break;
      const std::size_t len = 1 + below(std::min<std::size_t>(other.size(), 64));
      const std::size_t from = below(other.size() - len + 1), at = below(b.size());
      for (std::size_t k = 0; k < len && at + k < b.size(); ++k) b[at + k] = other[from + k];
      break;
    }
  }
  return b;
}

}  // namespace zarrkit::gpu::zstd::testing

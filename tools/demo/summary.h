// The demo's closing table: for each access pattern (warm, cold, into GPU memory), which
// layout was fastest, by how much, and why, in one line each, from the measured numbers.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "demo/formats.h"
#include "demo/measure.h"

namespace zarrkit::demo {

struct Contender {
  std::string name;  // "memmap+copy", "z-plane chunks"
  LayoutRole role = LayoutRole::kRaw;
  Timing timing;
  std::uint64_t stored_bytes = 0;   // the whole store on disk
  std::uint64_t decoded_bytes = 0;  // bytes of the chunks the pattern decodes (0: raw)
  // Reads into GPU memory: chunks the GPU decoded, of all chunks read.
  std::uint64_t gpu_decoded_chunks = 0;
  std::uint64_t chunks = 0;
};

enum class Setting { kWarm, kCold, kGpu };

struct Contest {
  std::string label;  // "z-planes"
  Setting setting = Setting::kWarm;
  std::uint64_t asked_bytes = 0;    // bytes the pattern asks for
  std::uint64_t logical_bytes = 0;  // the whole array
  // How numpy would copy from the memmap: the length of its contiguous pieces, in bytes.
  std::uint64_t memmap_piece_bytes = 0;
  std::vector<Contender> contenders;
};

// A contender for `format` in a contest on `pattern` (decoded bytes from its chunk shape).
Contender contender_for(const Format& format, const AccessPattern& pattern, const Timing& timing);
// The length of the contiguous pieces a copy of `box` out of a C-order array of `shape` has.
std::uint64_t contiguous_piece_bytes(const Box& box, const Shape3& shape);

class Summary {
 public:
  explicit Summary(std::size_t threads) : threads_(threads) {}
  void add(Contest contest) { contests_.push_back(std::move(contest)); }
  void print(std::FILE* out) const;

 private:
  std::string why(const Contest& contest, const Contender& winner, const Contender& runner_up) const;

  std::size_t threads_;
  std::vector<Contest> contests_;
};

}  // namespace zarrkit::demo

// The demo's sample data: a 3-D float32 field, smooth plus a little noise, so that it
// compresses a little (as real measurements do) but not absurdly (as zeros would).
// Deterministic: the same shape and seed always give the same bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zarrkit/buffer.h"

namespace zarrkit::demo {

using Shape3 = std::array<std::uint64_t, 3>;

// A box of the field: [start, start + count) per axis (z, y, x).
struct Box {
  Shape3 start{};
  Shape3 count{};
  std::uint64_t num_elements() const { return count[0] * count[1] * count[2]; }
};

class SampleField {
 public:
  // Generates the field in parallel on the shared thread pool.
  SampleField(Shape3 shape, std::uint64_t seed);

  const Shape3& shape() const { return shape_; }
  const std::vector<float>& values() const { return values_; }
  std::uint64_t num_elements() const { return values_.size(); }
  std::uint64_t nbytes() const { return values_.size() * sizeof(float); }

  // Checks that `data` holds exactly the values of `box` in C order, compared row by row
  // against the generated field (independently of how any reader copies). Returns a
  // description of the first difference, or nullopt when everything matches.
  std::optional<std::string> mismatch(const Box& box, ByteView data) const;

 private:
  Shape3 shape_;
  std::vector<float> values_;
};

}  // namespace zarrkit::demo

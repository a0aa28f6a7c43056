// The demo's sample data: a 3-D float32 field, smooth plus a little noise. Two kinds: noisy
// keeps every bit of the noise, so its random low mantissa bits barely compress; quantised is
// the same field rounded to a fixed step (what an instrument resolves, or what bitround keeps),
// so it compresses as real measurements stored at their precision do.
// Deterministic: the same shape, seed and kind always give the same bytes.
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

enum class FieldKind { kNoisy, kQuantised };

// The step of the quantised field: 1/256 keeps the noise (about five steps wide).
inline constexpr float kQuantisationStep = 1.0f / 256;

class SampleField {
 public:
  // Generates the field in parallel on the shared thread pool.
  SampleField(Shape3 shape, std::uint64_t seed, FieldKind kind = FieldKind::kNoisy);

  const Shape3& shape() const { return shape_; }
  FieldKind kind() const { return kind_; }
  std::string name() const { return kind_ == FieldKind::kNoisy ? "noisy" : "quantised"; }
  // One line: how the values were made.
  std::string description() const;
  const std::vector<float>& values() const { return values_; }
  std::uint64_t num_elements() const { return values_.size(); }
  std::uint64_t nbytes() const { return values_.size() * sizeof(float); }

  // Checks that `data` holds exactly the values of `box` in C order, compared row by row
  // against the generated field (independently of how any reader copies). Returns a
  // description of the first difference, or nullopt when everything matches.
  std::optional<std::string> mismatch(const Box& box, ByteView data) const;

 private:
  Shape3 shape_;
  FieldKind kind_;
  std::vector<float> values_;
};

}  // namespace zarrkit::demo

// The access patterns the demo times: the whole array, full slabs along each axis, and
// random crops. Each is a list of boxes read one after another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "demo/sample_field.h"

namespace zarrkit::demo {

enum class PatternKind { kAll, kPlanes, kCrops };

struct AccessPattern {
  std::string label;       // "4 z-planes [z,:,:]"
  std::string short_label; // "z-planes", for the guidance line
  std::vector<Box> boxes;  // read in this order
  PatternKind kind = PatternKind::kAll;
  int axis = -1;           // kPlanes: the axis the planes are across (0: z, 1: y, 2: x)
  std::uint64_t logical_bytes() const;
};

struct PatternOptions {
  std::uint64_t planes_per_axis = 4;
  std::uint64_t crops = 1000;
  std::uint64_t crop_edge = 32;
  std::uint64_t seed = 0;
};

// Whole array; planes_per_axis planes along z, y and x (spread evenly, so they fall in
// different chunks); `crops` random crops of crop_edge^3 (clamped to the shape), placed
// with a fixed seed so every format reads the same boxes.
std::vector<AccessPattern> make_patterns(const Shape3& shape, const PatternOptions& options);

}  // namespace zarrkit::demo

#include "demo/access_patterns.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

namespace zarrkit::demo {

std::uint64_t AccessPattern::logical_bytes() const {
  std::uint64_t total = 0;
  for (const Box& box : boxes) total += box.num_elements() * sizeof(float);
  return total;
}

namespace {

AccessPattern planes(const Shape3& shape, int axis, std::uint64_t count) {
  static const char* const kNames[] = {"z", "y", "x"};
  static const char* const kSlices[] = {"[z,:,:]", "[:,y,:]", "[:,:,x]"};
  count = std::min(count, shape[axis]);
  AccessPattern pattern;
  pattern.label = fmt::format("{} {}-plane{} {}", count, kNames[axis], count == 1 ? "" : "s",
                              kSlices[axis]);
  pattern.short_label = fmt::format("{}-planes", kNames[axis]);
  pattern.kind = PatternKind::kPlanes;
  pattern.axis = axis;
  for (std::uint64_t i = 0; i < count; ++i) {
    Box box{{0, 0, 0}, shape};
    // Evenly spread, offset by half a step so that planes are not all on chunk borders.
    box.start[axis] = (2 * i + 1) * shape[axis] / (2 * count);
    box.count[axis] = 1;
    pattern.boxes.push_back(box);
  }
  return pattern;
}

}  // namespace

std::vector<AccessPattern> make_patterns(const Shape3& shape, const PatternOptions& options) {
  std::vector<AccessPattern> patterns;
  patterns.push_back({"read all", "read all", {Box{{0, 0, 0}, shape}}});
  for (int axis = 0; axis < 3; ++axis) patterns.push_back(planes(shape, axis, options.planes_per_axis));

  if (options.crops > 0) {
    Shape3 edge;
    for (int a = 0; a < 3; ++a) edge[a] = std::min(options.crop_edge, shape[a]);
    AccessPattern crops;
    crops.label = edge[0] == edge[1] && edge[1] == edge[2]
                      ? fmt::format("{} crops {}^3", options.crops, edge[0])
                      : fmt::format("{} crops {}x{}x{}", options.crops, edge[0], edge[1], edge[2]);
    crops.short_label = "crops";
    crops.kind = PatternKind::kCrops;
    std::mt19937_64 rng(options.seed ^ 0xc0ffee);
    for (std::uint64_t i = 0; i < options.crops; ++i) {
      Box box{{}, edge};
      for (int a = 0; a < 3; ++a) box.start[a] = rng() % (shape[a] - edge[a] + 1);
      crops.boxes.push_back(box);
    }
    patterns.push_back(std::move(crops));
  }
  return patterns;
}

}  // namespace zarrkit::demo

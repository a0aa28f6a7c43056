// Selections with NumPy semantics: integers, slices (any non-zero step) and an ellipsis.
// Integer arrays, boolean masks, coordinate and block selections build on the same
// per-axis types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace zarrkit {

struct Slice {
  std::optional<std::int64_t> start;
  std::optional<std::int64_t> stop;
  std::int64_t step = 1;
  static Slice all() { return {}; }
  bool operator==(const Slice&) const = default;
};

struct Ellipsis {
  bool operator==(const Ellipsis&) const = default;
};

// One entry of a selection: an integer (drops the axis; negative counts from the end), a
// slice, or "...".
using AxisSelector = std::variant<std::int64_t, Slice, Ellipsis>;

// A selection as the user wrote it: fewer entries than axes means ":" for the rest.
using Selection = std::vector<AxisSelector>;

// Parses NumPy index syntax, comma-separated per axis: "3, 0:10, ::2, ...", "-1", ":".
// InvalidArgumentError on anything else.
Selection parse_selection(std::string_view expression);
std::string format_selection(const Selection& selection);

}  // namespace zarrkit

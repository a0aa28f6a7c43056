// Selections with NumPy semantics.
//
// A Selection is one entry per axis (fewer entries mean ":" for the rest):
//   - an integer: one index, dropping the axis (negative counts from the end);
//   - a Slice with any non-zero step (negative steps walk backwards, as in NumPy);
//   - "..." (Ellipsis): as many ":" as make the count right;
//   - an IndexArray: a list of indices along that axis, in any order, repeats allowed;
//   - a BoolArray: a mask along that axis (as long as the axis), selecting the true ones.
// Lists select along their own axis independently of every other axis ("orthogonal"
// indexing, zarr's `oindex`, NumPy's `a[np.ix_(...)]`). With at most one list this is
// exactly NumPy's `a[...]`; NumPy's vectorised pairing of several lists is the
// CoordinateSelection below.
//
// Three more kinds have their own Array methods:
//   - CoordinateSelection (zarr's `vindex`): one integer array per axis, broadcast
//     together; element k of the result is the element at the k-th coordinates.
//   - MaskSelection: a boolean array of the array's shape; the result holds the selected
//     elements in C order, like NumPy's `a[mask]`.
//   - block selections (zarr's `blocks`): a Selection of integers and slices over chunk
//     indices instead of element indices; Array::block_selection() turns it into an
//     element Selection.
// Writes follow NumPy assignment: when an element is selected more than once, the value
// that comes last in the selection's C order wins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "zarrkit/ndbuffer.h"

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

// Indices along one axis (keeps the axis): negative ones count from the end.
struct IndexArray {
  std::vector<std::int64_t> indices;
  bool operator==(const IndexArray&) const = default;
};

// A mask along one axis (keeps the axis): its length must equal the axis's; selects the
// positions of its non-zero entries, in increasing order.
struct BoolArray {
  std::vector<std::uint8_t> mask;
  bool operator==(const BoolArray&) const = default;
};

// One entry of a selection.
using AxisSelector = std::variant<std::int64_t, Slice, Ellipsis, IndexArray, BoolArray>;

// A selection as the user wrote it: fewer entries than axes means ":" for the rest.
using Selection = std::vector<AxisSelector>;

// An N-dimensional array of indices for a CoordinateSelection, in C order.
struct CoordinateArray {
  Shape shape;                       // {} for a single index
  std::vector<std::int64_t> values;  // as many as the product of `shape`

  CoordinateArray() = default;
  CoordinateArray(Shape s, std::vector<std::int64_t> v) : shape(std::move(s)), values(std::move(v)) {}
  // A one-dimensional list of indices.
  CoordinateArray(std::vector<std::int64_t> v) : shape{v.size()}, values(std::move(v)) {}  // NOLINT
  CoordinateArray(std::initializer_list<std::int64_t> v) : CoordinateArray(std::vector<std::int64_t>(v)) {}
  // One index, broadcast against the others.
  static CoordinateArray scalar(std::int64_t index) { return CoordinateArray(Shape{}, {index}); }
  bool operator==(const CoordinateArray&) const = default;
};

// One coordinate array per axis of the array (exactly ndim of them). They broadcast
// together (NumPy rules), and the result has the broadcast shape.
using CoordinateSelection = std::vector<CoordinateArray>;

// A boolean mask over the whole array: `shape` must equal the array's shape; non-zero
// entries (C order) select. The result is one-dimensional.
struct MaskSelection {
  Shape shape;
  std::vector<std::uint8_t> mask;
  bool operator==(const MaskSelection&) const = default;
};

// Parses NumPy index syntax, comma-separated per axis: "3, 0:10, ::-2, ...", "-1", ":",
// and integer or boolean lists "[1, 5, 9]", "[True, False, True]".
// InvalidArgumentError on anything else.
Selection parse_selection(std::string_view expression);
std::string format_selection(const Selection& selection);

}  // namespace zarrkit

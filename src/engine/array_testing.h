// Shared by the engine's array tests: host vectors as array views, and a read's values back
// as a vector.
#pragma once

#include <cstring>
#include <vector>

#include "zarrkit/ndbuffer.h"

namespace zarrkit {

// `values` (C order) as a view of `shape` and `dtype` (whose size must be sizeof(T), or 1
// element per byte for std::byte storage).
template <typename T>
NDView view_of(std::vector<T>& values, const Shape& shape, const DataType& dtype) {
  return NDView{reinterpret_cast<std::byte*>(values.data()), shape, NDView::c_strides(shape, dtype.size()), dtype};
}

template <typename T>
std::vector<T> values_of(const NDBuffer& b) {
  std::vector<T> out(b.nbytes() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), b.data(), b.nbytes());  // an empty read may hold no buffer
  return out;
}

}  // namespace zarrkit

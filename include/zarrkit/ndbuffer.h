// N-dimensional buffers.
//
// NDBuffer owns a C-contiguous array (a Buffer + shape + dtype). NDView is a non-owning,
// strided view of someone else's array (a NumPy or CuPy array, a slice of an NDBuffer):
// it is what the engine scatters decoded chunks into and gathers writes from.
#pragma once

#include <cstdint>
#include <vector>

#include "zarrkit/buffer.h"
#include "zarrkit/dtype.h"

namespace zarrkit {

using Shape = std::vector<std::uint64_t>;

// Product of `shape`, checked for overflow (InvalidArgumentError on overflow).
std::uint64_t checked_num_elements(const Shape& shape);
// Number of bytes of a C-contiguous array of `shape` and `dtype`, overflow-checked.
std::uint64_t checked_nbytes(const Shape& shape, const DataType& dtype);

struct NDView {
  std::byte* data = nullptr;
  Shape shape;
  std::vector<std::int64_t> byte_strides;  // may be negative
  DataType dtype;
  MemoryKind kind = MemoryKind::kHost;

  std::size_t ndim() const { return shape.size(); }
  std::uint64_t num_elements() const;
  bool is_c_contiguous() const;
  // Strides of a C-contiguous array of this shape and dtype.
  static std::vector<std::int64_t> c_strides(const Shape& shape, std::size_t itemsize);
};

class NDBuffer {
 public:
  NDBuffer() = default;
  // Wraps `buffer`, which must hold exactly num_elements(shape) * dtype.size() bytes.
  NDBuffer(Buffer buffer, Shape shape, DataType dtype);

  static NDBuffer allocate(Shape shape, DataType dtype,
                           const BufferPrototype& prototype = BufferPrototype::host());
  // Host memory only for now; device prototypes fill through the GPU module.
  static NDBuffer filled(Shape shape, DataType dtype, const FillValue& fill,
                         const BufferPrototype& prototype = BufferPrototype::host());

  const Shape& shape() const { return shape_; }
  std::size_t ndim() const { return shape_.size(); }
  const DataType& dtype() const { return dtype_; }
  std::uint64_t num_elements() const;
  std::size_t nbytes() const { return buffer_.size(); }
  MemoryKind kind() const { return buffer_.kind(); }

  Buffer& buffer() { return buffer_; }
  const Buffer& buffer() const { return buffer_; }
  std::byte* data() { return buffer_.data(); }
  const std::byte* data() const { return buffer_.data(); }

  NDView view();
  // A read-only view (the pointer is non-const only because NDView is shared by both paths).
  NDView view() const;

 private:
  Buffer buffer_;
  Shape shape_;
  DataType dtype_;
};

}  // namespace zarrkit

#include "zarrkit/ndbuffer.h"

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit {

std::uint64_t checked_num_elements(const Shape& shape) {
  std::uint64_t n = 1;
  for (auto d : shape) n = checked_mul(n, d, "number of elements");
  return n;
}

std::uint64_t checked_nbytes(const Shape& shape, const DataType& dtype) {
  if (dtype.is_variable_length()) fail_invalid("{} has no fixed size in bytes", dtype.name());
  return checked_mul(checked_num_elements(shape), dtype.size(), "size in bytes");
}

std::uint64_t NDView::num_elements() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::vector<std::int64_t> NDView::c_strides(const Shape& shape, std::size_t itemsize) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = static_cast<std::int64_t>(itemsize);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= static_cast<std::int64_t>(shape[i]);
  }
  return strides;
}

bool NDView::is_c_contiguous() const {
  std::int64_t s = static_cast<std::int64_t>(dtype.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && byte_strides[i] != s) return false;
    s *= static_cast<std::int64_t>(shape[i]);
  }
  return true;
}

NDBuffer::NDBuffer(Buffer buffer, Shape shape, DataType dtype)
    : buffer_(std::move(buffer)), shape_(std::move(shape)), dtype_(std::move(dtype)) {
  auto expected = checked_nbytes(shape_, dtype_);
  if (expected != buffer_.size()) {
    fail_invalid("an array of {} elements of {} needs {} bytes, the buffer has {}",
                 checked_num_elements(shape_), dtype_.name(), expected, buffer_.size());
  }
}

NDBuffer NDBuffer::allocate(Shape shape, DataType dtype, const BufferPrototype& prototype) {
  auto nbytes = to_size(checked_nbytes(shape, dtype));
  return NDBuffer(prototype.allocate(nbytes), std::move(shape), std::move(dtype));
}

NDBuffer NDBuffer::filled(Shape shape, DataType dtype, const FillValue& fill,
                          const BufferPrototype& prototype) {
  if (!is_host_accessible(prototype.kind())) {
    fail_invalid("NDBuffer::filled needs host memory, got {}", memory_kind_name(prototype.kind()));
  }
  NDBuffer b = allocate(std::move(shape), std::move(dtype), prototype);
  fill_elements(b.buffer_.mutable_view(), fill);
  return b;
}

std::uint64_t NDBuffer::num_elements() const { return checked_num_elements(shape_); }

NDView NDBuffer::view() {
  return {buffer_.data(), shape_, NDView::c_strides(shape_, dtype_.size()), dtype_, buffer_.kind()};
}

NDView NDBuffer::view() const {
  return {const_cast<std::byte*>(buffer_.data()), shape_, NDView::c_strides(shape_, dtype_.size()),
          dtype_, buffer_.kind()};
}

}  // namespace zarrkit

// Variable-length elements: the `string` (UTF-8) and `bytes` data types, which zarr-python
// writes for NumPy StringDType / object arrays of str or bytes (v3 "string" and
// "variable_length_bytes" with the vlen-utf8 / vlen-bytes codecs; v2 dtype "|O" with those
// codecs as the first filter).
//
// Such elements have no fixed size, so they never travel in an NDBuffer. A VarNDBuffer holds
// them as one std::string per element (UTF-8 text, or raw bytes), C order. Only the codecs
// that serialise them (VarLengthCodec) and Array::read_var / write_var deal in them; the
// fixed-size paths do not change for them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zarrkit/codec.h"
#include "zarrkit/dtype.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit {

class VarNDBuffer {
 public:
  VarNDBuffer() : dtype_(DataType::string()) {}
  // `elements` holds the elements in C order: exactly num_elements(shape) of them, and
  // `dtype` is a variable-length type (InvalidArgumentError otherwise).
  VarNDBuffer(Shape shape, DataType dtype, std::vector<std::string> elements);
  // Every element equal to `value`.
  static VarNDBuffer filled(Shape shape, DataType dtype, std::string_view value);

  const Shape& shape() const { return shape_; }
  std::size_t ndim() const { return shape_.size(); }
  const DataType& dtype() const { return dtype_; }
  std::uint64_t num_elements() const { return elements_.size(); }

  std::vector<std::string>& elements() { return elements_; }
  const std::vector<std::string>& elements() const { return elements_; }
  std::string& operator[](std::size_t i) { return elements_[i]; }
  const std::string& operator[](std::size_t i) const { return elements_[i]; }

  bool operator==(const VarNDBuffer& other) const = default;

 private:
  Shape shape_;
  DataType dtype_;
  std::vector<std::string> elements_;
};

// An array->bytes codec for variable-length elements (vlen-utf8, vlen-bytes). It serialises
// VarNDBuffers; the fixed-size encode/decode of ArrayToBytesCodec are UnsupportedError.
class VarLengthCodec : public ArrayToBytesCodec {
 public:
  // `chunk` has the spec's shape and type. InvalidArgumentError for elements the format
  // cannot hold (invalid UTF-8 for vlen-utf8, more than 2^32-1 bytes or elements).
  virtual Buffer encode_var(const VarNDBuffer& chunk, const ChunkSpec& spec) const = 0;
  // Exactly num_elements(spec.shape) elements, or DataLossError. Never allocates more than
  // a small multiple of encoded.size(), whatever the data claims.
  virtual VarNDBuffer decode_var(ByteView encoded, const ChunkSpec& spec) const = 0;

  Buffer encode(const NDBuffer& chunk, const ChunkSpec& spec) const final;
  NDBuffer decode(ByteView encoded, const ChunkSpec& spec, const BufferPrototype& prototype) const final;
};

}  // namespace zarrkit

// Helpers for the tests of the numcodecs array->array filters (fixedscaleoffset_test.cpp,
// quantize_test.cpp, bitround_test.cpp, packbits_test.cpp, astype_test.cpp).
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/metadata.h"

namespace zarrkit::testing {

// A registry holding only what `register_fn` registers.
inline CodecRegistry registry_with(void (*register_fn)(CodecRegistry&)) {
  CodecRegistry registry;
  register_fn(registry);
  return registry;
}

inline std::shared_ptr<const ArrayToArrayCodec> as_array_codec(std::shared_ptr<const Codec> codec) {
  auto typed = std::dynamic_pointer_cast<const ArrayToArrayCodec>(codec);
  EXPECT_NE(typed, nullptr) << "not an array->array codec";
  return typed;
}

// An array of `dtype` and `shape` holding `values` (native order, C layout).
template <typename T>
NDBuffer array_of(const std::vector<T>& values, Shape shape, DataType dtype) {
  NDBuffer nd = NDBuffer::allocate(std::move(shape), std::move(dtype));
  EXPECT_EQ(nd.nbytes(), values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(nd.data(), values.data(), values.size() * sizeof(T));
  return nd;
}

inline NDBuffer array_of_bytes(const Bytes& bytes, Shape shape, DataType dtype) {
  NDBuffer nd = NDBuffer::allocate(std::move(shape), std::move(dtype));
  EXPECT_EQ(nd.nbytes(), bytes.size());
  if (!bytes.empty()) std::memcpy(nd.data(), bytes.data(), bytes.size());
  return nd;
}

inline Bytes bytes_of(const NDBuffer& nd) { return Bytes(nd.data(), nd.data() + nd.nbytes()); }

inline ChunkSpec spec_of(Shape shape, DataType dtype) { return {std::move(shape), dtype, FillValue::zero(dtype)}; }

// Encodes `input` (of `spec`), compares the bytes with numcodecs' (little-endian hosts:
// native order is "<"), then decodes them and compares with `decoded_hex` (the input again
// for lossless filters, numcodecs' decode for lossy ones).
inline void expect_numcodecs_bytes(const ArrayToArrayCodec& codec, const NDBuffer& input, const ChunkSpec& spec,
                                   std::string_view encoded_hex, std::string_view decoded_hex) {
  NDBuffer encoded = codec.encode(input, spec);
  EXPECT_EQ(bytes_of(encoded), from_hex(encoded_hex)) << "encode";
  EXPECT_EQ(encoded.dtype().size(), codec.encoded_spec(spec).dtype.size());
  EXPECT_EQ(encoded.shape(), codec.encoded_spec(spec).shape);
  NDBuffer decoded = codec.decode(encoded, spec);
  EXPECT_EQ(decoded.shape(), spec.shape);
  EXPECT_EQ(decoded.dtype().kind(), spec.dtype.kind());
  EXPECT_EQ(bytes_of(decoded), from_hex(decoded_hex)) << "decode";
}

}  // namespace zarrkit::testing

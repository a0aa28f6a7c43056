// The header of a NumPy .npy file (format versions 1.0, 2.0 and 3.0):
//   "\x93NUMPY" major minor, a little-endian header length (2 bytes in 1.0, 4 in 2.0/3.0),
//   then a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), }
//   padded with spaces and a final '\n' so that the data starts on a 64-byte boundary.
// The header comes from a file someone else wrote: every size in it is checked.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "zarrkit/buffer.h"
#include "zarrkit/dtype.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit::cli {

struct NpyHeader {
  int major_version = 1;
  // As stored: storage_endian() of the type (and of each structured field) says the byte
  // order of the data in the file.
  DataType dtype;
  Shape shape;
  bool fortran_order = false;
  std::uint64_t data_offset = 0;  // bytes before the data
  std::uint64_t data_bytes = 0;   // elements * itemsize, overflow-checked
  // The descr was a 1-byte float ('<f1'), which only ml_dtypes' float8_e5m2 has: `dtype` is
  // then raw bytes (r8), and the file's type is known only to the user (import --dtype).
  bool one_byte_float = false;
};

// The largest header we accept (NumPy's own default limit is 10000 bytes; structured types
// with many fields need more).
inline constexpr std::size_t kMaxNpyHeaderBytes = 1u << 20;

// The length of the magic, version and length fields that precede the dict (10 or 12), or
// 0 when `prefix` (at least 8 bytes) is not an .npy file of a known version.
std::size_t npy_preamble_size(ByteView prefix);

// Parses the preamble and the header dict. `bytes` must hold at least the whole header.
// InvalidArgumentError for anything malformed; UnsupportedError for object arrays and
// versions we do not know.
NpyHeader parse_npy_header(ByteView bytes);

// The full header (magic .. '\n') for data of `dtype` (native byte order) and `shape`.
// Picks version 1.0, or 2.0 when the dict does not fit in 65535 bytes, or 3.0 when it needs
// characters outside Latin-1.
std::string format_npy_header(const DataType& dtype, const Shape& shape, bool fortran_order = false);

// A Python literal (dict, list, tuple, str, int, True/False/None) as JSON; tuples become
// arrays. Depth and size are bounded.
nlohmann::json parse_python_literal(std::string_view text);

// The NumPy descr of `dtype` in native (little-endian) byte order, as a Python literal.
std::string npy_descr(const DataType& dtype);

// Converts `data` (elements of `stored`, in the byte order it records) to native order in
// place, field by field for structured types.
void npy_to_native(MutableByteView data, const DataType& stored);

// `dtype` with every byte order (its own and its fields') set to native.
DataType native_dtype(const DataType& dtype);

}  // namespace zarrkit::cli

// Reading and writing NumPy .npy files. Reads can go slab by slab (bounded memory): a slab
// is a range of the outermost axis of the file's layout (axis 0 in C order, the last axis
// in Fortran order), which is one contiguous run of bytes in the file.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>

#include "zarrkit/ndbuffer.h"
#include "zarrkit/npy_header.h"

namespace zarrkit::cli {

class NpyReader {
 public:
  // Opens the file and parses its header; checks that the file holds all the data.
  explicit NpyReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const NpyHeader& header() const { return header_; }
  const Shape& shape() const { return header_.shape; }
  // The element type in native byte order (what the read functions return).
  const DataType& dtype() const { return native_; }

  // The axis slabs are taken along: 0 for C order, ndim-1 for Fortran order (0 for 0-d).
  std::size_t slab_axis() const;
  // Bytes per index of the slab axis (the whole array for 0-d).
  std::uint64_t slab_stride_bytes() const;

  // The region [begin, end) of slab_axis() (all of the other axes), in C order and native
  // byte order. For a 0-d array begin/end must be 0/1.
  NDBuffer read_slab(std::uint64_t begin, std::uint64_t end);
  NDBuffer read_all();

 private:
  std::filesystem::path path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  NpyHeader header_;
  DataType native_;
};

// Writes `array` (C order, native byte order) as an .npy file, replacing `path`.
void write_npy(const std::filesystem::path& path, const NDBuffer& array);

// Copies a strided array (byte_strides of `source`) into C-contiguous memory at `dest`.
void copy_to_c_order(const NDView& source, std::byte* dest);

}  // namespace zarrkit::cli

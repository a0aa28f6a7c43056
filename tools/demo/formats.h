// The ways the demo stores a field: Zarr arrays of the layouts of layouts.h, and a raw file
// read the way numpy.memmap is (map the file, copy the requested region into a fresh array).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "demo/layouts.h"
#include "demo/page_cache.h"
#include "demo/sample_field.h"
#include "zarrkit/array.h"
#include "zarrkit/buffer.h"

namespace zarrkit::demo {

class Format {
 public:
  virtual ~Format() = default;
  virtual std::string name() const = 0;    // column title: "zarr v3"
  virtual std::string detail() const = 0;  // how it is stored, one line
  virtual LayoutRole role() const = 0;
  bool is_zarr() const { return role() != LayoutRole::kRaw; }
  const std::filesystem::path& path() const { return path_; }

  virtual void write(const SampleField& field) = 0;
  // write(), timed; write_seconds() is how long the last one took.
  void timed_write(const SampleField& field);
  double write_seconds() const { return write_seconds_; }
  // Opens what write() produced, read-only, the way a separate reader process would.
  virtual void open_for_reading() = 0;
  // The values of `box`, C order, in a newly allocated buffer.
  virtual Buffer read(const Box& box) const = 0;
  // Evicts the files from the page cache (page_cache.h), so that the next read is cold.
  virtual CacheDrop drop_from_page_cache();

  // The opened Zarr array (nullptr for the raw file).
  virtual const Array* zarr_array() const { return nullptr; }
  // The mapped raw file (empty for Zarr).
  virtual ByteView mapped_bytes() const { return {}; }
  // The shape of the unit a read decodes: the chunk, or the inner chunk of a shard
  // (nullopt for the raw file).
  virtual std::optional<Shape3> decoded_chunk_shape() const { return std::nullopt; }

  // Sum of the file sizes (chunks and metadata), and how many files.
  std::uint64_t bytes_on_disk() const;
  std::uint64_t file_count() const;

 protected:
  explicit Format(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;

 private:
  double write_seconds_ = 0;
};

std::unique_ptr<Format> make_zarr_format(std::filesystem::path path, ZarrLayout layout);
// Little-endian float32, C order, no header: np.memmap(path, "<f4", "r", shape=shape).
std::unique_ptr<Format> make_raw_format(std::filesystem::path path);

}  // namespace zarrkit::demo

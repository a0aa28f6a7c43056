// The three ways the demo stores the field: Zarr v3, Zarr v2, and a raw file read the way
// numpy.memmap is (map the file, copy the requested region into a fresh array).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "demo/sample_field.h"
#include "zarrkit/array.h"
#include "zarrkit/buffer.h"

namespace zarrkit::demo {

class Format {
 public:
  virtual ~Format() = default;
  virtual std::string name() const = 0;    // column title: "zarr v3"
  virtual std::string detail() const = 0;  // how it is stored, one line
  virtual bool is_zarr() const = 0;
  const std::filesystem::path& path() const { return path_; }

  virtual void write(const SampleField& field) = 0;
  // Opens what write() produced, read-only, the way a separate reader process would.
  virtual void open_for_reading() = 0;
  // The values of `box`, C order, in a newly allocated buffer.
  virtual Buffer read(const Box& box) const = 0;
  // Sum of the file sizes (chunks and metadata).
  std::uint64_t bytes_on_disk() const;

 protected:
  explicit Format(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

struct ZarrLayout {
  int zarr_format = 3;
  Shape3 chunks{};
  nlohmann::json codecs;  // v3 "codecs", or v2 {"compressor": ..., "filters": ...}
  std::string description;
};

// bytes(little) + zstd(level 1): zarr-python 3's default pipeline at a fast level.
ZarrLayout default_v3_layout(const Shape3& chunks);
// blosc lz4, clevel 5, byte shuffle: zarr-python 2's default compressor.
ZarrLayout default_v2_layout(const Shape3& chunks);

std::unique_ptr<Format> make_zarr_format(std::filesystem::path path, ZarrLayout layout);
// Little-endian float32, C order, no header: np.memmap(path, "<f4", "r", shape=shape).
std::unique_ptr<Format> make_raw_format(std::filesystem::path path);

}  // namespace zarrkit::demo

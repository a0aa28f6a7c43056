#include "demo/formats.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"
#include "zarrkit/stores/local_store.h"

namespace zarrkit::demo {

namespace fs = std::filesystem;

std::uint64_t Format::bytes_on_disk() const {
  if (fs::is_regular_file(path_)) return fs::file_size(path_);
  std::uint64_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(path_))
    if (entry.is_regular_file()) total += entry.file_size();
  return total;
}

std::uint64_t Format::file_count() const {
  if (fs::is_regular_file(path_)) return 1;
  std::uint64_t count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(path_))
    if (entry.is_regular_file()) ++count;
  return count;
}

void Format::timed_write(const SampleField& field) {
  const auto start = std::chrono::steady_clock::now();
  write(field);
  write_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

CacheDrop Format::drop_from_page_cache() { return demo::drop_from_page_cache(path_); }

namespace {

Shape to_shape(const Shape3& s) { return {s[0], s[1], s[2]}; }

class ZarrFormat final : public Format {
 public:
  ZarrFormat(fs::path path, ZarrLayout layout) : Format(std::move(path)), layout_(std::move(layout)) {}

  std::string name() const override { return layout_.name; }
  LayoutRole role() const override { return layout_.role; }
  std::string detail() const override { return layout_.description; }
  const Array* zarr_array() const override { return array_ ? &*array_ : nullptr; }
  std::optional<Shape3> decoded_chunk_shape() const override { return layout_.decoded; }

  void write(const SampleField& field) override {
    ArraySpec spec;
    spec.zarr_format = layout_.zarr_format;
    spec.shape = to_shape(field.shape());
    spec.chunks = to_shape(layout_.chunks);
    spec.dtype = DataType::float_(32);
    spec.fill_value = 0.0;
    if (layout_.zarr_format == 3) {
      spec.codecs = layout_.codecs;
    } else {
      spec.v2_compressor = layout_.codecs.at("compressor");
      spec.v2_filters = layout_.codecs.at("filters");
    }
    auto store = LocalStore::open(path_);
    Array array = Array::create(store, "", make_array_metadata(spec, CodecRegistry::builtin()),
                                /*overwrite=*/true);
    NDView source;
    source.data = const_cast<std::byte*>(reinterpret_cast<const std::byte*>(field.values().data()));
    source.shape = spec.shape;
    source.dtype = spec.dtype;
    source.byte_strides = NDView::c_strides(source.shape, sizeof(float));
    array.write({}, source);
  }

  void open_for_reading() override {
    LocalStoreOptions options;
    options.read_only = true;
    array_.emplace(Array::open(LocalStore::open(path_, options)));
    if (array_->dtype() != DataType::float_(32) || array_->ndim() != 3)
      fail_internal("{} reopened as {} with {} dimensions", path_.string(), array_->dtype().name(),
                    array_->ndim());
  }

  Buffer read(const Box& box) const override {
    Selection selection;
    for (int a = 0; a < 3; ++a) {
      selection.push_back(Slice{static_cast<std::int64_t>(box.start[a]),
                                static_cast<std::int64_t>(box.start[a] + box.count[a]), 1});
    }
    return array_->read(selection).buffer();
  }

 private:
  template <typename... Args>
  [[noreturn]] static void fail_internal(fmt::format_string<Args...> f, Args&&... args) {
    throw InternalError(fmt::format(f, std::forward<Args>(args)...));
  }

  ZarrLayout layout_;
  std::optional<Array> array_;
};

// The numpy.memmap baseline: the file is mapped once (as np.memmap does when opened) and
// each read copies the region into a fresh buffer (as np.array(mm[...]) does), on one
// thread, row by row.
class RawFormat final : public Format {
 public:
  explicit RawFormat(fs::path path) : Format(std::move(path)) {}
  ~RawFormat() override { unmap(); }

  std::string name() const override { return "memmap+copy"; }
  LayoutRole role() const override { return LayoutRole::kRaw; }
  ByteView mapped_bytes() const override {
    return {static_cast<const std::byte*>(map_), map_ == nullptr ? 0 : map_size_};
  }
  // A mapped page stays in the page cache: unmap, drop, map again.
  CacheDrop drop_from_page_cache() override {
    unmap();
    CacheDrop dropped = Format::drop_from_page_cache();
    open_for_reading();
    return dropped;
  }
  std::string detail() const override { return "raw little-endian float32, C order, 1 thread"; }

  void write(const SampleField& field) override {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(field.values().data()),
              static_cast<std::streamsize>(field.nbytes()));
    out.close();
    if (!out) fail_io("writing {} failed", path_.string());
    shape_ = field.shape();
  }

  void open_for_reading() override {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_io("cannot open {}: {}", path_.string(), std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) !=
                                   shape_[0] * shape_[1] * shape_[2] * sizeof(float)) {
      ::close(fd);
      fail_io("{} does not have the expected size", path_.string());
    }
    map_size_ = static_cast<std::size_t>(st.st_size);
    void* map = mmap(nullptr, map_size_, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) fail_io("cannot map {}: {}", path_.string(), std::strerror(errno));
    map_ = map;
  }

  Buffer read(const Box& box) const override {
    Buffer out = Buffer::allocate(box.num_elements() * sizeof(float));
    const auto* src = static_cast<const float*>(map_);
    auto* dst = reinterpret_cast<float*>(out.data());
    // Copy the longest contiguous runs, as numpy does: whole planes when the box spans
    // y and x, whole row blocks when it spans x, else one row at a time.
    const bool full_x = box.count[2] == shape_[2];
    const bool full_yx = full_x && box.count[1] == shape_[1];
    const std::uint64_t run = full_yx  ? box.count[0] * box.count[1] * box.count[2]
                              : full_x ? box.count[1] * box.count[2]
                                       : box.count[2];
    const std::uint64_t rows_per_plane = full_x ? 1 : box.count[1];
    const std::uint64_t planes = full_yx ? 1 : box.count[0];
    for (std::uint64_t z = box.start[0]; z < box.start[0] + planes; ++z) {
      for (std::uint64_t y = box.start[1]; y < box.start[1] + rows_per_plane; ++y) {
        std::memcpy(dst, src + (z * shape_[1] + y) * shape_[2] + box.start[2], run * sizeof(float));
        dst += run;
      }
    }
    return out;
  }

 private:
  void unmap() {
    if (map_ != nullptr) munmap(map_, map_size_);
    map_ = nullptr;
  }

  Shape3 shape_{};
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
};

}  // namespace

std::unique_ptr<Format> make_zarr_format(fs::path path, ZarrLayout layout) {
  return std::make_unique<ZarrFormat>(std::move(path), std::move(layout));
}

std::unique_ptr<Format> make_raw_format(fs::path path) {
  return std::make_unique<RawFormat>(std::move(path));
}

}  // namespace zarrkit::demo

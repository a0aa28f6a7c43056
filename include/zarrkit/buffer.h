// Buffers and the buffer prototype.
//
// A Buffer is a contiguous run of bytes in one kind of memory (host, pinned host, device).
// A BufferPrototype says which kind of memory a caller wants; it is passed down to stores
// and codecs so that they fill that memory directly (the idea of zarr-python's
// zarr.core.buffer). Only host memory exists in the core; pinned and device allocators
// come from the GPU module and plug in through Allocator without changing this API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

namespace zarrkit {

using ByteView = std::span<const std::byte>;
using MutableByteView = std::span<std::byte>;

inline ByteView as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
inline std::string_view as_chars(ByteView b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

enum class MemoryKind : std::uint8_t { kHost, kPinnedHost, kDevice };

std::string_view memory_kind_name(MemoryKind kind);

// True when the CPU may read and write the memory directly.
inline bool is_host_accessible(MemoryKind kind) { return kind != MemoryKind::kDevice; }

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual MemoryKind kind() const = 0;
  // Returns memory aligned to at least 64 bytes; throws ResourceExhaustedError on failure.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
};

Allocator& host_allocator();

class Buffer {
 public:
  Buffer() = default;

  // Uninitialised memory of `size` bytes from `allocator`.
  static Buffer allocate(std::size_t size, Allocator& allocator = host_allocator());
  // A host copy of `bytes`.
  static Buffer copy_of(ByteView bytes);
  // A view of memory owned elsewhere; `owner` keeps it alive (a NumPy array, an mmap, ...).
  static Buffer wrap(std::shared_ptr<const void> owner, std::byte* data, std::size_t size,
                     MemoryKind kind = MemoryKind::kHost);

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  MemoryKind kind() const { return kind_; }

  // Host-only accessors; throw InvalidArgumentError for device memory.
  ByteView view() const;
  MutableByteView mutable_view();

  // A sub-range sharing ownership; checks bounds.
  Buffer slice(std::size_t offset, std::size_t length) const;
  // Forgets the bytes past `new_size` (no reallocation). new_size must be <= size().
  void shrink(std::size_t new_size);

 private:
  std::shared_ptr<const void> owner_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  MemoryKind kind_ = MemoryKind::kHost;
};

// Bytes read a part at a time: a stored value read as it is decoded (Store::open_reader),
// or bytes already in memory (MemorySource). Every read sees the same bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::uint64_t size() const = 0;
  // Copies bytes [offset, offset + dest.size()) into `dest`; returns how many there were
  // (fewer where the bytes end first). Safe to call from several threads at once (a shard's
  // inner chunks are read in parallel from one source).
  virtual std::size_t read(std::uint64_t offset, MutableByteView dest) = 0;
  // All the bytes, where they are in host memory already (valid while the source lives).
  virtual std::optional<ByteView> in_memory() const { return std::nullopt; }
};

// Bytes in host memory as a ByteSource; `owner` (a Buffer's, say) keeps them alive.
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(ByteView bytes, std::shared_ptr<const void> owner = nullptr)
      : bytes_(bytes), owner_(std::move(owner)) {}
  explicit MemorySource(Buffer buffer);
  std::uint64_t size() const override { return bytes_.size(); }
  std::size_t read(std::uint64_t offset, MutableByteView dest) override;
  std::optional<ByteView> in_memory() const override { return bytes_; }

 private:
  ByteView bytes_;
  std::shared_ptr<const void> owner_;
};

// Which memory a request wants. Cheap to copy.
class BufferPrototype {
 public:
  explicit BufferPrototype(Allocator& allocator) : allocator_(&allocator) {}
  MemoryKind kind() const { return allocator_->kind(); }
  Allocator& allocator() const { return *allocator_; }
  Buffer allocate(std::size_t size) const { return Buffer::allocate(size, *allocator_); }

  static BufferPrototype host() { return BufferPrototype(host_allocator()); }

 private:
  Allocator* allocator_;
};

}  // namespace zarrkit

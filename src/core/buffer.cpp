#include "zarrkit/buffer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "core/host_block_cache.h"
#include "zarrkit/error.h"

// Under AddressSanitizer every allocation goes to operator new, so that overflows of chunk
// buffers are caught; the block cache has its own tests.
#if defined(__SANITIZE_ADDRESS__)
#define ZARRKIT_HOST_BLOCK_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZARRKIT_HOST_BLOCK_CACHE 0
#endif
#endif
#ifndef ZARRKIT_HOST_BLOCK_CACHE
#define ZARRKIT_HOST_BLOCK_CACHE 1
#endif

namespace zarrkit {
namespace {

constexpr std::align_val_t kAlignment{64};
constexpr bool kUseBlockCache = ZARRKIT_HOST_BLOCK_CACHE != 0;

class HostAllocator final : public Allocator {
 public:
  MemoryKind kind() const override { return MemoryKind::kHost; }
  void* allocate(std::size_t bytes) override {
    // Aligned new rounds the size up; near SIZE_MAX that wraps, so refuse what no host has.
    if (bytes > std::numeric_limits<std::size_t>::max() / 2) fail_resource("cannot allocate {} bytes of host memory", bytes);
    // Chunk-sized buffers come from the per-thread block cache (host_block_cache.h says why).
    void* p = kUseBlockCache && bytes >= host_block_cache::kMinBytes
                  ? host_block_cache::allocate(bytes)
                  : ::operator new(bytes == 0 ? 1 : bytes, kAlignment, std::nothrow);
    if (p == nullptr) fail_resource("cannot allocate {} bytes of host memory", bytes);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept override {
    if (kUseBlockCache && bytes >= host_block_cache::kMinBytes) return host_block_cache::release(p);
    ::operator delete(p, kAlignment);
  }
};

}  // namespace

std::string_view memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinnedHost: return "pinned";
    case MemoryKind::kDevice: return "device";
  }
  return "?";
}

Allocator& host_allocator() {
  static HostAllocator allocator;
  return allocator;
}

Buffer Buffer::allocate(std::size_t size, Allocator& allocator) {
  auto* p = static_cast<std::byte*>(allocator.allocate(size));
  Buffer b;
  b.owner_ = std::shared_ptr<const void>(p, [&allocator, size](const void* q) {
    allocator.deallocate(const_cast<void*>(q), size);
  });
  b.data_ = p;
  b.size_ = size;
  b.kind_ = allocator.kind();
  return b;
}

Buffer Buffer::copy_of(ByteView bytes) {
  Buffer b = allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(b.data_, bytes.data(), bytes.size());
  return b;
}

Buffer Buffer::wrap(std::shared_ptr<const void> owner, std::byte* data, std::size_t size,
                    MemoryKind kind) {
  Buffer b;
  b.owner_ = std::move(owner);
  b.data_ = data;
  b.size_ = size;
  b.kind_ = kind;
  return b;
}

ByteView Buffer::view() const {
  if (!is_host_accessible(kind_)) fail_invalid("buffer is in {} memory, not host memory", memory_kind_name(kind_));
  return {data_, size_};
}

MutableByteView Buffer::mutable_view() {
  if (!is_host_accessible(kind_)) fail_invalid("buffer is in {} memory, not host memory", memory_kind_name(kind_));
  return {data_, size_};
}

Buffer Buffer::slice(std::size_t offset, std::size_t length) const {
  if (offset > size_ || length > size_ - offset) {
    fail_invalid("buffer slice [{}, +{}) is outside a buffer of {} bytes", offset, length, size_);
  }
  Buffer b = *this;
  b.data_ = data_ + offset;
  b.size_ = length;
  return b;
}

MemorySource::MemorySource(Buffer buffer)
    : bytes_(buffer.view()), owner_(std::make_shared<Buffer>(std::move(buffer))) {}

std::size_t MemorySource::read(std::uint64_t offset, MutableByteView dest) {
  if (offset >= bytes_.size()) return 0;
  const std::size_t n = std::min<std::uint64_t>(dest.size(), bytes_.size() - offset);
  if (n > 0) std::memcpy(dest.data(), bytes_.data() + offset, n);
  return n;
}

void Buffer::shrink(std::size_t new_size) {
  if (new_size > size_) fail_invalid("cannot grow a buffer from {} to {} bytes by shrink()", size_, new_size);
  size_ = new_size;
}

}  // namespace zarrkit

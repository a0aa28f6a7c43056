#include "core/host_block_cache.h"

#include <sys/mman.h>

#include <atomic>
#include <bit>
#include <limits>
#include <mutex>
#include <vector>

namespace zarrkit::host_block_cache {
namespace {

// Each mapping starts with one page that records its size; the block follows it, page
// aligned.
constexpr std::size_t kPage = 4096;
constexpr std::uint64_t kMagic = 0x7a61726b6974626bULL;  // "zarkitbk"

struct Header {
  std::uint64_t magic;
  std::size_t capacity;  // usable bytes after the header page
};

std::atomic<std::uint64_t> g_mapped_blocks{0};
std::atomic<std::uint64_t> g_mapped_bytes{0};
std::atomic<std::uint64_t> g_maps{0};
std::atomic<std::uint64_t> g_reuses{0};

Header* header_of(void* block) { return reinterpret_cast<Header*>(static_cast<std::byte*>(block) - kPage); }

// Rounds up to a size with at most three significant bits (steps of 12.5% or less), in
// whole pages: chunks of one array have similar but not equal encoded sizes, and one block
// then serves them all.
std::size_t capacity_for(std::size_t bytes) {
  const std::size_t pages = (bytes + kPage - 1) / kPage;
  const int width = std::bit_width(pages);
  if (width <= 3) return pages * kPage;
  const std::size_t unit = std::size_t{1} << (width - 3);
  return ((pages + unit - 1) / unit) * unit * kPage;
}

void* map_block(std::size_t capacity) {
  void* base = ::mmap(nullptr, capacity + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  // Fewer, larger page faults on first touch where transparent huge pages are enabled.
  if (capacity >= (std::size_t{4} << 20)) ::madvise(base, capacity + kPage, MADV_HUGEPAGE);
#endif
  auto* header = static_cast<Header*>(base);
  header->magic = kMagic;
  header->capacity = capacity;
  g_mapped_blocks.fetch_add(1, std::memory_order_relaxed);
  g_mapped_bytes.fetch_add(capacity, std::memory_order_relaxed);
  g_maps.fetch_add(1, std::memory_order_relaxed);
  return static_cast<std::byte*>(base) + kPage;
}

void unmap_block(void* block) noexcept {
  Header* header = header_of(block);
  const std::size_t capacity = header->capacity;
  header->magic = 0;
  ::munmap(header, capacity + kPage);
  g_mapped_blocks.fetch_sub(1, std::memory_order_relaxed);
  g_mapped_bytes.fetch_sub(capacity, std::memory_order_relaxed);
}

struct CachedBlock {
  void* block;
  std::size_t capacity;
};

// Blocks that one thread frees and another allocates. A remote transport's event-loop
// thread allocates every response body; the pool threads that decode them free them. A
// thread's own cache kept three and unmapped the rest, so the receiving thread faulted in
// fresh memory for every body: a page fault per 4 KiB, all on the one thread that receives
// for everyone. What a thread's cache pushes out comes here instead, and an allocation
// that its own cache cannot serve looks here before mapping. Only try_lock: a thread that
// finds it busy maps or unmaps as before, and a forked child whose parent held the lock
// never waits for it.
class SharedCache {
 public:
  void* take(std::size_t capacity) {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return nullptr;
    std::size_t best = blocks_.size();
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_[i].capacity >= capacity && (best == blocks_.size() || blocks_[i].capacity < blocks_[best].capacity)) {
        best = i;
      }
    }
    if (best == blocks_.size()) return nullptr;
    void* block = blocks_[best].block;
    bytes_ -= blocks_[best].capacity;
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
    return block;
  }

  void put(CachedBlock b) noexcept;

  void release_all() noexcept {
    std::lock_guard lock(mutex_);
    for (const CachedBlock& b : blocks_) unmap_block(b.block);
    blocks_.clear();
    bytes_ = 0;
  }

 private:
  std::mutex mutex_;
  std::vector<CachedBlock> blocks_;  // oldest first
  std::size_t bytes_ = 0;
};

SharedCache& shared_cache() {
  static auto* cache = new SharedCache;  // never destroyed: blocks may be freed during exit
  return *cache;
}

// One thread's released blocks, oldest first.
class ThreadCache {
 public:
  ~ThreadCache() {
    release_all();
    destroyed_ = true;
  }

  void* take(std::size_t capacity) {
    std::size_t best = blocks_.size();
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_[i].capacity >= capacity && (best == blocks_.size() || blocks_[i].capacity < blocks_[best].capacity)) {
        best = i;
      }
    }
    if (best == blocks_.size()) return nullptr;
    void* block = blocks_[best].block;
    bytes_ -= blocks_[best].capacity;
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
    return block;
  }

  void put(void* block, std::size_t capacity) noexcept {
    if (capacity > kMaxCachedBytes) return unmap_block(block);
    try {
      blocks_.push_back({block, capacity});
    } catch (...) {
      return unmap_block(block);
    }
    bytes_ += capacity;
    while (blocks_.size() > kMaxCachedBlocks || bytes_ > kMaxCachedBytes) {
      shared_cache().put(blocks_.front());
      bytes_ -= blocks_.front().capacity;
      blocks_.erase(blocks_.begin());
    }
  }

  void release_all() noexcept {
    for (const CachedBlock& b : blocks_) unmap_block(b.block);
    blocks_.clear();
    bytes_ = 0;
  }

  // Set once the thread's cache is gone (a block freed by a thread_local destructor that
  // runs later must not touch it).
  static thread_local bool destroyed_;

 private:
  std::vector<CachedBlock> blocks_;
  std::size_t bytes_ = 0;
};

thread_local bool ThreadCache::destroyed_ = false;

void SharedCache::put(CachedBlock b) noexcept {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || b.capacity > kMaxSharedBytes) return unmap_block(b.block);
  try {
    blocks_.push_back(b);
  } catch (...) {
    return unmap_block(b.block);
  }
  bytes_ += b.capacity;
  while (blocks_.size() > kMaxSharedBlocks || bytes_ > kMaxSharedBytes) {
    unmap_block(blocks_.front().block);
    bytes_ -= blocks_.front().capacity;
    blocks_.erase(blocks_.begin());
  }
}

ThreadCache* thread_cache() {
  if (ThreadCache::destroyed_) return nullptr;
  thread_local ThreadCache cache;
  return &cache;
}

}  // namespace

void* allocate(std::size_t bytes) {
  if (bytes > std::numeric_limits<std::size_t>::max() / 4) return nullptr;
  const std::size_t capacity = capacity_for(bytes);
  if (ThreadCache* cache = thread_cache()) {
    if (void* block = cache->take(capacity)) {
      g_reuses.fetch_add(1, std::memory_order_relaxed);
      return block;
    }
  }
  if (void* block = shared_cache().take(capacity)) {
    g_reuses.fetch_add(1, std::memory_order_relaxed);
    return block;
  }
  return map_block(capacity);
}

void release(void* block) noexcept {
  if (block == nullptr) return;
  Header* header = header_of(block);
  if (ThreadCache* cache = thread_cache()) return cache->put(block, header->capacity);
  unmap_block(block);
}

void release_thread_cache() noexcept {
  if (ThreadCache* cache = thread_cache()) cache->release_all();
}

void release_shared_cache() noexcept { shared_cache().release_all(); }

Stats stats() {
  return {g_mapped_blocks.load(), g_mapped_bytes.load(), g_maps.load(), g_reuses.load()};
}

}  // namespace zarrkit::host_block_cache

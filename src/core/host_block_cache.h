// Large host allocations, mapped directly and reused per thread.
//
// Why: reading or writing an array allocates a few buffers per chunk (the encoded bytes, a
// decoded chunk, a compressor's output), each of several MiB. Fresh memory costs a page
// fault per 4 KiB page on first touch (the kernel zeroes it) and an munmap when freed:
// profiles of whole reads showed ~40% of the time in the kernel. And once glibc has seen a
// freed buffer of a few MiB, it raises its mmap threshold and keeps later chunk buffers in
// its per-thread arenas after they are freed: whole reads peaked at several times the
// output's size.
//
// A block of at least kMinBytes is therefore mapped with mmap (so that releasing it really
// returns the memory) and, when freed, kept in a small cache of the freeing thread; the
// next allocation of that thread that fits takes it back, already resident. Chunk tasks
// allocate and free on the same thread, so in steady state every pool thread reuses the
// same few blocks. The cache of a thread holds at most kMaxCachedBlocks blocks and
// kMaxCachedBytes bytes, oldest released first, and is released when the thread ends.
// Blocks a thread's cache pushes out go to one shared cache (at most kMaxSharedBlocks and
// kMaxSharedBytes), where allocations of any thread that its own cache cannot serve look
// next: blocks allocated on one thread and freed on others (remote response bodies,
// received on the transport's thread and decoded on the pool's) come back resident.
// Smaller requests go to operator new (glibc serves those well).
#pragma once

#include <cstddef>
#include <cstdint>

namespace zarrkit::host_block_cache {

inline constexpr std::size_t kMinBytes = std::size_t{256} << 10;
inline constexpr std::size_t kMaxCachedBlocks = 3;
inline constexpr std::size_t kMaxCachedBytes = std::size_t{192} << 20;
inline constexpr std::size_t kMaxSharedBlocks = 64;
inline constexpr std::size_t kMaxSharedBytes = std::size_t{64} << 20;

// At least `bytes` bytes (bytes >= kMinBytes), 4096-byte aligned; nullptr when the system
// has no memory to give.
void* allocate(std::size_t bytes);
// Returns a block from allocate() (any thread may free any block).
void release(void* block) noexcept;
// Unmaps every block cached by the calling thread.
void release_thread_cache() noexcept;
// Unmaps every block of the shared cache.
void release_shared_cache() noexcept;

// Counters over all threads, for tests.
struct Stats {
  std::uint64_t mapped_blocks = 0;  // blocks mapped now (in use or cached)
  std::uint64_t mapped_bytes = 0;
  std::uint64_t maps = 0;           // mmap calls so far
  std::uint64_t reuses = 0;         // allocations served from a cache so far
};
Stats stats();

}  // namespace zarrkit::host_block_cache

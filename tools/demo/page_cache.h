// Cold reads: evicting a store's files from the page cache, checking that they left, and
// counting the bytes a process read from storage.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace zarrkit::demo {

struct CacheDrop {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;           // sum of the file sizes
  std::uint64_t resident_bytes = 0;  // still in the page cache afterwards (mincore)
  double resident_fraction() const {
    return bytes == 0 ? 0.0 : static_cast<double>(resident_bytes) / static_cast<double>(bytes);
  }
};

// fsync, then posix_fadvise(POSIX_FADV_DONTNEED) on every regular file at or under `path`;
// then counts the pages still resident. Works without privileges and touches no other
// file's cache (unlike /proc/sys/vm/drop_caches). Pages the kernel keeps (mapped by a
// process, or a file system without a backing disk such as tmpfs) show up as resident.
// Throws IoError when a file cannot be opened or synced.
CacheDrop drop_from_page_cache(const std::filesystem::path& path);

// Bytes this process (all its threads) has had read from storage so far: read_bytes of
// /proc/self/io, which counts what the page cache had to fetch, readahead included. nullopt
// where the kernel does not provide it.
std::optional<std::uint64_t> bytes_read_from_storage();

}  // namespace zarrkit::demo

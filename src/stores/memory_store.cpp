#include "zarrkit/stores/memory_store.h"

#include <cstring>

#include "stores/host_value.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// The keys of `values` below the directory `dir`, as an iterator range.
template <typename Map>
auto range_under(Map& values, std::string_view dir) {
  if (dir.empty()) return std::pair(values.begin(), values.end());
  // Every key below "dir/" sorts between "dir/" and "dir0" ('0' follows '/').
  std::string low = std::string(dir) + '/';
  std::string high = std::string(dir) + static_cast<char>('/' + 1);
  return std::pair(values.lower_bound(low), values.lower_bound(high));
}

}  // namespace

StoreCapabilities MemoryStore::capabilities() const {
  return {.writable = true, .listable = true, .partial_reads = true};
}

std::string MemoryStore::describe() const {
  return fmt::format("memory://{}", static_cast<const void*>(this));
}

std::optional<Buffer> MemoryStore::get(std::string_view key, const BufferPrototype& prototype,
                                       std::optional<ByteRange> range) {
  validate_key(key);
  Buffer stored;
  {
    std::lock_guard lock(mutex_);
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    stored = it->second;  // shares ownership; the bytes themselves are never modified
  }
  return deliver(key, range_of(stored, range), prototype);
}

Buffer MemoryStore::deliver(std::string_view key, const Buffer& part, const BufferPrototype& prototype) const {
  return host_value_for(part, prototype, describe(), key);
}

Buffer MemoryStore::stored_copy_of(ByteView value) const { return Buffer::copy_of(value); }

bool MemoryStore::exists(std::string_view key) {
  validate_key(key);
  std::lock_guard lock(mutex_);
  return values_.find(key) != values_.end();
}

std::optional<std::uint64_t> MemoryStore::size(std::string_view key) {
  validate_key(key);
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second.size();
}

void MemoryStore::set(std::string_view key, ByteView value) {
  validate_key(key);
  put(key, stored_copy_of(value));  // copied outside the lock: copying may be slow
}

void MemoryStore::put(std::string_view key, Buffer copy) {
  const WriteScope written(*this, key);
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it != values_.end()) {
    it->second = std::move(copy);
  } else {
    values_.emplace(std::string(key), std::move(copy));
  }
}

void MemoryStore::erase(std::string_view key) {
  validate_key(key);
  const WriteScope erased(*this, key);
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it != values_.end()) values_.erase(it);
}

void MemoryStore::erase_prefix(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  const WriteScope erased(*this, dir, /*below=*/true);
  std::lock_guard lock(mutex_);
  auto [first, last] = range_under(values_, dir);
  values_.erase(first, last);
}

std::vector<std::string> MemoryStore::list(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  std::lock_guard lock(mutex_);
  auto [first, last] = range_under(values_, dir);
  std::vector<std::string> keys;
  for (auto it = first; it != last; ++it) keys.push_back(it->first);
  return keys;
}

}  // namespace zarrkit

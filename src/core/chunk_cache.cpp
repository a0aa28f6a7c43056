#include "core/chunk_cache.h"

#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace zarrkit {
namespace {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

std::uint64_t fnv1a(std::uint64_t hash, std::string_view text) {
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= kFnvPrime;
  }
  return hash;
}

// A chunk's location as the two strings it is made of (the store's identity, the key),
// looked up in maps keyed by their concatenation without building it.
struct Location {
  std::string_view store;
  std::string_view key;
};

struct LocationHash {
  using is_transparent = void;
  std::size_t operator()(const std::string& s) const { return fnv1a(kFnvOffset, s); }
  std::size_t operator()(const Location& l) const { return fnv1a(fnv1a(kFnvOffset, l.store), l.key); }
};

struct LocationEqual {
  using is_transparent = void;
  bool operator()(const std::string& a, const std::string& b) const { return a == b; }
  bool operator()(const std::string& a, const Location& b) const {
    return a.size() == b.store.size() + b.key.size() && a.compare(0, b.store.size(), b.store) == 0 &&
           a.compare(b.store.size(), std::string::npos, b.key) == 0;
  }
  bool operator()(const Location& a, const std::string& b) const { return (*this)(b, a); }
};

// True when the chunk at `location` belongs to `store` and its key is `prefix` or lies below
// the directory `prefix` ("" : everything of the store).
bool is_under(std::string_view location, std::string_view store, std::string_view prefix) {
  if (!location.starts_with(store)) return false;
  const std::string_view key = location.substr(store.size());
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  if (prefix.empty()) return true;
  return key.starts_with(prefix) && (key.size() == prefix.size() || key[prefix.size()] == '/');
}

}  // namespace

struct ChunkCache::Shard {
  struct Entry;
  using Lru = std::list<Entry>;
  struct Members {
    std::uint64_t fingerprint = 0;
    std::unordered_map<std::uint64_t, Lru::iterator> entries;
  };
  using Groups = std::unordered_map<std::string, Members, LocationHash, LocationEqual>;
  struct Entry {
    Groups::value_type* chunk = nullptr;  // the chunk it is (a member of)
    std::uint64_t member = 0;
    std::uint64_t stamp = 0;
    std::uint64_t charge = 0;
    CachedChunk value;
  };

  std::mutex mutex;
  Groups chunks;
  Lru lru;  // front: the most recently used
  // Bumped by every write that reaches this shard (see ticket()).
  std::atomic<std::uint64_t> generation{0};

  // Removes one entry; returns its charge. The chunk goes when its last member does.
  std::uint64_t remove(Lru::iterator it) {
    Groups::value_type* chunk = it->chunk;
    const std::uint64_t charge = it->charge;
    chunk->second.entries.erase(it->member);
    lru.erase(it);
    if (chunk->second.entries.empty()) chunks.erase(chunks.find(chunk->first));
    return charge;
  }

  // Removes every member of `chunk`; returns (entries, charge).
  std::pair<std::uint64_t, std::uint64_t> remove_chunk(Groups::iterator chunk) {
    std::uint64_t count = 0, charge = 0;
    for (auto& [member, it] : chunk->second.entries) {
      charge += it->charge;
      lru.erase(it);
      ++count;
    }
    chunks.erase(chunk);
    return {count, charge};
  }
};

ChunkCache::ChunkCache(std::uint64_t budget) : shards_(std::make_unique<Shard[]>(kShards)), budget_(budget) {}

ChunkCache::~ChunkCache() = default;

ChunkCache::Shard& ChunkCache::shard_of(std::string_view store, std::string_view key) const {
  return shards_[LocationHash{}(Location{store, key}) % kShards];
}

std::optional<CachedChunk> ChunkCache::find(const Key& key) {
  std::optional<CachedChunk> out;
  const std::uint64_t member = key.member;
  find_members(key, std::span(&member, 1), std::span(&out, 1));
  return out;
}

std::size_t ChunkCache::find_members(const Key& key, std::span<const std::uint64_t> members,
                                     std::span<std::optional<CachedChunk>> out) {
  Shard& shard = shard_of(key.store, key.key);
  std::size_t found = 0;
  {
    std::lock_guard lock(shard.mutex);
    const auto chunk = shard.chunks.find(Location{key.store, key.key});
    if (chunk != shard.chunks.end() && chunk->second.fingerprint == key.fingerprint) {
      for (std::size_t i = 0; i < members.size(); ++i) {
        const auto it = chunk->second.entries.find(members[i]);
        if (it == chunk->second.entries.end()) continue;
        it->second->stamp = clock_.fetch_add(1, std::memory_order_relaxed);
        shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
        out[i] = it->second->value;
        ++found;
      }
    }
  }
  return found;
}

std::uint64_t ChunkCache::ticket(const Key& key) {
  return shard_of(key.store, key.key).generation.load(std::memory_order_acquire);
}

void ChunkCache::insert(const Key& key, CachedChunk value, std::uint64_t ticket) {
  const std::uint64_t charge = value.bytes.size() + key.store.size() + key.key.size() + kEntryOverhead;
  if (charge > budget()) return;  // larger than the whole cache (or the cache is off)
  Shard& shard = shard_of(key.store, key.key);
  {
    std::lock_guard lock(shard.mutex);
    if (shard.generation.load(std::memory_order_relaxed) != ticket) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    auto chunk = shard.chunks.find(Location{key.store, key.key});
    if (chunk == shard.chunks.end()) {
      std::string location;
      location.reserve(key.store.size() + key.key.size());
      location.append(key.store).append(key.key);
      chunk = shard.chunks.emplace(std::move(location), Shard::Members{key.fingerprint, {}}).first;
    } else if (chunk->second.fingerprint != key.fingerprint) {
      // Another array's decoding of the same place (re-created since): its entries go.
      std::uint64_t freed = 0;
      for (auto& [member, it] : chunk->second.entries) {
        freed += it->charge;
        shard.lru.erase(it);
      }
      entries_.fetch_sub(chunk->second.entries.size(), std::memory_order_relaxed);
      bytes_.fetch_sub(freed, std::memory_order_relaxed);
      chunk->second.entries.clear();
      chunk->second.fingerprint = key.fingerprint;
    }
    const auto existing = chunk->second.entries.find(key.member);
    if (existing != chunk->second.entries.end()) {
      // Decoded twice at once by two readers: keep one.
      bytes_.fetch_sub(existing->second->charge, std::memory_order_relaxed);
      entries_.fetch_sub(1, std::memory_order_relaxed);
      shard.lru.erase(existing->second);
      chunk->second.entries.erase(existing);
    }
    shard.lru.push_front(Shard::Entry{&*chunk, key.member, clock_.fetch_add(1, std::memory_order_relaxed), charge,
                                      std::move(value)});
    chunk->second.entries.emplace(key.member, shard.lru.begin());
    bytes_.fetch_add(charge, std::memory_order_relaxed);
    entries_.fetch_add(1, std::memory_order_relaxed);
  }
  insertions_.fetch_add(1, std::memory_order_relaxed);
  evict_to(budget());
}

void ChunkCache::invalidate(std::string_view store, std::string_view key) {
  Shard& shard = shard_of(store, key);
  std::lock_guard lock(shard.mutex);
  shard.generation.fetch_add(1, std::memory_order_release);
  const auto chunk = shard.chunks.find(Location{store, key});
  if (chunk == shard.chunks.end()) return;
  const auto [count, charge] = shard.remove_chunk(chunk);
  entries_.fetch_sub(count, std::memory_order_relaxed);
  bytes_.fetch_sub(charge, std::memory_order_relaxed);
  invalidations_.fetch_add(count, std::memory_order_relaxed);
}

void ChunkCache::invalidate_prefix(std::string_view store, std::string_view prefix) {
  for (std::size_t s = 0; s < kShards; ++s) {
    Shard& shard = shards_[s];
    std::lock_guard lock(shard.mutex);
    shard.generation.fetch_add(1, std::memory_order_release);
    for (auto chunk = shard.chunks.begin(); chunk != shard.chunks.end();) {
      const auto next = std::next(chunk);
      if (is_under(chunk->first, store, prefix)) {
        const auto [count, charge] = shard.remove_chunk(chunk);
        entries_.fetch_sub(count, std::memory_order_relaxed);
        bytes_.fetch_sub(charge, std::memory_order_relaxed);
        invalidations_.fetch_add(count, std::memory_order_relaxed);
      }
      chunk = next;
    }
  }
}

void ChunkCache::clear() {
  for (std::size_t s = 0; s < kShards; ++s) {
    Shard& shard = shards_[s];
    std::lock_guard lock(shard.mutex);
    shard.generation.fetch_add(1, std::memory_order_release);
    std::uint64_t charge = 0;
    for (const Shard::Entry& e : shard.lru) charge += e.charge;
    entries_.fetch_sub(shard.lru.size(), std::memory_order_relaxed);
    bytes_.fetch_sub(charge, std::memory_order_relaxed);
    shard.lru.clear();
    shard.chunks.clear();
  }
}

void ChunkCache::set_budget(std::uint64_t budget) {
  budget_.store(budget, std::memory_order_relaxed);
  evict_to(budget);
}

void ChunkCache::evict_to(std::uint64_t budget) {
  while (bytes_.load(std::memory_order_relaxed) > budget) {
    if (!evict_oldest()) break;
  }
}

bool ChunkCache::evict_oldest() {
  // The shards' oldest entries, the oldest of them taken out. Another thread may take it
  // first: then the next oldest goes, and the caller checks the budget again.
  std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
  std::size_t where = kShards;
  for (std::size_t s = 0; s < kShards; ++s) {
    std::lock_guard lock(shards_[s].mutex);
    if (!shards_[s].lru.empty() && shards_[s].lru.back().stamp < oldest) {
      oldest = shards_[s].lru.back().stamp;
      where = s;
    }
  }
  if (where == kShards) return false;
  Shard& shard = shards_[where];
  std::lock_guard lock(shard.mutex);
  if (shard.lru.empty()) return true;
  bytes_.fetch_sub(shard.remove(std::prev(shard.lru.end())), std::memory_order_relaxed);
  entries_.fetch_sub(1, std::memory_order_relaxed);
  evictions_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ChunkCache::count(std::uint64_t hits, std::uint64_t misses) {
  if (hits > 0) hits_.fetch_add(hits, std::memory_order_relaxed);
  if (misses > 0) misses_.fetch_add(misses, std::memory_order_relaxed);
}

ChunkCacheStats ChunkCache::stats() const {
  ChunkCacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.insertions = insertions_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  s.invalidations = invalidations_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.entries = entries_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.budget = budget();
  return s;
}

// ---- The caches of the process -----------------------------------------------------------

namespace {

// Every cache writes must reach: the process's, arrays' own, devices'. Set once any cache
// is made, so that writes cost nothing in processes that never cache.
std::atomic<bool> g_caches_exist{false};
std::mutex g_registry_mutex;
std::vector<std::weak_ptr<ChunkCache>> g_registry;

std::shared_ptr<ChunkCache> register_cache(std::shared_ptr<ChunkCache> cache) {
  std::lock_guard lock(g_registry_mutex);
  std::erase_if(g_registry, [](const std::weak_ptr<ChunkCache>& c) { return c.expired(); });
  g_registry.push_back(cache);
  g_caches_exist.store(true);
  return cache;
}

std::vector<std::shared_ptr<ChunkCache>> registered_caches() {
  std::vector<std::shared_ptr<ChunkCache>> out;
  std::lock_guard lock(g_registry_mutex);
  out.reserve(g_registry.size());
  for (const auto& weak : g_registry) {
    if (auto cache = weak.lock()) out.push_back(std::move(cache));
  }
  return out;
}

std::mutex g_process_mutex;
std::shared_ptr<ChunkCache> g_process_cache;
std::atomic<ChunkCache*> g_process_cache_ptr{nullptr};

std::mutex g_device_mutex;
std::map<int, std::shared_ptr<ChunkCache>> g_device_caches;  // by CUDA device

}  // namespace

ChunkCache* process_chunk_cache(std::uint64_t budget) {
  ChunkCache* cache = g_process_cache_ptr.load(std::memory_order_acquire);
  if (cache == nullptr) {
    if (budget == 0) return nullptr;
    std::lock_guard lock(g_process_mutex);
    if (!g_process_cache) {
      g_process_cache = register_cache(std::make_shared<ChunkCache>(budget));
      g_process_cache_ptr.store(g_process_cache.get(), std::memory_order_release);
    }
    cache = g_process_cache.get();
  }
  if (cache->budget() != budget) cache->set_budget(budget);
  return budget > 0 ? cache : nullptr;
}

ChunkCache* device_chunk_cache(int device, std::uint64_t budget) {
  ChunkCache* cache = nullptr;
  {
    std::lock_guard lock(g_device_mutex);
    auto it = g_device_caches.find(device);
    if (it == g_device_caches.end()) {
      if (budget == 0) return nullptr;
      it = g_device_caches.emplace(device, register_cache(std::make_shared<ChunkCache>(budget))).first;
    }
    cache = it->second.get();
  }
  if (cache->budget() != budget) cache->set_budget(budget);
  return budget > 0 ? cache : nullptr;
}

ChunkCacheStats device_chunk_cache_stats(int device) {
  std::lock_guard lock(g_device_mutex);
  const auto it = g_device_caches.find(device);
  return it != g_device_caches.end() ? it->second->stats() : ChunkCacheStats{};
}

std::shared_ptr<ChunkCache> make_registered_chunk_cache(std::uint64_t budget) {
  return register_cache(std::make_shared<ChunkCache>(budget));
}

bool chunk_caches_exist() { return g_caches_exist.load(); }

void invalidate_chunk_caches(std::string_view store, std::string_view key) {
  // Readers take their ticket after a cache exists (tickets come from caches): a write
  // that finds none here completed before any reader could fetch what it replaced.
  if (!g_caches_exist.load()) return;
  for (const auto& cache : registered_caches()) cache->invalidate(store, key);
}

void invalidate_chunk_caches_under(std::string_view store, std::string_view prefix) {
  if (!g_caches_exist.load()) return;
  for (const auto& cache : registered_caches()) cache->invalidate_prefix(store, prefix);
}

ChunkCacheStats chunk_cache_stats() {
  ChunkCache* cache = g_process_cache_ptr.load(std::memory_order_acquire);
  return cache != nullptr ? cache->stats() : ChunkCacheStats{};
}

void clear_chunk_caches() {
  for (const auto& cache : registered_caches()) cache->clear();
}

std::uint64_t fingerprint_of(std::string_view text) { return fnv1a(kFnvOffset, text); }

}  // namespace zarrkit

// The parts of the Store interface that every store shares: key validation, key joining,
// byte-range arithmetic, and default methods built on get/set/erase/list.
#include "zarrkit/store.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>

#include "core/chunk_cache.h"
#include "zarrkit/chunk_cache.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// The key as it may be shown in an error message: control bytes (NUL included) become
// \xNN so that a hostile key cannot garble a terminal or a log line.
std::string printable(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '\\' || c == '"') {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

[[noreturn]] void bad_key(std::string_view what, std::string_view key, std::string_view why) {
  fail_invalid("invalid store {} \"{}\": {}", what, printable(key), why);
}

void check_key(std::string_view what, std::string_view key) {
  if (key.empty()) bad_key(what, key, "it is empty");
  if (key.front() == '/') bad_key(what, key, "it starts with '/' (keys are relative)");
  for (char c : key) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\0') bad_key(what, key, "it contains a NUL byte");
    if (c == '\\') bad_key(what, key, "it contains a backslash");
    if (u < 0x20 || u == 0x7f) bad_key(what, key, "it contains a control character");
  }
  std::size_t begin = 0;
  while (begin <= key.size()) {
    std::size_t end = key.find('/', begin);
    if (end == std::string_view::npos) end = key.size();
    std::string_view segment = key.substr(begin, end - begin);
    if (segment.empty()) bad_key(what, key, "it has an empty path segment");
    if (segment == "." || segment == "..") {
      bad_key(what, key, fmt::format("it has a \"{}\" path segment", segment));
    }
    begin = end + 1;
  }
}

}  // namespace

void validate_key(std::string_view key) { check_key("key", key); }

void validate_prefix(std::string_view prefix) {
  if (prefix.empty()) return;
  if (prefix.back() == '/') prefix.remove_suffix(1);
  check_key("prefix", prefix);
}

std::string join_key(std::string_view a, std::string_view b) {
  while (!a.empty() && a.back() == '/') a.remove_suffix(1);
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out;
  out.reserve(a.size() + 1 + b.size());
  out.append(a).append("/").append(b);
  return out;
}

std::string_view normalize_prefix(std::string_view prefix) {
  validate_prefix(prefix);
  if (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return prefix;
}

bool key_is_under(std::string_view key, std::string_view dir) {
  if (dir.empty()) return true;
  return key.size() > dir.size() && key.starts_with(dir) && key[dir.size()] == '/';
}

std::pair<std::uint64_t, std::uint64_t> ByteRange::resolve(std::uint64_t value_size) const {
  switch (kind) {
    case Kind::kRange: {
      std::uint64_t begin = std::min(start, value_size);
      std::uint64_t stop = std::clamp(end, begin, value_size);
      return {begin, stop};
    }
    case Kind::kFromOffset:
      return {std::min(start, value_size), value_size};
    case Kind::kSuffix:
      return {value_size - std::min(suffix, value_size), value_size};
  }
  return {0, 0};
}

std::optional<std::vector<Buffer>> Store::get_ranges(std::string_view key,
                                                     std::span<const ByteRange> ranges,
                                                     const BufferPrototype& prototype) {
  std::vector<Buffer> parts;
  parts.reserve(ranges.size());
  for (const ByteRange& range : ranges) {
    auto part = get(key, prototype, range);
    // The value vanished between two reads: report it absent rather than half of it.
    if (!part) return std::nullopt;
    parts.push_back(std::move(*part));
  }
  if (ranges.empty() && !exists(key)) return std::nullopt;
  return parts;
}

std::vector<std::optional<Buffer>> Store::get_many(std::span<const std::string> keys,
                                                  const BufferPrototype& prototype) {
  std::vector<std::optional<Buffer>> values;
  values.reserve(keys.size());
  for (const std::string& key : keys) values.push_back(get(key, prototype));
  return values;
}

void Store::get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                     const ValueHandler& on_value) {
  std::vector<std::optional<Buffer>> values = get_many(keys, prototype);
  for (std::size_t i = 0; i < values.size(); ++i) on_value(i, std::move(values[i]));
}

std::optional<std::uint64_t> Store::read_into(std::string_view key, std::span<const ByteRange> ranges,
                                              std::span<const MutableByteView> dests) {
  if (ranges.size() != dests.size()) {
    fail_invalid("read_into: {} ranges but {} destinations", ranges.size(), dests.size());
  }
  const auto value = get(key, BufferPrototype::host());
  if (!value) return std::nullopt;
  const ByteView bytes = value->view();
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto [begin, end] = ranges[i].resolve(bytes.size());
    if (end - begin > dests[i].size()) {
      fail_invalid("read_into: range {} has {} bytes, its destination {}", i, end - begin, dests[i].size());
    }
    if (end > begin) std::memcpy(dests[i].data(), bytes.data() + begin, end - begin);
  }
  return bytes.size();
}

std::unique_ptr<ByteSource> Store::open_reader(std::string_view key) {
  std::optional<Buffer> value = get(key, BufferPrototype::host());
  if (!value) return nullptr;
  return std::make_unique<MemorySource>(std::move(*value));
}

bool Store::exists(std::string_view key) {
  // An empty range reads nothing but still tells whether the value is there.
  return get(key, BufferPrototype::host(), ByteRange::range(0, 0)).has_value();
}

std::optional<std::uint64_t> Store::size(std::string_view key) {
  auto value = get(key, BufferPrototype::host(), std::nullopt);
  if (!value) return std::nullopt;
  return value->size();
}

void Store::erase_prefix(std::string_view prefix) {
  validate_prefix(prefix);
  for (const std::string& key : list(prefix)) erase(key);
}

DirListing Store::list_dir(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  std::set<std::string, std::less<>> keys;
  std::set<std::string, std::less<>> prefixes;
  for (const std::string& key : list(dir)) {
    if (!key_is_under(key, dir)) continue;
    std::string_view rest = std::string_view(key).substr(dir.empty() ? 0 : dir.size() + 1);
    std::size_t slash = rest.find('/');
    if (slash == std::string_view::npos) {
      keys.emplace(rest);
    } else {
      prefixes.emplace(rest.substr(0, slash));
    }
  }
  return {{keys.begin(), keys.end()}, {prefixes.begin(), prefixes.end()}};
}

std::unique_ptr<UpdateLock> Store::lock_for_update(std::string_view key) {
  (void)key;
  return nullptr;
}

void Store::update(std::string_view key, const UpdateFunction& change) {
  const std::unique_ptr<UpdateLock> lock = lock_for_update(key);
  std::optional<Buffer> next = change(get(key));
  if (next) {
    set(key, next->view());
  } else {
    erase(key);
  }
}

std::uint64_t Store::next_instance() {
  static std::atomic<std::uint64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::string Store::cache_identity() const { return fmt::format("store#{}/", instance_); }

void forget_cached_chunks(const Store& store, std::string_view prefix) {
  if (chunk_caches_exist()) invalidate_chunk_caches_under(store.cache_identity(), prefix);
}

Store::WriteScope::WriteScope(const Store& store, std::string_view key, bool below)
    : store_(store), key_(key), below_(below) {}

Store::WriteScope::~WriteScope() {
  if (!chunk_caches_exist()) return;
  try {
    const std::string store = store_.cache_identity();
    if (below_) {
      invalidate_chunk_caches_under(store, key_);
    } else {
      invalidate_chunk_caches(store, key_);
    }
  } catch (...) {
    // Out of memory naming the store: drop everything rather than keep what may be stale.
    try {
      clear_chunk_caches();
    } catch (...) {
    }
  }
}

}  // namespace zarrkit

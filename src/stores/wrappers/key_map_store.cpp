#include "stores/wrappers/key_map_store.h"

#include <algorithm>
#include <cstring>

#include "stores/host_value.h"
#include "zarrkit/error.h"

namespace zarrkit {

KeyMapStore::KeyMapStore(std::shared_ptr<Store> inner, std::map<std::string, std::string, std::less<>> renames,
                         std::map<std::string, Buffer, std::less<>> held)
    : inner_(std::move(inner)), renames_(std::move(renames)), held_(std::move(held)) {
  for (const auto& [key, inner_key] : renames_) {
    validate_key(key);
    validate_key(inner_key);
  }
  for (const auto& [key, value] : held_) {
    validate_key(key);
    if (!is_host_accessible(value.kind())) fail_invalid("a key map store holds host values only (\"{}\")", key);
  }
}

StoreCapabilities KeyMapStore::capabilities() const {
  StoreCapabilities inner = inner_->capabilities();
  return {.writable = false, .listable = true, .partial_reads = inner.partial_reads};
}

std::string KeyMapStore::describe() const { return "key map of " + inner_->describe(); }

const std::string* KeyMapStore::inner_key(std::string_view key) const {
  auto it = renames_.find(key);
  return it == renames_.end() ? nullptr : &it->second;
}

void KeyMapStore::refuse(std::string_view operation, std::string_view key) const {
  fail_unsupported("cannot {} \"{}\": {} is read-only", operation, key, describe());
}

std::optional<Buffer> KeyMapStore::get(std::string_view key, const BufferPrototype& prototype,
                                       std::optional<ByteRange> range) {
  validate_key(key);
  if (const std::string* inner = inner_key(key)) return inner_->get(*inner, prototype, range);
  auto it = held_.find(key);
  if (it == held_.end()) return std::nullopt;
  return host_value_for(range_of(it->second, range), prototype, describe(), key);  // held values are never modified
}

std::optional<std::vector<Buffer>> KeyMapStore::get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                           const BufferPrototype& prototype) {
  validate_key(key);
  if (const std::string* inner = inner_key(key)) return inner_->get_ranges(*inner, ranges, prototype);
  return Store::get_ranges(key, ranges, prototype);
}

std::optional<std::uint64_t> KeyMapStore::read_into(std::string_view key, std::span<const ByteRange> ranges,
                                                    std::span<const MutableByteView> dests) {
  validate_key(key);
  if (const std::string* inner = inner_key(key)) return inner_->read_into(*inner, ranges, dests);
  return Store::read_into(key, ranges, dests);
}

bool KeyMapStore::exists(std::string_view key) {
  validate_key(key);
  if (const std::string* inner = inner_key(key)) return inner_->exists(*inner);
  return held_.find(key) != held_.end();
}

std::optional<std::uint64_t> KeyMapStore::size(std::string_view key) {
  validate_key(key);
  if (const std::string* inner = inner_key(key)) return inner_->size(*inner);
  auto it = held_.find(key);
  if (it == held_.end()) return std::nullopt;
  return it->second.size();
}

void KeyMapStore::set(std::string_view key, ByteView) { refuse("write", key); }
void KeyMapStore::erase(std::string_view key) { refuse("erase", key); }
void KeyMapStore::erase_prefix(std::string_view prefix) { refuse("erase below", prefix); }

std::vector<std::string> KeyMapStore::list(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  std::vector<std::string> keys;
  for (const auto& [key, inner] : renames_) {
    if (key_is_under(key, dir) && inner_->exists(inner)) keys.push_back(key);
  }
  for (const auto& [key, value] : held_) {
    if (key_is_under(key, dir)) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace zarrkit

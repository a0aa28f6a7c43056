#include "engine/fetched_store.h"

#include <cstring>

#include "stores/host_value.h"
#include "zarrkit/error.h"

namespace zarrkit {

FetchedStore::FetchedStore(std::shared_ptr<Store> inner, Fetched fetched)
    : inner_(std::move(inner)), fetched_(std::move(fetched)) {
  for (const auto& [key, value] : fetched_) {
    validate_key(key);
    if (value && !is_host_accessible(value->kind())) fail_invalid("fetched values live in host memory (\"{}\")", key);
  }
}

const std::optional<Buffer>* FetchedStore::find(std::string_view key) const {
  auto it = fetched_.find(key);
  return it == fetched_.end() ? nullptr : &it->second;
}

std::optional<Buffer> FetchedStore::get(std::string_view key, const BufferPrototype& prototype,
                                        std::optional<ByteRange> range) {
  const std::optional<Buffer>* entry = find(key);
  if (entry == nullptr) return inner_->get(key, prototype, range);
  if (!*entry) return std::nullopt;
  return host_value_for(range_of(**entry, range), prototype, describe(), key);  // fetched bytes are never modified
}

std::optional<std::vector<Buffer>> FetchedStore::get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                            const BufferPrototype& prototype) {
  if (find(key) == nullptr) return inner_->get_ranges(key, ranges, prototype);
  return Store::get_ranges(key, ranges, prototype);  // get() per range: slices of the fetched value
}

std::optional<std::uint64_t> FetchedStore::read_into(std::string_view key, std::span<const ByteRange> ranges,
                                                     std::span<const MutableByteView> dests) {
  if (find(key) == nullptr) return inner_->read_into(key, ranges, dests);
  return Store::read_into(key, ranges, dests);
}

bool FetchedStore::exists(std::string_view key) {
  const std::optional<Buffer>* entry = find(key);
  return entry == nullptr ? inner_->exists(key) : entry->has_value();
}

std::optional<std::uint64_t> FetchedStore::size(std::string_view key) {
  const std::optional<Buffer>* entry = find(key);
  if (entry == nullptr) return inner_->size(key);
  if (!*entry) return std::nullopt;
  return (*entry)->size();
}

}  // namespace zarrkit

// The values of one batch of keys already fetched from a store (Store::get_many), in front
// of that store: reads of a fetched key are served from the fetched bytes (an absent one is
// absent without asking again), every other call goes to the store itself. Reads only; the
// engine builds one per window of chunks it fetched together (chunk_read.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "zarrkit/store.h"

namespace zarrkit {

class FetchedStore : public Store {
 public:
  using Fetched = std::map<std::string, std::optional<Buffer>, std::less<>>;
  FetchedStore(std::shared_ptr<Store> inner, Fetched fetched);

  StoreCapabilities capabilities() const override { return inner_->capabilities(); }
  // The inner store's: errors name the store the data came from.
  std::string describe() const override { return inner_->describe(); }
  std::string cache_identity() const override { return inner_->cache_identity(); }
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype = BufferPrototype::host()) override;
  std::optional<std::uint64_t> read_into(std::string_view key, std::span<const ByteRange> ranges,
                                         std::span<const MutableByteView> dests) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override { inner_->set(key, value); }
  void erase(std::string_view key) override { inner_->erase(key); }
  std::unique_ptr<UpdateLock> lock_for_update(std::string_view key) override { return inner_->lock_for_update(key); }
  std::vector<std::string> list(std::string_view prefix = "") override { return inner_->list(prefix); }

 private:
  // The fetched entry of `key`, or nullptr when `key` was not part of the batch.
  const std::optional<Buffer>* find(std::string_view key) const;

  std::shared_ptr<Store> inner_;
  Fetched fetched_;
};

}  // namespace zarrkit

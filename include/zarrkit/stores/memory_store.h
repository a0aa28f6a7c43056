// An in-memory store: a sorted map from key to bytes, guarded by a mutex. Values are
// immutable once stored (set replaces the whole value), so a host read returns a view
// sharing the stored bytes (no copy) that stays valid after the key is overwritten or
// erased. Reads for pinned memory copy into the prototype's memory; device prototypes are
// refused with UnsupportedError (the GPU stores fill device memory).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "zarrkit/store.h"

namespace zarrkit {

class MemoryStore : public Store {
 public:
  MemoryStore() = default;
  static std::shared_ptr<MemoryStore> create() { return std::make_shared<MemoryStore>(); }

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  // Defaults repeated from Store so that calls through the concrete type may omit them.
  std::optional<Buffer> get(std::string_view key,
                            const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;  // under one lock
  std::vector<std::string> list(std::string_view prefix = "") override;

 protected:
  // Where values live (GpuMemoryStore keeps them in device memory): the stored copy of a
  // value, and the bytes a read returns from `part` of a stored value in the memory
  // `prototype` asks for (a view of the stored value where that is the same memory).
  virtual Buffer stored_copy_of(ByteView value) const;
  virtual Buffer deliver(std::string_view key, const Buffer& part, const BufferPrototype& prototype) const;
  // Stores `value` (already in the store's own memory) under `key`.
  void put(std::string_view key, Buffer value);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Buffer, std::less<>> values_;
};

}  // namespace zarrkit

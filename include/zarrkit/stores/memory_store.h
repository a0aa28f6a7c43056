// An in-memory store: a sorted map from key to bytes, guarded by a mutex. Values are
// immutable once stored (set replaces the whole value), so readers get shared buffers.
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
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  std::vector<std::string> list(std::string_view prefix) override;

  using Store::get;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Buffer, std::less<>> values_;
};

}  // namespace zarrkit

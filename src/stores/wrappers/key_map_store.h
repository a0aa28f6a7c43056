// A read-only view of another store under other names: each key of the view maps to a key
// of the inner store, and a few values (metadata documents) can be held by the view itself.
// Keys neither mapped nor held are absent.
//
// zarrkit uses it to read an arbitrary list of another array's chunks as the chunks of a
// temporary array (zarr-python's GPU reads through zarrkit's codec pipeline): the chunks are
// read straight from the inner store, under the temporary array's chunk keys, with no copy.
// The engine also uses it to serve chunks it fetched in one batch from a remote store
// (held values, shared with host reads without a copy).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "zarrkit/store.h"

namespace zarrkit {

class KeyMapStore : public Store {
 public:
  // `renames`: view key -> inner key. `held`: view key -> value held by the view.
  KeyMapStore(std::shared_ptr<Store> inner, std::map<std::string, std::string, std::less<>> renames,
              std::map<std::string, Buffer, std::less<>> held);

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype = BufferPrototype::host()) override;
  std::optional<std::uint64_t> read_into(std::string_view key, std::span<const ByteRange> ranges,
                                         std::span<const MutableByteView> dests) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;

 private:
  // The inner key `key` maps to, or nullptr.
  const std::string* inner_key(std::string_view key) const;
  [[noreturn]] void refuse(std::string_view operation, std::string_view key) const;

  std::shared_ptr<Store> inner_;
  std::map<std::string, std::string, std::less<>> renames_;
  std::map<std::string, Buffer, std::less<>> held_;
};

}  // namespace zarrkit

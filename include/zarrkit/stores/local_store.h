// A store over a local directory. Keys map to files below the root ("a/c/0/1" ->
// ROOT/a/c/0/1). Writes go to a temporary file in the same directory and are renamed into
// place, so a reader or a crash sees the old value or the new one, never a mix. With
// `durable` the file and its directory are fsynced before a write returns. Keys are
// validated and resolved paths are checked to stay inside the root.
#pragma once

#include <filesystem>
#include <memory>

#include "zarrkit/store.h"

namespace zarrkit {

struct LocalStoreOptions {
  bool read_only = false;
  bool durable = false;  // fsync file and directory on every write
  bool create = true;    // create the root directory if missing (when writable)
};

class LocalStore : public Store {
 public:
  explicit LocalStore(std::filesystem::path root, LocalStoreOptions options = {});
  static std::shared_ptr<LocalStore> open(std::filesystem::path root, LocalStoreOptions options = {});

  const std::filesystem::path& root() const { return root_; }

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  // Defaults repeated from Store so that calls through the concrete type may omit them.
  std::optional<Buffer> get(std::string_view key,
                            const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key,
                                                std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype =
                                                    BufferPrototype::host()) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;
  DirListing list_dir(std::string_view prefix) override;

 private:
  std::filesystem::path path_for(std::string_view key) const;
  std::filesystem::path root_;
  LocalStoreOptions options_;
};

}  // namespace zarrkit

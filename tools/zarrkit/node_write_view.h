// Writing a whole node (cp, import) into a store that cannot rename (S3, memory): the view of
// the store the writer writes through, and the commit that puts the finished node in place.
//
// Through the view the writer sees only what it wrote itself: the node's metadata documents
// are held in memory (none reaches the store before the commit), and every other key under the
// node goes to the store, under the node itself ("in place") or under a hidden prefix inside
// it (".new-node.zarrkit-tmp.<pid>-<random>/", "beside"); a key under the node that the writer
// did not write reads as absent, so an old node or a killed writer's leftovers never leak into
// the new one. Keys outside the node (ancestor groups) pass through.
//
// commit() then, in this order:
//   beside: removes every metadata document of the old node (the node's own first): from here
//           the destination reads as absent; copies the written keys into place (server-side
//           on S3);
//   both:   removes the keys that were under the node when the write began and that the new
//           node does not have (the old node's, and those a killed writer left);
//           writes the held metadata, the node's own document last;
//   beside: removes the hidden prefix.
// So an old node stays whole and readable until the new one is complete, a reader never sees
// a node made of old and new parts, and a write killed at any moment leaves the old node, or
// no node at the destination (no metadata: recognisably unfinished), never a partial node that
// reads as finished. What a killed writer left under the node is removed by the next commit
// there (a write with --overwrite).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "zarrkit/store.h"

namespace zarrkit::cli {

class NodeWriteView final : public Store {
 public:
  enum class Placement { kInPlace, kBeside };
  // `node`: the node's path in `base` ("" for the root). `old_keys`: the keys under the node
  // before the write, removed by commit() unless the new node has them (empty: remove
  // nothing).
  NodeWriteView(std::shared_ptr<Store> base, std::string node, Placement placement, std::vector<std::string> old_keys);

  // Puts the node in place (see the file comment). IoError (or the store's error) when a step
  // fails; after its first step an old node is gone and the destination holds no node.
  void commit();
  // Removes the hidden prefix of a write that is not committed (best effort).
  void discard() noexcept;

  Placement placement() const { return placement_; }
  // The hidden prefix the written keys go to until commit (kBeside), else "".
  const std::string& staging() const { return staging_; }

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;

 private:
  bool under_node(std::string_view key) const;       // a key below the node's directory
  bool dir_within_node(std::string_view dir) const;  // the node's directory or one below it
  // Where a written key under the node is stored until commit.
  std::string stored_key(std::string_view key) const;
  // The keys the view shows under `dir` (normalized): held documents and written keys.
  std::vector<std::string> view_keys_under(std::string_view dir) const;
  void copy_into_place(const std::map<std::string, std::uint64_t, std::less<>>& keys);

  std::shared_ptr<Store> base_;
  std::string node_;
  Placement placement_;
  std::string staging_;
  std::vector<std::string> old_keys_;
  mutable std::mutex mutex_;
  std::map<std::string, Buffer, std::less<>> held_;  // metadata documents under the node
  std::map<std::string, std::uint64_t, std::less<>> written_;  // other keys under the node (final names), sizes
};

// True for the names of metadata documents: zarr.json, .zarray, .zattrs, .zgroup, .zmetadata.
bool is_metadata_document_key(std::string_view key);

}  // namespace zarrkit::cli

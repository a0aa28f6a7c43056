// Replacing a whole node in a store that cannot rename (here a MemoryStore, as on S3): the old
// node stays whole and readable until the new one is complete, an interrupted commit leaves
// no node (never a mix that reads as finished), and the next overwrite removes what it left.
#include "zarrkit/node_write_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/group.h"
#include "zarrkit/staged_write.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit::cli {
namespace {

// A memory store whose writes and erases fail once `budget` of them have run (a writer that
// dies or loses its connection in the middle of a commit).
class FailingStore final : public MemoryStore {
 public:
  int budget = -1;  // -1: never fail
  void set(std::string_view key, ByteView value) override {
    spend(key);
    MemoryStore::set(key, value);
  }
  void erase(std::string_view key) override {
    spend(key);
    MemoryStore::erase(key);
  }

 private:
  void spend(std::string_view key) {
    if (budget == 0) fail_io("injected failure writing \"{}\"", key);
    if (budget > 0) --budget;
  }
};

ArrayMetadata metadata(Shape shape, Shape chunks, int zarr_format = 3) {
  ArraySpec spec;
  spec.zarr_format = zarr_format;
  spec.shape = std::move(shape);
  spec.chunks = std::move(chunks);
  spec.dtype = DataType::int_(32);
  return make_array_metadata(spec, CodecRegistry::builtin());
}

std::vector<std::int32_t> values(std::size_t n, std::int32_t first) {
  std::vector<std::int32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

void write_all(Array& a, std::vector<std::int32_t> data) {
  a.write({}, NDView{reinterpret_cast<std::byte*>(data.data()), a.shape(), NDView::c_strides(a.shape(), 4), a.dtype()});
}

std::vector<std::int32_t> read_all(const std::shared_ptr<Store>& store, const std::string& path) {
  const NDBuffer out = Array::open(store, path).read();
  const auto* p = reinterpret_cast<const std::int32_t*>(out.data());
  return {p, p + out.nbytes() / 4};
}

// Writes a new array through a StagedNodeWrite the way `zarrkit cp` and `import` do; returns
// it before the commit.
std::unique_ptr<StagedNodeWrite> stage_array(const std::shared_ptr<Store>& store, const std::string& path,
                                             const ArrayMetadata& m, std::vector<std::int32_t> data) {
  auto staged = std::make_unique<StagedNodeWrite>(StoreLocation{store, path}, /*overwrite=*/true, m.zarr_format);
  Array a = Array::create(staged->target().store, path, m, true, Array::MetadataWrite::kLast);
  write_all(a, std::move(data));
  a.write_metadata();
  return staged;
}

bool has_temporaries(Store& store) {
  const auto keys = store.list();
  return std::any_of(keys.begin(), keys.end(), [](const std::string& k) { return k.find(".zarrkit-tmp.") != std::string::npos; });
}

TEST(NodeWriteView, AnOverwriteKeepsTheOldArrayWholeUntilTheNewOneIsComplete) {
  auto store = std::make_shared<MemoryStore>();
  Array old = Array::create(store, "a", metadata({6, 8}, {3, 4}));
  write_all(old, values(48, 0));
  const auto old_keys = store->list("a");

  auto staged = stage_array(store, "a", metadata({4, 4}, {2, 2}), values(16, 100));
  // Written, not committed: the old array reads as it was, and nothing of the new one shows.
  EXPECT_EQ(read_all(store, "a"), values(48, 0));
  for (const std::string& key : old_keys) {
    EXPECT_TRUE(store->exists(key)) << key;
  }
  EXPECT_TRUE(has_temporaries(*store));  // the new chunks, under a hidden prefix in the node

  staged->commit();
  EXPECT_EQ(read_all(store, "a"), values(16, 100));
  EXPECT_FALSE(has_temporaries(*store));
  // Only the new array's keys: its zarr.json and its 2x2 chunks; the old chunks are gone.
  const auto keys = store->list("a");
  EXPECT_EQ(keys.size(), 5u) << fmt::format("{}", fmt::join(keys, " "));
}

TEST(NodeWriteView, AnUncommittedWriteLeavesTheOldNodeAndNoTemporaries) {
  auto store = std::make_shared<MemoryStore>();
  Array old = Array::create(store, "a", metadata({6, 8}, {3, 4}));
  write_all(old, values(48, 0));
  const auto before = store->list();
  { auto staged = stage_array(store, "a", metadata({6, 8}, {3, 4}), values(48, 7)); }  // a write that failed
  EXPECT_EQ(store->list(), before);
  EXPECT_EQ(read_all(store, "a"), values(48, 0));
}

TEST(NodeWriteView, AnInterruptedCommitLeavesNoNodeAndTheNextOverwriteCleansUp) {
  for (int budget = 0; budget < 40; budget += 3) {
    auto store = std::make_shared<FailingStore>();
    Array old = Array::create(store, "a", metadata({6, 8}, {3, 4}));
    write_all(old, values(48, 0));
    auto staged = stage_array(store, "a", metadata({6, 8}, {2, 8}), values(48, 500));
    store->budget = budget;
    try {
      staged->commit();
    } catch (const IoError&) {
    }
    store->budget = -1;
    // Old whole (failed before the first step), new whole (after the last), or no array at
    // all: never one that reads as finished with old and new parts.
    std::vector<std::int32_t> got;
    try {
      got = read_all(store, "a");
    } catch (const NotFoundError&) {
      got.clear();
    }
    EXPECT_TRUE(got.empty() || got == values(48, 0) || got == values(48, 500)) << "budget " << budget;
    staged.reset();
    // The next overwrite completes and leaves only its own keys.
    stage_array(store, "a", metadata({6, 8}, {6, 8}), values(48, 9))->commit();
    EXPECT_EQ(read_all(store, "a"), values(48, 9));
    EXPECT_EQ(store->list("a").size(), 2u) << "budget " << budget << ": " << fmt::format("{}", fmt::join(store->list("a"), " "));
  }
}

TEST(NodeWriteView, AHierarchyIsReplacedWholeAndItsMembersVanishTogether) {
  auto store = std::make_shared<MemoryStore>();
  Group::create(store, "g", 3);
  for (const char* member : {"g/x", "g/y"}) {
    Array a = Array::create(store, member, metadata({4}, {2}));
    write_all(a, values(4, 1));
  }
  StagedNodeWrite staged(StoreLocation{store, "g"}, /*overwrite=*/true, 3);
  const auto& target = staged.target();
  Group::create(target.store, "g", 3, {{"new", true}}, /*overwrite=*/true);
  Array z = Array::create(target.store, "g/z", metadata({4}, {4}), false, Array::MetadataWrite::kLast);
  write_all(z, values(4, 50));
  z.write_metadata();
  // Before the commit the old members open by their paths, and the new one does not exist.
  EXPECT_EQ(read_all(store, "g/x"), values(4, 1));
  EXPECT_THROW(Array::open(store, "g/z"), NotFoundError);
  staged.commit();
  EXPECT_EQ(Group::open(store, "g").attributes(), (nlohmann::json{{"new", true}}));
  EXPECT_EQ(read_all(store, "g/z"), values(4, 50));
  EXPECT_THROW(Array::open(store, "g/x"), NotFoundError);
  EXPECT_TRUE(store->list("g/x").empty());
  EXPECT_FALSE(has_temporaries(*store));
}

TEST(NodeWriteView, ANewNodeIsWrittenInPlaceWithItsMetadataLast) {
  auto store = std::make_shared<MemoryStore>();
  store->set("n/notes.txt", as_bytes("not zarr"));  // files but no node: kept without overwrite
  StagedNodeWrite staged(StoreLocation{store, "n"}, /*overwrite=*/false, 3);
  Array a = Array::create(staged.target().store, "n", metadata({4}, {2}), false, Array::MetadataWrite::kLast);
  write_all(a, values(4, 3));
  a.write_metadata();
  EXPECT_TRUE(store->exists("n/c/0"));        // in place
  EXPECT_FALSE(store->exists("n/zarr.json"));  // no node until the commit
  staged.commit();
  EXPECT_EQ(read_all(store, "n"), values(4, 3));
  EXPECT_TRUE(store->exists("n/notes.txt"));
}

TEST(NodeWriteView, TheWriterNeverSeesKeysItDidNotWrite) {
  auto store = std::make_shared<MemoryStore>();
  store->set("n/c/0", as_bytes("left by a killed writer"));
  NodeWriteView view(store, "n", NodeWriteView::Placement::kInPlace, store->list("n"));
  EXPECT_FALSE(view.exists("n/c/0"));
  EXPECT_EQ(view.get("n/c/0"), std::nullopt);
  EXPECT_TRUE(view.list("n").empty());
  view.set("n/c/1", as_bytes("new"));
  EXPECT_EQ(view.list("n"), std::vector<std::string>{"n/c/1"});
  view.commit();
  EXPECT_FALSE(store->exists("n/c/0"));  // not the new node's: removed at the commit
  EXPECT_TRUE(store->exists("n/c/1"));
  EXPECT_THROW(view.erase_prefix(""), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit::cli

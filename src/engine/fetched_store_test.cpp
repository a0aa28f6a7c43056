#include "engine/fetched_store.h"

#include <array>

#include <gtest/gtest.h>

#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

// Counts the reads that reach the inner store.
class CountingStore : public MemoryStore {
 public:
  int gets = 0;
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    ++gets;
    return MemoryStore::get(key, prototype, range);
  }
};

std::string text(const std::optional<Buffer>& value) {
  return value ? std::string(as_chars(value->view())) : "<absent>";
}

TEST(FetchedStore, ServesFetchedValuesAndPassesEverythingElseThrough) {
  auto inner = std::make_shared<CountingStore>();
  inner->set("a/c/0", as_bytes("stale"));  // what the store holds now: the fetched bytes win
  inner->set("a/c/9", as_bytes("not fetched"));
  inner->set("a/gone", as_bytes("written after the fetch"));
  FetchedStore::Fetched fetched;
  fetched.emplace("a/c/0", Buffer::copy_of(as_bytes("fetched bytes")));
  fetched.emplace("a/gone", std::nullopt);  // absent when fetched
  FetchedStore store(inner, std::move(fetched));
  inner->gets = 0;

  EXPECT_EQ(text(store.get("a/c/0")), "fetched bytes");
  EXPECT_EQ(text(store.get("a/c/0", BufferPrototype::host(), ByteRange::range(8, 13))), "bytes");
  EXPECT_EQ(text(store.get("a/gone")), "<absent>");  // not asked again
  EXPECT_FALSE(store.exists("a/gone"));
  EXPECT_EQ(store.size("a/c/0"), 13u);
  auto parts = store.get_ranges("a/c/0", std::array{ByteRange::range(0, 7), ByteRange::last(5)});
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(std::string(as_chars((*parts)[0].view())), "fetched");
  EXPECT_EQ(std::string(as_chars((*parts)[1].view())), "bytes");
  EXPECT_EQ(inner->gets, 0);

  EXPECT_EQ(text(store.get("a/c/9")), "not fetched");  // not part of the batch: the store's
  EXPECT_EQ(inner->gets, 1);
  EXPECT_EQ(store.describe(), inner->describe());  // errors name the real store
  EXPECT_THROW(FetchedStore(inner, FetchedStore::Fetched{{"../x", std::nullopt}}), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit

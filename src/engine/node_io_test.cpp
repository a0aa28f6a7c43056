// Metadata documents are read with a bound: a document larger than the JSON size limit is
// refused by its size before anything is read where sizes cost no request, and otherwise after
// reading one byte past the limit, never read whole.
#include "engine/node_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "zarrkit/error.h"
#include "zarrkit/metadata.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

// A memory store that records the most bytes one get returned; `remote` makes it say it
// batches gets, as remote stores do (where size() would cost a request of its own).
class CountingStore final : public MemoryStore {
 public:
  explicit CountingStore(bool remote = false) : remote_(remote) {}
  StoreCapabilities capabilities() const override {
    StoreCapabilities c = MemoryStore::capabilities();
    c.batched_gets = remote_;
    return c;
  }
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    ++gets;
    auto value = MemoryStore::get(key, prototype, range);
    if (value) most_returned = std::max<std::uint64_t>(most_returned, value->size());
    return value;
  }
  std::uint64_t most_returned = 0;
  int gets = 0;

 private:
  bool remote_;
};

std::string huge_document() {
  return "{\"a\": \"" + std::string(MetadataLimits{}.max_json_bytes + (1u << 20), 'x') + "\"}";
}

TEST(ReadJson, ADocumentDeclaringMoreThanTheLimitIsRefusedBeforeAnyRead) {
  CountingStore store;
  const std::string huge = huge_document();
  store.set("zarr.json", ByteView(reinterpret_cast<const std::byte*>(huge.data()), huge.size()));
  try {
    read_json(store, "zarr.json");
    FAIL() << "a document over the limit was read";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("declares {} bytes", huge.size())), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(store.gets, 0);
}

TEST(ReadJson, OnARemoteStoreADocumentOverTheLimitIsReadOneBytePastIt) {
  CountingStore store(/*remote=*/true);
  const std::uint64_t limit = MetadataLimits{}.max_json_bytes;
  const std::string huge = huge_document();
  store.set("zarr.json", ByteView(reinterpret_cast<const std::byte*>(huge.data()), huge.size()));
  try {
    read_json(store, "zarr.json");
    FAIL() << "a document over the limit was read";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than the limit"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.most_returned, limit + 1);
}

TEST(ReadJson, DocumentsUnderTheLimitAndAbsentOnes) {
  for (const bool remote : {false, true}) {
    CountingStore store(remote);
    const std::string doc = R"({"zarr_format": 3, "node_type": "group"})";
    store.set("g/zarr.json", ByteView(reinterpret_cast<const std::byte*>(doc.data()), doc.size()));
    EXPECT_EQ(read_json(store, "g/zarr.json")->at("node_type"), "group");
    EXPECT_EQ(read_json(store, "h/zarr.json"), std::nullopt);
  }
}

}  // namespace
}  // namespace zarrkit

#include "zarrkit/stores/open_store.h"

#include <gtest/gtest.h>

#include "stores/testing/temp_dir.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/gds_store.h"
#include "zarrkit/stores/http_store.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"
#include "zarrkit/stores/s3_store.h"
#include "zarrkit/stores/zip_store.h"

namespace zarrkit {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

fs::path local_root(const StoreLocation& location) {
  auto* local = dynamic_cast<LocalStore*>(location.store.get());
  if (local == nullptr) throw std::logic_error("not a LocalStore");
  return local->root();
}

// data.zarr (v3 group) / group (v3 group) / array (v3 array), and v2/ (v2 group) / arr (v2 array).
struct Hierarchy {
  TempDir dir;
  Hierarchy() {
    write_file(dir / "data.zarr/zarr.json", R"({"zarr_format": 3, "node_type": "group"})");
    write_file(dir / "data.zarr/group/zarr.json", R"({"zarr_format": 3, "node_type": "group"})");
    write_file(dir / "data.zarr/group/array/zarr.json", R"({"zarr_format": 3, "node_type": "array"})");
    write_file(dir / "data.zarr/group/array/c/0", "chunk");
    write_file(dir / "v2.zarr/.zgroup", R"({"zarr_format": 2})");
    write_file(dir / "v2.zarr/arr/.zarray", R"({"zarr_format": 2})");
    fs::create_directories(dir / "plain/sub");
  }
  fs::path root() const { return fs::canonical(dir.path()); }
};

TEST(OpenLocation, FindsTheStoreRootAboveANode) {
  Hierarchy h;
  auto top = open_location((h.dir / "data.zarr").string());
  EXPECT_EQ(local_root(top), h.dir / "data.zarr");
  EXPECT_EQ(top.path, "");

  auto array = open_location((h.dir / "data.zarr/group/array").string());
  EXPECT_EQ(local_root(array), h.dir / "data.zarr");
  EXPECT_EQ(array.path, "group/array");
  EXPECT_EQ(as_chars(array.store->get("group/array/c/0")->view()), "chunk");

  auto group = open_location((h.dir / "data.zarr/group/").string());
  EXPECT_EQ(local_root(group), h.dir / "data.zarr");
  EXPECT_EQ(group.path, "group");

  auto v2 = open_location((h.dir / "v2.zarr/arr").string());
  EXPECT_EQ(local_root(v2), h.dir / "v2.zarr");
  EXPECT_EQ(v2.path, "arr");

  // Inside an array, "c" has a node as its parent, so it walks up too.
  auto chunks = open_location((h.dir / "data.zarr/group/array/c").string());
  EXPECT_EQ(local_root(chunks), h.dir / "data.zarr");
  EXPECT_EQ(chunks.path, "group/array/c");
}

TEST(OpenLocation, ADirectoryOutsideAHierarchyIsItsOwnRoot) {
  Hierarchy h;
  auto plain = open_location((h.dir / "plain/sub").string());
  EXPECT_EQ(local_root(plain), h.dir / "plain/sub");
  EXPECT_EQ(plain.path, "");
}

TEST(OpenLocation, FileUrls) {
  Hierarchy h;
  auto url = open_location("file://" + (h.dir / "data.zarr/group/array").string());
  EXPECT_EQ(local_root(url), h.dir / "data.zarr");
  EXPECT_EQ(url.path, "group/array");
  auto localhost = open_location("file://localhost" + (h.dir / "data.zarr").string());
  EXPECT_EQ(local_root(localhost), h.dir / "data.zarr");

  fs::create_directories(h.dir / "with space");
  auto escaped = open_location("file://" + h.dir.path().string() + "/with%20space");
  EXPECT_EQ(local_root(escaped), h.dir / "with space");

  EXPECT_THROW(open_location("file://otherhost/data"), UnsupportedError);
  EXPECT_THROW(open_location("file://" + h.dir.path().string() + "/bad%2"), InvalidArgumentError);
  EXPECT_THROW(open_location("file://" + h.dir.path().string() + "/nul%00"), InvalidArgumentError);
  EXPECT_THROW(open_location("file://host-only"), InvalidArgumentError);
}

TEST(OpenLocation, ReadingOpensReadOnlyAndWritingWritable) {
  Hierarchy h;
  auto reading = open_location((h.dir / "data.zarr").string());
  EXPECT_FALSE(reading.store->capabilities().writable);
  EXPECT_THROW(reading.store->set("x", as_bytes("y")), InvalidArgumentError);
  auto writing = open_location((h.dir / "data.zarr/group").string(), true);
  EXPECT_TRUE(writing.store->capabilities().writable);
  EXPECT_EQ(writing.path, "group");
  writing.store->set("group/attrs", as_bytes("y"));
  EXPECT_TRUE(fs::exists(h.dir / "data.zarr/group/attrs"));
}

TEST(OpenLocation, MissingPaths) {
  Hierarchy h;
  EXPECT_THROW(open_location((h.dir / "nothing").string()), NotFoundError);
  EXPECT_FALSE(fs::exists(h.dir / "nothing"));

  // For writing, a new path becomes the root, even inside an existing hierarchy.
  auto created = open_location((h.dir / "new/deep.zarr").string(), true);
  EXPECT_TRUE(fs::is_directory(h.dir / "new/deep.zarr"));
  EXPECT_EQ(local_root(created), h.dir / "new/deep.zarr");
  EXPECT_EQ(created.path, "");
  auto inside = open_location((h.dir / "data.zarr/group/new_array").string(), true);
  EXPECT_EQ(local_root(inside), h.dir / "data.zarr/group/new_array");
  EXPECT_EQ(inside.path, "");
}

TEST(OpenLocation, RelativePaths) {
  Hierarchy h;
  fs::path previous = fs::current_path();
  fs::current_path(h.dir.path());
  StoreLocation relative;
  EXPECT_NO_THROW(relative = open_location("data.zarr/group/array"));
  fs::current_path(previous);
  ASSERT_TRUE(relative.store);
  EXPECT_EQ(relative.path, "group/array");
  EXPECT_EQ(fs::canonical(local_root(relative)), h.root() / "data.zarr");
}

TEST(OpenLocation, NotADirectoryOrUnsupported) {
  Hierarchy h;
  EXPECT_THROW(open_location((h.dir / "data.zarr/zarr.json").string()), InvalidArgumentError);
  EXPECT_THROW(open_location(""), InvalidArgumentError);
}

TEST(OpenLocation, ZipArchives) {
  TempDir dir;
  const fs::path zip = dir / "out/data.ZIP";
  EXPECT_THROW(open_location(zip.string()), NotFoundError);
  {
    StoreLocation written = open_location(zip.string(), /*for_writing=*/true);
    auto* store = dynamic_cast<ZipStore*>(written.store.get());
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(written.path, "");
    store->set("group/array/zarr.json", as_bytes("{}"));
  }  // written when the store goes
  StoreLocation read = open_location("file://" + zip.string());
  ASSERT_NE(dynamic_cast<ZipStore*>(read.store.get()), nullptr);
  EXPECT_FALSE(read.store->capabilities().writable);
  EXPECT_TRUE(read.store->exists("group/array/zarr.json"));
  StoreLocation inside = open_location((zip / "group/array").string());
  ASSERT_NE(dynamic_cast<ZipStore*>(inside.store.get()), nullptr);
  EXPECT_EQ(inside.path, "group/array");
  // A directory named *.zip is a directory store.
  fs::create_directories(dir / "dir.zip");
  EXPECT_NE(dynamic_cast<LocalStore*>(open_location((dir / "dir.zip").string()).store.get()), nullptr);
  write_file(dir / "bad.zip", "not a zip");
  EXPECT_THROW(open_location((dir / "bad.zip").string()), DataLossError);
}

TEST(OpenLocation, GdsUrlsOpenGdsStoresOverTheDirectory) {
  Hierarchy h;
  const std::string path = (h.root() / "data.zarr/group/array").string();
  StoreLocation l = open_location("gds://" + path);
  auto* gds = dynamic_cast<GdsStore*>(l.store.get());
  ASSERT_NE(gds, nullptr);
  EXPECT_EQ(gds->root(), h.root() / "data.zarr");
  EXPECT_EQ(l.path, "group/array");
  EXPECT_EQ(gds->describe(), "gds://" + (h.root() / "data.zarr").string());
  EXPECT_FALSE(gds->capabilities().writable);
  EXPECT_EQ(std::string(as_chars(gds->get("group/array/c/0")->view())), "chunk");

  StoreLocation created = open_location("gds://" + (h.root() / "new.zarr").string(), /*for_writing=*/true);
  ASSERT_NE(dynamic_cast<GdsStore*>(created.store.get()), nullptr);
  created.store->set("zarr.json", as_bytes("{}"));
  EXPECT_TRUE(fs::exists(h.root() / "new.zarr/zarr.json"));
  EXPECT_THROW(open_location("gds://" + (h.root() / "absent.zarr").string()), NotFoundError);
  EXPECT_THROW(open_location("gds://" + (h.root() / "x.zip").string(), true), UnsupportedError);
}

TEST(OpenLocation, HttpUrlsOpenReadOnlyHttpStores) {
  // Opening sends no request: the store root is the URL and the node path is "".
  auto http = open_location("https://example.com/data.zarr/");
  ASSERT_TRUE(dynamic_cast<HttpStore*>(http.store.get()));
  EXPECT_EQ(http.store->describe(), "https://example.com/data.zarr");
  EXPECT_EQ(http.path, "");
  EXPECT_FALSE(http.store->capabilities().writable);
  EXPECT_TRUE(dynamic_cast<HttpStore*>(open_location("HTTP://127.0.0.1:9/x").store.get()));
  EXPECT_THROW(open_location("https://example.com/data.zarr", true), UnsupportedError);
  EXPECT_THROW(open_location("http://user@host/x"), InvalidArgumentError);
}

TEST(OpenLocation, S3UrlsOpenS3Stores) {
  auto reading = open_location("s3://bucket/some/data.zarr/");
  ASSERT_TRUE(dynamic_cast<S3Store*>(reading.store.get()));
  EXPECT_EQ(reading.store->describe(), "s3://bucket/some/data.zarr");
  EXPECT_EQ(reading.path, "");
  EXPECT_FALSE(reading.store->capabilities().writable);
  EXPECT_THROW(reading.store->set("k", as_bytes("v")), InvalidArgumentError);  // refused before any request
  EXPECT_TRUE(open_location("s3://bucket/x.zarr", true).store->capabilities().writable);
  EXPECT_THROW(open_location("s3://bucket/a//b"), InvalidArgumentError);
  EXPECT_THROW(open_location("gs://bucket/x"), UnsupportedError);
}

TEST(OpenLocation, Memory) {
  auto first = open_location("memory://");
  ASSERT_TRUE(dynamic_cast<MemoryStore*>(first.store.get()));
  EXPECT_EQ(first.path, "");
  first.store->set("k", as_bytes("v"));
  auto second = open_location("memory://", true);
  EXPECT_NE(first.store, second.store);  // each is new
  EXPECT_FALSE(second.store->exists("k"));
  auto with_path = open_location("memory://group/array/");
  EXPECT_EQ(with_path.path, "group/array");
  EXPECT_THROW(open_location("memory://../x"), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit

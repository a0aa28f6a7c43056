// S3Store against a real S3 server: built as remote_live_tests and run by
// tests/remote/test_s3_api.py, which starts the server (moto), creates a bucket and sets
// ZARRKIT_TEST_S3_URL=s3://bucket/prefix and the AWS_* variables. Not part of ctest.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <random>

#include "zarrkit/error.h"
#include "zarrkit/stores/s3_store.h"

namespace zarrkit {
namespace {

std::string base_url() {
  const char* url = std::getenv("ZARRKIT_TEST_S3_URL");
  if (url == nullptr) throw std::runtime_error("ZARRKIT_TEST_S3_URL is not set (run through pytest tests/remote)");
  return url;
}

std::shared_ptr<S3Store> open_store(const std::string& suffix, S3Options options = {}) {
  return S3Store::open(base_url() + "/" + suffix, options);
}

std::string text(const Buffer& b) { return std::string(as_chars(b.view())); }

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(engine());
  return out;
}

TEST(S3Live, ConditionalWrites) {
  auto store = open_store("conditional");
  store->erase("k");
  EXPECT_TRUE(store->set_if_absent("k", as_bytes("first")));
  EXPECT_FALSE(store->set_if_absent("k", as_bytes("second")));  // exists: nothing written
  auto [value, etag] = *store->get_with_etag("k");
  EXPECT_EQ(text(value), "first");
  EXPECT_FALSE(etag.empty());
  EXPECT_EQ(store->head("k")->etag, etag);

  EXPECT_TRUE(store->set_if_match("k", as_bytes("third"), etag));
  EXPECT_FALSE(store->set_if_match("k", as_bytes("lost update"), etag));  // stale ETag
  EXPECT_EQ(text(*store->get("k")), "third");
  store->erase("k");
  EXPECT_FALSE(store->set_if_match("k", as_bytes("gone"), etag));
  EXPECT_FALSE(store->exists("k"));
}

TEST(S3Live, MultipartUploadsRoundTrip) {
  S3Options options;
  options.multipart_threshold = 6 << 20;
  options.part_size = 5 << 20;  // S3's minimum: three parts for 13 MiB
  auto store = open_store("multipart", options);
  const std::string value = random_bytes((13 << 20) + 12345, 1);
  store->set("big", as_bytes(value));
  EXPECT_EQ(store->size("big"), value.size());
  EXPECT_NE(store->head("big")->etag.find("-3"), std::string::npos);  // the ETag of a 3-part upload
  EXPECT_EQ(text(*store->get("big")), value);
  const std::vector<ByteRange> ranges{ByteRange::range((5 << 20) - 10, (5 << 20) + 10), ByteRange::last(100),
                                      ByteRange::range(0, 1)};
  auto parts = store->get_ranges("big", ranges);
  ASSERT_TRUE(parts);
  EXPECT_EQ(text((*parts)[0]), value.substr((5 << 20) - 10, 20));
  EXPECT_EQ(text((*parts)[1]), value.substr(value.size() - 100));
  EXPECT_EQ(text((*parts)[2]), value.substr(0, 1));
  // A conditional multipart write: If-None-Match on CompleteMultipartUpload.
  store->erase("big2");
  EXPECT_FALSE(store->set_if_absent("big", as_bytes(value)));
  EXPECT_TRUE(store->set_if_absent("big2", as_bytes(value)));
  EXPECT_EQ(store->size("big2"), value.size());
}

TEST(S3Live, ListingPagesAndEraseInBatches) {
  S3Options options;
  options.list_page_size = 3;  // many pages from a few keys
  auto store = open_store("listing", options);
  store->erase_prefix("");
  std::vector<std::string> keys;
  for (int i = 0; i < 7; ++i) keys.push_back("g/a" + std::to_string(i));
  keys.insert(keys.end(), {"g/sub/x", "g/sub/deeper/y", "g/other/z", "top", "gx"});
  for (const std::string& k : keys) store->set(k, as_bytes(k));
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(store->list(), sorted);
  EXPECT_EQ(store->list("g/sub"), (std::vector<std::string>{"g/sub/deeper/y", "g/sub/x"}));
  EXPECT_EQ(store->list("g/su"), std::vector<std::string>{});  // directories, not string prefixes
  DirListing root = store->list_dir("");
  EXPECT_EQ(root.keys, (std::vector<std::string>{"gx", "top"}));
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"g"}));
  DirListing g = store->list_dir("g/");
  EXPECT_EQ(g.keys.size(), 7u);
  EXPECT_EQ(g.prefixes, (std::vector<std::string>{"other", "sub"}));

  store->erase_prefix("g");
  EXPECT_EQ(store->list(), (std::vector<std::string>{"gx", "top"}));
  // A store over a sub-prefix sees only its own keys.
  auto sub = open_store("listing/g2");
  sub->set("k", as_bytes("v"));
  EXPECT_EQ(sub->list(), std::vector<std::string>{"k"});
  EXPECT_EQ(store->list(), (std::vector<std::string>{"g2/k", "gx", "top"}));
  store->erase_prefix("");
  EXPECT_TRUE(store->list().empty());
}

TEST(S3Live, ReadsMissesAndErrors) {
  auto store = open_store("reads");
  store->set("v", as_bytes("0123456789"));
  store->set("empty", {});
  EXPECT_EQ(text(*store->get("v", BufferPrototype::host(), ByteRange::range(3, 6))), "345");
  EXPECT_EQ(text(*store->get("v", BufferPrototype::host(), ByteRange::range(8, 50))), "89");
  EXPECT_EQ(text(*store->get("v", BufferPrototype::host(), ByteRange::range(50, 60))), "");
  EXPECT_EQ(text(*store->get("v", BufferPrototype::host(), ByteRange::last(4))), "6789");
  EXPECT_EQ(text(*store->get("empty")), "");
  EXPECT_EQ(store->get("empty", BufferPrototype::host(), ByteRange::range(0, 4))->size(), 0u);
  EXPECT_FALSE(store->get("missing"));
  EXPECT_FALSE(store->get("missing", BufferPrototype::host(), ByteRange::range(0, 4)));
  EXPECT_FALSE(store->get_ranges("missing", std::vector{ByteRange::range(0, 4)}));
  EXPECT_FALSE(store->size("missing"));
  store->erase("missing");  // absent: no error
  store->erase("v");
  EXPECT_FALSE(store->exists("v"));

  S3Options read_only_options;
  read_only_options.read_only = true;
  auto read_only = open_store("reads", read_only_options);
  EXPECT_THROW(read_only->set("x", as_bytes("y")), InvalidArgumentError);
  auto no_bucket = S3Store::open("s3://no-such-bucket-zarrkit/x");
  EXPECT_THROW(no_bucket->get("zarr.json"), NotFoundError);
}

TEST(S3Live, StoresKeepWorkingInAForkedChild) {
  auto store = open_store("fork");
  store->set("k", as_bytes("before"));
  EXPECT_EQ(text(*store->get("k")), "before");  // the parent's transport is running now
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // never hang the suite
    int status = 0;
    try {
      store->set("k", as_bytes("from the child"));
      status = text(*store->get("k")) == "from the child" ? 0 : 2;
    } catch (...) {
      status = 3;
    }
    _exit(status);
  }
  int status = -1;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(text(*store->get("k")), "from the child");  // and the parent's still works
}

}  // namespace
}  // namespace zarrkit

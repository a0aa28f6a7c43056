#include "zarrkit/stores/http_store.h"

#include <gtest/gtest.h>

#include "stores/remote/testing/fake_http_server.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using remote::HttpResponse;
using remote::TransportError;
using remote::testing::FakeHttpServer;
using namespace std::chrono_literals;

constexpr const char* kBase = "http://host:8080/data/x.zarr";

struct Fixture {
  std::shared_ptr<FakeHttpServer> server = std::make_shared<FakeHttpServer>();
  std::shared_ptr<HttpStore> store;
  Fixture() {
    RemoteOptions options;
    options.max_attempts = 3;
    options.retry_initial_delay = 1ms;
    options.retry_max_delay = 1ms;
    options.coalesce_gap_bytes = 4;
    store = HttpStore::open(std::string(kBase) + "/", options, server);
    server->put(std::string(kBase) + "/zarr.json", "{\"zarr_format\": 3}");
    server->put(std::string(kBase) + "/c/0/1", "0123456789");
    server->put(std::string(kBase) + "/with%20space/k%2Bplus", "x");
    server->put(std::string(kBase) + "/empty", "");
  }
};

std::string text(const std::optional<Buffer>& b) { return b ? std::string(as_chars(b->view())) : "<absent>"; }

TEST(HttpStore, ReadsWholeValuesRangesAndMisses) {
  Fixture f;
  EXPECT_EQ(f.store->describe(), kBase);
  EXPECT_EQ(text(f.store->get("zarr.json")), "{\"zarr_format\": 3}");
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::range(2, 5))), "234");
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::last(3))), "789");
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::from_offset(8))), "89");
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::range(8, 100))), "89");
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::range(50, 60))), "");
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::range(3, 3))), "");
  EXPECT_EQ(text(f.store->get("with space/k+plus")), "x");  // keys are percent-encoded
  EXPECT_EQ(text(f.store->get("empty")), "");
  EXPECT_EQ(text(f.store->get("missing")), "<absent>");
  EXPECT_EQ(text(f.store->get("missing", BufferPrototype::host(), ByteRange::range(0, 0))), "<absent>");
  EXPECT_TRUE(f.store->exists("c/0/1"));
  EXPECT_FALSE(f.store->exists("c/0/2"));
  EXPECT_EQ(f.store->size("c/0/1"), 10u);
  EXPECT_EQ(f.store->size("c/0/2"), std::nullopt);
  EXPECT_THROW(f.store->get("../etc/passwd"), InvalidArgumentError);
}

TEST(HttpStore, GetRangesSendsOneBatchAndCoalesces) {
  Fixture f;
  const std::vector<ByteRange> ranges{ByteRange::range(0, 2), ByteRange::range(4, 6), ByteRange::last(1),
                                      ByteRange::range(3, 3)};
  auto parts = f.store->get_ranges("c/0/1", ranges);
  ASSERT_TRUE(parts);
  ASSERT_EQ(parts->size(), 4u);
  EXPECT_EQ(text((*parts)[0]), "01");
  EXPECT_EQ(text((*parts)[1]), "45");
  EXPECT_EQ(text((*parts)[2]), "9");
  EXPECT_EQ(text((*parts)[3]), "");
  // [0,2), [3,3) and [4,6) merge into one request (gaps <= 4 bytes); the suffix is another;
  // both go out together.
  ASSERT_EQ(f.server->batch_sizes.size(), 1u);
  EXPECT_EQ(f.server->batch_sizes[0], 2u);
  EXPECT_FALSE(f.store->get_ranges("missing", ranges));
}

TEST(HttpStore, GetManySendsOneBatchAndRetriesEachRequest) {
  Fixture f;
  f.server->fault_next(std::string(kBase) + "/c/0/1", [](HttpResponse r) {
    r.status = 503;
    return FakeHttpServer::with_body(std::move(r), "slow down");
  });
  const std::vector<std::string> keys{"zarr.json", "missing", "c/0/1", "empty"};
  auto values = f.store->get_many(keys);
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(text(values[0]), "{\"zarr_format\": 3}");
  EXPECT_EQ(text(values[1]), "<absent>");
  EXPECT_EQ(text(values[2]), "0123456789");
  EXPECT_EQ(text(values[3]), "");
  // The four went out together; the 503 was retried alone.
  EXPECT_EQ(f.server->batch_sizes, (std::vector<std::size_t>{4, 1}));
  EXPECT_TRUE(f.store->capabilities().batched_gets);
  const std::vector<std::string> bad{"zarr.json", "../escape"};
  EXPECT_THROW(f.store->get_many(bad), InvalidArgumentError);
}

TEST(HttpStore, ServersThatIgnoreRangesStillGiveTheRightBytes) {
  Fixture f;
  f.server->ignore_ranges = true;
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::range(2, 5))), "234");
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::last(2))), "89");
}

TEST(HttpStore, RetriesTransientFailures) {
  Fixture f;
  const std::string url = std::string(kBase) + "/c/0/1";
  f.server->fault_next(url, [](HttpResponse r) {
    r.status = 503;
    return FakeHttpServer::with_body(std::move(r), "slow down");
  });
  f.server->fault_next(url, [](HttpResponse r) {
    r.error = TransportError::kReset;
    r.error_message = "reset by peer";
    return r;
  });
  EXPECT_EQ(text(f.store->get("c/0/1")), "0123456789");
  EXPECT_EQ(f.server->log.size(), 3u);
}

TEST(HttpStore, ShortBodiesAreNeverReturned) {
  Fixture f;
  const std::string url = std::string(kBase) + "/c/0/1";
  // A 206 whose body is shorter than its Content-Range, every time: DataLossError.
  for (int i = 0; i < 3; ++i) {
    f.server->fault_next(url, [](HttpResponse r) { return FakeHttpServer::with_body(std::move(r), "23"); });
  }
  EXPECT_THROW(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::range(2, 5)), DataLossError);
  // Once only: the retry gets the right bytes.
  f.server->fault_next(url, [](HttpResponse r) { return FakeHttpServer::with_body(std::move(r), "2"); });
  EXPECT_EQ(text(f.store->get("c/0/1", BufferPrototype::host(), ByteRange::range(2, 5))), "234");
  // Truncation the transport noticed (Content-Length not reached), every time.
  for (int i = 0; i < 3; ++i) {
    f.server->fault_next(url, [](HttpResponse r) {
      r.error = TransportError::kTruncated;
      r.error_message = "transfer closed with 4 bytes remaining";
      return r;
    });
  }
  try {
    f.store->get("c/0/1");
    FAIL() << "no error";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("GET http://host:8080/data/x.zarr/c/0/1: truncated body"), std::string::npos)
        << e.what();
  }
}

TEST(HttpStore, PermanentErrorsAreTypedAndNamed) {
  Fixture f;
  const std::string url = std::string(kBase) + "/zarr.json";
  f.server->fault_next(url, [](HttpResponse r) {
    r.status = 403;
    return r;
  });
  try {
    f.store->get("zarr.json");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 403"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(url), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.server->log.size(), 1u);  // not retried
}

TEST(HttpStore, IsReadOnlyAndCannotList) {
  Fixture f;
  EXPECT_FALSE(f.store->capabilities().writable);
  EXPECT_FALSE(f.store->capabilities().listable);
  EXPECT_THROW(f.store->set("k", as_bytes("v")), UnsupportedError);
  EXPECT_THROW(f.store->erase("k"), UnsupportedError);
  EXPECT_THROW(f.store->list(), UnsupportedError);
  EXPECT_THROW(f.store->list_dir(""), UnsupportedError);
}

TEST(HttpStore, QueryStringsOfTheBaseUrlAreKept) {
  auto server = std::make_shared<FakeHttpServer>();
  server->put("https://h/x.zarr/zarr.json?token=abc", "{}");
  auto store = HttpStore::open("https://h/x.zarr?token=abc", {}, server);
  EXPECT_EQ(text(store->get("zarr.json")), "{}");
  EXPECT_THROW(HttpStore::open("ftp://h/x"), UnsupportedError);
  EXPECT_THROW(HttpStore::open("http://"), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit

#include "zarrkit/stores/s3_store.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "stores/remote/testing/fake_s3_server.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using remote::HttpRequest;
using remote::HttpResponse;
using remote::testing::FakeS3Server;
using namespace std::chrono_literals;

// The process environment the store reads: fixed credentials, no AWS files, no overrides.
void isolate_environment() {
  for (const char* name : {"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
                           "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_NO_SIGN_REQUEST", "AWS_DEFAULT_REGION",
                           "ZARRKIT_S3_MULTIPART_THRESHOLD", "ZARRKIT_S3_PART_SIZE", "ZARRKIT_HTTP_MAX_ATTEMPTS"}) {
    unsetenv(name);
  }
  setenv("AWS_ACCESS_KEY_ID", "AKIDTEST", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
  setenv("AWS_REGION", "eu-west-3", 1);
  setenv("AWS_CONFIG_FILE", "/nonexistent/zarrkit-test/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/zarrkit-test/credentials", 1);
}

struct Fixture {
  std::shared_ptr<FakeS3Server> server = std::make_shared<FakeS3Server>();
  std::shared_ptr<S3Store> store;

  explicit Fixture(std::string url = "s3://bucket/root/data.zarr", S3Options options = {}) {
    isolate_environment();
    options.endpoint_url = FakeS3Server::kEndpoint;
    options.remote.max_attempts = 3;
    options.remote.retry_initial_delay = 1ms;
    options.remote.retry_max_delay = 1ms;
    store = S3Store::open(url, options, server);
  }
};

std::string text(const std::optional<Buffer>& b) { return b ? std::string(as_chars(b->view())) : "<absent>"; }

TEST(S3Store, WritesAreSignedAndCarryTheirDigests) {
  Fixture f;
  f.store->set("zarr.json", as_bytes("{}"));
  ASSERT_EQ(f.server->log.size(), 1u);
  const HttpRequest& put = f.server->log[0];
  EXPECT_EQ(put.method, "PUT");
  EXPECT_EQ(put.url, "http://fake-s3/bucket/root/data.zarr/zarr.json");
  EXPECT_EQ(FakeS3Server::header(put, "host"), "fake-s3");
  const std::string authorization = FakeS3Server::header(put, "authorization");
  EXPECT_TRUE(authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/")) << authorization;
  EXPECT_NE(authorization.find("/eu-west-3/s3/aws4_request, SignedHeaders=content-md5;content-type;host;"),
            std::string::npos)
      << authorization;
  EXPECT_EQ(FakeS3Server::header(put, "content-md5"), "mZFLkyvTelC5g8XnyQrpOw==");  // md5("{}")
  EXPECT_EQ(f.server->objects.at("bucket/root/data.zarr/zarr.json"), "{}");
  EXPECT_EQ(f.store->describe(), "s3://bucket/root/data.zarr");
}

TEST(S3Store, AnonymousRequestsAreUnsigned) {
  S3Options options;
  options.anonymous = true;
  Fixture f("s3://bucket", options);
  EXPECT_FALSE(f.store->exists("k"));
  EXPECT_EQ(FakeS3Server::header(f.server->log.at(0), "authorization"), "");
  EXPECT_EQ(f.server->log.at(0).url, "http://fake-s3/bucket/k");
}

TEST(S3Store, ReadsValuesRangesAndMisses) {
  Fixture f;
  f.store->set("c/0", as_bytes("0123456789"));
  f.store->set("empty", {});
  EXPECT_EQ(text(f.store->get("c/0")), "0123456789");
  EXPECT_EQ(text(f.store->get("c/0", BufferPrototype::host(), ByteRange::range(2, 5))), "234");
  EXPECT_EQ(text(f.store->get("c/0", BufferPrototype::host(), ByteRange::last(3))), "789");
  EXPECT_EQ(text(f.store->get("c/0", BufferPrototype::host(), ByteRange::range(20, 30))), "");
  EXPECT_EQ(text(f.store->get("c/0", BufferPrototype::host(), ByteRange::range(4, 4))), "");
  EXPECT_EQ(text(f.store->get("empty")), "");
  EXPECT_EQ(text(f.store->get("missing")), "<absent>");
  EXPECT_EQ(text(f.store->get("missing", BufferPrototype::host(), ByteRange::range(0, 4))), "<absent>");
  EXPECT_EQ(f.store->size("c/0"), 10u);
  EXPECT_FALSE(f.store->size("missing"));
  auto parts = f.store->get_ranges("c/0", std::vector{ByteRange::range(0, 2), ByteRange::range(8, 10)});
  ASSERT_TRUE(parts);
  EXPECT_EQ(text((*parts)[0]), "01");
  EXPECT_EQ(text((*parts)[1]), "89");
}

TEST(S3Store, ChecksumMismatchesAreRetriedThenDataLoss) {
  Fixture f;
  f.store->set("k", as_bytes("the value"));
  int corrupt = 3;
  f.server->intercept = [&](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (r.method != "GET" || corrupt == 0) return std::nullopt;
    --corrupt;
    return FakeS3Server::respond(200, "the valuX",
                                 {{"x-amz-checksum-sha256", remote::object_checksum("SHA-256", as_bytes("the value"))}});
  };
  EXPECT_THROW(f.store->get("k"), DataLossError);  // 3 tries, all corrupt
  corrupt = 1;
  EXPECT_EQ(text(f.store->get("k")), "the value");  // one corrupt answer, then the right one
}

TEST(S3Store, GetManyFetchesTogetherAndChecksEachValue) {
  Fixture f;
  f.store->set("a", as_bytes("first"));
  f.store->set("b", as_bytes("second"));
  int corrupt = 1;
  f.server->intercept = [&](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (r.method != "GET" || !r.url.ends_with("/data.zarr/b") || corrupt == 0) return std::nullopt;
    --corrupt;
    return FakeS3Server::respond(200, "secoXd",
                                 {{"x-amz-checksum-sha256", remote::object_checksum("SHA-256", as_bytes("second"))}});
  };
  const std::size_t before = f.server->log.size();
  const std::vector<std::string> keys{"a", "nothing", "b"};
  auto values = f.store->get_many(keys);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(text(values[0]), "first");
  EXPECT_EQ(text(values[1]), "<absent>");
  EXPECT_EQ(text(values[2]), "second");  // the corrupt answer was retried, never returned
  EXPECT_TRUE(f.store->capabilities().batched_gets);
  EXPECT_GE(f.server->log.size() - before, 3u);
  corrupt = 5;
  EXPECT_THROW(f.store->get_many(keys), DataLossError);
}

TEST(S3Store, ErrorsAreTypedAndRetriedWhenTheyMayPass) {
  Fixture f;
  f.store->set("k", as_bytes("v"));
  int slow = 2;
  f.server->intercept = [&](const HttpRequest&) -> std::optional<HttpResponse> {
    if (slow == 0) return std::nullopt;
    --slow;
    return FakeS3Server::error(503, "SlowDown");
  };
  EXPECT_EQ(text(f.store->get("k")), "v");
  f.server->intercept = [](const HttpRequest&) { return std::optional(FakeS3Server::error(403, "AccessDenied")); };
  try {
    f.store->get("k");
    FAIL() << "no error";
  } catch (const IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("HTTP 403 AccessDenied: fake AccessDenied (credentials: environment)"), std::string::npos) << m;
  }
  f.server->intercept = [](const HttpRequest&) {
    return std::optional(FakeS3Server::respond(301, "", {{"x-amz-bucket-region", "ap-east-1"}}));
  };
  try {
    f.store->get("k");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("set AWS_REGION=ap-east-1"), std::string::npos) << e.what();
  }
  f.server->intercept = nullptr;
  f.server->buckets.clear();
  EXPECT_THROW(f.store->get("k"), NotFoundError);
}

TEST(S3Store, ListingsPaginateAndSkipNamesThatAreNotKeys) {
  S3Options options;
  options.list_page_size = 2;
  Fixture f("s3://bucket/p", options);
  for (const char* k : {"a/1", "a/2", "a/b/3", "c", "x y"}) f.store->set(k, as_bytes(k));
  f.server->objects["bucket/p/a//bad"] = "not a key";
  f.server->objects["bucket/p/dir/"] = "folder marker";
  f.server->objects["bucket/pq/outside"] = "another prefix";
  EXPECT_EQ(f.store->list(), (std::vector<std::string>{"a/1", "a/2", "a/b/3", "c", "x y"}));
  EXPECT_EQ(f.store->list("a"), (std::vector<std::string>{"a/1", "a/2", "a/b/3"}));
  DirListing root = f.store->list_dir("");
  EXPECT_EQ(root.keys, (std::vector<std::string>{"c", "x y"}));
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"a", "dir"}));
  DirListing a = f.store->list_dir("a/");
  EXPECT_EQ(a.keys, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(a.prefixes, std::vector<std::string>{"b"});

  // erase_prefix removes every object below, valid key or not, and nothing outside.
  f.store->erase_prefix("a");
  EXPECT_FALSE(f.server->objects.contains("bucket/p/a//bad"));
  EXPECT_EQ(f.store->list(), (std::vector<std::string>{"c", "x y"}));
  f.store->erase_prefix("");
  EXPECT_EQ(f.server->objects.size(), 1u);  // only bucket/pq/outside
}

TEST(S3Store, ListingsThatNeverEndAreRefused) {
  Fixture f;
  f.server->intercept = [](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (r.url.find("list-type") == std::string::npos) return std::nullopt;
    return FakeS3Server::respond(200, "<ListBucketResult><IsTruncated>true</IsTruncated>"
                                      "<NextContinuationToken>same</NextContinuationToken></ListBucketResult>");
  };
  EXPECT_THROW(f.store->list(), IoError);
}

TEST(S3Store, MultipartUploadsAndTheirAbort) {
  S3Options options;
  options.multipart_threshold = 6 << 20;
  options.part_size = 5 << 20;
  Fixture f("s3://bucket", options);
  std::string value(12 << 20, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 7 + i / 1000);
  f.store->set("big", as_bytes(value));
  EXPECT_EQ(f.server->objects.at("bucket/big"), value);
  EXPECT_EQ(f.server->etags.at("bucket/big"), "\"multipart-3\"");
  EXPECT_TRUE(f.server->uploads.empty());

  // A part that keeps failing: the upload is aborted and nothing is stored.
  f.server->intercept = [](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (r.url.find("partNumber=2") == std::string::npos) return std::nullopt;
    return FakeS3Server::error(500, "InternalError");
  };
  EXPECT_THROW(f.store->set("big2", as_bytes(value)), IoError);
  EXPECT_FALSE(f.server->objects.contains("bucket/big2"));
  EXPECT_TRUE(f.server->uploads.empty());
  EXPECT_EQ(f.server->log.back().method, "DELETE");  // AbortMultipartUpload
}

TEST(S3Store, ConditionalWrites) {
  Fixture f;
  EXPECT_TRUE(f.store->set_if_absent("k", as_bytes("one")));
  EXPECT_FALSE(f.store->set_if_absent("k", as_bytes("two")));
  auto [value, etag] = *f.store->get_with_etag("k");
  EXPECT_EQ(std::string(as_chars(value.view())), "one");
  EXPECT_TRUE(f.store->set_if_match("k", as_bytes("three"), etag));
  EXPECT_FALSE(f.store->set_if_match("k", as_bytes("four"), etag));
  EXPECT_FALSE(f.store->set_if_match("absent", as_bytes("x"), etag));
  EXPECT_EQ(text(f.store->get("k")), "three");
  EXPECT_THROW(f.store->set_if_match("k", as_bytes("x"), ""), InvalidArgumentError);

  // The answer to a conditional write is lost; the retry finds the precondition failed, but
  // the object holds exactly this value: the write did happen.
  bool lose = true;
  f.server->intercept = [&](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (r.method != "PUT" || !lose) return std::nullopt;
    lose = false;
    f.server->objects["bucket/root/data.zarr/new"] = "value";
    f.server->etags["bucket/root/data.zarr/new"] = "\"" + remote::payload_digests(as_bytes("value")).md5_hex + "\"";
    HttpResponse reset;
    reset.error = remote::TransportError::kReset;
    reset.error_message = "connection reset after the server wrote the object";
    return reset;
  };
  EXPECT_TRUE(f.store->set_if_absent("new", as_bytes("value")));
}

TEST(S3Store, CopiesObjectsOnTheServer) {
  Fixture f;
  f.store->set("a/.staged/c/0", as_bytes("new value"));
  f.server->log.clear();
  f.store->copy("a/.staged/c/0", "a/c/0");
  ASSERT_EQ(f.server->log.size(), 1u);
  const HttpRequest& copy = f.server->log[0];
  EXPECT_EQ(copy.method, "PUT");
  EXPECT_EQ(copy.url, "http://fake-s3/bucket/root/data.zarr/a/c/0");
  EXPECT_EQ(FakeS3Server::header(copy, "x-amz-copy-source"), "/bucket/root/data.zarr/a/.staged/c/0");
  EXPECT_TRUE(copy.body.empty());  // the bytes stay on the server
  EXPECT_EQ(text(f.store->get("a/c/0")), "new value");
  EXPECT_THROW(f.store->copy("a/missing", "a/c/1"), NotFoundError);
  EXPECT_FALSE(f.store->exists("a/c/1"));
}

TEST(S3Store, CopyFailuresReportedInA200BodyAreRetriedOrReported) {
  Fixture f;
  f.store->set("from", as_bytes("v"));
  int answered = 0;
  std::string code = "InternalError";
  f.server->intercept = [&](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (FakeS3Server::header(r, "x-amz-copy-source").empty() || answered++ > 0) return std::nullopt;
    return FakeS3Server::respond(200, "<Error><Code>" + code + "</Code><Message>m</Message></Error>");
  };
  f.store->copy("from", "to");  // the first answer is a 200 carrying InternalError: retried
  EXPECT_EQ(answered, 2);
  EXPECT_EQ(text(f.store->get("to")), "v");
  answered = 0;
  code = "AccessDenied";
  try {
    f.store->copy("from", "to2");
    FAIL() << "a copy refused in its answer's body succeeded";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("CopyObject failed: AccessDenied"), std::string::npos) << e.what();
  }
}

TEST(S3Store, ReadOnlyStoresRefuseWrites) {
  S3Options options;
  options.read_only = true;
  Fixture f("s3://bucket", options);
  EXPECT_FALSE(f.store->capabilities().writable);
  EXPECT_THROW(f.store->set("k", as_bytes("v")), InvalidArgumentError);
  EXPECT_THROW(f.store->erase("k"), InvalidArgumentError);
  EXPECT_THROW(f.store->erase_prefix(""), InvalidArgumentError);
  EXPECT_TRUE(f.server->log.empty());
}

}  // namespace
}  // namespace zarrkit

#include "stores/remote/object_reader.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "stores/remote/testing/fake_http_server.h"
#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

using testing::FakeHttpServer;
using namespace std::chrono_literals;

constexpr const char* kBase = "http://host/data";

// A protocol of the simplest kind: keys under kBase, "HTTP N" failures, and optionally a
// body check and HEAD answers that must carry their length.
class TestProtocol final : public ObjectProtocol {
 public:
  bool reject_bad_bodies = false;
  bool needs_length = false;

  HttpRequest head_request(std::string_view key) const override { return request("HEAD", key, std::nullopt); }
  HttpRequest get_request(std::string_view key, const std::optional<std::string>& range) const override {
    return request("GET", key, range);
  }
  std::optional<Verdict> verdict(const HttpResponse& r) const override {
    if (auto v = transport_verdict(r)) return v;
    if ((r.status >= 200 && r.status < 300) || r.status == 404 || r.status == 412 || r.status == 416) {
      return std::nullopt;
    }
    if (retryable_status(r.status)) return Verdict::retry(fmt::format("HTTP {}", r.status));
    return Verdict::fail(fmt::format("HTTP {}", r.status));
  }
  bool absent(const HttpResponse& r) const override { return r.status == 404; }
  Verdict unexpected(const HttpResponse& r) const override {
    return Verdict::fail(fmt::format("status {} was not expected", r.status));
  }
  std::optional<Verdict> check_whole(const HttpResponse& r) const override {
    if (reject_bad_bodies && std::string_view(as_chars(r.body.view())).find("bad") != std::string_view::npos) {
      return Verdict::retry("a bad body", ErrorCode::kDataLoss);
    }
    return std::nullopt;
  }
  bool head_needs_length() const override { return needs_length; }

 private:
  static HttpRequest request(std::string method, std::string_view key, const std::optional<std::string>& range) {
    HttpRequest r;
    r.method = std::move(method);
    r.url = std::string(kBase) + "/" + std::string(key);
    if (range) r.headers.emplace_back("Range", *range);
    return r;
  }
};

struct Fixture {
  std::shared_ptr<FakeHttpServer> server = std::make_shared<FakeHttpServer>();
  TestProtocol protocol;
  RemoteSettings settings;
  std::string description = kBase;
  ObjectReader reader{protocol, settings, description};

  Fixture() {
    settings.transport = std::make_unique<TransportRef>(server);
    settings.retry.max_attempts = 3;
    settings.retry.initial_delay = 1ms;
    settings.retry.max_delay = 1ms;
    settings.coalesce_gap = 4;
    settings.coalesce_max = 1 << 20;
    server->put(url("v"), "0123456789");
    server->put(url("bad"), "bad value");
    server->put(url("empty"), "");
  }
  static std::string url(std::string_view key) { return std::string(kBase) + "/" + std::string(key); }
  std::vector<std::string> methods() const {
    std::vector<std::string> out;
    for (const HttpRequest& r : server->log) out.push_back(r.method);
    return out;
  }
};

std::string text(const std::optional<Buffer>& b) { return b ? std::string(as_chars(b->view())) : "<absent>"; }

TEST(ObjectReader, ReadsWholeValuesRangesAndMisses) {
  Fixture f;
  const BufferPrototype host = BufferPrototype::host();
  EXPECT_EQ(text(f.reader.get("v", host, std::nullopt)), "0123456789");
  EXPECT_EQ(text(f.reader.get("v", host, ByteRange::range(2, 5))), "234");
  EXPECT_EQ(text(f.reader.get("v", host, ByteRange::last(3))), "789");
  EXPECT_EQ(text(f.reader.get("v", host, ByteRange::range(20, 30))), "");  // 416: nothing there
  EXPECT_EQ(text(f.reader.get("empty", host, std::nullopt)), "");
  EXPECT_EQ(text(f.reader.get("missing", host, std::nullopt)), "<absent>");
  EXPECT_EQ(text(f.reader.get("missing", host, ByteRange::range(0, 4))), "<absent>");
  EXPECT_THROW(f.reader.get("../up", host, std::nullopt), InvalidArgumentError);

  // A range that surely selects nothing asks only whether the key exists.
  f.server->log.clear();
  EXPECT_EQ(text(f.reader.get("v", host, ByteRange::range(4, 4))), "");
  EXPECT_EQ(text(f.reader.get("missing", host, ByteRange::last(0))), "<absent>");
  EXPECT_EQ(f.methods(), (std::vector<std::string>{"HEAD", "HEAD"}));

  EXPECT_TRUE(f.reader.exists("v"));
  EXPECT_FALSE(f.reader.exists("missing"));
  EXPECT_EQ(f.reader.size("v"), 10u);
  EXPECT_EQ(f.reader.size("missing"), std::nullopt);
}

TEST(ObjectReader, GetRangesCoalescesAndSendsOneBatch) {
  Fixture f;
  const std::vector<ByteRange> ranges{ByteRange::range(6, 8), ByteRange::range(0, 2), ByteRange::last(1),
                                      ByteRange::range(9, 20), ByteRange::range(30, 40)};
  auto parts = f.reader.get_ranges("v", ranges, BufferPrototype::host());
  ASSERT_TRUE(parts);
  ASSERT_EQ(parts->size(), 5u);
  EXPECT_EQ(text((*parts)[0]), "67");
  EXPECT_EQ(text((*parts)[1]), "01");
  EXPECT_EQ(text((*parts)[2]), "9");
  EXPECT_EQ(text((*parts)[3]), "9");   // clamped at the end of the value
  EXPECT_EQ(text((*parts)[4]), "");    // past the end
  // The suffix, [0, 2) with [6, 8) and [9, 20) (gaps of at most 4), and [30, 40).
  EXPECT_EQ(f.server->batch_sizes, std::vector<std::size_t>{3});
  EXPECT_FALSE(f.reader.get_ranges("missing", ranges, BufferPrototype::host()));

  // Ranges that all select nothing: one HEAD, and empty parts.
  f.server->log.clear();
  const std::vector<ByteRange> empty{ByteRange::range(3, 3), ByteRange::last(0)};
  parts = f.reader.get_ranges("v", empty, BufferPrototype::host());
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].size() + (*parts)[1].size(), 0u);
  EXPECT_EQ(f.methods(), std::vector<std::string>{"HEAD"});
  EXPECT_FALSE(f.reader.get_ranges("missing", empty, BufferPrototype::host()));
}

TEST(ObjectReader, GetEachHandsOverCheckedValues) {
  Fixture f;
  f.protocol.reject_bad_bodies = true;
  f.server->put(Fixture::url("flaky"), "good");
  f.server->fault_next(Fixture::url("flaky"), [](HttpResponse r) { return FakeHttpServer::with_body(std::move(r), "bad"); });
  const std::vector<std::string> keys{"v", "missing", "flaky", "empty"};
  std::vector<std::string> got(keys.size());
  f.reader.get_each(keys, BufferPrototype::host(),
                    [&](std::size_t i, std::optional<Buffer> value) { got[i] = text(value); });
  EXPECT_EQ(got, (std::vector<std::string>{"0123456789", "<absent>", "good", ""}));
  EXPECT_EQ(f.server->batch_sizes, (std::vector<std::size_t>{4, 1}));  // together; the bad body again alone
  // A check that keeps failing is the check's error, after every try.
  const std::vector<std::string> bad{"bad"};
  EXPECT_THROW(f.reader.get_many(bad, BufferPrototype::host()), DataLossError);
  EXPECT_EQ(f.server->log.size(), 5u + 3u);
  // Ranges are not whole values: their bytes are checked against Content-Range instead.
  EXPECT_EQ(text(f.reader.get("bad", BufferPrototype::host(), ByteRange::range(0, 3))), "bad");
  const std::vector<std::string> invalid{"v", "a//b"};
  EXPECT_THROW(f.reader.get_many(invalid, BufferPrototype::host()), InvalidArgumentError);
}

TEST(ObjectReader, UnexpectedAnswersFailInTheProtocolsWords) {
  Fixture f;
  f.server->fault_next(Fixture::url("v"), [](HttpResponse r) {
    r.status = 204;
    return r;
  });
  try {
    f.reader.get("v", BufferPrototype::host(), std::nullopt);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("GET http://host/data/v: status 204 was not expected"), std::string::npos)
        << e.what();
  }
  f.server->fault_next(Fixture::url("v"), [](HttpResponse r) {
    r.status = 412;
    return r;
  });
  EXPECT_THROW(f.reader.get("v", BufferPrototype::host(), ByteRange::range(0, 2)), IoError);
  f.server->fault_next(Fixture::url("v"), [](HttpResponse r) {
    r.status = 500;
    return r;
  });
  EXPECT_EQ(text(f.reader.get("v", BufferPrototype::host(), ByteRange::range(0, 2))), "01");  // retried
  EXPECT_EQ(f.server->log.size(), 4u);  // the 204 and the 412 were not retried
}

TEST(ObjectReader, HeadAnswersWithoutALength) {
  Fixture f;
  auto drop_length = [](HttpResponse r) {
    std::erase_if(r.headers, [](const auto& h) { return h.first == "content-length"; });
    r.headers.emplace_back("etag", "\"e1\"");
    return r;
  };
  // The size is then measured by reading the value.
  f.server->fault_next(Fixture::url("v"), drop_length);
  EXPECT_EQ(f.reader.size("v"), 10u);
  EXPECT_EQ(f.methods(), (std::vector<std::string>{"HEAD", "GET"}));
  f.server->fault_next(Fixture::url("v"), drop_length);
  const std::optional<ObjectHead> head = f.reader.head("v");
  ASSERT_TRUE(head);
  EXPECT_FALSE(head->size);
  EXPECT_EQ(head->etag, "\"e1\"");

  // A protocol whose servers always send it retries an answer without.
  f.protocol.needs_length = true;
  f.server->fault_next(Fixture::url("v"), drop_length);
  EXPECT_EQ(f.reader.size("v"), 10u);
  for (int i = 0; i < 3; ++i) f.server->fault_next(Fixture::url("v"), drop_length);
  try {
    f.reader.exists("v");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("a HEAD answer without Content-Length"), std::string::npos) << e.what();
  }
}

TEST(ObjectReader, WholeValuesComeWithTheirETag) {
  Fixture f;
  f.server->fault_next(Fixture::url("v"), [](HttpResponse r) {
    r.headers.emplace_back("etag", "\"abc\"");
    return r;
  });
  auto value = f.reader.get_with_etag("v");
  ASSERT_TRUE(value);
  EXPECT_EQ(std::string(as_chars(value->first.view())), "0123456789");
  EXPECT_EQ(value->second, "\"abc\"");
  value = f.reader.get_with_etag("empty");
  ASSERT_TRUE(value);
  EXPECT_EQ(value->second, "");
  EXPECT_FALSE(f.reader.get_with_etag("missing"));
}

TEST(ObjectReader, ContentLengthMustBeANumber) {
  HttpResponse r;
  EXPECT_EQ(content_length(r), std::nullopt);
  r.headers = {{"content-length", "12"}};
  EXPECT_EQ(content_length(r), 12u);
  for (const char* bad : {"", "12x", "-1", " 12", "99999999999999999999"}) {
    r.headers = {{"content-length", bad}};
    EXPECT_EQ(content_length(r), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace zarrkit::remote

#include "stores/remote/byte_ranges.h"

#include <gtest/gtest.h>

namespace zarrkit::remote {
namespace {

HttpResponse response(int status, std::string_view body, std::string content_range = "") {
  HttpResponse r;
  r.status = status;
  if (!body.empty()) r.body = Buffer::copy_of(as_bytes(body));
  if (!content_range.empty()) r.headers.emplace_back("content-range", content_range);
  return r;
}

std::string text(const Buffer& b) { return std::string(as_chars(b.view())); }

TEST(RangeHeader, Forms) {
  EXPECT_EQ(range_header(ByteRange::range(0, 100)), "bytes=0-99");
  EXPECT_EQ(range_header(ByteRange::from_offset(7)), "bytes=7-");
  EXPECT_EQ(range_header(ByteRange::last(10)), "bytes=-10");
  EXPECT_EQ(range_header(ByteRange::range(5, 5)), std::nullopt);
  EXPECT_EQ(range_header(ByteRange::range(9, 5)), std::nullopt);
  EXPECT_EQ(range_header(ByteRange::last(0)), std::nullopt);
}

TEST(ContentRange, Parsing) {
  auto r = parse_content_range("bytes 0-9/100");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 0u);
  EXPECT_EQ(r->last, 9u);
  EXPECT_EQ(r->total, 100u);
  r = parse_content_range("bytes 5-9/*");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->total);
  r = parse_content_range("bytes */42");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->first);
  EXPECT_EQ(r->total, 42u);
  for (const char* bad : {"", "bytes", "bytes 9-5/100", "bytes 0-100/100", "bytes 0-9", "items 0-9/10",
                          "bytes -9/10", "bytes 0-9/x", "bytes */*", "bytes 0-99999999999999999999/5"}) {
    EXPECT_FALSE(parse_content_range(bad)) << bad;
  }
}

TEST(CheckRangeResponse, AcceptsExactlyWhatWasAsked) {
  Buffer out;
  HttpResponse r = response(206, "cdef", "bytes 2-5/10");
  EXPECT_EQ(check_range_response(ByteRange::range(2, 6), r, out).kind, Verdict::Kind::kAccept);
  EXPECT_EQ(text(out), "cdef");
  // A range past the end is clamped by the server and by us alike.
  r = response(206, "ij", "bytes 8-9/10");
  EXPECT_EQ(check_range_response(ByteRange::range(8, 100), r, out).kind, Verdict::Kind::kAccept);
  r = response(206, "hij", "bytes 7-9/10");
  EXPECT_EQ(check_range_response(ByteRange::last(3), r, out).kind, Verdict::Kind::kAccept);
  r = response(206, "abcdefghij", "bytes 0-9/10");
  EXPECT_EQ(check_range_response(ByteRange::last(50), r, out).kind, Verdict::Kind::kAccept);
  r = response(206, "fghij", "bytes 5-9/10");
  EXPECT_EQ(check_range_response(ByteRange::from_offset(5), r, out).kind, Verdict::Kind::kAccept);
  // A server that ignores Range sends everything: we slice it.
  r = response(200, "abcdefghij");
  EXPECT_EQ(check_range_response(ByteRange::range(3, 5), r, out).kind, Verdict::Kind::kAccept);
  EXPECT_EQ(text(out), "de");
  r = response(200, "abcdefghij");
  EXPECT_EQ(check_range_response(ByteRange::last(2), r, out).kind, Verdict::Kind::kAccept);
  EXPECT_EQ(text(out), "ij");
  // 416: the range starts past the end.
  r = response(416, "", "bytes */10");
  EXPECT_EQ(check_range_response(ByteRange::range(20, 30), r, out).kind, Verdict::Kind::kAccept);
  EXPECT_EQ(out.size(), 0u);
}

TEST(CheckRangeResponse, InconsistentAnswersAreRetriedAsDataLoss) {
  struct Case {
    ByteRange range;
    HttpResponse response;
  };
  std::vector<Case> cases;
  cases.push_back({ByteRange::range(2, 6), response(206, "cde", "bytes 2-5/10")});     // short body
  cases.push_back({ByteRange::range(2, 6), response(206, "cdefg", "bytes 2-5/10")});   // long body
  cases.push_back({ByteRange::range(2, 6), response(206, "bcde", "bytes 1-4/10")});    // wrong start
  cases.push_back({ByteRange::range(2, 6), response(206, "cd", "bytes 2-3/10")});      // cut short, consistent
  cases.push_back({ByteRange::range(2, 6), response(206, "cdef")});                    // no Content-Range
  cases.push_back({ByteRange::range(2, 6), response(206, "cdef", "bytes 2-5")});       // malformed
  cases.push_back({ByteRange::last(3), response(206, "hij", "bytes 7-9/*")});          // suffix without total
  cases.push_back({ByteRange::last(3), response(206, "ghi", "bytes 6-8/10")});         // not the suffix
  cases.push_back({ByteRange::from_offset(5), response(206, "fgh", "bytes 5-7/10")});  // open range cut short
  for (Case& c : cases) {
    Buffer out;
    const Verdict v = check_range_response(c.range, c.response, out);
    EXPECT_EQ(v.kind, Verdict::Kind::kRetry) << v.reason;
    EXPECT_EQ(v.code, ErrorCode::kDataLoss) << v.reason;
    EXPECT_EQ(out.size(), 0u);
  }
}

TEST(PlanRanges, MergesNearbyRangesWithinLimits) {
  const std::vector<ByteRange> ranges{ByteRange::range(100, 200), ByteRange::range(0, 50), ByteRange::range(60, 90),
                                      ByteRange::range(1000, 1010), ByteRange::last(4), ByteRange::range(150, 160)};
  const RangePlan plan = plan_ranges(ranges, /*max_gap=*/10, /*max_span=*/1000);
  // [0,50) + [60,90) + [100,200) (+ [150,160) inside it) merge; [1000,1010) is too far; the suffix stays.
  ASSERT_EQ(plan.requests.size(), 3u);
  EXPECT_EQ(plan.requests[0].kind, ByteRange::Kind::kSuffix);
  EXPECT_EQ(plan.requests[1].start, 0u);
  EXPECT_EQ(plan.requests[1].end, 200u);
  EXPECT_EQ(plan.requests[2].start, 1000u);

  std::string value(1100, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>('a' + i % 26);
  std::vector<Buffer> fetched{Buffer::copy_of(as_bytes(std::string_view(value).substr(1096))),
                              Buffer::copy_of(as_bytes(std::string_view(value).substr(0, 200))),
                              Buffer::copy_of(as_bytes(std::string_view(value).substr(1000, 10)))};
  const std::vector<Buffer> parts = split_ranges(plan, fetched);
  ASSERT_EQ(parts.size(), ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto [b, e] = ranges[i].resolve(value.size());
    EXPECT_EQ(text(parts[i]), value.substr(b, e - b)) << i;
  }

  // A span limit splits a run of close ranges.
  const RangePlan small = plan_ranges(ranges, 10, 100);
  EXPECT_EQ(small.requests.size(), 4u);
  // Ranges past the end of a short value come back clamped.
  std::vector<Buffer> clamped{Buffer(), Buffer::copy_of(as_bytes(std::string_view(value).substr(0, 120))),
                              Buffer()};
  const std::vector<Buffer> short_parts = split_ranges(plan, clamped);
  EXPECT_EQ(text(short_parts[0]), value.substr(100, 20));
  EXPECT_EQ(text(short_parts[2]), value.substr(60, 30));
  EXPECT_EQ(short_parts[3].size(), 0u);
  EXPECT_EQ(short_parts[5].size(), 0u);  // [150, 160) lies past the end of 120 bytes
}

}  // namespace
}  // namespace zarrkit::remote

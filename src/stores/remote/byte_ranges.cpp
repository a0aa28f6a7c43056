#include "stores/remote/byte_ranges.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "stores/host_value.h"

namespace zarrkit::remote {
namespace {

std::optional<std::uint64_t> parse_number(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Verdict mismatch(std::string what) { return Verdict::retry(std::move(what), ErrorCode::kDataLoss); }

}  // namespace

std::optional<std::string> range_header(const ByteRange& range) {
  switch (range.kind) {
    case ByteRange::Kind::kRange:
      if (range.end <= range.start) return std::nullopt;
      return fmt::format("bytes={}-{}", range.start, range.end - 1);
    case ByteRange::Kind::kFromOffset:
      return fmt::format("bytes={}-", range.start);
    case ByteRange::Kind::kSuffix:
      if (range.suffix == 0) return std::nullopt;
      return fmt::format("bytes=-{}", range.suffix);
  }
  return std::nullopt;
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  if (!value.starts_with("bytes ")) return std::nullopt;
  value.remove_prefix(6);
  const std::size_t slash = value.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  ContentRange out;
  std::string_view span = value.substr(0, slash);
  std::string_view total = value.substr(slash + 1);
  if (total != "*") {
    out.total = parse_number(total);
    if (!out.total) return std::nullopt;
  }
  if (span == "*") return out.total ? std::optional(out) : std::nullopt;
  const std::size_t dash = span.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  out.first = parse_number(span.substr(0, dash));
  out.last = parse_number(span.substr(dash + 1));
  if (!out.first || !out.last || *out.last < *out.first) return std::nullopt;
  if (out.total && *out.last >= *out.total) return std::nullopt;
  return out;
}

Verdict check_range_response(const ByteRange& range, HttpResponse& response, Buffer& out) {
  const std::uint64_t received = response.body.size();
  if (response.status == 416) {
    out = Buffer();
    return Verdict::accept();
  }
  if (response.status == 200) {
    // The whole value (the transport checked it against Content-Length).
    const auto [begin, end] = range.resolve(received);
    out = received == 0 ? Buffer() : response.body.slice(static_cast<std::size_t>(begin),
                                                          static_cast<std::size_t>(end - begin));
    return Verdict::accept();
  }
  if (response.status != 206) return Verdict::fail(fmt::format("unexpected HTTP status {}", response.status));

  const auto header = response.header("content-range");
  if (!header) return mismatch("a 206 response without a Content-Range header");
  const auto parsed = parse_content_range(*header);
  if (!parsed || !parsed->first) return mismatch(fmt::format("a malformed Content-Range \"{}\"", *header));
  const std::uint64_t first = *parsed->first;
  const std::uint64_t count = *parsed->last - first + 1;
  std::uint64_t want_first = 0;
  std::optional<std::uint64_t> want_end;  // one past the last byte, when it can be known
  switch (range.kind) {
    case ByteRange::Kind::kRange:
      want_first = range.start;
      want_end = parsed->total ? std::min(range.end, *parsed->total) : range.end;
      break;
    case ByteRange::Kind::kFromOffset:
      want_first = range.start;
      want_end = parsed->total;
      break;
    case ByteRange::Kind::kSuffix:
      if (!parsed->total) return mismatch(fmt::format("a suffix range answered without the total size: \"{}\"", *header));
      want_first = *parsed->total - std::min(range.suffix, *parsed->total);
      want_end = parsed->total;
      break;
  }
  if (first != want_first || (want_end && first + count != *want_end)) {
    return mismatch(fmt::format("asked for {} but the server sent \"Content-Range: {}\"",
                                range_header(range).value_or("nothing"), *header));
  }
  if (received != count) {
    return mismatch(fmt::format("the body has {} bytes but Content-Range \"{}\" announced {}", received, *header,
                                count));
  }
  out = std::move(response.body);
  return Verdict::accept();
}

RangePlan plan_ranges(std::span<const ByteRange> ranges, std::uint64_t max_gap, std::uint64_t max_span) {
  return coalesce_byte_ranges(ranges, {.max_gap = max_gap, .max_span = max_span});
}

std::vector<Buffer> split_ranges(const RangePlan& plan, const std::vector<Buffer>& fetched) {
  std::vector<Buffer> out;
  out.reserve(plan.parts.size());
  for (const RangePlan::Part& part : plan.parts) {
    const Buffer& source = fetched.at(part.request);
    const std::uint64_t begin = std::min<std::uint64_t>(part.offset, source.size());
    const std::uint64_t end = std::min<std::uint64_t>(source.size(), begin + std::min(part.length, source.size()));
    out.push_back(end > begin ? source.slice(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin))
                              : Buffer());
  }
  return out;
}

Buffer to_prototype(Buffer data, const BufferPrototype& prototype, std::string_view store) {
  return host_value_for(std::move(data), prototype, store);
}

}  // namespace zarrkit::remote

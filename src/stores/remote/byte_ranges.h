// Byte ranges over HTTP: the Range header for a ByteRange, checking that a response holds
// exactly the bytes asked for, and the requests of a get_ranges call.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stores/byte_range_coalescer.h"
#include "stores/remote/http_transport.h"
#include "stores/remote/retry.h"
#include "zarrkit/store.h"

namespace zarrkit::remote {

// "bytes=0-99", "bytes=100-", "bytes=-10"; nullopt when the range surely selects nothing
// (an empty kRange, a zero suffix): no GET is needed, only an existence check.
std::optional<std::string> range_header(const ByteRange& range);

// A parsed "Content-Range: bytes FIRST-LAST/TOTAL" (TOTAL may be '*'; "bytes */TOTAL" has
// no first and last).
struct ContentRange {
  std::optional<std::uint64_t> first;
  std::optional<std::uint64_t> last;
  std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(std::string_view value);

// Judges a successful GET answer (200, 206 or 416) to a request for `range`, and on success
// puts the selected bytes in `out`: 206 must carry a Content-Range that matches the range
// asked for and a body of that length; 200 (a server that ignores Range) is the whole
// value and is sliced here; 416 (the range starts past the end) selects nothing. Anything
// inconsistent is retried, and becomes DataLossError if it persists.
Verdict check_range_response(const ByteRange& range, HttpResponse& response, Buffer& out);

// A get_ranges call's requests: nearby kRange ranges merged by the shared coalescer
// (stores/byte_range_coalescer.h), taken by start, overlaps sharing their bytes; ranges whose
// gap is at most `max_gap` bytes are merged while the merged range stays at most `max_span`
// bytes. Suffix and open-ended ranges are fetched as they are.
using RangePlan = CoalescedRanges;
RangePlan plan_ranges(std::span<const ByteRange> ranges, std::uint64_t max_gap, std::uint64_t max_span);
// The original ranges' bytes from the fetched ones (sharing their memory).
std::vector<Buffer> split_ranges(const RangePlan& plan, const std::vector<Buffer>& fetched);

// `data` in memory of the prototype's kind: itself for host memory, a copy for pinned host
// memory; device memory is UnsupportedError (the GPU stores fill it).
Buffer to_prototype(Buffer data, const BufferPrototype& prototype, std::string_view store);

}  // namespace zarrkit::remote

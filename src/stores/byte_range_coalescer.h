// Merging nearby byte ranges into fewer, larger reads, and telling each range where it lies
// in its merged read. One rule for every reader of byte ranges: the shard reader's inner
// chunks and windows, the HTTP and S3 stores' get_ranges, and the GDS store's pieces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "zarrkit/store.h"

namespace zarrkit {

struct CoalesceLimits {
  // Ranges at most this many bytes apart share a merged read (the gap is read too).
  std::uint64_t max_gap = 0;
  // A merged read spans at most this many bytes, gaps included; a range longer than that
  // is a read of its own.
  std::uint64_t max_span = std::numeric_limits<std::uint64_t>::max();
  // false: the ranges are taken by start (ties in the order given). true: in the order
  // given, each joining only the read before it, and only when it does not start before
  // that read does (the reads then follow the input's order: destinations laid out in
  // that order).
  bool keep_order = false;
  // true: a range that overlaps or repeats bytes of the open read shares them. false: it
  // joins only when it starts at or past that read's end (each byte of a read then belongs
  // to at most one range: staging buffers filled range by range).
  bool merge_overlaps = true;
};

struct CoalescedRanges {
  // The reads to make: the suffix and open-ended ranges first, as they are and in the order
  // given (their bytes are unknown until read), then the merged kRange reads, in the order
  // the ranges were taken (see CoalesceLimits::keep_order).
  std::vector<ByteRange> requests;

  // Where range i lies: bytes [offset, offset + length) of requests[parts[i].request]. A
  // suffix or open-ended range is all of its read: offset 0, length UINT64_MAX. An empty
  // or inverted kRange [start, end <= start) is an empty range at `start`.
  struct Part {
    std::size_t request = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
  };
  std::vector<Part> parts;  // one per range, in the order given

  // The ranges each read holds (indices into the input), in the order they were taken.
  std::span<const std::size_t> members(std::size_t request) const {
    return std::span(member_list).subspan(member_begin[request], member_begin[request + 1] - member_begin[request]);
  }
  std::vector<std::size_t> member_list;   // the members of requests[0], then of requests[1], ...
  std::vector<std::size_t> member_begin;  // where each read's members start; one more than requests
};

// Merges the kRange ranges within `limits`; suffix and open-ended ranges pass through. No
// arithmetic overflows, whatever the offsets.
CoalescedRanges coalesce_byte_ranges(std::span<const ByteRange> ranges, const CoalesceLimits& limits);

}  // namespace zarrkit

#include "stores/byte_range_coalescer.h"

#include <algorithm>

namespace zarrkit {

CoalescedRanges coalesce_byte_ranges(std::span<const ByteRange> ranges, const CoalesceLimits& limits) {
  CoalescedRanges out;
  out.parts.resize(ranges.size());
  out.member_list.reserve(ranges.size());
  out.member_begin.reserve(ranges.size() + 1);

  std::vector<std::size_t> order;  // the kRange ranges, in the order they are taken
  order.reserve(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].kind == ByteRange::Kind::kRange) {
      order.push_back(i);
      continue;
    }
    out.parts[i] = {out.requests.size(), 0, std::numeric_limits<std::uint64_t>::max()};
    out.member_begin.push_back(out.member_list.size());
    out.member_list.push_back(i);
    out.requests.push_back(ranges[i]);
  }
  if (!limits.keep_order) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return ranges[a].start < ranges[b].start; });
  }

  bool open = false;  // the last read may take more ranges
  for (const std::size_t i : order) {
    const std::uint64_t start = ranges[i].start;
    const std::uint64_t end = std::max(ranges[i].end, start);
    if (open) {
      ByteRange& merged = out.requests.back();
      // Differences only, never sums: offsets near 2^64 cannot overflow.
      const bool after = limits.merge_overlaps ? start >= merged.start : start >= merged.end;
      const bool near = start <= merged.end || start - merged.end <= limits.max_gap;
      if (after && near && std::max(end, merged.end) - merged.start <= limits.max_span) {
        merged.end = std::max(merged.end, end);
        out.parts[i] = {out.requests.size() - 1, start - merged.start, end - start};
        out.member_list.push_back(i);
        continue;
      }
    }
    out.parts[i] = {out.requests.size(), 0, end - start};
    out.member_begin.push_back(out.member_list.size());
    out.member_list.push_back(i);
    out.requests.push_back(ByteRange::range(start, end));
    open = true;
  }
  out.member_begin.push_back(out.member_list.size());
  return out;
}

}  // namespace zarrkit

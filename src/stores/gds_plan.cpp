#include "stores/gds_plan.h"

#include <algorithm>

#include "stores/byte_range_coalescer.h"
#include "stores/file_io.h"
#include "stores/local_store_internal.h"
#include "zarrkit/error.h"

namespace zarrkit::detail {

GdsPathReport choose_gds_path(GdsMode requested, const CufileProbe& probe) {
  GdsPathReport report;
  if (requested == GdsMode::kCompat) {
    report.detail = "the compat path was asked for (mode compat); cuFile is not loaded";
    return report;
  }
  const bool usable = probe.loaded && probe.driver_opened;
  if (!usable) {
    const std::string why = probe.reason.empty() ? std::string("cuFile cannot be used") : probe.reason;
    if (requested == GdsMode::kCufile) {
      fail_unsupported("GPUDirect Storage was asked for (mode cufile), but {}", why);
    }
    report.detail = "cuFile is not used: " + why;
    return report;
  }
  const std::string version = probe.version.empty() ? std::string() : " " + probe.version;
  // Without the nvidia-fs driver cuFile only preads into its own bounce buffer and copies
  // from there, one request at a time: the compat path does the same with many threads and
  // overlapped copies, so `auto` takes cuFile only for real GPUDirect transfers.
  if (!probe.gds_driver && requested == GdsMode::kAuto) {
    report.detail = "cuFile" + version +
                    " is loaded but has no nvidia-fs driver (it would run in its compatibility mode); the "
                    "compat path reads instead (mode cufile forces cuFile)";
    return report;
  }
  report.path = GdsPath::kCufile;
  report.cufile_compat_mode = !probe.gds_driver;
  report.detail = probe.gds_driver
                      ? "cuFile" + version + " with the nvidia-fs driver (GPUDirect transfers)"
                      : "cuFile" + version + " in its compatibility mode (no nvidia-fs driver)";
  return report;
}

std::vector<Piece> plan_pieces(std::span<const PlannedRead> reads, std::uint64_t piece_bytes,
                               std::uint64_t max_gap) {
  if (piece_bytes == 0) fail_invalid("GDS pieces must hold at least one byte");
  // A read longer than a piece is cut into pieces of exactly piece_bytes and a rest first;
  // a part that fills a piece can share it with nothing, so only the short ones coalesce.
  std::vector<PieceSegment> parts;
  std::vector<ByteRange> destinations;
  parts.reserve(reads.size());
  destinations.reserve(reads.size());
  for (std::size_t r = 0; r < reads.size(); ++r) {
    const PlannedRead& read = reads[r];
    for (std::uint64_t done = 0; done < read.length;) {
      const std::uint64_t n = std::min(piece_bytes, read.length - done);
      parts.push_back({static_cast<std::uint32_t>(r), read.file_offset + done, n, 0});
      destinations.push_back(ByteRange::range(read.dest + done, read.dest + done + n));
      done += n;
    }
  }
  // In destination order, never sharing bytes: each segment lands in its own part of the
  // staging buffer.
  const CoalescedRanges merged = coalesce_byte_ranges(
      destinations, {.max_gap = max_gap, .max_span = piece_bytes, .keep_order = true, .merge_overlaps = false});
  std::vector<Piece> pieces(merged.requests.size());
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    Piece& piece = pieces[p];
    piece.dest = merged.requests[p].start;
    piece.length = merged.requests[p].end - piece.dest;
    const std::span<const std::size_t> members = merged.members(p);
    piece.segments.reserve(members.size());
    for (const std::size_t k : members) {
      PieceSegment segment = parts[k];
      segment.staging_offset = merged.parts[k].offset;
      piece.segments.push_back(segment);
    }
  }
  return pieces;
}

std::string file_ended_early(std::uint64_t ended_at, std::uint64_t expected_end) {
  return fmt::format("the file ended at byte {}, {} expected: it changed size while being read", ended_at,
                     expected_end);
}

std::optional<std::string> pread_fully(FileIo& io, int fd, std::byte* dst, std::uint64_t length,
                                       std::uint64_t offset) {
  std::uint64_t done = 0;
  while (done < length) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(length - done, 1ull << 30));
    const ssize_t got = retry_eintr([&] { return io.pread(fd, dst + done, want, static_cast<off_t>(offset + done)); });
    if (got < 0) return errno_text(errno);
    if (got == 0) return file_ended_early(offset + done, offset + length);
    done += static_cast<std::uint64_t>(got);
  }
  return std::nullopt;
}

std::vector<std::uint64_t> pack_values(std::span<const std::uint64_t> sizes, std::uint64_t alignment) {
  if (alignment == 0) alignment = 1;
  std::vector<std::uint64_t> offsets;
  offsets.reserve(sizes.size() + 1);
  std::uint64_t at = 0;
  for (const std::uint64_t size : sizes) {
    offsets.push_back(at);
    at += (size + alignment - 1) / alignment * alignment;
  }
  offsets.push_back(at);
  return offsets;
}

}  // namespace zarrkit::detail

// The host-side decisions of GdsStore's device reads, as pure functions (tested on any
// machine): which path a read takes (cuFile or the compatibility path), and how the bytes
// of a request are cut into pieces for the I/O threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/settings_env.h"  // parse_gds_mode, gds_mode_name
#include "zarrkit/stores/gds_store.h"

namespace zarrkit::detail {

// What loading cuFile found (gpu/cufile_runtime.h fills it on a machine with CUDA).
struct CufileProbe {
  bool loaded = false;         // the library and its entry points
  bool driver_opened = false;  // cuFileDriverOpen succeeded
  bool gds_driver = false;     // the nvidia-fs driver is there: true GPUDirect transfers
  std::string version;         // "1.15" when the library says
  std::string reason;          // why not, when !loaded or !driver_opened
};

// The path device reads take for `requested` given what cuFile offers:
//   compat: the compatibility path (cuFile is not even loaded);
//   auto:   cuFile when it loaded and its driver opened, else the compatibility path, with
//           the reason in the report;
//   cufile: cuFile, or UnsupportedError saying why it cannot be used (a forced choice
//           is never silently replaced).
// cuFile without the nvidia-fs driver runs in its own compatibility mode; the report says
// which mode it is in.
GdsPathReport choose_gds_path(GdsMode requested, const CufileProbe& probe);

// One part of a request: `length` bytes of an open file from `file_offset`, to land at
// `dest` (an address in the destination memory, kept as an integer so that planning needs
// no device).
struct PlannedRead {
  std::uint64_t file_offset = 0;
  std::uint64_t length = 0;
  std::uint64_t dest = 0;
};

// A piece: one staging buffer's worth, copied to the device in one transfer of `length`
// bytes to `dest`. Its segments are the parts of reads it holds, each read from the file
// into the staging buffer at `staging_offset` (= its dest - the piece's dest).
struct PieceSegment {
  std::uint32_t read = 0;  // index into the planned reads
  std::uint64_t file_offset = 0;
  std::uint64_t length = 0;
  std::uint64_t staging_offset = 0;
};
struct Piece {
  std::uint64_t dest = 0;
  std::uint64_t length = 0;
  std::vector<PieceSegment> segments;
};

// Cuts `reads` into pieces of at most `piece_bytes` (> 0): a read longer than that is split
// into pieces of exactly `piece_bytes` and a rest; reads that follow one another in the
// destination with at most `max_gap` bytes between them (and do not overlap) share a piece
// while it has room (the byte-range coalescer, in the reads' order), so that small values
// travel in one copy. The gap bytes are copied
// too (they hold whatever the staging buffer held): pass 0 unless the destination's gaps
// are the caller's own padding. Zero-length reads need no piece. Every byte of every read
// is in exactly one segment.
std::vector<Piece> plan_pieces(std::span<const PlannedRead> reads, std::uint64_t piece_bytes,
                               std::uint64_t max_gap);

class FileIo;

// Reads `length` bytes of `fd` from `offset` into host memory at `dst` with pread through
// `io`, continuing short reads and retrying interruptions. Returns nullopt when all were
// read, else what went wrong: the system's error text, or where the file ended early ("the
// file ended at byte 10, 20 expected: it changed size while being read").
std::optional<std::string> pread_fully(FileIo& io, int fd, std::byte* dst, std::uint64_t length,
                                       std::uint64_t offset);
std::string file_ended_early(std::uint64_t ended_at, std::uint64_t expected_end);

// Where get_many puts its values in one device allocation: each at a multiple of
// `alignment`, in order. Returns the offsets and, last, the total size.
std::vector<std::uint64_t> pack_values(std::span<const std::uint64_t> sizes, std::uint64_t alignment);

}  // namespace zarrkit::detail

// The frames the GPU write path builds on the device, written once for the device and the
// host (the host tests build frames with these functions and hand them to c-blosc).
//
// Every chunk of an array has the same frame template: a header, then streams, each a
// blosc split (preceded by its 4-byte size), the numcodecs.lz4 block, or the raw chunk.
// Streams are cut into segments (lz4_encode.cuh), one warp each. Per chunk the device
//   1. encodes each LZ4 segment                                   (warp per segment)
//   2. plans each stream: its size, raw or LZ4, where pieces go   (thread per stream)
//   3. places the streams one after another in the frame           (thread per chunk)
//   4. places the stored values one after another in the batch     (one block)
//   5. writes header, prefixes and pieces                          (warp per segment)
// so that only the stored bytes come back to the host, already framed. The crc32c codecs
// after the compressor reserve 4 bytes each around the frame; the host fills them in from
// the frame's CRC-32C, which the device computes (write_plan.h: fill_checksums).
#pragma once

#include <cstdint>

#include "gpu/lz4_encode.cuh"

namespace zarrkit::gpu {

enum class StreamMode : std::uint8_t {
  kRaw = 0,        // copied as it is
  kLz4 = 1,        // an LZ4 block, whatever its size (numcodecs.lz4)
  kLz4OrRaw = 2,   // an LZ4 block if it comes out smaller, else raw (a blosc split)
};
enum class FrameKind : std::uint8_t { kRaw = 0, kLz4 = 1, kBlosc = 2 };

struct WriteStream {
  std::uint64_t offset = 0;  // in the chunk's bytes (shuffled ones when `shuffled`)
  std::uint64_t size = 0;
  std::uint32_t first_segment = 0;
  std::uint32_t num_segments = 0;
  std::uint32_t block = 0;         // blosc: the block it belongs to
  StreamMode mode = StreamMode::kRaw;
  std::uint8_t shuffled = 0;       // 1: from the shuffle scratch
  std::uint8_t prefixed = 0;       // 1: its 4-byte stored size precedes it (blosc)
  std::uint8_t first_of_block = 0; // 1: the block's offset (bstarts) points at it
};

struct WriteSegment {
  std::uint32_t stream = 0;
  std::uint64_t begin = 0;        // positions in its stream
  std::uint64_t end = 0;
  std::uint64_t rest_offset = 0;  // LZ4: where its sequences go in the chunk's rest area
  std::uint32_t rest_capacity = 0;
};

struct FrameTemplate {
  FrameKind kind = FrameKind::kRaw;
  std::uint8_t blosc_version = 0, blosc_versionlz = 0, blosc_flags = 0, blosc_typesize = 0;
  std::uint32_t blosc_blocksize = 0;
  std::uint32_t header_bytes = 0;  // blosc: 16 + 4 per block; lz4: 4; raw: 0
  std::uint32_t num_blocks = 0;
  std::uint32_t num_streams = 0;
  std::uint32_t num_segments = 0;
  std::uint32_t reserve_start = 0;  // checksum bytes before the frame
  std::uint32_t reserve_end = 0;    // and after it
  std::uint64_t chunk_bytes = 0;
  std::uint64_t rest_bytes = 0;        // rest area per chunk
  std::uint64_t max_stored_bytes = 0;  // a stored value is never longer
};

// Per chunk and stream: where its payload goes in the frame, its stored size, and for an
// LZ4 stream where its last sequence goes. status != 0: the LZ4 block did not fit.
struct StreamPlace {
  std::uint64_t at = 0;
  std::uint64_t size = 0;
  Lz4BlockEnd end;
  std::uint32_t raw = 0;
  std::uint32_t status = 0;
};

// Per chunk: where its stored value (checksum fields included) is in the batch's packed
// bytes, the frame's own size, whether it is stored at all, and a failure code.
struct ChunkFrame {
  std::uint64_t at = 0;
  std::uint64_t frame_bytes = 0;
  std::uint32_t stored = 0;
  std::uint32_t status = 0;
};

// The most bytes an LZ4 stream of n bytes takes (liblz4's bound; the stitched block never
// exceeds it, the device checks).
ZK_HD std::uint64_t lz4_bound(std::uint64_t n) { return n + n / 255 + 16; }

ZK_HD void put_le32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

// Step 2, one stream: its stored size, whether it is raw, and its pieces (pieces[k] and
// segments[k] for its k-th segment).
ZK_HD StreamPlace plan_stream(const WriteStream& stream, const Lz4Segment* segments, Lz4Piece* pieces) {
  StreamPlace place;
  if (stream.mode == StreamMode::kRaw) {
    place.size = stream.size;
    place.raw = 1;
    return place;
  }
  bool overflow = false;
  for (std::uint32_t k = 0; k < stream.num_segments; ++k) overflow = overflow || segments[k].overflow != 0;
  const auto n = static_cast<std::uint32_t>(stream.size);
  const std::uint64_t size = overflow ? ~std::uint64_t{0} : lz4_plan_block(segments, stream.num_segments, n, pieces, place.end);
  if (stream.mode == StreamMode::kLz4OrRaw && size >= stream.size) {
    place.size = stream.size;
    place.raw = 1;
  } else if (size > lz4_bound(stream.size)) {
    place.status = 1;
  } else {
    place.size = size;
  }
  return place;
}

// Step 3, one chunk: the streams one after another after the header; returns the frame's size.
ZK_HD std::uint64_t place_streams(const FrameTemplate& t, const WriteStream* streams, StreamPlace* places) {
  std::uint64_t at = t.header_bytes;
  for (std::uint32_t s = 0; s < t.num_streams; ++s) {
    if (streams[s].prefixed) at += 4;
    places[s].at = at;
    at += places[s].size;
  }
  return at;
}

// Step 5, one segment of one chunk: its stream's size prefix (first segment), its bytes
// (raw) or its LZ4 piece, and the block's last sequence (last segment). `source` is the
// chunk's bytes the stream reads, `frame` the frame's first byte.
ZK_HD void write_segment(const WriteStream& stream, const WriteSegment& seg, std::uint32_t index_in_stream,
                         const std::uint8_t* source, const Lz4Segment& encoded, const Lz4Piece& piece,
                         const StreamPlace& place, const std::uint8_t* rest, std::uint8_t* frame, unsigned lane,
                         unsigned width) {
  std::uint8_t* payload = frame + place.at;
  const std::uint8_t* in = source + stream.offset;
  if (index_in_stream == 0 && stream.prefixed && lane == 0) put_le32(payload - 4, static_cast<std::uint32_t>(place.size));
  if (place.raw) {
    for (std::uint64_t i = seg.begin + lane; i < seg.end; i += width) payload[i] = in[i];
    return;
  }
  lz4_write_piece(in, encoded, piece, rest, payload, lane, width);
  if (index_in_stream + 1 == stream.num_segments) {
    lz4_write_block_end(in, static_cast<std::uint32_t>(stream.size), place.end, payload, lane, width);
  }
}

// Step 5, once per chunk: the frame's header (blosc: with every block's offset).
ZK_HD void write_frame_header(const FrameTemplate& t, const WriteStream* streams, const StreamPlace* places,
                              std::uint64_t frame_bytes, std::uint8_t* frame, unsigned lane, unsigned width) {
  if (t.kind == FrameKind::kLz4) {
    if (lane == 0) put_le32(frame, static_cast<std::uint32_t>(t.chunk_bytes));
    return;
  }
  if (t.kind != FrameKind::kBlosc) return;
  if (lane == 0) {
    frame[0] = t.blosc_version;
    frame[1] = t.blosc_versionlz;
    frame[2] = t.blosc_flags;
    frame[3] = t.blosc_typesize;
    put_le32(frame + 4, static_cast<std::uint32_t>(t.chunk_bytes));
    put_le32(frame + 8, t.blosc_blocksize);
    put_le32(frame + 12, static_cast<std::uint32_t>(frame_bytes));
  }
  for (std::uint32_t s = lane; s < t.num_streams; s += width) {
    if (streams[s].first_of_block) put_le32(frame + 16 + 4 * streams[s].block, static_cast<std::uint32_t>(places[s].at - 4));
  }
}

}  // namespace zarrkit::gpu

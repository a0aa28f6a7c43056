#include "gpu/write_plan.h"

#include <blosc.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "codecs/crc32c.h"
#include "core/checked_math.h"
#include "gpu/batch_support.h"
#include "gpu/device_chain.h"
#include "gpu/device_settings.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {
namespace {

}  // namespace

// Its streams cut into segments of kLz4SegmentBytes (raw ones too: a warp copies each), the
// rest area of the LZ4 segments, the largest value.
void plan_frames(WritePlan& plan) {
  FrameTemplate& t = plan.frame;
  t.chunk_bytes = plan.chunk_bytes;
  for (const bool first : plan.checksums) (first ? t.reserve_start : t.reserve_end) += 4;
  std::uint64_t largest = t.reserve_start + t.reserve_end;
  auto add_stream = [&](WriteStream s) {
    s.first_segment = static_cast<std::uint32_t>(plan.segments.size());
    const std::uint64_t pieces = s.size == 0 ? 1 : ceil_div(s.size, kLz4SegmentBytes);
    s.num_segments = static_cast<std::uint32_t>(pieces);
    for (std::uint64_t k = 0; k < pieces; ++k) {
      WriteSegment seg;
      seg.stream = static_cast<std::uint32_t>(plan.streams.size());
      seg.begin = k * kLz4SegmentBytes;
      seg.end = std::min<std::uint64_t>(s.size, seg.begin + kLz4SegmentBytes);
      if (s.mode != StreamMode::kRaw) {
        seg.rest_offset = t.rest_bytes;
        seg.rest_capacity = lz4_rest_capacity(static_cast<std::uint32_t>(seg.end - seg.begin));
        t.rest_bytes += align_up(seg.rest_capacity, 16);
      }
      plan.segments.push_back(seg);
    }
    largest += (s.prefixed ? 4 : 0) + (s.mode == StreamMode::kLz4 ? lz4_bound(s.size) : s.size);
    plan.streams.push_back(s);
  };
  switch (plan.compressor) {
    case WritePlan::Compressor::kNone:
      t.kind = FrameKind::kRaw;
      add_stream({.offset = 0, .size = plan.chunk_bytes, .mode = StreamMode::kRaw});
      break;
    case WritePlan::Compressor::kLz4:
      t.kind = FrameKind::kLz4;
      t.header_bytes = 4;
      add_stream({.offset = 0, .size = plan.chunk_bytes, .mode = StreamMode::kLz4});
      break;
    case WritePlan::Compressor::kBlosc: {
      const BloscWriteLayout& layout = plan.layout;
      t.kind = FrameKind::kBlosc;
      t.blosc_version = BLOSC_VERSION_FORMAT;
      t.blosc_versionlz = BLOSC_LZ4_VERSION_FORMAT;
      t.blosc_flags = layout.flags;
      t.blosc_typesize = static_cast<std::uint8_t>(layout.typesize);
      t.blosc_blocksize = layout.blocksize;
      t.num_blocks = static_cast<std::uint32_t>(layout.splits_per_block.size());
      t.header_bytes = BLOSC_MIN_HEADER_LENGTH + 4 * t.num_blocks;
      std::vector<bool> shuffled(t.num_blocks, false);
      for (const BlockJob& b : layout.shuffles) shuffled[b.offset / layout.blocksize] = true;
      std::uint32_t previous_block = ~0u;
      for (const BloscSplit& split : layout.splits) {
        const auto block = static_cast<std::uint32_t>(split.offset / layout.blocksize);
        add_stream({.offset = split.offset,
                    .size = split.size,
                    .block = block,
                    .mode = plan.blosc.compress ? StreamMode::kLz4OrRaw : StreamMode::kRaw,
                    .shuffled = static_cast<std::uint8_t>(shuffled[block] ? 1 : 0),
                    .prefixed = 1,
                    .first_of_block = static_cast<std::uint8_t>(block != previous_block ? 1 : 0)});
        previous_block = block;
      }
      break;
    }
  }
  t.num_streams = static_cast<std::uint32_t>(plan.streams.size());
  t.num_segments = static_cast<std::uint32_t>(plan.segments.size());
  t.max_stored_bytes = largest + t.header_bytes;
}

BloscWriteLayout plan_blosc_write(std::uint64_t nbytes, const BloscWriteSettings& s) {
  BloscWriteLayout layout;
  layout.nbytes = nbytes;
  layout.typesize = s.typesize;
  const std::uint64_t ts = s.typesize;
  // c-blosc's rules for a given block size; automatic blocks of 32 KiB per byte of the type
  // give each split 32 KiB, many independent streams for the GPU.
  std::uint64_t block = s.blocksize > 0 ? std::max<std::uint64_t>(s.blocksize, 128)
                                        : std::clamp<std::uint64_t>(32768 * ts, 65536, 1u << 20);
  block = std::min<std::uint64_t>({block, BLOSC_MAX_BLOCKSIZE, std::max<std::uint64_t>(nbytes, 1)});
  if (block > ts) block = block / ts * ts;
  layout.blocksize = static_cast<std::uint32_t>(block);
  layout.flags = static_cast<std::uint8_t>(BLOSC_LZ4_FORMAT << 5);
  if (s.shuffle == BlockShuffle::kByte) layout.flags |= BLOSC_DOSHUFFLE;
  if (s.shuffle == BlockShuffle::kBit) layout.flags |= BLOSC_DOBITSHUFFLE;
  const std::uint64_t leftover = nbytes % block;
  const std::uint64_t nblocks = nbytes / block + (leftover > 0 ? 1 : 0);
  for (std::uint64_t j = 0; j < nblocks; ++j) {
    const bool leftover_block = j == nblocks - 1 && leftover > 0;
    const std::uint64_t bsize = leftover_block ? leftover : block;
    // The splits every c-blosc 1.x reader expects when the "don't split" flag is clear.
    const std::uint64_t nsplits = ts <= 16 && bsize / ts >= 128 && !leftover_block ? ts : 1;
    layout.splits_per_block.push_back(static_cast<std::uint32_t>(nsplits));
    for (std::uint64_t k = 0; k < nsplits; ++k) {
      layout.splits.push_back({j * block + k * (bsize / nsplits), static_cast<std::uint32_t>(bsize / nsplits)});
    }
    const bool byte = s.shuffle == BlockShuffle::kByte && ts > 1;
    const bool bit = s.shuffle == BlockShuffle::kBit && bsize >= ts;
    if (byte || bit) {
      layout.shuffles.push_back({j * block, static_cast<std::uint32_t>(bsize), 0, static_cast<std::uint16_t>(ts),
                                 byte ? BlockShuffle::kByte : BlockShuffle::kBit});
    }
  }
  return layout;
}

WritePlan plan_write(const ArrayMetadata& m, const CodecRegistry& registry) {
  WritePlan plan;
  // The same layout facts as reads: transposes and byte order fold the same way.
  const DeviceChain read(std::shared_ptr<const PreparedChain>(std::shared_ptr<void>(), &m.prepared_chain()), 1,
                         device_settings(), registry);
  // The encoder has no passes (delta's differences are taken on the host).
  if (read.host_whole_chain() || !read.passes().empty()) return plan;
  plan.swap_unit = read.swap_unit();
  plan.stored_strides = read.stored_strides();
  plan.chunk_bytes = read.chunk_bytes();
  // Bytes->bytes in encode order: at most one compressor (LZ4 or a blosc frame of LZ4
  // streams), then checksums; anything else writes on the host.
  const auto& bb = m.codecs->bytes_to_bytes();
  for (std::size_t i = 0; i < bb.size(); ++i) {
    const auto half = std::dynamic_pointer_cast<const DeviceEncoderStep>(registry.make_device(bb[i]));
    const auto step = half ? half->write_step(read.ab_spec()) : std::nullopt;
    if (!step) return plan;
    switch (step->kind) {
      case WriteStep::Kind::kLz4:
        if (i != 0 || plan.chunk_bytes > static_cast<std::uint64_t>(INT32_MAX)) return plan;
        plan.compressor = WritePlan::Compressor::kLz4;
        break;
      case WriteStep::Kind::kBlosc:
        if (i != 0 || plan.chunk_bytes > static_cast<std::uint64_t>(BLOSC_MAX_BUFFERSIZE)) return plan;
        plan.compressor = WritePlan::Compressor::kBlosc;
        plan.blosc = step->blosc;
        plan.layout = plan_blosc_write(plan.chunk_bytes, plan.blosc);
        break;
      case WriteStep::Kind::kChecksum:
        plan.checksums.push_back(step->checksum_first);
        break;
    }
  }
  plan_frames(plan);
  plan.on_gpu = true;
  return plan;
}

void fill_checksums(const WritePlan& plan, std::uint32_t frame_crc, std::uint64_t frame_bytes, std::byte* value) {
  std::byte* start = value + plan.frame.reserve_start;  // the checksummed bytes so far
  std::byte* end = start + frame_bytes;
  std::uint32_t crc = frame_crc;                       // their CRC-32C
  for (const bool first : plan.checksums) {
    std::uint8_t field[4];
    put_le32(field, crc);
    const std::uint32_t field_crc = crc32c(ByteView{reinterpret_cast<const std::byte*>(field), 4});
    const auto length = static_cast<std::uint64_t>(end - start);
    if (first) {
      start -= 4;
      std::memcpy(start, field, 4);
      crc = crc32c_combine(field_crc, crc, length);
    } else {
      std::memcpy(end, field, 4);
      end += 4;
      crc = crc32c_combine(crc, field_crc, 4);
    }
  }
}

Buffer encode_chunk_like_the_device(const WritePlan& plan, ByteView chunk) {
  if (!plan.on_gpu) return {};
  if (chunk.size() != plan.chunk_bytes) fail_invalid("a chunk of {} bytes for a plan of {}", chunk.size(), plan.chunk_bytes);
  const auto* data = reinterpret_cast<const std::uint8_t*>(chunk.data());
  // Shuffle the blocks that are shuffled.
  std::vector<std::uint8_t> shuffled(data, data + chunk.size());
  for (const BlockJob& b : plan.layout.shuffles) {
    const std::uint8_t* in = data + b.offset;
    std::uint8_t* out = shuffled.data() + b.offset;
    const std::uint32_t elements = b.size / b.typesize;
    if (b.shuffle == BlockShuffle::kByte) {
      for (std::uint32_t e = 0; e < elements; ++e) shuffle_element(in, out, elements, b.typesize, e);
    } else if (bitshuffle_applies(b.size, b.typesize)) {
      for (std::uint32_t g = 0; g < elements / 8; ++g) {
        for (unsigned j = 0; j < b.typesize; ++j) bitshuffle_column8(in, out, elements, b.typesize, g, j);
      }
    }
  }
  const FrameTemplate& t = plan.frame;
  std::vector<Lz4Segment> encoded(t.num_segments);
  std::vector<Lz4Piece> pieces(t.num_segments);
  std::vector<std::uint8_t> rest(t.rest_bytes);
  std::vector<std::uint16_t> table(1u << kLz4HashBits);
  auto source = [&](const WriteStream& s) { return s.shuffled ? shuffled.data() : data; };
  for (std::uint32_t k = 0; k < t.num_segments; ++k) {  // 1. encode
    const WriteSegment& seg = plan.segments[k];
    const WriteStream& s = plan.streams[seg.stream];
    if (s.mode == StreamMode::kRaw) continue;
    encoded[k] = lz4_encode_segment<1>(source(s) + s.offset, static_cast<std::uint32_t>(s.size),
                                       static_cast<std::uint32_t>(seg.begin), static_cast<std::uint32_t>(seg.end),
                                       rest.data() + seg.rest_offset, seg.rest_capacity, table.data(), 0);
  }
  std::vector<StreamPlace> places(t.num_streams);
  for (std::uint32_t s = 0; s < t.num_streams; ++s) {  // 2. plan the streams
    const WriteStream& st = plan.streams[s];
    places[s] = plan_stream(st, encoded.data() + st.first_segment, pieces.data() + st.first_segment);
    if (places[s].status != 0) throw InternalError("an LZ4 block came out larger than LZ4's bound");
  }
  const std::uint64_t frame_bytes = place_streams(t, plan.streams.data(), places.data());  // 3.
  Buffer value = Buffer::allocate(to_size(t.reserve_start + frame_bytes + t.reserve_end));
  auto* frame = reinterpret_cast<std::uint8_t*>(value.data()) + t.reserve_start;
  for (std::uint32_t k = 0; k < t.num_segments; ++k) {  // 5. write
    const WriteSegment& seg = plan.segments[k];
    const WriteStream& s = plan.streams[seg.stream];
    write_segment(s, seg, k - s.first_segment, source(s), encoded[k], pieces[k], places[seg.stream],
                  rest.data() + seg.rest_offset, frame, 0, 1);
  }
  write_frame_header(t, plan.streams.data(), places.data(), frame_bytes, frame, 0, 1);
  const std::uint32_t crc = crc32c(ByteView{reinterpret_cast<const std::byte*>(frame), to_size(frame_bytes)});
  fill_checksums(plan, crc, frame_bytes, value.data());
  return value;
}

}  // namespace zarrkit::gpu

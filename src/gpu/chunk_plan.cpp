#include "gpu/chunk_plan.h"

#include <blosc.h>

#include <algorithm>
#include <climits>
#include <numeric>

#include "core/checked_math.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {
namespace {

std::uint32_t load_le32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
std::int64_t load_le32_signed(const std::byte* p) { return static_cast<std::int32_t>(load_le32(p)); }

bool within(std::uint64_t size, SizeBound bound) { return bound.exact ? size == bound.bytes : size <= bound.bytes; }

// The permutation of a transpose codec, from its metadata form; nullopt if unreadable.
std::optional<std::vector<std::size_t>> transpose_order(const ArrayToArrayCodec& codec, std::size_t ndim) {
  const nlohmann::json config = codec.to_json().value("configuration", nlohmann::json::object());
  const auto it = config.find("order");
  if (it == config.end()) return std::nullopt;
  std::vector<std::size_t> order(ndim);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (it->is_string()) {
    if (*it == "F") std::reverse(order.begin(), order.end());
    else if (*it != "C") return std::nullopt;
    return order;
  }
  if (!it->is_array() || it->size() != ndim) return std::nullopt;
  std::vector<bool> seen(ndim, false);
  for (std::size_t i = 0; i < ndim; ++i) {
    if (!(*it)[i].is_number_unsigned()) return std::nullopt;
    const auto axis = (*it)[i].get<std::uint64_t>();
    if (axis >= ndim || seen[axis]) return std::nullopt;
    seen[axis] = true;
    order[i] = static_cast<std::size_t>(axis);
  }
  return order;
}

struct BbKind {
  enum { kOther, kCrc32c, kBlosc, kLz4 } kind = kOther;
  bool checksum_first = false;
};

BbKind classify(const BytesToBytesCodec& codec) {
  const std::string_view name = codec.name();
  BbKind k;
  if (name == "crc32c" || name == "numcodecs.crc32c") {
    k.kind = BbKind::kCrc32c;
    const nlohmann::json config = codec.to_json().value("configuration", nlohmann::json::object());
    k.checksum_first = config.value("location", std::string("end")) == "start";
  } else if (name == "blosc" || name == "numcodecs.blosc") {
    k.kind = BbKind::kBlosc;
  } else if (name == "numcodecs.lz4") {
    k.kind = BbKind::kLz4;
  }
  return k;
}

ChainPlan whole_chain_on_cpu(ChainPlan plan, const ArrayMetadata& m) {
  plan.cpu_whole_chain = true;
  plan.cpu_stages.clear();
  plan.gpu_stages.clear();
  plan.swap_unit = 1;
  plan.stored_strides = NDView::c_strides(m.chunk_shape, m.dtype.size());
  return plan;
}

}  // namespace

ChainPlan plan_chain(const ArrayMetadata& m) {
  ChainPlan plan;
  plan.chunk_bytes = checked_nbytes(m.chunk_shape, m.dtype);
  if (!m.codecs) fail_invalid("the array has no codec chain");
  const CodecChain& chain = *m.codecs;
  const std::size_t ndim = m.chunk_shape.size();

  // Array->array: transposes only, folded into where each array axis lies in the stored
  // chunk (axis_of[k]: the stored axis that holds array axis k).
  ChunkSpec spec = m.chunk_spec();
  std::vector<std::size_t> axis_of(ndim);
  std::iota(axis_of.begin(), axis_of.end(), std::size_t{0});
  for (const auto& aa : chain.array_to_array()) {
    const auto order = aa->name() == "transpose" ? transpose_order(*aa, ndim) : std::nullopt;
    if (!order) return whole_chain_on_cpu(std::move(plan), m);
    std::vector<std::size_t> inverse(ndim);
    for (std::size_t i = 0; i < ndim; ++i) inverse[(*order)[i]] = i;
    for (auto& axis : axis_of) axis = inverse[axis];
    spec = aa->encoded_spec(spec);
  }
  plan.ab_spec = spec;

  // Array->bytes: the bytes codec; big-endian storage is swapped while scattering, except
  // for structured types (their fields swap one by one).
  const auto& ab = chain.array_to_bytes();
  if (!ab || ab->name() != "bytes") return whole_chain_on_cpu(std::move(plan), m);
  const nlohmann::json ab_config = ab->to_json().value("configuration", nlohmann::json::object());
  const bool big_endian = ab_config.value("endian", std::string("little")) == "big";
  if (big_endian && m.dtype.swap_unit() > 1) {
    if (m.dtype.kind() == DataTypeKind::kStructured) return whole_chain_on_cpu(std::move(plan), m);
    plan.swap_unit = static_cast<std::uint32_t>(m.dtype.swap_unit());
  }
  const auto stored_c = NDView::c_strides(spec.shape, m.dtype.size());
  plan.stored_strides.resize(ndim);
  for (std::size_t k = 0; k < ndim; ++k) plan.stored_strides[k] = stored_c[axis_of[k]];

  // Bytes->bytes: the size each codec decodes to, as the prepared chain has it (known for
  // every stage after "bytes").
  const auto& bb = chain.bytes_to_bytes();
  const std::span<const DecodeBound> bounds = m.prepared_chain().bytes_to_bytes_bounds();
  std::vector<SizeBound> outputs(bb.size());
  for (std::size_t i = 0; i < bb.size(); ++i) {
    if (!bounds[i].bound || bounds[i].estimated) return whole_chain_on_cpu(std::move(plan), m);
    outputs[i] = *bounds[i].bound;
  }
  // Decode order is bb reversed. The GPU takes the longest tail of the form
  // crc32c* (blosc | lz4)?.
  const std::size_t n = bb.size();
  auto decode_index = [&](std::size_t d) { return n - 1 - d; };
  std::size_t split = n;
  for (std::size_t p = 0; p <= n; ++p) {
    std::size_t d = p;
    while (d < n && classify(*bb[decode_index(d)]).kind == BbKind::kCrc32c) ++d;
    if (d < n) {
      const auto kind = classify(*bb[decode_index(d)]).kind;
      if (kind == BbKind::kBlosc || kind == BbKind::kLz4) ++d;
    }
    if (d == n) {
      split = p;
      break;
    }
  }
  for (std::size_t d = 0; d < n; ++d) {
    const std::size_t i = decode_index(d);
    if (d < split) {
      plan.cpu_stages.push_back({bb[i].get(), outputs[i]});
      continue;
    }
    const BbKind k = classify(*bb[i]);
    GpuStage stage{GpuStageKind::kCrc32c, bb[i].get(), outputs[i], k.checksum_first};
    if (k.kind == BbKind::kBlosc) stage.kind = GpuStageKind::kBlosc;
    if (k.kind == BbKind::kLz4) stage.kind = GpuStageKind::kLz4;
    plan.gpu_stages.push_back(stage);
  }
  return plan;
}

std::optional<BloscJobs> plan_blosc_chunk(ByteView bytes, SizeBound expected, std::uint32_t copy_piece) {
  if (bytes.size() < BLOSC_MIN_HEADER_LENGTH || copy_piece == 0) return std::nullopt;
  const std::byte* h = bytes.data();
  const unsigned version = static_cast<unsigned>(h[0]);
  const unsigned version_lz = static_cast<unsigned>(h[1]);
  const unsigned flags = static_cast<unsigned>(h[2]);
  const unsigned typesize = static_cast<unsigned>(h[3]);
  const std::int64_t nbytes = load_le32_signed(h + 4);
  const std::int64_t blocksize = load_le32_signed(h + 8);
  const std::int64_t cbytes = load_le32_signed(h + 12);
  // The checks of the CPU codec (blosc.cpp) and of c-blosc's decompressor, in its order.
  if (cbytes < BLOSC_MIN_HEADER_LENGTH || static_cast<std::uint64_t>(cbytes) > bytes.size()) return std::nullopt;
  if (nbytes < 0 || nbytes > BLOSC_MAX_BUFFERSIZE) return std::nullopt;
  if (!within(static_cast<std::uint64_t>(nbytes), expected)) return std::nullopt;
  BloscJobs jobs;
  jobs.decoded_size = static_cast<std::uint64_t>(nbytes);
  if (nbytes == 0) return jobs;
  if (version != BLOSC_VERSION_FORMAT) return std::nullopt;
  if (blocksize <= 0 || blocksize > nbytes || blocksize > static_cast<std::int64_t>(BLOSC_MAX_BLOCKSIZE) ||
      typesize == 0) {
    return std::nullopt;
  }
  if (flags & 0x08u) return std::nullopt;  // flags from a future format
  const std::int64_t leftover = nbytes % blocksize;
  const std::int64_t nblocks = nbytes / blocksize + (leftover > 0 ? 1 : 0);

  if (flags & BLOSC_MEMCPYED) {
    if (nbytes + BLOSC_MAX_OVERHEAD != cbytes) return std::nullopt;
    for (std::int64_t off = 0; off < nbytes; off += copy_piece) {
      const auto piece = static_cast<std::uint32_t>(std::min<std::int64_t>(copy_piece, nbytes - off));
      jobs.streams.push_back({static_cast<std::uint64_t>(BLOSC_MAX_OVERHEAD + off), static_cast<std::uint64_t>(off),
                              piece, piece, 0, StreamCodec::kCopy, 0});
    }
    return jobs;
  }
  StreamCodec codec;
  switch ((flags & 0xE0u) >> 5) {
    case BLOSC_BLOSCLZ_FORMAT:
      if (version_lz != BLOSC_BLOSCLZ_VERSION_FORMAT) return std::nullopt;
      codec = StreamCodec::kBloscLz;
      break;
    case BLOSC_LZ4_FORMAT:
      if (version_lz != BLOSC_LZ4_VERSION_FORMAT) return std::nullopt;
      codec = StreamCodec::kLz4;
      break;
    default:
      return std::nullopt;  // snappy, zlib, zstd: the CPU decodes them
  }
  if (nblocks > (cbytes - 16) / 4) return std::nullopt;
  const bool dont_split = (flags & 0x10u) != 0;
  for (std::int64_t j = 0; j < nblocks; ++j) {
    const bool leftover_block = j == nblocks - 1 && leftover > 0;
    const std::int64_t bsize = leftover_block ? leftover : blocksize;
    const bool byte_shuffle = (flags & BLOSC_DOSHUFFLE) && typesize > 1;
    const bool bit_shuffle = !byte_shuffle && (flags & BLOSC_DOBITSHUFFLE) && bsize >= typesize;
    const bool shuffled = byte_shuffle || bit_shuffle;
    const std::int64_t nsplits =
        !dont_split && typesize <= 16 && bsize / typesize >= 128 && !leftover_block ? typesize : 1;
    const std::int64_t neblock = bsize / nsplits;
    if (neblock * nsplits != bsize) return std::nullopt;  // c-blosc would leave bytes unwritten
    std::int64_t src = load_le32_signed(h + 16 + 4 * j);
    for (std::int64_t s = 0; s < nsplits; ++s) {
      if (src < 0 || src > cbytes - 4) return std::nullopt;
      const std::int64_t csize = load_le32_signed(h + src);
      src += 4;
      if (csize < 0 || csize > cbytes - src) return std::nullopt;
      StreamJob job{static_cast<std::uint64_t>(src),
                    static_cast<std::uint64_t>(j * blocksize + s * neblock),
                    static_cast<std::uint32_t>(csize),
                    static_cast<std::uint32_t>(neblock),
                    0,
                    csize == neblock ? StreamCodec::kCopy : codec,
                    static_cast<std::uint8_t>(shuffled ? 1 : 0)};
      jobs.streams.push_back(job);
      src += csize;
    }
    if (shuffled) {
      jobs.blocks.push_back({static_cast<std::uint64_t>(j * blocksize), static_cast<std::uint32_t>(bsize), 0,
                             static_cast<std::uint16_t>(typesize),
                             byte_shuffle ? BlockShuffle::kByte : BlockShuffle::kBit});
    }
  }
  return jobs;
}

std::optional<ChunkJobs> plan_chunk_jobs(const ChainPlan& plan, ByteView bytes) {
  if (plan.cpu_whole_chain) return std::nullopt;
  ChunkJobs jobs;
  std::uint64_t begin = 0;
  std::uint64_t end = bytes.size();
  for (const GpuStage& stage : plan.gpu_stages) {
    const std::uint64_t size = end - begin;
    switch (stage.kind) {
      case GpuStageKind::kCrc32c: {
        if (size < 4 || !within(size - 4, stage.output)) return std::nullopt;
        const std::uint64_t checksum_at = stage.checksum_first ? begin : end - 4;
        const std::uint64_t payload = stage.checksum_first ? begin + 4 : begin;
        jobs.crcs.push_back({payload, size - 4, load_le32(bytes.data() + checksum_at), 0, 0, 0});
        begin = payload;
        end = payload + size - 4;
        break;
      }
      case GpuStageKind::kBlosc: {
        auto blosc = plan_blosc_chunk(bytes.subspan(begin, size), stage.output);
        if (!blosc || blosc->decoded_size != plan.chunk_bytes) return std::nullopt;
        for (auto& s : blosc->streams) s.src += begin;
        jobs.streams = std::move(blosc->streams);
        jobs.blocks = std::move(blosc->blocks);
        jobs.uses_slot = true;
        return jobs;  // a compressor is the last GPU stage
      }
      case GpuStageKind::kLz4: {
        if (size < 4) return std::nullopt;
        const std::uint64_t claimed = load_le32(bytes.data() + begin);
        if (!within(claimed, stage.output) || claimed != plan.chunk_bytes) return std::nullopt;
        if (claimed > static_cast<std::uint64_t>(INT_MAX) || size - 4 > static_cast<std::uint64_t>(INT_MAX)) {
          return std::nullopt;
        }
        jobs.streams.push_back({begin + 4, 0, static_cast<std::uint32_t>(size - 4),
                                static_cast<std::uint32_t>(claimed), 0, StreamCodec::kLz4, 0});
        jobs.uses_slot = true;
        return jobs;
      }
    }
  }
  // No compressor: the remaining bytes are the stored chunk, exactly its size.
  if (end - begin != plan.chunk_bytes) return std::nullopt;
  jobs.passthrough_offset = begin;
  return jobs;
}

Buffer decode_gpu_stages_on_cpu(const ChainPlan& plan, ByteView bytes, std::size_t first) {
  Buffer owned;
  ByteView current = bytes;
  for (std::size_t i = first; i < plan.gpu_stages.size(); ++i) {
    const GpuStage& stage = plan.gpu_stages[i];
    Buffer decoded = stage.codec->decode(current, stage.output, plan.ab_spec);
    if (!within(decoded.size(), stage.output)) {
      fail_data_loss("codec '{}' decoded {} bytes, expected {} {}", stage.codec->name(), decoded.size(),
                     stage.output.exact ? "exactly" : "at most", stage.output.bytes);
    }
    owned = std::move(decoded);
    current = owned.view();
  }
  if (current.size() != plan.chunk_bytes) {
    fail_data_loss("bytes codec: chunk of {} elements of {} must be {} bytes, got {}",
                   checked_num_elements(plan.ab_spec.shape), plan.ab_spec.dtype.name(), plan.chunk_bytes,
                   current.size());
  }
  return owned.data() == current.data() && !owned.empty() ? owned : Buffer::copy_of(current);
}

}  // namespace zarrkit::gpu

#include "gpu/write_plan.h"

#include <blosc.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "codecs/crc32c.h"
#include "core/checked_math.h"
#include "gpu/chunk_plan.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {
namespace {

void put_le32(std::byte* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}

// The settings c-blosc would compress with, from the codec's metadata form.
std::optional<BloscWriteSettings> blosc_settings(const BytesToBytesCodec& codec, const DataType& dtype) {
  const nlohmann::json config = codec.to_json().value("configuration", nlohmann::json::object());
  const std::string cname = config.value("cname", std::string("lz4"));
  if (cname != "lz4" && cname != "lz4hc") return std::nullopt;
  BloscWriteSettings s;
  const std::size_t item = dtype.size();
  std::size_t typesize = item >= 1 && item <= BLOSC_MAX_TYPESIZE ? item : 1;
  if (auto it = config.find("typesize"); it != config.end() && it->is_number_unsigned()) {
    typesize = it->get<std::size_t>();
  }
  s.typesize = typesize >= 1 && typesize <= BLOSC_MAX_TYPESIZE ? static_cast<unsigned>(typesize) : 1u;
  const auto shuffle = config.find("shuffle");
  if (shuffle != config.end() && shuffle->is_string()) {  // v3 "blosc"
    if (*shuffle == "shuffle") s.shuffle = BlockShuffle::kByte;
    if (*shuffle == "bitshuffle") s.shuffle = BlockShuffle::kBit;
  } else {  // numcodecs: 0, 1, 2, or -1 (bit for single bytes, else byte)
    const int v = shuffle != config.end() && shuffle->is_number_integer() ? shuffle->get<int>() : 1;
    if (v == 1) s.shuffle = BlockShuffle::kByte;
    if (v == 2) s.shuffle = BlockShuffle::kBit;
    if (v == -1) s.shuffle = item == 1 ? BlockShuffle::kBit : BlockShuffle::kByte;
  }
  const auto blocksize = config.value("blocksize", std::uint64_t{0});
  s.blocksize = static_cast<std::uint32_t>(std::min<std::uint64_t>(blocksize, BLOSC_MAX_BLOCKSIZE));
  s.compress = config.value("clevel", 5) > 0;
  return s;
}

}  // namespace

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

Buffer blosc_frame(const BloscWriteLayout& layout, const std::vector<ByteView>& payloads) {
  if (payloads.size() != layout.splits.size()) fail_invalid("blosc frame: {} payloads for {} splits", payloads.size(), layout.splits.size());
  const std::size_t nblocks = layout.splits_per_block.size();
  std::uint64_t total = BLOSC_MIN_HEADER_LENGTH + 4 * nblocks;
  for (const ByteView& p : payloads) total += 4 + p.size();
  if (total > static_cast<std::uint64_t>(BLOSC_MAX_BUFFERSIZE) + BLOSC_MAX_OVERHEAD) {
    fail_unsupported("blosc cannot hold a chunk of {} bytes", total);
  }
  Buffer out = Buffer::allocate(to_size(total));
  std::byte* h = out.data();
  h[0] = static_cast<std::byte>(BLOSC_VERSION_FORMAT);
  h[1] = static_cast<std::byte>(BLOSC_LZ4_VERSION_FORMAT);
  h[2] = static_cast<std::byte>(layout.flags);
  h[3] = static_cast<std::byte>(layout.typesize);
  put_le32(h + 4, static_cast<std::uint32_t>(layout.nbytes));
  put_le32(h + 8, layout.blocksize);
  put_le32(h + 12, static_cast<std::uint32_t>(total));
  std::uint64_t at = BLOSC_MIN_HEADER_LENGTH + 4 * nblocks;
  std::size_t split = 0;
  for (std::size_t j = 0; j < nblocks; ++j) {
    put_le32(h + BLOSC_MIN_HEADER_LENGTH + 4 * j, static_cast<std::uint32_t>(at));
    for (std::uint32_t k = 0; k < layout.splits_per_block[j]; ++k, ++split) {
      const ByteView p = payloads[split];
      put_le32(h + at, static_cast<std::uint32_t>(p.size()));
      if (!p.empty()) std::memcpy(h + at + 4, p.data(), p.size());
      at += 4 + p.size();
    }
  }
  return out;
}

WritePlan plan_write(const ArrayMetadata& m) {
  WritePlan plan;
  const ChainPlan read = plan_chain(m);  // the same layout facts: transposes and byte order
  if (read.cpu_whole_chain) return plan;
  plan.swap_unit = read.swap_unit;
  plan.stored_strides = read.stored_strides;
  plan.chunk_bytes = read.chunk_bytes;
  const auto& bb = m.codecs->bytes_to_bytes();
  std::size_t i = 0;
  if (i < bb.size()) {
    const std::string_view name = bb[i]->name();
    if (name == "numcodecs.lz4") {
      if (plan.chunk_bytes > static_cast<std::uint64_t>(INT32_MAX)) return plan;
      plan.compressor = WritePlan::Compressor::kLz4;
      ++i;
    } else if (name == "blosc" || name == "numcodecs.blosc") {
      auto settings = blosc_settings(*bb[i], m.dtype);
      if (!settings || plan.chunk_bytes > static_cast<std::uint64_t>(BLOSC_MAX_BUFFERSIZE)) return plan;
      plan.compressor = WritePlan::Compressor::kBlosc;
      plan.blosc = *settings;
      plan.layout = plan_blosc_write(plan.chunk_bytes, plan.blosc);
      ++i;
    }
  }
  for (; i < bb.size(); ++i) {
    const std::string_view name = bb[i]->name();
    if (name != "crc32c" && name != "numcodecs.crc32c") return plan;
    const nlohmann::json config = bb[i]->to_json().value("configuration", nlohmann::json::object());
    plan.checksums.push_back(config.value("location", std::string("end")) == "start");
  }
  plan.on_gpu = true;
  return plan;
}

Buffer add_checksums(const WritePlan& plan, Buffer bytes) {
  for (bool first : plan.checksums) {
    Buffer out = Buffer::allocate(to_size(checked_add(bytes.size(), 4, "crc32c encoded size")));
    const std::uint32_t crc = crc32c(bytes.view());
    std::byte* payload = out.data() + (first ? 4 : 0);
    if (!bytes.empty()) std::memcpy(payload, bytes.data(), bytes.size());
    put_le32(out.data() + (first ? 0 : bytes.size()), crc);
    bytes = std::move(out);
  }
  return bytes;
}

}  // namespace zarrkit::gpu

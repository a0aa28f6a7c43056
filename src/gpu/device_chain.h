// Which part of an array's codec chain runs on the device, asked of the codecs' device
// halves (device_codec.h), and the per-chunk planning of that part.
//
// The chain decodes in this order: bytes->bytes codecs from the last to the first, then the
// array->bytes codec, then array->array codecs from the last to the first. The device takes
// the longest tail of the bytes->bytes part whose codecs have usable device halves, all of
// them but the last only checking and narrowing the bytes (device_codec.h says why); the
// codecs before that tail decode on the host, chunk by chunk, into pinned memory. The
// array->bytes and array->array codecs fold into the layout the scatter reads (byte order,
// axis order); a chain with one that has no device half, or cannot fold (sharding, delta,
// structured types stored big-endian, ...), decodes wholly on the host, and the device only
// places the decoded chunks.
//
// A chunk's headers are parsed on the host from its bytes, checked against the sizes the
// chain requires. Any header the device cannot take exactly as the host codec would (an
// unsupported blosc compressor, or anything malformed) sends that chunk to the host codec,
// which then decodes it or reports the same error it always does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "gpu/device_codec.h"
#include "gpu/device_settings.h"
#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/codec_registry.h"

namespace zarrkit::gpu {

struct HostStage {
  const BytesToBytesCodec* codec;
  SizeBound output;  // what the codec must decode to
};

struct DeviceStage {
  const DeviceBytesCodec* half;
  const BytesToBytesCodec* codec;  // its host half: the fallback for a chunk the device refuses
  SizeBound output;
};

class DeviceChain {
 public:
  // Plans `prepared` (a chain prepared for chunks of a fixed-size dtype) for a read whose
  // batches hold `chunks_per_batch` chunks, of `chunks_in_read` in all (0: one batch's),
  // with the device halves registered in `registry`. The plan keeps `prepared` alive.
  DeviceChain(std::shared_ptr<const PreparedChain> prepared, std::uint64_t chunks_per_batch,
              const DeviceSettings& settings = device_settings(),
              const CodecRegistry& registry = CodecRegistry::builtin(), std::uint64_t chunks_in_read = 0);

  // The whole chain decodes on the host into C order; stored_strides are then C strides and
  // swap_unit is 1.
  bool host_whole_chain() const { return host_whole_chain_; }
  const std::vector<HostStage>& host_stages() const { return host_stages_; }      // decode order
  const std::vector<DeviceStage>& device_stages() const { return device_stages_; }  // decode order, after the host's
  // Bytes per element to reverse while scattering (1: none).
  std::uint32_t swap_unit() const { return swap_unit_; }
  // Byte stride of each array axis inside a decoded (stored-layout) chunk.
  const std::vector<std::int64_t>& stored_strides() const { return stored_strides_; }
  const ChunkSpec& ab_spec() const { return ab_spec_; }  // the spec the bytes->bytes codecs see
  std::uint64_t chunk_bytes() const { return chunk_bytes_; }
  // The most chunks per batch any device stage wishes for (DeviceBytesCodec::min_chunks_per_batch).
  std::uint64_t min_chunks_per_batch() const { return min_chunks_per_batch_; }
  // Array->array codecs the device decodes by a pass over each decoded chunk, in decode order.
  struct Pass {
    const DeviceArrayCodec* half;
    ChunkSpec decoded;
  };
  const std::vector<Pass>& passes() const { return passes_; }
  // True when the device has nothing to decode or check (chunks are placed as stored).
  bool stored_as_laid_out() const {
    return !host_whole_chain_ && host_stages_.empty() && device_stages_.empty() && passes_.empty();
  }

  // Loads the kernels of the planned halves (warm-up).
  void load_kernels() const;

  // The host stages of one chunk: its bytes as the device stages take them. The last stage,
  // where its size is known, decodes straight into memory of `staging` (the batch's pinned
  // arena: no copy into it afterwards).
  Buffer decode_host_stages(Buffer encoded, const BufferPrototype& staging) const;
  // Plans the device stages and passes of chunk `chunk` of a batch from its bytes after the
  // host stages (`bytes`, as uploaded): adds its jobs to `works` and returns where its
  // stored-layout bytes will be, or nullopt when a header sends it to the host codecs (then
  // `works` holds jobs that must be dropped).
  std::optional<ChunkBytes> plan_chunk(std::uint32_t chunk, ByteView bytes, BatchWorks& works) const;
  // Plans only the passes, over a chunk whose device stages the host decoded (its stored
  // bytes are the uploaded bytes). InternalError if a pass refuses them.
  void plan_passes(std::uint32_t chunk, BatchWorks& works) const;
  // The device stages decoded on the host (a chunk the device refused, or a header that
  // asks for the host): its stored-layout bytes, each stage's output checked against its
  // bound; the last stage decodes into memory of `staging` (the batch's pinned arena).
  Buffer decode_device_stages_on_host(ByteView bytes, const BufferPrototype& staging = BufferPrototype::host()) const;

 private:
  bool host_whole_chain_ = false;
  std::vector<HostStage> host_stages_;
  std::vector<DeviceStage> device_stages_;
  std::vector<Pass> passes_;
  std::uint32_t swap_unit_ = 1;
  std::vector<std::int64_t> stored_strides_;
  ChunkSpec ab_spec_;
  std::uint64_t chunk_bytes_ = 0;
  std::uint64_t chunks_per_batch_ = 0;
  std::uint64_t chunks_in_read_ = 0;
  std::size_t host_threads_ = 1;
  std::uint64_t min_chunks_per_batch_ = 1;
  DeviceSettings settings_;
  std::shared_ptr<const PreparedChain> prepared_;
  // The planned halves and the host halves the stages point to, kept alive with the plan.
  std::vector<std::shared_ptr<const DeviceCodec>> halves_;
  std::vector<std::shared_ptr<const Codec>> codecs_;
};

}  // namespace zarrkit::gpu

// The default implementations of the codec interfaces' optional paths (codec.h).
#include <cstring>

#include "core/partial_chunk_codec.h"
#include "zarrkit/codec.h"
#include "zarrkit/error.h"

namespace zarrkit {

void ArrayToBytesCodec::decode_in_place(MutableByteView bytes, const ChunkSpec& spec) const {
  (void)bytes;
  (void)spec;
  throw InternalError(fmt::format("codec '{}' cannot decode in place", name()));
}

void BytesToBytesCodec::decode_into(ByteView encoded, MutableByteView out, const ChunkSpec& spec) const {
  const Buffer decoded = decode(encoded, SizeBound{out.size(), true}, spec);
  if (decoded.size() != out.size()) {
    fail_data_loss("codec '{}' decoded {} bytes, expected exactly {}", name(), decoded.size(), out.size());
  }
  if (!out.empty()) std::memcpy(out.data(), decoded.data(), out.size());
}

std::shared_ptr<const ArrayToBytesCodec> ArrayToBytesCodec::with_inner_chain(const CodecChain& inner) const {
  (void)inner;
  fail_unsupported("codec '{}' has no inner chunks", name());
}

std::shared_ptr<const PartialChunkCodec> ArrayToBytesCodec::prepare_partial(const ChunkSpec& spec) const {
  validate(spec);
  return nullptr;
}

ByteView BytesToBytesCodec::decode_view(ByteView encoded, const ChunkSpec& spec) const {
  (void)encoded;
  (void)spec;
  throw InternalError(fmt::format("codec '{}' does not decode to a view", name()));
}

}  // namespace zarrkit

#include "gpu/decode_variant.h"

namespace zarrkit::gpu {

StreamBatchShape shape_of(const std::vector<StreamJob>& streams, bool blosc) {
  StreamBatchShape shape;
  shape.streams = streams.size();
  shape.blosc = blosc;
  for (const StreamJob& s : streams) {
    if (s.codec != StreamCodec::kLz4) continue;
    ++shape.lz4_streams;
    shape.lz4_bytes += s.dst_size;
  }
  return shape;
}

DecodeVariant choose_decode_variant(const StreamBatchShape& shape, const WindowResidency& residency) {
  if (shape.blosc || shape.lz4_streams == 0 || residency.sms == 0) return DecodeVariant::kDirect;
  if (shape.lz4_bytes / shape.lz4_streams < kWindowMinMeanStreamBytes) return DecodeVariant::kDirect;
  const std::uint64_t per_sm = (shape.streams + residency.sms - 1) / residency.sms;
  if (per_sm <= residency.per_sm_64) return DecodeVariant::kWindow64;
  if (per_sm <= residency.per_sm_32) return DecodeVariant::kWindow32;
  if (per_sm <= residency.per_sm_16) return DecodeVariant::kWindow16;
  return DecodeVariant::kDirect;  // more streams than window warps fit: the SMs are busy anyway
}

}  // namespace zarrkit::gpu

// The zstd codec (bytes->bytes): Zstandard frames (RFC 8878), as the "zstd" codec of
// zarr-extensions and numcodecs' Zstd (v2 id "zstd", v3 also "numcodecs.zstd") use them.
//
// Encoding writes one frame that records its content size (several decoders need it).
// Decoding accepts any sequence of frames, with or without content sizes: TensorStore and
// the zstd tool write streaming frames without one. Declared sizes are never trusted for
// allocation beyond the caller's bound.
#include <algorithm>
#include <memory>

#include <zstd.h>
#include <zstd_errors.h>

#include "codecs/compressor_support.h"
#include "codecs/register.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using compressor_support::BoundedOutput;
using compressor_support::ConfigForm;

constexpr std::int64_t kMinLevel = -131072;  // ZSTD_minCLevel(): -(1 << 17)
constexpr std::int64_t kMaxLevel = 22;       // ZSTD_maxCLevel()

// libzstd's default limit on the window of a streaming decoder (ZSTD_WINDOWLOG_LIMIT_DEFAULT,
// which the stable API does not export).
constexpr int kWindowLogLimit = 27;

// Below this ceiling, output of unknown size is decoded in one call into a buffer of the
// ceiling's size: zstd then needs no window buffer of its own, whatever window the frame
// asks for. Above it, streaming output grows on demand and zstd's window buffer, which
// libzstd caps at 2^27 bytes by default, stays smaller than the ceiling.
constexpr std::uint64_t kOneShotCeiling = std::uint64_t{1} << kWindowLogLimit;

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// Contexts are reused per thread: making one costs more than compressing a small chunk.
ZSTD_CCtx& thread_cctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx;
  if (!cctx) {
    cctx.reset(ZSTD_createCCtx());
    if (!cctx) fail_resource("zstd codec: cannot allocate a compression context");
  }
  ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_and_parameters);
  return *cctx;
}

ZSTD_DCtx& thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx;
  if (!dctx) {
    dctx.reset(ZSTD_createDCtx());
    if (!dctx) fail_resource("zstd codec: cannot allocate a decompression context");
  }
  ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_only);  // a failed call may have left state
  return *dctx;
}

// Throws the error that a failed zstd decompression call means.
[[noreturn]] void fail_decompress(std::size_t rc, const BoundedOutput* out) {
  switch (ZSTD_getErrorCode(rc)) {
    case ZSTD_error_dstSize_tooSmall:
      if (out != nullptr) out->fail_too_large();
      break;
    case ZSTD_error_memory_allocation:
      fail_resource("zstd codec: out of memory while decompressing");
    case ZSTD_error_frameParameter_windowTooLarge:
      fail_resource("zstd codec: the frame needs a window larger than the limit of {} bytes",
                    std::uint64_t{1} << kWindowLogLimit);
    default:
      break;
  }
  fail_data_loss("zstd codec: corrupt zstd data: {}", ZSTD_getErrorName(rc));
}

// The total content size the frames of `input` declare; nullopt when one does not say.
// Corrupt headers are DataLossError. (ZSTD_findDecompressedSize does this, but is not in
// the stable API.)
std::optional<std::uint64_t> declared_size(ByteView input) {
  std::uint64_t total = 0;
  while (!input.empty()) {
    const unsigned long long size = ZSTD_getFrameContentSize(input.data(), input.size());  // 0 if skippable
    if (size == ZSTD_CONTENTSIZE_ERROR) fail_data_loss("zstd codec: corrupt zstd data: bad frame header");
    if (size == ZSTD_CONTENTSIZE_UNKNOWN) return std::nullopt;
    const std::size_t frame_size = ZSTD_findFrameCompressedSize(input.data(), input.size());
    if (ZSTD_isError(frame_size)) fail_data_loss("zstd codec: corrupt zstd data: {}", ZSTD_getErrorName(frame_size));
    auto sum = try_add(total, size);
    if (!sum) fail_data_loss("zstd codec: the frames declare more than 2^64 bytes");
    total = *sum;
    input = input.subspan(frame_size);
  }
  return total;
}

// Decodes every frame of `input` in one call into `out`'s buffer, which must be as large
// as the output may be.
Buffer decode_one_shot(ByteView input, BoundedOutput& out) {
  MutableByteView room = out.room();
  const std::size_t rc = ZSTD_decompressDCtx(&thread_dctx(), room.data(), room.size(), input.data(), input.size());
  if (ZSTD_isError(rc)) fail_decompress(rc, &out);
  out.produced(rc);
  return out.finish();
}

Buffer decode_streaming(ByteView input, BoundedOutput& out) {
  ZSTD_DCtx& dctx = thread_dctx();
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  std::byte probe[1];  // where output past a full bound goes, to tell "exceeds" from "ends here"
  while (true) {
    MutableByteView room = out.room();
    const bool probing = room.empty();
    if (probing) room = MutableByteView(probe, 1);
    ZSTD_outBuffer o{room.data(), room.size(), 0};
    const std::size_t rc = ZSTD_decompressStream(&dctx, &o, &in);
    if (ZSTD_isError(rc)) fail_decompress(rc, &out);
    if (probing && o.pos != 0) out.fail_too_large();
    if (!probing) out.produced(o.pos);
    if (rc == 0 && in.pos == in.size) return out.finish();  // the last frame is complete
    // With room left in the output, zstd has used all the input it could: a frame is cut short.
    if (in.pos == in.size && o.pos < o.size) {
      fail_data_loss("zstd codec: the zstd data is truncated ({} bytes decoded from {} input bytes)", out.size(),
                     input.size());
    }
  }
}

// The largest window a frame decoded in pieces may ask for. The streaming decoder keeps a
// buffer of the window's size (2 MiB at the default level): a frame that needs more is
// decoded whole instead (decode_into, which needs no window buffer).
constexpr int kPieceWindowLogMax = 23;

// A second decompression context per thread for decoding in pieces: it keeps its window
// buffer between chunks, and its window limit differs from thread_dctx()'s.
ZSTD_DCtx& thread_piece_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx;
  if (!dctx) {
    dctx.reset(ZSTD_createDCtx());
    if (!dctx) fail_resource("zstd codec: cannot allocate a decompression context");
    ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, kPieceWindowLogMax);
  }
  ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_only);  // an unfinished chunk may have left state
  return *dctx;
}

// Input read from a source not in memory comes in parts of this size.
constexpr std::size_t kInputPart = 256 << 10;

// Streams the frames of the encoded bytes into the pieces asked for (PieceReader in
// codec.h), reading them from their source a part at a time where they are not in memory.
class ZstdPieces final : public PieceReader {
 public:
  explicit ZstdPieces(std::shared_ptr<ByteSource> source)
      : dctx_(thread_piece_dctx()), source_(std::move(source)), size_(source_->size()) {
    if (const std::optional<ByteView> bytes = source_->in_memory()) {
      in_ = {bytes->data(), bytes->size(), 0};
      next_ = size_;
    } else {
      part_ = Buffer::allocate(std::min<std::uint64_t>(kInputPart, size_));
    }
  }

  bool read(MutableByteView out) override {
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    while (o.pos < o.size) {
      if (in_.pos == in_.size) next_part();
      const std::size_t taken = in_.pos, made = o.pos;
      last_rc_ = ZSTD_decompressStream(&dctx_, &o, &in_);
      if (ZSTD_isError(last_rc_)) return false;
      // zstd flushes all it has decoded before it stops for input: room left with the
      // input used up means the data ends before the bytes asked for.
      if (o.pos < o.size && in_.pos == in_.size && next_ == size_) return false;
      if (in_.pos == taken && o.pos == made) return false;  // no progress (zstd would say so later)
    }
    return true;
  }

  bool finish() override {
    // Frame ends, checksums and skippable frames may follow the last byte read; a byte
    // decoded now is one more than expected.
    std::byte probe[1];
    for (;;) {
      if (in_.pos == in_.size) next_part();
      if (last_rc_ == 0 && in_.pos == in_.size && next_ == size_) return true;
      ZSTD_outBuffer o{probe, 1, 0};
      const std::size_t taken = in_.pos;
      last_rc_ = ZSTD_decompressStream(&dctx_, &o, &in_);
      if (ZSTD_isError(last_rc_) || o.pos != 0) return false;
      if (last_rc_ != 0 && in_.pos == taken) return false;  // a frame cut short
    }
  }

 private:
  // The next part of the input from the source, once all in hand is used.
  void next_part() {
    if (next_ >= size_) return;
    const std::size_t n = source_->read(next_, part_.mutable_view().first(std::min<std::uint64_t>(part_.size(), size_ - next_)));
    next_ = n == 0 ? size_ : next_ + n;  // a source that ends early ends the input
    in_ = {part_.data(), n, 0};
  }

  ZSTD_DCtx& dctx_;
  std::shared_ptr<ByteSource> source_;
  std::uint64_t size_;
  std::uint64_t next_ = 0;  // the source's bytes before this are in hand or used
  Buffer part_;             // the part in hand, where the source is not in memory
  ZSTD_inBuffer in_{nullptr, 0, 0};
  std::size_t last_rc_ = 1;  // 0 when the last call ended a frame
};

class ZstdCodec final : public BytesToBytesCodec {
 public:
  ZstdCodec(int level, bool checksum) : level_(level), checksum_(checksum) {}

  std::string_view name() const override { return "zstd"; }

  nlohmann::json to_json() const override {
    nlohmann::json config = {{"level", level_}};
    if (checksum_) config["checksum"] = true;  // left out when false (zarr-extensions)
    return codec_json(name(), std::move(config));
  }
  std::optional<nlohmann::json> to_v2_json() const override {
    // numcodecs writes "checksum" only when true, and tensorstore's v2 driver refuses the key.
    nlohmann::json config = {{"id", "zstd"}, {"level", level_}};
    if (checksum_) config["checksum"] = true;
    return config;
  }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    ZSTD_CCtx& cctx = thread_cctx();
    check_setting(ZSTD_CCtx_setParameter(&cctx, ZSTD_c_compressionLevel, level_));
    check_setting(ZSTD_CCtx_setParameter(&cctx, ZSTD_c_checksumFlag, checksum_ ? 1 : 0));
    check_setting(ZSTD_CCtx_setParameter(&cctx, ZSTD_c_contentSizeFlag, 1));
    const std::size_t bound = ZSTD_compressBound(decoded.size());
    if (ZSTD_isError(bound)) fail_invalid("zstd codec: {} bytes are too many to compress", decoded.size());
    Buffer out = Buffer::allocate(bound);
    const std::size_t written = ZSTD_compress2(&cctx, out.data(), out.size(), decoded.data(), decoded.size());
    if (ZSTD_isError(written)) {
      if (ZSTD_getErrorCode(written) == ZSTD_error_memory_allocation) {
        fail_resource("zstd codec: out of memory while compressing");
      }
      throw InternalError(fmt::format("zstd codec: compression failed: {}", ZSTD_getErrorName(written)));
    }
    return compressor_support::fit_to(std::move(out), written);
  }

  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec&) const override {
    // ZSTD_decompressDCtx reads an empty input as zero frames; an empty chunk is not valid zstd.
    if (encoded.empty()) fail_data_loss("zstd codec: the zstd data is empty (no frame)");
    const std::optional<std::uint64_t> declared = declared_size(encoded);
    // Sizes the frames declare are checked before anything is decoded (zstd checks
    // afterwards that each frame holds what it declared).
    if (declared) compressor_support::check_decoded_size(*declared, decoded_size, "zstd");
    if (decoded_size.exact) {
      BoundedOutput out(decoded_size, "zstd", encoded.size());
      return decode_one_shot(encoded, out);
    }
    if (declared) {
      BoundedOutput out(decoded_size, "zstd", encoded.size(), *declared);
      return decode_one_shot(encoded, out);
    }
    if (decoded_size.bytes <= kOneShotCeiling) {
      BoundedOutput out({decoded_size.bytes, false}, "zstd", encoded.size(), decoded_size.bytes);
      return decode_one_shot(encoded, out);
    }
    BoundedOutput out(decoded_size, "zstd", encoded.size());
    return decode_streaming(encoded, out);
  }

  void decode_into(ByteView encoded, MutableByteView out, const ChunkSpec&) const override {
    if (encoded.empty()) fail_data_loss("zstd codec: the zstd data is empty (no frame)");
    const SizeBound exact{out.size(), true};
    if (const std::optional<std::uint64_t> declared = declared_size(encoded)) {
      compressor_support::check_decoded_size(*declared, exact, "zstd");
    }
    // One call into the caller's memory: zstd needs no window buffer of its own then.
    const std::size_t rc = ZSTD_decompressDCtx(&thread_dctx(), out.data(), out.size(), encoded.data(), encoded.size());
    if (ZSTD_isError(rc)) {
      if (ZSTD_getErrorCode(rc) == ZSTD_error_dstSize_tooSmall) {
        fail_data_loss("zstd codec: decoded size exceeds the expected {} bytes", out.size());
      }
      fail_decompress(rc, nullptr);
    }
    compressor_support::check_decoded_size(rc, exact, "zstd");
  }

  std::unique_ptr<PieceReader> decode_pieces(std::shared_ptr<ByteSource> encoded, std::uint64_t decoded_size,
                                             const ChunkSpec&) const override {
    if (encoded->size() == 0) return nullptr;  // decode_into says why
    if (const std::optional<ByteView> bytes = encoded->in_memory()) {
      // As decode_into: sizes the frames declare are checked before anything is decoded.
      // (Read from a store, a frame of another size is found out while decoding it.)
      const std::optional<std::uint64_t> declared = declared_size(*bytes);
      if (declared && *declared != decoded_size) return nullptr;
    }
    return std::make_unique<ZstdPieces>(std::move(encoded));
  }

 private:
  static void check_setting(std::size_t rc) {
    if (ZSTD_isError(rc)) {
      throw InternalError(fmt::format("zstd codec: cannot set a compression parameter: {}", ZSTD_getErrorName(rc)));
    }
  }

  int level_;
  bool checksum_;
};

std::shared_ptr<const Codec> make_zstd(const nlohmann::json& config, ConfigForm form) {
  compressor_support::check_keys(config, {"level", "checksum"}, "zstd", form, "zstd");
  // 0 asks zstd for its default level; it is also numcodecs' default.
  auto level = compressor_support::optional_int(config, "level", kMinLevel, kMaxLevel, "zstd").value_or(0);
  bool checksum = compressor_support::optional_bool(config, "checksum", "zstd").value_or(false);
  return std::make_shared<ZstdCodec>(static_cast<int>(level), checksum);
}

}  // namespace

void register_zstd_codec(CodecRegistry& registry) {
  registry.add_v3("zstd", [](const nlohmann::json& c, const CodecContext&) { return make_zstd(c, ConfigForm::kV3); });
  registry.add_v3("numcodecs.zstd",
                  [](const nlohmann::json& c, const CodecContext&) { return make_zstd(c, ConfigForm::kV3Numcodecs); });
  registry.add_v2("zstd", [](const nlohmann::json& c, const CodecContext&) { return make_zstd(c, ConfigForm::kV2); });
}

}  // namespace zarrkit

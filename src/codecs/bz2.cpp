// The bz2 codec (bytes->bytes): a bzip2 stream, as numcodecs' BZ2 writes it (v2 id "bz2",
// v3 "numcodecs.bz2"). Decoding accepts several concatenated streams, as Python's bz2 does.
// The decoder's memory is fixed by the format (at most 900 kB blocks: about 3.7 MB).
#include <algorithm>
#include <climits>

#include <bzlib.h>

#include "codecs/compressor_support.h"
#include "codecs/register.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using compressor_support::BoundedOutput;
using compressor_support::ConfigForm;

constexpr int kNumcodecsDefaultLevel = 1;

char* in_ptr(ByteView v, std::size_t pos) { return reinterpret_cast<char*>(const_cast<std::byte*>(v.data() + pos)); }
unsigned int chunk_of(std::size_t n) { return static_cast<unsigned int>(std::min<std::size_t>(n, UINT_MAX)); }

class Compressor {
 public:
  explicit Compressor(int block_size_100k) {
    int rc = BZ2_bzCompressInit(&stream_, block_size_100k, 0, 0);
    if (rc == BZ_MEM_ERROR) fail_resource("bz2 codec: cannot allocate a compressor");
    if (rc != BZ_OK) throw InternalError(fmt::format("bz2 codec: BZ2_bzCompressInit failed ({})", rc));
  }
  ~Compressor() { BZ2_bzCompressEnd(&stream_); }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
  bz_stream& stream() { return stream_; }

 private:
  bz_stream stream_{};
};

class Decompressor {
 public:
  Decompressor() {
    int rc = BZ2_bzDecompressInit(&stream_, 0, 0);
    if (rc == BZ_MEM_ERROR) fail_resource("bz2 codec: cannot allocate a decompressor");
    if (rc != BZ_OK) throw InternalError(fmt::format("bz2 codec: BZ2_bzDecompressInit failed ({})", rc));
  }
  ~Decompressor() { BZ2_bzDecompressEnd(&stream_); }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  bz_stream& stream() { return stream_; }

 private:
  bz_stream stream_{};
};

// Decodes the bzip2 stream starting at `pos` into `out`; returns where it ended.
std::size_t decode_stream(ByteView input, std::size_t pos, BoundedOutput& out) {
  Decompressor decompressor;
  bz_stream& bz = decompressor.stream();
  char probe[1];  // where output past a full bound goes, to tell "exceeds" from "ends here"
  while (true) {
    MutableByteView room = out.room();
    const bool probing = room.empty();
    const unsigned int in_avail = chunk_of(input.size() - pos);
    const unsigned int out_avail = probing ? 1u : chunk_of(room.size());
    bz.next_in = in_ptr(input, pos);
    bz.avail_in = in_avail;
    bz.next_out = probing ? probe : reinterpret_cast<char*>(room.data());
    bz.avail_out = out_avail;
    const int rc = BZ2_bzDecompress(&bz);
    pos += in_avail - bz.avail_in;
    const std::size_t produced = out_avail - bz.avail_out;
    if (probing && produced != 0) out.fail_too_large();
    if (!probing) out.produced(produced);
    switch (rc) {
      case BZ_STREAM_END:
        return pos;
      case BZ_OK:
        // With room left in the output, bzip2 has used all the input it could.
        if (pos == input.size() && bz.avail_out != 0) {
          fail_data_loss("bz2 codec: the bzip2 data is truncated ({} bytes decoded from {} input bytes)", out.size(),
                         input.size());
        }
        break;
      case BZ_MEM_ERROR:
        fail_resource("bz2 codec: out of memory while decompressing");
      case BZ_DATA_ERROR_MAGIC:
        fail_data_loss("bz2 codec: corrupt bzip2 data: no bzip2 header at byte {}", pos);
      default:  // BZ_DATA_ERROR and anything unexpected
        fail_data_loss("bz2 codec: corrupt bzip2 data (bzip2 error {})", rc);
    }
  }
}

class Bz2Codec final : public BytesToBytesCodec {
 public:
  explicit Bz2Codec(int level) : level_(level) {}

  std::string_view name() const override { return "numcodecs.bz2"; }
  nlohmann::json to_json() const override { return codec_json(name(), {{"level", level_}}); }
  std::optional<nlohmann::json> to_v2_json() const override {
    return nlohmann::json{{"id", "bz2"}, {"level", level_}};
  }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    // bzip2's documented worst case: 1% larger plus 600 bytes.
    const std::uint64_t bound = checked_add(decoded.size() + decoded.size() / 100, 600, "bz2 output bound");
    Buffer out = Buffer::allocate(to_size(bound));
    Compressor compressor(level_);
    bz_stream& bz = compressor.stream();
    std::size_t in_pos = 0;
    std::size_t out_pos = 0;
    while (true) {
      const unsigned int in_avail = chunk_of(decoded.size() - in_pos);
      const unsigned int out_avail = chunk_of(out.size() - out_pos);
      bz.next_in = in_ptr(decoded, in_pos);
      bz.avail_in = in_avail;
      bz.next_out = reinterpret_cast<char*>(out.data() + out_pos);
      bz.avail_out = out_avail;
      const bool last_input = in_pos + in_avail == decoded.size();
      const int rc = BZ2_bzCompress(&bz, last_input ? BZ_FINISH : BZ_RUN);
      in_pos += in_avail - bz.avail_in;
      out_pos += out_avail - bz.avail_out;
      if (rc == BZ_STREAM_END) break;
      const bool progressed = bz.avail_in != in_avail || bz.avail_out != out_avail;
      if ((rc != BZ_RUN_OK && rc != BZ_FINISH_OK) || !progressed) {
        throw InternalError(fmt::format("bz2 codec: compression of {} bytes failed ({})", decoded.size(), rc));
      }
    }
    return compressor_support::fit_to(std::move(out), out_pos);
  }

  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec&) const override {
    BoundedOutput out(decoded_size, "bz2", encoded.size());
    std::size_t pos = 0;
    do {
      pos = decode_stream(encoded, pos, out);  // further streams may follow, as `cat` makes
    } while (pos < encoded.size());
    return out.finish();
  }

 private:
  int level_;  // the block size in units of 100 kB
};

std::shared_ptr<const Codec> make_bz2(const nlohmann::json& config, ConfigForm form) {
  compressor_support::check_keys(config, {"level"}, "bz2", form, "bz2");
  auto level = compressor_support::optional_int(config, "level", 1, 9, "bz2").value_or(kNumcodecsDefaultLevel);
  return std::make_shared<Bz2Codec>(static_cast<int>(level));
}

}  // namespace

void register_bz2_codec(CodecRegistry& registry) {
  registry.add_v3("numcodecs.bz2",
                  [](const nlohmann::json& c, const CodecContext&) { return make_bz2(c, ConfigForm::kV3Numcodecs); });
  registry.add_v2("bz2", [](const nlohmann::json& c, const CodecContext&) { return make_bz2(c, ConfigForm::kV2); });
}

}  // namespace zarrkit

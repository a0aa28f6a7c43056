#include "codecs/deflate_support.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <memory>

#include <libdeflate.h>
#include <zlib.h>

#include "codecs/compressor_support.h"
#include "zarrkit/error.h"

namespace zarrkit::deflate_support {
namespace {

using compressor_support::BoundedOutput;

constexpr int kZlibDefaultLevel = 6;  // what zlib's Z_DEFAULT_COMPRESSION (-1) means
constexpr int kMaxLevel = 9;

std::string_view container_name(Container c) { return c == Container::kGzip ? "gzip" : "zlib"; }

// ---- libdeflate objects, one set per thread (they are not thread-safe, and costly to make)

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

libdeflate_compressor& thread_compressor(int level) {
  thread_local std::array<std::unique_ptr<libdeflate_compressor, CompressorDeleter>, kMaxLevel + 1> compressors;
  auto& slot = compressors[static_cast<std::size_t>(level)];
  if (!slot) {
    slot.reset(libdeflate_alloc_compressor(level));
    if (!slot) fail_resource("deflate: cannot allocate a compressor for level {}", level);
  }
  return *slot;
}

libdeflate_decompressor& thread_decompressor() {
  thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> decompressor;
  if (!decompressor) {
    decompressor.reset(libdeflate_alloc_decompressor());
    if (!decompressor) fail_resource("deflate: cannot allocate a decompressor");
  }
  return *decompressor;
}

// ---- zlib's streaming inflate -------------------------------------------------------------

class Inflater {
 public:
  Inflater() {
    // 15 + 32: the largest window, and automatic detection of a gzip or zlib header.
    int rc = inflateInit2(&stream_, 15 + 32);
    if (rc == Z_MEM_ERROR) fail_resource("deflate: zlib cannot allocate an inflate stream");
    if (rc != Z_OK) throw InternalError(fmt::format("deflate: inflateInit2 failed ({})", rc));
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
};

// The number of bytes at the start of `rest` that are zero: padding between gzip members.
std::size_t zero_padding(ByteView rest) {
  auto it = std::find_if(rest.begin(), rest.end(), [](std::byte b) { return b != std::byte{0}; });
  return static_cast<std::size_t>(it - rest.begin());
}

Buffer inflate_streaming(ByteView input, BoundedOutput& out, Container container, std::string_view codec) {
  Inflater inflater;
  z_stream& zs = inflater.stream();
  std::size_t in_pos = 0;
  std::byte probe[1];  // where output past a full bound goes, to tell "exceeds" from "ends here"
  while (true) {
    MutableByteView room = out.room();
    const bool probing = room.empty();
    if (probing) room = MutableByteView(probe, 1);

    const std::size_t in_avail = std::min<std::size_t>(input.size() - in_pos, UINT_MAX);
    const std::size_t out_avail = std::min<std::size_t>(room.size(), UINT_MAX);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(input.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_avail);
    zs.next_out = reinterpret_cast<Bytef*>(room.data());
    zs.avail_out = static_cast<uInt>(out_avail);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_avail - zs.avail_in;
    const std::size_t produced = out_avail - zs.avail_out;
    if (probing && produced != 0) out.fail_too_large();
    if (!probing) out.produced(produced);

    switch (rc) {
      case Z_OK:
        break;
      case Z_STREAM_END: {
        std::size_t rest = input.size() - in_pos;
        if (container == Container::kGzip) {
          in_pos += zero_padding(input.subspan(in_pos));
          if (in_pos == input.size()) return out.finish();
          // Another gzip member follows: Python's gzip module and `cat` make these.
          if (inflateReset(&zs) != Z_OK) throw InternalError("deflate: inflateReset failed");
          break;
        }
        if (rest != 0) fail_data_loss("{} codec: {} bytes of unexpected data after the end of the stream", codec, rest);
        return out.finish();
      }
      case Z_BUF_ERROR:  // no progress was possible: the input ran out mid-stream
        if (in_pos == input.size()) {
          fail_data_loss("{} codec: the {} stream is truncated ({} bytes decoded from {} input bytes)", codec,
                         container_name(container), out.size(), input.size());
        }
        throw InternalError(fmt::format("{} codec: inflate made no progress", codec));
      case Z_MEM_ERROR:
        fail_resource("{} codec: zlib ran out of memory while decompressing", codec);
      default:  // Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR
        fail_data_loss("{} codec: corrupt {} data: {}", codec, container_name(container),
                       zs.msg != nullptr ? zs.msg : "invalid stream");
    }
  }
}

// The size a single-member gzip stream claims in its trailer (ISIZE: the size modulo 2^32).
std::optional<std::uint64_t> gzip_claimed_size(ByteView input) {
  constexpr std::size_t kMinimumGzipSize = 18;  // 10-byte header, empty deflate, 8-byte trailer
  if (input.size() < kMinimumGzipSize) return std::nullopt;
  const auto* tail = reinterpret_cast<const unsigned char*>(input.data() + input.size() - 4);
  return static_cast<std::uint64_t>(tail[0]) | static_cast<std::uint64_t>(tail[1]) << 8 |
         static_cast<std::uint64_t>(tail[2]) << 16 | static_cast<std::uint64_t>(tail[3]) << 24;
}

libdeflate_result libdeflate_decompress(Container container, ByteView input, MutableByteView output,
                                        std::size_t* in_used, std::size_t* out_used) {
  auto& d = thread_decompressor();
  if (container == Container::kGzip) {
    return libdeflate_gzip_decompress_ex(&d, input.data(), input.size(), output.data(), output.size(), in_used,
                                         out_used);
  }
  return libdeflate_zlib_decompress_ex(&d, input.data(), input.size(), output.data(), output.size(), in_used,
                                       out_used);
}

}  // namespace

Buffer compress(ByteView data, int level, Container container) {
  if (level == -1) level = kZlibDefaultLevel;
  if (level < 0 || level > kMaxLevel) fail_invalid("{}: compression level {} is not in 0-9", container_name(container), level);
  auto& c = thread_compressor(level);
  const bool gzip = container == Container::kGzip;
  const std::size_t bound = gzip ? libdeflate_gzip_compress_bound(&c, data.size())
                                 : libdeflate_zlib_compress_bound(&c, data.size());
  Buffer out = Buffer::allocate(bound);
  const std::size_t written = gzip ? libdeflate_gzip_compress(&c, data.data(), data.size(), out.data(), bound)
                                   : libdeflate_zlib_compress(&c, data.data(), data.size(), out.data(), bound);
  if (written == 0) {
    throw InternalError(fmt::format("{}: libdeflate could not compress {} bytes into its own bound of {}",
                                    container_name(container), data.size(), bound));
  }
  return compressor_support::fit_to(std::move(out), written);
}

Buffer decompress(ByteView encoded, SizeBound bound, Container container, std::string_view codec) {
  // One libdeflate call decodes straight into a buffer of the right size when the size is
  // known: always for an exact bound; for a ceiling, when a gzip trailer claims a size
  // within it. Whatever that call cannot settle goes to zlib's streaming inflate.
  std::optional<std::uint64_t> claimed;
  if (!bound.exact && container == Container::kGzip) claimed = gzip_claimed_size(encoded);
  const bool try_libdeflate = bound.exact || (claimed && *claimed <= bound.bytes);
  BoundedOutput out(bound, codec, encoded.size(), claimed);
  if (try_libdeflate) {
    MutableByteView room = out.room();
    if (room.size() == (bound.exact ? bound.bytes : *claimed)) {
      std::size_t in_used = 0;
      std::size_t out_used = 0;
      const libdeflate_result rc = libdeflate_decompress(container, encoded, room, &in_used, &out_used);
      if (rc == LIBDEFLATE_SUCCESS && in_used == encoded.size()) {
        out.produced(out_used);
        return out.finish();  // checks an exact bound
      }
      if (rc == LIBDEFLATE_INSUFFICIENT_SPACE && bound.exact) out.fail_too_large();
      // Otherwise: more members follow, or a wrong trailer, or data libdeflate rejects
      // (which zlib then explains). Start again with zlib.
      out = BoundedOutput(bound, codec, encoded.size(), claimed);
    }
  }
  return inflate_streaming(encoded, out, container, codec);
}

void decompress_into(ByteView encoded, MutableByteView out, Container container, std::string_view codec) {
  std::size_t in_used = 0;
  std::size_t out_used = 0;
  const libdeflate_result rc = libdeflate_decompress(container, encoded, out, &in_used, &out_used);
  if (rc == LIBDEFLATE_SUCCESS && in_used == encoded.size() && out_used == out.size()) return;
  if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) {
    fail_data_loss("{} codec: decoded size exceeds the expected {} bytes", codec, out.size());
  }
  // Several members, a short stream, or data libdeflate rejects: the general path decides
  // (and explains), then the result is copied.
  const Buffer decoded = decompress(encoded, SizeBound{out.size(), true}, container, codec);
  if (!out.empty()) std::memcpy(out.data(), decoded.data(), out.size());
}

}  // namespace zarrkit::deflate_support

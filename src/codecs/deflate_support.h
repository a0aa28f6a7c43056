// DEFLATE in its two containers, shared by the gzip (RFC 1952) and zlib (RFC 1950) codecs.
// libdeflate does the work when it can (it is several times faster than zlib); zlib's
// streaming inflate takes over for what libdeflate cannot do in one call: multi-member
// gzip streams, and output whose size is only bounded, not known.
#pragma once

#include <string_view>

#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"

namespace zarrkit::deflate_support {

enum class Container : std::uint8_t { kGzip, kZlib };

// Compresses at `level` (0-9, zlib's scale; -1 means zlib's default, 6).
Buffer compress(ByteView data, int level, Container container);

// Decompresses under `bound` (codec.h). A gzip stream may hold several members (as
// Python's gzip module and `cat a.gz b.gz` make), separated by zero padding; a gzip
// reader also accepts a zlib stream, as zlib's automatic header detection does. Corrupt
// or truncated input, and bytes after the end of the stream, are DataLossError.
Buffer decompress(ByteView encoded, SizeBound bound, Container container, std::string_view codec);
// Decodes into `out`, whose size is the exact decoded size (one libdeflate call in the
// common case); DataLossError when the stream decodes to anything else.
void decompress_into(ByteView encoded, MutableByteView out, Container container, std::string_view codec);

}  // namespace zarrkit::deflate_support

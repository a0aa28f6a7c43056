// `--codec NAME[:key=value,...]` options: the bytes->bytes codecs of a new array, in order.
//   zstd:level=3[,checksum=true]   gzip:level=6   zlib:level=1   bz2:level=9   lz4[:acceleration=1]
//   lzma[:preset=6]   crc32c   none
//   blosc:cname=lz4,clevel=5,shuffle=shuffle|noshuffle|bitshuffle[,blocksize=0]
// They become v3 codec entries (as zarr-python writes them) or, for v2, one numcodecs
// compressor object. Bad syntax, unknown names or keys, and values out of range are
// InvalidArgumentError (a usage error for the CLI).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/dtype.h"

namespace zarrkit::cli {

struct CodecOption {
  std::string name;
  std::map<std::string, std::string> parameters;
  bool operator==(const CodecOption&) const = default;
};

// Splits "name:key=value,key=value" and checks the name and keys (not the values).
CodecOption parse_codec_option(std::string_view spec);

// The v3 codec entry for one option; null JSON for `none`. `dtype` gives blosc's typesize.
nlohmann::json codec_option_to_v3(const CodecOption& option, const DataType& dtype);
// The numcodecs object for one option; null JSON for `none`. crc32c has none.
nlohmann::json codec_option_to_v2(const CodecOption& option, const DataType& dtype);

// All the options as the v3 bytes->bytes list (`none` contributes nothing; it must be alone).
nlohmann::json v3_bytes_codecs(const std::vector<std::string>& specs, const DataType& dtype);
// All the options as a v2 compressor: an object or null. At most one compressor.
nlohmann::json v2_compressor(const std::vector<std::string>& specs, const DataType& dtype);

}  // namespace zarrkit::cli

// The arrays the write tests export for zarr-python (tools/gpu_bench/check_gpu_written.py):
// written from device memory by GpuWrite.ExportForZarrPython, and by the host run of the
// device's encoder by GpuWritePlan.HostEncoderExportForZarrPython. Values 0.5 * index,
// float32.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/metadata.h"

namespace zarrkit::gpu::testing {

struct ExportCase {
  std::string name;
  ArraySpec spec;
};

inline std::vector<ExportCase> export_cases() {
  using json = nlohmann::json;
  const json little = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  const json big = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};
  auto blosc = [](const std::string& shuffle, std::uint32_t blocksize) {
    return json{{"name", "blosc"},
                {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", shuffle}, {"typesize", 4}, {"blocksize", blocksize}}}};
  };
  const json crc = {{"name", "crc32c"}};
  const json lz4 = {{"name", "numcodecs.lz4"}};
  std::vector<ExportCase> cases;
  auto v3 = [&](const std::string& name, const Shape& shape, const Shape& chunks, const json& codecs) {
    ArraySpec spec;
    spec.shape = shape;
    spec.chunks = chunks;
    spec.dtype = DataType::float_(32);
    spec.codecs = codecs;
    cases.push_back({name, spec});
  };
  v3("v3_blosc_lz4_shuffle", {200, 300}, {64, 64}, json::array({little, blosc("shuffle", 0)}));
  v3("v3_blosc_lz4_bitshuffle_crc32c", {200, 300}, {64, 64}, json::array({big, blosc("bitshuffle", 0), crc}));
  v3("v3_numcodecs_lz4", {200, 300}, {64, 64}, json::array({little, lz4}));
  v3("v3_crc32c", {200, 300}, {64, 64}, json::array({little, crc}));
  // One chunk of 400x600: an LZ4 block of 15 segments, blosc splits of 240000 bytes (4
  // segments each), checksums over frames put together from those pieces.
  v3("v3_large_numcodecs_lz4_crc32c_crc32c", {400, 600}, {400, 600}, json::array({little, lz4, crc, crc}));
  v3("v3_large_blosc_1MiB_blocks_crc32c", {400, 600}, {400, 600}, json::array({little, blosc("bitshuffle", 1u << 20), crc}));
  // v2: blosc and lz4 compressors, a big-endian dtype.
  for (const auto& [name, compressor] : std::vector<std::pair<std::string, json>>{
           {"v2_blosc", json{{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}}},
           {"v2_lz4_big_endian", json{{"id", "lz4"}, {"acceleration", 1}}}}) {
    ArraySpec spec;
    spec.zarr_format = 2;
    spec.shape = {200, 300};
    spec.chunks = {64, 64};
    spec.dtype = name == "v2_lz4_big_endian" ? DataType::float_(32).with_storage_endian(Endian::kBig) : DataType::float_(32);
    spec.v2_compressor = compressor;
    cases.push_back({name, spec});
  }
  return cases;
}

inline std::vector<float> export_values(const Shape& shape) {
  std::vector<float> values(shape[0] * shape[1]);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i);
  return values;
}

}  // namespace zarrkit::gpu::testing

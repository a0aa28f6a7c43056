#include "demo/layouts.h"

#include <algorithm>

#include <fmt/format.h>

namespace zarrkit::demo {

namespace {

nlohmann::json zstd_v3_codecs() {
  return nlohmann::json::array({
      {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
      {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}},
  });
}

std::string shape_text(const Shape3& s) { return fmt::format("{}x{}x{}", s[0], s[1], s[2]); }

}  // namespace

ZarrLayout default_v3_layout(const Shape3& chunks) {
  ZarrLayout layout;
  layout.name = "zarr v3";
  layout.zarr_format = 3;
  layout.chunks = chunks;
  layout.decoded = chunks;
  layout.codecs = zstd_v3_codecs();
  layout.description = fmt::format("bytes + zstd level 1, chunks {}", shape_text(chunks));
  return layout;
}

ZarrLayout default_v2_layout(const Shape3& chunks) {
  ZarrLayout layout;
  layout.name = "zarr v2";
  layout.zarr_format = 2;
  layout.chunks = chunks;
  layout.decoded = chunks;
  layout.codecs = {
      {"compressor",
       {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}}},
      {"filters", nullptr},
  };
  layout.description = fmt::format("blosc lz4 clevel 5 + byte shuffle, chunks {}", shape_text(chunks));
  return layout;
}

ZarrLayout plane_layout(const Shape3& shape, int axis) {
  static const char* const kAxes[] = {"z", "y", "x"};
  ZarrLayout layout;
  layout.name = fmt::format("{}-plane chunks", kAxes[axis]);
  layout.role = LayoutRole::kPlanes;
  layout.zarr_format = 3;
  layout.chunks = shape;
  layout.chunks[axis] = 1;
  layout.decoded = layout.chunks;
  layout.codecs = zstd_v3_codecs();
  layout.description = fmt::format("bytes + zstd level 1, chunks {}: one {}-plane per chunk",
                                   shape_text(layout.chunks), kAxes[axis]);
  return layout;
}

ZarrLayout sharded_layout(const Shape3& shard, const Shape3& inner) {
  ZarrLayout layout;
  layout.name = "sharded";
  layout.role = LayoutRole::kSharded;
  layout.zarr_format = 3;
  layout.chunks = shard;
  layout.decoded = inner;
  layout.codecs = nlohmann::json::array({{
      {"name", "sharding_indexed"},
      {"configuration",
       {{"chunk_shape", {inner[0], inner[1], inner[2]}},
        {"codecs", zstd_v3_codecs()},
        {"index_codecs",
         nlohmann::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                {{"name", "crc32c"}}})},
        {"index_location", "end"}}},
  }});
  layout.description = fmt::format("sharding_indexed: shards {} of {} inner chunks, bytes + zstd level 1",
                                   shape_text(shard), shape_text(inner));
  return layout;
}

Shape3 inner_chunks_for(const Shape3& shard, std::uint64_t edge) {
  Shape3 inner{};
  for (int a = 0; a < 3; ++a) {
    std::uint64_t n = std::max<std::uint64_t>(1, std::min(edge, shard[a]));
    while (shard[a] % n != 0) --n;
    inner[a] = n;
  }
  return inner;
}

}  // namespace zarrkit::demo

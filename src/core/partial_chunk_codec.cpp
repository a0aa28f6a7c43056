#include "core/partial_chunk_codec.h"

#include <algorithm>

#include "zarrkit/config.h"
#include "zarrkit/error.h"

namespace zarrkit {

PartialIoSettings PartialIoSettings::current() {
  const Config& config = current_config();
  return PartialIoSettings{config.shard_coalesce_gap_bytes, config.shard_read_window_bytes, config.write_empty_chunks};
}

LocatedChunks PartialChunkCodec::locate_task(const ChunkSource& source, const ChunkTask& task,
                                             const Shape& array_shape) const {
  const Shape valid = chunk_valid_extent(task, chunk_shape(), array_shape);
  return locate(source, task_runs(task), valid);
}

BlockRuns task_runs(const ChunkTask& task) {
  BlockRuns runs;
  runs.reserve(task.axes.size());
  for (const AxisChunkPart& part : task.axes) runs.push_back(part.runs());
  return runs;
}

Shape chunk_valid_extent(const ChunkTask& task, const Shape& chunk_shape, const Shape& array_shape) {
  const std::size_t ndim = chunk_shape.size();
  if (task.chunk_coords.size() != ndim || task.axes.size() != ndim || array_shape.size() != ndim) {
    throw InternalError("chunk_valid_extent: the task, the chunk and the array have different numbers of axes");
  }
  Shape valid(ndim);
  for (std::size_t a = 0; a < ndim; ++a) {
    const std::uint64_t begin = task.axes[a].chunk_origin;
    valid[a] = begin < array_shape[a] ? std::min(chunk_shape[a], array_shape[a] - begin) : 0;
  }
  return valid;
}

}  // namespace zarrkit

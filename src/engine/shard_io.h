// Reading and writing the shards of a sharded array (v3 "sharding_indexed"), one chunk task
// (one shard) at a time. The engine (array.cpp) hands every task of a sharded array here.
//
// Reads (shard_reader.cpp) fetch the shard index with one ranged get (the first or last
// index_size bytes), then only the inner chunks the selection touches, as byte ranges of one
// get_ranges call; ranges closer than Config::shard_coalesce_gap_bytes are merged into one.
// An absent shard and an empty inner chunk (offset = nbytes = 2^64-1) read as the fill value.
// A task that selects the whole shard opens it once (Store::open_reader: one snapshot of
// the value, whose size checks the index) and reads it through that reader: inner chunks
// stored raw that fill a block of the output laid out like themselves are read straight
// into it, in parallel; the others in windows of Config::shard_read_window_bytes of encoded
// bytes, each window's inner chunks decoded in parallel before the next is read, so a task
// holds one window, not the whole shard. Stores without cheap ranged reads, and whole shards
// on remote stores (batched gets, where one request for the whole shard hides the latency),
// fetch the shard in one get instead. Nested sharding (an inner chain that is exactly one
// sharding_indexed codec) reads the same way one level down, inside the outer inner chunk's
// byte range.
//
// Writes (shard_writer.cpp) encode the inner chunks the task covers completely before taking
// the shard's lock (shard_locks.h), so several shards encode in parallel; then, under the
// lock, read the old shard if anything of it is kept, merge the partly covered inner chunks
// with their old values, copy the encoded bytes of untouched inner chunks as they are (never
// decoded), and write the shard with its new index. Inner chunks that hold only the fill
// value are left out (unless Config::write_empty_chunks), and a shard left without inner
// chunks is deleted. Inner chunks are laid out in zarr-python's Morton order, so a shard is
// byte-identical to the one zarr-python writes for the same values.
//
// Chains with codecs around sharding (transpose before it, a checksum after it) are read and
// written whole, through the codec chain, still under the shard lock when writing.
#pragma once

#include <memory>
#include <string>

#include "engine/indexer.h"
#include "zarrkit/metadata.h"
#include "zarrkit/store.h"

namespace zarrkit {

struct ShardLevel;

class ShardIo {
 public:
  // nullptr unless the array's array->bytes codec is sharding_indexed. Reads the settings of
  // current_config(): call it on the thread that starts the request.
  static std::unique_ptr<ShardIo> for_array(const ArrayMetadata& metadata);
  ~ShardIo();

  // Reads the task's elements of the shard at `key` into `region` (the caller's output, in
  // region coordinates: one axis per array axis; host memory).
  void read(Store& store, const std::string& key, const ChunkTask& task, const NDView& region) const;
  // Writes the task's elements of `input` (region coordinates) into the shard at `key`.
  void write(Store& store, const std::string& key, const ChunkTask& task, const NDView& input) const;

  // Settings, public for tests.
  struct Settings {
    std::uint64_t coalesce_gap = 0;
    bool write_empty_chunks = false;
    std::uint64_t read_window = 4 << 20;
  };
  ShardIo(const ArrayMetadata& metadata, std::unique_ptr<ShardLevel> top, Settings settings);

 private:
  void read_whole(Store& store, const std::string& key, const ChunkTask& task, const NDView& region) const;
  void write_whole(Store& store, const std::string& key, const ChunkTask& task, const NDView& input) const;

  const ArrayMetadata& metadata_;
  std::unique_ptr<ShardLevel> top_;  // null when the chain has codecs around sharding
  Settings settings_;
};

}  // namespace zarrkit

// `zarrkit cp SRC DST [write options]`: copies an array or a whole hierarchy, converting
// between Zarr v2 and v3, re-chunking and re-compressing. Data moves in blocks aligned to
// the destination chunks (see blocks.h), so memory stays bounded whatever the array size.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_set>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/checked_math.h"
#include "engine/chunk_io.h"
#include "zarrkit/app.h"
#include "zarrkit/blocks.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/commands.h"
#include "zarrkit/config.h"
#include "zarrkit/convert.h"
#include "zarrkit/error.h"
#include "zarrkit/location.h"
#include "zarrkit/progress.h"
#include "zarrkit/staged_write.h"
#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {
namespace {

struct CopyOptions {
  std::string source;
  std::string dest;
  WriteOptions write;
  bool consolidate = false;
};

// The C-order numbers of the blocks of `block_shape` that hold at least one stored chunk of
// `source`, from one listing of its keys; nullopt where the store cannot list. A block
// outside this set reads as the fill value only.
std::optional<std::unordered_set<std::uint64_t>> blocks_with_stored_chunks(const Array& source, const Shape& block_shape) {
  Store& store = *source.store();
  if (!store.capabilities().listable) return std::nullopt;
  const ArrayMetadata& m = source.metadata();
  const ChunkGrid grid = m.chunk_grid();
  std::unordered_set<std::uint64_t> blocks;
  std::vector<std::uint64_t> first(m.ndim()), last(m.ndim()), index(m.ndim());
  for (const ListedChunk& chunk : list_chunks(store, source.path(), m)) {
    const std::vector<std::uint64_t>& coords = chunk.coords;
    // The blocks the chunk overlaps: a range per axis (one or two blocks, usually).
    for (std::size_t a = 0; a < m.ndim(); ++a) {
      const std::uint64_t begin = grid.axis(a).origin(coords[a]);
      const std::uint64_t end = std::min(begin + grid.axis(a).size(coords[a]), m.shape[a]);
      first[a] = index[a] = begin / block_shape[a];
      last[a] = (end - 1) / block_shape[a];
    }
    while (true) {
      std::uint64_t number = 0;
      for (std::size_t a = 0; a < m.ndim(); ++a) number = number * ceil_div(m.shape[a], block_shape[a]) + index[a];
      blocks.insert(number);
      std::size_t a = m.ndim();
      while (a > 0 && index[a - 1] == last[a - 1]) {
        index[a - 1] = first[a - 1];
        --a;
      }
      if (a == 0) break;
      ++index[a - 1];
    }
  }
  return blocks;
}

void copy_array(const Array& source, const StoreLocation& dest, const WriteOptions& o, const std::string& label) {
  const ArraySpec spec = copy_spec(source.metadata(), o);
  const ArrayMetadata metadata = make_array_metadata(spec, CodecRegistry::builtin());
  // The metadata goes last: a copy cut short leaves no array rather than a partial one.
  Array target = Array::create(dest.store, dest.path, metadata, o.overwrite, Array::MetadataWrite::kLast);
  const Shape block = copy_block_shape(metadata.shape, metadata.chunk_shape, source.metadata().chunk_shape,
                                       metadata.dtype.size());
  const bool variable_length = metadata.dtype.is_variable_length();  // strings: no byte count
  Progress progress(label, metadata.num_chunks(), variable_length ? 0 : checked_nbytes(metadata.shape, metadata.dtype));
  // A sparse source copies in proportion to what it stores: blocks without a stored chunk
  // read as the fill value, which the new array (no chunks yet) already reads as, so they are
  // skipped, where the fill value and type are kept and fill chunks are not to be written.
  const ArrayMetadata& from = source.metadata();
  const bool fill_kept = from.dtype == metadata.dtype && from.fill_value.bytes().size() == metadata.fill_value.bytes().size() &&
                         std::equal(from.fill_value.bytes().begin(), from.fill_value.bytes().end(),
                                    metadata.fill_value.bytes().begin());
  const auto stored_blocks =
      fill_kept && !current_config().write_empty_chunks ? blocks_with_stored_chunks(source, block) : std::nullopt;
  std::uint64_t block_number = 0;
  for_each_block(metadata.shape, block, [&](const Block& b) {
    if (stored_blocks && !stored_blocks->contains(block_number++)) {
      return progress.advance(chunks_in_region(b.extent, metadata.chunk_shape), variable_length ? 0 : checked_nbytes(b.extent, metadata.dtype));
    }
    if (variable_length) {
      target.write_var(b.selection, source.read_var(b.selection));
      return progress.advance(chunks_in_region(b.extent, metadata.chunk_shape), 0);
    }
    NDBuffer data = source.read(b.selection);
    target.write(b.selection, data.view());
    progress.advance(chunks_in_region(b.extent, metadata.chunk_shape), data.nbytes());
  });
  target.write_metadata();
}

std::string relative_path(const std::string& path, const std::string& base) {
  return base.empty() ? path : path.substr(std::min(path.size(), base.size() + 1));
}

void copy_group(const OpenedNode& source, const StoreLocation& dest, WriteOptions o, const std::string& dest_label,
                bool consolidate) {
  Group group = Group::open(source.store, source.path);
  if (o.zarr_format == 0) o.zarr_format = group.zarr_format();  // members follow the root
  Group::create(dest.store, dest.path, o.zarr_format, group.attributes(), o.overwrite);
  for (const NodeInfo& member : group.walk()) {
    const std::string rel = relative_path(member.path, source.path);
    const StoreLocation target{dest.store, join_key(dest.path, rel)};
    const std::string label = fmt::format("{}/{}", dest_label, rel);
    try {
      // Through the group: with consolidated metadata nothing more is read for the nodes.
      if (member.type == NodeType::kGroup) {
        Group::create(dest.store, target.path, o.zarr_format, group.open_group(rel).attributes(), o.overwrite);
      } else {
        copy_array(group.open_array(rel), target, o, label);
      }
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("copying {}/{} to {}", source.location, rel, label));
    }
  }
  // Consolidated metadata is kept (rebuilt for the copy), or added when asked for.
  if (consolidate || group.has_consolidated_metadata()) consolidate_metadata(dest.store, dest.path);
}

void copy_node(const CopyOptions& o) {
  OpenedNode source = open_node(o.source);
  StoreLocation dest = open_location(o.dest, /*for_writing=*/true);
  if (dest.store->describe() == source.store->describe() && dest.path == source.path) {
    throw UsageError(fmt::format("cp: {} and {} are the same node", o.source, o.dest));
  }
  global_config().write_empty_chunks = o.write.write_empty_chunks;
  // On a directory store the copy is written beside the destination and renamed into place
  // when complete: until then an old node there stays whole and readable.
  const int format = o.write.zarr_format != 0 ? o.write.zarr_format : source.info.zarr_format;
  const std::string context = fmt::format("copying {} to {}", o.source, o.dest);
  std::optional<StagedNodeWrite> staged;
  try {
    staged.emplace(dest, o.write.overwrite, format);
  } catch (const Error& e) {
    rethrow_with_context(e, context);
  }
  if (source.info.type == NodeType::kGroup) {
    copy_group(source, staged->target(), o.write, o.dest, o.consolidate);
  } else {
    try {
      copy_array(Array::open(source.store, source.path), staged->target(), o.write, o.dest);
    } catch (const Error& e) {
      rethrow_with_context(e, context);
    }
  }
  finish_writes(staged->target(), o.dest);
  try {
    staged->commit();
  } catch (const Error& e) {
    rethrow_with_context(e, context);
  }
}

void run_cp(const CopyOptions& o) {
  // Opening the destination for writing creates its directory; a copy refused before it wrote
  // anything should leave no empty directory behind.
  std::error_code ec;
  const bool dest_existed = std::filesystem::exists(o.dest, ec);
  try {
    copy_node(o);
  } catch (...) {
    if (!dest_existed && std::filesystem::is_directory(o.dest, ec) && std::filesystem::is_empty(o.dest, ec)) {
      std::filesystem::remove(o.dest, ec);
    }
    throw;
  }
}

}  // namespace

void add_cp_command(CLI::App& app) {
  auto options = std::make_shared<CopyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "cp", "copy an array or a hierarchy, converting v2<->v3, re-chunking and re-compressing");
  cmd->add_option("source", options->source, "array or group to copy")->required();
  cmd->add_option("dest", options->dest, "where to create the copy")->required();
  add_write_options(*cmd, options->write);
  cmd->add_flag("--consolidate", options->consolidate,
                "consolidate the metadata of a copied group (kept anyway when the source group has it)");
  cmd->footer("Options not given keep the source's settings (format, chunks, codecs where the target format has "
              "them, fill value, attributes). For a group, every member is copied with the same options.");
  cmd->callback([options] { run_cp(*options); });
}

}  // namespace zarrkit::cli

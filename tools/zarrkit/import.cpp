// `zarrkit import IN.npy ARRAY [write options]`: writes an .npy file as a new array. The
// file is read in slabs of whole chunks along its outermost axis, so memory holds one slab
// (plus its transposed copy for Fortran-order files), not the whole array.
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "zarrkit/array.h"
#include "zarrkit/blocks.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/commands.h"
#include "zarrkit/config.h"
#include "zarrkit/convert.h"
#include "zarrkit/error.h"
#include "zarrkit/location.h"
#include "zarrkit/npy.h"
#include "zarrkit/progress.h"
#include "zarrkit/staged_write.h"
#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {
namespace {

struct ImportOptions {
  std::string input;
  std::string array;
  WriteOptions write;
};

void write_slabs(NpyReader& reader, Array& array, const std::string& label) {
  const ArrayMetadata& m = array.metadata();
  Progress progress(label, m.num_chunks(), reader.header().data_bytes);
  if (m.ndim() == 0) {
    NDBuffer value = reader.read_all();
    array.write({}, value.view());
    return progress.advance(1, value.nbytes());
  }
  const std::size_t axis = reader.slab_axis();
  // Whole chunks along the slab axis, as many as fit the budget (at least one).
  Shape block = m.shape;
  const std::uint64_t row_bytes = std::max<std::uint64_t>(reader.slab_stride_bytes(), 1);
  const std::uint64_t chunk = m.chunk_shape[axis];
  block[axis] = chunk * std::max<std::uint64_t>(1, kDefaultBlockBudget / row_bytes / chunk);
  for_each_block(m.shape, block, [&](const Block& b) {
    NDBuffer data = reader.read_slab(b.origin[axis], b.origin[axis] + b.extent[axis]);
    array.write(b.selection, data.view());
    progress.advance(chunks_in_region(b.extent, m.chunk_shape), data.nbytes());
  });
}

// The array, its metadata last: an import cut short leaves no array rather than a partial one.
void write_array(NpyReader& reader, const StoreLocation& where, const ArrayMetadata& metadata, bool overwrite,
                 const std::string& label) {
  Array array = Array::create(where.store, where.path, metadata, overwrite, Array::MetadataWrite::kLast);
  write_slabs(reader, array, label);
  array.write_metadata();
}

void run_import(const ImportOptions& o) {
  NpyReader reader(o.input);
  const ArraySpec spec = import_spec(reader.dtype(), reader.shape(), o.write);
  ArrayMetadata metadata;
  try {
    metadata = make_array_metadata(spec, CodecRegistry::builtin());
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("creating {}", o.array));
  }
  global_config().write_empty_chunks = o.write.write_empty_chunks;
  StoreLocation dest = open_location(o.array, /*for_writing=*/true);
  // On a directory store the array is written beside its place and renamed there when
  // complete: until then an old node there stays whole and readable.
  std::optional<StagedNodeWrite> staged;
  try {
    staged.emplace(dest, o.write.overwrite, metadata.zarr_format);
    write_array(reader, staged->target(), metadata, o.write.overwrite, o.array);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("importing {} into {}", o.input, o.array));
  }
  finish_writes(staged->target(), o.array);
  try {
    staged->commit();
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("importing {} into {}", o.input, o.array));
  }
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* cmd = app.add_subcommand("import", "write a NumPy .npy file as a new Zarr array");
  cmd->add_option("input", options->input, "the .npy file")->required();
  cmd->add_option("array", options->array, "where to create the array")->required();
  add_write_options(*cmd, options->write);
  cmd->footer("Defaults as in zarr-python: Zarr v3, chunks of about 1 MiB, zstd level 0, fill value 0.");
  cmd->callback([options] { run_import(*options); });
}

}  // namespace zarrkit::cli

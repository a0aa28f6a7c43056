// `zarrkit import IN.npy ARRAY [write options]`: writes an .npy file as a new array. The
// file is read in slabs of whole chunks along its outermost axis, so memory holds one slab
// (plus its transposed copy for Fortran-order files), not the whole array. `--dtype NAME`
// stores the file's elements as another data type of the same size: NumPy saves the
// ml_dtypes types (bfloat16, float8_e4m3fn, int4, ...) as raw bytes (|V1, |V2).
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "zarrkit/app.h"
#include "zarrkit/array.h"
#include "zarrkit/blocks.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/commands.h"
#include "zarrkit/config.h"
#include "zarrkit/convert.h"
#include "zarrkit/error.h"
#include "zarrkit/location.h"
#include "zarrkit/metadata.h"
#include "zarrkit/npy.h"
#include "zarrkit/progress.h"
#include "zarrkit/staged_write.h"
#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {
namespace {

struct ImportOptions {
  std::string input;
  std::string array;
  std::string dtype;  // --dtype: a v3 data type name; empty: the file's
  WriteOptions write;
};

// The --dtype type, checked against the file's: the same fixed item size.
DataType retyped(const std::string& name, const DataType& file_type) {
  DataType type;
  try {
    type = parse_dtype_v3(nlohmann::json(name));
  } catch (const Error& e) {
    throw UsageError(fmt::format("--dtype {}: {}", name, e.what()));
  }
  if (type.is_variable_length() || type.size() != file_type.size()) {
    throw UsageError(fmt::format("--dtype {}: the file's elements are {} ({} bytes each); {} takes {}", name,
                                 file_type.name(), file_type.size(), type.name(),
                                 type.is_variable_length() ? "a variable length" : fmt::format("{}", type.size())));
  }
  return type;
}

// The file's bytes as elements of `type`. Sub-byte types hold their value in the low bits:
// a byte with any high bit set is not one of their values.
NDBuffer as_type(NDBuffer data, const DataType& type, const std::string& input) {
  if (type.is_sub_byte()) {
    const auto high = static_cast<std::byte>(0xffu << type.value_bits() & 0xffu);
    const ByteView bytes = data.buffer().view();
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if ((bytes[i] & high) != std::byte{0}) {
        fail_invalid("{} holds the byte 0x{:02x}, which is not a {} value (only the low {} bits may be set)", input,
                     std::to_integer<unsigned>(bytes[i]), type.name(), type.value_bits());
      }
    }
  }
  return NDBuffer(data.buffer(), data.shape(), type);
}

void write_slabs(NpyReader& reader, Array& array, const std::string& label) {
  const ArrayMetadata& m = array.metadata();
  Progress progress(label, m.num_chunks(), reader.header().data_bytes);
  const bool retype = !(m.dtype == reader.dtype());
  auto typed = [&](NDBuffer data) { return retype ? as_type(std::move(data), m.dtype, reader.path().string()) : data; };
  if (m.ndim() == 0) {
    NDBuffer value = typed(reader.read_all());
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
    NDBuffer data = typed(reader.read_slab(b.origin[axis], b.origin[axis] + b.extent[axis]));
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
  if (reader.header().one_byte_float && o.dtype.empty()) {
    throw UsageError(fmt::format("{} holds 1-byte floats ('<f1', ml_dtypes' float8_e5m2): name the type with --dtype",
                                 o.input));
  }
  const DataType dtype = o.dtype.empty() ? reader.dtype() : retyped(o.dtype, reader.dtype());
  const ArraySpec spec = import_spec(dtype, reader.shape(), o.write);
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
  cmd->add_option("--dtype", options->dtype,
                  "store the elements as this v3 data type of the same size, e.g. float8_e4m3fn or int4 for a "
                  ".npy of raw bytes (|V1) that numpy.save wrote from an ml_dtypes array");
  add_write_options(*cmd, options->write);
  cmd->footer("Defaults as in zarr-python: Zarr v3, chunks of about 1 MiB, zstd level 0, fill value 0.");
  cmd->callback([options] { run_import(*options); });
}

}  // namespace zarrkit::cli

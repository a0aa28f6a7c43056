// `zarrkit export ARRAY OUT.npy [--select EXPR] [--astype TYPE]`: the selection as a NumPy
// .npy file, in native byte order. The selection is read into memory whole. Variable-length
// strings become fixed-width NumPy strings as wide as the longest selected one (`<U` for
// text, `S` for bytes), as `numpy.asarray(zarr_array[...], dtype=str)` would give; types
// .npy has no name for (the ml_dtypes types) are written as the one --astype names (astype.h).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "zarrkit/app.h"
#include "zarrkit/astype.h"
#include "zarrkit/commands.h"
#include "zarrkit/error.h"
#include "zarrkit/location.h"
#include "zarrkit/npy.h"
#include "zarrkit/vlen.h"

namespace zarrkit::cli {
namespace {

struct ExportOptions {
  std::string array;
  std::string output;
  std::string select;
  std::string astype;
};

// The code points of UTF-8 `text`. The elements of a string array were checked to be valid
// UTF-8 when their chunks were decoded (vlen-utf8), so only the lengths are guarded here.
std::vector<char32_t> utf8_code_points(std::string_view text) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (i + length > text.size()) throw InternalError("a decoded string element ends inside a UTF-8 sequence");
    char32_t c = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    out.push_back(c);
    i += length;
  }
  return out;
}

// Variable-length elements as a fixed-width NumPy array: UTF-32 code units for text, bytes
// for bytes, each padded with zeros to the widest (at least 1, as NumPy's narrowest).
NDBuffer as_fixed_width(const VarNDBuffer& values) {
  const bool text = values.dtype().kind() == DataTypeKind::kString;
  std::vector<std::vector<char32_t>> code_points;
  std::size_t width = 1;
  if (text) {
    code_points.reserve(values.elements().size());
    for (const std::string& e : values.elements()) {
      code_points.push_back(utf8_code_points(e));
      width = std::max(width, code_points.back().size());
    }
  } else {
    for (const std::string& e : values.elements()) width = std::max(width, e.size());
  }
  const DataType dtype = text ? DataType::fixed_unicode(width) : DataType::fixed_bytes(width);
  const std::size_t item = dtype.size();
  Buffer buffer = Buffer::allocate(item * values.elements().size());
  std::memset(buffer.data(), 0, buffer.size());
  for (std::size_t i = 0; i < values.elements().size(); ++i) {
    std::byte* dest = buffer.data() + i * item;
    if (text) {
      std::memcpy(dest, code_points[i].data(), code_points[i].size() * sizeof(char32_t));
    } else {
      std::memcpy(dest, values.elements()[i].data(), values.elements()[i].size());
    }
  }
  return NDBuffer(std::move(buffer), values.shape(), dtype);
}

void run_export(const ExportOptions& o) {
  Selection selection;
  if (!o.select.empty()) {
    as_usage_error("--select " + o.select, [&] { selection = parse_selection(o.select); });
  }
  Array array = open_array(o.array);
  // Out-of-range indices and zero steps are the user's mistake too: check before reading.
  as_usage_error("--select " + o.select, [&] { array.selection_shape(selection); });
  const DataType written = export_type(array.dtype(), o.astype);
  // Read errors already name the store, the array and the chunk key.
  if (array.dtype().is_variable_length()) {
    write_npy(o.output, as_fixed_width(array.read_var(selection)));
  } else {
    write_npy(o.output, convert_for_export(array.read(selection), written));
  }
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "write an array, or a selection of it, as a NumPy .npy file");
  cmd->add_option("array", options->array, "the array")->required();
  cmd->add_option("output", options->output, "the .npy file to write")->required();
  cmd->add_option("--select", options->select,
                  "NumPy index expression per axis: 3, 0:10, ::-2, ..., -1, and integer or boolean "
                  "lists ([1,5,9], [True,False]), each list selecting along its own axis");
  cmd->add_option("--astype", options->astype,
                  "the element type to write for types .npy has no name for (bfloat16, float8/6/4, "
                  "int2/int4/uint2/uint4): float32 or float64 (the same values) or the type's own name "
                  "(its byte patterns, NumPy 'V1'/'V2', for ml_dtypes)");
  cmd->callback([options] { run_export(*options); });
}

}  // namespace zarrkit::cli

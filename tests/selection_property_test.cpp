// Property test: every selection kind, read and write, against NumPy semantics.
//
// Thousands of random cases: random shapes (zero-length axes and 0-d included), chunk
// shapes, data types, formats and codecs (sharding too), and random selections of every
// kind: basic and orthogonal (integers, slices with any step, ellipsis, integer and boolean
// lists), coordinates (broadcast index arrays), whole-array masks and block selections;
// reads (into C-order and strided outputs) and writes (full values and broadcast ones, with
// repeated indices). Each result is compared byte for byte with a reference written here
// element by element from NumPy's rules, independently of the engine's indexer. Invalid
// selections must raise InvalidArgumentError and change nothing.
//
// ZARRKIT_PROPERTY_CASES and ZARRKIT_PROPERTY_SEED override the case count and seed.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "core/settings_env.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using Wide = __int128;
using Index = std::vector<std::uint64_t>;

// ---- The reference: a C-order array and NumPy's rules, element by element ----------------

struct RefArray {
  Shape shape;
  std::size_t itemsize = 1;
  std::vector<std::byte> data;

  std::uint64_t size() const {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  std::byte* at(const Index& idx) {
    std::uint64_t k = 0;
    for (std::size_t a = 0; a < shape.size(); ++a) k = k * shape[a] + idx[a];
    return data.data() + k * itemsize;
  }
};

// Calls f(index) for every index of `shape` in C order (once for a 0-d shape).
template <typename F>
void each_index(const Shape& shape, F&& f) {
  for (auto d : shape) {
    if (d == 0) return;
  }
  Index idx(shape.size(), 0);
  while (true) {
    f(idx);
    std::size_t a = shape.size();
    while (a > 0) {
      --a;
      if (++idx[a] < shape[a]) break;
      idx[a] = 0;
      if (a == 0) return;
    }
    if (shape.empty()) return;
  }
}

// Python's range(*slice(start, stop, step).indices(n)).
std::vector<std::uint64_t> slice_indices(const Slice& s, std::uint64_t extent) {
  const Wide n = extent, step = s.step;
  const Wide lower = step > 0 ? 0 : -1;
  const Wide upper = step > 0 ? n : n - 1;
  auto resolve = [&](std::optional<std::int64_t> v, Wide dflt) {
    if (!v) return dflt;
    Wide b = *v;
    if (b < 0) return std::max<Wide>(b + n, lower);
    return std::min<Wide>(b, upper);
  };
  const Wide start = resolve(s.start, step > 0 ? lower : upper);
  const Wide stop = resolve(s.stop, step > 0 ? upper : lower);
  std::vector<std::uint64_t> out;
  for (Wide i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(static_cast<std::uint64_t>(i));
  return out;
}

// Per axis of a basic/orthogonal selection: the indices it selects, and whether it drops.
struct RefAxis {
  std::vector<std::uint64_t> indices;
  bool drops = false;
};

std::vector<RefAxis> resolve_axes(const Selection& sel, const Shape& shape) {
  Selection full;
  std::size_t explicit_axes = 0;
  for (const auto& s : sel) explicit_axes += !std::holds_alternative<Ellipsis>(s);
  for (const auto& s : sel) {
    if (std::holds_alternative<Ellipsis>(s)) {
      for (std::size_t k = explicit_axes; k < shape.size(); ++k) full.push_back(Slice::all());
    } else {
      full.push_back(s);
    }
  }
  while (full.size() < shape.size()) full.push_back(Slice::all());
  std::vector<RefAxis> axes(shape.size());
  for (std::size_t a = 0; a < shape.size(); ++a) {
    const auto n = static_cast<std::int64_t>(shape[a]);
    if (const auto* i = std::get_if<std::int64_t>(&full[a])) {
      axes[a].indices = {static_cast<std::uint64_t>(*i < 0 ? *i + n : *i)};
      axes[a].drops = true;
    } else if (const auto* s = std::get_if<Slice>(&full[a])) {
      axes[a].indices = slice_indices(*s, shape[a]);
    } else if (const auto* list = std::get_if<IndexArray>(&full[a])) {
      for (auto i : list->indices) axes[a].indices.push_back(static_cast<std::uint64_t>(i < 0 ? i + n : i));
    } else {
      const auto& mask = std::get<BoolArray>(full[a]).mask;
      for (std::size_t i = 0; i < mask.size(); ++i) {
        if (mask[i]) axes[a].indices.push_back(i);
      }
    }
  }
  return axes;
}

// The elements a selection picks, in the order of its result: array indices per result
// element, and the result's shape. Every kind reduces to this.
struct Picks {
  Shape shape;
  std::vector<Index> elements;
};

Picks picks_of_axes(const std::vector<RefAxis>& axes) {
  Picks p;
  Shape counts;
  for (const auto& a : axes) {
    counts.push_back(a.indices.size());
    if (!a.drops) p.shape.push_back(a.indices.size());
  }
  each_index(counts, [&](const Index& k) {
    Index e(axes.size());
    for (std::size_t a = 0; a < axes.size(); ++a) e[a] = axes[a].indices[k[a]];
    p.elements.push_back(e);
  });
  return p;
}

Picks picks_of_coordinates(const CoordinateSelection& coords, const Shape& shape) {
  Picks p;
  std::size_t ndim = 0;
  for (const auto& c : coords) ndim = std::max(ndim, c.shape.size());
  p.shape.assign(ndim, 1);
  for (const auto& c : coords) {
    for (std::size_t i = 0; i < c.shape.size(); ++i) {
      auto& d = p.shape[ndim - c.shape.size() + i];
      if (c.shape[i] != 1) d = c.shape[i];
    }
  }
  each_index(p.shape, [&](const Index& o) {
    Index e(shape.size());
    for (std::size_t a = 0; a < shape.size(); ++a) {
      const auto& c = coords[a];
      std::uint64_t k = 0;
      for (std::size_t i = 0; i < c.shape.size(); ++i) {
        k = k * c.shape[i] + (c.shape[i] == 1 ? 0 : o[ndim - c.shape.size() + i]);
      }
      const std::int64_t v = c.values[k];
      e[a] = static_cast<std::uint64_t>(v < 0 ? v + static_cast<std::int64_t>(shape[a]) : v);
    }
    p.elements.push_back(e);
  });
  return p;
}

Picks picks_of_mask(const MaskSelection& mask, const Shape& shape) {
  Picks p;
  std::size_t k = 0;
  each_index(shape, [&](const Index& e) {
    if (mask.mask[k++]) p.elements.push_back(e);
  });
  p.shape = {p.elements.size()};
  return p;
}

// Block selections: each axis's entries resolved over the chunk grid as usual, each block
// standing for its elements; an integer keeps its axis.
Picks picks_of_blocks(const Selection& blocks, const Shape& shape, const Shape& chunks) {
  Shape grid;
  for (std::size_t a = 0; a < shape.size(); ++a) grid.push_back((shape[a] + chunks[a] - 1) / chunks[a]);
  auto axes = resolve_axes(blocks, grid);
  for (std::size_t a = 0; a < axes.size(); ++a) {
    std::vector<std::uint64_t> elements;
    for (auto b : axes[a].indices) {
      for (std::uint64_t i = b * chunks[a]; i < std::min(shape[a], (b + 1) * chunks[a]); ++i) elements.push_back(i);
    }
    axes[a] = {elements, false};
  }
  return picks_of_axes(axes);
}

std::vector<std::byte> ref_read(RefArray& ref, const Picks& p) {
  std::vector<std::byte> out;
  for (const auto& e : p.elements) out.insert(out.end(), ref.at(e), ref.at(e) + ref.itemsize);
  return out;
}

// NumPy assignment: value k (broadcast from `vshape` to the result shape) goes to element
// k, in order, so a repeated element keeps the last value.
void ref_write(RefArray& ref, const Picks& p, const std::vector<std::byte>& values, Shape vshape) {
  while (vshape.size() > p.shape.size()) vshape.erase(vshape.begin());  // extra leading 1s
  std::size_t k = 0;
  each_index(p.shape, [&](const Index& o) {
    std::uint64_t v = 0;
    const std::size_t offset = p.shape.size() - vshape.size();
    for (std::size_t i = 0; i < vshape.size(); ++i) v = v * vshape[i] + (vshape[i] == 1 ? 0 : o[offset + i]);
    std::memcpy(ref.at(p.elements[k++]), values.data() + v * ref.itemsize, ref.itemsize);
  });
}

// ---- Random arrays and selections ------------------------------------------------------

struct Rng {
  std::mt19937_64 engine;
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine); }
  bool one_in(int n) { return pick(0, n - 1) == 0; }
};

struct TypeChoice {
  DataType dtype;
  json fill;
};

TypeChoice random_type(Rng& r) {
  switch (r.pick(0, 7)) {
    case 0: return {DataType::boolean(), json(r.one_in(2))};
    case 1: return {DataType::int_(8), json(r.pick(-3, 3))};
    case 2: return {DataType::uint_(16), json(r.pick(0, 5))};
    case 3: return {DataType::int_(32), json(r.pick(-5, 5))};
    case 4: return {DataType::int_(64), json(r.pick(-5, 5))};
    case 5: return {DataType::float_(32), json(r.pick(-2, 2))};
    case 6: return {DataType::float_(64), json(r.pick(-2, 2))};
    default: return {DataType::complex_(64), json::array({r.pick(-2, 2), r.pick(-2, 2)})};
  }
}

// Element values that survive a round trip byte for byte: floats are small integers, so no
// NaN payload can collapse into the fill value's when a chunk is found to be all fill.
std::vector<std::byte> random_values(Rng& r, std::size_t n, const DataType& dtype) {
  std::vector<std::byte> out(n * dtype.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * dtype.size();
    const int small = r.pick(-3, 3);  // often equal to the fill value: chunks get erased
    switch (dtype.kind()) {
      case DataTypeKind::kBool: *p = static_cast<std::byte>(r.pick(0, 1)); break;
      case DataTypeKind::kFloat:
        if (dtype.size() == 4) {
          const float f = static_cast<float>(small);
          std::memcpy(p, &f, 4);
        } else {
          const double d = small;
          std::memcpy(p, &d, 8);
        }
        break;
      case DataTypeKind::kComplex: {
        const float parts[2] = {static_cast<float>(small), static_cast<float>(r.pick(-1, 1))};
        std::memcpy(p, parts, 8);
        break;
      }
      default:
        for (std::size_t b = 0; b < dtype.size(); ++b) {
          p[b] = static_cast<std::byte>(r.one_in(2) ? 0 : r.engine());
        }
    }
  }
  return out;
}

json bytes_codec() { return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}; }

ArraySpec random_spec(Rng& r, const Shape& shape, Shape& chunks, const TypeChoice& type) {
  ArraySpec spec;
  spec.shape = shape;
  spec.dtype = type.dtype;
  spec.fill_value = type.fill;
  spec.zarr_format = r.one_in(4) ? 2 : 3;
  const std::size_t ndim = shape.size();
  if (spec.zarr_format == 2) {
    spec.v2_order = r.one_in(3) ? 'F' : 'C';
    spec.v2_compressor = r.one_in(2) ? json(nullptr) : json{{"id", "zlib"}, {"level", 1}};
  } else {
    switch (r.pick(0, 4)) {
      case 0: spec.codecs = json::array({bytes_codec()}); break;
      case 1:
        spec.codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}},
                                   {{"name", "gzip"}, {"configuration", {{"level", 1}}}}});
        break;
      case 2: {
        json order = json::array();
        for (std::size_t a = ndim; a-- > 0;) order.push_back(a);
        spec.codecs = json::array();
        if (ndim > 0) spec.codecs->push_back({{"name", "transpose"}, {"configuration", {{"order", order}}}});
        spec.codecs->push_back(bytes_codec());
        spec.codecs->push_back({{"name", "crc32c"}});
        break;
      }
      case 3: {
        // Shards of inner chunks: the shard shape is a multiple of the inner one.
        Shape inner;
        for (std::size_t a = 0; a < ndim; ++a) {
          inner.push_back(static_cast<std::uint64_t>(r.pick(1, 3)));
          chunks[a] = inner[a] * static_cast<std::uint64_t>(r.pick(1, 3));
        }
        spec.codecs = json::array(
            {{{"name", "sharding_indexed"},
              {"configuration",
               {{"chunk_shape", inner},
                {"codecs", json::array({bytes_codec()})},
                {"index_codecs", json::array({bytes_codec(), {{"name", "crc32c"}}})},
                {"index_location", r.one_in(2) ? "start" : "end"}}}}});
        break;
      }
      default: break;  // zarrkit's default: bytes + zstd
    }
  }
  spec.chunks = chunks;
  return spec;
}

std::optional<std::int64_t> random_bound(Rng& r, std::int64_t n) {
  switch (r.pick(0, 9)) {
    case 0: return std::nullopt;
    case 1: return std::nullopt;
    case 2: return r.one_in(2) ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
    default: return r.pick(static_cast<int>(-n) - 2, static_cast<int>(n) + 2);
  }
}

std::int64_t random_step(Rng& r) {
  if (r.one_in(30)) return r.one_in(2) ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  const int s = r.one_in(2) ? 1 : r.pick(1, 4);
  return r.one_in(3) ? -s : s;
}

// An in-bounds index of an axis of n > 0, positive or counted from the end.
std::int64_t random_index(Rng& r, std::int64_t n) {
  const std::int64_t i = r.pick(0, static_cast<int>(n) - 1);
  return r.one_in(3) ? i - n : i;
}

// A basic/orthogonal selection (also used over the chunk grid for block selections).
Selection random_selection(Rng& r, const Shape& shape, bool allow_integers = true) {
  const auto ndim = static_cast<int>(shape.size());
  const int used = r.pick(0, ndim);
  const int ellipsis_at = r.one_in(4) ? r.pick(0, used) : -1;
  Selection sel;
  for (int k = 0; k < used; ++k) {
    if (k == ellipsis_at) sel.push_back(Ellipsis{});
    const int axis = ellipsis_at >= 0 && k >= ellipsis_at ? ndim - (used - k) : k;
    const auto n = static_cast<std::int64_t>(shape[static_cast<std::size_t>(axis)]);
    const int kind = r.pick(0, 9);
    if (kind <= 1 && n > 0 && allow_integers) {
      sel.push_back(random_index(r, n));
    } else if (kind == 2 || kind == 3) {
      IndexArray list;
      const int length = n > 0 ? r.pick(0, 7) : 0;
      for (int j = 0; j < length; ++j) list.indices.push_back(random_index(r, n));
      if (r.one_in(3)) std::sort(list.indices.begin(), list.indices.end());
      sel.push_back(list);
    } else if (kind == 4) {
      BoolArray mask;
      for (std::int64_t j = 0; j < n; ++j) mask.mask.push_back(static_cast<std::uint8_t>(r.pick(0, 1)));
      sel.push_back(mask);
    } else {
      sel.push_back(Slice{random_bound(r, n), random_bound(r, n), random_step(r)});
    }
  }
  if (ellipsis_at == used) sel.push_back(Ellipsis{});
  return sel;
}

// Index arrays for every axis that broadcast to a random shape.
CoordinateSelection random_coordinates(Rng& r, const Shape& shape) {
  bool empty_axis = false;
  for (auto d : shape) empty_axis = empty_axis || d == 0;
  Shape target;
  const int out_ndim = r.pick(0, 2);
  for (int i = 0; i < out_ndim; ++i) target.push_back(static_cast<std::uint64_t>(r.pick(0, 4)));
  if (empty_axis) target.push_back(0);  // no index is valid there: select nothing
  CoordinateSelection coords;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    Shape s = target;
    if (!empty_axis) {
      const std::size_t drop = static_cast<std::size_t>(r.pick(0, static_cast<int>(s.size())));
      s.erase(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(drop));
      for (auto& d : s) {
        if (r.one_in(3)) d = 1;
      }
    }
    std::uint64_t n = 1;
    for (auto d : s) n *= d;
    std::vector<std::int64_t> values;
    for (std::uint64_t k = 0; k < n; ++k) values.push_back(random_index(r, static_cast<std::int64_t>(shape[a])));
    coords.emplace_back(s, values);
  }
  return coords;
}

MaskSelection random_mask(Rng& r, const Shape& shape) {
  MaskSelection m{shape, {}};
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  const int density = r.pick(0, 4);
  for (std::uint64_t k = 0; k < n; ++k) m.mask.push_back(static_cast<std::uint8_t>(r.pick(0, 3) < density));
  return m;
}

// A value shape that broadcasts to `out`: leading axes dropped, some axes set to 1.
Shape random_value_shape(Rng& r, const Shape& out) {
  if (r.one_in(4)) return {};
  Shape s = out;
  if (r.one_in(3)) s.erase(s.begin(), s.begin() + r.pick(0, static_cast<int>(s.size())));
  for (auto& d : s) {
    if (r.one_in(4)) d = 1;
  }
  if (r.one_in(6)) s.insert(s.begin(), 1);  // an extra leading 1 is allowed too
  return s;
}

NDView view_of(std::vector<std::byte>& bytes, const Shape& shape, const DataType& dtype) {
  return NDView{bytes.data(), shape, NDView::c_strides(shape, dtype.size()), dtype};
}

bool same_bytes(const NDBuffer& got, const std::vector<std::byte>& want) {
  return got.nbytes() == want.size() && (want.empty() || std::memcmp(got.data(), want.data(), want.size()) == 0);
}

std::string describe(const Selection& sel) { return format_selection(sel); }

std::string describe(const CoordinateSelection& coords) {
  std::string out;
  for (const auto& c : coords) out += fmt::format("[shape {} values {}] ", fmt::join(c.shape, ","), fmt::join(c.values, ","));
  return out;
}

// ---- The test ------------------------------------------------------------------------------

enum Kind { kBasic, kCoordinate, kMask, kBlock, kNumKinds };
const char* const kKindNames[] = {"basic/orthogonal", "coordinate", "mask", "block"};

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const std::optional<std::string> v = environment_variable(name);
  return v ? std::strtoull(v->c_str(), nullptr, 10) : fallback;
}

TEST(SelectionProperty, EveryKindReadAndWriteMatchesNumPySemantics) {
  const std::uint64_t cases = env_or("ZARRKIT_PROPERTY_CASES", 8000);
  const std::uint64_t seed = env_or("ZARRKIT_PROPERTY_SEED", 20261122);
  Rng r{std::mt19937_64(seed)};
  std::uint64_t ops[kNumKinds][2] = {};  // [kind][read, write]
  std::uint64_t invalid_checked = 0;
  std::uint64_t mismatches = 0;

  for (std::uint64_t c = 0; c < cases && mismatches == 0; ++c) {
    const std::size_t ndim = static_cast<std::size_t>(r.pick(0, 4));
    Shape shape, chunks;
    std::uint64_t total = 1;
    for (std::size_t a = 0; a < ndim; ++a) {
      const int cap = ndim <= 2 ? 13 : 6;
      shape.push_back(static_cast<std::uint64_t>(r.one_in(12) ? 0 : r.pick(1, cap)));
      chunks.push_back(static_cast<std::uint64_t>(r.pick(1, 5)));
      total *= shape.back();
    }
    const TypeChoice type = random_type(r);
    auto store = MemoryStore::create();
    const ArraySpec spec = random_spec(r, shape, chunks, type);
    Array array = Array::create(store, "p", make_array_metadata(spec, CodecRegistry::builtin()));
    RefArray ref{shape, type.dtype.size(), {}};
    ref.data.resize(total * ref.itemsize);
    for (std::uint64_t k = 0; k < total; ++k) {
      std::memcpy(ref.data.data() + k * ref.itemsize, array.metadata().fill_value.bytes().data(), ref.itemsize);
    }
    const std::string where = fmt::format("case {} (seed {}): shape [{}] chunks [{}] {} v{}", c, seed,
                                          fmt::join(shape, ","), fmt::join(chunks, ","), type.dtype.name(),
                                          spec.zarr_format);
    if (r.one_in(2)) {  // start from data, not only from the fill value
      auto values = random_values(r, total, type.dtype);
      array.write({}, view_of(values, shape, type.dtype));
      ref.data = values;
    }

    const int steps = r.pick(2, 6);
    for (int step = 0; step < steps && mismatches == 0; ++step) {
      const auto kind = static_cast<Kind>(r.pick(0, kNumKinds - 1));
      const bool write = r.one_in(2);
      Picks picks;
      std::string what;
      Selection sel, blocks;
      CoordinateSelection coords;
      MaskSelection mask;
      switch (kind) {
        case kBasic:
          sel = random_selection(r, shape);
          picks = picks_of_axes(resolve_axes(sel, shape));
          what = "select " + describe(sel);
          break;
        case kCoordinate:
          coords = random_coordinates(r, shape);
          picks = picks_of_coordinates(coords, shape);
          what = "coordinates " + describe(coords);
          break;
        case kMask:
          mask = random_mask(r, shape);
          picks = picks_of_mask(mask, shape);
          what = "mask";
          break;
        default: {
          Shape grid;
          for (std::size_t a = 0; a < ndim; ++a) grid.push_back((shape[a] + chunks[a] - 1) / chunks[a]);
          blocks = random_selection(r, grid);
          picks = picks_of_blocks(blocks, shape, chunks);
          what = "blocks " + describe(blocks);
        }
      }
      ++ops[kind][write];
      SCOPED_TRACE(where + ": " + (write ? "write " : "read ") + what);
      try {
        if (write) {
          const Shape vshape = random_value_shape(r, picks.shape);
          std::uint64_t n = 1;
          for (auto d : vshape) n *= d;
          auto values = random_values(r, n, type.dtype);
          const NDView v = view_of(values, vshape, type.dtype);
          switch (kind) {
            case kBasic: array.write(sel, v); break;
            case kCoordinate: array.write_coordinates(coords, v); break;
            case kMask: array.write_mask(mask, v); break;
            default: array.write_blocks(blocks, v);
          }
          ref_write(ref, picks, values, vshape);
          const NDBuffer all = array.read();
          if (!same_bytes(all, ref.data)) {
            ++mismatches;
            ADD_FAILURE() << "the array differs from the reference after this write";
          }
        } else {
          NDBuffer got;
          switch (kind) {
            case kBasic:
              if (r.one_in(3)) {
                // Into a strided output: F order, walking the last axis backwards.
                const Shape out_shape = array.selection_shape(sel);
                got = NDBuffer::allocate(out_shape, array.dtype().with_storage_endian(std::nullopt));
                NDBuffer strided = NDBuffer::allocate(out_shape, got.dtype());
                NDView view = strided.view();
                std::int64_t stride = static_cast<std::int64_t>(got.dtype().size());
                for (std::size_t a = 0; a < out_shape.size(); ++a) {
                  view.byte_strides[a] = stride;
                  stride *= static_cast<std::int64_t>(out_shape[a]);
                }
                if (!out_shape.empty() && out_shape.back() > 0) {
                  view.data += view.byte_strides.back() * static_cast<std::int64_t>(out_shape.back() - 1);
                  view.byte_strides.back() = -view.byte_strides.back();
                }
                array.read_into(sel, view);
                // Back to C order through the engine-independent index walk.
                std::size_t k = 0;
                each_index(out_shape, [&](const Index& o) {
                  std::int64_t off = 0;
                  for (std::size_t a = 0; a < o.size(); ++a) off += view.byte_strides[a] * static_cast<std::int64_t>(o[a]);
                  std::memcpy(got.data() + k++ * got.dtype().size(), view.data + off, got.dtype().size());
                });
              } else {
                got = array.read(sel);
              }
              break;
            case kCoordinate: got = array.read_coordinates(coords); break;
            case kMask: got = array.read_mask(mask); break;
            default: got = array.read_blocks(blocks);
          }
          const auto want = ref_read(ref, picks);
          if (got.shape() != picks.shape || !same_bytes(got, want)) {
            ++mismatches;
            ADD_FAILURE() << "read mismatch: shape [" << fmt::format("{}", fmt::join(got.shape(), ","))
                          << "], expected [" << fmt::format("{}", fmt::join(picks.shape, ",")) << "]";
          }
        }
      } catch (const Error& e) {
        ++mismatches;
        ADD_FAILURE() << "unexpected error: " << e.what();
      }

      // Now and then, a broken variant of a selection must be refused and change nothing.
      if (r.one_in(5) && ndim > 0) {
        ++invalid_checked;
        const std::size_t axis = static_cast<std::size_t>(r.pick(0, static_cast<int>(ndim) - 1));
        const auto n = static_cast<std::int64_t>(shape[axis]);
        std::vector<std::byte> one(ref.itemsize);
        const NDView scalar = view_of(one, {}, type.dtype);
        bool refused = false;
        try {
          switch (r.pick(0, 4)) {
            case 0: {
              Selection bad(ndim, Slice::all());
              bad[axis] = IndexArray{{0, r.one_in(2) ? n : -n - 1}};
              array.write(bad, scalar);
              break;
            }
            case 1: {
              Selection bad(ndim, Slice::all());
              bad[axis] = BoolArray{std::vector<std::uint8_t>(static_cast<std::size_t>(n) + 1, 1)};
              array.write(bad, scalar);
              break;
            }
            case 2: {
              CoordinateSelection bad;
              for (std::size_t a = 0; a < ndim; ++a) bad.push_back(CoordinateArray::scalar(0));
              bad[axis] = CoordinateArray({n});
              array.write_coordinates(bad, scalar);
              break;
            }
            case 3: {
              Selection bad(ndim, Slice::all());
              bad[axis] = Slice{std::nullopt, std::nullopt, 0};
              array.write_blocks(bad, scalar);
              break;
            }
            default: {
              MaskSelection bad{shape, std::vector<std::uint8_t>(total, 1)};
              bad.shape[axis] += 1;
              array.write_mask(bad, scalar);
            }
          }
        } catch (const InvalidArgumentError&) {
          refused = true;
        }
        if (!refused) {
          ++mismatches;
          ADD_FAILURE() << "an invalid selection on axis " << axis << " was not refused";
        }
      }
    }
    // The whole array, read back, equals the reference.
    const NDBuffer all = Array::open(store, "p").read();
    if (!same_bytes(all, ref.data)) {
      ++mismatches;
      ADD_FAILURE() << where << ": the array differs from the reference after the writes";
    }
  }
  EXPECT_EQ(mismatches, 0u);
  std::string summary;
  for (int k = 0; k < kNumKinds; ++k) {
    summary += fmt::format("{}: {} reads, {} writes; ", kKindNames[k], ops[k][0], ops[k][1]);
  }
  std::cout << "[ property ] " << cases << " arrays, " << summary << invalid_checked << " invalid selections refused\n";
}

}  // namespace
}  // namespace zarrkit

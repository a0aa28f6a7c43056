// Array::read_var and Array::write_var: arrays of variable-length elements (string, bytes).
//
// Rather than a second engine, these run the ordinary one on element ids. Each element in
// flight is named by a uint64 id: 0 is the fill value, and (t << 32) | i is element i of
// table t, a vector of strings (the caller's data, or one decoded chunk). A proxy codec
// stands in for vlen-utf8 / vlen-bytes in the chain: decoding a chunk stores its strings
// as a new table and returns their ids; encoding looks the ids up and encodes the strings.
// The engine moves 8-byte ids exactly as it moves numbers, so every selection, broadcast,
// partial-chunk write, empty-chunk erase and transpose (v2 order "F") works unchanged, and
// the fixed-size path carries no cost for this. Sharded arrays get the proxy inside their
// shards (the inner chain of a codec with inner chunks), so shards of strings work the
// same way.
//
// Elements equal to the fill value always get id 0, so a chunk of nothing but fill values
// is all zero ids and is erased like any other (as zarr-python does).
#include <functional>
#include <limits>
#include <mutex>
#include <shared_mutex>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

constexpr unsigned kIndexBits = 32;
constexpr std::uint64_t kMaxTableElements = (std::uint64_t{1} << kIndexBits) - 1;
constexpr std::uint64_t kMaxTables = (std::uint64_t{1} << (64 - kIndexBits)) - 1;

// Decompressed variable-length chunks have no size known in advance. A stage may produce
// what its input could plausibly expand to (64 times, plus 1 MiB), or, since repetitive
// text compresses far better than numbers, up to 64 KiB per element of the chunk (at most
// 1 GiB) whatever the input. Memory grows only as output is really produced, and a small
// "bomb" for a small chunk is refused quickly.
constexpr std::uint64_t kVarBytesPerElement = std::uint64_t{64} << 10;
constexpr std::uint64_t kVarChunkCeiling = std::uint64_t{1} << 30;

SizeBound var_stage_bound(std::uint64_t input_size, std::uint64_t elements, std::uint64_t max_chunk_bytes) {
  const std::uint64_t limit = std::min(MetadataLimits{}.max_chunk_bytes, max_chunk_bytes);
  std::uint64_t from_input = try_mul(input_size, 64).value_or(limit);
  from_input = try_add(from_input, std::uint64_t{1} << 20).value_or(limit);
  const std::uint64_t from_elements = std::min(try_mul(elements, kVarBytesPerElement).value_or(limit), kVarChunkCeiling);
  return SizeBound{std::min(limit, std::max(from_input, from_elements)), false};
}

// The tables behind element ids. add() runs while other chunks are being encoded, so the
// list is guarded; a table is immutable once added.
//
// The elements a request decodes are bounded in sum, not only per chunk: a few small
// compressed chunks may each claim a gigabyte of strings. The limits are the settings in
// force on the thread that starts the request (the pool's workers never read them).
class ElementTables {
 public:
  ElementTables() : max_chunk_bytes_(current_config().max_chunk_bytes), budget_(current_config().max_request_bytes) {}

  std::uint64_t max_chunk_bytes() const { return max_chunk_bytes_; }

  // Registers `elements` and returns its table number (>= 1). `counted`: decoded elements,
  // whose memory counts against the request's budget (the caller's own data does not).
  std::uint64_t add(std::shared_ptr<const std::vector<std::string>> elements, bool counted = true) {
    const std::uint64_t bytes = counted ? held_bytes(*elements) : 0;
    std::unique_lock lock(mutex_);
    if (tables_.size() >= kMaxTables) fail_resource("too many chunks in one request of variable-length elements");
    if (bytes > budget_ || held_ > budget_ - bytes) {
      fail_resource("the variable-length elements decoded by one read would hold more than {} bytes "
                    "(max_request_bytes, ZARRKIT_MAX_REQUEST_BYTES)",
                    budget_);
    }
    held_ += bytes;
    table_bytes_.push_back(bytes);
    tables_.push_back(std::move(elements));
    return tables_.size();
  }

  // The elements `ids` name, `fill` for id 0. Records the tables used in `used`.
  std::vector<std::string> resolve(const std::uint64_t* ids, std::size_t count, const std::string& fill,
                                   std::vector<std::uint64_t>* used = nullptr) const {
    std::vector<std::string> out;
    out.reserve(count);
    std::shared_lock lock(mutex_);
    std::uint64_t last_table = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const std::uint64_t id = ids[k];
      if (id == 0) {
        out.push_back(fill);
        continue;
      }
      const std::uint64_t table = id >> kIndexBits;
      const std::uint64_t index = id & kMaxTableElements;
      if (table == 0 || table > tables_.size() || !tables_[table - 1] || index >= tables_[table - 1]->size()) {
        throw InternalError(fmt::format("variable-length element id {:#x} names no element", id));
      }
      out.push_back((*tables_[table - 1])[index]);
      if (used != nullptr && table != last_table) {
        used->push_back(table);
        last_table = table;
      }
    }
    return out;
  }

  // Drops a table no id will name again (a decoded chunk, once re-encoded).
  void release(std::uint64_t table) {
    std::unique_lock lock(mutex_);
    if (table >= 1 && table <= tables_.size() && tables_[table - 1]) {
      tables_[table - 1].reset();
      held_ -= table_bytes_[table - 1];
    }
  }

 private:
  // What a table of elements keeps in memory: their bytes and a string object each.
  static std::uint64_t held_bytes(const std::vector<std::string>& elements) {
    std::uint64_t bytes = elements.size() * sizeof(std::string);
    for (const std::string& element : elements) bytes += element.size();
    return bytes;
  }

  mutable std::shared_mutex mutex_;
  std::vector<std::shared_ptr<const std::vector<std::string>>> tables_;
  std::vector<std::uint64_t> table_bytes_;  // what each table counts against the budget
  std::uint64_t max_chunk_bytes_;
  std::uint64_t budget_;
  std::uint64_t held_ = 0;
};

std::string fill_string(const ArrayMetadata& m) { return std::string(as_chars(m.fill_value.bytes())); }

// Stands in for the array's vlen codec and its bytes->bytes codecs, turning chunks of
// strings into chunks of element ids and back.
class VarElementProxy final : public ArrayToBytesCodec {
 public:
  VarElementProxy(std::shared_ptr<const VarLengthCodec> codec, std::vector<std::shared_ptr<const BytesToBytesCodec>> bb,
                  const ArrayMetadata& m, std::shared_ptr<ElementTables> tables, std::uint64_t input_table)
      : codec_(std::move(codec)),
        bb_(std::move(bb)),
        dtype_(m.dtype),
        fill_value_(m.fill_value),
        fill_(fill_string(m)),
        tables_(std::move(tables)),
        input_table_(input_table) {}

  std::string_view name() const override { return codec_->name(); }
  nlohmann::json to_json() const override { return codec_->to_json(); }

  Buffer encode(const NDBuffer& ids, const ChunkSpec& spec) const override {
    const ChunkSpec real = real_spec(spec);
    std::vector<std::uint64_t> used;
    const auto* id_data = reinterpret_cast<const std::uint64_t*>(ids.data());
    VarNDBuffer chunk(spec.shape, dtype_, tables_->resolve(id_data, to_size(ids.num_elements()), fill_, &used));
    Buffer bytes = codec_->encode_var(chunk, real);
    for (const auto& codec : bb_) bytes = codec->encode(bytes.view(), real);
    // A decoded chunk's table serves only its own re-encoding: free it now.
    for (std::uint64_t table : used) {
      if (table != input_table_) tables_->release(table);
    }
    return bytes;
  }

  NDBuffer decode(ByteView encoded, const ChunkSpec& spec, const BufferPrototype&) const override {
    const ChunkSpec real = real_spec(spec);
    Buffer owned;
    ByteView bytes = encoded;
    for (std::size_t i = bb_.size(); i-- > 0;) {
      const SizeBound bound = var_stage_bound(bytes.size(), checked_num_elements(spec.shape), tables_->max_chunk_bytes());
      Buffer decoded = bb_[i]->decode(bytes, bound, real);
      if (decoded.size() > bound.bytes) {
        fail_data_loss("codec '{}' decoded {} bytes, more than the {} allowed", bb_[i]->name(), decoded.size(),
                       bound.bytes);
      }
      owned = std::move(decoded);
      bytes = owned.view();
    }
    auto elements = std::make_shared<std::vector<std::string>>(std::move(codec_->decode_var(bytes, real).elements()));
    NDBuffer ids = NDBuffer::allocate(spec.shape, DataType::uint_(64));
    auto* id_data = reinterpret_cast<std::uint64_t*>(ids.data());
    const std::size_t n = elements->size();
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) {
      const bool is_fill = (*elements)[i] == fill_;
      id_data[i] = is_fill ? 0 : 1;
      any = any || !is_fill;
    }
    if (any) {
      const std::uint64_t table = tables_->add(std::move(elements));
      for (std::size_t i = 0; i < n; ++i) {
        if (id_data[i] != 0) id_data[i] = (table << kIndexBits) | i;
      }
    }
    return ids;
  }

 private:
  ChunkSpec real_spec(const ChunkSpec& spec) const { return ChunkSpec{spec.shape, dtype_, fill_value_}; }

  std::shared_ptr<const VarLengthCodec> codec_;
  std::vector<std::shared_ptr<const BytesToBytesCodec>> bb_;
  DataType dtype_;
  FillValue fill_value_;
  std::string fill_;
  std::shared_ptr<ElementTables> tables_;
  std::uint64_t input_table_;  // the caller's data when writing (never released); 0 when reading
};

// `chain` with element ids in place of elements: the proxy replaces the vlen codec and the
// bytes->bytes codecs after it; a codec with inner chunks (sharding) gets the same
// treatment inside them.
CodecChain id_chain(const CodecChain& chain, const ArrayMetadata& m, const std::shared_ptr<ElementTables>& tables,
                    std::uint64_t input_table) {
  std::vector<std::shared_ptr<const Codec>> codecs(chain.array_to_array().begin(), chain.array_to_array().end());
  const auto& ab = chain.array_to_bytes();
  if (auto vlen = std::dynamic_pointer_cast<const VarLengthCodec>(ab)) {
    codecs.push_back(std::make_shared<VarElementProxy>(vlen, chain.bytes_to_bytes(), m, tables, input_table));
    return CodecChain::from_codecs(std::move(codecs));
  }
  // Inner chains nest no deeper than the codecs' own nesting, which parsing bounds.
  const CodecChain* inner = ab->inner_chain();
  if (inner == nullptr) {
    fail_unsupported("{} arrays whose array->bytes codec is '{}' are not supported (only vlen-utf8 and vlen-bytes, "
                     "possibly inside sharding_indexed)",
                     m.dtype.name(), ab->name());
  }
  codecs.push_back(ab->with_inner_chain(id_chain(*inner, m, tables, input_table)));
  codecs.insert(codecs.end(), chain.bytes_to_bytes().begin(), chain.bytes_to_bytes().end());
  return CodecChain::from_codecs(std::move(codecs));
}

void require_variable_length(const ArrayMetadata& m) {
  if (!m.dtype.is_variable_length()) {
    fail_unsupported("read_var and write_var are for string and bytes arrays; {} arrays use read and write",
                     m.dtype.name());
  }
}

// The metadata the engine runs on: the same array, with uint64 ids for elements and 0 for
// the fill value.
std::shared_ptr<const ArrayMetadata> id_metadata(const ArrayMetadata& m, std::shared_ptr<ElementTables> tables,
                                                 std::uint64_t input_table) {
  require_variable_length(m);
  const std::uint64_t chunk_elements = checked_num_elements(m.chunk_shape);
  if (chunk_elements > kMaxTableElements || chunk_elements * 8 > MetadataLimits{}.max_chunk_bytes) {
    fail_resource("chunks of [{}] hold {} variable-length elements, more than zarrkit handles in one chunk",
                  fmt::join(m.chunk_shape, ", "), chunk_elements);
  }
  auto ids = std::make_shared<ArrayMetadata>(m);
  ids->dtype = DataType::uint_(64);
  ids->fill_value = FillValue::of<std::uint64_t>(0);
  ids->codecs = std::make_shared<const CodecChain>(id_chain(*m.codecs, m, tables, input_table));
  return ids;
}

// Every kind of selection of variable-length elements runs the fixed-size engine on the
// ids array: `read` reads ids from the array with the metadata given, `write` writes them.
using IdMetadata = std::shared_ptr<const ArrayMetadata>;

VarNDBuffer read_elements(const ArrayMetadata& m, const std::function<NDBuffer(IdMetadata)>& read) {
  auto tables = std::make_shared<ElementTables>();
  const NDBuffer ids = read(id_metadata(m, tables, 0));
  const auto* id_data = reinterpret_cast<const std::uint64_t*>(ids.data());
  return VarNDBuffer(ids.shape(), m.dtype, tables->resolve(id_data, to_size(ids.num_elements()), fill_string(m)));
}

void write_elements(const ArrayMetadata& m, const std::string& path, const VarNDBuffer& data,
                    const std::function<void(IdMetadata, const NDView&)>& write) {
  require_variable_length(m);
  if (data.dtype().kind() != m.dtype.kind()) {
    fail_invalid("cannot write {} elements to array '{}' of {}", data.dtype().name(), path, m.dtype.name());
  }
  if (data.num_elements() > kMaxTableElements) {
    fail_resource("cannot write {} variable-length elements in one request (at most {})", data.num_elements(),
                  kMaxTableElements);
  }
  auto tables = std::make_shared<ElementTables>();
  // The caller's elements are table 1, borrowed (they outlive the write) rather than copied.
  const std::uint64_t input_table =
      tables->add(std::shared_ptr<const std::vector<std::string>>(&data.elements(), [](const void*) {}), false);
  IdMetadata ids_metadata = id_metadata(m, tables, input_table);
  NDBuffer ids = NDBuffer::allocate(data.shape(), DataType::uint_(64));
  auto* id_data = reinterpret_cast<std::uint64_t*>(ids.data());
  const std::string fill = fill_string(m);
  for (std::size_t i = 0; i < data.elements().size(); ++i) {
    id_data[i] = data[i] == fill ? 0 : (input_table << kIndexBits) | i;
  }
  write(std::move(ids_metadata), ids.view());
}

}  // namespace

// The lambdas below are members' code, so they may use Array's private constructor.
VarNDBuffer Array::read_var(const Selection& selection) const {
  return read_elements(*metadata_, [&](IdMetadata ids) { return Array(store_, path_, ids).read(selection); });
}

VarNDBuffer Array::read_var_coordinates(const CoordinateSelection& coordinates) const {
  return read_elements(*metadata_,
                       [&](IdMetadata ids) { return Array(store_, path_, ids).read_coordinates(coordinates); });
}

VarNDBuffer Array::read_var_mask(const MaskSelection& mask) const {
  return read_elements(*metadata_, [&](IdMetadata ids) { return Array(store_, path_, ids).read_mask(mask); });
}

void Array::write_var(const Selection& selection, const VarNDBuffer& data) {
  write_elements(*metadata_, path_, data,
                 [&](IdMetadata ids, const NDView& view) { Array(store_, path_, ids).write(selection, view); });
}

void Array::write_var_coordinates(const CoordinateSelection& coordinates, const VarNDBuffer& data) {
  write_elements(*metadata_, path_, data, [&](IdMetadata ids, const NDView& view) {
    Array(store_, path_, ids).write_coordinates(coordinates, view);
  });
}

void Array::write_var_mask(const MaskSelection& mask, const VarNDBuffer& data) {
  write_elements(*metadata_, path_, data,
                 [&](IdMetadata ids, const NDView& view) { Array(store_, path_, ids).write_mask(mask, view); });
}

}  // namespace zarrkit

// Codec chains for zarr-python's codec pipeline (zarrkit.zarr_pipeline): batches of chunks
// encoded or decoded in parallel on the engine's thread pool, with the GIL released.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "dtypes.h"
#include "zarrkit/batch_decode.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"
#include "zarrkit/thread_pool.h"
#ifdef ZARRKIT_HAVE_CUDA
#include "zarrkit/gpu.h"
#endif

namespace zarrkit::python {
namespace {

using json = nlohmann::json;

// A validated chain and the data type of the chunks it works on.
struct ChainHandle {
  std::shared_ptr<const CodecChain> chain;
  DataType dtype;
  // Set when built from whole array metadata (v2 arrays): the chunk spec it implies.
  std::optional<ChunkSpec> spec;
};

ChunkSpec make_spec(const ChainHandle& h, const Shape& shape, nb::handle fill) {
  ChunkSpec spec{shape, h.dtype, FillValue::zero(h.dtype)};
  if (!fill.is_none()) {
    PyBufferView bytes(fill, false);
    if (bytes.size() != h.dtype.size()) {
      fail_invalid("the fill value has {} bytes, {} needs {}", bytes.size(), h.dtype.name(), h.dtype.size());
    }
    spec.fill_value = FillValue::from_bytes(bytes.bytes());
  }
  h.chain->validate(spec);
  return spec;
}

// True when `buffer` lies (partly) in `input`'s memory. Chains that leave the bytes as they
// are (bytes in storage order and nothing after it) hand back their input instead of a
// copy; here the input is a Python buffer released when the call returns, so such a
// result must be copied before it outlives it.
bool shares_memory(const Buffer& buffer, ByteView input) {
  if (buffer.empty() || input.empty()) return false;
  const auto begin = reinterpret_cast<std::uintptr_t>(buffer.data());
  const auto input_begin = reinterpret_cast<std::uintptr_t>(input.data());
  return begin < input_begin + input.size() && input_begin < begin + buffer.size();
}

Buffer owned(Buffer buffer, ByteView input) {
  return shares_memory(buffer, input) ? Buffer::copy_of(buffer.view()) : std::move(buffer);
}

nb::list decode_batch(const ChainHandle& h, nb::list chunks, const Shape& shape, nb::handle fill) {
  const ChunkSpec spec = make_spec(h, shape, fill);
  const std::size_t n = nb::len(chunks);
  std::vector<std::unique_ptr<PyBufferView>> inputs(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!chunks[i].is_none()) inputs[i] = std::make_unique<PyBufferView>(chunks[i], false);
  }
  std::vector<std::optional<Buffer>> outputs(n);
  {
    nb::gil_scoped_release release;
    SettingsScope settings;
    const BufferPrototype host = BufferPrototype::host();
    shared_thread_pool().parallel_for(n, [&](std::size_t i) {
      if (!inputs[i]) return;
      NDBuffer decoded = h.chain->decode(inputs[i]->bytes(), spec, host);
      if (decoded.shape() != spec.shape) {
        fail_data_loss("the codec chain decoded a chunk of {} dimensions, expected {}", decoded.ndim(),
                       spec.shape.size());
      }
      outputs[i] = owned(std::move(decoded.buffer()), inputs[i]->bytes());
    });
  }
  nb::list result;
  for (auto& o : outputs) result.append(o ? buffer_to_numpy(std::move(*o)) : nb::none());
  return result;
}

nb::list encode_batch(const ChainHandle& h, nb::list chunks, const Shape& shape, nb::handle fill) {
  const ChunkSpec spec = make_spec(h, shape, fill);
  const std::uint64_t chunk_bytes = checked_nbytes(shape, h.dtype);
  const std::size_t n = nb::len(chunks);
  std::vector<std::unique_ptr<PyBufferView>> inputs(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (chunks[i].is_none()) continue;
    inputs[i] = std::make_unique<PyBufferView>(chunks[i], false);
    if (inputs[i]->size() != chunk_bytes) {
      fail_invalid("chunk {} of the batch has {} bytes, a chunk of this spec has {}", i, inputs[i]->size(),
                   chunk_bytes);
    }
  }
  std::vector<std::optional<Buffer>> outputs(n);
  {
    nb::gil_scoped_release release;
    SettingsScope settings;
    shared_thread_pool().parallel_for(n, [&](std::size_t i) {
      if (!inputs[i]) return;
      // The input is C-contiguous (the Python side ensures it): wrap it, no copy.
      const NDBuffer chunk(Buffer::wrap(nullptr, inputs[i]->data(), inputs[i]->size()), spec.shape, h.dtype);
      outputs[i] = owned(h.chain->encode(chunk, spec), inputs[i]->bytes());
    });
  }
  nb::list result;
  for (auto& o : outputs) result.append(o ? buffer_to_numpy(std::move(*o)) : nb::none());
  return result;
}

// Fills each request's part and output: selections[i] (a NumPy-style key; () for all) into
// outs[i] = (address, shape, byte strides), in device memory when `device` is true.
template <class Request>
void fill_requests(std::vector<Request>& requests, const ChainHandle& h, nb::list selections, nb::list outs,
                   bool device, std::string_view what) {
  const std::size_t n = requests.size();
  if (nb::len(selections) != n || nb::len(outs) != n) {
    fail_invalid("{}: {} chunks, {} selections and {} outputs", what, n, nb::len(selections), nb::len(outs));
  }
  for (std::size_t i = 0; i < n; ++i) {
    requests[i].selection = to_selection(selections[i]);
    const auto [address, out_shape, strides] =
        nb::cast<std::tuple<std::uintptr_t, Shape, std::vector<std::int64_t>>>(outs[i]);
    if (out_shape.size() != strides.size()) {
      fail_invalid("output {} has {} dimensions but {} strides", i, out_shape.size(), strides.size());
    }
    requests[i].out = NDView{reinterpret_cast<std::byte*>(address), out_shape, strides, h.dtype,
                             device ? MemoryKind::kDevice : MemoryKind::kHost};
  }
}

// Runs a batch without the GIL, under the Python thread's settings (with the GPU module
// installed where the outputs are in device memory).
template <class Run>
void run_batch(bool device, Run&& run) {
#ifdef ZARRKIT_HAVE_CUDA
  if (device) install_gpu_support();
#endif
  nb::gil_scoped_release release;
  SettingsScope settings;
  run();
}

// Decodes chunks straight into caller memory (zarrkit/batch_decode.h): chunks[i] (bytes-like
// or None: the fill value) into outs[i], as fill_requests says.
void decode_into(const ChainHandle& h, nb::list chunks, const Shape& shape, nb::handle fill, nb::list selections,
                 nb::list outs, bool device) {
  const ChunkSpec spec = make_spec(h, shape, fill);
  std::vector<ChunkDecodeRequest> requests(nb::len(chunks));
  fill_requests(requests, h, selections, outs, device, "decode_into");
  std::vector<std::unique_ptr<PyBufferView>> inputs(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (chunks[i].is_none()) continue;
    inputs[i] = std::make_unique<PyBufferView>(chunks[i], false);
    requests[i].encoded = inputs[i]->bytes();
  }
  run_batch(device, [&] { decode_chunks(*h.chain, spec, requests); });
}

// decode_into with the chunks read from `store` at `keys` (zarrkit/batch_decode.h read_chunks).
void read_into(const ChainHandle& h, const StoreHandle& store, const std::vector<std::string>& keys,
               const Shape& shape, nb::handle fill, nb::list selections, nb::list outs, bool device) {
  const ChunkSpec spec = make_spec(h, shape, fill);
  std::vector<ChunkReadRequest> requests(keys.size());
  fill_requests(requests, h, selections, outs, device, "read_into");
  for (std::size_t i = 0; i < keys.size(); ++i) requests[i].key = keys[i];
  run_batch(device, [&] { read_chunks(*store.store, *h.chain, spec, requests); });
}

}  // namespace

void bind_codecs(nb::module_& m) {
  nb::class_<ChainHandle>(m, "CodecChain", "A validated codec chain for one data type.")
      .def_prop_ro("numpy_descr", [](const ChainHandle& h) { return numpy_descr(h.dtype).dump(); })
      .def_prop_ro("codecs_json", [](const ChainHandle& h) { return h.chain->to_json().dump(); })
      .def_prop_ro(
          "chunk_shape",
          [](const ChainHandle& h) -> std::optional<Shape> {
            return h.spec ? std::optional<Shape>(h.spec->shape) : std::nullopt;
          },
          "The chunk shape of the array metadata the chain came from (None for a bare codecs list).")
      .def_prop_ro(
          "fill_bytes",
          [](const ChainHandle& h) -> nb::object {
            if (!h.spec) return nb::none();
            const ByteView b = h.spec->fill_value.bytes();
            return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
          },
          "The fill value's bytes (native byte order) of the array metadata the chain came from.")
      .def("decode", &decode_batch, nb::arg("chunks"), nb::arg("shape"), nb::arg("fill").none(),
           "Decodes a batch (bytes-like or None each) into uint8 arrays of the decoded chunks "
           "(C order, native byte order), None where the input was None.")
      .def("decode_into", &decode_into, nb::arg("chunks"), nb::arg("shape"), nb::arg("fill").none(),
           nb::arg("selections"), nb::arg("outs"), nb::arg("device"),
           "Decodes a batch (bytes-like or None each; None is the fill value) straight into caller "
           "memory: the part selections[i] of chunk i into outs[i] = (address, shape, byte strides), "
           "device memory when `device`, else host memory.")
      .def("read_into", &read_into, nb::arg("store"), nb::arg("keys"), nb::arg("shape"), nb::arg("fill").none(),
           nb::arg("selections"), nb::arg("outs"), nb::arg("device"),
           "decode_into with chunk i read from `store` at keys[i] (absent: the fill value), the reads "
           "landing in the staging memory of the device batches.")
      .def("encode", &encode_batch, nb::arg("chunks"), nb::arg("shape"), nb::arg("fill").none(),
           "Encodes a batch of C-contiguous chunk arrays (or None) into uint8 arrays.");

  m.def("chain_from_v3",
        [](const std::string& codecs_json, const std::string& data_type_json) {
          const json codecs = parse_json_argument(codecs_json, "codecs");
          const DataType dtype = parse_dtype_v3(parse_json_argument(data_type_json, "data_type"));
          auto chain = std::make_shared<const CodecChain>(CodecChain::from_v3_json(codecs, dtype, CodecRegistry::builtin()));
          return ChainHandle{std::move(chain), dtype, std::nullopt};
        },
        nb::arg("codecs_json"), nb::arg("data_type_json"),
        "The chain of a v3 \"codecs\" list; UnsupportedError when a codec is not built in.");
  m.def("chain_from_v2_metadata",
        [](const std::string& zarray_json) {
          const ArrayMetadata meta = parse_array_metadata_v2(parse_json_argument(zarray_json, ".zarray"), std::nullopt,
                                                             CodecRegistry::builtin());
          return ChainHandle{meta.codecs, meta.dtype, meta.chunk_spec()};
        },
        nb::arg("zarray_json"), "The chain a v2 .zarray document implies (compressor, filters, order, byte order).");
  m.def("chain_from_array_metadata",
        [](const std::string& metadata_json) {
          const json document = parse_json_argument(metadata_json, "array metadata");
          const bool v3 = document.is_object() && document.value("zarr_format", json()) == json(3);
          const ArrayMetadata meta =
              v3 ? parse_array_metadata_v3(document, CodecRegistry::builtin())
                 : parse_array_metadata_v2(document, std::nullopt, CodecRegistry::builtin());
          return ChainHandle{meta.codecs, meta.dtype, meta.chunk_spec()};
        },
        nb::arg("metadata_json"),
        "The chain and chunk spec of an array's metadata document (v3 zarr.json or v2 .zarray).");
  m.def("codec_v2_form",
        [](const std::string& entry_json, const std::string& dtype_json) -> std::string {
          const json entry = parse_json_argument(entry_json, "codec");
          CodecContext context{dtype_from_python(parse_json_argument(dtype_json, "dtype")), 3};
          auto codec = CodecRegistry::builtin().make_v3(entry, context);
          if (!codec) fail_unsupported("codec {} is not known to zarrkit", entry.dump());
          auto v2 = codec->to_v2_json();
          if (!v2) fail_invalid("codec {} has no Zarr v2 (numcodecs) form", codec->name());
          return v2->dump();
        },
        nb::arg("entry_json"), nb::arg("dtype_json"), "The numcodecs form of a v3 codec entry.");
}

}  // namespace zarrkit::python

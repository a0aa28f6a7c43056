// A store of the engine whose values live in a zarr-python store (zarr.abc.store.Store:
// fsspec, obstore, Icechunk, zarr-python's memory store, ...), reached through
// zarrkit._zarr_store.ZarrStoreBridge. The engine calls it from its worker threads with
// the GIL released; each call takes the GIL only to call the bridge, which runs the store's
// coroutines on zarr-python's event loop and waits for them without the GIL. The store
// says it keeps many requests in flight (batched_gets), so readers hand it whole batches
// of keys (get_many, get_each): one bridge call, one asyncio.gather of all of them; get_each
// hands the values over as they arrive. The values stay in the Python objects the store
// returned, viewed without a copy until the engine is done with them. Python exceptions
// become the engine's typed errors, naming the store, the operation and the key.
//
// The store holds the bridge by a weak reference; zarrkit.storage.ZarrPythonStore holds it
// strongly. A strong reference from C++ would be invisible to Python's garbage collector, so a
// cycle through it (an array held by a module whose store subclass refers back to that
// module) could never be collected.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "bindings.h"
#include "core/checked_math.h"
#include "stores/host_value.h"
#include "zarrkit/error.h"

namespace zarrkit::python {
namespace {

// The kind of the Python exception `error` as one of the engine's error codes.
ErrorCode error_code_of(nb::handle error) {
  const auto is = [&](nb::handle type) { return PyErr_GivenExceptionMatches(error.ptr(), type.ptr()) != 0; };
  // An error zarrkit raised itself (a nested zarrkit store, a check in the bridge) keeps its kind.
  static constexpr std::pair<const char*, ErrorCode> zarrkit_errors[] = {
      {"InvalidArgumentError", ErrorCode::kInvalidArgument}, {"DataLossError", ErrorCode::kDataLoss},
      {"NotFoundError", ErrorCode::kNotFound},               {"UnsupportedError", ErrorCode::kUnsupported},
      {"ResourceExhaustedError", ErrorCode::kResourceExhausted}, {"IoError", ErrorCode::kIo},
      {"InternalError", ErrorCode::kInternal}};
  const nb::object errors = nb::module_::import_("zarrkit.errors");
  for (const auto& [name, code] : zarrkit_errors) {
    if (is(errors.attr(name))) return code;
  }
  if (is(PyExc_NotImplementedError)) return ErrorCode::kUnsupported;
  if (is(PyExc_MemoryError)) return ErrorCode::kResourceExhausted;
  // zarr-python's stores refuse writes when read-only with a ValueError; bad keys too.
  if (is(PyExc_ValueError) || is(PyExc_TypeError)) return ErrorCode::kInvalidArgument;
  // OSError (permissions, network, timeouts) and anything else the store raised.
  return ErrorCode::kIo;
}

// "TypeName: message" of the Python exception `error`.
std::string describe_exception(nb::handle error) {
  std::string type = nb::borrow<nb::str>(error.type().attr("__name__")).c_str();
  const nb::str text = nb::str(error);
  std::string message = text.c_str();
  return message.empty() ? type : type + ": " + message;
}

// The Python buffers of one batch of values, which the engine's Buffers view without a copy.
// The batch is released (with the GIL, once) when the last of its Buffers goes.
class HeldBatch {
 public:
  explicit HeldBatch(std::size_t count) { views_.reserve(count); }
  HeldBatch(const HeldBatch&) = delete;
  HeldBatch& operator=(const HeldBatch&) = delete;
  ~HeldBatch() {
    if (views_.empty() || !nb::is_alive()) return;  // after the interpreter ended there is nothing to release
    nb::gil_scoped_acquire gil;
    for (Py_buffer& view : views_) PyBuffer_Release(&view);
  }

  // A contiguous view of `object`, kept while the Buffer (or a copy or slice of it) lives.
  // Called with the GIL held.
  static Buffer view(const std::shared_ptr<HeldBatch>& batch, nb::handle object) {
    Py_buffer view{};
    if (PyObject_GetBuffer(object.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    batch->views_.push_back(view);  // reserved: no reallocation moves a view already taken
    // The engine never writes into a fetched value (Store::get), so a read-only buffer is fine.
    return Buffer::wrap(batch, static_cast<std::byte*>(view.buf), static_cast<std::size_t>(view.len));
  }

 private:
  std::vector<Py_buffer> views_;
};

// The values of a Python sequence (None or bytes-like each) as host Buffers viewing them.
// Called with the GIL held.
std::vector<std::optional<Buffer>> take_values(nb::handle values, std::size_t expected, std::string_view what) {
  const std::size_t count = nb::len(values);
  if (count != expected) fail_io("{}: the store returned {} values for {} requests", what, count, expected);
  auto batch = std::make_shared<HeldBatch>(count);
  std::vector<std::optional<Buffer>> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    nb::object value = values[i];
    if (!value.is_none()) out[i] = HeldBatch::view(batch, value);
  }
  return out;
}

std::tuple<int, std::uint64_t, std::uint64_t> range_tuple(const ByteRange& range) {
  switch (range.kind) {
    case ByteRange::Kind::kRange: return {1, range.start, std::max(range.start, range.end)};
    case ByteRange::Kind::kFromOffset: return {2, range.start, 0};
    case ByteRange::Kind::kSuffix: return {3, range.suffix, 0};
  }
  return {0, 0, 0};
}

std::string quote_key(std::string_view key) { return fmt::format("\"{}\"", key); }

bool is_valid_key(std::string_view key) {
  try {
    validate_key(key);
    return true;
  } catch (const InvalidArgumentError&) {
    return false;
  }
}

class PythonStore final : public Store {
 public:
  // Called with the GIL held.
  explicit PythonStore(nb::handle bridge)
      : bridge_(bridge),
        description_(nb::cast<std::string>(bridge.attr("description"))),
        capabilities_{.writable = nb::cast<bool>(bridge.attr("writable")),
                      .listable = nb::cast<bool>(bridge.attr("listable")),
                      .partial_reads = true,
                      .batched_gets = true,
                      .requests_in_flight = std::max<std::size_t>(current_config().remote.concurrency, 1)} {}

  ~PythonStore() override {
    // The last reference may go on a worker thread, or after the interpreter has ended.
    if (!nb::is_alive()) {
      bridge_.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    bridge_.reset();
  }

  PythonStore(const PythonStore&) = delete;
  PythonStore& operator=(const PythonStore&) = delete;

  // The bridge, or None once it is gone. Called with the GIL held.
  nb::object bridge() const { return bridge_(); }

  StoreCapabilities capabilities() const override { return capabilities_; }
  std::string describe() const override { return description_; }

  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    // The engine reads metadata documents as a range from 0 that ends past any value it
    // accepts (the range bounds what it will hold). zarr-python's stores do not all clamp a
    // range to the value's end (Icechunk fails on one), so such a read is a whole read here,
    // cut to the range.
    if (!range || (range->kind == ByteRange::Kind::kRange && range->start == 0)) {
      const std::string keys[] = {std::string(key)};
      std::optional<Buffer> value = std::move(get_many(keys, prototype)[0]);
      if (value && range && value->size() > range->end) value->shrink(to_size(range->end));
      return value;
    }
    std::optional<std::vector<Buffer>> parts = get_ranges(key, std::span(&*range, 1), prototype);
    if (!parts) return std::nullopt;
    return std::move((*parts)[0]);
  }

  std::vector<std::optional<Buffer>> get_many(std::span<const std::string> keys,
                                              const BufferPrototype& prototype) override {
    for (const std::string& key : keys) validate_key(key);
    if (keys.empty()) return {};
    std::vector<std::optional<Buffer>> values = call("read", batch_subject(keys), [&] {
      nb::list names;
      for (const std::string& key : keys) names.append(nb::str(key.data(), key.size()));
      nb::object got = live().attr("get_many")(names);
      return take_values(got, keys.size(), description_);
    });
    for (std::optional<Buffer>& value : values) {
      if (value) value = host_value_for(std::move(*value), prototype, description_);
    }
    return values;
  }

  // The values are handed over as their gets complete, so that the engine decodes the first
  // while the others are still on the way; `on_value` runs without the GIL.
  void get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                const ValueHandler& on_value) override {
    for (const std::string& key : keys) validate_key(key);
    if (keys.empty()) return;
    const std::string subject = batch_subject(keys);
    nb::object arrivals = call("read", subject, [&] {
      nb::list names;
      for (const std::string& key : keys) names.append(nb::str(key.data(), key.size()));
      return live().attr("fetch_each")(names);
    });
    // However this ends, the gets still on the way are cancelled, and the object let go of, with the GIL.
    struct Release {
      nb::object& arrivals;
      ~Release() {
        nb::gil_scoped_acquire gil;
        try {
          arrivals.attr("cancel")();
        } catch (nb::python_error& error) {
          error.discard_as_unraisable("cancelling the gets of a zarr-python store");
        }
        arrivals.reset();
      }
    } release{arrivals};
    std::size_t handed = 0;
    while (handed < keys.size()) {
      std::vector<std::pair<std::size_t, std::optional<Buffer>>> arrived = call("read", subject, [&] {
        const nb::object items = arrivals.attr("next")();
        const std::size_t count = nb::len(items);
        std::vector<std::pair<std::size_t, std::optional<Buffer>>> out;
        out.reserve(count);
        auto batch = std::make_shared<HeldBatch>(count);
        for (std::size_t k = 0; k < count; ++k) {
          const nb::object item = items[k];
          const auto index = nb::cast<std::size_t>(item[0]);
          if (index >= keys.size()) fail_io("{}: value {} of a batch of {} keys", description_, index, keys.size());
          const nb::object value = item[1];
          if (PyExceptionInstance_Check(value.ptr())) fail_with(value, "read", quote_key(keys[index]));
          out.emplace_back(index, value.is_none() ? std::nullopt : std::optional(HeldBatch::view(batch, value)));
        }
        return out;
      });
      if (arrived.empty()) fail_io("{}: the store handed over {} of {} values", description_, handed, keys.size());
      for (auto& [index, value] : arrived) {
        ++handed;
        on_value(index, value ? std::optional(host_value_for(std::move(*value), prototype, description_))
                              : std::nullopt);
      }
    }
  }

  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype) override {
    validate_key(key);
    std::optional<std::vector<std::optional<Buffer>>> parts = call("read", quote_key(key), [&] {
      nb::list requests;
      for (const ByteRange& range : ranges) requests.append(nb::cast(range_tuple(range)));
      nb::object got = live().attr("get_ranges")(nb::str(key.data(), key.size()), requests);
      if (got.is_none()) return std::optional<std::vector<std::optional<Buffer>>>();
      return std::optional(take_values(got, ranges.size(), description_));
    });
    if (!parts) return std::nullopt;
    std::vector<Buffer> out;
    out.reserve(parts->size());
    for (std::optional<Buffer>& part : *parts) {
      if (!part) fail_io("{}: a byte range of \"{}\" came back empty-handed", description_, key);
      out.push_back(host_value_for(std::move(*part), prototype, description_, key));
    }
    return out;
  }

  bool exists(std::string_view key) override {
    validate_key(key);
    return call("look up", quote_key(key), [&] { return nb::cast<bool>(live().attr("exists")(nb::str(key.data(), key.size()))); });
  }

  std::optional<std::uint64_t> size(std::string_view key) override {
    validate_key(key);
    return call("look up the size of", quote_key(key), [&] {
      nb::object got = live().attr("size")(nb::str(key.data(), key.size()));
      return got.is_none() ? std::nullopt : std::optional(nb::cast<std::uint64_t>(got));
    });
  }

  void set(std::string_view key, ByteView value) override {
    validate_key(key);
    require_writable("write", key);
    call("write", quote_key(key), [&] {
      // A copy Python owns: stores may keep the object they are given (zarr-python's memory store).
      nb::bytes bytes(value.data(), value.size());
      live().attr("set")(nb::str(key.data(), key.size()), bytes);
    });
  }

  void erase(std::string_view key) override {
    validate_key(key);
    require_writable("erase", key);
    call("erase", quote_key(key), [&] { live().attr("delete")(nb::str(key.data(), key.size())); });
  }

  void erase_prefix(std::string_view prefix) override {
    const std::string_view dir = normalize_prefix(prefix);
    require_writable("erase everything under", dir);
    call("erase everything under", quote_key(dir), [&] { live().attr("delete_dir")(nb::str(dir.data(), dir.size())); });
  }

  std::vector<std::string> list(std::string_view prefix) override {
    const std::string_view dir = normalize_prefix(prefix);
    std::vector<std::string> keys = call("list", quote_key(dir), [&] {
      return nb::cast<std::vector<std::string>>(live().attr("list")(nb::str(dir.data(), dir.size())));
    });
    // Names that are no valid keys (hidden files of a file system, "a//b") are not the store's keys.
    std::erase_if(keys, [&](const std::string& key) { return !is_valid_key(key) || !key_is_under(key, dir); });
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
  }

 private:
  void require_writable(std::string_view operation, std::string_view key) const {
    if (!capabilities_.writable) {
      fail_invalid("{}: cannot {} \"{}\": the store is read-only", description_, operation, key);
    }
  }

  // Runs `body` with the GIL held; a Python exception becomes the matching typed error.
  // The bridge, which the Python side keeps while it uses the store. Called with the GIL held.
  nb::object live() const {
    nb::object bridge = bridge_();
    if (bridge.is_none()) {
      fail_invalid("{}: the zarr-python store is no longer held (its zarrkit.storage.ZarrPythonStore was released)",
                   description_);
    }
    return bridge;
  }

  // Throws the typed error for the Python exception `error`. Called with the GIL held.
  [[noreturn]] void fail_with(nb::handle error, std::string_view operation, std::string_view subject) const {
    throw_error(error_code_of(error),
                fmt::format("{}: cannot {} {}: {}", description_, operation, subject, describe_exception(error)));
  }

  // "\"a/c/0\"", or "\"a/c/0\" and 63 other keys".
  static std::string batch_subject(std::span<const std::string> keys) {
    if (keys.size() == 1) return quote_key(keys.front());
    return fmt::format("{} and {} other keys", quote_key(keys.front()), keys.size() - 1);
  }

  // `subject` names the keys in messages ("\"a/c/0\"").
  template <typename Body>
  auto call(std::string_view operation, std::string_view subject, Body&& body) -> decltype(body()) {
    nb::gil_scoped_acquire gil;
    try {
      return body();
    } catch (nb::python_error& error) {
      fail_with(error.value(), operation, subject);
    } catch (const nb::cast_error&) {
      fail_io("{}: cannot {} {}: the store bridge returned a value of the wrong type", description_, operation,
              subject);
    }
  }

  nb::weakref bridge_;
  const std::string description_;
  const StoreCapabilities capabilities_;
};

}  // namespace

void bind_python_store(nb::module_& m) {
  m.def("python_store",
        [](nb::handle bridge) {
          SettingsScope settings;  // requests in flight: the remote.concurrency setting in force
          return StoreHandle{std::make_shared<PythonStore>(bridge)};
        },
        nb::arg("bridge"),
        "A store whose values live in a zarr-python store, reached through a zarrkit._zarr_store.ZarrStoreBridge "
        "(held weakly: the caller keeps the bridge for as long as the store is used).");
  m.def("python_store_bridge",
        [](const StoreHandle& s) -> nb::object {
          auto* store = dynamic_cast<const PythonStore*>(s.store.get());
          return store == nullptr ? nb::none() : store->bridge();
        },
        nb::arg("store"), "The bridge of a store made by python_store (None once it is gone), else None.");
}

}  // namespace zarrkit::python

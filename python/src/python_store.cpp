// A store of the engine whose values live in a zarr-python store (zarr.abc.store.Store:
// fsspec, obstore, Icechunk, zarr-python's memory store, ...), reached through
// zarrkit._zarr_store.ZarrStoreBridge. The engine calls it from its worker threads with
// the GIL released; each call takes the GIL only to call the bridge, which runs the store's
// coroutines on zarr-python's event loop and waits for them without the GIL. The store
// says it keeps many requests in flight (batched_gets), so readers hand it whole batches
// of keys (get_many, get_each): one bridge call, one asyncio.gather of all of them. Values
// are copied out of the Python objects with the GIL released. Python exceptions become the
// engine's typed errors, naming the store, the operation and the key.
//
// The store holds the bridge by a weak reference; zarrkit.storage.ZarrPythonStore holds it
// strongly. A strong reference from C++ would be invisible to Python's garbage collector, so a
// cycle through it (an array held by a module whose store subclass refers back to that
// module) could never be collected.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "bindings.h"
#include "core/checked_math.h"
#include "stores/host_value.h"
#include "zarrkit/error.h"

namespace zarrkit::python {
namespace {

// The kind of `error` as one of the engine's error codes.
ErrorCode error_code_of(const nb::python_error& error) {
  // An error zarrkit raised itself (a nested zarrkit store, a check in the bridge) keeps its kind.
  static constexpr std::pair<const char*, ErrorCode> zarrkit_errors[] = {
      {"InvalidArgumentError", ErrorCode::kInvalidArgument}, {"DataLossError", ErrorCode::kDataLoss},
      {"NotFoundError", ErrorCode::kNotFound},               {"UnsupportedError", ErrorCode::kUnsupported},
      {"ResourceExhaustedError", ErrorCode::kResourceExhausted}, {"IoError", ErrorCode::kIo},
      {"InternalError", ErrorCode::kInternal}};
  const nb::object errors = nb::module_::import_("zarrkit.errors");
  for (const auto& [name, code] : zarrkit_errors) {
    if (error.matches(errors.attr(name))) return code;
  }
  if (error.matches(PyExc_NotImplementedError)) return ErrorCode::kUnsupported;
  if (error.matches(PyExc_MemoryError)) return ErrorCode::kResourceExhausted;
  // zarr-python's stores refuse writes when read-only with a ValueError; bad keys too.
  if (error.matches(PyExc_ValueError) || error.matches(PyExc_TypeError)) return ErrorCode::kInvalidArgument;
  // OSError (permissions, network, timeouts) and anything else the store raised.
  return ErrorCode::kIo;
}

// "TypeName: message" of a Python exception.
std::string describe_exception(const nb::python_error& error) {
  std::string type = nb::borrow<nb::str>(error.type().attr("__name__")).c_str();
  const nb::str text = nb::str(error.value());
  std::string message = text.c_str();
  return message.empty() ? type : type + ": " + message;
}

// Python buffers taken from the bridge's values, released (with the GIL held) on destruction.
class HeldBuffers {
 public:
  HeldBuffers() = default;
  HeldBuffers(const HeldBuffers&) = delete;
  HeldBuffers& operator=(const HeldBuffers&) = delete;
  ~HeldBuffers() {
    for (Py_buffer& view : views_) PyBuffer_Release(&view);
  }

  // Takes a contiguous view of `object`; its index among the held views.
  std::size_t hold(nb::handle object) {
    Py_buffer view{};
    if (PyObject_GetBuffer(object.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    views_.push_back(view);
    return views_.size() - 1;
  }

  // A host copy of view `i`. Needs no GIL: the views keep their memory alive.
  Buffer copy(std::size_t i) const {
    const Py_buffer& view = views_[i];
    Buffer out = Buffer::allocate(static_cast<std::size_t>(view.len));
    if (view.len > 0) std::memcpy(out.data(), view.buf, static_cast<std::size_t>(view.len));
    return out;
  }

 private:
  std::vector<Py_buffer> views_;
};

// Copies the values of a Python sequence (None or bytes-like each) into host buffers:
// the views are taken with the GIL held, the bytes copied without it. Called with the GIL.
std::vector<std::optional<Buffer>> copy_values(nb::handle values, std::size_t expected, std::string_view what) {
  const std::size_t count = nb::len(values);
  if (count != expected) fail_io("{}: the store returned {} values for {} requests", what, count, expected);
  HeldBuffers held;
  std::vector<std::optional<std::size_t>> index(count);
  for (std::size_t i = 0; i < count; ++i) {
    nb::object value = values[i];
    if (!value.is_none()) index[i] = held.hold(value);
  }
  std::vector<std::optional<Buffer>> out(count);
  {
    nb::gil_scoped_release release;
    for (std::size_t i = 0; i < count; ++i) {
      if (index[i]) out[i] = held.copy(*index[i]);
    }
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
    const std::string subject = keys.size() == 1 ? quote_key(keys.front())
                                                 : fmt::format("{} and {} other keys", quote_key(keys.front()), keys.size() - 1);
    std::vector<std::optional<Buffer>> values = call("read", subject, [&] {
      nb::list names;
      for (const std::string& key : keys) names.append(nb::str(key.data(), key.size()));
      nb::object got = live().attr("get_many")(names);
      return copy_values(got, keys.size(), description_);
    });
    for (std::optional<Buffer>& value : values) {
      if (value) value = host_value_for(std::move(*value), prototype, description_);
    }
    return values;
  }

  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype) override {
    validate_key(key);
    std::optional<std::vector<std::optional<Buffer>>> parts = call("read", quote_key(key), [&] {
      nb::list requests;
      for (const ByteRange& range : ranges) requests.append(nb::cast(range_tuple(range)));
      nb::object got = live().attr("get_ranges")(nb::str(key.data(), key.size()), requests);
      if (got.is_none()) return std::optional<std::vector<std::optional<Buffer>>>();
      return std::optional(copy_values(got, ranges.size(), description_));
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

  // `subject` names the keys in messages ("\"a/c/0\"").
  template <typename Body>
  auto call(std::string_view operation, std::string_view subject, Body&& body) -> decltype(body()) {
    nb::gil_scoped_acquire gil;
    try {
      return body();
    } catch (nb::python_error& error) {
      throw_error(error_code_of(error),
                  fmt::format("{}: cannot {} {}: {}", description_, operation, subject, describe_exception(error)));
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

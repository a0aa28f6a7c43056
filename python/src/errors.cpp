// C++ errors -> Python exceptions. Each ErrorCode maps to a class of zarrkit.errors (defined
// in Python, so that each can also derive from the matching builtin: ValueError,
// FileNotFoundError, NotImplementedError, MemoryError, OSError); the message is unchanged.
#include <nanobind/stl/string.h>

#include "bindings.h"

#include "zarrkit/error.h"

namespace zarrkit::python {
namespace {

const char* exception_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "InvalidArgumentError";
    case ErrorCode::kDataLoss: return "DataLossError";
    case ErrorCode::kNotFound: return "NotFoundError";
    case ErrorCode::kUnsupported: return "UnsupportedError";
    case ErrorCode::kResourceExhausted: return "ResourceExhaustedError";
    case ErrorCode::kIo: return "IoError";
    case ErrorCode::kInternal: return "InternalError";
  }
  return "ZarrkitError";
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    // Imported on first use: zarrkit.errors imports nothing from this module.
    nb::object errors = nb::module_::import_("zarrkit.errors");
    nb::object type = errors.attr(exception_name(e.code()));
    PyErr_SetString(type.ptr(), e.what());
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  nb::register_exception_translator(&translate);
  m.def("_raise_for_test", [](const std::string& code, const std::string& message) {
        static const std::pair<const char*, ErrorCode> codes[] = {
            {"invalid_argument", ErrorCode::kInvalidArgument}, {"data_loss", ErrorCode::kDataLoss},
            {"not_found", ErrorCode::kNotFound},               {"unsupported", ErrorCode::kUnsupported},
            {"resource_exhausted", ErrorCode::kResourceExhausted}, {"io", ErrorCode::kIo},
            {"internal", ErrorCode::kInternal}};
        for (const auto& [name, value] : codes) {
          if (code == name) throw_error(value, message);
        }
        throw std::invalid_argument("unknown error code " + code);
      },
      "Raises the C++ error of `code` with `message` (tests the translation).");
}

}  // namespace zarrkit::python

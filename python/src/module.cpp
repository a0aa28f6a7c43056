// zarrkit._zarrkit: the C++ engine for the zarrkit Python package.
#include "bindings.h"

NB_MODULE(_zarrkit, m) {
  m.doc() = "zarrkit's C++ engine (private; use the zarrkit package).";
  zarrkit::python::bind_errors(m);
  zarrkit::python::bind_config(m);
  zarrkit::python::bind_stores(m);
  zarrkit::python::bind_python_store(m);
  zarrkit::python::bind_arrays(m);
  zarrkit::python::bind_groups(m);
  zarrkit::python::bind_codecs(m);
}

// Sets the collector's debug flags for a scope and restores the previous ones, whatever happens.
#pragma once

#include "lib/python/compat.h"

#include <pybind11/pybind11.h>

namespace leakgate::python {

class GcDebugGuard {
  public:
    static constexpr int kSaveAll = 32; // gc.DEBUG_SAVEALL

    explicit GcDebugGuard(int flags) : gc_(pybind11::module_::import("gc")) {
        previous_ = gc_.attr("get_debug")();
        gc_.attr("set_debug")(flags);
    }
    ~GcDebugGuard() {
        // This may run while an exception propagates: set it aside, drop anything set_debug raises,
        // and put it back when `saved` goes out of scope (after the PyErr_Clear).
        SavedException saved;
        PyObject* restored = PyObject_CallMethod(gc_.ptr(), "set_debug", "O", previous_.ptr());
        Py_XDECREF(restored);
        PyErr_Clear();
    }
    GcDebugGuard(const GcDebugGuard&) = delete;
    GcDebugGuard& operator=(const GcDebugGuard&) = delete;
    GcDebugGuard(GcDebugGuard&&) = delete;
    GcDebugGuard& operator=(GcDebugGuard&&) = delete;

  private:
    pybind11::module_ gc_;
    pybind11::object previous_;
};

} // namespace leakgate::python

// The sentinels module: weakref-able objects owning host or device memory whose lifetimes
// leakgate measures, and the figures a custom probe reads. One definition, two modules:
//   `_leakgate`, embedded in every worker (registered before the interpreter starts), and
//   `leakgate_dsl._native`, the Python package's extension module (package/native.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace leakgate::probes {

// Adds the sentinel types and functions to `module` (its name names CudaUnavailable).
void defineSentinelModule(pybind11::module_& module);

// Keeps the embedded `_leakgate` module's registration (probes/embedded_module.cpp) in the link
// (the library is static). Call before the interpreter is created.
void registerLeakgateModule();

} // namespace leakgate::probes

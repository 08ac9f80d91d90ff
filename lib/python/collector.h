// The cyclic collector as leakgate uses it: its functions taken once, before any code under test
// runs, and called from there ever after. Code under test can rebind `gc.collect`, `gc.set_debug`
// or `gc.get_objects`, or put another module in `sys.modules['gc']`; none of that reaches
// leakgate's reads, and tampering() names it so that the measurement becomes `error`
// (docs/definitions.md, "Valid measurements"). Call everything with the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace leakgate::python::collector {

// Takes the gc module and its functions (idempotent: the first call's are kept for the life of
// the process). The worker calls it before it loads anything of the target's.
void capture();

// gc.collect(generation), through the function taken at capture().
void collect(int generation);
// CPython's own count of collections, every generation (gc.get_stats()).
long long collections();
// Whether the collector runs on its own: the C API (PyGC_IsEnabled), so that a replaced
// gc.isenabled or a PyGC_Enable() through ctypes is seen.
bool enabled();
void disable();
int debugFlags();
void setDebugFlags(int flags);
pybind11::list objects(); // gc.get_objects()
// gc.get_objects(generation): that generation's objects in the collector's list order. Under
// gc.disable(), with no collection since, the youngest generation is every object tracked since
// the last collection, oldest first (probes/import_marks.cpp relies on it).
pybind11::list objects(int generation);
pybind11::object threshold(); // gc.get_threshold()
long long frozen();           // gc.get_freeze_count()
// The list the collector fills (the interpreter's own, whatever `gc.garbage` is rebound to) and
// the list of callbacks it calls (likewise).
pybind11::list garbage();
pybind11::list callbacks();
// The gc module taken at capture().
pybind11::module_ module();

// Records that leakgate itself put `replacement` in the gc module under `name` (its watched
// gc.enable), so that tampering() compares with that.
void ownReplacement(const char* name, pybind11::handle replacement);

// What the code under test replaced since capture(): "" when nothing, else a sentence naming it
// ("gc.set_debug was replaced by <function <lambda> at 0x...>").
std::string tampering();

} // namespace leakgate::python::collector

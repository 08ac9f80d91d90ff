// Helpers for tests that build objects with real Python code.
#pragma once

#include <pybind11/embed.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace leakgate::testing {

// Runs `code` in a fresh namespace and returns that namespace. The code runs with gc disabled
// and garbage from before collected, so a test sees only what its code made.
inline pybind11::dict runPython(const std::string& code) {
    namespace py = pybind11;
    py::module_ gc = py::module_::import("gc");
    gc.attr("disable")();
    gc.attr("collect")();
    py::dict scope;
    scope["__builtins__"] = py::module_::import("builtins");
    py::exec(code, scope);
    return scope;
}

// Collects with DEBUG_SAVEALL and hands back gc.garbage (the caller clears it).
inline pybind11::list collectGarbage() {
    namespace py = pybind11;
    py::module_ gc = py::module_::import("gc");
    gc.attr("set_debug")(gc.attr("DEBUG_SAVEALL"));
    gc.attr("collect")();
    gc.attr("set_debug")(0);
    return gc.attr("garbage");
}

// The objects of a list (gc.garbage), as the scanner takes them: borrowed, the list keeps them.
inline std::vector<PyObject*> pointersOf(const pybind11::list& list) {
    std::vector<PyObject*> objects;
    objects.reserve(list.size());
    for (pybind11::handle object : list)
        objects.push_back(object.ptr());
    return objects;
}

inline void clearGarbage() {
    namespace py = pybind11;
    py::list(py::module_::import("gc").attr("garbage")).attr("clear")();
    py::module_::import("gc").attr("collect")();
}

} // namespace leakgate::testing

#include "lib/python/collector.h"

#include "lib/python/compat.h"
#include "lib/python/text.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace leakgate::python::collector {
namespace {

namespace py = pybind11;

// The functions of the gc module that leakgate calls or whose answer it trusts. Built-in
// functions cannot be changed in place, so a reference to each, taken before the code under test
// runs, is what it was then. Strong references for the life of the process.
constexpr std::array<const char*, 16> kNames = {
    "collect",   "get_stats", "get_debug",        "set_debug",    "get_objects", "get_threshold",
    "get_count", "isenabled", "get_freeze_count", "disable",      "enable",      "set_threshold",
    "freeze",    "unfreeze",  "get_referrers",    "get_referents"};

struct Taken {
    PyObject* module = nullptr;
    std::array<PyObject*, kNames.size()> functions{}; // what each name is meant to hold now
    std::array<PyObject*, kNames.size()> originals{}; // what it held at capture()
    PyObject* garbage = nullptr;
    PyObject* callbacks = nullptr;
};
Taken g_taken;

size_t indexOf(std::string_view name) {
    for (size_t i = 0; i < kNames.size(); ++i)
        if (name == kNames[i]) return i;
    throw std::logic_error(fmt::format("gc.{} is not one of the functions leakgate takes", name));
}

py::object original(std::string_view name) {
    capture();
    return py::reinterpret_borrow<py::object>(g_taken.originals[indexOf(name)]);
}

} // namespace

void capture() {
    if (g_taken.module) return;
    OwnedRef module = own(PyImport_ImportModule("gc"));
    if (!module) throw py::error_already_set();
    for (size_t i = 0; i < kNames.size(); ++i) {
        PyObject* function = PyObject_GetAttrString(module.get(), kNames[i]); // New reference
        if (!function) throw py::error_already_set();
        g_taken.originals[i] = function;
        Py_INCREF(function);
        g_taken.functions[i] = function;
    }
    g_taken.garbage = PyObject_GetAttrString(module.get(), "garbage");
    g_taken.callbacks = PyObject_GetAttrString(module.get(), "callbacks");
    if (!g_taken.garbage || !g_taken.callbacks) throw py::error_already_set();
    g_taken.module = module.release();
}

void collect(int generation) {
    original("collect")(generation);
}

long long collections() {
    long long total = 0;
    for (py::handle generation : original("get_stats")())
        total += generation["collections"].cast<long long>();
    return total;
}

bool enabled() {
    return PyGC_IsEnabled() != 0;
}

void disable() {
    PyGC_Disable();
}

int debugFlags() {
    return original("get_debug")().cast<int>();
}

void setDebugFlags(int flags) {
    original("set_debug")(flags);
}

py::list objects() {
    return original("get_objects")();
}

py::list objects(int generation) {
    return original("get_objects")(generation);
}

py::object threshold() {
    return original("get_threshold")();
}

long long frozen() {
    return original("get_freeze_count")().cast<long long>();
}

py::list garbage() {
    capture();
    return py::reinterpret_borrow<py::list>(g_taken.garbage);
}

py::list callbacks() {
    capture();
    return py::reinterpret_borrow<py::list>(g_taken.callbacks);
}

py::module_ module() {
    capture();
    return py::reinterpret_borrow<py::module_>(g_taken.module);
}

void ownReplacement(const char* name, py::handle replacement) {
    capture();
    const size_t i = indexOf(name);
    Py_INCREF(replacement.ptr());
    Py_XDECREF(g_taken.functions[i]);
    g_taken.functions[i] = replacement.ptr();
}

std::string tampering() {
    if (!g_taken.module) return "";
    SavedException pending;
    std::string found;
    PyObject* modules = PyImport_GetModuleDict();            // Borrowed reference
    PyObject* current = PyDict_GetItemString(modules, "gc"); // Borrowed reference
    if (current != g_taken.module) {
        found = fmt::format("sys.modules['gc'] was replaced by {}",
                            current ? textOf(py::handle(current)) : std::string("nothing"));
    }
    for (size_t i = 0; i < kNames.size() && found.empty(); ++i) {
        OwnedRef now = own(PyObject_GetAttrString(g_taken.module, kNames[i]));
        if (now.get() == g_taken.functions[i]) continue;
        found = fmt::format("gc.{} was replaced by {}", kNames[i],
                            now ? textOf(py::handle(now.get())) : std::string("nothing (deleted)"));
    }
    PyErr_Clear();
    return found;
}

} // namespace leakgate::python::collector

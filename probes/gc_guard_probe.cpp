#include "probes/probe.h"

#include "lib/python/compat.h"
#include "lib/scanner/labels.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

// Where the code under test called gc.enable(); empty when it did not. One guard per worker.
std::string g_enabledAt;
PyObject* g_originalEnable = nullptr; // Strong reference, for the life of the worker

PyObject* guardedEnable(PyObject*, PyObject*) {
    if (g_enabledAt.empty()) {
        PyFrameObject* caller = PyEval_GetFrame(); // Borrowed reference
        if (caller) {
            FrameInfo info = scanner::frameInfo(reinterpret_cast<PyObject*>(caller));
            g_enabledAt = fmt::format("{}:{} in {}", info.file, info.line, info.function);
        } else {
            g_enabledAt = "native code";
        }
    }
    return PyObject_CallNoArgs(g_originalEnable);
}

PyMethodDef g_enableDef = {"enable", guardedEnable, METH_NOARGS,
                           "gc.enable, watched by leakgate: enabling gc invalidates the measurement."};

class GcGuardProbe final : public Probe {
  public:
    std::string_view name() const override { return "gc-guard"; }
    bool decidesCheck() const override { return false; }

    void afterReturn(WorkloadResult& result) override {
        py::module_ gc = py::module_::import("gc");
        bool enabled = gc.attr("isenabled")().cast<bool>();
        gc.attr("disable")();
        if (g_enabledAt.empty() && !enabled) return;
        std::string where = g_enabledAt.empty() ? "" : fmt::format(" (gc.enable() at {})", g_enabledAt);
        result.error = WorkloadError{
            fmt::format("the workload re-enabled the cyclic GC{}; collections it allowed may have freed "
                        "what leakgate measures, so the measurement is invalid",
                        where),
            std::nullopt, ""};
    }
};

} // namespace

void watchGcEnable() {
    py::module_ gc = py::module_::import("gc");
    g_enabledAt.clear();
    if (g_originalEnable == nullptr) {
        g_originalEnable = gc.attr("enable").ptr();
        Py_INCREF(g_originalEnable); // kept for the life of the worker
        gc.attr("enable") = py::reinterpret_steal<py::object>(PyCFunction_New(&g_enableDef, nullptr));
    }
    gc.attr("disable")();
}

std::unique_ptr<Probe> makeGcGuardProbe() {
    return std::make_unique<GcGuardProbe>();
}

} // namespace leakgate::probes

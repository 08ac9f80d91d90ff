// The gc guard: a measurement is valid only if no collection ran in the worker but the ones
// leakgate started, and the collector's settings stayed as leakgate set them (docs/definitions.md,
// "Valid measurements"). CPython's own per-generation counters (gc.get_stats()) are the evidence,
// so a collection is noticed however it was started: gc.collect() from the code under test or its
// test runner, gc re-enabled through a fresh `import gc` or the C API, or from a __del__ during
// leakgate's own collection. A gc.callbacks hook and the wrapped gc.enable only name who did it.
#include "probes/probe.h"

#include "lib/python/text.h"
#include "lib/python/compat.h"
#include "lib/scanner/labels.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

// One watch per worker, from watchGc() to the worker's end. Strong references, for the life of
// the worker (they are released with the interpreter's own modules).
struct Watch {
    PyObject* originalEnable = nullptr;
    PyObject* callback = nullptr; // our gc.callbacks hook
    PyObject* garbage = nullptr;  // the list the collector fills, whatever gc.garbage is rebound to
    std::string enabledAt;        // where the code under test called gc.enable() first
    std::string collectedAt;      // what started the first collection leakgate did not start
    bool own = false;             // leakgate's collect() is running
    long long ownCollections = 0;
    long long collectionsAtStart = 0; // CPython's count when the watch started
    PyObject* threshold = nullptr;    // gc.get_threshold() when the watch started
    long long frozenAtStart = 0;
};
Watch g_watch;

long long collectionsSoFar() {
    long long total = 0;
    for (py::handle generation : py::module_::import("gc").attr("get_stats")())
        total += generation["collections"].cast<long long>();
    return total;
}

std::string callerDescription() {
    PyFrameObject* caller = PyEval_GetFrame(); // Borrowed reference
    if (!caller) return "native code";
    FrameInfo info = scanner::frameInfo(reinterpret_cast<PyObject*>(caller));
    return fmt::format("{}:{} in {}", info.file, info.line, info.function);
}

PyObject* guardedEnable(PyObject*, PyObject*) {
    if (g_watch.enabledAt.empty()) g_watch.enabledAt = callerDescription();
    return PyObject_CallNoArgs(g_watch.originalEnable);
}

// gc.callbacks(phase, info): names the first collection that leakgate did not start.
PyObject* onCollection(PyObject*, PyObject* args) {
    const char* phase = nullptr;
    PyObject* info = nullptr; // Borrowed reference
    if (!PyArg_ParseTuple(args, "sO", &phase, &info)) return nullptr;
    if (!g_watch.own && std::string_view(phase) == "start" && g_watch.collectedAt.empty()) {
        PyObject* generation = PyDict_Check(info) ? PyDict_GetItemString(info, "generation") : nullptr;
        g_watch.collectedAt = fmt::format("a collection of generation {} from {}",
                                          generation ? std::to_string(PyLong_AsLong(generation)) : "?",
                                          callerDescription());
        PyErr_Clear();
    }
    Py_RETURN_NONE;
}

PyMethodDef g_enableDef = {"enable", guardedEnable, METH_NOARGS,
                           "gc.enable, watched by leakgate: enabling gc invalidates the measurement."};
PyMethodDef g_callbackDef = {"leakgate_gc_watch", onCollection, METH_VARARGS,
                             "leakgate's gc.callbacks hook: names collections it did not start."};

// What makes the measurement invalid now; empty when nothing does. `debugFlags`: also compare
// the debug flags (not while leakgate's own DEBUG_SAVEALL read is in progress).
std::string invalidity(bool debugFlags) {
    py::module_ gc = py::module_::import("gc");
    bool enabled = gc.attr("isenabled")().cast<bool>();
    gc.attr("disable")();
    if (enabled || !g_watch.enabledAt.empty()) {
        std::string where =
            g_watch.enabledAt.empty() ? "" : fmt::format(" (gc.enable() at {})", g_watch.enabledAt);
        return fmt::format(
            "the workload re-enabled the cyclic GC{}; collections it allowed may have freed "
            "what leakgate measures, so the measurement is invalid",
            where);
    }
    const long long foreign = collectionsSoFar() - g_watch.collectionsAtStart - g_watch.ownCollections;
    if (foreign > 0) {
        std::string who = g_watch.collectedAt.empty()
                              ? "who started it is unknown: gc.callbacks was changed"
                              : "the first: " + g_watch.collectedAt;
        return fmt::format("{} collection{} that leakgate did not start ran ({}); what {} freed is not "
                           "measured, so the measurement is invalid",
                           foreign, foreign == 1 ? "" : "s", who, foreign == 1 ? "it" : "they");
    }
    const long long frozen = gc.attr("get_freeze_count")().cast<long long>();
    if (frozen != g_watch.frozenAtStart) {
        return fmt::format(
            "gc.freeze() moved {} objects out of the collector's reach, so the measurement "
            "is invalid",
            frozen - g_watch.frozenAtStart);
    }
    if (!gc.attr("get_threshold")().equal(py::handle(g_watch.threshold))) {
        return fmt::format("the code under test changed gc.set_threshold() to {}, so the measurement is "
                           "invalid",
                           python::textOf(gc.attr("get_threshold")()));
    }
    if (debugFlags && gc.attr("get_debug")().cast<int>() != 0) {
        return fmt::format("the code under test set gc.set_debug({}), so the measurement is invalid",
                           gc.attr("get_debug")().cast<int>());
    }
    return "";
}

void restartCollectionCount() {
    g_watch.collectedAt.clear();
    g_watch.ownCollections = 0;
    g_watch.collectionsAtStart = collectionsSoFar();
}

class GcGuardProbe final : public Probe {
  public:
    std::string_view name() const override { return "gc-guard"; }
    bool decidesCheck() const override { return false; }

    // A collection before the measurement began frees nothing it counts: the measurement's own
    // first collection (Measurement::begin) takes all that was garbage then. So collections are
    // counted from here, and a DSL that collects while it compiles outside the measured code
    // (torch's Dynamo runs gc.collect(1) after every compile) leaves the measurement valid. A
    // gc.enable() at any time since the watch started still invalidates it.
    void before() override { restartCollectionCount(); }
    void afterReturn(WorkloadResult& result) override { check(result, true); }
    void inGarbage(std::span<PyObject* const>, WorkloadResult& result) override { check(result, false); }
    void afterCollection(WorkloadResult& result) override { check(result, true); }

  private:
    static void check(WorkloadResult& result, bool debugFlags) {
        std::string problem = invalidity(debugFlags);
        if (!problem.empty()) result.error = WorkloadError{std::move(problem), std::nullopt, ""};
    }
};

} // namespace

void watchGc() {
    py::module_ gc = py::module_::import("gc");
    gc.attr("disable")();
    g_watch.enabledAt.clear();
    g_watch.collectedAt.clear();
    if (g_watch.originalEnable == nullptr) {
        g_watch.originalEnable = gc.attr("enable").ptr();
        Py_INCREF(g_watch.originalEnable);
        gc.attr("enable") = py::reinterpret_steal<py::object>(PyCFunction_New(&g_enableDef, nullptr));
        g_watch.callback = PyCFunction_New(&g_callbackDef, nullptr);
        if (!g_watch.callback) throw py::error_already_set();
        gc.attr("callbacks").attr("append")(py::handle(g_watch.callback));
        g_watch.garbage = gc.attr("garbage").ptr();
        Py_INCREF(g_watch.garbage);
    }
    Py_XDECREF(g_watch.threshold);
    g_watch.threshold = gc.attr("get_threshold")().release().ptr();
    g_watch.frozenAtStart = gc.attr("get_freeze_count")().cast<long long>();
    g_watch.ownCollections = 0;
    g_watch.collectionsAtStart = collectionsSoFar();
}

void collect(int generation) {
    py::module_ gc = py::module_::import("gc");
    // Only our own hook runs during our collections: a hook of the code under test could empty
    // gc.garbage before a read sees it.
    py::list callbacks = gc.attr("callbacks");
    auto saved = py::reinterpret_steal<py::list>(PySequence_List(callbacks.ptr())); // a copy
    if (!saved) throw py::error_already_set();
    callbacks.attr("clear")();
    if (g_watch.callback) callbacks.append(py::handle(g_watch.callback));
    g_watch.own = true;
    struct Restore {
        py::list& callbacks;
        py::list& saved;
        ~Restore() {
            g_watch.own = false;
            python::SavedException pending; // may run while an exception propagates
            callbacks.attr("clear")();
            callbacks.attr("extend")(saved);
            PyErr_Clear();
        }
    } restore{callbacks, saved};
    gc.attr("collect")(generation);
    ++g_watch.ownCollections;
}

py::list collectorGarbage() {
    if (!g_watch.garbage) return py::module_::import("gc").attr("garbage");
    return py::reinterpret_borrow<py::list>(g_watch.garbage);
}

std::unique_ptr<Probe> makeGcGuardProbe() {
    return std::make_unique<GcGuardProbe>();
}

} // namespace leakgate::probes

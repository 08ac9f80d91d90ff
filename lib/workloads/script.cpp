// `leakgate scan`'s workload: a script run as __main__, the way `python script.py` runs it (or a
// module, as `python -m` runs it), but compiled and evaluated from C so that no harness frame sits
// under the script's module frame.
#include "lib/workloads/workload.h"

#include "leakgate/errors.h"
#include "lib/python/collector.h"
#include "lib/python/compat.h"
#include "lib/python/text.h"
#include "lib/report/units.h"
#include "lib/scanner/explain.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace leakgate::workloads {
namespace {

namespace py = pybind11;
using python::own;
using python::OwnedRef;

std::string readSource(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(fmt::format("cannot read {}", path));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Python's own exit conventions: SystemExit is a normal end, anything else is an error.
void handleScriptException(WorkloadResult& result) {
    OwnedRef exception = python::takeRaisedException(); // normalized, traceback attached
    PyObject* value = exception.get();
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(value)); // Borrowed reference
    OwnedRef ownedTraceback = own(PyException_GetTraceback(value));
    PyObject* traceback = ownedTraceback.get();
    if (PyErr_GivenExceptionMatches(type, PyExc_SystemExit)) {
        py::object code = py::reinterpret_borrow<py::object>(value).attr("code");
        if (code.is_none()) {
            result.details["script_exit"] = 0;
        } else if (py::isinstance<py::int_>(code)) {
            // An int beyond 64 bits exits as CPython would make it: its low byte, after a message.
            int overflow = 0;
            long long value = PyLong_AsLongLongAndOverflow(code.ptr(), &overflow);
            if (overflow != 0) {
                result.details["script_exit"] = python::textOf(code);
            } else {
                result.details["script_exit"] = value;
            }
        } else {
            result.details["script_exit"] = python::textOf(code); // sys.exit("message")
        }
        return;
    }
    py::object formatted = py::module_::import("traceback")
                               .attr("format_exception")(py::handle(type), py::handle(value),
                                                         traceback ? py::handle(traceback) : py::none());
    std::string text = python::textOf(py::str("").attr("join")(formatted));
    std::fputs(text.c_str(), stderr); // as python itself would show it
    std::string message = python::textOf(value);
    result.error = WorkloadError{
        fmt::format("the script raised {}: {}", reinterpret_cast<PyTypeObject*>(type)->tp_name, message),
        std::nullopt, text};
    // The exception and its traceback (and the frames it holds) die here, by reference counting.
}

// What CPython does when a script ends, in its order (Py_FinalizeEx): threading._shutdown()
// runs threading's own exit hooks (concurrent.futures wakes its idle pool workers there) and joins
// the non-daemon threads; then the atexit callbacks run. Joining the threads by hand, before
// those hooks, waited forever on an open thread pool. The threads end inside the measurement (a
// running thread's frames are not retained); the atexit callbacks run after the reads, so that a
// library that empties its caches, or collects, in an exit hook does not hide what the program
// kept.
void joinThreadsAsPythonDoes() {
    py::dict modules = py::module_::import("sys").attr("modules");
    if (modules.contains("threading")) py::module_::import("threading").attr("_shutdown")();
}

// The interval timers and the alarm the script left running are stopped when it ends: a handler
// that fires during leakgate's reads (and raises) belongs to the script, not to the measurement.
void stopTimers() {
    py::dict modules = py::module_::import("sys").attr("modules");
    if (!modules.contains("signal")) return;
    py::module_ signal = py::module_::import("signal");
    for (const char* timer : {"ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"})
        signal.attr("setitimer")(signal.attr(timer), 0);
    signal.attr("alarm")(0);
}

void runExitHooks() {
    py::module_::import("atexit").attr("_run_exitfuncs")();
}

// The objects the collector tracks and their summed sys.getsizeof: what the exit hooks free is the
// difference across them.
struct HeapTally {
    std::int64_t objects = 0;
    std::int64_t bytes = 0;
};
HeapTally tallyHeap() {
    py::list objects = python::collector::objects();
    std::vector<PyObject*> heap; // Borrowed: `objects` keeps them
    heap.reserve(objects.size());
    for (py::handle object : objects)
        heap.push_back(object.ptr());
    return {static_cast<std::int64_t>(heap.size()), scanner::summedSizeof(heap)};
}

// A module run as `python -m` runs it (runpy's own lookup, sys.path[0] the working directory,
// argv[0] the module's file), but evaluated from C like a script: no runpy frame sits under it.
// Returns the code, or nothing when the module cannot be found (a usage error in `result`).
py::object prepareModule(const WorkerSpec& spec, py::dict& globals, WorkloadResult& result) {
    py::module_ sys = py::module_::import("sys");
    py::list(sys.attr("path")).insert(0, python::fsText(std::filesystem::current_path().string()));
    py::tuple details;
    try {
        details = py::module_::import("runpy").attr("_get_module_details")(spec.module);
    } catch (py::error_already_set& error) {
        result.error = WorkloadError{
            fmt::format("scan -m {}: {}", spec.module, python::textOf(error.value())), std::nullopt, ""};
        result.error->usage = true;
        return py::object();
    }
    py::object moduleSpec = details[1];
    globals["__file__"] = moduleSpec.attr("origin");
    globals["__cached__"] = moduleSpec.attr("cached");
    globals["__loader__"] = moduleSpec.attr("loader");
    globals["__package__"] = moduleSpec.attr("parent");
    globals["__spec__"] = moduleSpec;
    py::list argv = sys.attr("argv");
    if (argv.size() > 0 && !moduleSpec.attr("origin").is_none()) argv[0] = moduleSpec.attr("origin");
    return details[2];
}

} // namespace

WorkloadResult runScript(const WorkerSpec& spec) {
    WorkloadResult result;
    result.workload = "scan";
    result.subject = spec.module.empty() ? spec.script : spec.subject;
    py::module_ main = py::module_::import("__main__");
    py::dict globals = main.attr("__dict__");
    py::object code;
    if (!spec.module.empty()) {
        code = prepareModule(spec, globals, result);
        if (!code) return result;
    } else {
        const std::string script = std::filesystem::absolute(spec.script).string();
        const std::string source = readSource(script);
        py::module_ sys = py::module_::import("sys");
        py::list(sys.attr("path"))
            .insert(0, python::fsText(std::filesystem::path(script).parent_path().string()));
        globals["__file__"] = python::fsText(script);
        globals["__cached__"] = py::none();
        // A script that does not compile is the script's error, reported as python reports it.
        try {
            code = py::module_::import("builtins")
                       .attr("compile")(py::bytes(source), python::fsText(script), "exec", 0, true);
        } catch (py::error_already_set& error) {
            error.restore();
            handleScriptException(result);
            return result;
        }
    }

    if (spec.traceSites) {
        // Asked for: tracemalloc keeps each block's traceback, so that a cycle in the garbage can say
        // where it was made. 16 frames reach past the standard library (ctypes.cast) into the caller.
        py::module_::import("tracemalloc").attr("start")(16);
    }
    probes::ProbeList probes;
    probes::explainForeignCollections(true);
    probes.push_back(probes::makeGcGuardProbe());
    // What the program's imports made, once, is told apart from what its work made (an import of
    // torch leaves 877 cycles, every time, of no use to anyone: not a leak of the work).
    auto imports = std::make_shared<probes::ImportTime>();
    probes.push_back(probes::makeImportMarksProbe(imports));
    auto others = std::make_shared<probes::OtherCycles>();
    probes.push_back(probes::makeFrameCycleProbe(others, imports, spec.cycleBytes));
    probes.push_back(
        probes::makeCyclicGarbageProbe({spec.cycleInstances, spec.cycleBytes, spec.traceSites}, others));
    probes.push_back(probes::makeRetainedFrameProbe(false, imports, spec.cycleBytes));
    probes.push_back(probes::makeHeldGrowthProbe({spec.heldEntries, spec.heldBytes}));
    // A script may place sentinels of its own (`_leakgate.sentinel`, `device_sentinel`, `track`):
    // they get verdicts, bytes by payload kind and the device memory they hold.
    probes.push_back(probes::makeSentinelProbe());
    probes.push_back(probes::makeDeviceMemoryProbe(/*lazy=*/true));
    measure(result, probes, [&] {
        OwnedRef value = own(PyEval_EvalCode(code.ptr(), globals.ptr(), globals.ptr()));
        if (!value) handleScriptException(result);
        py::module_::import("sys").attr("stdout").attr("flush")();
        joinThreadsAsPythonDoes();
        stopTimers();
    });
    // The exit hooks run after the reads; what they free (a cache emptied, a collection) is told
    // apart, as a note: the checks judged what the program held when its code ended.
    const int callbacks = py::module_::import("atexit").attr("_ncallbacks")().cast<int>();
    const HeapTally beforeHooks = callbacks > 0 ? tallyHeap() : HeapTally{};
    try {
        runExitHooks(); // it reports what a hook raises, as python does, and goes on
    } catch (py::error_already_set&) {
        // atexit itself failed: the reads are done, and the hooks are the script's
    }
    if (callbacks > 0) {
        const HeapTally afterHooks = tallyHeap();
        const std::int64_t objects = beforeHooks.objects - afterHooks.objects;
        const std::int64_t bytes = beforeHooks.bytes - afterHooks.bytes;
        result.details["exit_hooks"] = {
            {"callbacks", callbacks}, {"objects_freed", objects}, {"bytes_freed", bytes}};
        if (objects > 0) {
            result.notes.push_back(fmt::format(
                "the {} atexit callback{} ran after the reads and freed {} tracked object{} ({}); the "
                "checks above judged what the program held before them",
                callbacks, callbacks == 1 ? "" : "s", objects, objects == 1 ? "" : "s",
                report::humanBytes(std::max<std::int64_t>(bytes, 0))));
        }
    }
    if (result.sentinels.empty()) {
        // Nothing placed: the sentinel check measured nothing the script asked for, and the
        // device-memory check measured only where the program used CUDA itself (its own memory,
        // read through torch, CuPy and cuMemGetInfo).
        std::erase_if(result.checks, [](const CheckResult& check) {
            return check.name == "sentinels" ||
                   (check.name == "device-memory" && check.status == Status::kSkip &&
                    check.reason.starts_with("the program did not use CUDA"));
        });
    }
    return result;
}

} // namespace leakgate::workloads

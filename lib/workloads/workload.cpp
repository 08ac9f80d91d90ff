#include "lib/workloads/workload.h"

#include "lib/python/gc_debug_guard.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace leakgate::workloads {

namespace py = pybind11;

void measure(WorkloadResult& result, probes::ProbeList& probes, const std::function<void()>& body,
             const std::string& checkPrefix) {
    auto started = std::chrono::steady_clock::now();
    py::module_ gc = py::module_::import("gc");
    py::list garbage = probes::collectorGarbage();
    gc.attr("disable")();
    // Garbage made before the workload (interpreter start-up, imports) is not its doing.
    probes::collect();
    garbage.attr("clear")();

    for (auto& probe : probes)
        probe->before();
    body();

    // A probe that sets a new error (the gc guard) invalidates every check after it.
    bool invalid = false;
    auto read = [&](const std::function<void(probes::Probe&)>& call) {
        for (auto& probe : probes) {
            if (invalid) return;
            std::string errorBefore = result.error ? result.error->message : "";
            call(*probe);
            invalid = result.error && result.error->message != errorBefore;
        }
    };
    // Read 1: before any collection.
    read([&](probes::Probe& probe) { probe.afterReturn(result); });
    // Read 2: one collection that saves what it finds instead of freeing it.
    if (!invalid) {
        python::GcDebugGuard saveAll(python::GcDebugGuard::kSaveAll);
        probes::collect();
        std::vector<PyObject*> saved; // Borrowed references: gc.garbage keeps them alive
        saved.reserve(garbage.size());
        for (py::handle object : garbage)
            saved.push_back(object.ptr());
        read([&](probes::Probe& probe) { probe.inGarbage(saved, result); });
        garbage.attr("clear")();
    }
    // Read 3: a real collection.
    if (!invalid) {
        probes::collect();
        read([&](probes::Probe& probe) { probe.afterCollection(result); });
    }
    gc.attr("disable")();

    for (auto& probe : probes) {
        if (!probe->decidesCheck()) continue;
        bool decided =
            std::any_of(result.checks.begin(), result.checks.end(),
                        [&](const CheckResult& check) { return check.name == probe->name(); });
        if (!decided && invalid)
            result.checks.push_back({std::string(probe->name()), Status::kError, result.error->message});
    }
    for (auto& check : result.checks)
        check.name = checkPrefix + check.name;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

} // namespace leakgate::workloads

#include "probes/measurement.h"

#include "lib/python/collector.h"
#include "lib/python/gc_debug_guard.h"

#include <pybind11/pybind11.h>

#include <algorithm>

namespace leakgate::probes {

namespace py = pybind11;

namespace {
std::function<std::optional<std::string>()>& integrityCheck() {
    static std::function<std::optional<std::string>()> check;
    return check;
}
} // namespace

void setIntegrityCheck(std::function<std::optional<std::string>()> check) {
    integrityCheck() = std::move(check);
}

Measurement::Measurement(WorkloadResult& result, ProbeList& probes, std::string checkPrefix, Reads reads,
                         Collections collections)
    : result_(result), probes_(probes), checkPrefix_(std::move(checkPrefix)), reads_(reads),
      collections_(collections) {}

void Measurement::begin() {
    started_ = std::chrono::steady_clock::now();
    python::collector::disable();
    // Garbage made before the measured code (interpreter start-up, imports) is not its doing.
    if (collections_.earlier >= 0) collect(collections_.earlier);
    collectorGarbage().attr("clear")();
    for (auto& probe : probes_)
        probe->before();
}

void Measurement::finish() {
    py::list garbage = collectorGarbage();
    // A probe that sets a new error (the gc guard) invalidates every check after it.
    bool invalid = false;
    if (integrityCheck()) {
        // Before any read: a replaced harness function decides what the reads would see.
        if (std::optional<std::string> changed = integrityCheck()()) {
            result_.error = WorkloadError{*changed, std::nullopt, ""};
            invalid = true;
        }
    }
    // A probe invalidates the measurement by setting `result.error` in its read (probes/probe.h):
    // told by whether it set one, the error the measured code raised being held aside meanwhile
    // (no probe reads it), not by comparing messages.
    auto read = [&](const std::function<void(Probe&)>& call) {
        for (auto& probe : probes_) {
            if (invalid) return;
            std::optional<WorkloadError> raised = std::move(result_.error);
            result_.error.reset();
            call(*probe);
            invalid = result_.error.has_value();
            if (!invalid) result_.error = std::move(raised);
        }
    };
    // Read 1: before any collection.
    read([&](Probe& probe) { probe.afterReturn(result_); });
    // Read 2: one collection that saves what it finds instead of freeing it.
    if (!invalid && reads_ == Reads::kAll) {
        python::GcDebugGuard saveAll(python::GcDebugGuard::kSaveAll);
        collect(collections_.saved);
        std::vector<PyObject*> saved; // Borrowed references: gc.garbage keeps them alive
        saved.reserve(garbage.size());
        for (py::handle object : garbage)
            saved.push_back(object.ptr());
        read([&](Probe& probe) { probe.inGarbage(saved, result_); });
        garbage.attr("clear")();
    }
    // Read 3: a real collection.
    if (!invalid && reads_ == Reads::kAll) {
        collect(collections_.last);
        read([&](Probe& probe) { probe.afterCollection(result_); });
    }
    python::collector::disable();

    for (auto& probe : probes_) {
        if (!probe->decidesCheck()) continue;
        bool decided =
            std::any_of(result_.checks.begin(), result_.checks.end(),
                        [&](const CheckResult& check) { return check.name == probe->name(); });
        if (!decided && invalid)
            result_.checks.push_back(
                {std::string(probe->name()), Status::kError, result_.error->message});
    }
    for (auto& check : result_.checks)
        check.name = checkPrefix_ + check.name;
    result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void measure(WorkloadResult& result, ProbeList& probes, const std::function<void()>& body,
             const std::string& checkPrefix, Reads reads) {
    Measurement measurement(result, probes, checkPrefix, reads);
    measurement.begin();
    body();
    measurement.finish();
}

} // namespace leakgate::probes

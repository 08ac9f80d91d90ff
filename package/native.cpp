// leakgate_dsl._native: the Python package's extension module. The same library as the CLI's
// workers (probes/, lib/scanner/, lib/report/), measuring inside the caller's own process:
//   Region   the three reads (probes/measurement.h) around the body of a `with` statement, with
//            the gc guard, the sentinels, frame cycles, retained frames, device memory and the
//            allocation counter;
//   explain  the scanner over any objects (gc.garbage after a DEBUG_SAVEALL collection, say);
//   and the sentinel types and functions of the workers' `_leakgate` (probes/leakgate_module.h).
// Results cross into Python as schema leakgate/1 JSON plus the text the CLI prints for them;
// leakgate_dsl/_results.py turns them into objects.
#include "leakgate/report.h"
#include "lib/python/collector.h"
#include "lib/report/writers/text.h"
#include "lib/scanner/labels.h"
#include "leakgate/allocations.h"
#include "probes/leakgate_module.h"
#include "probes/measurement.h"
#include "probes/probe.h"
#include "probes/sentinel_probe.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

namespace leakgate::package {
namespace {

namespace py = pybind11;

std::string pythonVersion() {
    py::object info = py::module_::import("sys").attr("version_info");
    return fmt::format("{}.{}.{}", info.attr("major").cast<int>(), info.attr("minor").cast<int>(),
                       info.attr("micro").cast<int>());
}

// The result as the CLI reports it: schema leakgate/1 JSON of one workload result, and its text
// without the report's closing "N findings; exit N" line (no process exits here).
py::dict encode(const WorkloadResult& result, const std::string& command) {
    Report report;
    report.command = command;
    report.pythonVersion = pythonVersion();
    report.results = {result};
    std::string text = formatText(report, {});
    if (size_t last = text.rfind("\n\n"); last != std::string::npos) text.resize(last + 1);
    py::dict encoded;
    encoded["json"] = nlohmann::json(result).dump();
    encoded["text"] = text;
    return encoded;
}

class Region;
Region* g_active = nullptr; // regions do not nest: one measurement owns the collector

// One measurement of the code run between begin() and finish() (or abandon()), in this process.
// Each region is measured once.
class Region {
  public:
    // `held`: the held-growth probe too (its limits), off by default: its marks walk every
    // module's namespace at the start, at every import and at the end.
    explicit Region(std::string name, std::optional<probes::HeldLimits> held = std::nullopt) : held_(held) {
        result_.workload = "region";
        result_.subject = std::move(name);
    }
    ~Region() {
        if (g_active == this) end(); // dropped while active: give the collector back
    }
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;

    bool active() const { return state_ == State::kActive; }

    void begin() {
        if (state_ == State::kActive)
            throw UsageError(fmt::format("region `{}` is already active: a region is entered once",
                                         result_.subject));
        if (state_ == State::kDone)
            throw UsageError(fmt::format("region `{}` was already measured: make a new region for each "
                                         "measurement",
                                         result_.subject));
        if (g_active)
            throw UsageError(fmt::format("regions do not nest: region `{}` is active, so `{}` cannot begin",
                                         g_active->result_.subject, result_.subject));
        gcWasEnabled_ = python::collector::enabled();
        g_active = this;
        state_ = State::kActive;
        try {
            probes::AllocationCounter::install();
            session_ = std::make_unique<probes::Session>();
            probes::watchGc();
            // The reads clear gc.garbage; what the caller kept there is put back at the end.
            py::list garbage = probes::collectorGarbage();
            callersGarbage_ = py::reinterpret_steal<py::object>(PySequence_List(garbage.ptr()));
            if (!callersGarbage_) throw py::error_already_set();
            garbage.attr("clear")();
            probes_.push_back(probes::makeGcGuardProbe());
            probes_.push_back(probes::makeSentinelProbe());
            auto others = std::make_shared<probes::OtherCycles>();
            probes_.push_back(probes::makeFrameCycleProbe(others));
            probes_.push_back(probes::makeCyclicGarbageProbe(probes::CycleLimits{}, others));
            probes_.push_back(probes::makeRetainedFrameProbe(/*onlyNew=*/true));
            if (held_) probes_.push_back(probes::makeHeldGrowthProbe(*held_));
            probes_.push_back(probes::makeDeviceMemoryProbe());
            measurement_ = std::make_unique<probes::Measurement>(result_, probes_);
            measurement_->begin();
        } catch (...) {
            end();
            throw;
        }
        probes::AllocationCounter::start(); // last: only the body's allocations count
        counting_ = true;
    }

    // The three reads; the result as encode() gives it.
    py::dict finish() {
        requireActive();
        probes::AllocationCounts counts = stopCounting();
        try {
            measurement_->finish();
        } catch (...) {
            end();
            throw;
        }
        result_.details["allocations"] = counts.allocations;
        result_.details["frees"] = counts.frees;
        result_.details["net_blocks"] = counts.netBlocks();
        end();
        return encode(result_, "region");
    }

    // Ends the region without reading: what the body left cannot be judged (it raised, and the
    // exception's traceback keeps its frames alive). Every check is `error` with `reason`.
    py::dict abandon(const std::string& reason) {
        requireActive();
        stopCounting();
        result_.error = WorkloadError{reason, std::nullopt, ""};
        for (const auto& probe : probes_) {
            if (probe->decidesCheck())
                result_.checks.push_back({std::string(probe->name()), Status::kError, reason});
        }
        end();
        return encode(result_, "region");
    }

  private:
    enum class State { kNew, kActive, kDone };

    void requireActive() const {
        if (state_ != State::kActive)
            throw UsageError(fmt::format("region `{}` is not active", result_.subject));
    }

    probes::AllocationCounts stopCounting() {
        if (!counting_) return {};
        counting_ = false;
        return probes::AllocationCounter::stop();
    }

    // Releases what the measurement held (with the GIL), gives the collector back as it was.
    void end() {
        stopCounting();
        measurement_.reset();
        probes_.clear();
        session_.reset();
        g_active = nullptr;
        state_ = State::kDone;
        if (callersGarbage_) {
            python::SavedException pending;
            PyObject* garbage = probes::collectorGarbage().ptr();
            PyObject* done = PyObject_CallMethod(garbage, "extend", "O", callersGarbage_.ptr());
            Py_XDECREF(done);
            PyErr_Clear();
            callersGarbage_ = py::object();
        }
        if (gcWasEnabled_) {
            PyGC_Enable(); // the C API: neither the watched gc.enable nor a replacement of it
        }
    }

    WorkloadResult result_;
    std::optional<probes::HeldLimits> held_;
    State state_ = State::kNew;
    bool gcWasEnabled_ = false;
    bool counting_ = false;
    std::unique_ptr<probes::Session> session_;
    probes::ProbeList probes_;
    std::unique_ptr<probes::Measurement> measurement_;
    py::object callersGarbage_; // what gc.garbage held when the region began (null before)
};

// The frame-cycle probe's explanation of `objects`, as if a DEBUG_SAVEALL collection had saved
// them: its check, its findings and the cycle shapes of what holds no frame.
py::dict explain(const py::sequence& objects) {
    py::list kept(objects); // keeps every object alive while the scanner reads it
    std::vector<PyObject*> raw; // Borrowed references
    raw.reserve(kept.size());
    for (py::handle object : kept)
        raw.push_back(object.ptr());
    WorkloadResult result;
    result.workload = "explain";
    result.subject = fmt::format("{} object{}", raw.size(), raw.size() == 1 ? "" : "s");
    probes::makeFrameCycleProbe()->inGarbage(raw, result);
    return encode(result, "explain");
}

} // namespace
} // namespace leakgate::package

PYBIND11_MODULE(_native, module) {
    namespace py = pybind11;
    using leakgate::package::Region;
    module.doc() = "leakgate's library in this process: regions, the scanner and sentinels";
    // The collector's functions as they are at import, before any test body can replace them.
    leakgate::python::collector::capture();
    leakgate::probes::defineSentinelModule(module);
    module.attr("__version__") = LEAKGATE_VERSION;
    py::class_<Region>(module, "Region")
        .def(py::init([](std::string name, std::optional<std::int64_t> heldEntries,
                         std::optional<std::int64_t> heldBytes) {
                 std::optional<leakgate::probes::HeldLimits> held;
                 if (heldEntries || heldBytes) {
                     held.emplace();
                     if (heldEntries) held->entries = *heldEntries;
                     if (heldBytes) held->bytes = *heldBytes;
                     if (held->entries < 1 || held->bytes < 1)
                         throw leakgate::UsageError("held_entries and held_bytes must be at least 1");
                 }
                 return std::make_unique<Region>(std::move(name), held);
             }),
             py::arg("name"), py::arg("held_entries") = py::none(), py::arg("held_bytes") = py::none())
        .def_property_readonly("active", &Region::active)
        .def("begin", &Region::begin, "Disable the collector, collect what is already garbage, start the probes.")
        .def("finish", &Region::finish, "The three reads: {'json': schema leakgate/1 result, 'text': the report}.")
        .def("abandon", &Region::abandon, py::arg("reason"),
             "End without reading: every check is `error` with `reason`.");
    module.def("region_active", [] { return leakgate::package::g_active != nullptr; },
               "Whether a region is measuring now.");
    module.def("session_active", &leakgate::probes::sessionActive,
               "Whether sentinels made now are judged by a measurement.");
    module.def("explain", &leakgate::package::explain, py::arg("objects"),
               "The scanner over `objects`: {'json': ..., 'text': ...}.");
    module.def(
        "call_n",
        [](py::handle callable, std::int64_t calls) {
            for (std::int64_t i = 0; i < calls; ++i) {
                PyObject* result = PyObject_CallNoArgs(callable.ptr());
                if (!result) throw py::error_already_set();
                Py_DECREF(result);
            }
        },
        py::arg("callable"), py::arg("calls"),
        "Call `callable()` `calls` times from C, so that a region around it counts the callable's "
        "own allocations and not a Python loop's.");
    module.def("add_harness_file", &leakgate::scanner::addHarnessFile, py::arg("file"),
               "Count frames of `file` as leakgate's own: findings name them only when the code under "
               "test keeps them.");
}

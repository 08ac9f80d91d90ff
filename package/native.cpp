// leakgate_dsl._native: the Python package's extension module. The same library as the CLI's
// workers (probes/, lib/scanner/, lib/report/), measuring inside the caller's own process:
//   Region   the three reads (probes/measurement.h) around the body of a `with` statement, with
//            the gc guard, the sentinels, frame cycles, retained frames, device memory and the
//            allocation counter;
//   explain  the scanner over any objects (gc.garbage after a DEBUG_SAVEALL collection, say);
//   and the sentinel types and functions of the workers' `_leakgate` (probes/leakgate_module.h);
//   _cli     the command line itself, for `leakgate-dsl` (cmd/cli.h), and _worker_main, where its
//            workers start (lib/worker/in_interpreter.cpp), so the wheel has no binary of its own.
// Results cross into Python as schema leakgate/1 JSON plus the text the CLI prints for them;
// leakgate_dsl/_results.py turns them into objects.
#include "cmd/cli.h"
#include "leakgate/allocations.h"
#include "leakgate/errors.h"
#include "leakgate/report.h"
#include "lib/base/data_dir.h"
#include "lib/python/collector.h"
#include "lib/report/units.h"
#include "lib/report/writers/json.h"
#include "lib/report/writers/text.h"
#include "lib/scanner/labels.h"
#include "lib/worker/main.h"
#include "probes/leakgate_module.h"
#include "probes/measurement.h"
#include "probes/probe.h"
#include "probes/sentinel_probe.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace leakgate::package {
namespace {

namespace py = pybind11;

std::string pythonVersion() {
    py::object info = py::module_::import("sys").attr("version_info");
    return fmt::format("{}.{}.{}", info.attr("major").cast<int>(), info.attr("minor").cast<int>(),
                       info.attr("micro").cast<int>());
}

// The result as the CLI reports it: the JSON of one workload result, the whole schema leakgate/1
// document the CLI's --json writes for it (what the pytest plugin's --leakgate-report saves), and
// its text without the report's closing "N findings; exit N" line (no process exits here).
py::dict encode(const WorkloadResult& result, const std::string& command) {
    Report report;
    report.command = command;
    report.pythonVersion = pythonVersion();
    report.pythonExecutable = py::str(py::module_::import("sys").attr("executable"));
    report.results = {result};
    std::string text = report::formatText(report, {});
    if (size_t last = text.rfind("\n\n"); last != std::string::npos) text.resize(last + 1);
    py::dict encoded;
    encoded["json"] = nlohmann::json(result).dump();
    encoded["report"] = report::formatJson(report);
    encoded["text"] = text;
    return encoded;
}

namespace collector = python::collector;

// The collections of a region's measurement (probes/measurement.h). An outermost region examines
// the young generations only: what its body made, not every object of a process with a DSL
// loaded (three collections of the whole heap cost 54 ms to 188 ms per test). begin() collects
// generations 0 and 1, so what was alive is in generation 2, which no read examines. A region
// inside another collects nothing at its beginning (that garbage is the outer body's) and keeps
// what was alive in the young generations alive until its end.
constexpr probes::Collections kOutermost{1, 0, 1};
constexpr probes::Collections kInner{-1, 0, 1};
// A region once another began inside it: that one's collections moved this body's objects to
// older generations, so the reads examine the whole heap, while what was alive when this region
// began is kept alive (held from the first inner beginning on).
constexpr probes::Collections kWhole{-1, 2, 2};

// What a region inside another found that its own reads freed (the cyclic garbage of its body:
// the frame cycles, the cycles without a frame, the sentinels freed only by the collector). The
// outer region cannot see those any more, so it takes them over as its own at its end.
struct Inherited {
    std::vector<CheckResult> checks; // failed checks, each reason naming the inner region
    std::vector<Finding> findings;
    std::vector<SentinelVerdict> sentinels;
    std::int64_t cyclicObjects = 0;
    std::int64_t pinnedBytes = 0;
};

class Region;
std::vector<Region*> g_regions; // the active regions, innermost last

// One measurement of the code run between begin() and finish() (or abandon()), in this process.
// Each region is measured once. Regions nest: a region begun while another is active measures
// and judges its own body; the outer one counts that body as part of its own (its allocations,
// what it left alive, and what the inner reads found in cyclic garbage and freed).
class Region final : public probes::ForeignCollectionListener {
  public:
    // `held`: the held-growth probe too (its limits), off by default: its marks walk every
    // module's namespace at the start, at every import and at the end.
    explicit Region(std::string name, std::optional<probes::HeldLimits> held = std::nullopt)
        : held_(held) {
        result_.workload = "region";
        result_.subject = std::move(name);
    }
    ~Region() override {
        if (state_ != State::kActive) return;
        // Dropped while active: end the regions begun inside it first, then give the collector
        // back.
        while (!g_regions.empty() && g_regions.back() != this)
            g_regions.back()->end();
        end();
    }
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;

    bool active() const { return state_ == State::kActive; }

    void begin() {
        if (state_ == State::kActive)
            throw UsageError(
                fmt::format("region `{}` is already active: a region is entered once", result_.subject));
        if (state_ == State::kDone)
            throw UsageError(fmt::format("region `{}` was already measured: make a new region for each "
                                         "measurement",
                                         result_.subject));
        outer_ = g_regions.empty() ? nullptr : g_regions.back();
        gcWasEnabled_ = collector::enabled();
        g_regions.push_back(this);
        state_ = State::kActive;
        try {
            probes::AllocationCounter::install();
            if (outer_) {
                // The outer's sentinels are judged by the outer: set aside while this region's
                // probe judges its own (end() puts them back, whatever fails after this).
                outerSentinels_ = std::move(probes::sentinelRegistry());
                probes::sentinelRegistry().clear();
                outer_->pauseCounting();
                outer_->noteValidity();
                outer_->setForeignAside();
                outer_->readWholeHeap();
                // What is alive now in the generations this region's reads examine (the outer
                // body's objects so far, its garbage too) stays alive through them: they find only
                // what this body leaves, and leave the outer body's garbage to the outer's reads.
                kept_ = py::make_tuple(collector::objects(0), collector::objects(1));
            } else {
                session_ = std::make_unique<probes::Session>();
            }
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
            probes_.push_back(probes::makeRegionRetainedFrameProbe(older_));
            if (held_) probes_.push_back(probes::makeHeldGrowthProbe(*held_));
            probes_.push_back(probes::makeDeviceMemoryProbe());
            measurement_ = std::make_unique<probes::Measurement>(
                result_, probes_, "", probes::Reads::kAll, outer_ ? kInner : kOutermost);
            // A collection the body starts is measured, not refused: the watch explains what it
            // finds (the frame-cycle and cyclic-garbage checks report it), and this region's reads
            // examine the whole heap from then on (collectionStarts).
            explainedBefore_ = probes::explainForeignCollections(true);
            probes::listenToForeignCollections(this);
            measurement_->begin();
        } catch (...) {
            end();
            throw;
        }
        resumeCounting(); // last: only the body's allocations count
    }

    // The three reads; the result as encode() gives it.
    py::dict finish() {
        requireInnermost();
        probes::AllocationCounts counts = stopCounting();
        // The sentinels this body made, with their weak references shared, so that those its reads
        // do not free go on to the outer region's judgement.
        std::vector<probes::TrackedSentinel> made;
        if (outer_) made = shareSentinels(probes::sentinelRegistry());
        probes::putBackForeignCollections(std::move(foreignAside_));
        try {
            measurement_->finish();
        } catch (...) {
            survivors_ = std::move(made);
            end();
            throw;
        }
        result_.details["allocations"] = counts.allocations;
        result_.details["frees"] = counts.frees;
        result_.details["net_blocks"] = counts.netBlocks();
        if (result_.ok()) takeOver();
        if (invalidBy_ && result_.ok()) invalidate(*invalidBy_);
        if (outer_) handOver(std::move(made));
        end();
        return encode(result_, "region");
    }

    // Ends the region without reading: what the body left cannot be judged (it raised, and the
    // exception's traceback keeps its frames alive). Every check is `error` with `reason`.
    // Nothing was collected, so all the body left is still there for an outer region to read.
    py::dict abandon(const std::string& reason) {
        requireInnermost();
        probes::AllocationCounts counts = stopCounting();
        result_.error = WorkloadError{reason, std::nullopt, ""};
        for (const auto& probe : probes_) {
            if (probe->decidesCheck())
                result_.checks.push_back({std::string(probe->name()), Status::kError, reason});
        }
        if (outer_) {
            outer_->counted_.allocations += counts.allocations;
            outer_->counted_.frees += counts.frees;
            outer_->setForeignAside(); // what this body's collections found, the outer reports
            survivors_ = std::move(probes::sentinelRegistry());
            // A collection or gc.enable() in this body happened in the outer's too: told before
            // end() takes the gc guard's baseline again for the outer.
            noteValidity();
            if (invalidBy_ && !outer_->invalidBy_)
                outer_->invalidBy_ =
                    fmt::format("in region `{}` inside it: {}", result_.subject, *invalidBy_);
        }
        end();
        return encode(result_, "region");
    }

  private:
    enum class State { kNew, kActive, kDone };

    void requireInnermost() const {
        if (state_ != State::kActive)
            throw UsageError(fmt::format("region `{}` is not active", result_.subject));
        if (g_regions.back() != this)
            throw UsageError(fmt::format("region `{}` cannot end while region `{}`, begun inside it, is "
                                         "active: regions end in the reverse order of their beginnings",
                                         result_.subject, g_regions.back()->result_.subject));
    }

    void pauseCounting() {
        if (!counting_) return;
        counting_ = false;
        probes::AllocationCounts counts = probes::AllocationCounter::stop();
        counted_.allocations += counts.allocations;
        counted_.frees += counts.frees;
    }
    void resumeCounting() {
        if (counting_ || state_ != State::kActive) return;
        probes::AllocationCounter::start();
        counting_ = true;
    }
    // What the body allocated and freed, while this region's own work (and that of regions inside
    // it, but not their bodies) was left out.
    probes::AllocationCounts stopCounting() {
        pauseCounting();
        return counted_;
    }

    // A collection the body started (probes/probe.h): it moves what the body made and keeps to
    // older generations, where objects that die later are out of the young reads. So, as when a
    // region begins inside this one, the reads examine the whole heap from here. Only the innermost
    // region's body is running.
    const base::PointerSet* collectionStarts(int) override {
        if (state_ != State::kActive || !measurement_ || g_regions.empty() || g_regions.back() != this)
            return nullptr;
        try {
            probes::UncountedAllocations uncounted;
            readWholeHeap();
        } catch (py::error_already_set&) {
            PyErr_Clear(); // read 1 finds gc.get_objects failing again, and says so
        }
        return nullptr;
    }
    void collectionEnds() override {}

    // What the collections of this body found so far, set aside while a region inside it is
    // measured (the watch keeps one measurement's at a time); finish() puts them back.
    void setForeignAside() {
        for (probes::ForeignCollection& collection : probes::takeForeignCollections())
            foreignAside_.push_back(std::move(collection));
    }

    // A region begins inside this one: from here on this one's reads examine the whole heap, and
    // what is in generation 2 now, all of it older than this body (the body's own objects are
    // young until a collection), is kept alive until the end, out of those reads.
    void readWholeHeap() {
        if (*older_) return;
        *older_ = collector::objects(2);
        measurement_->setCollections(kWhole);
    }

    // A read of the gc guard for the body so far: a region begun or abandoned inside this one
    // takes the guard's baseline afresh, so what this body did before it is told now.
    void noteValidity() {
        if (invalidBy_) return;
        WorkloadResult scratch;
        probes::makeGcGuardProbe()->afterCollection(scratch);
        if (scratch.error) invalidBy_ = scratch.error->message;
    }

    void invalidate(const std::string& reason) {
        result_.error = WorkloadError{reason, std::nullopt, ""};
        for (auto& check : result_.checks) {
            check.status = Status::kError;
            check.reason = reason;
            check.amount.reset();
        }
    }

    static std::vector<probes::TrackedSentinel>
    shareSentinels(const std::vector<probes::TrackedSentinel>& from) {
        std::vector<probes::TrackedSentinel> shared;
        for (const auto& sentinel : from) {
            probes::TrackedSentinel copy;
            copy.label = sentinel.label;
            copy.kind = sentinel.kind;
            copy.bytes = sentinel.bytes;
            copy.weakref = python::own(Py_NewRef(sentinel.weakref.get()));
            copy.identity = sentinel.identity;
            shared.push_back(std::move(copy));
        }
        return shared;
    }

    // After this region's reads, to the region it is inside: its allocations, whether it could
    // measure, what its reads freed (see Inherited), and its sentinels that they did not free (a
    // sentinel freed by reference counting stays so; one alive is judged again at the outer's reads).
    void handOver(std::vector<probes::TrackedSentinel> made) {
        outer_->counted_.allocations += result_.details["allocations"].get<std::uint64_t>();
        outer_->counted_.frees += result_.details["frees"].get<std::uint64_t>();
        const std::string where = fmt::format("in region `{}` inside it", result_.subject);
        if (!result_.ok()) {
            if (!outer_->invalidBy_)
                outer_->invalidBy_ = fmt::format("{}: {}", where, result_.error->message);
            survivors_ = std::move(made);
            return;
        }
        const bool judged = result_.sentinels.size() == made.size();
        Inherited& inherited = outer_->inherited_;
        std::int64_t freedByGc = 0, freedByGcBytes = 0;
        for (size_t i = 0; i < made.size(); ++i) {
            if (judged && result_.sentinels[i].verdict == "freed-by-gc-only") {
                inherited.sentinels.push_back(result_.sentinels[i]);
                ++freedByGc;
                freedByGcBytes += result_.sentinels[i].bytes;
            } else {
                survivors_.push_back(std::move(made[i]));
            }
        }
        for (const auto& check : result_.checks) {
            if (check.status != Status::kFail) continue;
            if (check.name == "frame-cycle" || check.name == "cyclic-garbage")
                inherited.checks.push_back({check.name, Status::kFail,
                                            fmt::format("{}: {}", where, check.reason), check.amount});
        }
        if (freedByGc > 0) {
            inherited.checks.push_back(
                {"sentinels", Status::kFail,
                 fmt::format("{}: {} sentinel{} freed-by-gc-only, {} pinned until gc.collect()", where,
                             freedByGc, freedByGc == 1 ? "" : "s", report::humanBytes(freedByGcBytes)),
                 freedByGcBytes});
        }
        for (const auto& finding : result_.findings) {
            if (finding.kind == "frame-cycle") inherited.findings.push_back(finding);
        }
        inherited.cyclicObjects += result_.details.value("cyclic_garbage_objects", std::int64_t{0});
        inherited.pinnedBytes += result_.details.value("pinned_bytes", std::int64_t{0});
    }

    // What the regions inside this one found and freed, as this region's own: a failed check fails
    // this one's too, naming the inner region.
    void takeOver() {
        if (inherited_.checks.empty() && inherited_.findings.empty() && inherited_.sentinels.empty() &&
            inherited_.cyclicObjects == 0)
            return;
        for (const auto& taken : inherited_.checks) {
            auto check = std::find_if(result_.checks.begin(), result_.checks.end(),
                                      [&](const CheckResult& own) { return own.name == taken.name; });
            if (check == result_.checks.end() || check->status == Status::kError) continue;
            if (check->status == Status::kFail) {
                check->reason += "; " + taken.reason;
                check->amount = check->amount.value_or(0) + taken.amount.value_or(0);
            } else {
                *check = taken;
            }
        }
        for (auto& finding : inherited_.findings)
            result_.findings.push_back(std::move(finding));
        for (auto& sentinel : inherited_.sentinels)
            result_.sentinels.push_back(std::move(sentinel));
        auto add = [&](const char* key, std::int64_t amount) {
            if (amount != 0) result_.details[key] = result_.details.value(key, std::int64_t{0}) + amount;
        };
        add("cyclic_garbage_objects", inherited_.cyclicObjects);
        add("pinned_bytes", inherited_.pinnedBytes);
    }

    // Releases what the measurement held (with the GIL), gives the collector back as it was, and
    // an outer region its sentinels and its gc guard's baseline.
    void end() {
        pauseCounting();
        probes::stopListeningToForeignCollections(this);
        if (explainedBefore_)
            probes::explainForeignCollections(*std::exchange(explainedBefore_, std::nullopt));
        measurement_.reset();
        probes_.clear();
        state_ = State::kDone;
        if (auto self = std::find(g_regions.begin(), g_regions.end(), this); self != g_regions.end())
            g_regions.erase(self);
        python::SavedException pending; // may run while an exception propagates
        if (outer_) {
            auto& registry = probes::sentinelRegistry();
            registry = std::move(outerSentinels_);
            for (auto& sentinel : survivors_)
                registry.push_back(std::move(sentinel));
            survivors_.clear();
        } else {
            session_.reset();
        }
        if (callersGarbage_) {
            PyObject* garbage = probes::collectorGarbage().ptr();
            PyObject* done = PyObject_CallMethod(garbage, "extend", "O", callersGarbage_.ptr());
            Py_XDECREF(done);
            PyErr_Clear();
            callersGarbage_ = py::object();
        }
        kept_ = py::object();
        *older_ = py::object();
        if (outer_ && outer_->active()) {
            try {
                probes::watchGc(); // disables the collector, as the outer region had it
                probes::makeGcGuardProbe()->before();
            } catch (py::error_already_set&) {
                PyErr_Clear();
            }
            outer_->resumeCounting();
        } else if (gcWasEnabled_) {
            PyGC_Enable(); // the C API: neither the watched gc.enable nor a replacement of it
        }
    }

    WorkloadResult result_;
    std::optional<probes::HeldLimits> held_;
    State state_ = State::kNew;
    bool gcWasEnabled_ = false;
    bool counting_ = false;
    probes::AllocationCounts counted_;         // the body's, so far
    std::unique_ptr<probes::Session> session_; // the outermost region's; inner ones share it
    probes::ProbeList probes_;
    std::unique_ptr<probes::Measurement> measurement_;
    py::object callersGarbage_; // what gc.garbage held when the region began (null before)
    Region* outer_ = nullptr;   // the region active when this one began
    py::object kept_;           // a region inside another: what was young when it began
    // Generation 2 when the first region began inside this one (null before), shared with the
    // retained-frame probe, which reads the whole heap from then on.
    std::shared_ptr<py::object> older_ = std::make_shared<py::object>();
    std::vector<probes::TrackedSentinel> outerSentinels_; // the outer's, set aside
    std::vector<probes::TrackedSentinel> survivors_;      // this body's, handed to the outer
    std::optional<std::string> invalidBy_; // why the body cannot be measured, told before the reads
    Inherited inherited_;                  // what regions inside this one found and freed
    std::vector<probes::ForeignCollection> foreignAside_; // see setForeignAside()
    std::optional<bool>
        explainedBefore_; // the watch's setting when this region began (end() restores it)
};

// The frame-cycle probe's explanation of `objects`, as if a DEBUG_SAVEALL collection had saved
// them: its check, its findings and the cycle shapes of what holds no frame.
py::dict explain(const py::sequence& objects) {
    py::list kept(objects);     // keeps every object alive while the scanner reads it
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

// `leakgate-dsl ARGS`: the CLI, in this process, without the GIL (its threads and workers never
// touch this interpreter). Returns the exit code.
int runCli(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const std::string& arg : args)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const std::string module = base::loadedFrom().string();
    int code = 0;
    {
        py::gil_scoped_release released;
        code = cmd::runCli(static_cast<int>(args.size()), argv.data(), module);
        std::fflush(stdout);
        std::fflush(stderr);
    }
    return code;
}

// A worker of that CLI (lib/worker/client.cpp's boot code calls this): the sentinels' module is
// this one, under the name the harness imports. Never returns once the spec was read.
void workerMain(const std::string& specFd, const std::string& token, py::module_ self) {
    py::module_::import("sys").attr("modules")["_leakgate"] = self;
    try {
        worker::workerMainInInterpreter(specFd, token);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "leakgate worker: %s\n", error.what());
        std::fflush(stderr);
        ::_exit(static_cast<int>(ExitCode::kErrored));
    }
    ::_exit(0);
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
        .def("begin", &Region::begin,
             "Disable the collector, collect what is already garbage, start the probes.")
        .def("finish", &Region::finish,
             "The three reads: {'json': the result, 'report': its schema leakgate/1 document, "
             "'text': the report}.")
        .def("abandon", &Region::abandon, py::arg("reason"),
             "End without reading: every check is `error` with `reason`.");
    module.def(
        "region_active", [] { return !leakgate::package::g_regions.empty(); },
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
    module.def("_cli", &leakgate::package::runCli, py::arg("argv"),
               "Run the leakgate CLI with `argv` (argv[0] names the program; bytes, or str that "
               "encodes to UTF-8); the exit code.");
    module.def(
        "_worker_main",
        [module](const std::string& specFd, const std::string& token) {
            leakgate::package::workerMain(specFd, token, module);
        },
        py::arg("spec_fd"), py::arg("token"), "A worker of the CLI (internal).");
    module.def("add_harness_file", &leakgate::scanner::addHarnessFile, py::arg("file"),
               "Count frames of `file` as leakgate's own: findings name them only when the code under "
               "test keeps them.");
}

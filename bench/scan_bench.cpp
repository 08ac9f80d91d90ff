// P1 (docs/notes/performance.md): leakgate's scanner on a garbage heap of N objects against the one
// collection that found the heap (the floor: the collector already walks every object once), and
// against refcycle and objgraph on the same heap, in the same process.
//
//   leakgate_scan_bench [--python VENV_PYTHON] [--sizes 10000,100000,1000000] [--repeat 3]
//                       [--peers-up-to N] [--objgraph-up-to N]
//
// Every figure is printed as a ratio to the collection of the same heap, and to one traverse of
// the same garbage (a loop calling each object's tp_traverse with a visit that does nothing: the
// walk the collector does, the floor of any graph built from it). Each repetition builds the heap
// afresh; times are the best of the repetitions, ratios the median with min-max over them, each
// repetition's pair measured on the same heap (refcycle runs on every repetition up to
// --peers-up-to, objgraph on the first one).
#include "lib/python/environment.h"
#include "lib/python/interpreter.h"
#include "lib/scanner/components.h"
#include "lib/scanner/explain.h"
#include "lib/scanner/object_graph.h"

#include <pybind11/embed.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <malloc.h>
#include <time.h>

namespace {

namespace py = pybind11;
using namespace leakgate;

// CPU time of this thread: the machines these run on are shared, and a scan that waits for a
// core has not done more work. Both sides of every ratio are measured the same way.
struct Clock {
    using time_point = double;
    static double now() {
        timespec spec{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec);
        return static_cast<double>(spec.tv_sec) + static_cast<double>(spec.tv_nsec) * 1e-9;
    }
};

double secondsSince(double start) {
    return Clock::now() - start;
}

// VmRSS or VmHWM from /proc/self/status, in bytes.
std::int64_t statusBytes(const std::string& field) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.starts_with(field + ":")) return std::stoll(line.substr(field.size() + 1)) * 1024;
    }
    return 0;
}

// Resets VmHWM to the current RSS (Linux >= 4.0), so the peak of one phase can be read.
bool resetPeakRss() {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.flush();
    return static_cast<bool>(clear);
}

struct Options {
    std::string python;
    std::vector<long> sizes{10'000, 100'000, 1'000'000};
    int repeat = 3;
    long peersUpTo = 1'000'000;
    long objgraphUpTo = 1'000'000;
};

Options parse(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error("missing value after " + arg);
            return argv[++i];
        };
        if (arg == "--python") {
            options.python = value();
        } else if (arg == "--sizes") {
            options.sizes.clear();
            std::stringstream list(value());
            for (std::string item; std::getline(list, item, ',');)
                options.sizes.push_back(static_cast<long>(std::stod(item)));
        } else if (arg == "--repeat") {
            options.repeat = std::stoi(value());
        } else if (arg == "--peers-up-to") {
            options.peersUpTo = static_cast<long>(std::stod(value()));
        } else if (arg == "--objgraph-up-to") {
            options.objgraphUpTo = static_cast<long>(std::stod(value()));
        } else {
            throw std::runtime_error("unknown argument " + arg);
        }
    }
    return options;
}

struct ScanTimes {
    double collect = 0;    // the DEBUG_SAVEALL collection that found the heap
    double traverse = 0;   // one tp_traverse of every garbage object, visit doing nothing
    double scan = 0;       // from the collection's return to the finished explanation
    double graph = 0;      // of which: the object graph
    double components = 0; //           strongly connected components
    double explain = 0;    //           culprits, labels, pinned chains, bytes
    long garbage = 0;
    size_t edges = 0;
    size_t cyclic = 0;
    size_t findings = 0;
    std::int64_t peakBytes = 0; // RSS peak of the scan above the RSS before it
};

// Median and range of one ratio over the repetitions.
struct Spread {
    std::vector<double> values;
    void add(double value) { values.push_back(value); }
    std::string format(const char* unit = "x") const {
        if (values.empty()) return "-";
        std::vector<double> sorted(values);
        std::sort(sorted.begin(), sorted.end());
        size_t n = sorted.size();
        double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        return fmt::format("{:.2f}{} ({:.2f}-{:.2f}, n={})", median, unit, sorted.front(), sorted.back(),
                           n);
    }
};

struct Best {
    ScanTimes best;
    double bestTraverse = std::numeric_limits<double>::infinity();
    Spread scanVsTraverse, scanVsCollect, refcycleVsScan, bytesPerObject;
    double bestCollect = std::numeric_limits<double>::infinity();
    double bestScan = std::numeric_limits<double>::infinity();
    std::int64_t peakBytes = 0;
    double refcycle = -1, refcycleCollect = 0;
    double objgraph = -1, objgraphCollect = 0;
    long refcycleComponents = -1;
    size_t objgraphChain = 0;
};

// Builds the heap and collects it with DEBUG_SAVEALL: gc.garbage then holds it.
double buildAndCollect(py::module_& heap, py::module_& gc, long n) {
    gc.attr("disable")();
    gc.attr("set_debug")(0);
    py::list(gc.attr("garbage")).attr("clear")();
    gc.attr("collect")();
    heap.attr("build")(n);
    gc.attr("set_debug")(gc.attr("DEBUG_SAVEALL"));
    py::object collect = gc.attr("collect");
    auto started = Clock::now();
    PyObject* found = PyObject_CallNoArgs(collect.ptr());
    double seconds = secondsSince(started);
    if (!found) throw py::error_already_set();
    Py_DECREF(found);
    gc.attr("set_debug")(0);
    return seconds;
}

int visitNothing(PyObject*, void*) {
    return 0;
}

// The floor: what the collector's own walk costs on these objects, nothing recorded.
double traverseOnce(std::span<PyObject* const> objects) {
    auto started = Clock::now();
    for (PyObject* object : objects) {
        traverseproc traverse = Py_TYPE(object)->tp_traverse;
        if (PyObject_IS_GC(object) && traverse != nullptr) traverse(object, &visitNothing, nullptr);
    }
    return secondsSince(started);
}

ScanTimes scanOnce(py::module_& gc, double collect) {
    ScanTimes times;
    times.collect = collect;
    py::list garbage = gc.attr("garbage");
    // Memory freed before the scan (the previous repetition's, the peers') goes back to the
    // system first: else the scan reuses pages already resident and its growth reads as nothing.
    ::malloc_trim(0);
    resetPeakRss();
    std::int64_t before = statusBytes("VmRSS");
    auto started = Clock::now();
    // As the workloads do (probes/measurement.cpp): borrowed pointers out of gc.garbage.
    std::vector<PyObject*> saved;
    saved.reserve(static_cast<size_t>(PyList_GET_SIZE(garbage.ptr())));
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(garbage.ptr()); ++i)
        saved.push_back(PyList_GET_ITEM(garbage.ptr(), i));
    auto graph = scanner::ObjectGraph::buildOver(saved); // as explainGarbage does
    times.graph = secondsSince(started);
    auto step = Clock::now();
    auto components = scanner::Components::find(graph);
    times.components = secondsSince(step);
    step = Clock::now();
    scanner::FrameCycles cycles = scanner::explainFrameCycles(graph, components);
    times.explain = secondsSince(step);
    times.scan = secondsSince(started);
    times.peakBytes = statusBytes("VmHWM") - before;
    times.garbage = static_cast<long>(saved.size());
    times.edges = graph.edgeCount();
    for (scanner::ComponentId component = 0; component < components.count(); ++component)
        times.cyclic += components.isCyclic(graph, component) ? 1 : 0;
    times.findings = cycles.findings.size();
    // After the scan, on the same pointers: neither side runs on caches the other warmed (the
    // collection walked the heap just before the scan, as it does in a probe).
    times.traverse = traverseOnce(saved);
    if (!cycles.findings.empty() &&
        cycles.findings.front().locals != std::vector<std::string>{"cur_frame"}) {
        throw std::runtime_error("the scan did not name the culprit's local `cur_frame`: " +
                                 cycles.findings.front().summary);
    }
    return times;
}

// refcycle: what cycles_created_by does once its collection has returned (an ObjectGraph of the
// saved garbage), then its strongly connected components.
constexpr const char* kRefcycle = R"(
import gc, time, refcycle
objects = gc.garbage[:]
started = time.thread_time()
graph = refcycle.ObjectGraph(objects)
components = graph.strongly_connected_components()
seconds = time.thread_time() - started
count = sum(1 for c in components if len(c) > 1)
del graph, components, objects
)";

// objgraph: the chain of referrers that keeps a sentinel (a local of `prepare`) alive, searched
// from the sentinel up to a module. gc.garbage itself is ignored, as it holds everything.
constexpr const char* kObjgraph = R"(
import gc, time, objgraph, garbage_heap
sentinel = next(o for o in gc.garbage if type(o) is garbage_heap.Payload)
started = time.thread_time()
chain = objgraph.find_backref_chain(sentinel, objgraph.is_proper_module,
                                    extra_ignore=(id(gc.garbage),))
seconds = time.thread_time() - started
length = len(chain)
del chain, sentinel
)";

std::string ratio(double value, double floor) {
    return fmt::format("{:.2f}x", value / floor);
}

} // namespace

int main(int argc, char** argv) {
    Options options = parse(argc, argv);
    auto env = python::queryEnvironment(options.python.empty() ? python::buildPythonExecutable()
                                                               : options.python);
    python::Interpreter interpreter(env, {"leakgate_scan_bench"});
    py::module_::import("sys").attr("path").attr("insert")(0, LEAKGATE_SOURCE_DIR "/bench");
    py::module_ gc = py::module_::import("gc");
    py::module_ heap = py::module_::import("garbage_heap");
    bool havePeers = true;
    try {
        py::module_::import("refcycle");
        py::module_::import("objgraph");
    } catch (const py::error_already_set&) {
        havePeers = false;
        std::fprintf(stderr, "refcycle or objgraph not importable: run bench/run_all.sh (a venv with "
                             "both) or pass --python VENV/bin/python\n");
    }
    fmt::print("# P1 scan: CPython {} ({}), {:.0f} objects per heap unit, best of {}; thread CPU "
               "time\n",
               env.version, env.executable, heap.attr("calibrate")().cast<double>(), options.repeat);

    std::vector<std::pair<long, Best>> results;
    for (long n : options.sizes) {
        Best best;
        for (int rep = 0; rep < options.repeat; ++rep) {
            double collect = buildAndCollect(heap, gc, n);
            ScanTimes times = scanOnce(gc, collect);
            best.bestCollect = std::min(best.bestCollect, times.collect);
            if (times.scan < best.bestScan) {
                best.bestScan = times.scan;
                best.best = times;
            }
            best.peakBytes = std::max(best.peakBytes, times.peakBytes);
            best.bestTraverse = std::min(best.bestTraverse, times.traverse);
            best.scanVsTraverse.add(times.scan / times.traverse);
            best.scanVsCollect.add(times.scan / times.collect);
            best.bytesPerObject.add(static_cast<double>(times.peakBytes) /
                                    std::max<long>(1, times.garbage));
            // refcycle on every repetition's heap, paired with that repetition's scan.
            if (havePeers && n <= options.peersUpTo) {
                py::dict scope;
                scope["__builtins__"] = py::module_::import("builtins");
                py::exec(kRefcycle, scope);
                double seconds = scope["seconds"].cast<double>();
                best.refcycleVsScan.add(seconds / times.scan);
                if (best.refcycle < 0 || seconds < best.refcycle) {
                    best.refcycle = seconds;
                    best.refcycleCollect = collect;
                }
                best.refcycleComponents = scope["count"].cast<long>();
            }
            if (rep == 0 && havePeers && n <= options.objgraphUpTo) {
                best.objgraphCollect = collect;
                py::dict scope;
                scope["__builtins__"] = py::module_::import("builtins");
                py::exec(kObjgraph, scope);
                best.objgraph = scope["seconds"].cast<double>();
                best.objgraphChain = scope["length"].cast<size_t>();
            }
            gc.attr("set_debug")(0);
            py::list(gc.attr("garbage")).attr("clear")();
            gc.attr("collect")();
        }
        const ScanTimes& t = best.best;
        fmt::print(
            "N={:<8} garbage {:>8} objects, {:>8} edges, {:>6} cyclic components, {} finding(s)\n", n,
            t.garbage, t.edges, t.cyclic, t.findings);
        fmt::print("  collection (DEBUG_SAVEALL, the floor) {:8.1f} ms   best of {}\n",
                   best.bestCollect * 1e3, options.repeat);
        fmt::print("  one traverse of the garbage (floor)   {:8.1f} ms   best of {}\n",
                   best.bestTraverse * 1e3, options.repeat);
        fmt::print("  leakgate scan                         {:8.1f} ms   {} of the collection"
                   "   (graph {:.1f}, components {:.1f}, explain {:.1f} ms)\n",
                   best.bestScan * 1e3, ratio(best.bestScan, best.bestCollect), t.graph * 1e3,
                   t.components * 1e3, t.explain * 1e3);
        fmt::print("  scan vs one traverse of the garbage   {}\n", best.scanVsTraverse.format());
        fmt::print("  scan vs the collection                {}\n", best.scanVsCollect.format());
        fmt::print("  scan peak RSS                         {:8.1f} MiB  {:.0f} bytes per garbage object"
                   "; per repetition {}\n",
                   best.peakBytes / 1048576.0,
                   static_cast<double>(best.peakBytes) / std::max<long>(1, t.garbage),
                   best.bytesPerObject.format(" B"));
        if (best.refcycle >= 0) {
            fmt::print("  refcycle ObjectGraph + SCCs           {:8.1f} ms   {} of its collection; "
                       "{:.0f}x leakgate's best scan ({} SCCs of 2 or more)\n",
                       best.refcycle * 1e3, ratio(best.refcycle, best.refcycleCollect),
                       best.refcycle / best.bestScan, best.refcycleComponents);
            fmt::print("  refcycle vs the scan of the same heap {}\n", best.refcycleVsScan.format());
        }
        if (best.objgraph >= 0) {
            fmt::print("  objgraph find_backref_chain           {:8.1f} ms   {} of its collection; "
                       "{:.0f}x leakgate's scan (chain of {}: no module reaches cyclic garbage)\n",
                       best.objgraph * 1e3, ratio(best.objgraph, best.objgraphCollect),
                       best.objgraph / best.bestScan, best.objgraphChain);
        }
        std::fflush(stdout);
    }
    return 0;
}

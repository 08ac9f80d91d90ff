// P4 (docs/notes/performance.md): what the allocation probe (probes/allocation_counter.cpp) costs a
// pack loop. The loop is the launch workload's: `calls` calls of a callable from C, here
// `T(v).__c_pointers__()` of the reference packer and of the uncached model
// (fixtures/targets/launch/uncached_packer.py), gc off. Three states, in this order in one
// process (the hooks cannot be taken out once in): `off` (no hooks), `hooks` (installed, not
// counting: every worker after its first launch run), `counting` (inside a measured region).
//
//   leakgate_probe_bench [--benchmark_repetitions=5 ...]
//
// After Google Benchmark's own table it prints each state as a ratio to `off`, best of the
// repetitions.
#include "leakgate/allocations.h"
#include "lib/python/environment.h"
#include "lib/python/interpreter.h"

#include <benchmark/benchmark.h>
#include <pybind11/embed.h>

#include <fmt/format.h>

#include <limits>
#include <map>
#include <string>

#include <unistd.h>

namespace {

namespace py = pybind11;
using leakgate::probes::AllocationCounter;

constexpr const char* kLoad = R"(
import gc, importlib.util, sys
sys.path.insert(0, source + "/lib/data/reference")
import leakgate_reference
spec = importlib.util.spec_from_file_location(
    "uncached_packer", source + "/fixtures/targets/launch/uncached_packer.py")
uncached = importlib.util.module_from_spec(spec)
spec.loader.exec_module(uncached)
def launch(module, name, value):
    T = module.scalar_types[name]
    return lambda: T(value).__c_pointers__()
calls = {
    "reference": launch(leakgate_reference, "Int32", 7),
    "uncached": launch(uncached, "Int32", 7),
}
gc.disable()
)";

py::dict* g_scope = nullptr; // made once the interpreter runs

enum class Probe { kOff, kHooks, kCounting };

void packLoop(benchmark::State& state, const char* target, Probe probe) {
    PyObject* call = (*g_scope)["calls"][py::str(target)].ptr(); // Borrowed reference
    if (probe != Probe::kOff) AllocationCounter::install();
    if (probe == Probe::kCounting) AllocationCounter::start();
    for (auto _ : state) {
        PyObject* result = PyObject_CallNoArgs(call);
        if (!result) {
            state.SkipWithError("the call raised");
            break;
        }
        Py_DECREF(result);
    }
    if (probe == Probe::kCounting) {
        auto counts = AllocationCounter::stop();
        state.counters["allocs/call"] =
            static_cast<double>(counts.allocations) /
            static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations()));
    }
    // The uncached model leaves cyclic garbage with gc off; free it outside the timed loop.
    py::module_::import("gc").attr("collect")();
}

// Keeps the best time per benchmark name across repetitions.
class RatioReporter : public benchmark::ConsoleReporter {
  public:
    RatioReporter() : ConsoleReporter(::isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& run : runs) {
            if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
            double perCall = run.GetAdjustedCPUTime(); // CPU time: the machines are shared
            auto [entry, added] = best_.try_emplace(run.run_name.function_name, perCall);
            if (!added) entry->second = std::min(entry->second, perCall);
        }
    }
    const std::map<std::string, double>& best() const { return best_; }

  private:
    std::map<std::string, double> best_;
};

} // namespace

// Registered in this order on purpose: `off` must run before the hooks go in.
BENCHMARK_CAPTURE(packLoop, reference_off, "reference", Probe::kOff);
BENCHMARK_CAPTURE(packLoop, uncached_off, "uncached", Probe::kOff);
BENCHMARK_CAPTURE(packLoop, reference_hooks, "reference", Probe::kHooks);
BENCHMARK_CAPTURE(packLoop, uncached_hooks, "uncached", Probe::kHooks);
BENCHMARK_CAPTURE(packLoop, reference_counting, "reference", Probe::kCounting);
BENCHMARK_CAPTURE(packLoop, uncached_counting, "uncached", Probe::kCounting);

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    auto env = leakgate::python::queryEnvironment(leakgate::python::buildPythonExecutable());
    leakgate::python::Interpreter interpreter(env, {"leakgate_probe_bench"});
    py::dict scope;
    g_scope = &scope;
    scope["__builtins__"] = py::module_::import("builtins");
    scope["source"] = LEAKGATE_SOURCE_DIR;
    py::exec(kLoad, scope);

    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    const auto& best = reporter.best();
    fmt::print("\n# P4 probe overhead: CPython {}; CPU time per call, best of the repetitions, ratio to "
               "`off`\n",
               env.version);
    for (const char* target : {"reference", "uncached"}) {
        auto off = best.find(fmt::format("packLoop/{}_off", target));
        if (off == best.end()) continue;
        for (const char* state : {"off", "hooks", "counting"}) {
            auto it = best.find(fmt::format("packLoop/{}_{}", target, state));
            if (it == best.end()) continue;
            fmt::print("{:<10} {:<9} {:8.1f} ns/call  {:.3f}x\n", target, state, it->second,
                       it->second / off->second);
        }
    }
    g_scope = nullptr;
    benchmark::Shutdown();
    return 0;
}

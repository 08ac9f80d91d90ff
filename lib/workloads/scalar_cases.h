// What the launch-path workloads (launch.cpp, device.cpp) share: the target's scalar types, the
// values that probe each encoding rule, and the bytes each must pack to.
#pragma once

#include "leakgate/allocations.h"
#include "leakgate/report.h"
#include "lib/workloads/encodings.h"
#include "lib/workloads/spec.h"

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace leakgate::workloads {

// repr, but a NaN shows its bits: payloads are what the encodings check.
std::string valueRepr(pybind11::handle value);

// Appends every one of `checks` as skipped for `reason`.
void skipAll(WorkloadResult& result, const std::vector<std::string>& checks, const std::string& reason);

// The target's scalar types. Empty when the target cannot be imported (then `result.error`
// says why) or has none (then `checks` are skipped with that reason).
std::optional<pybind11::dict> targetTypesOrSkip(WorkloadResult& result, pybind11::module_& harness,
                                                const WorkerSpec& spec,
                                                const std::vector<std::string>& checks);

// The reference runtime's scalar types, imported and sealed before any of the target's code runs
// (docs/reference/trust.md): a workload measures the reference first, so nothing the target does
// once loaded reaches the figures it is judged against. Empty, with `result.error` said, when the
// reference cannot be imported or is not leakgate's own.
std::optional<pybind11::dict> referenceTypesOrError(WorkloadResult& result, pybind11::module_& harness);

// The reference's loops (`body`), measured as a measurement of their own with the gc guard before
// the target is imported. False, with `result.error` said, when that measurement was not valid:
// then there is no baseline to judge the target against.
bool measureReferenceFirst(WorkloadResult& result, const std::function<void()>& body,
                           const std::string& checkPrefix);

// Python values that probe each rule of the type's encoding.
std::vector<pybind11::object> probeValues(const ScalarType& type);

// The encoding of `value` as `type` (docs/definitions.md, "Encodings").
std::vector<std::uint8_t> expectedBytes(const ScalarType& type, pybind11::handle value);

// How the launch-path loops run: `runs` measured runs of `calls` calls after `warmup` calls.
struct LoopSettings {
    std::int64_t calls;
    int runs;
    std::int64_t warmup;
};
LoopSettings loopSettings(const WorkerSpec& spec);

inline constexpr double kEpsilonPerCall = 0.01; // below this a per-call difference is noise

// One measured run of calls: allocator calls and net blocks per call, then the objects per call
// that one DEBUG_SAVEALL collection finds (the calls' cyclic garbage; gc is off throughout).
struct Run {
    double allocations = 0;
    double netBlocks = 0;
    double cyclicGarbage = 0;
};
Run perCall(const probes::AllocationCounts& counts, std::int64_t cyclicGarbage, std::int64_t calls);

// A loop's Run and what stayed after it: `retained`, the net blocks per call left once the loop's
// cyclic garbage was collected (memory kept reachable, not garbage).
struct CountedRun {
    Run run;
    double retained = 0;
};
// a's figures less b's: a loop net of its baseline loop (the same loop without the work measured).
CountedRun minus(const CountedRun& a, const CountedRun& b);
// The figures of a loop counted into `loop`: then its cyclic garbage, collected inside a second
// allocation region whose frees net the garbage off what the loop kept.
CountedRun afterLoop(const probes::AllocationCounts& loop, std::int64_t calls);
// `body()` called `calls` times from C (AllocationCounter::countCalls), then afterLoop. Throws
// py::error_already_set when a call raised.
CountedRun countedRun(pybind11::handle body, std::int64_t calls);

// Collects the youngest generation with DEBUG_SAVEALL and returns how many objects it saved (then
// frees them). Call with gc disabled, right after the measured calls.
std::int64_t collectYoungGarbage();

// The shapes of the cycles `calls` calls of `call` leave, explained by the scanner, as a finding
// holds them (the calls run with DEBUG_SAVEALL; what they leave is freed before it returns).
std::vector<CycleShapeCount> cycleShapesLeftBy(pybind11::handle call, std::int64_t calls);

// What `calls` more calls of `body` leave alive after a full collection, per call: the types
// (most first: the harness's kept_types) and what holds the newest object of two of them, a
// function of leakgate's units module first (a decorated function kept alive says the most), then
// the commonest (probes::holdersOf, as far as the container: probes::routeShape). Throws
// py::error_already_set when a call raised.
struct KeptAlive {
    std::vector<KeptType> types;
    std::vector<KeptHolder> holders;
};
KeptAlive keptAliveBy(pybind11::handle harness, pybind11::handle body, std::int64_t calls);
// The finding's typed fields, and its summary's tail for a person: "; objects left alive per
// launch: 2.00 `Kernel`, ...; `Kernel` held by sys.modules['m'].kernels[i]".
void addKept(Finding& finding, KeptAlive kept, const std::string& perWhat);

// A per-call figure the launch-path loops judge, and how a reason names it.
struct Metric {
    const char* check; // the check is <workload>-<check>
    const char* what;
    double Run::*field;
};
inline constexpr Metric kAllocationsMetric{"allocations", "allocator calls", &Run::allocations};
inline constexpr Metric kNetBlocksMetric{"net-blocks", "net blocks", &Run::netBlocks};
inline constexpr Metric kCyclicGarbageMetric{"cyclic-garbage", "objects entering cyclic garbage",
                                             &Run::cyclicGarbage};

// What every per-call loop (launch, device, launch-real, decorations) keeps per check over its
// cases: the highest per-call figure of any case, each case counted by its lowest run (the
// check's amount, flagged or not), how many cases were flagged, and the one that exceeds its limit
// by most.
class MetricTally {
  public:
    struct Worst {
        double low = 0;    // the case's figure: its lowest run
        double excess = 0; // over what it was compared with
        std::string reason;
        pybind11::object call; // what made the worst case, for explaining it further
    };
    // Adds one case's runs of the figure `check` judges. The case is flagged when every run
    // exceeds `compared + margin` (the reference's worst run and the noise margin, or 0 and a
    // rule); `describe(low, compared)` words the reason of a new worst case. True when flagged.
    bool add(const std::string& check, const std::vector<double>& runs, double compared, double margin,
             const std::function<std::string(double low, double compared)>& describe,
             pybind11::object call = {});
    // The launch rule on one field of a Run: flagged only when every measured run of the target
    // exceeds the reference's worst run by the noise margin (the rule of CPython's refleak hunter:
    // one noisy run does not make a finding).
    bool add(const Metric& metric, const std::vector<Run>& target, const std::vector<Run>& reference,
             const std::function<std::string(double low, double referenceHigh)>& describe,
             pybind11::object call = {});
    // The highest figure in thousandths of a call, as baselines compare it.
    std::int64_t amount(const std::string& check) const;
    std::int64_t amount(const Metric& metric) const { return amount(metric.check); }
    // Null when no case flagged the check.
    const Worst* worst(const std::string& check) const;
    const Worst* worst(const Metric& metric) const { return worst(metric.check); }
    int flaggedCases(const std::string& check) const;
    int flaggedCases(const Metric& metric) const { return flaggedCases(metric.check); }

  private:
    std::map<std::string, double> highest_;
    std::map<std::string, Worst> worst_;
    std::map<std::string, int> flagged_;
};

// The first three of a list of {type, value, expected, <gotKey>} mismatches, for a check's reason:
// "Float16(-0.0)<gotVerb> 0x0000, want 0x8000; ...".
std::string firstMismatches(const nlohmann::json& mismatches, const char* gotKey, const char* gotVerb);

// Per-call figures of each run, as the report's details hold them.
nlohmann::json runsJson(const std::vector<Run>& runs);
// The same with `retained_per_call`.
nlohmann::json countedRunsJson(const std::vector<CountedRun>& runs);

} // namespace leakgate::workloads

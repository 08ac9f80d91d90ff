// The real-launch workload: kernels the DSL compiled, launched the way a user's loop launches
// them. The target hands them over with `launch_cases(device)` (lib/workloads/harness.py says the
// protocol); each case is one launch and the factory of its arguments. Per launch, net of the same
// loop handing the same fresh arguments to a no-op:
//   launch-real-net-blocks:      blocks still allocated when the loop ends (gc is off);
//   launch-real-cyclic-garbage:  objects one DEBUG_SAVEALL collection finds;
//   launch-real-retained:        blocks still allocated after that collection: kept, not garbage.
// The allocator calls per launch are reported with them, not judged: a launch through Python
// allocates, and the reference's cached packer hardly does. Each check is judged by the every-run rule
// against the reference launch in the same worker: on CUDA, leakgate's echo kernel through
// cuLaunchKernel with the reference runtime's packer, measured before the target is imported; on the
// CPU (a DSL that launches there, and says so in `launch_devices`), a launch that keeps nothing. Without
// a GPU, and with no CPU launch, every check is `skip` with the driver's reason.
#include "lib/workloads/workload.h"

#include "leakgate/allocations.h"
#include "leakgate/errors.h"
#include "lib/python/compat.h"
#include "lib/report/checks.h"
#include "lib/workloads/echo_kernels.h"
#include "lib/workloads/harness_loader.h"
#include "lib/workloads/launch_protocol.h"
#include "lib/workloads/scalar_cases.h"
#include "probes/probe.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

namespace leakgate::workloads {
namespace {

namespace py = pybind11;
using nlohmann::json;

const std::vector<std::string> kChecks = report::checksOf("launch-real");
constexpr Metric kMetrics[] = {kNetBlocksMetric, kCyclicGarbageMetric};

// The reference's loop: per launch, the reference packer on one Int32 and one echo-kernel launch
// with it (a launch that packs through a clean packer and keeps nothing).
struct EchoReference {
    std::unique_ptr<EchoKernels> kernels;
    std::unique_ptr<cuda::DeviceBuffer> out;
    py::object pack; // T(v).__c_pointers__ of the reference's Int32

    CountedRun run(std::int64_t calls) const {
        probes::AllocationCounter::start();
        for (std::int64_t i = 0; i < calls; ++i) {
            python::OwnedRef pointers = python::own(PyObject_CallNoArgs(pack.ptr()));
            python::OwnedRef first =
                pointers ? python::own(PySequence_GetItem(pointers.get(), 0)) : python::OwnedRef();
            if (!first) {
                probes::AllocationCounter::stop();
                throw py::error_already_set();
            }
            kernels->launch("Int32", pointerAddress(first.get()), out->pointer());
        }
        probes::AllocationCounts counts = probes::AllocationCounter::stop();
        kernels->synchronize();
        return afterLoop(counts, calls);
    }
};

constexpr const char* kRetainedWhat = "blocks still allocated after a full collection";
constexpr const char* kRetainedCheck = "retained"; // its key in the tally

bool anyShapeHolds(const std::vector<CycleShapeCount>& shapes, std::string_view type) {
    return std::ranges::any_of(shapes, [&](const CycleShapeCount& shape) {
        return shape.types.find(type) != std::string::npos ||
               shape.cycle.find(type) != std::string::npos;
    });
}

// The fix for a launch's cycles, from what they are made of: a nested function that reaches
// itself through its closure, the ctypes objects a packer makes, or neither known.
std::string launchCycleFix(const std::vector<CycleShapeCount>& shapes) {
    if (anyShapeHolds(shapes, "cell") && anyShapeHolds(shapes, "function")) {
        return "Leave no reference cycle per launch: a function defined inside the launch path that "
               "refers to itself, or to a sibling that refers back (a recursive helper, closures "
               "sharing cells), is a cycle of function and cell objects made on every call, and it "
               "keeps everything its closure holds (the launch's context, its arguments) until the "
               "collector runs. Define the helpers once, outside the call (module level, or methods), "
               "or break the cycle before returning (`del` the helper).";
    }
    if (anyShapeHolds(shapes, "_objects") || anyShapeHolds(shapes, "c_void_p") ||
        anyShapeHolds(shapes, "LP_")) {
        return "Leave no reference cycle per launch: ctypes.cast(pointer(x), c_void_p) stores the "
               "pointer "
               "in its own _objects dict (CPython bpo-12836); build the launch's argument pointers "
               "without it and reuse what depends only on the kernel and the argument types.";
    }
    return "Leave no reference cycle per launch: under gc.disable() every cycle a launch makes is a "
           "leak; the cycle shapes name the objects that refer to each other.";
}

} // namespace

WorkloadResult runRealLaunch(const WorkerSpec& spec) {
    WorkloadResult result = newResult(spec, "launch-real");
    py::module_ harness = loadHarness();
    probes::AllocationCounter::install();
    const auto [calls, runs, warmup] = loopSettings(spec);
    // On CUDA, the reference's loop first, measured in full before any of the target's code runs
    // (as the launch workload does): what the target does once loaded (a patched ctypes, a slowed
    // packer) cannot reach the figures it is judged against. Every case is judged against these
    // runs: the reference's launch is the same in each.
    cuda::Driver& driver = cuda::Driver::get();
    const std::string image = driver.available() ? echoKernelImage() : "";
    EchoReference reference;
    std::vector<CountedRun> referenceRuns;
    if (!image.empty()) {
        reference.kernels = std::make_unique<EchoKernels>(image); // CudaError: the error
        reference.out = std::make_unique<cuda::DeviceBuffer>(64);
        std::optional<py::dict> referenceTypes = referenceTypesOrError(result, harness);
        if (!referenceTypes) return result;
        reference.pack = harness.attr("reference_launch_call")(*referenceTypes);
        const bool measured = measureReferenceFirst(
            result,
            [&] {
                reference.run(warmup);
                for (int run = 0; run < runs; ++run)
                    referenceRuns.push_back(reference.run(calls));
            },
            "launch-real-");
        if (!measured) return result;
    }
    py::object target;
    std::vector<std::string> devices;
    try {
        py::tuple prepared = harness.attr("prepare_real_launch")(targetSpec(spec));
        target = prepared[0];
        for (py::handle device : prepared[1])
            devices.push_back(device.cast<std::string>());
    } catch (py::error_already_set& error) {
        result.error = targetImportError(error);
        return result;
    }
    if (devices.empty()) {
        skipAll(result, kChecks, kNoLaunchCasesReason);
        return result;
    }
    const bool onCuda = driver.available() && std::ranges::count(devices, "cuda") > 0;
    const bool onCpu = !onCuda && std::ranges::count(devices, "cpu") > 0;
    result.details["cuda"] = {{"available", driver.available()},
                              {"reason", driver.unavailableReason()},
                              {"device", driver.device().name}};
    if (!onCuda && !onCpu) {
        skipAll(result, kChecks,
                fmt::format("the target launches on CUDA only, and {}", driver.unavailableReason()));
        return result;
    }
    const std::string device = onCuda ? "cuda" : "cpu";
    result.details["device"] = device;

    if (onCuda && image.empty()) {
        skipAll(result, kChecks,
                "this build has no echo kernel, the reference launch: nvcc was not found when it "
                "was configured");
        return result;
    }
    // The DSL compiles here, before the probes' first read; a case's warm-up launches it first.
    py::list bodies;
    try {
        bodies = harness.attr("real_launch_cases")(target, device);
    } catch (py::error_already_set& error) {
        result.error = WorkloadError{
            fmt::format("the target's launch_cases({:?}) failed: {}", device, error.what()),
            std::nullopt, ""};
        return result;
    }
    const std::vector<CountedRun> none; // on the CPU: a launch that keeps nothing
    const std::vector<CountedRun>& against = onCuda ? referenceRuns : none;
    probes::ProbeList probes;
    probes.push_back(probes::makeGcGuardProbe());
    json cases = json::array();
    MetricTally tally;
    int caseCount = 0;
    measure(
        result, probes,
        [&] {
            for (py::handle entry : bodies) {
                const std::string name = entry[py::int_(0)].cast<std::string>();
                py::object launch = entry[py::int_(1)], noop = entry[py::int_(2)];
                try {
                    countedRun(launch, warmup); // the case's first launches: the DSL's code raises here
                } catch (py::error_already_set& error) {
                    const std::string where = raisedAt(error);
                    const std::string raised =
                        py::str(error.type().attr("__name__")).cast<std::string>() + ": " +
                        py::str(error.value()).cast<std::string>();
                    result.error =
                        WorkloadError{fmt::format("the target's launch case `{}` raised {}{}", name,
                                                  raised, where.empty() ? "" : " " + where),
                                      std::nullopt, ""};
                    return;
                }
                countedRun(noop, warmup);
                std::vector<CountedRun> net;
                for (int run = 0; run < runs; ++run) { // interleaved: drift hits both
                    CountedRun launched = countedRun(launch, calls);
                    if (onCuda) reference.kernels->synchronize();
                    CountedRun baseline = countedRun(noop, calls);
                    net.push_back(minus(launched, baseline));
                }
                ++caseCount;
                json record = {{"case", name},
                               {"target", countedRunsJson(net)},
                               {"reference", onCuda ? countedRunsJson(against) : json(nullptr)},
                               {"flagged", json::array()}};
                std::vector<Run> netRuns, referencePlain;
                for (const CountedRun& run : net)
                    netRuns.push_back(run.run);
                for (const CountedRun& run : against)
                    referencePlain.push_back(run.run);
                const std::string referenceName =
                    onCuda ? "the echo kernel with the reference packer" : "a launch that keeps nothing";
                for (const Metric& metric : kMetrics) {
                    auto describe = [&](double low, double referenceHigh) {
                        return fmt::format("{}: {:.2f} {} per launch (reference, {}: {:.2f}) in every "
                                           "one of {} runs of {} launches; {:.1f} allocator calls per "
                                           "launch",
                                           name, low, metric.what, referenceName, referenceHigh, runs,
                                           calls, net.front().run.allocations);
                    };
                    if (tally.add(metric, netRuns, referencePlain, describe, launch))
                        record["flagged"].push_back(metric.check);
                }
                // Retained: the same rule on the fourth figure.
                std::vector<double> retained;
                for (const CountedRun& run : net)
                    retained.push_back(run.retained);
                double referenceHigh = 0;
                for (const CountedRun& run : against)
                    referenceHigh = std::max(referenceHigh, run.retained);
                auto describeRetained = [&](double low, double compared) {
                    return fmt::format(
                        "{}: {:.2f} {} per launch (reference, {}: {:.2f}) in every one of {} runs of "
                        "{} launches",
                        name, low, kRetainedWhat, referenceName, compared, runs, calls);
                };
                if (tally.add(kRetainedCheck, retained, referenceHigh, kEpsilonPerCall, describeRetained,
                              launch))
                    record["flagged"].push_back("retained");
                cases.push_back(std::move(record));
            }
        },
        "launch-real-");
    result.details["cases"] = std::move(cases);
    if (!result.ok() && caseCount == 0) return result;

    // What the cycles are: the worst case of cyclic garbage launched 100 times more, after the
    // measurement. They explain the net blocks too, when both fail: blocks only the collector frees.
    std::vector<CycleShapeCount> cycles;
    std::string cyclesNotDescribed;
    if (const MetricTally::Worst* worst = tally.worst(kCyclicGarbageMetric)) {
        try {
            cycles = cycleShapesLeftBy(worst->call, 100);
        } catch (py::error_already_set& error) {
            cyclesNotDescribed = fmt::format(" (its cycles not described: {})", error.what());
        }
    }
    for (const Metric& metric : kMetrics) {
        const std::string check = std::string("launch-real-") + metric.check;
        const MetricTally::Worst* worst = tally.worst(metric);
        if (!worst) {
            result.checks.push_back(
                {check, Status::kPass,
                 fmt::format("no more {} per launch than the reference in any of {} cases on {}",
                             metric.what, caseCount, device),
                 tally.amount(metric)});
            continue;
        }
        result.checks.push_back(
            {check, Status::kFail,
             fmt::format("{} of {} cases exceed the reference on {}; worst {}",
                         tally.flaggedCases(metric), caseCount, device, worst->reason),
             tally.amount(metric)});
        const bool isCycles = std::string(metric.check) == "cyclic-garbage";
        Finding finding;
        finding.kind = check;
        finding.summary = worst->reason + (isCycles ? cyclesNotDescribed : "");
        // The same cycles on both findings, so that the net blocks' culprit is the cycle (the same
        // from release to release), not whichever case came out worst by a hundredth.
        finding.cycleShapes = cycles;
        if (isCycles) {
            finding.fix = launchCycleFix(cycles);
        } else if (!cycles.empty()) {
            finding.fix = "Whatever a launch allocates must be freed by reference counting when it "
                          "returns: the cycles launch-real-cyclic-garbage describes hold blocks only "
                          "the collector frees; what stays after they are broken is a cache or a "
                          "list that grows with every launch.";
        } else {
            finding.fix = "Whatever a launch allocates must be freed by reference counting when it "
                          "returns: a cache or a list that grows with every launch.";
        }
        result.findings.push_back(std::move(finding));
    }
    const std::int64_t retainedAmount = tally.amount(kRetainedCheck);
    const MetricTally::Worst* retainedWorst = tally.worst(kRetainedCheck);
    if (!retainedWorst) {
        result.checks.push_back(
            {"launch-real-retained", Status::kPass,
             fmt::format("no more blocks kept per launch after a full collection than the reference "
                         "in any of {} cases on {}",
                         caseCount, device),
             retainedAmount});
    } else {
        const std::string& reason = retainedWorst->reason;
        result.checks.push_back(
            {"launch-real-retained", Status::kFail,
             fmt::format("{} of {} cases keep blocks per launch on {}; worst {}",
                         tally.flaggedCases(kRetainedCheck), caseCount, device, reason),
             retainedAmount});
        Finding finding;
        finding.kind = "launch-real-retained";
        finding.summary = reason;
        try { // what stays, and what holds it: the worst case launched 100 times more
            addKept(finding, keptAliveBy(harness, retainedWorst->call, 100), "launch");
        } catch (py::error_already_set& error) {
            finding.summary += fmt::format(" (what stays not counted: {})", error.what());
        }
        finding.fix = "Whatever a launch keeps must be bounded: a cache keyed by something fresh on "
                      "every call (an argument object, its id) grows with every launch.";
        result.findings.push_back(std::move(finding));
    }
    return result;
}

} // namespace leakgate::workloads

// The device workload: a real launch. For each scalar type of the target, the pointer its packer
// returns for `T(v).__c_pointers__()` becomes the scalar's kernelParams entry of cuLaunchKernel on
// an echo kernel (fixtures/kernels/echo_scalars.cu) that writes back what it received:
//   device-echo:            what the kernel received is the type's encoding, for every probe value;
//   device-allocations:     allocator calls per launch (packing and launching) beyond the reference;
//   device-cyclic-garbage:  objects per launch left in cyclic garbage beyond the reference.
// Without a driver, a device or an echo kernel image, every check is `skip` with the reason.
#include "lib/workloads/workload.h"

#include "leakgate/allocations.h"
#include "leakgate/errors.h"
#include "lib/python/compat.h"
#include "lib/report/checks.h"
#include "lib/workloads/echo_kernels.h"
#include "lib/workloads/harness_loader.h"
#include "lib/workloads/scalar_cases.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>

namespace leakgate::workloads {
namespace {

namespace py = pybind11;
using nlohmann::json;

const std::vector<std::string> kChecks = report::checksOf("device");

constexpr Metric kMetrics[] = {kAllocationsMetric, kCyclicGarbageMetric};

} // namespace

WorkloadResult runDevice(const WorkerSpec& spec) {
    WorkloadResult result = newResult(spec, "device");
    cuda::Driver& driver = cuda::Driver::get();
    result.details["cuda"] = {{"library", driver.device().library},
                              {"available", driver.available()},
                              {"reason", driver.unavailableReason()},
                              {"device", driver.device().name},
                              {"driver_version", driver.device().driverVersion}};
    if (!driver.available()) {
        skipAll(result, kChecks, driver.unavailableReason());
        return result;
    }
    const std::string image = echoKernelImage();
    if (image.empty()) {
        skipAll(result, kChecks,
                "this build has no echo kernel: nvcc was not found when it was configured");
        return result;
    }
    py::module_ harness = loadHarness();
    // The reference first, its launch loops measured in full before any of the target's code runs
    // (as the launch workload does): what the target does once loaded (a patched ctypes, a slowed
    // packer) cannot reach the figures it is judged against.
    std::optional<py::dict> reference = referenceTypesOrError(result, harness);
    if (!reference) return result;
    py::dict referenceTypes = *reference;
    probes::AllocationCounter::install();
    const auto [calls, runs, warmup] = loopSettings(spec);

    EchoKernels kernels(image); // CudaError: the worker reports it as the workload's error
    cuda::DeviceBuffer out(64);
    // The launch form a DSL uses, T(v).__c_pointers__(), on the type's second representative value.
    auto packOf = [&](py::dict types, const ScalarType& type) {
        py::object value = harness.attr("representative_values")(type.name)[py::int_(1)];
        return py::object(harness.attr("launch_calls")(types[py::str(type.name)], value)[py::int_(0)]);
    };
    std::map<std::string, std::vector<Run>> referenceRuns;
    const bool measured = measureReferenceFirst(
        result,
        [&] {
            for (const ScalarType& type : scalarTypes()) {
                if (!referenceTypes.contains(type.name) || !kernels.has(type.name)) continue;
                py::object pack = packOf(referenceTypes, type);
                launchRun(kernels, type.name, pack.ptr(), out.pointer(), warmup);
                std::vector<Run>& each = referenceRuns[type.name];
                for (int run = 0; run < runs; ++run)
                    each.push_back(launchRun(kernels, type.name, pack.ptr(), out.pointer(), calls));
            }
        },
        "device-");
    if (!measured) return result;
    std::optional<py::dict> target = targetTypesOrSkip(result, harness, spec, kChecks);
    if (!target) return result;
    py::dict targetTypes = *target;
    const std::vector<Run> noRuns; // a type the reference has no launch for: judged against none

    probes::ProbeList probes;
    probes.push_back(probes::makeGcGuardProbe());
    json mismatches = json::array(), rejected = json::array(), loops = json::array();
    int compared = 0, launchCases = 0;
    MetricTally tally;
    measure(
        result, probes,
        [&] {
            for (const ScalarType& type : scalarTypes()) {
                if (!targetTypes.contains(type.name) || !kernels.has(type.name)) continue;
                py::object scalarType = targetTypes[py::str(type.name)];
                for (const py::object& value : probeValues(type)) {
                    py::object pointers;
                    try {
                        pointers = scalarType(value).attr("__c_pointers__")();
                    } catch (py::error_already_set& error) {
                        rejected.push_back(
                            {{"type", type.name}, {"value", valueRepr(value)}, {"error", error.what()}});
                        continue;
                    }
                    py::object first = pointers[py::int_(0)];
                    const void* address = pointerAddress(first.ptr());
                    std::vector<std::uint8_t> received =
                        kernels.echo(type.name, address, out.pointer(), static_cast<size_t>(type.bytes));
                    std::vector<std::uint8_t> host(static_cast<const std::uint8_t*>(address),
                                                   static_cast<const std::uint8_t*>(address) +
                                                       type.bytes);
                    std::vector<std::uint8_t> expected = expectedBytes(type, value);
                    ++compared;
                    if (received != expected) {
                        mismatches.push_back({{"type", type.name},
                                              {"value", valueRepr(value)},
                                              {"expected", hexBytes(expected)},
                                              {"kernel_received", hexBytes(received)},
                                              {"host_bytes", hexBytes(host)}});
                    }
                }
            }
            // The launch loop, against the reference's loop of the same type measured above.
            for (const ScalarType& type : scalarTypes()) {
                if (!targetTypes.contains(type.name) || !kernels.has(type.name)) continue;
                py::object value = harness.attr("representative_values")(type.name)[py::int_(1)];
                py::object targetPack = packOf(targetTypes, type);
                launchRun(kernels, type.name, targetPack.ptr(), out.pointer(), warmup);
                std::vector<Run> targetRuns;
                for (int run = 0; run < runs; ++run)
                    targetRuns.push_back(
                        launchRun(kernels, type.name, targetPack.ptr(), out.pointer(), calls));
                auto measured = referenceRuns.find(type.name);
                const bool hasReference = measured != referenceRuns.end();
                const std::vector<Run>& againstRuns = hasReference ? measured->second : noRuns;
                ++launchCases;
                const std::string where = fmt::format("{}({}) launched", type.name, valueRepr(value));
                json entry = {{"type", type.name},
                              {"value", valueRepr(value)},
                              {"target", runsJson(targetRuns)},
                              {"reference", hasReference ? runsJson(againstRuns) : json(nullptr)},
                              {"flagged", json::array()}};
                for (const Metric& metric : kMetrics) {
                    auto describe = [&](double low, double referenceHigh) {
                        return fmt::format("{}: {:.2f} {} per launch (reference: {:.2f}) in every one "
                                           "of {} runs of {} launches",
                                           where, low, metric.what, referenceHigh, runs, calls);
                    };
                    if (tally.add(metric, targetRuns, againstRuns, describe))
                        entry["flagged"].push_back(metric.check);
                }
                loops.push_back(std::move(entry));
            }
        },
        "device-");
    result.details["echo_mismatches"] = mismatches;
    result.details["rejected"] = rejected;
    result.details["launch_loops"] = loops;
    if (!result.ok() && compared == 0) return result;

    if (compared == 0) {
        result.checks.push_back({"device-echo", Status::kSkip,
                                 "the target has no scalar type the echo kernels take", std::nullopt});
    } else if (mismatches.empty()) {
        result.checks.push_back(
            {"device-echo", Status::kPass,
             fmt::format("{} values reached the kernel byte-exact through the target's packed pointers "
                         "({} refused by the target)",
                         compared, rejected.size()),
             0});
    } else {
        result.checks.push_back(
            {"device-echo", Status::kFail,
             fmt::format("{} of {} launched values arrived wrong: {}", mismatches.size(), compared,
                         firstMismatches(mismatches, "kernel_received", ": the kernel received")),
             static_cast<std::int64_t>(mismatches.size())});
    }
    for (const Metric& metric : kMetrics) {
        const std::string name = std::string("device-") + metric.check;
        const auto amount = tally.amount(metric);
        const MetricTally::Worst* worst = tally.worst(metric);
        if (launchCases == 0) {
            result.checks.push_back({name, Status::kSkip, "no scalar type to launch", std::nullopt});
        } else if (!worst) {
            result.checks.push_back(
                {name, Status::kPass,
                 fmt::format(
                     "no more {} per launch than the reference in any of {} types ({} runs of {} "
                     "launches each)",
                     metric.what, launchCases, runs, calls),
                 amount});
        } else {
            result.checks.push_back({name, Status::kFail, worst->reason, amount});
        }
    }
    return result;
}

} // namespace leakgate::workloads

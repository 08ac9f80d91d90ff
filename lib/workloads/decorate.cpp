// The gate's workloads on a target's decorators: `decorate` (kernels and jit functions defined in
// frames that hold sentinels, at depths 1 to 3, plus a lazily imported kernel module) and
// `import` (the target itself imported inside such a frame). The Python half lives in
// harness.py; this half loads it, runs it between the probes and reports.
#include "lib/workloads/workload.h"

#include "leakgate/errors.h"
#include "lib/python/text.h"
#include "lib/scanner/labels.h"
#include "lib/workloads/harness_loader.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

namespace leakgate::workloads {
namespace {

namespace py = pybind11;

// The target's own exceptions: (case, "Type: message", traceback) from the harness.
void reportTargetErrors(WorkloadResult& result, const py::list& errors, const char* during) {
    if (errors.empty()) return;
    std::string tracebacks;
    for (py::handle error : errors)
        tracebacks += python::textOf(error[py::int_(2)]);
    py::handle first = errors[0];
    result.error = WorkloadError{fmt::format("the target raised {} in {} case{}; first, {}: {}", during,
                                             errors.size(), errors.size() == 1 ? "" : "s",
                                             python::textOf(first[py::int_(0)]),
                                             python::textOf(first[py::int_(1)])),
                                 std::nullopt, tracebacks};
}

// `onlyNewFrames`: retained-frame leaves out the frames already retained when the measurement
// starts. The decorations' worker has imported the target by then, so a frame its import keeps is
// the `import` workload's finding (measured there, inside a frame of its own), not a decoration's.
// `plannedSentinels`: the frame sentinels harness.py's _hold places before it calls the target
// (depth 1 to 3 per form in decorate: 6 a form; 1 in import).
probes::ProbeList gateProbes(bool onlyNewFrames, std::int64_t plannedSentinels) {
    probes::ProbeList probes;
    probes.push_back(probes::makeGcGuardProbe());
    probes.push_back(probes::makeSentinelProbe(plannedSentinels));
    probes.push_back(probes::makeFrameCycleProbe());
    probes.push_back(probes::makeRetainedFrameProbe(onlyNewFrames));
    probes.push_back(probes::makeDeviceMemoryProbe());
    return probes;
}

// A Python list of str as JSON (without pybind11/stl.h, which every translation unit that casts
// the same types would have to include).
nlohmann::json strings(py::handle list) {
    nlohmann::json out = nlohmann::json::array();
    for (py::handle item : list)
        out.push_back(python::textOf(item));
    return out;
}

// Device sentinels for the workload's cases when CUDA can be used; the reasons go in the details.
void configureDevice(WorkloadResult& result, py::module_& harness, const WorkerSpec& spec) {
    const std::int64_t bytes = spec.deviceSentinelBytes;
    py::dict reasons = harness.attr("configure_device")(bytes);
    result.details["device_sentinel"] = {{"bytes", bytes},
                                         {"not_placed", python::textOf(reasons["device"])},
                                         {"torch_not_placed", python::textOf(reasons["torch"])}};
}

} // namespace

WorkloadResult runDecorate(const WorkerSpec& spec) {
    WorkloadResult result = newResult(spec, "decorate");
    py::module_ harness = loadHarness();
    py::module_ shutil = py::module_::import("shutil");
    py::object directory = py::module_::import("tempfile").attr("mkdtemp")("", "leakgate-lazy-");
    py::object dsl;
    py::list forms;
    try {
        py::tuple prepared = harness.attr("prepare_decorate")(targetSpec(spec), directory);
        const std::string kernels = python::textOf(harness.attr("kernels_file")(directory));
        scanner::addHarnessFile(kernels);
        if (std::optional<std::string> wrong = sealKernels(kernels)) {
            shutil.attr("rmtree")(directory, true);
            result.error = WorkloadError{*wrong, std::nullopt, ""};
            return result;
        }
        dsl = prepared[0];
        forms = prepared[1];
        py::list missing = prepared[2];
        if (!missing.empty()) result.details["missing_decorators"] = strings(missing);
        // The gate starts no launch-path worker for a target without scalar types.
        result.details["scalar_types"] = strings(prepared[3]);
        // Nor a real-launch worker for a target without `launch_cases`.
        result.details["launch_devices"] = strings(prepared[4]);
    } catch (py::error_already_set& error) {
        shutil.attr("rmtree")(directory, true);
        result.error = targetImportError(error);
        return result;
    }
    if (forms.empty()) {
        shutil.attr("rmtree")(directory, true);
        throw UsageError(fmt::format(
            "target `{}` defines neither `kernel` nor `jit` (see the target protocol)", result.subject));
    }
    const std::int64_t sentinelBytes = spec.sentinelBytes;
    configureDevice(result, harness, spec);
    py::list depths;
    for (int depth = 1; depth <= 3; ++depth)
        depths.append(depth);
    auto probes = gateProbes(/*onlyNewFrames=*/true,
                             /*plannedSentinels=*/6 * static_cast<std::int64_t>(forms.size()));
    measure(
        result, probes,
        [&] {
            py::list errors = harness.attr("run_decorate")(dsl, forms, depths, sentinelBytes, directory);
            reportTargetErrors(result, errors, "while decorating");
        },
        "decorate-");
    shutil.attr("rmtree")(directory, true);
    return result;
}

WorkloadResult runImport(const WorkerSpec& spec) {
    WorkloadResult result = newResult(spec, "import");
    py::module_ harness = loadHarness();
    const std::int64_t sentinelBytes = spec.sentinelBytes;
    configureDevice(result, harness, spec);
    auto probes = gateProbes(/*onlyNewFrames=*/false, /*plannedSentinels=*/1);
    measure(
        result, probes,
        [&] {
            py::list errors = harness.attr("run_import")(targetSpec(spec), sentinelBytes);
            reportTargetErrors(result, errors, "on import");
        },
        "import-");
    return result;
}

} // namespace leakgate::workloads

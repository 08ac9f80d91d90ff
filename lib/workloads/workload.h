// Worker side: a workload is code run under gc.disable() between the probes' `before` and
// `after`. A worker runs exactly one workload and sends back one WorkloadResult.
#pragma once

#include "lib/report/model.h"
#include "probes/probe.h"

#include <nlohmann/json.hpp>

#include <functional>

namespace leakgate::workloads {

// Runs `body` under gc.disable() and then the probes' three reads (probes/probe.h). `body`
// reports the target's own failures (an exception it raised) in `result.error` and the probes
// still run: what they find is kept. A probe that invalidates the measurement (the gc guard)
// turns every check not yet decided into `error`. Check names get `checkPrefix`.
void measure(WorkloadResult& result, probes::ProbeList& probes, const std::function<void()>& body,
             const std::string& checkPrefix = "");

// `leakgate scan`: runs a script as __main__. Spec keys: script, args.
WorkloadResult runScript(const nlohmann::json& spec);

// The gate's workloads on a target's decorators. Spec keys: target ({name, path | module}),
// role, sentinel_bytes.
WorkloadResult runDecorate(const nlohmann::json& spec);
WorkloadResult runImport(const nlohmann::json& spec);

// The launch path (lib/workloads/launch.cpp). Spec keys: target, role; launch: calls, runs,
// warmup; values: distinct_values; soak: soak_steps, soak_seconds, soak_sample_every.
WorkloadResult runLaunch(const nlohmann::json& spec);
WorkloadResult runValues(const nlohmann::json& spec);
WorkloadResult runSoak(const nlohmann::json& spec);

// The real launch on a GPU (lib/workloads/device.cpp): the echo kernels launched with the
// target's packed pointers. Spec keys as for `launch`.
WorkloadResult runDevice(const nlohmann::json& spec);

// `leakgate lint` (lib/lint/python.cpp): the static rules over Python sources. Spec: paths.
WorkloadResult runLint(const nlohmann::json& spec);

// Dispatches on spec["workload"].
WorkloadResult run(const nlohmann::json& spec);

} // namespace leakgate::workloads

// Worker side: a workload is code run under gc.disable() between the probes' `before` and
// `after`. A worker runs exactly one workload and sends back one WorkloadResult.
#pragma once

#include "leakgate/report.h"
#include "lib/workloads/spec.h"
#include "probes/measurement.h"

namespace leakgate::workloads {

// Every workload runs its code through the probes' three reads (probes/measurement.h).
using probes::measure;

// The workloads; lib/worker/registry.cpp lists them with their checks.

// `leakgate scan` (script.cpp): runs spec.script as __main__.
WorkloadResult runScript(const WorkerSpec& spec);

// The gate's workloads on a target's decorators (decorate.cpp): spec.target, role, sentinel bytes.
WorkloadResult runDecorate(const WorkerSpec& spec);
WorkloadResult runImport(const WorkerSpec& spec);

// Retention per decorated function, frames or not (decorations.cpp): distinct functions decorated
// and dropped, per decoration. Runs: spec.launchRuns.
WorkloadResult runDecorations(const WorkerSpec& spec);

// The launch path (launch.cpp): spec.target and role; the launch loop settings; values: the
// distinct values; soak: its steps, seconds and sampling.
WorkloadResult runLaunch(const WorkerSpec& spec);
WorkloadResult runValues(const WorkerSpec& spec);
WorkloadResult runSoak(const WorkerSpec& spec);

// The real launch on a GPU (device.cpp): the echo kernels launched with the target's packed
// pointers. Settings as for `launch`.
WorkloadResult runDevice(const WorkerSpec& spec);

// The real launch (launch_real.cpp): the target's `launch_cases`, kernels the DSL compiled, per
// launch against the reference launch. Settings as for `launch`.
WorkloadResult runRealLaunch(const WorkerSpec& spec);

// A probe plug-in's checks (probe.cpp): spec.probe, a Python file or a C++ shared library
// (leakgate/plugin.h), measuring its own workload or the target's import.
WorkloadResult runProbe(const WorkerSpec& spec);
// The check a plug-in owes when it never said which it has: its file's stem, less a shared
// library's `lib` ("libkernel_cache.so": "kernel_cache").
std::string probeFallbackCheck(const std::string& path);

} // namespace leakgate::workloads

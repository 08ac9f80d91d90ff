// Worker side: a workload is code run under gc.disable() between the probes' `before` and
// `after`. A worker runs exactly one workload and sends back one WorkloadResult.
#pragma once

#include "lib/report.h"
#include "probes/probe.h"

#include <nlohmann/json.hpp>

#include <functional>

namespace leakgate::workloads {

// Runs `body` between the probes. A Python exception escaping `body` makes the result an error
// result (the probes still run: what they find is kept); a probe that invalidates the
// measurement (the gc guard) turns the checks that follow into `error`.
void measure(WorkloadResult& result, probes::ProbeList& probes, const std::function<void()>& body);

// `leakgate scan`: runs a script as __main__. Spec keys: script, args.
WorkloadResult runScript(const nlohmann::json& spec);

// Dispatches on spec["workload"].
WorkloadResult run(const nlohmann::json& spec);

}  // namespace leakgate::workloads

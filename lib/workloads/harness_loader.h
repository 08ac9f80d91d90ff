// Loads lib/workloads/harness.py, the Python half of the gate's workloads, under the file name
// "<leakgate:harness>" so that its frames are known as leakgate's own.
#pragma once

#include "lib/report.h"

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace leakgate::workloads {

// Also puts the reference runtime on sys.path.
pybind11::module_ loadHarness();

// The target of a spec as the harness takes it: {"module": name} or {"path": file}.
pybind11::dict targetSpec(const nlohmann::json& spec);

// A result named after the spec's target and role.
WorkloadResult newResult(const nlohmann::json& spec, const char* workload);

} // namespace leakgate::workloads

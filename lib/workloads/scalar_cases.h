// What the launch-path workloads (launch.cpp, device.cpp) share: the target's scalar types, the
// values that probe each encoding rule, and the bytes each must pack to.
#pragma once

#include "lib/workloads/encodings.h"
#include "lib/report/model.h"
#include "probes/allocation_counter.h"

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace leakgate::workloads {

// repr, but a NaN shows its bits: payloads are what the encodings check.
std::string valueRepr(pybind11::handle value);

// Appends every one of `checks` as skipped for `reason`.
void skipAll(WorkloadResult& result, const std::vector<std::string>& checks, const std::string& reason);

// The target's and the reference's scalar types. Empty when the target cannot be imported
// (then `result.error` says why) or has none (then `checks` are skipped with that reason).
std::optional<std::pair<pybind11::dict, pybind11::dict>>
scalarTypesOrSkip(WorkloadResult& result, pybind11::module_& harness, const nlohmann::json& spec,
                  const std::vector<std::string>& checks);

// Python values that probe each rule of the type's encoding.
std::vector<pybind11::object> probeValues(const ScalarType& type);

// The encoding of `value` as `type` (MEASURES.md, "Encodings").
std::vector<std::uint8_t> expectedBytes(const ScalarType& type, pybind11::handle value);

// How the launch-path loops run: `runs` measured runs of `calls` calls after `warmup` calls.
// Spec keys calls, runs, warmup (defaults 2000, 5, 200).
struct LoopSettings {
    std::int64_t calls;
    int runs;
    std::int64_t warmup;
};
LoopSettings loopSettings(const nlohmann::json& spec);

inline constexpr double kEpsilonPerCall = 0.01; // below this a per-call difference is noise

// One measured run of calls: allocator calls and net blocks per call, then the objects per call
// that one DEBUG_SAVEALL collection finds (the calls' cyclic garbage; gc is off throughout).
struct Run {
    double allocations = 0;
    double netBlocks = 0;
    double cyclicGarbage = 0;
};
Run perCall(const probes::AllocationCounts& counts, std::int64_t cyclicGarbage, std::int64_t calls);

// Collects the youngest generation with DEBUG_SAVEALL and returns how many objects it saved (then
// frees them). Call with gc disabled, right after the measured calls.
std::int64_t collectYoungGarbage();

// Flag only when every measured run of the target exceeds the reference's worst run (the rule of
// CPython's refleak hunter: one noisy run does not make a finding).
bool exceedsInEveryRun(const std::vector<Run>& target, const std::vector<Run>& reference,
                       double Run::*field);

// The first three of a list of {type, value, expected, <gotKey>} mismatches, for a check's reason:
// "Float16(-0.0)<gotVerb> 0x0000, want 0x8000; ...".
std::string firstMismatches(const nlohmann::json& mismatches, const char* gotKey, const char* gotVerb);

// Per-call figures of each run, as the report's details hold them.
nlohmann::json runsJson(const std::vector<Run>& runs);

} // namespace leakgate::workloads

// What a worker is asked to run: one typed spec, read by every workload. Its defaults are here and
// nowhere else (the gate's options start from them); its one JSON encoding is in spec.cpp. The
// parent (lib/worker/client) writes it, the worker (lib/worker/main) reads it back; an unknown
// key, a missing one or a value of the wrong type is a clear error, never a silent default.
#pragma once

#include "leakgate/report.h"
#include "lib/python/environment.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::workloads {

// The defaults of the settings a spec carries, shared with the gate's options (lib/commands/gate.h).
namespace defaults {
inline constexpr std::int64_t kSentinelBytes = 1 << 20;           // host payload of each sentinel
inline constexpr std::int64_t kDeviceSentinelBytes = 256ll << 20; // device payload per case; 0: none
inline constexpr std::int64_t kLaunchCalls = 2000;                // calls per measured launch run
inline constexpr int kLaunchRuns = 5;                             // measured runs per launch case
inline constexpr std::int64_t kLaunchWarmup = 200;                // calls before the measured runs
inline constexpr std::int64_t kDistinctValues = 1'000'000;        // the values workload's stream
inline constexpr std::int64_t kSoakSteps = 0;                     // 0: run for kSoakSeconds
inline constexpr double kSoakSeconds = 30;
inline constexpr std::int64_t kSoakSampleEvery = 100; // steps between RSS samples
// RSS growth at which the soak stops early: a leaking loop's slope is clear long before that, and
// the memory stays bounded however fast it leaks.
inline constexpr std::int64_t kSoakMaxGrowthBytes = 512ll << 20;
// scan: one shape of cycle without a frame is a finding from this many instances, or this many
// bytes pinned (docs/definitions.md, "Cyclic garbage").
inline constexpr std::int64_t kCycleInstances = 100;
inline constexpr std::int64_t kCycleBytes = 1 << 20;
// scan: when a library-held container's growth during the program's work is a finding.
inline constexpr std::int64_t kHeldEntries = 1000;
inline constexpr std::int64_t kHeldBytes = std::int64_t{64} << 20;
} // namespace defaults

// A target as the harness imports it: a module name or a file path (exactly one).
struct TargetRef {
    std::string name; // as reports name it: "reference", "cute", a file's stem
    std::string module;
    std::string path;
};

// What the gate's workloads take, as `leakgate gate` gets it (GateOptions) and each of its
// workers reads it (WorkerSpec): one type, so a setting is added once.
struct WorkloadSettings {
    std::int64_t sentinelBytes = defaults::kSentinelBytes;
    std::int64_t deviceSentinelBytes = defaults::kDeviceSentinelBytes;
    std::int64_t launchCalls = defaults::kLaunchCalls;
    int launchRuns = defaults::kLaunchRuns;
    std::int64_t launchWarmup = defaults::kLaunchWarmup;
    std::int64_t distinctValues = defaults::kDistinctValues;
    std::int64_t soakSteps = defaults::kSoakSteps;
    double soakSeconds = defaults::kSoakSeconds; // per target
    std::int64_t soakSampleEvery = defaults::kSoakSampleEvery;
    std::int64_t soakMaxGrowthBytes = defaults::kSoakMaxGrowthBytes;
};

struct WorkerSpec : WorkloadSettings {
    std::string workload; // a name in lib/worker/registry.cpp
    // Workloads run after it in the same process, each its own measurement and result: the gate's
    // `import` then `decorate`, which imports the target once instead of twice.
    std::vector<std::string> then;
    std::string subject; // what the result is about: the script, the target, the lint paths
    python::Environment environment;
    std::vector<std::string> argv; // sys.argv of the embedded interpreter

    std::string script; // scan: the script run as __main__, or
    std::string module; // scan: the module run as `python -m` runs it
    std::int64_t cycleInstances = defaults::kCycleInstances; // scan: the cyclic-garbage limits
    std::int64_t cycleBytes = defaults::kCycleBytes;
    bool traceSites = false; // scan: run the script under tracemalloc, to say where cycles are made
    std::int64_t heldEntries = defaults::kHeldEntries; // scan: the held-growth limits
    std::int64_t heldBytes = defaults::kHeldBytes;

    std::optional<TargetRef> target; // gate workloads
    Role role = Role::kTarget;       // the reference is the baseline

    std::vector<std::string> paths; // lint: the Python files to check

    std::string probe; // probe: the plug-in, a Python file (.py) or a shared library (.so)

    // The target; throws Error when the workload needs one and the spec has none.
    const TargetRef& requireTarget() const;
};

// The spec as CBOR bytes (any byte of a path kept as it is).
std::string serialize(const WorkerSpec& spec);
// Reads what serialize() wrote, or the same object as JSON text. Throws UsageError naming the key
// and the problem.
WorkerSpec parseWorkerSpec(const std::string& text);

} // namespace leakgate::workloads

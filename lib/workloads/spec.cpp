#include "lib/workloads/spec.h"

#include "leakgate/errors.h"

#include <fmt/format.h>

#include <set>

namespace leakgate::workloads {

using nlohmann::json;

const TargetRef& WorkerSpec::requireTarget() const {
    if (!target) throw UsageError(fmt::format("the `{}` workload needs a target", workload));
    return *target;
}

std::string serialize(const WorkerSpec& spec) {
    json out = {{"workload", spec.workload},
                {"then", spec.then},
                {"subject", spec.subject},
                {"environment", spec.environment},
                {"argv", spec.argv},
                {"script", spec.script},
                {"module", spec.module},
                {"cycle_instances", spec.cycleInstances},
                {"cycle_bytes", spec.cycleBytes},
                {"trace_sites", spec.traceSites},
                {"held_entries", spec.heldEntries},
                {"held_bytes", spec.heldBytes},
                {"role", toString(spec.role)},
                {"sentinel_bytes", spec.sentinelBytes},
                {"device_sentinel_bytes", spec.deviceSentinelBytes},
                {"calls", spec.launchCalls},
                {"runs", spec.launchRuns},
                {"warmup", spec.launchWarmup},
                {"distinct_values", spec.distinctValues},
                {"soak_steps", spec.soakSteps},
                {"soak_seconds", spec.soakSeconds},
                {"soak_sample_every", spec.soakSampleEvery},
                {"soak_max_growth_bytes", spec.soakMaxGrowthBytes},
                {"paths", spec.paths},
                {"probe", spec.probe}};
    if (spec.target) {
        json target = {{"name", spec.target->name}};
        if (!spec.target->module.empty()) target["module"] = spec.target->module;
        if (!spec.target->path.empty()) target["path"] = spec.target->path;
        out["target"] = std::move(target);
    }
    // CBOR, not JSON text: paths are bytes on Linux, and CBOR carries a name that is not UTF-8
    // as it is (JSON text could only replace its bytes).
    std::vector<std::uint8_t> bytes = json::to_cbor(out);
    return std::string(bytes.begin(), bytes.end());
}

namespace {

// Reads `key` into `field` when present; a value of the wrong type names the key.
template <typename T> void read(const json& in, const char* key, T& field, bool required = false) {
    auto found = in.find(key);
    if (found == in.end()) {
        if (required) throw UsageError(fmt::format("worker spec: `{}` is missing", key));
        return;
    }
    try {
        found->get_to(field);
    } catch (const json::exception& error) {
        throw UsageError(fmt::format("worker spec: `{}` is malformed ({})", key, error.what()));
    }
}

} // namespace

WorkerSpec parseWorkerSpec(const std::string& text) {
    json in;
    const bool jsonText = text.find_first_not_of(" \t\r\n") != std::string::npos &&
                          text[text.find_first_not_of(" \t\r\n")] == '{';
    try {
        // What serialize() writes is CBOR; JSON text is read too, for a spec written by hand.
        in = jsonText ? json::parse(text) : json::from_cbor(text);
    } catch (const json::exception& error) {
        throw UsageError(fmt::format("worker spec: not JSON or CBOR ({})", error.what()));
    }
    if (!in.is_object()) throw UsageError("worker spec: not a JSON object");
    static const std::set<std::string> kKnown = {"workload",
                                                 "then",
                                                 "subject",
                                                 "environment",
                                                 "argv",
                                                 "script",
                                                 "module",
                                                 "cycle_instances",
                                                 "cycle_bytes",
                                                 "trace_sites",
                                                 "held_entries",
                                                 "held_bytes",
                                                 "target",
                                                 "role",
                                                 "sentinel_bytes",
                                                 "device_sentinel_bytes",
                                                 "calls",
                                                 "runs",
                                                 "warmup",
                                                 "distinct_values",
                                                 "soak_steps",
                                                 "soak_seconds",
                                                 "soak_sample_every",
                                                 "soak_max_growth_bytes",
                                                 "paths",
                                                 "probe"};
    for (const auto& [key, value] : in.items()) {
        if (!kKnown.contains(key)) throw UsageError(fmt::format("worker spec: unknown key `{}`", key));
    }
    WorkerSpec spec;
    read(in, "workload", spec.workload, true);
    read(in, "then", spec.then);
    read(in, "subject", spec.subject);
    read(in, "environment", spec.environment, true);
    read(in, "argv", spec.argv, true);
    read(in, "script", spec.script);
    read(in, "module", spec.module);
    read(in, "cycle_instances", spec.cycleInstances);
    read(in, "cycle_bytes", spec.cycleBytes);
    read(in, "trace_sites", spec.traceSites);
    read(in, "held_entries", spec.heldEntries);
    read(in, "held_bytes", spec.heldBytes);
    std::string role = toString(spec.role);
    read(in, "role", role);
    read(in, "sentinel_bytes", spec.sentinelBytes);
    read(in, "device_sentinel_bytes", spec.deviceSentinelBytes);
    read(in, "calls", spec.launchCalls);
    read(in, "runs", spec.launchRuns);
    read(in, "warmup", spec.launchWarmup);
    read(in, "distinct_values", spec.distinctValues);
    read(in, "soak_steps", spec.soakSteps);
    read(in, "soak_seconds", spec.soakSeconds);
    read(in, "soak_sample_every", spec.soakSampleEvery);
    read(in, "soak_max_growth_bytes", spec.soakMaxGrowthBytes);
    read(in, "paths", spec.paths);
    read(in, "probe", spec.probe);
    if (in.contains("target")) {
        const json& target = in.at("target");
        if (!target.is_object()) throw UsageError("worker spec: `target` is not an object");
        TargetRef ref;
        read(target, "name", ref.name, true);
        read(target, "module", ref.module);
        read(target, "path", ref.path);
        if (ref.module.empty() == ref.path.empty())
            throw UsageError("worker spec: `target` needs exactly one of `module` and `path`");
        spec.target = std::move(ref);
    }
    if (role != "target" && role != "reference")
        throw UsageError(fmt::format("worker spec: unknown role `{}`", role));
    spec.role = role == "reference" ? Role::kReference : Role::kTarget;
    return spec;
}

} // namespace leakgate::workloads

#include "lib/workloads/workload.h"

#include "lib/errors.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <chrono>

namespace leakgate::workloads {

namespace py = pybind11;

void measure(WorkloadResult& result, probes::ProbeList& probes, const std::function<void()>& body) {
    auto started = std::chrono::steady_clock::now();
    py::module_ gc = py::module_::import("gc");
    gc.attr("disable")();
    // Garbage made before the workload (interpreter start-up, imports) is not its doing.
    gc.attr("collect")();
    py::list(gc.attr("garbage")).attr("clear")();

    for (auto& probe : probes) probe->before();
    body();
    bool invalid = false;
    for (auto& probe : probes) {
        if (invalid) {
            // The measurement is invalid: say so for every check that did not run.
            result.checks.push_back({std::string(probe->name()), Status::kError, result.error->message});
            continue;
        }
        std::string errorBefore = result.error ? result.error->message : "";
        probe->after(result);
        invalid = result.error && result.error->message != errorBefore;
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

WorkloadResult run(const nlohmann::json& spec) {
    const std::string workload = spec.at("workload").get<std::string>();
    if (workload == "scan") return runScript(spec);
    throw UsageError(fmt::format("unknown workload `{}`", workload));
}

}  // namespace leakgate::workloads

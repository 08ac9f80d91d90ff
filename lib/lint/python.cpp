// `leakgate lint`'s workload: lib/lint/python_rules/ on Python sources, with the worker's own
// `ast`. The sources are parsed, never imported or run, so no probe has anything to measure.
#include "lib/lint/python.h"

#include "lib/python/text.h"
#include "lib/workloads/harness_loader.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <vector>

namespace leakgate::lint {
namespace {

namespace py = pybind11;

py::module_ loadLintRules() {
    return workloads::loadOwnPackage("lib/lint/python_rules", "_leakgate_lint", "<leakgate:lint>");
}

Finding toFinding(const nlohmann::json& entry) {
    Finding finding;
    finding.kind = "lint:" + entry.at("rule").get<std::string>();
    finding.summary = entry.at("message").get<std::string>();
    finding.frames.push_back({entry.at("function").get<std::string>(),
                              entry.at("file").get<std::string>(), entry.at("line").get<int>()});
    finding.locals.push_back(entry.at("name").get<std::string>());
    // 1-based, as editors and compilers count.
    finding.column = entry.at("column").get<int>();
    finding.fix = entry.at("fix").get<std::string>();
    if (auto edits = entry.find("fix_edits"); edits != entry.end())
        edits->get_to(finding.fixEdits); // the FixEdit keys of lib/report/model.cpp
    return finding;
}

} // namespace

WorkloadResult runPythonLint(const workloads::WorkerSpec& spec) {
    auto started = std::chrono::steady_clock::now();
    WorkloadResult result;
    result.workload = "lint";
    result.subject = spec.subject;

    py::list paths;
    for (const auto& path : spec.paths)
        paths.append(path);
    // The rules answer in JSON: one encoding from Python to the report, no object-by-object casts.
    std::string answer = python::textOf(loadLintRules().attr("lint_paths")(paths));
    nlohmann::json lint = nlohmann::json::parse(answer);

    for (const auto& entry : lint.at("findings"))
        result.findings.push_back(toFinding(entry));
    result.details["files"] = lint.at("files");
    result.details["unparsed"] = lint.at("unparsed");
    result.details["rules"] = std::vector<std::string>(std::begin(kLintRules), std::end(kLintRules));
    // The `lint` check is decided by the parent (lib/commands/lint.cpp), over every worker of the run.
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

} // namespace leakgate::lint

#include "lib/lint.h"

#include "lib/errors.h"
#include "lib/python/environment.h"
#include "lib/worker/worker_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace leakgate {

Report runLint(const LintOptions& options) {
    if (options.paths.empty()) throw UsageError("lint needs at least one file or directory");
    std::vector<std::string> paths;
    for (const auto& path : options.paths) {
        std::error_code error;
        if (!std::filesystem::exists(path, error))
            throw UsageError(fmt::format("no such file or directory: {}", path));
        paths.push_back(std::filesystem::absolute(path).lexically_normal().string());
    }
    python::Environment env =
        python::queryEnvironment(options.python.value_or(python::buildPythonExecutable()));

    std::vector<std::string> argv{"leakgate-lint"};
    argv.insert(argv.end(), paths.begin(), paths.end());
    worker::WorkerRequest request;
    request.spec = {{"workload", "lint"},
                    {"subject", fmt::format("{}", fmt::join(options.paths, " "))},
                    {"paths", paths},
                    {"environment", env},
                    {"argv", argv}};
    request.timeout = options.timeout;
    request.forwardOutput = options.forwardOutput;
    WorkloadResult result = worker::runInWorker(request);
    // A worker that died before deciding the check still owes it a status.
    bool decided = std::any_of(result.checks.begin(), result.checks.end(),
                               [](const CheckResult& check) { return check.name == "lint"; });
    if (!decided)
        result.checks.push_back(
            {"lint", Status::kError, result.error ? result.error->message : "not run"});

    Report report;
    report.command = "lint";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    report.results.push_back(std::move(result));
    return report;
}

} // namespace leakgate

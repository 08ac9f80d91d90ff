#include "lib/commands/scan.h"

#include "lib/base/errors.h"
#include "lib/python/environment.h"
#include "lib/worker/client.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace leakgate {

// The checks a scan decides, in report order.
static const char* const kScanChecks[] = {"frame-cycle", "retained-frame"};

Report runScan(const ScanOptions& options) {
    if (!std::ifstream(options.script))
        throw UsageError(fmt::format("cannot read script {}", options.script));
    python::Environment env =
        python::queryEnvironment(options.python.value_or(python::buildPythonExecutable()));

    std::vector<std::string> argv{options.script};
    argv.insert(argv.end(), options.args.begin(), options.args.end());
    worker::WorkerRequest request;
    request.spec = {{"workload", "scan"},
                    {"subject", options.script},
                    {"script", options.script},
                    {"environment", env},
                    {"argv", argv}};
    request.timeout = options.timeout;
    request.forwardOutput = options.forwardOutput;
    WorkloadResult result = worker::runInWorker(request);
    // A worker that died before deciding a check still owes it a status.
    for (const char* name : kScanChecks) {
        bool decided = std::any_of(result.checks.begin(), result.checks.end(),
                                   [&](const CheckResult& check) { return check.name == name; });
        if (!decided)
            result.checks.push_back(
                {name, Status::kError, result.error ? result.error->message : "not run"});
    }

    Report report;
    report.command = "scan";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    report.results.push_back(std::move(result));
    return report;
}

} // namespace leakgate

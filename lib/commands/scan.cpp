#include "lib/commands/scan.h"

#include "lib/base/errors.h"
#include "lib/python/environment.h"
#include "lib/worker/client.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace leakgate {

Report runScan(const ScanOptions& options) {
    if (!std::ifstream(options.script))
        throw UsageError(fmt::format("cannot read script {}", options.script));
    python::Environment env =
        python::queryEnvironment(options.python.value_or(python::buildPythonExecutable()));

    std::vector<std::string> argv{options.script};
    argv.insert(argv.end(), options.args.begin(), options.args.end());
    worker::WorkerRequest request;
    request.spec.workload = "scan";
    request.spec.subject = options.script;
    request.spec.script = options.script;
    request.spec.environment = env;
    request.spec.argv = argv;
    request.timeout = options.timeout;
    request.forwardOutput = options.forwardOutput;
    WorkloadResult result = worker::runInWorker(request);

    Report report;
    report.command = "scan";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    report.results.push_back(std::move(result));
    return report;
}

} // namespace leakgate

#include "lib/commands/scan.h"

#include "leakgate/errors.h"
#include "lib/commands/environments.h"
#include "lib/commands/fix_sites.h"
#include "lib/commands/lint.h"
#include "lib/python/environment.h"
#include "lib/worker/client.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace leakgate::commands {

Report runScan(const ScanOptions& options) {
    std::error_code error;
    if (options.script.empty() == options.module.empty())
        throw UsageError("scan: give a script (-- SCRIPT) or a module (-m MODULE), not both");
    if (options.module.empty()) {
        if (std::filesystem::is_directory(options.script, error))
            throw UsageError(
                fmt::format("the script {} is a directory, not a Python file", options.script));
        if (!std::filesystem::is_regular_file(options.script, error) || !std::ifstream(options.script))
            throw UsageError(
                fmt::format("cannot read script {}{}", options.script,
                            std::filesystem::exists(options.script, error)
                                ? " (not a regular file: a FIFO or device would be read without end)"
                                : ""));
    }
    python::Environment env =
        pythonEnvironment(options.python.value_or(python::buildPythonExecutable()));

    worker::WorkerRequest request;
    request.spec.workload = "scan";
    request.spec.script = options.script;
    request.spec.module = options.module;
    request.spec.subject = options.module.empty() ? options.script : "-m " + options.module;
    // `python -m`'s argv[0] is the module's file, known only in the worker, which puts it there.
    request.spec.argv = {options.module.empty() ? options.script : "-m"};
    request.spec.argv.insert(request.spec.argv.end(), options.args.begin(), options.args.end());
    request.spec.environment = env;
    request.spec.cycleInstances = options.cycleInstances;
    request.spec.cycleBytes = options.cycleBytes;
    request.spec.traceSites = options.traceSites;
    request.spec.heldEntries = options.heldEntries;
    request.spec.heldBytes = options.heldBytes;
    request.timeout = options.timeout;
    request.forwardOutput = options.forwardOutput;

    Report report;
    report.command = "scan";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    report.results.push_back(worker::runInWorker(request));
    // The statement to change, found by the lint of the script and the findings' files. Best
    // effort: a lint that cannot run changes nothing.
    LintOptions lint;
    lint.python = options.python;
    lint.timeout = options.timeout;
    lintFixSites({&report.results.front()}, options.script, std::move(lint));
    return report;
}

} // namespace leakgate::commands

#include "lib/commands/scan.h"

#include "leakgate/errors.h"
#include "lib/commands/lint.h"
#include "lib/python/environment.h"
#include "lib/worker/client.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace leakgate {
namespace {

// The attribute a retained frame hangs from, when the last step of its path is one
// (`HANDLERS['on_stop'].defined_in`): "defined_in".
std::string holdingAttribute(const Finding& finding) {
    if (finding.kind != "retained-frame" || finding.path.empty()) return {};
    const PathStep& last = finding.path.back();
    if (last.kind != "attribute" || last.label.size() < 2 || last.label[0] != '.') return {};
    return last.label.substr(1);
}

// A frame stored on an attribute is fixed where the store is, not in the function whose frame it
// is: the lint of the script and of the files on the finding's frames finds the statement that
// stores a frame on an attribute of that name (`func.defined_in = sys._getframe(1)` in the
// decorator), and the finding names it. Best effort: a lint that cannot run changes nothing.
void nameTheStores(Report& report, const ScanOptions& options) {
    std::set<std::string> attributes;
    std::set<std::string> files;
    if (!options.script.empty()) files.insert(options.script);
    for (const WorkloadResult& result : report.results) {
        for (const Finding& finding : result.findings) {
            std::string attribute = holdingAttribute(finding);
            if (attribute.empty()) continue;
            attributes.insert(attribute);
            for (const FrameInfo& frame : finding.frames) {
                std::error_code error;
                if (frame.file.ends_with(".py") && std::filesystem::is_regular_file(frame.file, error))
                    files.insert(frame.file);
            }
        }
    }
    if (attributes.empty()) return;
    Report lint;
    try {
        LintOptions lintOptions;
        lintOptions.paths.assign(files.begin(), files.end());
        lintOptions.python = options.python;
        lintOptions.timeout = options.timeout;
        lintOptions.forwardOutput = false;
        lint = runLint(lintOptions);
    } catch (const std::exception&) {
        return;
    }
    if (lint.results.empty()) return;
    for (WorkloadResult& result : report.results) {
        for (Finding& finding : result.findings) {
            std::string attribute = holdingAttribute(finding);
            if (attribute.empty()) continue;
            for (const Finding& store : lint.results.front().findings) {
                if (store.kind != "lint:frame-stored" || store.frames.empty() || store.locals.empty()) continue;
                if (!store.locals.front().ends_with("." + attribute)) continue;
                const FrameInfo& where = store.frames.front();
                std::string culprit = finding.frames.empty() ? "" : finding.frames.front().function;
                finding.summary += fmt::format("; stored by `{}` ({}:{})", where.function,
                                               std::filesystem::path(where.file).filename().string(), where.line);
                finding.fix = fmt::format("The store is `{}` in `{}` ({}:{}): fix it there{}. {}",
                                          store.locals.front(), where.function, where.file, where.line,
                                          culprit.empty() ? "" : fmt::format(", not in `{}`, whose frame it keeps", culprit),
                                          finding.fix);
                break;
            }
        }
    }
}

} // namespace

Report runScan(const ScanOptions& options) {
    std::error_code error;
    if (options.script.empty() == options.module.empty())
        throw UsageError("scan: give a script (-- SCRIPT) or a module (-m MODULE), not both");
    if (options.module.empty()) {
        if (std::filesystem::is_directory(options.script, error))
            throw UsageError(fmt::format("the script {} is a directory, not a Python file", options.script));
        if (!std::filesystem::is_regular_file(options.script, error) || !std::ifstream(options.script))
            throw UsageError(fmt::format(
                "cannot read script {}{}", options.script,
                std::filesystem::exists(options.script, error)
                    ? " (not a regular file: a FIFO or device would be read without end)"
                    : ""));
    }
    python::Environment env =
        python::queryEnvironment(options.python.value_or(python::buildPythonExecutable()));

    worker::WorkerRequest request;
    request.spec.workload = "scan";
    request.spec.script = options.script;
    request.spec.module = options.module;
    request.spec.subject = options.module.empty() ? options.script : "-m " + options.module;
    // `python -m`'s argv[0] is the module's file, known only in the worker, which puts it there.
    request.spec.argv = {options.module.empty() ? options.script : "-m"};
    request.spec.argv.insert(request.spec.argv.end(), options.args.begin(), options.args.end());
    request.spec.environment = env;
    request.timeout = options.timeout;
    request.forwardOutput = options.forwardOutput;

    Report report;
    report.command = "scan";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    report.results.push_back(worker::runInWorker(request));
    nameTheStores(report, options);
    return report;
}

} // namespace leakgate

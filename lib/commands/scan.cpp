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

// The local that closes a frame cycle from its culprit's frame (`cur_frame`), when the first
// step of the path is one.
std::string closingLocal(const Finding& finding) {
    if (finding.kind != "frame-cycle" || finding.path.empty() || finding.frames.empty()) return {};
    const PathStep& first = finding.path.front();
    return first.kind == "local" && !finding.locals.empty() ? finding.locals.front() : std::string();
}

bool sameFile(const std::string& a, const std::string& b) {
    std::error_code error;
    return std::filesystem::equivalent(a, b, error);
}

// A culprit's frame line is where it returned; on 3.10 a frame knows only its co_name.
bool sameFunction(const std::string& lint, const std::string& frame) {
    return lint == frame || lint.ends_with("." + frame);
}

// Points the dynamic findings at the statement to change, found by the lint of the script and of
// the files on the findings' frames:
// - a frame cycle closed by a local: the line that binds it (`cur_frame = inspect.currentframe()`),
//   not the line the frame returned from;
// - a frame retained through an attribute: the statement that stores a frame on an attribute of
//   that name (`func.defined_in = sys._getframe(1)` in the decorator), not the function whose frame
//   it is (that function only defined the decorated one).
// Best effort: a lint that cannot run, or finds no such statement, changes nothing.
void pointAtTheSource(Report& report, const ScanOptions& options) {
    std::set<std::string> files;
    if (!options.script.empty()) files.insert(options.script);
    bool wanted = false;
    for (const WorkloadResult& result : report.results) {
        for (const Finding& finding : result.findings) {
            if (holdingAttribute(finding).empty() && closingLocal(finding).empty()) continue;
            wanted = true;
            for (const FrameInfo& frame : finding.frames) {
                std::error_code error;
                if (frame.file.ends_with(".py") && std::filesystem::is_regular_file(frame.file, error))
                    files.insert(frame.file);
            }
        }
    }
    if (!wanted || files.empty()) return;
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
    const std::vector<Finding>& statements = lint.results.front().findings;
    for (WorkloadResult& result : report.results) {
        for (Finding& finding : result.findings) {
            if (std::string local = closingLocal(finding); !local.empty()) {
                const FrameInfo& culprit = finding.frames.front();
                for (const Finding& binding : statements) {
                    if (binding.kind != "lint:own-frame-local" || binding.frames.empty() ||
                        binding.locals.empty() || binding.locals.front() != local)
                        continue;
                    const FrameInfo& where = binding.frames.front();
                    if (!sameFile(where.file, culprit.file) || !sameFunction(where.function, culprit.function))
                        continue;
                    finding.fix = fmt::format("Line {} binds `{}` ({}). {}", where.line, local,
                                              std::filesystem::path(where.file).filename().string(), finding.fix);
                    break;
                }
            }
            if (std::string attribute = holdingAttribute(finding); !attribute.empty()) {
                for (const Finding& store : statements) {
                    if (store.kind != "lint:frame-stored" || store.frames.empty() || store.locals.empty() ||
                        !store.locals.front().ends_with("." + attribute))
                        continue;
                    const FrameInfo& where = store.frames.front();
                    std::string kept = finding.frames.empty() ? "" : finding.frames.front().function;
                    std::string file = std::filesystem::path(where.file).filename().string();
                    finding.summary += fmt::format("; stored by `{}` ({}:{})", where.function, file, where.line);
                    finding.fix = fmt::format(
                        "The store is `{}` in `{}` ({}:{}): fix it there{}. {}", store.locals.front(),
                        where.function, file, where.line,
                        kept.empty() ? "" : fmt::format(", not in `{}`, whose frame it keeps", kept), finding.fix);
                    break;
                }
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
    pointAtTheSource(report, options);
    return report;
}

} // namespace leakgate

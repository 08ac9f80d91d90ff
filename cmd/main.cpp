// leakgate's command line: parse, call one library entry point, format, return an exit code.
#include "lib/commands/bisect.h"
#include "leakgate/errors.h"
#include "lib/base/interrupt.h"
#include "lib/commands/gate.h"
#include "lib/commands/lint.h"
#include "lib/base/log.h"
#include "lib/base/subprocess.h"
#include "lib/report/emit.h"
#include "lib/commands/scan.h"
#include "lib/worker/main.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

using namespace leakgate;

using OutputOptions = report::Outputs;

// Options every reporting subcommand shares.
void addOutputOptions(CLI::App* command, OutputOptions& output, std::optional<std::string>& python,
                      int& timeout) {
    command->add_option("--json", output.json, "Write the JSON report to FILE ('-' for stdout)");
    command->add_option("--junit", output.junit, "Write a JUnit XML report to FILE ('-' for stdout)");
    command->add_option("--sarif", output.sarif, "Write a SARIF 2.1.0 report to FILE ('-' for stdout)");
    command->add_option("--html", output.html, "Write a self-contained HTML report to FILE");
    command->add_option(
        "--python", python,
        "Interpreter of the environment to run in (a venv's python; same major.minor as this build)");
    command->add_option("--timeout", timeout, "Seconds before a worker is killed")
        ->check(CLI::PositiveNumber);
    command->add_flag("-q,--quiet", output.quiet, "No text report, no target output");
    command->add_flag("--no-color", output.noColor,
                      "No colour in the text report (NO_COLOR is honoured too)");
}

int run(int argc, char** argv) {
    CLI::App app{"leakgate: finds memory that Python GPU DSLs keep alive when they should not"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("leakgate ") + LEAKGATE_VERSION + " (Python " +
                                          LEAKGATE_PYTHON_VERSION + ")");
    int verbosity = 0;
    app.add_flag("-v,--verbose", verbosity, "More diagnostics on stderr");

    OutputOptions output;
    int timeoutSeconds = 300;

    ScanOptions scan;
    std::vector<std::string> command;
    CLI::App* scanCommand =
        app.add_subcommand("scan", "Run a script under gc.disable() and explain the frames it leaks");
    addOutputOptions(scanCommand, output, scan.python, timeoutSeconds);
    scanCommand->add_option("command", command, "-- SCRIPT [ARGS...]")->required();

    GateOptions gate;
    std::string checks;
    std::int64_t sentinelMiB = gate.sentinelBytes >> 20;
    std::int64_t deviceSentinelMiB = gate.deviceSentinelBytes >> 20;
    CLI::App* gateCommand = app.add_subcommand(
        "gate", "Audit a DSL's decorators against leakgate's reference runtime (a release gate)");
    addOutputOptions(gateCommand, output, gate.python, timeoutSeconds);
    gateCommand->add_option(
        "--target", gate.target,
        "A target module (a path, or a built-in name: reference, cute); default: the "
        "bundled model of nvidia-cutlass-dsl 4.6.1");
    gateCommand->add_option("--checks", checks,
                            "Comma-separated checks or workloads to run (default: all; see the README; "
                            "`probe` alone: only the --probe plug-ins' checks)");
    // Capped so that MiB << 20 cannot wrap: a sentinel is a payload, not a memory test.
    constexpr std::int64_t kMaxSentinelMiB = 1 << 20; // 1 TiB
    gateCommand->add_option("--sentinel-mib", sentinelMiB, "Host payload of each sentinel, in MiB")
        ->check(CLI::Range(std::int64_t{0}, kMaxSentinelMiB));
    gateCommand
        ->add_option("--device-sentinel-mib", deviceSentinelMiB,
                     "Device payload (cuMemAlloc) placed in each decorate/import case when CUDA can be "
                     "used, in MiB (default 256; 0: none)")
        ->check(CLI::Range(std::int64_t{0}, kMaxSentinelMiB));
    gateCommand
        ->add_option("--soak-steps", gate.soakSteps,
                     "Soak steps per target (default: run for --soak-seconds)")
        ->check(CLI::NonNegativeNumber);
    gateCommand
        ->add_option("--soak-seconds", gate.soakSeconds,
                     "Soak budget per target, in seconds (default 30)")
        ->check(CLI::PositiveNumber);
    gateCommand
        ->add_option("--baseline", gate.baseline,
                     "JSON of an earlier gate run (the last good release): a figure that grew beyond "
                     "its budget fails")
        ->check(CLI::ExistingFile);
    gateCommand
        ->add_option("--budgets", gate.budgets, "Budgets file for --baseline (`check = amount` lines)")
        ->check(CLI::ExistingFile);
    gateCommand
        ->add_option("--launch-calls", gate.launchCalls, "Calls per measured launch run (default 2000)")
        ->check(CLI::PositiveNumber);
    gateCommand
        ->add_option("--launch-runs", gate.launchRuns, "Measured runs per launch case (default 5)")
        ->check(CLI::PositiveNumber);
    gateCommand->add_option("--probe", gate.probes,
                            "A probe plug-in: a Python file (FILE.py) or a C++ shared library "
                            "(leakgate/plugin.h); repeatable")
        ->type_name("FILE")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    gateCommand->add_flag("--lint", gate.lint,
                          "Also lint the target's sources (a file target's file; cute: the installed "
                          "nvidia_cutlass_dsl) and mark findings the dynamic checks confirm");
    gateCommand
        ->add_option("--distinct-values", gate.distinctValues,
                     "Distinct values the values workload packs to test boundedness (default 1000000)")
        ->check(CLI::PositiveNumber);

    LintOptions lint;
    CLI::App* lintCommand = app.add_subcommand(
        "lint",
        "Find frame-capture patterns in Python (AST) and C/C++ sources (libclang), before anything runs");
    addOutputOptions(lintCommand, output, lint.python, timeoutSeconds);
    lintCommand->add_option("paths", lint.paths, "Python and C/C++ files, or directories")->required();
    lintCommand->add_option("--compile-commands", lint.compileCommands,
                            "C/C++: a compile_commands.json or its directory (default: one at the top "
                            "of a directory given, or in its build/)");
    lintCommand->add_option("--cxx-flag", lint.cxxFlags,
                            "C/C++: a compiler flag for files without a compile command (repeat; "
                            "--cxx-flag=-DNAME)");
    lintCommand->add_option("-I,--include", lint.includeDirs,
                            "C/C++: an include directory for files without a compile command (repeat; "
                            "Python.h's is always added)");

    BisectOptions bisect;
    std::string versions;
    std::string bisectChecks = "decorate,import";
    CLI::App* bisectCommand = app.add_subcommand(
        "bisect", "Run the gate on releases of a DSL package, each in its own venv, and tabulate");
    bisectCommand->add_option("--package", bisect.package,
                              "The PyPI package (default nvidia-cutlass-dsl)");
    bisectCommand->add_option("--versions", versions, "Comma-separated versions, e.g. 4.4.2,4.6.1");
    bisectCommand->add_option("--from", bisect.from, "With --to: every release from this version ...");
    bisectCommand->add_option("--to", bisect.to, "... to this one, inclusive");
    bisectCommand->add_option("--target", bisect.gate.target,
                              "The target for every version (default cute)");
    bisectCommand->add_option("--checks", bisectChecks, "Checks or workloads (default decorate,import)");
    bisectCommand->add_option("--probe", bisect.gate.probes,
                              "A probe plug-in run on every version (as gate --probe); repeatable")
        ->type_name("FILE")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    bisectCommand->add_option("--json", output.json, "Write the JSON table to FILE ('-' for stdout)");
    bisectCommand->add_option("--timeout", timeoutSeconds, "Seconds before a worker is killed")
        ->check(CLI::PositiveNumber);
    bisectCommand->add_option("--soak-seconds", bisect.gate.soakSeconds,
                              "Soak budget per target, in seconds");
    bisectCommand->add_option("--launch-calls", bisect.gate.launchCalls,
                              "Calls per measured launch run");
    bisectCommand->add_option("--launch-runs", bisect.gate.launchRuns, "Measured runs per launch case");
    bisectCommand->add_option("--distinct-values", bisect.gate.distinctValues,
                              "Distinct values for values-bounded");
    bisectCommand->add_flag("-q,--quiet", output.quiet, "No text report, no target output");
    bisectCommand->add_flag("--no-color", output.noColor, "No colour in the text report");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        int code = app.exit(error);
        return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
    }
    if (verbosity > 0) log::setLevel(log::Level::kDebug);
    if (output.quiet) log::setLevel(log::Level::kQuiet);
    ::setenv("LEAKGATE_LOG_LEVEL", std::to_string(static_cast<int>(log::level())).c_str(), 1);

    // What the run reads: a report written over one of them would destroy it.
    std::vector<std::string> inputs;
    if (scanCommand->parsed()) inputs.push_back(command.front());
    if (lintCommand->parsed()) {
        inputs = lint.paths;
        if (lint.compileCommands) inputs.push_back(*lint.compileCommands);
    }
    if (gateCommand->parsed()) {
        for (const std::string* path : {&gate.target, &gate.baseline, &gate.budgets})
            if (!path->empty()) inputs.push_back(*path);
    }
    report::checkOutputs(output, inputs);
    if (scanCommand->parsed()) {
        scan.script = command.front();
        scan.args.assign(command.begin() + 1, command.end());
        scan.timeout = std::chrono::seconds(timeoutSeconds);
        scan.forwardOutput = !output.quiet;
        return report::emit(runScan(scan), output);
    }
    if (lintCommand->parsed()) {
        lint.timeout = std::chrono::seconds(timeoutSeconds);
        lint.forwardOutput = !output.quiet;
        return report::emit(runLint(lint), output);
    }
    if (bisectCommand->parsed()) {
        std::stringstream list(versions);
        for (std::string version; std::getline(list, version, ',');) {
            if (!version.empty()) bisect.versions.push_back(version);
        }
        std::stringstream checkList(bisectChecks);
        for (std::string name; std::getline(checkList, name, ',');) {
            if (!name.empty()) bisect.gate.checks.push_back(name);
        }
        bisect.gate.timeout = std::chrono::seconds(timeoutSeconds);
        bisect.gate.forwardOutput = !output.quiet;
        return report::emit(runBisect(bisect), output);
    }
    std::stringstream list(checks);
    for (std::string name; std::getline(list, name, ',');) {
        if (!name.empty()) gate.checks.push_back(name);
    }
    gate.timeout = std::chrono::seconds(timeoutSeconds);
    gate.sentinelBytes = sentinelMiB << 20;
    gate.deviceSentinelBytes = deviceSentinelMiB << 20;
    gate.forwardOutput = !output.quiet;
    return report::emit(runGate(gate), output);
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == worker::kWorkerMode) {
        try {
            return worker::workerMain(argv[2], argv[3]);
        } catch (const std::exception& error) {
            std::fprintf(stderr, "leakgate worker: %s\n", error.what());
            return static_cast<int>(ExitCode::kErrored);
        }
    }
    interrupt::installHandlers(); // a signal kills the workers' groups and exits 128 + signal
    worker::adoptOrphans();       // what a worker leaves in another session is killed when it ends
    try {
        return run(argc, argv);
    } catch (const Error& error) {
        std::fprintf(stderr, "leakgate: %s\n", error.what());
        return static_cast<int>(error.exitCode());
    } catch (const std::exception& error) {
        std::fprintf(stderr, "leakgate: %s\n", error.what());
        return static_cast<int>(ExitCode::kErrored);
    }
}

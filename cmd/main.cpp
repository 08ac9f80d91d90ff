// leakgate's command line: parse, call one library entry point, format, return an exit code.
#include "lib/atomic_file.h"
#include "lib/errors.h"
#include "lib/gate.h"
#include "lib/log.h"
#include "lib/report_json.h"
#include "lib/report_text.h"
#include "lib/scan.h"
#include "lib/worker/worker_main.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <sstream>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

using namespace leakgate;

struct OutputOptions {
    std::string json;
    bool quiet = false;
    bool noColor = false;
};

int emit(const Report& report, const OutputOptions& output) {
    if (!output.quiet) {
        // Machine output on stdout is never mixed with the human report.
        FILE* stream = output.json == "-" ? stderr : stdout;
        bool color = !output.noColor && std::getenv("NO_COLOR") == nullptr && ::isatty(::fileno(stream));
        std::fputs(formatText(report, {color}).c_str(), stream);
        std::fflush(stream);
    }
    // After the text: a JSON file that cannot be written must not cost the results.
    if (!output.json.empty()) writeOutputFile(output.json, formatJson(report));
    return static_cast<int>(report.exitCode());
}

// Options every reporting subcommand shares.
void addOutputOptions(CLI::App* command, OutputOptions& output, std::optional<std::string>& python, int& timeout) {
    command->add_option("--json", output.json, "Write the JSON report to FILE ('-' for stdout)");
    command->add_option("--python", python,
                        "Interpreter of the environment to run in (a venv's python; same major.minor as this build)");
    command->add_option("--timeout", timeout, "Seconds before a worker is killed")->check(CLI::PositiveNumber);
    command->add_flag("-q,--quiet", output.quiet, "No text report, no target output");
    command->add_flag("--no-color", output.noColor, "No colour in the text report (NO_COLOR is honoured too)");
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
    CLI::App* gateCommand = app.add_subcommand(
        "gate", "Audit a DSL's decorators against leakgate's reference runtime (a release gate)");
    addOutputOptions(gateCommand, output, gate.python, timeoutSeconds);
    gateCommand->add_option("--target", gate.target,
                            "A target module (a path, or a built-in name: reference); default: the bundled "
                            "model of nvidia-cutlass-dsl 4.6.1");
    gateCommand->add_option("--checks", checks,
                            "Comma-separated checks or workloads to run (default: all; see the README)");
    gateCommand->add_option("--sentinel-mib", sentinelMiB, "Host payload of each sentinel, in MiB")
        ->check(CLI::NonNegativeNumber);
    gateCommand->add_option("--soak-steps", gate.soakSteps, "Soak steps per target (default: run for --soak-seconds)")
        ->check(CLI::NonNegativeNumber);
    gateCommand->add_option("--soak-seconds", gate.soakSeconds, "Soak budget per target, in seconds (default 30)")
        ->check(CLI::PositiveNumber);
    gateCommand->add_option("--distinct-values", gate.distinctValues,
                            "Distinct values the values workload packs to test boundedness (default 1000000)")
        ->check(CLI::PositiveNumber);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        int code = app.exit(error);
        return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
    }
    if (verbosity > 0) log::setLevel(log::Level::kDebug);
    if (output.quiet) log::setLevel(log::Level::kQuiet);
    ::setenv("LEAKGATE_LOG_LEVEL", std::to_string(static_cast<int>(log::level())).c_str(), 1);

    if (scanCommand->parsed()) {
        scan.script = command.front();
        scan.args.assign(command.begin() + 1, command.end());
        scan.timeout = std::chrono::seconds(timeoutSeconds);
        scan.forwardOutput = !output.quiet;
        return emit(runScan(scan), output);
    }
    std::stringstream list(checks);
    for (std::string name; std::getline(list, name, ',');) {
        if (!name.empty()) gate.checks.push_back(name);
    }
    gate.timeout = std::chrono::seconds(timeoutSeconds);
    gate.sentinelBytes = sentinelMiB << 20;
    gate.forwardOutput = !output.quiet;
    return emit(runGate(gate), output);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == worker::kWorkerMode) {
        try {
            return worker::workerMain(argv[2]);
        } catch (const std::exception& error) {
            std::fprintf(stderr, "leakgate worker: %s\n", error.what());
            return static_cast<int>(ExitCode::kErrored);
        }
    }
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

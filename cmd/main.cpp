// leakgate's command line: parse, call one library entry point, format, return an exit code.
#include "lib/commands/bisect.h"
#include "lib/commands/builtin_targets.h"
#include "lib/commands/cache.h"
#include "lib/commands/merge.h"
#include "leakgate/errors.h"
#include "lib/base/interrupt.h"
#include "lib/commands/gate.h"
#include "lib/commands/lint.h"
#include "lib/base/log.h"
#include "lib/base/scratch_dir.h"
#include "lib/base/spelling.h"
#include "lib/base/subprocess.h"
#include "lib/report/emit.h"
#include "lib/commands/scan.h"
#include "lib/worker/main.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

// The cores this process may run on: the default of gate's and lint's -j.
int defaultJobs() {
    return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 64);
}

// -j,--jobs N, by default the cores; 1 runs one after another.
void addJobsOption(CLI::App* command, int& jobs, const std::string& what) {
    jobs = defaultJobs();
    command
        ->add_option("-j,--jobs", jobs,
                     fmt::format("{} (default {}, the cores; 1: one after another)", what, jobs))
        ->check(CLI::Range(1, 64));
}

using namespace leakgate;

using OutputOptions = report::Outputs;

// Short range messages: CLI::PositiveNumber quotes the whole range of a double (300 digits).
double numberOf(const std::string& text) {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return value;
}
const CLI::Validator kPositive(
    [](std::string& text) -> std::string {
        try {
            return numberOf(text) > 0 ? "" : "must be more than 0, not " + text;
        } catch (const std::exception&) {
            return "not a number: " + text;
        }
    },
    "POSITIVE");
const CLI::Validator kNonNegative(
    [](std::string& text) -> std::string {
        try {
            return numberOf(text) >= 0 ? "" : "must be 0 or more, not " + text;
        } catch (const std::exception&) {
            return "not a number: " + text;
        }
    },
    "NONNEGATIVE");

// The long option names of `command` and of the app above it (options fall through to it).
std::vector<std::string> longOptions(const CLI::App* command) {
    std::vector<std::string> names;
    for (const CLI::App* app = command; app; app = app->get_parent()) {
        for (const CLI::Option* option : app->get_options()) {
            for (const std::string& name : option->get_lnames())
                names.push_back("--" + name);
        }
    }
    return names;
}

// A subcommand or an option nobody has: the error names the closest one there is.
void checkSpelling(const CLI::App& app, int argc, char** argv) {
    std::vector<std::string> subcommands;
    for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
        subcommands.push_back(command->get_name());
    const CLI::App* chosen = &app;
    for (int i = 1; i < argc; ++i) {
        std::string word = argv[i];
        if (word == "--") break;
        if (chosen == &app && !word.starts_with("-")) {
            if (std::find(subcommands.begin(), subcommands.end(), word) == subcommands.end()) {
                throw UsageError(fmt::format("unknown subcommand `{}`{}; the subcommands are {}", word,
                                             didYouMean(word, subcommands), fmt::join(subcommands, ", ")));
            }
            chosen = app.get_subcommand(word);
            continue;
        }
        if (!word.starts_with("-")) { // a nested subcommand (cache prune) takes the options after it
            for (const CLI::App* nested : chosen->get_subcommands([](const CLI::App*) { return true; }))
                if (nested->get_name() == word) chosen = nested;
            continue;
        }
        if (word.starts_with("--") && word.size() > 2) {
            std::string name = word.substr(0, word.find('='));
            std::vector<std::string> known = longOptions(chosen);
            if (std::find(known.begin(), known.end(), name) == known.end() && name != "--help" &&
                name != "--version") {
                throw UsageError(fmt::format("unknown option `{}`{}{}", name,
                                             chosen == &app ? "" : " for `" + chosen->get_name() + "`",
                                             didYouMean(name, known)));
            }
        }
    }
}

// The report, with the command line that made it (SARIF's invocation, the HTML header).
Report withArguments(Report report, int argc, char** argv) {
    report.arguments.assign(argv, argv + argc);
    return report;
}

// --color WHEN and --no-color; a non-empty NO_COLOR turns colour off under `auto` (no-color.org).
void addColorOptions(CLI::App* command, OutputOptions& output) {
    command
        ->add_option_function<std::string>(
            "--color",
            [&output](const std::string& when) {
                output.color = when == "always" ? report::Color::kAlways
                               : when == "never" ? report::Color::kNever
                                                 : report::Color::kAuto;
            },
            "Colour in the text report: auto (a terminal, and NO_COLOR empty or unset), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->type_name("WHEN");
    command->add_flag_callback("--no-color", [&output] { output.color = report::Color::kNever; },
                               "No colour in the text report (--color never)");
}

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
    command->add_option("--timeout", timeout, "Seconds before a worker is killed")->check(kPositive);
    command->add_flag("-q,--quiet", output.quiet, "No text report, no target output");
    addColorOptions(command, output);
}

int run(int argc, char** argv) {
    CLI::App app{"leakgate: finds memory that Python GPU DSLs keep alive when they should not"};
    app.require_subcommand(1);
    app.fallthrough(); // -v, --version anywhere: a subcommand passes what it lacks to the app
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
    scanCommand->add_option("-m", scan.module, "Run MODULE as `python -m` does (then ARGS...)")
        ->type_name("MODULE");
    // The limits that make a finding of the cycles without a frame and of a holder's growth.
    auto addLimit = [&](const char* option, std::int64_t& limit, const char* help) {
        scanCommand->add_option(option, limit, help)->check(CLI::PositiveNumber)->capture_default_str();
    };
    addLimit("--cycle-instances", scan.cycleInstances,
             "cyclic-garbage: fail when one shape of cycle without a frame has this many instances");
    addLimit("--cycle-bytes", scan.cycleBytes,
             "cyclic-garbage: fail when one shape of cycle without a frame pins this many bytes");
    addLimit("--held-entries", scan.heldEntries,
             "held-growth: fail when one library-held container gains this many entries while the program's "
             "code runs");
    addLimit("--held-bytes", scan.heldBytes,
             "held-growth: fail when the entries one library-held container gains keep this many bytes");
    scanCommand->add_flag("--trace-sites", scan.traceSites,
                          "Run the script under tracemalloc, so that cyclic-garbage says where its cycles are "
                          "made (slower)");
    scanCommand->add_option("command", command, "-- SCRIPT [ARGS...], or ARGS... after -m MODULE");

    GateOptions gate;
    std::string checks;
    std::int64_t sentinelMiB = gate.sentinelBytes >> 20;
    std::int64_t deviceSentinelMiB = gate.deviceSentinelBytes >> 20;
    CLI::App* gateCommand = app.add_subcommand(
        "gate", "Audit a DSL's decorators against leakgate's reference runtime (a release gate)");
    addOutputOptions(gateCommand, output, gate.python, timeoutSeconds);
    gateCommand->add_option(
        "--target", gate.target,
        "A target module (a path, or a built-in name: " + builtinTargetNames() +
            "); default: the bundled model of nvidia-cutlass-dsl 4.6.1");
    gateCommand->add_option("--checks", checks,
                            "Comma-separated checks or workloads to run (default: all; see docs/reference/checks.md; "
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
        ->check(kNonNegative);
    gateCommand
        ->add_option("--soak-seconds", gate.soakSeconds,
                     "Soak budget per target, in seconds (default 30)")
        ->check(kPositive);
    std::int64_t soakMaxMiB = gate.soakMaxGrowthBytes >> 20;
    gateCommand
        ->add_option("--soak-max-mib", soakMaxMiB,
                     fmt::format("RSS growth at which a soak stops before its budget, in MiB (default {})",
                                 soakMaxMiB))
        ->check(CLI::Range(std::int64_t{1}, kMaxSentinelMiB));
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
        ->check(kPositive);
    gateCommand
        ->add_option("--launch-runs", gate.launchRuns, "Measured runs per launch case (default 5)")
        ->check(kPositive);
    gateCommand->add_option("--probe", gate.probes,
                            "A probe plug-in: a Python file (FILE.py) or a C++ shared library "
                            "(leakgate/plugin.h); repeatable")
        ->type_name("FILE")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    addJobsOption(gateCommand, gate.jobs,
                  "Workers run at the same time: target and reference, and different workloads");
    gateCommand->add_flag("--lint", gate.lint,
                          "Also lint the target's sources (a file target's file; cute: the installed "
                          "nvidia_cutlass_dsl) and mark findings the dynamic checks confirm");
    gateCommand
        ->add_option("--distinct-values", gate.distinctValues,
                     "Distinct values the values workload packs to test boundedness (default 1000000)")
        ->check(kPositive);

    LintOptions lint;
    CLI::App* lintCommand = app.add_subcommand(
        "lint",
        "Find frame-capture patterns in Python (AST) and C/C++ sources (libclang), before anything runs");
    addOutputOptions(lintCommand, output, lint.python, timeoutSeconds);
    lintCommand->add_option("paths", lint.paths, "Python and C/C++ files, or directories")->required();
    addJobsOption(lintCommand, lint.jobs,
                  "Python lint workers at the same time, each given a share of the files");
    lintCommand->add_option("--compile-commands", lint.compileCommands,
                            "C/C++: a compile_commands.json or its directory (default: one at the top "
                            "of a directory given, or in its build/)");
    lintCommand->add_option("--cxx-flag", lint.cxxFlags,
                            "C/C++: a compiler flag for files without a compile command (repeat; "
                            "--cxx-flag=-DNAME)");
    lintCommand->add_option("-I,--include", lint.includeDirs,
                            "C/C++: an include directory for files without a compile command (repeat; "
                            "Python.h's is always added)");
    lintCommand->add_option_function<std::vector<std::string>>(
                   "--select", [&lint](const std::vector<std::string>& rules) { lint.select = rules; },
                   "Only these rules (comma-separated; replaces the pyproject.toml's `select`)")
        ->type_name("RULES");
    lintCommand->add_option("--ignore", lint.ignore, "Not these rules (comma-separated; repeatable)")
        ->type_name("RULES");
    lintCommand->add_option("--exclude", lint.exclude,
                            "Skip paths matching GLOB (a name: any component; with `/`: the path from the "
                            "current directory); repeatable, added to the pyproject.toml's")
        ->type_name("GLOB");
    lintCommand->add_flag("--site-packages-headers", lint.sitePackagesHeaders,
                          "C/C++: also read the headers found under site-packages (a package's shipped API)");
    bool noConfig = false;
    CLI::Option* configOption =
        lintCommand
            ->add_option("--config", lint.configFile,
                         "A pyproject.toml whose [tool.leakgate.lint] to read (default: the nearest one "
                         "above the paths)")
            ->type_name("FILE");
    lintCommand->add_flag("--no-config", noConfig, "Read no pyproject.toml")->excludes(configOption);

    BisectOptions bisect;
    std::string versions;
    std::string bisectChecks = "decorate,import";
    CLI::App* bisectCommand = app.add_subcommand(
        "bisect", "Run the gate on releases of a DSL package, each in its own venv, and tabulate");
    bisectCommand->add_option("--package", bisect.package,
                              "The PyPI package (default: the built-in target's, nvidia-cutlass-dsl "
                              "for cute)");
    bisectCommand->add_option("--versions", versions,
                              "Comma-separated versions (4.4.2,4.6.1), or a PEP 440 specifier set "
                              "matched against the index ('>=4.6,<4.8')");
    bisectCommand->add_option("--from", bisect.from, "With --to: every release from this version ...");
    bisectCommand->add_option("--to", bisect.to, "... to this one, inclusive");
    bisectCommand->add_flag("--pre", bisect.pre, "Pre- and dev-releases count as releases (PEP 440 order)");
    bisectCommand->add_option("--python", bisect.pythonVersion,
                              "X.Y: the Python of the venvs; only the one this build embeds (a build per "
                              "Python: scripts/build.sh)")
        ->type_name("X.Y");
    bisectCommand->add_option("-j,--jobs", bisect.jobs, "Releases installed and gated at the same time (default 1)")
        ->check(CLI::Range(1, 64));
    std::string shard;
    bisectCommand->add_option("--shard", shard,
                              "I/N: only the I-th of every N releases (1-based), for N CI jobs; "
                              "`leakgate merge` joins their JSON")
        ->type_name("I/N");
    bisectCommand->add_option("--extra", bisect.extras,
                              "An optional extra installed with every release (package[cu13]); repeatable")
        ->type_name("EXTRA")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    bisectCommand->add_option("--with", bisect.with,
                              "A requirement installed beside every release, in its venv ('numpy<2.5', "
                              "setuptools); repeatable")
        ->type_name("REQ")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    bisectCommand->add_option("--installer", bisect.installer,
                              "What installs each release from the wheelhouse: auto (default: uv when "
                              "$LEAKGATE_UV or PATH has it, else pip), uv or pip")
        ->check(CLI::IsMember({"auto", "uv", "pip"}));
    bisectCommand->add_option("--target", bisect.gate.target,
                              "The target for every version: a built-in DSL (" + builtinTargetNames(true) +
                                  "; default cute) or a file");
    bisectCommand->add_option("--checks", bisectChecks, "Checks or workloads (default decorate,import)");
    bisectCommand->add_option("--probe", bisect.gate.probes,
                              "A probe plug-in run on every version (as gate --probe); repeatable")
        ->type_name("FILE")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    bisectCommand->add_option("--json", output.json, "Write the JSON table to FILE ('-' for stdout)");
    bisectCommand->add_option("--junit", output.junit,
                              "Write a JUnit XML report to FILE: a suite per release and role, its "
                              "transitions as properties");
    bisectCommand->add_option("--sarif", output.sarif,
                              "Write a SARIF 2.1.0 report to FILE ('-' for stdout): a run per release, each its own category");
    bisectCommand->add_option("--html", output.html,
                              "Write an HTML page to FILE: the matrix, the transitions, each release's findings");
    bisectCommand->add_option("--timeout", timeoutSeconds, "Seconds before a worker is killed")
        ->check(kPositive);
    bisectCommand->add_option("--soak-seconds", bisect.gate.soakSeconds,
                              "Soak budget per target, in seconds");
    bisectCommand->add_option("--launch-calls", bisect.gate.launchCalls,
                              "Calls per measured launch run");
    bisectCommand->add_option("--launch-runs", bisect.gate.launchRuns, "Measured runs per launch case");
    bisectCommand->add_option("--distinct-values", bisect.gate.distinctValues,
                              "Distinct values for values-bounded");
    bisectCommand->add_flag("-q,--quiet", output.quiet, "No text report, no target output");
    addColorOptions(bisectCommand, output);

    std::vector<std::string> mergeFiles;
    CLI::App* mergeCommand = app.add_subcommand(
        "merge", "Join the JSON reports of bisect shards (--shard I/N) into one bisect report");
    mergeCommand->add_option("reports", mergeFiles, "bisect --json reports")->required()->type_name("FILE");
    mergeCommand->add_option("--json", output.json, "Write the joined JSON report to FILE ('-' for stdout)");
    mergeCommand->add_option("--junit", output.junit, "Write the joined JUnit XML report to FILE");
    mergeCommand->add_option("--sarif", output.sarif, "Write the joined SARIF 2.1.0 report to FILE (a run per release)");
    mergeCommand->add_option("--html", output.html, "Write the joined report as an HTML page to FILE");
    mergeCommand->add_flag("-q,--quiet", output.quiet, "No text report");
    addColorOptions(mergeCommand, output);

    CLI::App* cacheCommand =
        app.add_subcommand("cache", "What leakgate keeps: the release venvs, the wheelhouse, interpreters' environments");
    cacheCommand->require_subcommand(1);
    CLI::App* cacheList = cacheCommand->add_subcommand("list", "Each venv, the wheelhouse and the kept environments, with sizes");
    PruneOptions prune;
    CLI::App* cachePrune = cacheCommand->add_subcommand("prune", "Remove venvs, kept environments and wheels");
    cachePrune->add_flag("--keep-wheels", prune.keepWheels, "Keep the wheelhouse (venvs are re-made from it offline)");
    cachePrune->add_option("--older-than", prune.olderThanDays, "Only what was not used (venvs) or written (files) for DAYS days")
        ->type_name("DAYS")
        ->check(kNonNegative);

    checkSpelling(app, argc, argv);
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
    if (scanCommand->parsed() && scan.module.empty()) {
        if (command.empty()) throw UsageError("scan: give a script (-- SCRIPT [ARGS...]) or -m MODULE");
        inputs.push_back(command.front());
    }
    if (lintCommand->parsed()) {
        inputs = lint.paths;
        if (lint.compileCommands) inputs.push_back(*lint.compileCommands);
        if (lint.configFile) inputs.push_back(*lint.configFile);
    }
    if (gateCommand->parsed()) {
        for (const std::string* path : {&gate.target, &gate.baseline, &gate.budgets})
            if (!path->empty()) inputs.push_back(*path);
    }
    if (mergeCommand->parsed()) inputs = mergeFiles;
    report::checkOutputs(output, inputs);
    // Every temporary file of the run, its workers' included, goes here and goes with it.
    RunScratchDirectory scratch;
    if (scanCommand->parsed()) {
        if (scan.module.empty()) {
            scan.script = command.front();
            scan.args.assign(command.begin() + 1, command.end());
        } else {
            scan.args = command;
        }
        scan.timeout = std::chrono::seconds(timeoutSeconds);
        scan.forwardOutput = !output.quiet;
        return report::emit(withArguments(runScan(scan), argc, argv), output);
    }
    if (lintCommand->parsed()) {
        lint.readProjectFile = !noConfig;
        lint.timeout = std::chrono::seconds(timeoutSeconds);
        lint.forwardOutput = !output.quiet;
        return report::emit(withArguments(runLint(lint), argc, argv), output);
    }
    if (mergeCommand->parsed()) {
        return report::emit(mergeBisectReports(mergeFiles), output);
    }
    if (cacheList->parsed()) {
        std::fputs(formatCacheList(readCache()).c_str(), stdout);
        return 0;
    }
    if (cachePrune->parsed()) {
        const PruneOutcome pruned = pruneCache(prune);
        std::fputs(formatPruneOutcome(pruned, readCache()).c_str(), stdout);
        return 0;
    }
    if (bisectCommand->parsed()) {
        if (!shard.empty()) {
            int index = 0, count = 0;
            char slash = 0, extra = 0;
            std::stringstream parts(shard);
            if (!(parts >> index >> slash >> count) || slash != '/' || parts >> extra || count < 1 || index < 1 ||
                index > count) {
                throw UsageError(fmt::format("--shard {}: give I/N with 1 <= I <= N (--shard 2/4)", shard));
            }
            bisect.shard = index;
            bisect.shards = count;
        }
        std::stringstream list(versions);
        for (std::string version; std::getline(list, version, ',');) {
            if (!version.empty()) bisect.versions.push_back(version);
        }
        std::stringstream checkList(bisectChecks);
        for (std::string name; std::getline(checkList, name, ',');) {
            if (!name.empty()) bisect.gate.checks.push_back(name);
        }
        bisect.gate.timeout = std::chrono::seconds(timeoutSeconds);
        // The cores not taken by the releases gated at the same time go to each gate's workers.
        bisect.gate.jobs = std::max(1, defaultJobs() / bisect.jobs);
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
    gate.soakMaxGrowthBytes = soakMaxMiB << 20;
    gate.forwardOutput = !output.quiet;
    return report::emit(withArguments(runGate(gate), argc, argv), output);
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

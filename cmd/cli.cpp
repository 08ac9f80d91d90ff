// leakgate's command line: parse, run the one subcommand given (cmd/subcommand.h: one file each),
// return its exit code. The leakgate binary (cmd/main.cpp) and the Python package's extension
// module (package/native.cpp, `leakgate-dsl`) both run it.
#include "cmd/cli.h"
#include "cmd/subcommand.h"
#include "leakgate/errors.h"
#include "lib/base/interrupt.h"
#include "lib/base/log.h"
#include "lib/base/scratch_dir.h"
#include "lib/base/spelling.h"
#include "lib/base/subprocess.h"
#include "lib/report/emit.h"
#include "lib/worker/client.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace leakgate;

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
                                             base::didYouMean(word, subcommands),
                                             fmt::join(subcommands, ", ")));
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
                                             base::didYouMean(name, known)));
            }
        }
    }
}

int run(int argc, char** argv) {
    CLI::App app{base::log::programName() +
                     ": finds memory that Python GPU DSLs keep alive when they should not",
                 base::log::programName()};
    app.require_subcommand(1);
    app.fallthrough(); // -v, --version anywhere: a subcommand passes what it lacks to the app
    app.set_version_flag("--version", base::log::programName() + " " + LEAKGATE_VERSION + " (Python " +
                                          LEAKGATE_PYTHON_VERSION + ")");
    int verbosity = 0;
    app.add_flag("-v,--verbose", verbosity, "More diagnostics on stderr");

    cmd::Common common;
    std::vector<std::unique_ptr<cmd::Subcommand>> subcommands;
    for (auto add :
         {cmd::addScanCommand, cmd::addGateCommand, cmd::addLintCommand, cmd::addBisectCommand,
          cmd::addMergeCommand, cmd::addCacheCommand, cmd::addReproCommand})
        subcommands.push_back(add(app, common));

    checkSpelling(app, argc, argv);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        int code = app.exit(error);
        return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
    }
    if (verbosity > 0) base::log::setLevel(base::log::Level::kDebug);
    if (common.output.quiet) base::log::setLevel(base::log::Level::kQuiet);
    ::setenv("LEAKGATE_LOG_LEVEL", std::to_string(static_cast<int>(base::log::level())).c_str(), 1);

    auto given = std::find_if(subcommands.begin(), subcommands.end(),
                              [](const auto& subcommand) { return subcommand->parsed(); });
    // What the run reads: a report written over one of them would destroy it.
    report::checkOutputs(common.output, (*given)->inputs());
    // Every temporary file of the run, its workers' included, goes here and goes with it.
    base::RunScratchDirectory scratch;
    return (*given)->run({argc, argv});
}

} // namespace

namespace leakgate::cmd {

int runCli(int argc, char** argv, const std::string& extensionModule) {
    if (argc > 0 && argv[0])
        base::log::setProgramName(std::filesystem::path(argv[0]).filename().string());
    if (!extensionModule.empty()) worker::startWorkersThroughInterpreter(extensionModule);
    base::interrupt::installHandlers(); // a signal kills the workers' groups and exits 128 + signal
    base::adoptOrphans();               // what a worker leaves in another session is killed when it ends
    try {
        return run(argc, argv);
    } catch (const Error& error) {
        std::fprintf(stderr, "%s: %s\n", base::log::programName().c_str(), error.what());
        return static_cast<int>(error.exitCode());
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s: %s\n", base::log::programName().c_str(), error.what());
        return static_cast<int>(ExitCode::kErrored);
    }
}

} // namespace leakgate::cmd

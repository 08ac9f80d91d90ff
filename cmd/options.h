// What every subcommand of the command line shares: the output options, the worker timeout, the
// validators with short messages, and the helpers that add them to a subcommand.
#pragma once

#include "lib/report/emit.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace leakgate::cmd {

using OutputOptions = report::Outputs;

// The options several subcommands set, read after parsing.
struct Common {
    OutputOptions output;
    int timeoutSeconds = 300;
};

// The command line as given, for the report (SARIF's invocation, the HTML header).
struct Invocation {
    int argc;
    char** argv;
};

// Short range messages: CLI::PositiveNumber quotes the whole range of a double (300 digits).
extern const CLI::Validator kPositive;
extern const CLI::Validator kNonNegative;

// The cores this process may run on: the default of gate's and lint's -j.
int defaultJobs();
// -j,--jobs N, by default the cores; 1 runs one after another.
void addJobsOption(CLI::App* command, int& jobs, const std::string& what);
// --color WHEN and --no-color; a non-empty NO_COLOR turns colour off under `auto` (no-color.org).
void addColorOptions(CLI::App* command, OutputOptions& output);
// --json, --junit, --sarif, --html, --python, --timeout, -q and the colour options.
void addOutputOptions(CLI::App* command, Common& common, std::optional<std::string>& python);

// The report, with the command line that made it.
Report withArguments(Report report, const Invocation& invocation);
// The items of a comma-separated list, empty ones left out.
std::vector<std::string> commaList(const std::string& text);

} // namespace leakgate::cmd

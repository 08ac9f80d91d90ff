#include "cmd/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace leakgate::cmd {
namespace {

double numberOf(const std::string& text) {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return value;
}

CLI::Validator numberValidator(bool (*accepts)(double), const char* rule, const char* name) {
    return CLI::Validator(
        [accepts, rule](std::string& text) -> std::string {
            try {
                return accepts(numberOf(text)) ? "" : fmt::format("must be {}, not {}", rule, text);
            } catch (const std::exception&) {
                return "not a number: " + text;
            }
        },
        name);
}

} // namespace

const CLI::Validator kPositive =
    numberValidator([](double value) { return value > 0; }, "more than 0", "POSITIVE");
const CLI::Validator kNonNegative =
    numberValidator([](double value) { return value >= 0; }, "0 or more", "NONNEGATIVE");

int defaultJobs() {
    return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 64);
}

void addJobsOption(CLI::App* command, int& jobs, const std::string& what) {
    jobs = defaultJobs();
    command
        ->add_option("-j,--jobs", jobs,
                     fmt::format("{} (default {}, the cores; 1: one after another)", what, jobs))
        ->check(CLI::Range(1, 64));
}

void addColorOptions(CLI::App* command, OutputOptions& output) {
    command
        ->add_option_function<std::string>(
            "--color",
            [&output](const std::string& when) {
                output.color = when == "always"  ? report::Color::kAlways
                               : when == "never" ? report::Color::kNever
                                                 : report::Color::kAuto;
            },
            "Colour in the text report: auto (a terminal, and NO_COLOR empty or unset), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->type_name("WHEN");
    command->add_flag_callback(
        "--no-color", [&output] { output.color = report::Color::kNever; },
        "No colour in the text report (--color never)");
}

void addOutputOptions(CLI::App* command, Common& common, std::optional<std::string>& python) {
    OutputOptions& output = common.output;
    command->add_option("--json", output.json, "Write the JSON report to FILE ('-' for stdout)");
    command->add_option("--junit", output.junit, "Write a JUnit XML report to FILE ('-' for stdout)");
    command->add_option("--sarif", output.sarif, "Write a SARIF 2.1.0 report to FILE ('-' for stdout)");
    command->add_option("--html", output.html, "Write a self-contained HTML report to FILE");
    command->add_option(
        "--python", python,
        "Interpreter of the environment to run in (a venv's python; same major.minor as this build)");
    command->add_option("--timeout", common.timeoutSeconds, "Seconds before a worker is killed")
        ->check(kPositive);
    command->add_flag("-q,--quiet", output.quiet, "No text report, no target output");
    addColorOptions(command, output);
}

Report withArguments(Report report, const Invocation& invocation) {
    report.arguments.assign(invocation.argv, invocation.argv + invocation.argc);
    return report;
}

std::vector<std::string> commaList(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');) {
        if (!item.empty()) items.push_back(item);
    }
    return items;
}

} // namespace leakgate::cmd

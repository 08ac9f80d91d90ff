#include "lib/lint.h"

#include "lib/errors.h"
#include "lib/python/environment.h"
#include "lib/worker/worker_client.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <string_view>

namespace leakgate {
namespace {

// A worker's spec travels as one command-line argument, and Linux refuses an argument over
// 128 KiB (MAX_ARG_STRLEN): a long list of files (`leakgate lint $(git ls-files '*.py')`) is
// split across workers, each given at most this many bytes of paths.
constexpr size_t kPathBytesPerWorker = 64 * 1024;

std::vector<std::vector<std::string>> splitForWorkers(const std::vector<std::string>& paths) {
    std::vector<std::vector<std::string>> chunks(1);
    size_t bytes = 0;
    for (const auto& path : paths) {
        if (!chunks.back().empty() && bytes + path.size() + 4 > kPathBytesPerWorker) {
            chunks.emplace_back();
            bytes = 0;
        }
        chunks.back().push_back(path);
        bytes += path.size() + 4; // quotes and a comma in the JSON
    }
    return chunks;
}

std::string plural(size_t count, const char* noun) {
    return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

// The one check: fail on any finding. Files that did not parse are counted, not failed.
CheckResult decide(const WorkloadResult& result) {
    size_t files = result.details.value("files", size_t{0});
    size_t unparsed = result.details.contains("unparsed") ? result.details["unparsed"].size() : 0;
    size_t checked = files - unparsed;
    std::string notParsed =
        unparsed ? fmt::format("; {} not parsed (see details.unparsed)", plural(unparsed, "file")) : "";
    auto amount = static_cast<std::int64_t>(result.findings.size());
    if (result.findings.empty()) {
        return {
            "lint", Status::kPass,
            fmt::format("{} checked, no frame kept past its call{}", plural(checked, "file"), notParsed),
            amount};
    }
    std::map<std::string, int> perRule;
    std::map<std::string, int> perFile;
    for (const auto& finding : result.findings) {
        ++perRule[finding.kind.substr(std::string_view("lint:").size())];
        ++perFile[finding.frames.front().file];
    }
    std::vector<std::string> rules;
    for (const char* rule : kLintRules) {
        if (perRule.count(rule)) rules.push_back(fmt::format("{} {}", perRule[rule], rule));
    }
    return {"lint", Status::kFail,
            fmt::format("{} in {} of {} checked ({}){}", plural(result.findings.size(), "finding"),
                        perFile.size(), plural(checked, "file"), fmt::join(rules, ", "), notParsed),
            amount};
}

// Adds one worker's result to the run's: findings and unparsed files add up, the first error
// is kept.
void merge(WorkloadResult& into, WorkloadResult&& part) {
    for (auto& finding : part.findings)
        into.findings.push_back(std::move(finding));
    into.details["files"] =
        into.details.value("files", size_t{0}) + part.details.value("files", size_t{0});
    for (const auto& entry : part.details.value("unparsed", nlohmann::json::array()))
        into.details["unparsed"].push_back(entry);
    if (part.details.contains("rules")) into.details["rules"] = part.details["rules"];
    if (part.details.contains("worker_exit")) into.details["worker_exit"] = part.details["worker_exit"];
    if (part.error && !into.error) into.error = std::move(part.error);
    into.seconds += part.seconds;
}

} // namespace

Report runLint(const LintOptions& options) {
    if (options.paths.empty()) throw UsageError("lint needs at least one file or directory");
    std::vector<std::string> paths;
    for (const auto& path : options.paths) {
        std::error_code error;
        if (!std::filesystem::exists(path, error))
            throw UsageError(fmt::format("no such file or directory: {}", path));
        paths.push_back(std::filesystem::absolute(path).lexically_normal().string());
    }
    python::Environment env =
        python::queryEnvironment(options.python.value_or(python::buildPythonExecutable()));

    WorkloadResult result;
    result.workload = "lint";
    result.subject = options.paths.size() == 1 ? options.paths.front()
                                               : fmt::format("{} and {} more", options.paths.front(),
                                                             options.paths.size() - 1);
    result.details = {{"files", 0}, {"unparsed", nlohmann::json::array()}};
    for (auto& chunk : splitForWorkers(paths)) {
        worker::WorkerRequest request;
        request.spec = {{"workload", "lint"},
                        {"subject", result.subject},
                        {"paths", std::move(chunk)},
                        {"environment", env},
                        {"argv", {"leakgate-lint"}}};
        request.timeout = options.timeout;
        request.forwardOutput = options.forwardOutput;
        merge(result, worker::runInWorker(request));
    }
    // A worker that failed leaves files unchecked: the run cannot pass.
    CheckResult check = decide(result);
    if (result.error && check.status == Status::kPass) {
        check.status = Status::kError;
        check.reason = result.error->message;
    }
    result.checks.push_back(std::move(check));

    Report report;
    report.command = "lint";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    report.results.push_back(std::move(result));
    return report;
}

} // namespace leakgate

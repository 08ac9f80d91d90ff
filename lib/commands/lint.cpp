#include "lib/commands/lint.h"

#include "leakgate/errors.h"
#include "lib/lint/cxx.h"
#include "lib/lint/python.h"
#include "lib/python/environment.h"
#include "lib/worker/client.h"

#include <fmt/format.h>

#include <algorithm>
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
    if (result.findings.empty() && unparsed > 0) {
        // A file that could not be analysed was not checked: the run cannot pass.
        return {"lint", Status::kError,
                fmt::format("{} could not be analysed (see details.unparsed); {} checked, no frame kept "
                            "past its call",
                            plural(unparsed, "file"), plural(checked, "file")),
                amount};
    }
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
    std::vector<std::string> known(std::begin(kLintRules), std::end(kLintRules));
    known.insert(known.end(), std::begin(kCxxLintRules), std::end(kCxxLintRules));
    for (const auto& rule : known) {
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

// The inputs, split by who reads them: directories and Python files go to the Python worker
// (which searches directories for *.py itself), C/C++ files, listed or found under a directory,
// to libclang here.
struct Inputs {
    std::vector<std::string> python;
    std::vector<std::string> cxx;
    std::optional<std::string> compileCommands; // found at the top of a directory given
    size_t pythonFiles = 0; // the files given, and the *.py found in the directories given
};

bool skippedDirectory(const std::filesystem::path& dir) {
    std::string name = dir.filename().string();
    return name.starts_with(".") || name == "__pycache__";
}

Inputs splitInputs(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    Inputs inputs;
    for (const auto& path : paths) {
        if (!fs::is_directory(path)) {
            (isCxxSource(path) ? inputs.cxx : inputs.python).push_back(path);
            if (!isCxxSource(path)) ++inputs.pythonFiles;
            continue;
        }
        inputs.python.push_back(path);
        for (const char* place : {"compile_commands.json", "build/compile_commands.json"}) {
            if (!inputs.compileCommands && fs::is_regular_file(fs::path(path) / place))
                inputs.compileCommands = (fs::path(path) / place).string();
        }
        std::vector<std::string> found;
        std::error_code error;
        for (auto it = fs::recursive_directory_iterator(
                 path, fs::directory_options::skip_permission_denied, error);
             it != fs::recursive_directory_iterator(); it.increment(error)) {
            if (error) break;
            if (it->is_directory(error) && skippedDirectory(it->path())) {
                it.disable_recursion_pending();
            } else if (it->is_regular_file(error) && isCxxSource(it->path().string())) {
                found.push_back(it->path().string());
            } else if (it->is_regular_file(error) && it->path().extension() == ".py") {
                ++inputs.pythonFiles;
            }
        }
        std::sort(found.begin(), found.end());
        inputs.cxx.insert(inputs.cxx.end(), found.begin(), found.end());
    }
    return inputs;
}

// The C/C++ files: findings and unparsed files join the Python ones under the one `lint` check;
// without libclang they are a skipped check of their own. A file whose parse crashed or timed out
// is one of the unparsed (its child process died, not this one), so the Python findings stay.
void lintCxx(const LintOptions& options, const Inputs& inputs, WorkloadResult& result) {
    if (inputs.cxx.empty()) return;
    if (!cxxLintAvailable()) {
        result.checks.push_back(
            {"lint-cxx", Status::kSkip,
             fmt::format("{} not checked: {}", plural(inputs.cxx.size(), "C/C++ file"),
                         cxxLintUnavailableReason())});
        return;
    }
    CxxLintOptions cxx;
    cxx.files = inputs.cxx;
    cxx.compileCommands = options.compileCommands ? options.compileCommands : inputs.compileCommands;
    cxx.flags = options.cxxFlags;
    cxx.includeDirs = options.includeDirs;
    cxx.timeout = options.timeout; // per translation unit, each parsed in a child of its own
    CxxLintResult lint = lintCxxFiles(cxx);
    for (auto& finding : lint.findings)
        result.findings.push_back(std::move(finding));
    result.details["files"] = result.details.value("files", size_t{0}) + lint.files;
    for (auto& entry : lint.unparsed)
        result.details["unparsed"].push_back(std::move(entry));
    result.details["cxx"] = {{"files", lint.files}, {"compile_commands", lint.compileCommands}};
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
    Inputs inputs = splitInputs(paths);
    if (inputs.pythonFiles == 0 && inputs.cxx.empty())
        throw UsageError(fmt::format("no Python or C/C++ source to lint in {}", fmt::join(options.paths, ", ")));
    if (options.compileCommands && !std::filesystem::exists(*options.compileCommands))
        throw UsageError(fmt::format("no such file or directory: {}", *options.compileCommands));

    WorkloadResult result;
    result.workload = "lint";
    result.subject = options.paths.size() == 1 ? options.paths.front()
                                               : fmt::format("{} and {} more", options.paths.front(),
                                                             options.paths.size() - 1);
    result.details = {{"files", 0}, {"unparsed", nlohmann::json::array()}};
    // Only C/C++ files given: no worker to start.
    std::vector<std::vector<std::string>> chunks =
        inputs.python.empty() ? std::vector<std::vector<std::string>>{} : splitForWorkers(inputs.python);
    for (auto& chunk : chunks) {
        worker::WorkerRequest request;
        request.spec.workload = "lint";
        request.spec.subject = result.subject;
        request.spec.paths = std::move(chunk);
        request.spec.environment = env;
        request.spec.argv = {"leakgate-lint"};
        request.timeout = options.timeout;
        request.forwardOutput = options.forwardOutput;
        merge(result, worker::runInWorker(request));
    }
    lintCxx(options, inputs, result);
    std::vector<std::string> rules(std::begin(kLintRules), std::end(kLintRules));
    if (cxxLintAvailable())
        rules.insert(rules.end(), std::begin(kCxxLintRules), std::end(kCxxLintRules));
    result.details["rules"] = rules;
    // A worker that failed leaves files unchecked: the run cannot pass.
    CheckResult check = decide(result);
    if (result.error && check.status == Status::kPass) {
        check.status = Status::kError;
        check.reason = result.error->message;
    }
    // Only C/C++ files, and no libclang to read them: nothing was checked, so `lint` cannot pass.
    if (result.details.value("files", size_t{0}) == 0 && !inputs.cxx.empty() && !cxxLintAvailable() &&
        check.status == Status::kPass) {
        check.status = Status::kSkip;
        check.reason =
            fmt::format("no file checked: only C/C++ files found, and {}", cxxLintUnavailableReason());
    }
    result.checks.insert(result.checks.begin(), std::move(check));

    Report report;
    report.command = "lint";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    report.results.push_back(std::move(result));
    return report;
}

} // namespace leakgate

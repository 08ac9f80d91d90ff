#include "lib/commands/lint.h"

#include "leakgate/errors.h"
#include "lib/base/atomic_file.h"
#include "lib/base/log.h"
#include "lib/base/task_pool.h"
#include "lib/commands/environments.h"
#include "lib/lint/cxx.h"
#include "lib/lint/fix.h"
#include "lib/lint/project.h"
#include "lib/lint/python.h"
#include "lib/python/environment.h"
#include "lib/worker/client.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <tuple>

#include <stdlib.h>

namespace leakgate::commands {
namespace {

namespace fs = std::filesystem;

// The files each Python lint worker gets: contiguous runs of them, in order (so the findings
// come out in the order of one worker), about `jobs` runs of equal source bytes, so that `jobs`
// workers at once finish together. A run also ends at this many bytes of paths, which keeps each
// worker's spec small whatever the list (`leakgate lint $(git ls-files '*.py')`).
constexpr size_t kPathBytesPerWorker = 64 * 1024;

std::vector<std::vector<std::string>> splitForWorkers(const std::vector<std::string>& paths, int jobs) {
    std::vector<std::uintmax_t> sizes;
    std::uintmax_t total = 0;
    for (const auto& path : paths) {
        std::error_code error;
        std::uintmax_t size = fs::file_size(path, error);
        sizes.push_back(error ? 0 : size); // unreadable: the worker says so
        total += sizes.back();
    }
    const std::uintmax_t share = total / static_cast<std::uintmax_t>(std::max(jobs, 1)) + 1;
    std::vector<std::vector<std::string>> chunks(1);
    size_t pathBytes = 0;
    std::uintmax_t sourceBytes = 0;
    for (size_t i = 0; i < paths.size(); ++i) {
        const std::string& path = paths[i];
        bool full = sourceBytes >= share || pathBytes + path.size() + 4 > kPathBytesPerWorker;
        if (!chunks.back().empty() && full) {
            chunks.emplace_back();
            pathBytes = 0;
            sourceBytes = 0;
        }
        chunks.back().push_back(path);
        pathBytes += path.size() + 4; // quotes and a comma in the JSON
        sourceBytes += sizes[i];
    }
    return chunks;
}

std::string plural(size_t count, const char* noun) {
    return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

// What the run left out, for the end of the reason: files that did not parse, findings a comment
// accepted, what the excludes named, the headers under site-packages not read.
std::string asides(const WorkloadResult& result) {
    auto count = [&result](const char* key) {
        const auto found = result.details.find(key);
        if (found == result.details.end()) return size_t{0};
        return found->is_array() ? found->size() : found->get<size_t>();
    };
    std::string text;
    if (size_t n = count("unparsed"))
        text += fmt::format("; {} not parsed (see details.unparsed)", plural(n, "file"));
    if (size_t n = count("suppressed"))
        text += fmt::format("; {} accepted by `leakgate: ignore` comments", plural(n, "finding"));
    if (size_t n = count("fixed")) text += fmt::format("; {} fixed by --fix", plural(n, "finding"));
    if (size_t n = count("excluded"))
        text += fmt::format("; {} excluded", n == 1 ? "1 path" : plural(n, "path"));
    if (size_t n = count("site_packages_headers"))
        text += fmt::format("; {} under site-packages not read (--site-packages-headers)",
                            plural(n, "header"));
    return text;
}

// The one check: fail on any finding. Files that did not parse are counted, not failed.
CheckResult decide(const WorkloadResult& result, const std::vector<std::string>& rulesInOrder) {
    size_t files = result.details.value("files", size_t{0});
    size_t unparsed = result.details.contains("unparsed") ? result.details["unparsed"].size() : 0;
    size_t checked = files - unparsed;
    auto amount = static_cast<std::int64_t>(result.findings.size());
    if (result.findings.empty() && unparsed > 0) {
        // A file that could not be analysed was not checked: the run cannot pass.
        return {"lint", Status::kError,
                fmt::format("{} could not be analysed (see details.unparsed); {} checked, no frame kept "
                            "past its call, no closure cycle",
                            plural(unparsed, "file"), plural(checked, "file")),
                amount};
    }
    if (result.findings.empty()) {
        return {"lint", Status::kPass,
                fmt::format("{} checked, no frame kept past its call, no closure cycle{}",
                            plural(checked, "file"), asides(result)),
                amount};
    }
    std::map<std::string, int> perRule;
    std::map<std::string, int> perFile;
    for (const auto& finding : result.findings) {
        ++perRule[finding.kind.substr(std::string_view("lint:").size())];
        ++perFile[finding.frames.front().file];
    }
    std::vector<std::string> rules;
    for (const auto& rule : rulesInOrder) {
        if (perRule.count(rule)) rules.push_back(fmt::format("{} {}", perRule[rule], rule));
    }
    return {"lint", Status::kFail,
            fmt::format("{} in {} of {} checked ({}){}", plural(result.findings.size(), "finding"),
                        perFile.size(), plural(checked, "file"), fmt::join(rules, ", "), asides(result)),
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

// The inputs, split by who reads them: Python files to the Python worker, C/C++ files (given or
// found under a directory given) to libclang here. Directories are walked here, so that the
// project's excludes apply to what they hold as to the files named.
struct Inputs {
    std::vector<std::string> python;
    std::vector<std::string> cxx;
    std::optional<std::string> compileCommands; // found at the top of a directory given
    size_t excluded = 0;                        // files and directories the excludes named
    size_t sitePackagesHeaders = 0;             // C/C++ headers found under site-packages, not read
};

bool skippedDirectory(const fs::path& dir) {
    std::string name = dir.filename().string();
    return name.starts_with(".") || name == "__pycache__";
}

bool isHeader(const fs::path& path) {
    std::string extension = path.extension().string();
    return extension == ".h" || extension == ".hh" || extension == ".hpp" || extension == ".hxx";
}

// `dir`'s files in name order, then its subdirectories in name order (as os.walk with sorted
// names): hidden directories, __pycache__ and symbolic links to directories are not entered.
void walk(const fs::path& dir, const lint::ProjectSettings& settings, Inputs& inputs) {
    std::vector<fs::path> files, dirs;
    std::error_code error;
    for (auto it = fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, error);
         !error && it != fs::directory_iterator(); it.increment(error)) {
        bool directory = it->is_directory(error);
        if (directory && !it->is_symlink(error) && !skippedDirectory(it->path())) {
            dirs.push_back(it->path());
        } else if (!directory) {
            files.push_back(it->path());
        }
    }
    std::sort(files.begin(), files.end());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& file : files) {
        bool python = file.extension() == ".py";
        bool cxx = lint::isCxxSource(file.string());
        if (!python && !cxx) continue;
        if (lint::isExcluded(file, settings.exclude)) {
            ++inputs.excluded;
        } else if (python) {
            inputs.python.push_back(file.string());
        } else if (isHeader(file) && !settings.sitePackagesHeaders && lint::underSitePackages(file)) {
            ++inputs.sitePackagesHeaders; // a package's shipped API, not its sources
        } else {
            inputs.cxx.push_back(file.string());
        }
    }
    for (const auto& sub : dirs) {
        if (lint::isExcluded(sub, settings.exclude)) {
            ++inputs.excluded;
        } else {
            walk(sub, settings, inputs);
        }
    }
}

Inputs splitInputs(const std::vector<std::string>& paths, const lint::ProjectSettings& settings) {
    Inputs inputs;
    for (const auto& path : paths) {
        if (lint::isExcluded(path, settings.exclude)) {
            ++inputs.excluded;
        } else if (!fs::is_directory(path)) {
            (lint::isCxxSource(path) ? inputs.cxx : inputs.python).push_back(path);
        } else {
            for (const char* place : {"compile_commands.json", "build/compile_commands.json"}) {
                if (!inputs.compileCommands && fs::is_regular_file(fs::path(path) / place))
                    inputs.compileCommands = (fs::path(path) / place).string();
            }
            walk(path, settings, inputs);
        }
    }
    return inputs;
}

// The deepest directory that holds every path (a file counts as its directory).
fs::path commonDirectory(const std::vector<std::string>& paths) {
    std::optional<fs::path> common;
    for (const auto& path : paths) {
        fs::path dir = fs::is_directory(path) ? fs::path(path) : fs::path(path).parent_path();
        if (!common) {
            common = dir;
            continue;
        }
        fs::path shared;
        for (auto a = common->begin(), b = dir.begin(); a != common->end() && b != dir.end() && *a == *b;
             ++a, ++b)
            shared /= *a;
        common = shared;
    }
    return common.value_or(fs::current_path());
}

// The settings of the run: the pyproject.toml's table, then the command line's.
lint::ProjectSettings projectSettings(const LintOptions& options,
                                      const std::vector<std::string>& paths) {
    lint::ProjectSettings settings;
    std::optional<fs::path> file;
    if (options.configFile) {
        if (!fs::is_regular_file(*options.configFile))
            throw UsageError(fmt::format("--config: no such file: {}", *options.configFile));
        file = *options.configFile;
    } else if (options.readProjectFile) {
        file = lint::findProjectFile(commonDirectory(paths));
    }
    if (file) lint::readProjectFile(*file, settings);
    if (options.select) settings.select = lint::ruleNames(*options.select, "--select");
    for (auto& rule : lint::ruleNames(options.ignore, "--ignore"))
        settings.ignore.push_back(rule);
    for (const auto& glob : options.exclude)
        settings.exclude.push_back({glob, fs::current_path()});
    settings.sitePackagesHeaders = settings.sitePackagesHeaders || options.sitePackagesHeaders;
    return settings;
}

// The rules this run reports: the selected ones (all by default) less the ignored ones, of those
// this build can check.
std::vector<std::string> activeRules(const lint::ProjectSettings& settings) {
    std::vector<std::string> available(std::begin(lint::kLintRules), std::end(lint::kLintRules));
    if (lint::cxxLintAvailable())
        available.insert(available.end(), std::begin(lint::kCxxLintRules),
                         std::end(lint::kCxxLintRules));
    std::vector<std::string> rules;
    for (const auto& rule : available) {
        bool selected = !settings.select || std::find(settings.select->begin(), settings.select->end(),
                                                      rule) != settings.select->end();
        bool ignored =
            std::find(settings.ignore.begin(), settings.ignore.end(), rule) != settings.ignore.end();
        if (selected && !ignored) rules.push_back(rule);
    }
    return rules;
}

// Drops the findings of rules not reported, and moves those a `leakgate: ignore` comment accepts
// to details.suppressed.
void applySettings(WorkloadResult& result, const std::vector<std::string>& rules) {
    lint::SuppressionComments comments;
    std::vector<Finding> kept;
    nlohmann::json suppressed = nlohmann::json::array();
    for (auto& finding : result.findings) {
        std::string rule = finding.kind.substr(std::string_view("lint:").size());
        if (std::find(rules.begin(), rules.end(), rule) == rules.end()) continue;
        const FrameInfo& at = finding.frames.front();
        std::string by = comments.suppresses(at.file, at.line, rule);
        if (by.empty()) {
            kept.push_back(std::move(finding));
        } else {
            // The finding whole, for SARIF's suppressed results (an accepted alert stays visible there).
            suppressed.push_back({{"file", at.file},
                                  {"line", at.line},
                                  {"rule", rule},
                                  {"comment", by},
                                  {"finding", finding}});
        }
    }
    result.findings = std::move(kept);
    result.details["suppressed"] = std::move(suppressed);
    for (const auto& warning : comments.unknownRules()) {
        base::log::info("lint: {}", warning);
        result.details["suppression_warnings"].push_back(warning);
    }
}

// The C/C++ files: findings and unparsed files join the Python ones under the one `lint` check;
// without libclang they are a skipped check of their own. A file whose parse crashed or timed out
// is one of the unparsed (its child process died, not this one), so the Python findings stay.
void lintCxx(const LintOptions& options, const Inputs& inputs, WorkloadResult& result) {
    if (inputs.cxx.empty()) return;
    if (!lint::cxxLintAvailable()) {
        result.checks.push_back(
            {"lint-cxx", Status::kSkip,
             fmt::format("{} not checked: {}", plural(inputs.cxx.size(), "C/C++ file"),
                         lint::cxxLintUnavailableReason())});
        return;
    }
    lint::CxxLintOptions cxx;
    cxx.files = inputs.cxx;
    cxx.compileCommands = options.compileCommands ? options.compileCommands : inputs.compileCommands;
    cxx.flags = options.cxxFlags;
    cxx.includeDirs = options.includeDirs;
    cxx.timeout = options.timeout; // per translation unit, each parsed in a child of its own
    // Python.h parsed once per command line (lib/lint/cxx_parse.cpp); off, for comparing, with this
    // variable set.
    const char* off = std::getenv("LEAKGATE_NO_PRECOMPILED_HEADER");
    cxx.precompileOpenings = !(off && *off);
    lint::CxxLintResult linted = lint::lintCxxFiles(cxx);
    for (auto& finding : linted.findings)
        result.findings.push_back(std::move(finding));
    result.details["files"] = result.details.value("files", size_t{0}) + linted.files;
    for (auto& entry : linted.unparsed)
        result.details["unparsed"].push_back(std::move(entry));
    result.details["cxx"] = {{"files", linted.files}, {"compile_commands", linted.compileCommands}};
}

// The Python files in workers, `options.jobs` at a time, merged into one result.
WorkloadResult lintPython(const std::vector<std::string>& files, const python::Environment& env,
                          const LintOptions& options, const std::string& subject) {
    std::vector<std::vector<std::string>> chunks = splitForWorkers(files, options.jobs);
    std::vector<WorkloadResult> parts(chunks.size());
    std::vector<base::Task> tasks;
    for (size_t i = 0; i < chunks.size(); ++i) {
        tasks.push_back({[&, i] {
            worker::WorkerRequest request;
            request.spec.workload = "lint";
            request.spec.subject = subject;
            request.spec.paths = std::move(chunks[i]);
            request.spec.environment = env;
            request.spec.argv = {"leakgate-lint"};
            request.timeout = options.timeout;
            request.forwardOutput = options.forwardOutput;
            parts[i] = worker::runInWorker(request);
        }});
    }
    base::runTasks(tasks, options.jobs);
    WorkloadResult result;
    result.details = {{"files", 0}, {"unparsed", nlohmann::json::array()}};
    for (WorkloadResult& part : parts)
        merge(result, std::move(part));
    return result;
}

// What a finding is, for telling whether a fixed copy still has it: its lines move with the fix.
using FindingKey = std::tuple<std::string, std::string, std::string>;

FindingKey keyOf(const Finding& finding) {
    return {finding.kind, finding.frames.front().function,
            finding.locals.empty() ? std::string() : finding.locals.front()};
}

std::optional<std::string> readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return text.str();
}

// The name a diff gives a file: relative to the current directory when it is under it.
std::string diffLabel(const std::string& file) {
    std::error_code error;
    fs::path here = fs::current_path(error);
    if (!error) {
        fs::path relative = fs::path(file).lexically_relative(here);
        if (!relative.empty() && *relative.begin() != "..") return relative.string();
    }
    return fs::path(file).relative_path().string();
}

// A scratch directory of this process's, removed with what it holds.
class ScratchCopies {
  public:
    ScratchCopies() {
        std::string pattern = (fs::temp_directory_path() / "leakgate-fix-XXXXXX").string();
        if (!::mkdtemp(pattern.data()))
            throw std::system_error(errno, std::generic_category(), "lint --fix: a scratch directory");
        root_ = pattern;
    }
    ~ScratchCopies() {
        std::error_code ignored;
        fs::remove_all(root_, ignored);
    }
    ScratchCopies(const ScratchCopies&) = delete;
    ScratchCopies& operator=(const ScratchCopies&) = delete;

    // The copy of the `index`th file, under a directory of its own (same name: same findings).
    std::string write(size_t index, const std::string& file, const std::string& text) {
        fs::path dir = root_ / std::to_string(index);
        fs::create_directories(dir);
        fs::path copy = dir / fs::path(file).filename();
        base::writeOutputFile(copy.string(), text);
        return copy.string();
    }

  private:
    fs::path root_;
};

// --fix / --diff: for each file given (or found under a directory given) whose findings have
// edits, the fixed text; a copy of it in a scratch directory is linted again, and the fix is kept
// only when the findings it targets are gone and none has appeared. With --fix the kept ones are
// written over the files (whole or not at all), and the findings they fix leave `findings` for
// details.fixed. details.fixes lists every file: its diff, or why it was not fixed.
void fixFiles(const LintOptions& options, const Inputs& inputs, const python::Environment& env,
              const std::vector<std::string>& rules, WorkloadResult& result) {
    std::set<std::string> named(inputs.python.begin(), inputs.python.end());
    std::map<std::string, std::vector<const Finding*>> byFile;
    for (const Finding& finding : result.findings) {
        if (finding.frames.empty()) continue;
        byFile[finding.frames.front().file].push_back(&finding);
    }
    struct Candidate {
        std::string file, before, after;
        std::multiset<FindingKey> kept; // the findings without an edit: all a fixed copy may have
        size_t fixes = 0;
        std::string reason;
    };
    std::vector<Candidate> candidates;
    for (const auto& [file, findings] : byFile) {
        std::vector<FixEdit> edits;
        Candidate candidate{file};
        for (const Finding* finding : findings) {
            if (finding->fixEdits.empty()) {
                candidate.kept.insert(keyOf(*finding));
                continue;
            }
            ++candidate.fixes;
            for (const FixEdit& edit : finding->fixEdits) {
                // An edit of any other file than the one it was found in, or a file not given, is
                // never made.
                if (edit.file != file) candidate.reason = "an edit is of another file: " + edit.file;
                if (!named.count(file))
                    candidate.reason = "not a file given or found under a directory given";
                edits.push_back(edit);
            }
        }
        if (!candidate.fixes) continue;
        std::optional<std::string> before = readFile(file);
        if (!before) {
            candidate.reason = "cannot be read";
        } else if (candidate.reason.empty()) {
            try {
                candidate.before = *before;
                candidate.after = lint::applyFixEdits(*before, edits);
            } catch (const Error& error) {
                candidate.reason = error.what();
            }
        }
        candidates.push_back(std::move(candidate));
    }
    if (candidates.empty()) return;

    ScratchCopies scratch;
    std::vector<std::string> copies;
    std::map<std::string, size_t> ofCopy;
    for (size_t i = 0; i < candidates.size(); ++i) {
        if (!candidates[i].reason.empty()) continue;
        copies.push_back(scratch.write(i, candidates[i].file, candidates[i].after));
        ofCopy[fs::absolute(copies.back()).lexically_normal().string()] = i;
    }
    std::vector<std::multiset<FindingKey>> found(candidates.size());
    std::set<size_t> unparsed;
    if (!copies.empty()) {
        WorkloadResult again = lintPython(copies, env, options, "fixed copies");
        applySettings(again, rules);
        if (again.error) {
            for (auto& [copy, i] : ofCopy)
                candidates[i].reason = "the fixed copy could not be linted: " + again.error->message;
        }
        for (const Finding& finding : again.findings) {
            auto i = ofCopy.find(finding.frames.front().file);
            if (i != ofCopy.end()) found[i->second].insert(keyOf(finding));
        }
        for (const auto& entry : again.details.value("unparsed", nlohmann::json::array())) {
            auto i = ofCopy.find(entry.value("file", ""));
            if (i != ofCopy.end()) unparsed.insert(i->second);
        }
    }

    nlohmann::json fixes = nlohmann::json::array();
    nlohmann::json fixed = nlohmann::json::array();
    std::set<std::string> written;
    for (size_t i = 0; i < candidates.size(); ++i) {
        Candidate& candidate = candidates[i];
        if (candidate.reason.empty() && unparsed.count(i)) {
            candidate.reason = "the fixed copy does not parse";
        } else if (candidate.reason.empty()) {
            for (const FindingKey& key : found[i]) {
                auto kept = candidate.kept.find(key);
                if (kept != candidate.kept.end()) {
                    candidate.kept.erase(kept);
                    continue;
                }
                candidate.reason = fmt::format("the fixed copy still has a {} finding in `{}` (`{}`)",
                                               std::get<0>(key).substr(std::string_view("lint:").size()),
                                               std::get<1>(key), std::get<2>(key));
                break;
            }
        }
        nlohmann::json entry = {{"file", candidate.file}, {"findings", candidate.fixes}};
        if (!candidate.reason.empty()) {
            entry["applied"] = false;
            entry["reason"] = candidate.reason;
            fixes.push_back(std::move(entry));
            continue;
        }
        entry["diff"] = lint::unifiedDiff(candidate.before, candidate.after, diffLabel(candidate.file));
        entry["applied"] = options.fix;
        if (options.fix) {
            base::writeOutputFile(candidate.file, candidate.after);
            written.insert(candidate.file);
        }
        fixes.push_back(std::move(entry));
    }
    // The findings fixed on disk are no longer there: the check counts what is left.
    std::vector<Finding> left;
    for (Finding& finding : result.findings) {
        if (!finding.fixEdits.empty() && written.count(finding.frames.front().file)) {
            fixed.push_back(finding);
        } else {
            left.push_back(std::move(finding));
        }
    }
    result.findings = std::move(left);
    result.details["fixes"] = std::move(fixes);
    if (!fixed.empty()) result.details["fixed"] = std::move(fixed);
}

} // namespace

Report runLint(const LintOptions& options) {
    if (options.paths.empty()) throw UsageError("lint needs at least one file or directory");
    std::vector<std::string> paths;
    for (const auto& path : options.paths) {
        std::error_code error;
        if (!fs::exists(path, error))
            throw UsageError(fmt::format("no such file or directory: {}", path));
        paths.push_back(fs::absolute(path).lexically_normal().string());
    }
    python::Environment env =
        pythonEnvironment(options.python.value_or(python::buildPythonExecutable()));
    lint::searchLibclangIn(env.path);
    lint::ProjectSettings settings = projectSettings(options, paths);
    std::vector<std::string> rules = activeRules(settings);
    if (rules.empty()) throw UsageError("lint: --select and --ignore leave no rule to check");
    Inputs inputs = splitInputs(paths, settings);
    if (inputs.python.empty() && inputs.cxx.empty() && inputs.excluded == 0 &&
        inputs.sitePackagesHeaders == 0)
        throw UsageError(
            fmt::format("no Python or C/C++ source to lint in {}", fmt::join(options.paths, ", ")));
    if (options.compileCommands && !fs::exists(*options.compileCommands))
        throw UsageError(fmt::format("no such file or directory: {}", *options.compileCommands));

    WorkloadResult result;
    result.workload = "lint";
    result.subject = options.paths.size() == 1 ? options.paths.front()
                                               : fmt::format("{} and {} more", options.paths.front(),
                                                             options.paths.size() - 1);
    result.details = {
        {"files", 0},
        {"unparsed", nlohmann::json::array()},
        {"excluded", inputs.excluded},
        {"site_packages_headers", inputs.sitePackagesHeaders},
        {"config", settings.configFile ? nlohmann::json(*settings.configFile) : nlohmann::json()}};
    if (!inputs.python.empty()) merge(result, lintPython(inputs.python, env, options, result.subject));
    lintCxx(options, inputs, result);
    applySettings(result, rules);
    result.details["rules"] = rules;
    if (options.fix || options.diff) fixFiles(options, inputs, env, rules, result);
    // A worker that failed leaves files unchecked: the run cannot pass.
    CheckResult check = decide(result, rules);
    if (result.error && check.status == Status::kPass) {
        check.status = Status::kError;
        check.reason = result.error->message;
    }
    // Only C/C++ files, and no libclang to read them: nothing was checked, so `lint` cannot pass.
    if (result.details.value("files", size_t{0}) == 0 && !inputs.cxx.empty() &&
        !lint::cxxLintAvailable() && check.status == Status::kPass) {
        check.status = Status::kSkip;
        check.reason = fmt::format("no file checked: only C/C++ files found, and {}",
                                   lint::cxxLintUnavailableReason());
    }
    // Everything given or found was excluded (a pre-commit run on excluded files): nothing checked.
    if (inputs.python.empty() && inputs.cxx.empty() && check.status == Status::kPass) {
        check.status = Status::kSkip;
        check.reason = fmt::format("no file checked{}", asides(result));
    }
    result.checks.insert(result.checks.begin(), std::move(check));

    Report report;
    report.command = "lint";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    report.results.push_back(std::move(result));
    return report;
}

} // namespace leakgate::commands

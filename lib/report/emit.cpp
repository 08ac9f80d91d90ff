#include "lib/report/emit.h"

#include "leakgate/errors.h"
#include "lib/base/atomic_file.h"
#include "lib/report/writers/html.h"
#include "lib/report/writers/json.h"
#include "lib/report/writers/junit.h"
#include "lib/report/writers/sarif.h"
#include "lib/report/writers/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <unistd.h>
#include <vector>

namespace leakgate::report {
namespace {

// One file to write: its path and the writer that makes its content.
struct FileWriter {
    std::string path;
    std::function<std::string()> format;
};

bool onStdout(const std::vector<FileWriter>& files) {
    return std::any_of(files.begin(), files.end(),
                       [](const FileWriter& file) { return file.path == "-"; });
}

// Each file, then the text, which says the code the process returns (a file that failed makes
// it kErrored). A file that fails is said on stderr and costs neither the others nor the text.
int write(const Outputs& outputs, const std::function<std::string(const TextOptions&)>& text,
          const std::vector<FileWriter>& files, ExitCode code) {
    bool failed = false;
    for (const FileWriter& file : files) {
        try {
            base::writeOutputFile(file.path, file.format());
        } catch (const std::exception& error) {
            std::fprintf(stderr, "leakgate: %s\n", error.what());
            failed = true;
        }
    }
    const int exitCode = static_cast<int>(failed ? ExitCode::kErrored : code);
    if (!outputs.quiet) {
        FILE* stream = onStdout(files) ? stderr : stdout;
        const char* noColor = std::getenv("NO_COLOR");
        bool color =
            outputs.color == Color::kAlways ||
            (outputs.color == Color::kAuto && (!noColor || !*noColor) && ::isatty(::fileno(stream)));
        std::fputs(text(TextOptions{color, exitCode}).c_str(), stream);
        std::fflush(stream);
    }
    return exitCode;
}

std::vector<FileWriter> reportFiles(const Outputs& outputs, const Report* report) {
    std::vector<FileWriter> files;
    auto add = [&](const std::string& path, std::string (*format)(const Report&)) {
        if (!path.empty()) files.push_back({path, [=] { return format(*report); }});
    };
    add(outputs.json, &formatJson);
    add(outputs.junit, &formatJunit);
    add(outputs.sarif, static_cast<std::string (*)(const Report&)>(&formatSarif));
    add(outputs.html, &formatHtml);
    return files;
}

} // namespace

void checkOutputs(const Outputs& outputs, const std::vector<std::string>& inputs) {
    auto files = reportFiles(outputs, nullptr);
    auto count = std::count_if(files.begin(), files.end(),
                               [](const FileWriter& file) { return file.path == "-"; });
    if (count > 1) throw UsageError("only one of --json, --junit, --sarif, --html can be '-' (stdout)");
    for (size_t i = 0; i < files.size(); ++i) {
        if (files[i].path == "-") continue;
        for (size_t j = i + 1; j < files.size(); ++j) {
            if (files[j].path != "-" && base::sameFile(files[i].path, files[j].path))
                throw UsageError(fmt::format("two reports would be written to one file: {} and {}",
                                             files[i].path, files[j].path));
        }
        for (const std::string& input : inputs) {
            if (base::sameFile(files[i].path, input))
                throw UsageError(fmt::format(
                    "the report file {} is an input of this run ({}): writing it would destroy it",
                    files[i].path, input));
        }
    }
}

int emit(const Report& report, const Outputs& outputs) {
    return write(
        outputs, [&](const TextOptions& options) { return formatText(report, options); },
        reportFiles(outputs, &report), report.exitCode());
}

int emit(const BisectReport& report, const Outputs& outputs) {
    std::vector<FileWriter> files;
    if (!outputs.json.empty()) files.push_back({outputs.json, [&] { return formatBisectJson(report); }});
    if (!outputs.junit.empty())
        files.push_back({outputs.junit, [&] { return formatBisectJunit(report); }});
    if (!outputs.sarif.empty())
        files.push_back({outputs.sarif, [&] { return formatBisectSarif(report); }});
    if (!outputs.html.empty()) files.push_back({outputs.html, [&] { return formatBisectHtml(report); }});
    return write(
        outputs, [&](const TextOptions& options) { return formatBisectText(report, options); }, files,
        report.exitCode());
}

} // namespace leakgate::report

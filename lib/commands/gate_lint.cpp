#include "lib/commands/gate_lint.h"

#include "lib/base/data_dir.h"
#include "lib/commands/builtin_targets.h"

#include <fmt/format.h>

#include <filesystem>

namespace leakgate::commands {
namespace {

namespace fs = std::filesystem;

std::string samePath(const std::string& path) {
    std::error_code error;
    fs::path canonical = fs::weakly_canonical(path, error);
    return error ? path : canonical.string();
}

bool isDynamicFrameFinding(const Finding& finding) {
    return finding.kind == "frame-cycle" || finding.kind == "retained-frame";
}

} // namespace

std::vector<std::string> gateLintPaths(const workloads::TargetRef& target,
                                       const python::Environment& env) {
    const std::string& name = target.name;
    if (const BuiltinTarget* builtin = findBuiltinTarget(name); builtin && builtin->packageDir) {
        const char* package = builtin->packageDir;
        for (const auto& entry : env.path) {
            fs::path candidate = fs::path(entry) / package;
            if (fs::is_directory(candidate)) return {candidate.string()};
        }
        return {};
    }
    if (target.module == "leakgate_reference") {
        fs::path reference = base::dataDir() / "lib/data/reference/leakgate_reference";
        return fs::is_directory(reference) ? std::vector<std::string>{reference.string()}
                                           : std::vector<std::string>{};
    }
    if (!target.path.empty()) return {target.path};
    return {};
}

size_t markConfirmedLintFindings(Report& report) {
    // The frames of the target's dynamic findings: (file, function) -> the finding that has it.
    struct Witness {
        const WorkloadResult* result;
        const Finding* finding;
        const FrameInfo* frame;
    };
    std::vector<Witness> witnesses;
    for (const auto& result : report.results) {
        if (result.role != Role::kTarget || result.workload == "lint") continue;
        for (const auto& finding : result.findings) {
            if (!isDynamicFrameFinding(finding)) continue;
            for (const auto& frame : finding.frames)
                witnesses.push_back({&result, &finding, &frame});
        }
    }
    size_t confirmed = 0;
    for (auto& result : report.results) {
        if (result.workload != "lint") continue;
        for (auto& finding : result.findings) {
            if (finding.frames.empty()) continue;
            const FrameInfo& place = finding.frames.front();
            std::string file = samePath(place.file);
            for (const auto& witness : witnesses) {
                if (witness.frame->function != place.function || samePath(witness.frame->file) != file)
                    continue;
                std::string check =
                    fmt::format("{}-{}", witness.result->workload, witness.finding->kind);
                finding.summary += fmt::format(
                    " [confirmed dynamically: {} has `{}` at {}:{}]", check, witness.frame->function,
                    fs::path(witness.frame->file).filename().string(), witness.frame->line);
                result.details["confirmed"].push_back({{"rule", finding.kind.substr(5)},
                                                       {"function", place.function},
                                                       {"file", place.file},
                                                       {"line", place.line},
                                                       {"dynamic", check},
                                                       {"dynamic_line", witness.frame->line}});
                ++confirmed;
                break;
            }
        }
        size_t here = result.details.contains("confirmed") ? result.details["confirmed"].size() : 0;
        for (auto& check : result.checks) {
            if (check.name == "lint" && here > 0)
                check.reason += fmt::format("; {} confirmed dynamically", here);
        }
    }
    return confirmed;
}

WorkloadResult gateLintSkipped(const workloads::TargetRef& target, const python::Environment& env) {
    WorkloadResult result;
    result.workload = "lint";
    result.subject = target.name;
    result.checks.push_back(
        {"lint", Status::kSkip,
         fmt::format("no sources to lint for target `{}`: its package is not installed for {} (pass the "
                     "--python of the environment that has it)",
                     result.subject, env.executable)});
    return result;
}

} // namespace leakgate::commands

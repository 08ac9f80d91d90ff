#include "lib/commands/fix_sites.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

namespace leakgate::commands {
namespace {

// The attribute a retained frame hangs from, when the last step of its path is one
// (`HANDLERS['on_stop'].defined_in`): "defined_in".
std::string holdingAttribute(const Finding& finding) {
    if (finding.kind != "retained-frame" || finding.path.empty()) return {};
    const PathStep& last = finding.path.back();
    if (last.kind != "attribute" || last.label.size() < 2 || last.label[0] != '.') return {};
    return last.label.substr(1);
}

// The local that closes a frame cycle from its culprit's frame (`cur_frame`), when the first
// step of the path is one.
std::string closingLocal(const Finding& finding) {
    if (finding.kind != "frame-cycle" || finding.path.empty() || finding.frames.empty()) return {};
    return finding.path.front().kind == "local" && !finding.locals.empty() ? finding.locals.front()
                                                                           : std::string();
}

bool sameFile(const std::string& a, const std::string& b) {
    std::error_code error;
    return std::filesystem::equivalent(a, b, error);
}

// The lint names a function by its qualified name; a frame on 3.10 knows only its co_name.
bool sameFunction(const std::string& lint, const std::string& frame) {
    return lint == frame || lint.ends_with("." + frame);
}

std::string fileName(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

// The lint finding of the statement that binds `local` in the culprit's function.
const Finding* bindingOf(const Finding& finding, const std::string& local,
                         const std::vector<Finding>& lint) {
    const FrameInfo& culprit = finding.frames.front();
    for (const Finding& binding : lint) {
        if (binding.kind != "lint:own-frame-local" || binding.frames.empty() || binding.locals.empty() ||
            binding.locals.front() != local)
            continue;
        const FrameInfo& where = binding.frames.front();
        if (sameFile(where.file, culprit.file) && sameFunction(where.function, culprit.function))
            return &binding;
    }
    return nullptr;
}

// The lint finding of a statement that stores a frame on an attribute named `attribute`.
const Finding* storeOf(const std::string& attribute, const std::vector<Finding>& lint) {
    for (const Finding& store : lint) {
        if (store.kind == "lint:frame-stored" && !store.frames.empty() && !store.locals.empty() &&
            store.locals.front().ends_with("." + attribute))
            return &store;
    }
    return nullptr;
}

} // namespace

std::vector<std::string> fixSiteFiles(const std::vector<WorkloadResult*>& results,
                                      const std::string& script) {
    std::set<std::string> files;
    bool wanted = false;
    for (const WorkloadResult* result : results) {
        for (const Finding& finding : result->findings) {
            if (holdingAttribute(finding).empty() && closingLocal(finding).empty()) continue;
            wanted = true;
            for (const FrameInfo& frame : finding.frames) {
                std::error_code error;
                if (frame.file.ends_with(".py") && std::filesystem::is_regular_file(frame.file, error))
                    files.insert(frame.file);
            }
        }
    }
    if (!wanted) return {};
    if (!script.empty()) files.insert(script);
    return {files.begin(), files.end()};
}

void placeFixSites(WorkloadResult& result, const std::vector<Finding>& lint) {
    for (Finding& finding : result.findings) {
        if (std::string local = closingLocal(finding); !local.empty()) {
            if (const Finding* binding = bindingOf(finding, local, lint)) {
                // The scanner's fix site is the one statement that binds the local (from the
                // bytecode); the lint's is the statement that puts the frame or the exception in
                // it (`errors[name] = exc`, not `errors = {}`): it wins.
                if (finding.fixSite) {
                    const std::string scanners =
                        fmt::format("Line {} binds `{}` ({}). ", finding.fixSite->line, local,
                                    fileName(finding.fixSite->file));
                    if (finding.fix.starts_with(scanners)) finding.fix.erase(0, scanners.size());
                }
                const FrameInfo& where = binding->frames.front();
                finding.fixSite = where;
                finding.fix = fmt::format("Line {} binds `{}` ({}). {}", where.line, local,
                                          fileName(where.file), finding.fix);
            }
        } else if (std::string attribute = holdingAttribute(finding);
                   !attribute.empty() && !finding.fixSite) {
            if (const Finding* store = storeOf(attribute, lint)) {
                const FrameInfo& where = store->frames.front();
                std::string kept = finding.frames.empty() ? "" : finding.frames.front().function;
                finding.fixSite = where;
                finding.summary += fmt::format("; stored by `{}` ({}:{})", where.function,
                                               fileName(where.file), where.line);
                finding.fix = fmt::format(
                    "The store is `{}` in `{}` ({}:{}): fix it there{}. {}", store->locals.front(),
                    where.function, fileName(where.file), where.line,
                    kept.empty() ? "" : fmt::format(", not in `{}`, whose frame it keeps", kept),
                    finding.fix);
            }
        }
    }
}

void lintFixSites(const std::vector<WorkloadResult*>& results, const std::string& script,
                  LintOptions lint) {
    lint.paths = fixSiteFiles(results, script);
    if (lint.paths.empty()) return;
    lint.forwardOutput = false;
    try {
        Report statements = runLint(lint);
        if (statements.results.empty()) return;
        for (WorkloadResult* result : results)
            placeFixSites(*result, statements.results.front().findings);
    } catch (const std::exception&) {
    }
}

} // namespace leakgate::commands

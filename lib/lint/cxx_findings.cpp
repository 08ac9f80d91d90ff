#include "lib/lint/cxx_findings.h"

#include <fmt/format.h>

#include <utility>

namespace leakgate::lint::cxx {
namespace {

const char* kStoreFix =
    "Keep no frame: read what you need while the call runs (PyFrame_GetCode, "
    "PyFrame_GetLineNumber, or the file, line and function name as plain values) and store those. "
    "If a frame must be held, hold it only for the call and release it before returning "
    "(Py_DECREF, or a py::object that goes out of scope).";
const char* kLeakFix =
    "Release it on every path before the function returns: Py_DECREF (Py_XDECREF / Py_CLEAR where "
    "it may be NULL), typically once at a single `done:` or `error:` label that every path reaches; "
    "or hand it to an owner (return it, py::reinterpret_steal, a stealing call such as "
    "PyTuple_SET_ITEM).";

} // namespace

Finding storedFrameFinding(const std::string& rule, const std::string& function,
                           const clang::Location& at, const std::string& target, const FrameValue& value,
                           const char* where) {
    std::string source = value.local.empty() ? fmt::format("`{}`", value.what)
                                             : fmt::format("`{}` (from `{}`)", value.local, value.what);
    std::string lifetime =
        std::string(where) == "member" ? "as long as the object lives" : "for the rest of the process";
    std::string summary =
        value.ownership == Ownership::kBorrowed
            ? fmt::format("{} is a borrowed frame, stored in the {} `{}`: the pointer dangles once that "
                          "frame returns, and with a Py_INCREF it keeps the frame, its locals and every "
                          "caller's frame (through f_back) alive {}",
                          source, where, target, lifetime)
            : fmt::format("{} is a frame, stored in the {} `{}`: it keeps that frame, its locals and "
                          "every caller's frame (through f_back) alive {}",
                          source, where, target, lifetime);
    Finding finding;
    finding.kind = "lint:" + rule;
    finding.summary = std::move(summary);
    finding.frames.push_back({function, at.file, static_cast<int>(at.line)});
    finding.locals.push_back(target);
    finding.column = static_cast<int>(at.column);
    finding.fix = kStoreFix;
    return finding;
}

Finding staticInitializerFinding(const clang::Location& at, const std::string& name,
                                 const FrameValue& value) {
    Finding finding;
    finding.kind = "lint:frame-stored-static";
    finding.summary =
        fmt::format("`{}` is a frame, stored in the static `{}`: it keeps that frame, its locals "
                    "and every caller's frame (through f_back) alive for the rest of the process",
                    value.what, name);
    finding.frames.push_back({"(static initializer)", at.file, static_cast<int>(at.line)});
    finding.locals.push_back(name);
    finding.column = static_cast<int>(at.column);
    finding.fix = kStoreFix;
    return finding;
}

Finding leakedReferenceFinding(const std::string& function, const std::string& local,
                               const std::string& source, unsigned line, unsigned column,
                               const clang::Location& exit, const std::string& how) {
    Finding finding;
    finding.kind = "lint:frame-ref-leaked";
    finding.summary = fmt::format(
        "new reference `{}` = `{}` (line {}) is not released on the path where `{}` {} at line "
        "{}: "
        "the frame, its locals and every caller's frame (through f_back) are never freed",
        local, source, line, function, how, exit.line);
    finding.frames.push_back({function, exit.file, static_cast<int>(line)});
    finding.locals.push_back(local);
    finding.column = static_cast<int>(column);
    finding.fix = kLeakFix;
    return finding;
}

} // namespace leakgate::lint::cxx

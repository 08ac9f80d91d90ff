// The C/C++ half of `leakgate lint` (lib/lint/cxx.h), on libclang's AST (built with
// LEAKGATE_WITH_LIBCLANG; see cxx_unavailable.cpp for the build without it). A file's way through
// it: its command line (cxx_command_lines.h), its parse, with Python.h parsed once per command
// line (cxx_parse.h), then the rules over the functions it defines (cxx_rules.h), which read the
// AST through cxx_ast.h and word their findings in cxx_findings.h.
//
// Each translation unit is parsed and walked in a child process of its own (lintInChild, over
// lib/base/forked_child.h): libclang crashing or hanging on one file makes that file an `unparsed`
// entry that says so, and the run goes on with the others.
#include "lib/lint/cxx.h"

#include "lib/base/forked_child.h"
#include "lib/base/log.h"
#include "lib/clang/libclang.h"
#include "lib/lint/cxx_ast.h"
#include "lib/lint/cxx_command_lines.h"
#include "lib/lint/cxx_parse.h"
#include "lib/lint/cxx_rules.h"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace leakgate::lint {

using cxx::analyseUnit;
using cxx::CommandLine;
using cxx::CommandLines;
using cxx::firstError;
using cxx::isOneOf;
using cxx::parseArguments;
using cxx::PrecompiledOpenings;
using cxx::rejectsPrecompiledHeader;
using cxx::UnitAnalysis;

namespace {

namespace fs = std::filesystem;

// --- One translation unit, in a process of its own -------------------------------------------

// What the child sends once libclang has returned the translation unit: a crash after it is the
// walk's, not the parse's.
constexpr std::string_view kParsedMark = "parsed\n";

std::string parseFailure(CXErrorCode code) {
    if (code == CXError_Crashed)
        return "libclang crashed parsing this file (it recovered: error 2); not analysed";
    return fmt::format("libclang could not parse it (error {})", static_cast<int>(code));
}

// The child's half: parse, apply the rules, and send the parsed mark, then one line of JSON,
// {"findings": [...], "unparsed": an entry or null}.
void lintTranslationUnit(const std::string& file, const CommandLine& line,
                         const std::optional<std::string>& opening, const base::ChildChannel& channel) {
    // libclang parses on a thread of its own with an 8 MiB stack unless told not to; told, it
    // parses on this one, whose stack is the large one forked_child.h gives the work.
    ::setenv("LIBCLANG_NOTHREADS", "1", 1);
    clang::IndexGuard index(/*excludeDeclarationsFromPch=*/true);
    auto parse = [&](bool withOpening, CXErrorCode& code) {
        std::vector<std::string> args = line.args;
        if (withOpening)
            args.insert(args.begin() + static_cast<std::ptrdiff_t>(*line.fileArg),
                        {"-include-pch", *opening});
        return parseArguments(index.get(), args, CXTranslationUnit_KeepGoing, code);
    };
    CXErrorCode code = CXError_Success;
    CXTranslationUnit raw = parse(opening.has_value(), code);
    if (opening && (code != CXError_Success || !raw || rejectsPrecompiledHeader(raw))) {
        if (raw) clang::api().clang_disposeTranslationUnit(raw);
        raw = parse(false, code);
    }
    clang::TranslationUnitGuard unit(raw);
    channel.send(kParsedMark);
    nlohmann::json out = {{"findings", nlohmann::json::array()}, {"unparsed", nullptr}};
    if (code != CXError_Success || !unit.get()) {
        out["unparsed"] = {{"file", file}, {"line", 0}, {"message", parseFailure(code)}};
    } else if (auto error = firstError(unit.get(), file)) {
        out["unparsed"] = std::move(*error);
    } else {
        UnitAnalysis analysis = analyseUnit(unit.get());
        out["findings"] = analysis.findings;
        if (!analysis.cutShort.empty()) {
            // Not wholly analysed is not clean: the file is listed, its findings kept.
            const auto& first = analysis.cutShort.front();
            out["unparsed"] = {
                {"file", file},
                {"line", first.line},
                {"message",
                 fmt::format("`{}` nests statements too deep to walk: it was analysed down to "
                             "line {} only",
                             first.function, first.line)}};
        }
    }
    channel.send(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// The parent's half: the file's findings and `unparsed` entry from what came back, or from what
// happened to the child.
void lintInChild(const std::string& file, const CommandLine& line,
                 const std::optional<std::string>& opening, const CxxLintOptions& options,
                 CxxLintResult& result) {
    base::ForkedChildSpec spec;
    spec.timeout = options.timeout;
    spec.stackBytes = options.stackBytes;
    base::ForkedChildOutcome child = base::runInForkedChild(
        [&](const base::ChildChannel& channel) { lintTranslationUnit(file, line, opening, channel); },
        spec);
    const bool parsed = child.sent.starts_with(kParsedMark);
    if (!child.timedOut && !child.signal && child.exitCode == 0 && parsed) {
        try {
            nlohmann::json out = nlohmann::json::parse(child.sent.substr(kParsedMark.size()));
            for (const auto& finding : out.at("findings"))
                result.findings.push_back(finding.get<Finding>());
            if (!out.at("unparsed").is_null()) result.unparsed.push_back(out.at("unparsed"));
            return;
        } catch (const nlohmann::json::exception& error) {
            base::log::debug("unreadable result of the child that linted {}: {}", file, error.what());
        }
    }
    nlohmann::json entry = {{"file", file}, {"line", 0}};
    if (child.timedOut) {
        entry["message"] =
            fmt::format("timed out after {:g} s {}; its process was killed and the file is not analysed",
                        std::chrono::duration<double>(options.timeout).count(),
                        parsed ? "analysing this file" : "parsing this file (libclang)");
        entry["timed_out"] = true;
    } else if (child.signal) {
        entry["message"] =
            parsed
                ? fmt::format("leakgate's analysis crashed ({}) on this file after libclang parsed it; "
                              "not analysed",
                              base::signalName(*child.signal))
                : fmt::format("libclang crashed ({}) parsing this file; not analysed",
                              base::signalName(*child.signal));
        entry["signal"] = base::signalName(*child.signal);
    } else {
        // What it wrote last says why ("leakgate: ..." when the work threw).
        std::string_view said = child.stderrTail;
        while (!said.empty() && std::isspace(static_cast<unsigned char>(said.back())))
            said.remove_suffix(1);
        if (size_t newline = said.find_last_of('\n'); newline != std::string_view::npos)
            said.remove_prefix(newline + 1);
        entry["message"] = fmt::format("the process that {} this file ended without a result (exit "
                                       "status {}{}{}); not analysed",
                                       parsed ? "analysed" : "parsed", child.exitCode.value_or(-1),
                                       said.empty() ? "" : ": ", said);
    }
    if (!child.stderrTail.empty()) entry["stderr_tail"] = child.stderrTail;
    result.unparsed.push_back(std::move(entry));
}

} // namespace

bool cxxLintAvailable() {
    return clang::loadLibclang() != nullptr;
}
void searchLibclangIn(const std::vector<std::string>& dirs) {
    clang::searchLibclangIn(dirs);
}
std::string cxxLintUnavailableReason() {
    return clang::libclangUnavailableReason();
}

bool isCxxSource(const std::string& path) {
    std::string extension = fs::path(path).extension().string();
    return isOneOf(extension, {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx"});
}

std::string embeddedPythonIncludeDir() {
    return LEAKGATE_PYTHON_INCLUDE_DIR;
}

CxxLintResult lintCxxFiles(const CxxLintOptions& options) {
    CxxLintResult result;
    CommandLines commandLines(options);
    PrecompiledOpenings openings(options);
    result.compileCommands = commandLines.databasePath();
    for (const auto& file : options.files) {
        ++result.files;
        CommandLine line = commandLines.forFile(file);
        std::optional<std::string> opening =
            options.precompileOpenings ? openings.forFile(file, line) : std::nullopt;
        lintInChild(file, line, opening, options, result);
    }
    result.precompiledOpenings = openings.built();
    return result;
}

} // namespace leakgate::lint

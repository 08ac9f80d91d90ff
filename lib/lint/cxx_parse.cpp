#include "lib/lint/cxx_parse.h"

#include "lib/base/forked_child.h"
#include "lib/base/log.h"
#include "lib/lint/cxx_ast.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>

namespace leakgate::lint::cxx {

namespace fs = std::filesystem;
using clang::takeString;

std::optional<nlohmann::json> firstError(CXTranslationUnit unit, const std::string& file) {
    unsigned count = clang::api().clang_getNumDiagnostics(unit);
    for (unsigned i = 0; i < count; ++i) {
        CXDiagnostic diagnostic = clang::api().clang_getDiagnostic(unit, i);
        CXDiagnosticSeverity severity = clang::api().clang_getDiagnosticSeverity(diagnostic);
        if (severity >= CXDiagnostic_Error) {
            CXFile where = nullptr;
            unsigned line = 0;
            clang::api().clang_getExpansionLocation(clang::api().clang_getDiagnosticLocation(diagnostic),
                                                    &where, &line, nullptr, nullptr);
            std::string place = where ? takeString(clang::api().clang_getFileName(where)) : "";
            std::string message = takeString(clang::api().clang_getDiagnosticSpelling(diagnostic));
            clang::api().clang_disposeDiagnostic(diagnostic);
            if (!place.empty() && place != file)
                message = fmt::format("{}:{}: {}", place, line, message);
            return nlohmann::json{{"file", file},
                                  {"line", place == file ? line : 0},
                                  {"message", fmt::format("does not compile: {}", message)}};
        }
        clang::api().clang_disposeDiagnostic(diagnostic);
    }
    return std::nullopt;
}

CXTranslationUnit parseArguments(CXIndex index, const std::vector<std::string>& args, unsigned options,
                                 CXErrorCode& code) {
    std::vector<const char*> argv;
    for (const auto& arg : args)
        argv.push_back(arg.c_str());
    CXTranslationUnit unit = nullptr;
    code = clang::api().clang_parseTranslationUnit2FullArgv(
        index, nullptr, argv.data(), static_cast<int>(argv.size()), nullptr, 0, options, &unit);
    return unit;
}

// --- Python.h, parsed once per command line ----------------------------------------------------
//
// Nearly every extension source opens the same way, a `#define PY_SSIZE_T_CLEAN` and then
// `#include <Python.h>`, and parsing that header is most of the time a file takes (about 70 ms of
// the 90 here). So the lint parses such an opening once per distinct command line, saves it as a
// precompiled header, and parses every file that opens with the same directives against it
// (`-include-pch`). The file's own lines still run: its `#define`s repeat the header's identically
// and its `#include <Python.h>` finds the include guard set, so what it declares, and where, is as
// without. A file whose opening holds anything else before Python.h (another include, a
// conditional, code, a line continued) is parsed as before, and so is any file whose parse with the
// header fails or reports an error about the header: it is an optimisation, never a verdict.

namespace {

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    return text;
}

// The directives `file` opens with, up to and including its `#include <Python.h>`, one per line and
// without the comments around them: `#define`s, and `#ifndef NAME` / `#define NAME` / `#endif`.
// Nothing when it opens with anything else, or when a Python.h sits beside it (a quoted include
// would find that one first).
std::optional<std::string> pythonOpening(const std::string& file) {
    const fs::path path(file);
    if (!isOneOf(path.extension().string(), {".c", ".cc", ".cpp", ".cxx"})) return std::nullopt;
    std::error_code error;
    if (fs::exists(path.parent_path() / "Python.h", error)) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    std::string opening;
    bool inComment = false;
    std::optional<std::string> guarded; // the NAME of an open `#ifndef NAME`
    bool guardDefined = false;
    constexpr size_t kMaxLines = 400;
    std::string raw;
    for (size_t count = 0; count < kMaxLines && std::getline(in, raw); ++count) {
        std::string_view line = trimmed(raw);
        if (inComment) {
            size_t end = line.find("*/");
            if (end == std::string_view::npos) continue;
            inComment = false;
            line = trimmed(line.substr(end + 2));
        }
        if (line.empty()) continue;
        if (line.ends_with('\\')) return std::nullopt; // a continued line: not worth reading
        if (line.starts_with("//")) continue;
        if (line.starts_with("/*")) {
            size_t end = line.find("*/", 2);
            if (end == std::string_view::npos) {
                inComment = true;
                continue;
            }
            if (!trimmed(line.substr(end + 2)).empty()) return std::nullopt;
            continue;
        }
        if (!line.starts_with('#')) return std::nullopt;
        std::string_view directive = trimmed(line.substr(1));
        if (directive.starts_with("endif") || directive.starts_with("ifndef")) {
            // `#endif /* NAME */`: the comment is not the directive's
            if (size_t comment = directive.find("/*"); comment != std::string_view::npos) {
                size_t end = directive.find("*/", comment + 2);
                if (end == std::string_view::npos || !trimmed(directive.substr(end + 2)).empty())
                    return std::nullopt;
                directive = trimmed(directive.substr(0, comment));
            }
        }
        if (directive.find("/*") != std::string_view::npos ||
            directive.find("//") != std::string_view::npos)
            return std::nullopt;
        if (directive.starts_with("define") && directive.size() > 6 &&
            std::isspace(static_cast<unsigned char>(directive[6]))) {
            std::string_view definition = trimmed(directive.substr(6));
            if (guarded) {
                // `#ifndef NAME` must define that NAME and nothing else before its `#endif`.
                if (!definition.starts_with(*guarded) ||
                    (definition.size() > guarded->size() &&
                     !std::isspace(static_cast<unsigned char>(definition[guarded->size()]))))
                    return std::nullopt;
                guardDefined = true;
            }
            opening += "#define " + std::string(definition) + "\n";
            continue;
        }
        // Cython's opening: `#ifndef NAME`, `#define NAME`, `#endif`. Run twice, it defines the
        // same as once; no other conditional is taken.
        if (directive.starts_with("ifndef") && directive.size() > 6 &&
            std::isspace(static_cast<unsigned char>(directive[6])) && !guarded) {
            std::string_view name = trimmed(directive.substr(6));
            if (name.empty() || name.find_first_of(" \t") != std::string_view::npos) return std::nullopt;
            guarded = std::string(name);
            guardDefined = false;
            opening += "#ifndef " + *guarded + "\n";
            continue;
        }
        if (directive == "endif" && guarded && guardDefined) {
            guarded.reset();
            opening += "#endif\n";
            continue;
        }
        if (guarded) return std::nullopt;
        if (directive.starts_with("include")) {
            std::string_view target = trimmed(directive.substr(7));
            if (target != "<Python.h>" && target != "\"Python.h\"") return std::nullopt;
            return opening + "#include " + std::string(target) + "\n";
        }
        return std::nullopt;
    }
    return std::nullopt;
}

} // namespace

PrecompiledOpenings::~PrecompiledOpenings() {
    if (!directory_) return;
    std::error_code error;
    fs::remove_all(*directory_, error);
}

std::optional<std::string> PrecompiledOpenings::forFile(const std::string& file,
                                                        const CommandLine& line) {
    if (!line.fileArg) return std::nullopt;
    if (std::find(line.args.begin(), line.args.end(), "-x") != line.args.end()) return std::nullopt;
    std::optional<std::string> opening = pythonOpening(file);
    if (!opening) return std::nullopt;
    std::string key = *opening;
    for (size_t i = 0; i < line.args.size(); ++i)
        key += '\0' + (i == *line.fileArg ? std::string("<file>") : line.args[i]);
    auto known = built_.find(key);
    if (known != built_.end()) return known->second;
    std::optional<std::string> header = build(*opening, line, isCxxLanguage(file));
    built_.emplace(std::move(key), header);
    return header;
}

size_t PrecompiledOpenings::built() const {
    return static_cast<size_t>(
        std::count_if(built_.begin(), built_.end(), [](const auto& entry) { return entry.second; }));
}

std::optional<std::string> PrecompiledOpenings::build(const std::string& opening,
                                                      const CommandLine& line, bool cxx) {
    if (!directory_) {
        std::string pattern = (fs::temp_directory_path() / "leakgate-lint-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) {
            base::log::debug("no directory for precompiled headers: {}", std::strerror(errno));
            return std::nullopt;
        }
        directory_ = pattern;
    }
    const size_t n = built_.size();
    const std::string header = (*directory_ / fmt::format("opening-{}.h", n)).string();
    const std::string saved = (*directory_ / fmt::format("opening-{}.pch", n)).string();
    {
        std::ofstream out(header, std::ios::binary);
        out << opening;
        if (!out) return std::nullopt;
    }
    std::vector<std::string> args = line.args;
    args[*line.fileArg] = header;
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(*line.fileArg),
                {"-x", cxx ? "c++-header" : "c-header"});
    base::ForkedChildSpec spec;
    spec.timeout = options_.timeout;
    spec.stackBytes = options_.stackBytes;
    base::ForkedChildOutcome child = base::runInForkedChild(
        [&](const base::ChildChannel& channel) {
            ::setenv("LIBCLANG_NOTHREADS", "1", 1);
            clang::IndexGuard index;
            CXErrorCode code = CXError_Success;
            clang::TranslationUnitGuard unit(
                parseArguments(index.get(), args,
                               CXTranslationUnit_ForSerialization | CXTranslationUnit_Incomplete, code));
            if (code != CXError_Success || !unit.get() || firstError(unit.get(), header)) return;
            if (clang::api().clang_saveTranslationUnit(unit.get(), saved.c_str(), 0) == 0)
                channel.send("saved\n");
        },
        spec);
    if (child.timedOut || child.signal || child.exitCode != 0 || child.sent != "saved\n") {
        base::log::debug("the opening {:?} did not precompile; its files are parsed without it",
                         opening);
        return std::nullopt;
    }
    return saved;
}

bool rejectsPrecompiledHeader(CXTranslationUnit unit) {
    unsigned count = clang::api().clang_getNumDiagnostics(unit);
    for (unsigned i = 0; i < count; ++i) {
        CXDiagnostic diagnostic = clang::api().clang_getDiagnostic(unit, i);
        bool rejected = false;
        if (clang::api().clang_getDiagnosticSeverity(diagnostic) >= CXDiagnostic_Error) {
            std::string message = takeString(clang::api().clang_getDiagnosticSpelling(diagnostic));
            rejected = message.find("precompiled") != std::string::npos ||
                       message.find("PCH") != std::string::npos ||
                       message.find("AST file") != std::string::npos;
        }
        clang::api().clang_disposeDiagnostic(diagnostic);
        if (rejected) return true;
    }
    return false;
}

} // namespace leakgate::lint::cxx

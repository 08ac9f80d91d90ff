// The C and C++ half of `leakgate lint`: extension sources parsed with libclang (its C API,
// clang-c/Index.h), looking for frame references that outlive the call that took them. Runs in
// the parent process: nothing here touches Python. Built only with libclang
// (LEAKGATE_WITH_LIBCLANG); without it cxxLintAvailable() is false and the C/C++ files are
// reported as skipped.
#pragma once

#include "lib/report/model.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace leakgate {

// The C/C++ rules, in report order; a finding's kind is "lint:" + rule.
inline constexpr const char* kCxxLintRules[] = {"frame-stored-static", "frame-stored-member",
                                                "frame-ref-leaked"};

struct CxxLintOptions {
    std::vector<std::string> files; // C/C++ sources and headers, absolute paths
    // A compile_commands.json, or a directory holding one: each file's own command line.
    std::optional<std::string> compileCommands;
    // For files the database does not list (or without one): these flags, then -I for Python.h.
    std::vector<std::string> flags;
    std::vector<std::string> includeDirs;
};

struct CxxLintResult {
    std::vector<Finding> findings;
    size_t files = 0;
    // Files whose translation unit had errors: {"file", "line", "message"}, as for Python.
    nlohmann::json unparsed = nlohmann::json::array();
    std::string compileCommands; // the database used, if any
};

// Whether this build has libclang; the reason when it does not.
bool cxxLintAvailable();
std::string cxxLintUnavailableReason();

// A file the C/C++ rules read, by its extension: .c .cc .cpp .cxx .h .hh .hpp .hxx.
bool isCxxSource(const std::string& path);

// The include directory of the embedded Python (its sysconfig `include`): where Python.h is.
std::string embeddedPythonIncludeDir();

// Parses each file (one translation unit per file) and applies the rules to the functions
// defined in it. A translation unit with errors is listed in `unparsed` and not analysed; a
// database that cannot be loaded is a UsageError.
CxxLintResult lintCxxFiles(const CxxLintOptions& options);

} // namespace leakgate

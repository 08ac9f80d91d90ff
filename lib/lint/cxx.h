// The C and C++ half of `leakgate lint`: extension sources parsed with libclang (its C API,
// clang-c/Index.h), looking for frame references that outlive the call that took them. Each
// translation unit is parsed in a forked child process of the caller (lib/base/forked_child.h),
// so that libclang crashing on a file (a stack overflow on code nested 10,000 deep) ends only
// that child; nothing here touches Python. Built only with libclang (LEAKGATE_WITH_LIBCLANG);
// without it cxxLintAvailable() is false and the C/C++ files are reported as skipped.
#pragma once

#include "leakgate/report.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::lint {

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
    // Each translation unit's child is killed after this long (parse and analysis together).
    std::chrono::milliseconds timeout{300'000};
    // The stack the child parses and walks on: deep but legal code (an `else if` chain of 10,000
    // branches) needs more than a thread's usual 8 MiB.
    size_t stackBytes = size_t{256} << 20;
    // Parse a `#define`s-then-`#include <Python.h>` opening once per command line, as a
    // precompiled header in a directory of the run's own (cxx_parse.cpp says when it is used).
    bool precompileOpenings = true;
};

struct CxxLintResult {
    std::vector<Finding> findings;
    size_t files = 0;
    // Files not (wholly) analysed: {"file", "line", "message"}, as for Python: a translation unit
    // with errors, or one whose child crashed ("signal": "SIGSEGV") or timed out ("timed_out":
    // true), with "stderr_tail" when the child wrote anything.
    nlohmann::json unparsed = nlohmann::json::array();
    std::string compileCommands;    // the database used, if any
    size_t precompiledOpenings = 0; // openings parsed once and shared by their files
};

// Whether this build has libclang; the reason when it does not.
bool cxxLintAvailable();
// Before cxxLintAvailable(): the environment's sys.path, searched for PyPI's `libclang` where this
// build's own libclang is not there (lib/clang/libclang_api.h).
void searchLibclangIn(const std::vector<std::string>& dirs);
std::string cxxLintUnavailableReason();

// A file the C/C++ rules read, by its extension: .c .cc .cpp .cxx .h .hh .hpp .hxx.
bool isCxxSource(const std::string& path);

// The include directory of the embedded Python (its sysconfig `include`): where Python.h is.
std::string embeddedPythonIncludeDir();

// Parses each file (one translation unit per file, each in a child process of its own) and
// applies the rules to the functions defined in it. A translation unit with errors, or whose
// child crashed or timed out, is listed in `unparsed` and not analysed, and the other files
// still are; a database that cannot be loaded is a UsageError. Call it from a single-threaded
// process (the child is forked, not executed).
CxxLintResult lintCxxFiles(const CxxLintOptions& options);

} // namespace leakgate::lint

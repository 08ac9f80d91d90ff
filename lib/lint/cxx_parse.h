// A C/C++ file's command line parsed into a translation unit, and its first error; Python.h, which
// nearly every extension source opens with, parsed once per command line.
#pragma once

#include "lib/clang/libclang.h"
#include "lib/lint/cxx.h"
#include "lib/lint/cxx_command_lines.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::lint::cxx {

// The first error of a translation unit, as "file:line: message"; empty when it has none.
std::optional<nlohmann::json> firstError(CXTranslationUnit unit, const std::string& file);

// A translation unit of `args` (the compiler first); null when libclang could not parse it, `code`
// says why.
CXTranslationUnit parseArguments(CXIndex index, const std::vector<std::string>& args, unsigned options,
                                 CXErrorCode& code);

// --- Python.h, parsed once per command line (cxx_parse.cpp says how) ---------------------------

// Precompiled openings, one per command line and opening, in a directory of their own under the
// run's scratch directory (scratch_dir.h), removed when the lint ends.
class PrecompiledOpenings {
  public:
    explicit PrecompiledOpenings(const CxxLintOptions& options) : options_(options) {}
    ~PrecompiledOpenings();
    PrecompiledOpenings(const PrecompiledOpenings&) = delete;
    PrecompiledOpenings& operator=(const PrecompiledOpenings&) = delete;

    // The header to parse `file` against, or nothing.
    std::optional<std::string> forFile(const std::string& file, const CommandLine& line);

    size_t built() const;

  private:
    const CxxLintOptions& options_;
    std::optional<std::filesystem::path> directory_;
    std::map<std::string, std::optional<std::string>> built_;

    std::optional<std::string> build(const std::string& opening, const CommandLine& line, bool cxx);
};

// Whether an error of `unit` is about the precompiled header it was given (built with other
// options, a header changed since): clang says "precompiled header", "PCH" or "AST file". Any other
// error is the file's own and would be the same without the header.
bool rejectsPrecompiledHeader(CXTranslationUnit unit);

} // namespace leakgate::lint::cxx

// The C/C++ lint in a build without libclang (LEAKGATE_WITH_LIBCLANG=OFF, or libclang not found
// at configure time): C/C++ files are recognised, and reported as skipped with this reason.
#include "lib/lint/cxx.h"

#include "lib/base/check.h"

#include <filesystem>

namespace leakgate::lint {

void searchLibclangIn(const std::vector<std::string>&) {}

bool cxxLintAvailable() {
    return false;
}

std::string cxxLintUnavailableReason() {
    return "this leakgate was built without libclang (LEAKGATE_WITH_LIBCLANG; Debian: "
           "libclang-14-dev, then configure again)";
}

bool isCxxSource(const std::string& path) {
    std::string extension = std::filesystem::path(path).extension().string();
    for (const char* known : {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx"}) {
        if (extension == known) return true;
    }
    return false;
}

std::string embeddedPythonIncludeDir() {
    return LEAKGATE_PYTHON_INCLUDE_DIR;
}

CxxLintResult lintCxxFiles(const CxxLintOptions&) {
    // runLint asks cxxLintAvailable() first.
    LEAKGATE_CHECK(false);
    return {};
}

} // namespace leakgate::lint

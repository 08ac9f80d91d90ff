#include "lib/base/data_dir.h"

#include "leakgate/errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>

namespace leakgate::base {

namespace fs = std::filesystem;

namespace {

bool holdsData(const fs::path& dir) {
    return fs::exists(dir / "lib/workloads/harness.py");
}

// Whether `path` lies in `dir` (both absolute and normalised).
bool isWithin(const fs::path& path, const fs::path& dir) {
    auto [end, _] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
    return end == dir.end();
}

} // namespace

std::filesystem::path dataDir() {
    if (const char* env = std::getenv("LEAKGATE_DATA_DIR")) {
        if (!holdsData(env))
            throw EnvironmentError(fmt::format("LEAKGATE_DATA_DIR={} holds no leakgate data", env));
        return env;
    }
    const fs::path exe = fs::read_symlink("/proc/self/exe");
    // Installed: PREFIX/bin/leakgate beside PREFIX/share/leakgate (cmake --install).
    const fs::path installed = exe.parent_path().parent_path() / "share/leakgate";
    if (holdsData(installed)) return installed;
    // The Python package: leakgate_dsl/_native*.so beside leakgate_dsl/share/leakgate (the wheel).
    const fs::path code = loadedFrom();
    const fs::path package = code.parent_path() / "share/leakgate";
    if (holdsData(package)) return package;
    // A binary of the build tree (the CLI, the tests) reads the source tree it was built from; an
    // installed one never does, even where that tree still exists.
    const fs::path buildTree = fs::weakly_canonical(LEAKGATE_BINARY_DIR);
    if ((isWithin(fs::weakly_canonical(exe), buildTree) || isWithin(code, buildTree)) &&
        holdsData(LEAKGATE_SOURCE_DIR))
        return LEAKGATE_SOURCE_DIR;
    throw EnvironmentError(fmt::format(
        "cannot find leakgate's data: {} holds none (an installed leakgate keeps it there), and {} is "
        "not a binary of the build tree {}; set LEAKGATE_DATA_DIR to a folder that holds it",
        installed.string(), exe.string(), buildTree.string()));
}

std::filesystem::path loadedFrom() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&loadedFrom), &info) == 0 || !info.dli_fname ||
        !*info.dli_fname)
        return fs::read_symlink("/proc/self/exe");
    return fs::weakly_canonical(info.dli_fname);
}

} // namespace leakgate::base

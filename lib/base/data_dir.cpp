#include "lib/base/data_dir.h"

#include "lib/base/errors.h"

#include <fmt/format.h>

#include <cstdlib>

namespace leakgate {

std::filesystem::path dataDir() {
    namespace fs = std::filesystem;
    auto holdsData = [](const fs::path& dir) { return fs::exists(dir / "lib/workloads/harness.py"); };
    if (const char* env = std::getenv("LEAKGATE_DATA_DIR")) {
        if (!holdsData(env))
            throw EnvironmentError(fmt::format("LEAKGATE_DATA_DIR={} holds no leakgate data", env));
        return env;
    }
    fs::path installed =
        fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "share/leakgate";
    for (const fs::path& candidate : {fs::path(LEAKGATE_SOURCE_DIR), installed}) {
        if (holdsData(candidate)) return candidate;
    }
    throw EnvironmentError(fmt::format("cannot find leakgate's data (looked in {} and {})",
                                       LEAKGATE_SOURCE_DIR, installed.string()));
}

} // namespace leakgate

#include "lib/clang/libclang_api.h"

#include "lib/base/check.h"
#include "lib/base/dynamic_library.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include <dlfcn.h>

namespace leakgate::clang {
namespace {

namespace fs = std::filesystem;

struct Loaded {
    LibclangApi api;
    std::string path;   // the library loaded (its real file, from dladdr)
    std::string reason; // empty when loaded
    std::vector<std::string> headerFlags;
};

std::vector<std::string>& searchDirs() {
    static std::vector<std::string> dirs;
    return dirs;
}

// Where a libclang may be, in order: $LEAKGATE_LIBCLANG alone where it is set; else the one this
// build was configured with, PyPI's `libclang` in the environment the run uses (its
// clang/native/libclang.so), then the system's by the names Debian and others give it.
std::vector<std::string> candidates() {
    const char* override = std::getenv("LEAKGATE_LIBCLANG");
    if (override && *override) return {override};
    std::vector<std::string> found = {LEAKGATE_LIBCLANG_PATH};
    for (const std::string& dir : searchDirs()) {
        const fs::path wheel = fs::path(dir) / "clang" / "native" / "libclang.so";
        std::error_code error;
        if (fs::is_regular_file(wheel, error)) found.push_back(wheel.string());
    }
    found.push_back("libclang.so.1");
    for (int version = 20; version >= 13; --version)
        found.push_back(fmt::format("libclang-{}.so.1", version));
    found.push_back("libclang.so");
    return found;
}

// clang's own headers (stddef.h, stdarg.h: its resource directory), which every parse needs: beside
// the library in an LLVM tree (lib/clang/VERSION/include). PyPI's libclang ships none: then GCC's
// (the same headers' counterparts), where a GCC is installed; else none, and a file that includes
// them is reported as not compiling, with the missing header named.
// Also, for every libclang: a call to a function no header declared, and the int it is then taken
// to return, stay warnings, as GCC 12 and clang before 15 have them, not the errors clang 15 and 16
// made them (an extension that compiles for 3.10 without including frameobject.h calls
// PyFrame_GetBack so, and is still to be read).
std::vector<std::string> builtinHeaderFlags(const std::string& library) {
    std::vector<std::string> flags = {"-Wno-error=implicit-function-declaration",
                                      "-Wno-error=int-conversion", "-Wno-error=implicit-int"};
    std::error_code error;
    const fs::path beside = fs::path(library).parent_path() / "clang";
    if (fs::is_directory(beside, error))
        for (const auto& version : fs::directory_iterator(beside, error))
            if (fs::is_regular_file(version.path() / "include" / "stddef.h", error)) return flags;
    std::vector<fs::path> gcc;
    for (const char* root : {"/usr/lib/gcc", "/usr/lib64/gcc"}) {
        if (!fs::is_directory(root, error)) continue;
        for (const auto& target : fs::directory_iterator(root, error))
            for (const auto& version : fs::directory_iterator(target.path(), error))
                if (fs::is_regular_file(version.path() / "include" / "stddef.h", error))
                    gcc.push_back(version.path() / "include");
    }
    if (gcc.empty()) return flags;
    std::sort(gcc.begin(), gcc.end()); // the newest GCC last (by its folder: "12" after "11")
    flags.insert(flags.end(), {"-isystem", gcc.back().string()});
    return flags;
}

const Loaded& loaded() {
    static const Loaded result = [] {
        Loaded out;
        std::vector<std::string> tried;
        for (const std::string& path : candidates()) {
            // Kept for the life of the process: libclang's own state (its index) lives until exit.
            auto library = std::make_unique<base::DynamicLibrary>(path);
            if (!library->loaded()) {
                tried.push_back(fmt::format("{} ({})", path, library->error()));
                continue;
            }
            std::string missing;
#define LEAKGATE_LIBCLANG_RESOLVE(name)                                                                 \
    out.api.name = reinterpret_cast<decltype(out.api.name)>(library->symbol(#name));                    \
    if (!out.api.name && missing.empty()) missing = #name;
            LEAKGATE_LIBCLANG_FUNCTIONS(LEAKGATE_LIBCLANG_RESOLVE)
#undef LEAKGATE_LIBCLANG_RESOLVE
            if (!missing.empty()) {
                tried.push_back(
                    fmt::format("{} (no {}: not the libclang this build expects)", path, missing));
                out.api = LibclangApi{};
                continue;
            }
            Dl_info info{};
            out.path =
                dladdr(reinterpret_cast<void*>(out.api.clang_createIndex), &info) && info.dli_fname
                    ? info.dli_fname
                    : path;
            out.headerFlags = builtinHeaderFlags(out.path);
            library->keepLoaded();
            static std::unique_ptr<base::DynamicLibrary> kept;
            kept = std::move(library);
            return out;
        }
        out.reason = fmt::format("cannot load libclang: tried {} (install Debian's libclang1-14, or "
                                 "`pip install libclang` into the environment, or name one in "
                                 "$LEAKGATE_LIBCLANG)",
                                 fmt::join(tried, "; "));
        return out;
    }();
    return result;
}

} // namespace

const LibclangApi* loadLibclang() {
    return loaded().reason.empty() ? &loaded().api : nullptr;
}

std::string libclangUnavailableReason() {
    return loaded().reason;
}

void searchLibclangIn(const std::vector<std::string>& dirs) {
    searchDirs() = dirs;
}

std::string libclangPath() {
    return loaded().path;
}

const std::vector<std::string>& libclangHeaderFlags() {
    return loaded().headerFlags;
}

const LibclangApi& api() {
    LEAKGATE_CHECK(loadLibclang() != nullptr);
    return loaded().api;
}

} // namespace leakgate::clang

#include "lib/clang/libclang_api.h"

#include "lib/base/check.h"
#include "lib/base/dynamic_library.h"

#include <fmt/format.h>

#include <cstdlib>

namespace leakgate::clang {
namespace {

struct Loaded {
    LibclangApi api;
    std::string reason; // empty when loaded
};

const Loaded& loaded() {
    static const Loaded result = [] {
        Loaded out;
        const char* override = std::getenv("LEAKGATE_LIBCLANG");
        const std::string path = override && *override ? override : LEAKGATE_LIBCLANG_PATH;
        // Kept for the life of the process: libclang's own state (its index) lives until exit.
        static base::DynamicLibrary library(path);
        library.keepLoaded();
        if (!library.loaded()) {
            out.reason = fmt::format("cannot load libclang {} ({})", path, library.error());
            return out;
        }
#define LEAKGATE_LIBCLANG_RESOLVE(name)                                                                 \
    out.api.name = reinterpret_cast<decltype(out.api.name)>(library.symbol(#name));                     \
    if (!out.api.name) {                                                                                \
        out.reason = fmt::format("{} has no {}: not the libclang this build expects", path, #name);     \
        return out;                                                                                     \
    }
        LEAKGATE_LIBCLANG_FUNCTIONS(LEAKGATE_LIBCLANG_RESOLVE)
#undef LEAKGATE_LIBCLANG_RESOLVE
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

const LibclangApi& api() {
    LEAKGATE_CHECK(loadLibclang() != nullptr);
    return loaded().api;
}

} // namespace leakgate::clang

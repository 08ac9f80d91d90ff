#include "lib/base/dynamic_library.h"

#include <dlfcn.h>

namespace leakgate::base {

DynamicLibrary::DynamicLibrary(const std::string& path) {
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
        const char* why = ::dlerror();
        error_ = why ? why : "unknown error";
    }
}

DynamicLibrary::~DynamicLibrary() {
    if (handle_ && !keep_) ::dlclose(handle_);
}

void* DynamicLibrary::symbol(const char* name) const {
    return handle_ ? ::dlsym(handle_, name) : nullptr;
}

} // namespace leakgate::base

// A shared library opened with dlopen: the handle's owner (closed by the destructor unless kept
// loaded), copy and move deleted. The CUDA driver and libclang are both loaded through it, so
// that neither is linked into every process leakgate starts.
#pragma once

#include <string>

namespace leakgate::base {

class DynamicLibrary {
  public:
    // dlopen(path, RTLD_NOW | RTLD_LOCAL). Never throws: on failure `loaded()` is false and
    // `error()` holds dlerror's text.
    explicit DynamicLibrary(const std::string& path);
    ~DynamicLibrary();
    DynamicLibrary(const DynamicLibrary&) = delete;
    DynamicLibrary& operator=(const DynamicLibrary&) = delete;

    bool loaded() const { return handle_ != nullptr; }
    const std::string& error() const { return error_; }

    // The address of `name`, or null.
    void* symbol(const char* name) const;

    // Leaves the library loaded at destruction: code that runs at exit (a framework's, libclang's
    // own) may still call into it.
    void keepLoaded() { keep_ = true; }

  private:
    void* handle_ = nullptr;
    std::string error_;
    bool keep_ = false;
};

} // namespace leakgate::base

#include "lib/cuda/driver.h"

#include <fmt/format.h>

#include <cstdlib>

namespace leakgate::cuda {

#define LEAKGATE_STRINGIFY_EXPANDED(name) LEAKGATE_STRINGIFY(name)
#define LEAKGATE_STRINGIFY(name) #name

std::string driverLibraryPath() {
    const char* override = std::getenv("LEAKGATE_LIBCUDA");
    return override && *override ? override : "libcuda.so.1";
}

Driver& Driver::get() {
    static Driver driver(driverLibraryPath());
    // The process's driver stays loaded: other exit-time code (a framework's) may still call into
    // it. A driver the tests make for themselves is closed with it.
    if (driver.library_) driver.library_->keepLoaded();
    return driver;
}

Driver::Driver(std::string library) {
    device_.library = std::move(library);
    load();
}

#if LEAKGATE_WITH_CUDA

namespace {

std::string describe(const DriverApi& api, CUresult result) {
    const char* name = nullptr;
    const char* message = nullptr;
    if (api.cuGetErrorName) api.cuGetErrorName(result, &name);
    if (api.cuGetErrorString) api.cuGetErrorString(result, &message);
    if (name && message) return fmt::format("{} ({})", name, message);
    return fmt::format("CUresult {}", static_cast<int>(result));
}

} // namespace

void Driver::load() {
    library_.emplace(device_.library);
    if (!library_->loaded()) {
        reason_ = fmt::format("no CUDA driver: cannot load {} ({})", device_.library, library_->error());
        return;
    }
    // Each entry under the symbol cuda.h's macros give its name: the current ABI's.
#define LEAKGATE_CUDA_RESOLVE(name)                                                                     \
    api_.name =                                                                                         \
        reinterpret_cast<decltype(api_.name)>(library_->symbol(LEAKGATE_STRINGIFY_EXPANDED(name)));     \
    if (!api_.name) {                                                                                   \
        reason_ = fmt::format("{} has no {}: not a CUDA driver of the API this build expects",          \
                              device_.library, LEAKGATE_STRINGIFY_EXPANDED(name));                      \
        return;                                                                                         \
    }
    LEAKGATE_CUDA_FUNCTIONS(LEAKGATE_CUDA_RESOLVE)
#undef LEAKGATE_CUDA_RESOLVE
    api_.cuDeviceGetGraphMemAttribute = reinterpret_cast<decltype(api_.cuDeviceGetGraphMemAttribute)>(
        library_->symbol("cuDeviceGetGraphMemAttribute"));

    auto fail = [&](CUresult result, const char* call) {
        reason_ = fmt::format("{} failed: {}", call, describe(api_, result));
    };
    if (CUresult result = api_.cuInit(0); result != CUDA_SUCCESS) return fail(result, "cuInit");
    api_.cuDriverGetVersion(&device_.driverVersion);
    int count = 0;
    if (CUresult result = api_.cuDeviceGetCount(&count); result != CUDA_SUCCESS)
        return fail(result, "cuDeviceGetCount");
    if (count == 0) {
        reason_ = "no CUDA device: the driver loaded and reports 0 devices";
        return;
    }
    if (CUresult result = api_.cuDeviceGet(&ordinal_, 0); result != CUDA_SUCCESS)
        return fail(result, "cuDeviceGet");
    char name[256] = {};
    api_.cuDeviceGetName(name, sizeof name, ordinal_);
    device_.name = name;
    size_t total = 0;
    api_.cuDeviceTotalMem(&total, ordinal_);
    device_.totalBytes = static_cast<std::int64_t>(total);
    // The primary context is the one the runtime API, PyTorch and the DSLs share: allocations in it
    // are the ones cuMemGetInfo and a framework see.
    if (CUresult result = api_.cuDevicePrimaryCtxRetain(&context_, ordinal_); result != CUDA_SUCCESS)
        return fail(result, "cuDevicePrimaryCtxRetain");
    if (CUresult result = api_.cuCtxSetCurrent(context_); result != CUDA_SUCCESS)
        return fail(result, "cuCtxSetCurrent");
    available_ = true;
}

Driver::~Driver() {
    // Buffers still alive at exit belong to objects the interpreter never freed; releasing the
    // context frees them with it.
    if (context_) api_.cuDevicePrimaryCtxRelease(ordinal_);
}

void Driver::check(CUresult result, const char* call) const {
    if (result != CUDA_SUCCESS)
        throw CudaError(fmt::format("{} failed: {}", call, describe(api_, result)));
}

MemInfo Driver::memInfo() const {
    if (!available_) throw CudaError(reason_);
    size_t freeBytes = 0, totalBytes = 0;
    check(api_.cuMemGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
    return {static_cast<std::int64_t>(freeBytes), static_cast<std::int64_t>(totalBytes)};
}

std::optional<std::int64_t> Driver::graphMemoryUsed() const {
    if (!available_ || !api_.cuDeviceGetGraphMemAttribute) return std::nullopt;
    cuuint64_t used = 0;
    if (api_.cuDeviceGetGraphMemAttribute(ordinal_, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &used) !=
        CUDA_SUCCESS)
        return std::nullopt;
    return static_cast<std::int64_t>(used);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    Driver& driver = Driver::get();
    if (!driver.available()) throw CudaError(driver.unavailableReason());
    driver.check(driver.api().cuMemAlloc(&pointer_, bytes), "cuMemAlloc");
    heldBytes_ += static_cast<std::int64_t>(bytes);
    ++heldBuffers_;
    ++allocatedBuffers_;
}

DeviceBuffer::~DeviceBuffer() {
    if (!pointer_) return;
    Driver::get().api().cuMemFree(pointer_);
    heldBytes_ -= static_cast<std::int64_t>(bytes_);
    --heldBuffers_;
}

#else // built without cuda.h

void Driver::load() {
    reason_ = "leakgate was built without the CUDA toolkit's cuda.h (configure with CUDAToolkit found)";
}

Driver::~Driver() = default;

void Driver::check(CUresult, const char* call) const {
    throw CudaError(fmt::format("{}: {}", call, reason_));
}

MemInfo Driver::memInfo() const {
    throw CudaError(reason_);
}

std::optional<std::int64_t> Driver::graphMemoryUsed() const {
    return std::nullopt;
}

DeviceBuffer::DeviceBuffer(std::size_t) {
    throw CudaError(Driver::get().unavailableReason());
}

DeviceBuffer::~DeviceBuffer() = default;

#endif

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(other.pointer_), bytes_(other.bytes_) {
    other.pointer_ = 0;
    other.bytes_ = 0;
}

} // namespace leakgate::cuda

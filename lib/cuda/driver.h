// The CUDA driver API, loaded at run time: `dlopen("libcuda.so.1")` and one table of typed
// function pointers. cuda.h is used at build time only, for the types and for the names: its
// macros map each API name to the symbol of the current ABI (cuMemAlloc is cuMemAlloc_v2), and the
// loader looks up exactly that symbol (a plain dlsym("cuMemAlloc") would get the legacy entry).
//
// No driver, no device, or a build without cuda.h is a reported condition: `Driver::get()` never
// throws, and `available()` / `unavailableReason()` say what the CUDA checks skip for.
#pragma once

#include "leakgate/errors.h"
#include "lib/base/dynamic_library.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#if LEAKGATE_WITH_CUDA
#include <cuda.h>
#endif

namespace leakgate::cuda {

// A driver call that failed: the call, the CUresult's name and message.
class CudaError : public Error {
  public:
    using Error::Error;
};

#if LEAKGATE_WITH_CUDA

// Every driver entry point leakgate calls, spelled as in cuda.h: X(name).
#define LEAKGATE_CUDA_FUNCTIONS(X)                                                                      \
    X(cuInit)                                                                                           \
    X(cuDriverGetVersion)                                                                               \
    X(cuGetErrorName)                                                                                   \
    X(cuGetErrorString)                                                                                 \
    X(cuDeviceGetCount)                                                                                 \
    X(cuDeviceGet)                                                                                      \
    X(cuDeviceGetName)                                                                                  \
    X(cuDeviceTotalMem)                                                                                 \
    X(cuDevicePrimaryCtxRetain)                                                                         \
    X(cuDevicePrimaryCtxRelease)                                                                        \
    X(cuCtxSetCurrent)                                                                                  \
    X(cuCtxSynchronize)                                                                                 \
    X(cuMemAlloc)                                                                                       \
    X(cuMemFree)                                                                                        \
    X(cuMemGetInfo)                                                                                     \
    X(cuMemcpyDtoH)                                                                                     \
    X(cuMemsetD8)                                                                                       \
    X(cuModuleLoadData)                                                                                 \
    X(cuModuleUnload)                                                                                   \
    X(cuModuleGetFunction)                                                                              \
    X(cuLaunchKernel)

using ::CUdeviceptr; // so that cuda::CUdeviceptr names the type with or without cuda.h
using ::CUresult;

// The typed table. Member names go through cuda.h's macros like the calls do, so
// `api.cuMemAlloc(...)` calls the cuMemAlloc_v2 entry.
struct DriverApi {
#define LEAKGATE_CUDA_POINTER(name) decltype(&::name) name = nullptr;
    LEAKGATE_CUDA_FUNCTIONS(LEAKGATE_CUDA_POINTER)
#undef LEAKGATE_CUDA_POINTER
    // Optional (a driver of CUDA 11.4 on): null where the driver has no such entry.
    decltype(&::cuDeviceGetGraphMemAttribute) cuDeviceGetGraphMemAttribute = nullptr;
};

#else

using CUresult = int;
using CUdeviceptr = std::uint64_t;
struct DriverApi {};

#endif

// Device and driver, as read at initialisation.
struct DeviceInfo {
    std::string name;      // "NVIDIA H200"
    int driverVersion = 0; // 13000 for CUDA 13.0
    std::int64_t totalBytes = 0;
    std::string library; // the path dlopen was given
};

// cuMemGetInfo: free and total bytes of the device, all processes' use included.
struct MemInfo {
    std::int64_t freeBytes = 0;
    std::int64_t totalBytes = 0;
    std::int64_t usedBytes() const { return totalBytes - freeBytes; }
};

// The process's driver: loaded, initialised and with device 0's primary context current on first
// use. One per process; the primary context is released and the library closed at exit.
class Driver {
  public:
    // Never throws: a driver that cannot be used is `available() == false` with the reason.
    static Driver& get();

    // A driver loaded from `library` (the tests load their fake and broken ones). Never throws.
    explicit Driver(std::string library);
    ~Driver();

    bool available() const { return available_; }
    const std::string& unavailableReason() const { return reason_; }
    const DeviceInfo& device() const { return device_; }
    const DriverApi& api() const { return api_; }

    // Throws CudaError naming `call` when `result` is not CUDA_SUCCESS.
    void check(CUresult result, const char* call) const;
    MemInfo memInfo() const;
    // The device memory CUDA graphs' allocation nodes hold on the device (the graph memory pool:
    // cuDeviceGetGraphMemAttribute, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), freed when the graph that
    // allocated it is destroyed or frees it; nullopt where the driver has no such entry, the call
    // fails or the driver is not available. Never throws.
    std::optional<std::int64_t> graphMemoryUsed() const;

    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;

  private:
    void load();

    bool available_ = false;
    std::string reason_;
    DeviceInfo device_;
    DriverApi api_;
    std::optional<base::DynamicLibrary> library_; // opened by load()
#if LEAKGATE_WITH_CUDA
    CUdevice ordinal_ = 0;
    CUcontext context_ = nullptr; // the retained primary context
#endif
};

// Device memory from cuMemAlloc in the primary context, freed by the destructor. Every live
// buffer is counted in `bytesHeld()`: leakgate's own accounting, which the probes cross-check with
// cuMemGetInfo. Move-only.
class DeviceBuffer {
  public:
    // Throws CudaError (also when the driver is not available, with its reason).
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) = delete;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    CUdeviceptr pointer() const { return pointer_; }
    std::size_t bytes() const { return bytes_; }

    // Bytes in live DeviceBuffers of this process, how many there are, and how many were ever
    // allocated (a probe tells "none placed" from "all freed" by it).
    static std::int64_t bytesHeld() { return heldBytes_.load(); }
    static std::int64_t buffersHeld() { return heldBuffers_.load(); }
    static std::int64_t buffersAllocated() { return allocatedBuffers_.load(); }

  private:
    CUdeviceptr pointer_ = 0;
    std::size_t bytes_ = 0;
    static inline std::atomic<std::int64_t> heldBytes_{0};
    static inline std::atomic<std::int64_t> heldBuffers_{0};
    static inline std::atomic<std::int64_t> allocatedBuffers_{0};
};

// The library dlopen loads: $LEAKGATE_LIBCUDA when set (the tests' fake driver), else
// libcuda.so.1.
std::string driverLibraryPath();

} // namespace leakgate::cuda

// A fake CUDA driver for the tests on machines without a GPU: the few cu* entry points leakgate
// calls, under the symbols cuda.h's macros name (so a loader that looked up a legacy name fails
// here as it would on the real driver). "Device memory" is host memory; the echo kernels are
// emulated: echo_<Type> copies the scalar its second parameter points at to the first.
//
// Behaviour from the environment, read by cuInit:
//   LEAKGATE_FAKE_CUDA_INIT=N     cuInit returns CUresult N (100: CUDA_ERROR_NO_DEVICE)
//   LEAKGATE_FAKE_CUDA_DEVICES=N  cuDeviceGetCount reports N devices (default 1)
// The graph memory pool is a count that the tests move with leakgate_fake_graph_memory(delta), an
// entry of this fake only: what a graph's allocation nodes would hold.
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

constexpr size_t kTotalBytes = size_t{80} << 30;

std::mutex mutex;
std::map<CUdeviceptr, size_t> allocations; // guarded by mutex
size_t allocatedBytes = 0;                 // guarded by mutex
long long graphPoolBytes = 0;              // guarded by mutex
int deviceCount = 1;
int primaryContext = 0; // its address is the context handle
bool initialised = false;

struct FakeFunction {
    std::string name;
};
struct FakeModule {
    int unused = 0;
};

// The bytes each echo kernel's scalar parameter has (fixtures/kernels/echo_scalars.cu).
size_t echoBytes(const std::string& name) {
    static const std::map<std::string, size_t> sizes = {
        {"echo_Int8", 1},     {"echo_Int16", 2},   {"echo_Int32", 4},    {"echo_Int64", 8},
        {"echo_Uint8", 1},    {"echo_Uint16", 2},  {"echo_Uint32", 4},   {"echo_Uint64", 8},
        {"echo_Boolean", 1},  {"echo_Float16", 2}, {"echo_BFloat16", 2}, {"echo_Float32", 4},
        {"echo_TFloat32", 4}, {"echo_Float64", 8}};
    auto found = sizes.find(name);
    return found == sizes.end() ? 0 : found->second;
}

int environmentInt(const char* name, int fallback) {
    const char* value = std::getenv(name);
    return value && *value ? std::atoi(value) : fallback;
}

} // namespace

extern "C" {

CUresult CUDAAPI cuInit(unsigned int) {
    int result = environmentInt("LEAKGATE_FAKE_CUDA_INIT", 0);
    if (result != 0) return static_cast<CUresult>(result);
    deviceCount = environmentInt("LEAKGATE_FAKE_CUDA_DEVICES", 1);
    initialised = true;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
    *version = 13000;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** name) {
    switch (error) {
    case CUDA_ERROR_NO_DEVICE:
        *name = "CUDA_ERROR_NO_DEVICE";
        break;
    case CUDA_ERROR_NOT_INITIALIZED:
        *name = "CUDA_ERROR_NOT_INITIALIZED";
        break;
    case CUDA_ERROR_OUT_OF_MEMORY:
        *name = "CUDA_ERROR_OUT_OF_MEMORY";
        break;
    case CUDA_ERROR_NOT_FOUND:
        *name = "CUDA_ERROR_NOT_FOUND";
        break;
    default:
        *name = "CUDA_ERROR_UNKNOWN";
        break;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** message) {
    *message =
        error == CUDA_ERROR_NO_DEVICE ? "no CUDA-capable device is detected" : "fake driver error";
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    *count = deviceCount;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
    if (ordinal >= deviceCount) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int length, CUdevice) {
    std::strncpy(name, "leakgate fake device", static_cast<size_t>(length) - 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice) {
    *bytes = kTotalBytes;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice) {
    *context = reinterpret_cast<CUcontext>(&primaryContext);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice) {
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext) {
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize() {
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* pointer, size_t bytes) {
    void* memory = std::calloc(1, bytes ? bytes : 1);
    if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
    std::lock_guard<std::mutex> lock(mutex);
    *pointer = reinterpret_cast<CUdeviceptr>(memory);
    allocations[*pointer] = bytes;
    allocatedBytes += bytes;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = allocations.find(pointer);
    if (found == allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    allocatedBytes -= found->second;
    allocations.erase(found);
    std::free(reinterpret_cast<void*>(pointer));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo(size_t* freeBytes, size_t* totalBytes) {
    std::lock_guard<std::mutex> lock(mutex);
    *freeBytes = kTotalBytes - allocatedBytes;
    *totalBytes = kTotalBytes;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void* destination, CUdeviceptr source, size_t bytes) {
    std::memcpy(destination, reinterpret_cast<const void*>(source), bytes);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr destination, unsigned char value, size_t count) {
    std::memset(reinterpret_cast<void*>(destination), value, count);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
    if (!image) return CUDA_ERROR_INVALID_VALUE;
    *module = reinterpret_cast<CUmodule>(new FakeModule);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
    delete reinterpret_cast<FakeModule*>(module);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule, const char* name) {
    if (echoBytes(name) == 0) return CUDA_ERROR_NOT_FOUND;
    *function = reinterpret_cast<CUfunction>(new FakeFunction{name}); // lives as long as the process
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned, unsigned, unsigned, unsigned, unsigned,
                                unsigned, unsigned, CUstream, void** params, void** extra) {
    if (!params || extra) return CUDA_ERROR_INVALID_VALUE;
    const auto* fake = reinterpret_cast<const FakeFunction*>(function);
    // As the driver does: the parameter values are copied at launch, from the pointers given.
    CUdeviceptr out = *static_cast<CUdeviceptr*>(params[0]);
    std::memcpy(reinterpret_cast<void*>(out), params[1], echoBytes(fake->name));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice, CUgraphMem_attribute attribute, void* value) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    if (attribute != CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT &&
        attribute != CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)
        return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(mutex);
    *static_cast<cuuint64_t*>(value) = static_cast<cuuint64_t>(graphPoolBytes);
    return CUDA_SUCCESS;
}

void leakgate_fake_graph_memory(long long delta) {
    std::lock_guard<std::mutex> lock(mutex);
    graphPoolBytes += delta;
}

} // extern "C"

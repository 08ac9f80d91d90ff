// The echo kernels (fixtures/kernels/echo_scalars.cu), built by nvcc with leakgate: one kernel
// per DSL scalar type, `echo_<Type>(unsigned char* out, <C type> value)`, that writes the bytes
// of the scalar it received to `out`. The device workload launches them with the pointers a
// target's packer returned as kernelParams. Below them, the launch loop on them that the device
// and real-launch workloads share.
#pragma once

#include "lib/cuda/driver.h"
#include "lib/workloads/scalar_cases.h"

#include <Python.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace leakgate::workloads {

// The image nvcc built: $LEAKGATE_ECHO_KERNEL_IMAGE when set, else an installed leakgate's (with
// its data), else the build's own; empty when this build has none (no nvcc at configure time).
std::string echoKernelImage();

// The echo module loaded into the primary context; unloaded by the destructor.
class EchoKernels {
  public:
    // Throws CudaError when the driver is not available or the image does not load.
    explicit EchoKernels(const std::string& imagePath);
    ~EchoKernels();
    EchoKernels(const EchoKernels&) = delete;
    EchoKernels& operator=(const EchoKernels&) = delete;

    bool has(const std::string& typeName) const { return functions_.count(typeName) > 0; }

    // Queues echo_<type>(out, *value) with kernelParams {&out, value}: `value` points at the
    // packed scalar, as a DSL's launch passes it. Does not wait.
    void launch(const std::string& typeName, const void* value, cuda::CUdeviceptr out) const;

    // Launches, waits, and returns the `bytes` bytes the kernel wrote.
    std::vector<std::uint8_t> echo(const std::string& typeName, const void* value, cuda::CUdeviceptr out,
                                   std::size_t bytes) const;

    void synchronize() const;

  private:
#if LEAKGATE_WITH_CUDA
    CUmodule module_ = nullptr;
    std::map<std::string, CUfunction> functions_;
#else
    std::map<std::string, int> functions_;
#endif
};

// The address a packed pointer holds. A ctypes pointer exposes it through the buffer protocol,
// which allocates nothing (so a launch loop's counts are the packer's own); anything else goes
// through int(). Throws py::error_already_set.
const void* pointerAddress(PyObject* pointer);

// `calls` launches of echo_<typeName>, each packing with `pack()` (a T(v).__c_pointers__()
// callable) and passing the first pointer; one allocation region, then the calls' cyclic garbage.
Run launchRun(const EchoKernels& kernels, const std::string& typeName, PyObject* pack,
              cuda::CUdeviceptr out, std::int64_t calls);

} // namespace leakgate::workloads

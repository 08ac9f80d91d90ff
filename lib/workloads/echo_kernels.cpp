#include "lib/workloads/echo_kernels.h"

#include "leakgate/allocations.h"
#include "leakgate/errors.h"
#include "lib/base/data_dir.h"
#include "lib/python/compat.h"
#include "lib/workloads/encodings.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace leakgate::workloads {

namespace py = pybind11;
using cuda::CudaError;
using cuda::CUdeviceptr;
using cuda::Driver;

std::string echoKernelImage() {
    const char* override = std::getenv("LEAKGATE_ECHO_KERNEL_IMAGE");
    if (override && *override) return override;
    // An installed leakgate has it with its data (cmake/install.cmake); a build, in its build tree.
    try {
        std::filesystem::path installed = base::dataDir() / "kernels/echo_scalars.fatbin";
        if (std::filesystem::exists(installed)) return installed.string();
    } catch (const EnvironmentError&) {
    }
#ifdef LEAKGATE_ECHO_KERNEL_IMAGE
    return LEAKGATE_ECHO_KERNEL_IMAGE;
#else
    return "";
#endif
}

#if LEAKGATE_WITH_CUDA

EchoKernels::EchoKernels(const std::string& imagePath) {
    Driver& driver = Driver::get();
    if (!driver.available()) throw CudaError(driver.unavailableReason());
    std::ifstream in(imagePath, std::ios::binary);
    if (!in) throw CudaError(fmt::format("cannot read the echo kernel image {}", imagePath));
    std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    driver.check(driver.api().cuModuleLoadData(&module_, image.data()), "cuModuleLoadData");
    for (const ScalarType& type : scalarTypes()) {
        CUfunction function = nullptr;
        const std::string name = "echo_" + type.name;
        if (driver.api().cuModuleGetFunction(&function, module_, name.c_str()) == CUDA_SUCCESS)
            functions_.emplace(type.name, function);
    }
}

EchoKernels::~EchoKernels() {
    if (module_) Driver::get().api().cuModuleUnload(module_);
}

void EchoKernels::launch(const std::string& typeName, const void* value, CUdeviceptr out) const {
    const Driver& driver = Driver::get();
    void* params[] = {&out, const_cast<void*>(value)};
    driver.check(driver.api().cuLaunchKernel(functions_.at(typeName), 1, 1, 1, 1, 1, 1, 0, nullptr,
                                             params, nullptr),
                 "cuLaunchKernel");
}

std::vector<std::uint8_t> EchoKernels::echo(const std::string& typeName, const void* value,
                                            CUdeviceptr out, std::size_t bytes) const {
    const Driver& driver = Driver::get();
    driver.check(driver.api().cuMemsetD8(out, 0xEE, bytes), "cuMemsetD8"); // no stale bytes
    launch(typeName, value, out);
    synchronize();
    std::vector<std::uint8_t> got(bytes);
    driver.check(driver.api().cuMemcpyDtoH(got.data(), out, bytes), "cuMemcpyDtoH");
    return got;
}

void EchoKernels::synchronize() const {
    const Driver& driver = Driver::get();
    driver.check(driver.api().cuCtxSynchronize(), "cuCtxSynchronize");
}

#else

EchoKernels::EchoKernels(const std::string&) {
    throw CudaError(Driver::get().unavailableReason());
}
EchoKernels::~EchoKernels() = default;
void EchoKernels::launch(const std::string&, const void*, CUdeviceptr) const {}
std::vector<std::uint8_t> EchoKernels::echo(const std::string&, const void*, CUdeviceptr,
                                            std::size_t) const {
    return {};
}
void EchoKernels::synchronize() const {}

#endif

const void* pointerAddress(PyObject* pointer) {
    if (PyObject_CheckBuffer(pointer)) {
        Py_buffer view;
        if (PyObject_GetBuffer(pointer, &view, PyBUF_SIMPLE) == 0) {
            const void* address = nullptr;
            const bool fits = view.len == static_cast<Py_ssize_t>(sizeof address);
            if (fits) std::memcpy(&address, view.buf, sizeof address);
            PyBuffer_Release(&view);
            if (fits) return address;
        } else {
            PyErr_Clear();
        }
    }
    python::OwnedRef number = python::own(PyNumber_Index(pointer));
    if (!number) throw py::error_already_set();
    void* address = PyLong_AsVoidPtr(number.get());
    if (!address && PyErr_Occurred()) throw py::error_already_set();
    return address;
}

Run launchRun(const EchoKernels& kernels, const std::string& typeName, PyObject* pack,
              cuda::CUdeviceptr out, std::int64_t calls) {
    probes::AllocationCounter::start();
    for (std::int64_t i = 0; i < calls; ++i) {
        python::OwnedRef pointers = python::own(PyObject_CallNoArgs(pack));
        python::OwnedRef first =
            pointers ? python::own(PySequence_GetItem(pointers.get(), 0)) : python::OwnedRef();
        if (!first) {
            probes::AllocationCounter::stop();
            throw py::error_already_set();
        }
        kernels.launch(typeName, pointerAddress(first.get()), out);
    }
    probes::AllocationCounts counts = probes::AllocationCounter::stop();
    kernels.synchronize();
    return perCall(counts, collectYoungGarbage(), calls);
}

} // namespace leakgate::workloads

#include "probes/leakgate_module.h"

#include "leakgate/allocations.h"
#include "lib/cuda/driver.h"
#include "probes/sentinel_probe.h"

#include <pybind11/pybind11.h>

#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

// `bytes` of resident host memory, its own mapping: the kernel commits every page at once
// (MAP_POPULATE), about half the cost of a heap block written page by page, which the gate paid
// for each of the 37 sentinels of a decorate workload; munmap gives the pages back at once.
class ResidentPages {
  public:
    explicit ResidentPages(size_t bytes) : bytes_(bytes) {
        if (bytes_ == 0) return;
        void* pages = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (pages == MAP_FAILED) throw std::bad_alloc();
        pages_ = pages;
    }
    ResidentPages(ResidentPages&& other) noexcept
        : pages_(std::exchange(other.pages_, nullptr)), bytes_(other.bytes_) {}
    ResidentPages& operator=(ResidentPages&&) = delete;
    size_t bytes() const { return bytes_; }
    ~ResidentPages() {
        if (pages_ != nullptr) munmap(pages_, bytes_);
    }

  private:
    void* pages_ = nullptr;
    size_t bytes_;
};

// A host sentinel: a weakref-able object owning `bytes` of committed host memory.
class HostSentinel {
  public:
    HostSentinel(std::string label, size_t bytes) : label_(std::move(label)), payload_(bytes) {}
    const std::string& label() const { return label_; }
    size_t bytes() const { return payload_.bytes(); }

  private:
    std::string label_;
    ResidentPages payload_;
};

// A device sentinel: a weakref-able object owning `bytes` of device memory from cuMemAlloc in the
// primary context, freed when the object is deallocated.
class DeviceSentinel {
  public:
    DeviceSentinel(std::string label, size_t bytes) : label_(std::move(label)), buffer_(bytes) {}
    const std::string& label() const { return label_; }
    size_t bytes() const { return buffer_.bytes(); }
    std::uint64_t pointer() const { return buffer_.pointer(); }

  private:
    std::string label_;
    cuda::DeviceBuffer buffer_;
};

// The module defineSentinelModule filled: `_leakgate` in a worker, `leakgate_dsl._native` in the
// Python package.
std::string g_moduleName;

// Raises CudaUnavailable(reason): asked for a device sentinel where CUDA cannot be used. (Not
// py::register_exception: its function-local static outlives the interpreter, and releasing it
// after Py_FinalizeEx crashes an embedding process at exit.)
[[noreturn]] void raiseCudaUnavailable(const std::string& reason) {
    py::object type = py::module_::import(g_moduleName.c_str()).attr("CudaUnavailable");
    PyErr_SetString(type.ptr(), reason.c_str());
    throw py::error_already_set();
}

} // namespace

void defineSentinelModule(py::module_& module) {
    g_moduleName = module.attr("__name__").cast<std::string>();
    // dynamic_attr makes the type a GC type, so a sentinel in cyclic garbage shows in gc.garbage.
    py::class_<HostSentinel>(module, "HostSentinel", py::dynamic_attr())
        .def_property_readonly("label", &HostSentinel::label)
        .def_property_readonly("nbytes", &HostSentinel::bytes)
        // sys.getsizeof sees the payload, so the bytes a finding pins include it.
        .def("__sizeof__", [](const HostSentinel& self) { return sizeof(HostSentinel) + self.bytes(); })
        .def("__repr__", [](const HostSentinel& self) {
            return "<leakgate sentinel " + self.label() + " (" + std::to_string(self.bytes()) +
                   " bytes)>";
        });
    module.def(
        "sentinel",
        [](std::string label, size_t bytes) {
            py::object sentinel = py::cast(HostSentinel(label, bytes));
            trackSentinel(sentinel.ptr(), label, "host", static_cast<std::int64_t>(bytes));
            return sentinel;
        },
        py::arg("label"), py::arg("nbytes"),
        "Make a host sentinel owning `nbytes` bytes; leakgate reports its verdict after the workload.");
    module.attr("CudaUnavailable") = py::reinterpret_steal<py::object>(
        PyErr_NewException((g_moduleName + ".CudaUnavailable").c_str(), PyExc_RuntimeError, nullptr));
    py::class_<DeviceSentinel>(module, "DeviceSentinel", py::dynamic_attr())
        .def_property_readonly("label", &DeviceSentinel::label)
        .def_property_readonly("nbytes", &DeviceSentinel::bytes)
        .def_property_readonly("pointer", &DeviceSentinel::pointer)
        .def("__repr__", [](const DeviceSentinel& self) {
            return "<leakgate device sentinel " + self.label() + " (" + std::to_string(self.bytes()) +
                   " device bytes)>";
        });
    module.def(
        "device_sentinel",
        [](std::string label, size_t bytes) {
            cuda::Driver& driver = cuda::Driver::get();
            if (!driver.available()) raiseCudaUnavailable(driver.unavailableReason());
            std::unique_ptr<DeviceSentinel> owned;
            try {
                owned = std::make_unique<DeviceSentinel>(label, bytes);
            } catch (const cuda::CudaError& error) {
                raiseCudaUnavailable(error.what()); // out of device memory, say
            }
            py::object sentinel = py::cast(std::move(owned));
            trackSentinel(sentinel.ptr(), label, "device", static_cast<std::int64_t>(bytes));
            return sentinel;
        },
        py::arg("label"), py::arg("nbytes"),
        "Make a device sentinel owning `nbytes` bytes of device memory (cuMemAlloc in the primary "
        "context); raises CudaUnavailable with the reason when CUDA cannot be used.");
    module.def(
        "track",
        [](py::handle object, std::string label, std::string kind, std::int64_t bytes) {
            trackSentinel(object.ptr(), std::move(label), std::move(kind), bytes);
        },
        py::arg("object"), py::arg("label"), py::arg("kind"), py::arg("nbytes"),
        "Track any weakref-able object (a torch CUDA tensor, say) as a sentinel of payload `kind`.");
    module.def(
        "cuda_status",
        []() {
            cuda::Driver& driver = cuda::Driver::get();
            py::dict status;
            status["available"] = driver.available();
            status["reason"] = driver.unavailableReason();
            status["library"] = driver.device().library;
            status["device"] = driver.device().name;
            status["driver_version"] = driver.device().driverVersion;
            status["total_bytes"] = driver.device().totalBytes;
            return status;
        },
        "Whether CUDA can be used here, and if not, why (the driver is loaded on the first call).");
    module.def(
        "device_memory",
        []() {
            py::dict memory;
            memory["held_bytes"] = cuda::DeviceBuffer::bytesHeld();
            memory["held_buffers"] = cuda::DeviceBuffer::buffersHeld();
            cuda::Driver& driver = cuda::Driver::get();
            if (driver.available()) {
                cuda::MemInfo info = driver.memInfo();
                memory["free_bytes"] = info.freeBytes;
                memory["total_bytes"] = info.totalBytes;
            }
            return memory;
        },
        "leakgate's own accounting of its device buffers, and cuMemGetInfo when CUDA is up.");
    module.def(
        "measure_calls",
        [](py::handle callable, std::int64_t calls) {
            auto counts = probes::AllocationCounter::countCalls(callable.ptr(), calls);
            if (!counts) throw py::error_already_set();
            return py::make_tuple(counts->allocations, counts->frees);
        },
        py::arg("callable"), py::arg("calls"),
        "Call `callable()` `calls` times; return (allocations, frees) made by CPython's allocators "
        "meanwhile.");
    module.def(
        "rss_bytes",
        []() {
            std::ifstream statm("/proc/self/statm");
            long long pages = 0, resident = 0;
            statm >> pages >> resident;
            return resident * static_cast<long long>(::sysconf(_SC_PAGESIZE));
        },
        "The worker's resident set size, from /proc/self/statm.");
}

} // namespace leakgate::probes

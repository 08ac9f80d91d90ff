#include "lib/python/leakgate_module.h"

#include "probes/allocation_counter.h"
#include "probes/sentinel_probe.h"

#include <pybind11/embed.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>

namespace leakgate::python {
namespace {

namespace py = pybind11;

// A host sentinel: a weakref-able object owning `bytes` of committed host memory.
class HostSentinel {
  public:
    HostSentinel(std::string label, size_t bytes) : label_(std::move(label)), bytes_(bytes) {
        if (bytes_ > 0) {
            payload_ = std::make_unique<char[]>(bytes_);
            std::memset(payload_.get(), 0xA5, bytes_); // touch every page: real resident memory
        }
    }
    const std::string& label() const { return label_; }
    size_t bytes() const { return bytes_; }

  private:
    std::string label_;
    size_t bytes_;
    std::unique_ptr<char[]> payload_;
};

} // namespace

PYBIND11_EMBEDDED_MODULE(_leakgate, module) {
    module.doc() = "leakgate's worker module: sentinels whose lifetimes leakgate measures";
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
            probes::trackSentinel(sentinel.ptr(), label, "host", static_cast<std::int64_t>(bytes));
            return sentinel;
        },
        py::arg("label"), py::arg("nbytes"),
        "Make a host sentinel owning `nbytes` bytes; leakgate reports its verdict after the workload.");
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

void registerLeakgateModule() {
    // Nothing to do at run time: referencing this function keeps the object file, and with it the
    // static registration above, in the link.
}

} // namespace leakgate::python

// Counts calls of CPython's allocators in a measured region (docs/definitions.md, "Calls and
// allocations"): every successful malloc, calloc and realloc in the RAW, MEM and OBJ domains is an
// allocation; net blocks are allocations minus frees. The counter wraps the allocators that are
// installed when it is (CPython allows only wrapping once it runs) and stays installed for the
// life of the worker; outside a region it costs one relaxed atomic load per call. Public
// (leakgate/api.h): a probe counts its own region with start() and stop().
#pragma once

#include "leakgate/api.h"

#include <Python.h>

#include <cstdint>
#include <optional>

namespace leakgate::probes {

struct AllocationCounts {
    std::uint64_t allocations = 0;
    std::uint64_t frees = 0;
    std::int64_t netBlocks() const {
        return static_cast<std::int64_t>(allocations) - static_cast<std::int64_t>(frees);
    }
};

class LEAKGATE_API AllocationCounter {
  public:
    // Wraps the three domains' allocators. Idempotent; call with the GIL held.
    static void install();
    static bool installed();
    // Regions do not nest. The RAW domain is called without the GIL, so the counts are atomic.
    static void start();
    static AllocationCounts stop();

    // Calls `callable()` (borrowed) `calls` times from C inside one region, so that the counts are
    // the callable's own and not a Python loop's. Empty when a call raised (the exception is set).
    static std::optional<AllocationCounts> countCalls(PyObject* callable, std::int64_t calls);
};

} // namespace leakgate::probes

#include "leakgate/allocations.h"
#include "probes/probe.h"

#include "lib/base/check.h"
#include "lib/python/compat.h"

#include <Python.h>

#include <atomic>

namespace leakgate::probes {
namespace {

struct Domain {
    PyMemAllocatorDomain id;
    PyMemAllocatorEx original;
    // RAW is called without the GIL, so its counts are atomic. MEM and OBJ must be called with
    // the GIL held (CPython's rule for those domains), which serialises them: plain counters,
    // no locked instruction per call (P4 in docs/notes/performance.md). A free-threaded build has no
    // GIL: everything atomic there.
    bool needsAtomic;
};
constexpr bool kGilSerialises = !python::kFreeThreaded;
Domain g_domains[] = {{PYMEM_DOMAIN_RAW, {}, true},
                      {PYMEM_DOMAIN_MEM, {}, !kGilSerialises},
                      {PYMEM_DOMAIN_OBJ, {}, !kGilSerialises}};

std::atomic<bool> g_installed{false};
std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_allocations{0}; // RAW (and everything without a GIL)
std::atomic<std::uint64_t> g_frees{0};
std::uint64_t g_gilAllocations = 0; // MEM and OBJ, under the GIL
std::uint64_t g_gilFrees = 0;

void countAllocation(const Domain* domain) {
    if (!g_counting.load(std::memory_order_relaxed)) return;
    if (domain->needsAtomic) {
        g_allocations.fetch_add(1, std::memory_order_relaxed);
    } else {
        ++g_gilAllocations;
    }
}

void countFree(const Domain* domain) {
    if (!g_counting.load(std::memory_order_relaxed)) return;
    if (domain->needsAtomic) {
        g_frees.fetch_add(1, std::memory_order_relaxed);
    } else {
        ++g_gilFrees;
    }
}

void* countingMalloc(void* context, size_t size) {
    auto* domain = static_cast<Domain*>(context);
    void* block = domain->original.malloc(domain->original.ctx, size);
    if (block) countAllocation(domain);
    return block;
}

void* countingCalloc(void* context, size_t count, size_t size) {
    auto* domain = static_cast<Domain*>(context);
    void* block = domain->original.calloc(domain->original.ctx, count, size);
    if (block) countAllocation(domain);
    return block;
}

void* countingRealloc(void* context, void* old, size_t size) {
    auto* domain = static_cast<Domain*>(context);
    void* block = domain->original.realloc(domain->original.ctx, old, size);
    if (block) {
        // A realloc is an allocation (docs/definitions.md); when it had a block, that block is gone, so
        // it is a free too and net blocks do not move.
        countAllocation(domain);
        if (old) countFree(domain);
    }
    return block;
}

void countingFree(void* context, void* block) {
    auto* domain = static_cast<Domain*>(context);
    domain->original.free(domain->original.ctx, block);
    if (block) countFree(domain);
}

} // namespace

void AllocationCounter::install() {
    if (g_installed.exchange(true)) return;
    for (Domain& domain : g_domains) {
        PyMem_GetAllocator(domain.id, &domain.original);
        PyMemAllocatorEx counting{&domain, countingMalloc, countingCalloc, countingRealloc,
                                  countingFree};
        PyMem_SetAllocator(domain.id, &counting);
    }
}

bool AllocationCounter::installed() {
    return g_installed.load();
}

void AllocationCounter::start() {
    LEAKGATE_CHECK(g_installed.load());
    LEAKGATE_CHECK(!g_counting.load());
    g_allocations.store(0, std::memory_order_relaxed);
    g_frees.store(0, std::memory_order_relaxed);
    g_gilAllocations = 0;
    g_gilFrees = 0;
    g_counting.store(true, std::memory_order_release);
}

AllocationCounts AllocationCounter::stop() {
    g_counting.store(false, std::memory_order_release);
    // Called with the GIL held, like start(): the MEM and OBJ counts are ours to read.
    return {g_allocations.load(std::memory_order_relaxed) + g_gilAllocations,
            g_frees.load(std::memory_order_relaxed) + g_gilFrees};
}

// The counts go on where they were: only the flag is cleared, and set again.
UncountedAllocations::UncountedAllocations() : wasCounting_(g_counting.exchange(false)) {}
UncountedAllocations::~UncountedAllocations() {
    if (wasCounting_) g_counting.store(true, std::memory_order_release);
}

std::optional<AllocationCounts> AllocationCounter::countCalls(PyObject* callable, std::int64_t calls) {
    install();
    start();
    for (std::int64_t i = 0; i < calls; ++i) {
        PyObject* result = PyObject_CallNoArgs(callable);
        if (!result) {
            stop();
            return std::nullopt;
        }
        Py_DECREF(result);
    }
    return stop();
}

} // namespace leakgate::probes

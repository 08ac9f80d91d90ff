#include "leakgate/allocations.h"

#include "tests/unit/python_test_support.h"

#include <gtest/gtest.h>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

TEST(AllocationCounter, CountsTheBlocksAListOfBigIntsNeeds) {
    AllocationCounter::install();
    py::object makeList =
        testing::runPython("def make(n):\n    return [i * 1000003 for i in range(n)]\n")["make"];
    makeList(10); // warm the code path
    AllocationCounter::start();
    py::object kept = makeList(1000);
    AllocationCounts counts = AllocationCounter::stop();
    // 1000 ints above the small-int cache, each its own block, plus the list's storage.
    EXPECT_GE(counts.allocations, 1000u);
    EXPECT_GE(counts.netBlocks(), 1000);
    AllocationCounter::start();
    kept = py::none();
    AllocationCounts freed = AllocationCounter::stop();
    EXPECT_GE(freed.frees, 1000u);
    EXPECT_LE(freed.netBlocks(), -1000);
}

TEST(AllocationCounter, ARegionWithoutPythonWorkCountsNothing) {
    AllocationCounter::install();
    AllocationCounter::start();
    AllocationCounts counts = AllocationCounter::stop();
    EXPECT_EQ(counts.allocations, 0u);
    EXPECT_EQ(counts.frees, 0u);
}

TEST(AllocationCounter, RawDomainCallsAreCounted) {
    AllocationCounter::install();
    AllocationCounter::start();
    void* block = PyMem_RawMalloc(64);
    block = PyMem_RawRealloc(block, 128);
    PyMem_RawFree(block);
    AllocationCounts counts = AllocationCounter::stop();
    EXPECT_EQ(counts.allocations, 2u); // malloc, realloc
    EXPECT_EQ(counts.frees, 2u);       // the block realloc replaced, free
}

} // namespace
} // namespace leakgate::probes

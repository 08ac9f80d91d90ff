#include "lib/scanner/components.h"

#include "lib/python/compat.h"
#include "tests/unit/python_test_support.h"

#include <gtest/gtest.h>

namespace leakgate::scanner {
namespace {

namespace py = pybind11;
using python::own;
using python::OwnedRef;

TEST(Components, SeparatesCyclesSelfLoopsAndAcyclicObjects) {
    py::dict scope = testing::runPython("a = []\nb = [a]\na.append(b)\n" // a <-> b
                                        "s = []\ns.append(s)\n"          // s -> s
                                        "t = [a]\n");                    // t -> a, no cycle
    std::vector<PyObject*> objects{scope["a"].ptr(), scope["b"].ptr(), scope["s"].ptr(),
                                   scope["t"].ptr()};
    ObjectGraph graph = ObjectGraph::build(objects);
    Components components = Components::find(graph);

    EXPECT_EQ(components.count(), 3u);
    EXPECT_EQ(components.of(0), components.of(1));
    EXPECT_NE(components.of(0), components.of(2));
    EXPECT_TRUE(components.isCyclic(graph, components.of(0)));
    EXPECT_TRUE(components.isCyclic(graph, components.of(2)));
    EXPECT_FALSE(components.isCyclic(graph, components.of(3)));
    EXPECT_EQ(components.members(components.of(0)).size(), 2u);
}

// Builds a chain of `length` lists, each holding the next; closes it into one cycle if asked.
std::vector<OwnedRef> makeChain(size_t length, bool closeIt) {
    std::vector<OwnedRef> lists;
    lists.reserve(length);
    for (size_t i = 0; i < length; ++i)
        lists.push_back(own(PyList_New(0)));
    for (size_t i = 0; i + 1 < length; ++i)
        PyList_Append(lists[i].get(), lists[i + 1].get());
    if (closeIt) PyList_Append(lists.back().get(), lists.front().get());
    return lists;
}

void breakChain(std::vector<OwnedRef>& lists) {
    for (auto& list : lists)
        PyList_SetSlice(list.get(), 0, PyList_GET_SIZE(list.get()), nullptr);
}

TEST(Components, AMillionObjectCycleIsOneComponentWithoutRecursion) {
    auto lists = makeChain(1'000'000, true);
    std::vector<PyObject*> objects;
    for (auto& list : lists)
        objects.push_back(list.get());
    ObjectGraph graph = ObjectGraph::build(objects);
    Components components = Components::find(graph);
    EXPECT_EQ(components.count(), 1u);
    EXPECT_EQ(components.members(0).size(), 1'000'000u);
    breakChain(lists);
}

TEST(Components, AMillionObjectChainIsNumberedSinksFirst) {
    auto lists = makeChain(1'000'000, false);
    std::vector<PyObject*> objects;
    for (auto& list : lists)
        objects.push_back(list.get());
    ObjectGraph graph = ObjectGraph::build(objects);
    Components components = Components::find(graph);
    ASSERT_EQ(components.count(), 1'000'000u);
    for (NodeId node = 0; node + 1 < graph.size(); ++node) {
        ASSERT_LT(components.of(node + 1), components.of(node)); // reachable => smaller id
    }
    breakChain(lists);
}

} // namespace
} // namespace leakgate::scanner

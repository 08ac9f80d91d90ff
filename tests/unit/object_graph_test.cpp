#include "lib/scanner/object_graph.h"

#include "tests/unit/python_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace leakgate::scanner {
namespace {

namespace py = pybind11;

bool hasEdge(const ObjectGraph& graph, NodeId from, NodeId to) {
    auto successors = graph.successors(from);
    return std::find(successors.begin(), successors.end(), to) != successors.end();
}

TEST(ObjectGraph, EdgesFollowTpTraverseWithinTheSet) {
    py::dict scope =
        testing::runPython("a = []\nb = [a, 12345678, 'text']\na.append(b)\nc = {'k': a}\n");
    std::vector<PyObject*> objects{scope["a"].ptr(), scope["b"].ptr(), scope["c"].ptr()};
    ObjectGraph graph = ObjectGraph::build(objects);

    ASSERT_EQ(graph.size(), 3u);
    EXPECT_TRUE(hasEdge(graph, 0, 1)); // a -> b
    EXPECT_TRUE(hasEdge(graph, 1, 0)); // b -> a
    EXPECT_TRUE(hasEdge(graph, 2, 0)); // c -> a
    EXPECT_FALSE(hasEdge(graph, 0, 2));
    EXPECT_EQ(graph.inDegree(0), 2u);
    EXPECT_EQ(graph.inDegree(2), 0u);
    EXPECT_EQ(graph.edgeCount(), 3u);
}

TEST(ObjectGraph, UntrackedReferentsAreKeptAsLeavesNotNodes) {
    py::dict scope = testing::runPython("b = [bytearray(100), 'leaf text']\n");
    std::vector<PyObject*> objects{scope["b"].ptr()};
    ObjectGraph graph = ObjectGraph::build(objects);
    EXPECT_EQ(graph.successors(0).size(), 0u);
    EXPECT_EQ(graph.untrackedReferents(0).size(), 2u);
}

TEST(ObjectGraph, AnObjectListedTwiceIsOneNode) {
    py::dict scope = testing::runPython("a = [1]\n");
    std::vector<PyObject*> objects{scope["a"].ptr(), scope["a"].ptr()};
    ObjectGraph graph = ObjectGraph::build(objects);
    EXPECT_EQ(graph.size(), 1u);
    EXPECT_EQ(graph.find(scope["a"].ptr()), NodeId{0});
    EXPECT_FALSE(graph.find(scope.ptr()).has_value());
}

TEST(ObjectGraph, ReverseEdgesListEveryPredecessor) {
    py::dict scope = testing::runPython("t = []\nx = [t]\ny = [t]\n");
    std::vector<PyObject*> objects{scope["t"].ptr(), scope["x"].ptr(), scope["y"].ptr()};
    ObjectGraph graph = ObjectGraph::build(objects);
    auto reverse = graph.reverse();
    auto predecessors = reverse.predecessors(0);
    std::vector<NodeId> sorted(predecessors.begin(), predecessors.end());
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<NodeId>{1, 2}));
    EXPECT_TRUE(reverse.predecessors(1).empty());
}

} // namespace
} // namespace leakgate::scanner

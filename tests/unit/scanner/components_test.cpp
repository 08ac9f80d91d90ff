#include "lib/scanner/components.h"

#include "lib/python/compat.h"
#include "tests/unit/python_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

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

// Tarjan's algorithm as it reads, with an array per node for the discovery index and the low link
// (as Components::find was written before it kept the low link in the call frames): the numbering
// and the order of members Components::find must give.
struct ReferenceComponents {
    std::vector<std::uint32_t> of;
    std::vector<std::vector<NodeId>> members;

    explicit ReferenceComponents(const ObjectGraph& graph) {
        constexpr std::uint32_t kUnvisited = UINT32_MAX;
        std::vector<std::uint32_t> order(graph.size(), kUnvisited), low(graph.size(), 0);
        of.assign(graph.size(), kUnvisited);
        std::vector<NodeId> stack;
        std::uint32_t next = 0;
        std::function<void(NodeId)> visit = [&](NodeId node) {
            order[node] = low[node] = next++;
            stack.push_back(node);
            for (NodeId successor : graph.successors(node)) {
                if (order[successor] == kUnvisited) {
                    visit(successor);
                    low[node] = std::min(low[node], low[successor]);
                } else if (of[successor] == kUnvisited) {
                    low[node] = std::min(low[node], order[successor]);
                }
            }
            if (low[node] != order[node]) return;
            members.emplace_back();
            NodeId member;
            do {
                member = stack.back();
                stack.pop_back();
                of[member] = static_cast<std::uint32_t>(members.size() - 1);
                members.back().push_back(member);
            } while (member != node);
        };
        for (NodeId root = 0; root < graph.size(); ++root) {
            if (order[root] == kUnvisited) visit(root);
        }
    }
};

TEST(Components, NumbersComponentsAndOrdersMembersAsTarjansAlgorithmReads) {
    // GIVEN the garbage of units of cycles of several shapes (trees with parent pointers, dicts
    // that hold themselves, chains into them, lone objects)
    testing::runPython(R"(
class Node:
    def __init__(self, parent):
        self.parent, self.children = parent, []
        if parent is not None: parent.children.append(self)
for unit in range(300):
    nodes = [Node(None)]
    for i in range(1, 12 + unit % 9):
        nodes.append(Node(nodes[(i - 1) // 3]))
    cache = {"root": nodes[unit % len(nodes)]}
    cache["cache"] = cache
    chain = [cache]
    for i in range(unit % 5):
        chain = [chain, {"tail": chain}]
    lone = [[]]
    lone[0].append(lone[0])
)");
    py::list garbage = testing::collectGarbage();
    std::vector<PyObject*> objects = testing::pointersOf(garbage);
    ObjectGraph graph = ObjectGraph::build(objects);
    // WHEN the components are found
    Components components = Components::find(graph);
    // THEN they are numbered, filled and marked cyclic as the textbook algorithm does
    ReferenceComponents reference(graph);
    ASSERT_EQ(components.count(), reference.members.size());
    for (NodeId node = 0; node < graph.size(); ++node)
        ASSERT_EQ(components.of(node), reference.of[node]) << "node " << node;
    size_t cyclic = 0;
    for (ComponentId component = 0; component < components.count(); ++component) {
        auto members = components.members(component);
        EXPECT_EQ(std::vector<NodeId>(members.begin(), members.end()), reference.members[component]);
        auto successors = graph.successors(members[0]);
        bool selfLoop = std::find(successors.begin(), successors.end(), members[0]) != successors.end();
        EXPECT_EQ(components.isCyclic(graph, component), members.size() > 1 || selfLoop);
        cyclic += components.isCyclic(graph, component) ? 1 : 0;
    }
    EXPECT_GT(cyclic, 600u);
    testing::clearGarbage();
}

} // namespace
} // namespace leakgate::scanner

#include "lib/scanner/object_graph.h"

#include "lib/scanner/explain.h"

#include "tests/unit/python_test_support.h"

#include <gtest/gtest.h>

#include "lib/python/compat.h"

#include <algorithm>
#include <unordered_map>

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

// The graph as the definition reads, with a hash map from object to node: what ObjectGraph::build
// must give, node for node, edge for edge and leaf for leaf, in the same order.
struct ReferenceGraph {
    std::vector<PyObject*> objects;
    std::unordered_map<PyObject*, NodeId> index;
    std::vector<std::vector<NodeId>> edges;
    std::vector<std::vector<ObjectGraph::Leaf>> leaves;

    explicit ReferenceGraph(const std::vector<PyObject*>& input) {
        for (PyObject* object : input) {
            if (index.emplace(object, static_cast<NodeId>(objects.size())).second)
                objects.push_back(object);
        }
        for (PyObject* object : objects) {
            std::vector<PyObject*> referents;
            traverseproc traverse = Py_TYPE(object)->tp_traverse;
            if (PyObject_IS_GC(object) && traverse != nullptr) {
                traverse(
                    object,
                    [](PyObject* referent, void* out) {
                        if (referent) static_cast<std::vector<PyObject*>*>(out)->push_back(referent);
                        return 0;
                    },
                    &referents);
            }
            edges.emplace_back();
            leaves.emplace_back();
            for (PyObject* referent : referents) {
                if (auto found = index.find(referent); found != index.end()) {
                    edges.back().push_back(found->second);
                } else if (!python::isGcTracked(referent)) {
                    leaves.back().push_back({referent, Py_REFCNT(referent)});
                }
            }
        }
    }
};

void expectSameGraph(const ObjectGraph& graph, const ReferenceGraph& reference) {
    ASSERT_EQ(graph.size(), reference.objects.size());
    size_t edges = 0;
    for (NodeId node = 0; node < graph.size(); ++node) {
        ASSERT_EQ(graph.object(node), reference.objects[node]) << "node " << node;
        auto successors = graph.successors(node);
        EXPECT_EQ(std::vector<NodeId>(successors.begin(), successors.end()), reference.edges[node])
            << "edges of node " << node << ", a " << Py_TYPE(graph.object(node))->tp_name;
        auto leaves = graph.untrackedReferents(node);
        ASSERT_EQ(leaves.size(), reference.leaves[node].size()) << "leaves of node " << node;
        for (size_t i = 0; i < leaves.size(); ++i) {
            EXPECT_EQ(leaves[i].object, reference.leaves[node][i].object);
            // A count of 4 bytes or more reads back as PY_SSIZE_T_MAX (ObjectGraph::Leaves): on
            // 3.12 and later every immortal object's count (UINT32_MAX) is one.
            const Py_ssize_t counted = reference.leaves[node][i].refcount;
            EXPECT_EQ(leaves[i].refcount, counted >= Py_ssize_t{UINT32_MAX} ? PY_SSIZE_T_MAX : counted);
        }
        EXPECT_EQ(graph.find(graph.object(node)), node);
        edges += successors.size();
    }
    EXPECT_EQ(graph.edgeCount(), edges);
}

// Every referent of the set, and the objects beside them in memory, looked up in both.
void expectSameMembership(const ObjectGraph& graph, const ReferenceGraph& reference,
                          const std::vector<PyObject*>& probes) {
    for (PyObject* probe : probes) {
        auto expected = reference.index.find(probe);
        auto found = graph.find(probe);
        if (expected == reference.index.end()) {
            EXPECT_FALSE(found.has_value()) << "a " << Py_TYPE(probe)->tp_name << " outside the set";
        } else {
            EXPECT_EQ(found, expected->second);
        }
    }
}

std::vector<PyObject*> pointersOf(const py::list& list) {
    std::vector<PyObject*> pointers;
    for (py::handle item : list)
        pointers.push_back(item.ptr());
    return pointers;
}

// A heap of every kind the scanner meets: small and large objects (a tuple of 200 items, some of
// 400 so that a node has more leaves than a byte counts, and an
// instance of many slots are over pymalloc's 512 bytes, so malloc places them), lists, dicts,
// sets, frames, a generator, cells; objects listed twice; referents outside the set, tracked (a
// module-level dict, every other list of a run allocated side by side, so on the same pages as
// nodes) and untracked (ints, strings, a large bytes).
constexpr const char* kMixedHeap = R"(
import sys

class Slots:
    __slots__ = tuple(f"s{i}" for i in range(80))

def frame_cycle(payload):
    frame = sys._getframe()
    return frame

def closure_over(value):
    return lambda: value

def generator(items):
    yield from items

outside = {"tracked": "outside the set"}
big_bytes = b"x" * 4096
members = []
side_by_side = [[i] for i in range(3000)]
for i in range(0, len(side_by_side), 2):
    side_by_side[i].append(side_by_side[i + 1])  # a neighbour outside the set
    side_by_side[i].append(side_by_side[(i + 2) % len(side_by_side)])
    members.append(side_by_side[i])
for i in range(300):
    big = tuple([i, "text", outside, big_bytes] + [None] * (196 if i % 50 else 396))
    slots = Slots()
    for k in range(80):
        setattr(slots, f"s{k}", big if k % 7 == 0 else k * 1000 + i)
    record = {"key": i, "big": big, "slots": slots, "self": None, "set": {i, str(i)}}
    record["self"] = record
    cell_owner = closure_over(record)
    members += [big, slots, record, record["set"], cell_owner, cell_owner.__closure__[0]]
frames = [frame_cycle(members) for _ in range(20)]
gen = generator(members)
next(gen)
members += frames + [gen, outside["tracked"], 12345678]
members.append(members[:300])  # more edges than a byte counts
members += members[::5]  # listed twice
)";

TEST(ObjectGraph, BuildsTheSameGraphAsAHashMapOfEveryObject) {
    py::dict scope = testing::runPython(kMixedHeap);
    std::vector<PyObject*> objects = pointersOf(scope["members"]);
    ObjectGraph graph = ObjectGraph::build(objects);
    ReferenceGraph reference(objects);
    EXPECT_LT(reference.objects.size(), objects.size()); // some were listed twice
    expectSameGraph(graph, reference);

    // The lookups that matter: every referent, and objects on the nodes' pages that are no nodes.
    std::vector<PyObject*> probes = pointersOf(scope["side_by_side"]);
    for (NodeId node = 0; node < graph.size(); ++node) {
        for (const auto& leaf : graph.untrackedReferents(node))
            probes.push_back(leaf.object);
    }
    probes.push_back(scope["outside"].ptr());
    probes.push_back(scope.ptr());
    expectSameMembership(graph, reference, probes);
    size_t outside = std::count_if(probes.begin(), probes.end(),
                                   [&](PyObject* probe) { return !reference.index.count(probe); });
    EXPECT_GT(outside, 1000u);
}

TEST(ObjectGraph, BuildOverBorrowsTheArrayWithoutDuplicatesAndCopiesItWithThem) {
    // GIVEN the mixed heap, listed with some objects twice, and listed once each
    py::dict scope = testing::runPython(kMixedHeap);
    std::vector<PyObject*> twice = pointersOf(scope["members"]);
    ReferenceGraph reference(twice);
    std::vector<PyObject*> once = reference.objects;
    ASSERT_LT(once.size(), twice.size());
    // WHEN each is built over
    ObjectGraph overOnce = ObjectGraph::buildOver(once);
    ObjectGraph overTwice = ObjectGraph::buildOver(twice);
    // THEN both are the graph a hash map gives; without duplicates the nodes are the caller's
    // array itself (no copy), with them a copy of each object at its first place
    expectSameGraph(overOnce, reference);
    expectSameGraph(overTwice, reference);
    EXPECT_EQ(&overOnce.objects().front(), once.data());
    EXPECT_NE(&overTwice.objects().front(), twice.data());
    // ... and a graph moved elsewhere keeps its nodes (the copy moves with it)
    ObjectGraph moved = std::move(overTwice);
    expectSameGraph(moved, reference);
}

TEST(ObjectGraph, BuildsTheSameGraphAsAHashMapOnTheGarbageOfACollection) {
    testing::runPython(R"(
class Node:
    def __init__(self, parent):
        self.parent, self.children, self.attrs = parent, [], {"depth": 0, "name": "n" * 600}
        if parent is not None: parent.children.append(self)
for unit in range(400):
    nodes = [Node(None)]
    for i in range(1, 30):
        nodes.append(Node(nodes[(i - 1) // 3]))
    cache = {"root": nodes[0], "unit": unit, "blob": bytearray(700)}
    cache["cache"] = cache
)");
    py::list garbage = testing::collectGarbage();
    std::vector<PyObject*> objects = pointersOf(garbage);
    ASSERT_GT(objects.size(), 10'000u);
    ObjectGraph graph = ObjectGraph::build(objects);
    expectSameGraph(graph, ReferenceGraph(objects));
    testing::clearGarbage();
}

// A leaf's reference count is kept in 4 bytes. One that does not fit must read as the largest
// count, not as its low bits: here they would be 2, the references the garbage holds, and the
// footprint would take the shared bytearray for the garbage's own.
TEST(ObjectGraph, AReferenceCountPastFourBytesReadsAsTheLargestAndIsNotOwned) {
    py::dict scope = testing::runPython("shared = bytearray(1000)\nowners = [[shared], [shared]]\n"
                                        "near = bytearray(10)\nholder = [near]\n");
    PyObject* shared = scope["shared"].ptr();
    PyObject* near = scope["near"].ptr();
    std::vector<PyObject*> objects = pointersOf(scope["owners"]);
    objects.push_back(scope["holder"].ptr());
    const Py_ssize_t sharedCount = Py_REFCNT(shared), nearCount = Py_REFCNT(near);
    // Written directly: Py_SET_REFCNT of some versions makes a count this large immortal.
    shared->ob_refcnt = Py_ssize_t{UINT32_MAX} + 3;
    near->ob_refcnt = Py_ssize_t{UINT32_MAX} - 1; // the largest count kept as it is
    ObjectGraph graph = ObjectGraph::build(objects);
    const bool immortal = python::isImmortal(shared) || python::isImmortal(near);
    Footprint owners = footprint(graph, std::vector<NodeId>{0, 1});
    shared->ob_refcnt = sharedCount;
    near->ob_refcnt = nearCount;
    if (immortal) GTEST_SKIP() << "this version reads such a count as immortal";

    ASSERT_EQ(graph.untrackedReferents(0).size(), 1u);
    EXPECT_EQ(graph.untrackedReferents(0)[0].object, shared);
    EXPECT_EQ(graph.untrackedReferents(0)[0].refcount, PY_SSIZE_T_MAX);
    EXPECT_EQ(graph.untrackedReferents(1)[0].refcount, PY_SSIZE_T_MAX);
    ASSERT_EQ(graph.untrackedReferents(2).size(), 1u);
    EXPECT_EQ(graph.untrackedReferents(2)[0].refcount, Py_ssize_t{UINT32_MAX} - 1);
    EXPECT_EQ(owners.objects, 2); // the two lists, not what they share
}

TEST(ObjectGraph, FindsNothingInAnEmptyGraph) {
    std::vector<PyObject*> none;
    ObjectGraph graph = ObjectGraph::build(none);
    EXPECT_EQ(graph.size(), 0u);
    EXPECT_FALSE(graph.find(Py_None).has_value());
}

} // namespace
} // namespace leakgate::scanner

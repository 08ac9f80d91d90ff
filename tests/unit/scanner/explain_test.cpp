#include "lib/scanner/explain.h"

#include "tests/unit/python_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace leakgate::scanner {
namespace {

namespace py = pybind11;

// Collects with DEBUG_SAVEALL and explains the frame cycles in the garbage (left in gc.garbage).
std::vector<Finding> explainGarbageNow() {
    py::list garbage = testing::collectGarbage();
    std::vector<PyObject*> objects = testing::pointersOf(garbage);
    ObjectGraph graph = ObjectGraph::build(objects);
    Components components = Components::find(graph);
    return explainFrameCycles(graph, components).findings;
}

// Runs `code`, collects with DEBUG_SAVEALL and explains the frame cycles in the garbage.
std::vector<Finding> explainAfter(const std::string& code) {
    testing::runPython(code);
    auto findings = explainGarbageNow();
    testing::clearGarbage();
    return findings;
}

// explainAfter, with what the collection that frees the garbage then releases, as tracemalloc
// counts it: the oracle for the bytes a finding says its cycles pin.
std::pair<std::vector<Finding>, std::int64_t> explainAndRelease(const std::string& code) {
    py::module_ tracemalloc = py::module_::import("tracemalloc");
    tracemalloc.attr("start")();
    testing::runPython(code);
    auto findings = explainGarbageNow();
    auto traced = [&] {
        return tracemalloc.attr("get_traced_memory")()[py::int_(0)].cast<std::int64_t>();
    };
    std::int64_t before = traced();
    testing::clearGarbage();
    std::int64_t released = before - traced();
    tracemalloc.attr("stop")();
    return {std::move(findings), released};
}

bool pins(const Finding& finding, const std::string& function) {
    return std::any_of(finding.frames.begin(), finding.frames.end(),
                       [&](const FrameInfo& frame) { return frame.function.ends_with(function); });
}

TEST(ExplainFrameCycles, GivenADecoratorThatBindsItsOwnFrameThenItIsTheCulpritWithItsLocal) {
    auto findings = explainAfter("import inspect\n"
                                 "def kernel(fn):\n"
                                 "    cur_frame = inspect.currentframe()\n"
                                 "    caller = cur_frame.f_back\n"
                                 "    return fn\n"
                                 "def define():\n"
                                 "    @kernel\n"
                                 "    def k():\n"
                                 "        pass\n"
                                 "def holder():\n"
                                 "    big = bytearray(1 << 20)\n"
                                 "    define()\n"
                                 "holder()\n");
    ASSERT_EQ(findings.size(), 1u);
    const Finding& finding = findings[0];
    EXPECT_EQ(finding.kind, "frame-cycle");
    EXPECT_EQ(finding.frames.front().function, "kernel");
    EXPECT_EQ(finding.locals, std::vector<std::string>{"cur_frame"});
    EXPECT_TRUE(pins(finding, "define"));
    EXPECT_TRUE(pins(finding, "holder"));
    EXPECT_GE(finding.bytes, 1 << 20); // the bytearray up-stack goes with the cycle
    EXPECT_NE(finding.summary.find("holds its own frame"), std::string::npos);
    EXPECT_NE(finding.fix.find("eagerly"), std::string::npos);
}

TEST(ExplainFrameCycles, GivenACaughtExceptionKeptInALocalThenThePathGoesThroughTheTraceback) {
    auto findings = explainAfter("def risky():\n"
                                 "    try:\n"
                                 "        1 / 0\n"
                                 "    except ZeroDivisionError as e:\n"
                                 "        err = e\n"
                                 "    return None\n"
                                 "risky()\n");
    ASSERT_EQ(findings.size(), 1u);
    const Finding& finding = findings[0];
    EXPECT_EQ(finding.frames.front().function, "risky");
    EXPECT_EQ(finding.locals, std::vector<std::string>{"err"});
    std::vector<std::string> kinds;
    for (const auto& step : finding.path)
        kinds.push_back(step.kind);
    EXPECT_EQ(kinds, (std::vector<std::string>{"local", "__traceback__", "tb_frame"}));
    EXPECT_NE(finding.fix.find("TracebackException"), std::string::npos);
}

TEST(ExplainFrameCycles, GivenAFrameReachedOnlyThroughATracebackThenItIsListedWithHowItIsHeld) {
    auto findings = explainAfter("def job():\n"
                                 "    payload = bytearray(1 << 20)\n"
                                 "    raise RuntimeError('failed')\n"
                                 "def supervise():\n"
                                 "    try:\n"
                                 "        job()\n"
                                 "    except RuntimeError as e:\n"
                                 "        err = e\n"
                                 "    return None\n"
                                 "supervise()\n");
    ASSERT_EQ(findings.size(), 1u);
    const Finding& finding = findings[0];
    EXPECT_EQ(finding.frames.front().function, "supervise");
    EXPECT_EQ(finding.frames.front().heldBy, "");
    auto job = std::find_if(finding.frames.begin(), finding.frames.end(),
                            [](const FrameInfo& frame) { return frame.function == "job"; });
    ASSERT_NE(job, finding.frames.end())
        << "the frame that raised is pinned through tb_next -> tb_frame";
    EXPECT_EQ(job->heldBy, "tb_frame of `traceback` object");
    EXPECT_GE(finding.bytes, 1 << 20); // the job's payload goes with the cycle
}

TEST(ExplainFrameCycles, GivenPayloadsPinnedEveryWayThenTheBytesAreWhatOneCollectionReleases) {
    // Each pins 8 MiB: up the f_back chain, in the caller's f_locals (a dict the collector does not
    // track, named by the frame too), and in a frame reached only through a traceback.
    const char* cases[] = {
        "import sys\n"
        "def kernel():\n"
        "    me = sys._getframe()\n"
        "def user():\n"
        "    payload = bytearray(8 << 20)\n"
        "    kernel()\n"
        "user()\n",
        "import sys\n"
        "class Capture:\n"
        "    def __init__(self):\n"
        "        self.scope = sys._getframe(1).f_locals\n"
        "        self.frame = sys._getframe()\n"
        "def user():\n"
        "    payload = bytearray(8 << 20)\n"
        "    Capture()\n"
        "user()\n",
        "def job():\n"
        "    payload = bytearray(8 << 20)\n"
        "    raise RuntimeError('failed')\n"
        "def supervise():\n"
        "    try:\n"
        "        job()\n"
        "    except RuntimeError as e:\n"
        "        err = e\n"
        "supervise()\n",
    };
    for (const char* code : cases) {
        auto [findings, released] = explainAndRelease(code);
        ASSERT_EQ(findings.size(), 1u) << code;
        EXPECT_GE(released, 8 << 20) << code;
        // sys.getsizeof against what the allocator gave back: within 2%.
        EXPECT_NEAR(static_cast<double>(findings[0].bytes), static_cast<double>(released),
                    0.02 * released)
            << code;
    }
}

TEST(ExplainFrameCycles, GivenCyclesWithoutFramesThenNothingIsReported) {
    auto findings = explainAfter("class Node:\n"
                                 "    pass\n"
                                 "def build():\n"
                                 "    a, b = Node(), Node()\n"
                                 "    a.other, b.other = b, a\n"
                                 "build()\n");
    EXPECT_TRUE(findings.empty());
}

TEST(ExplainFrameCycles, GivenTheSameCulpritTwiceThenOneFindingCountsBoth) {
    auto findings = explainAfter("import sys\n"
                                 "def leaky():\n"
                                 "    me = sys._getframe()\n"
                                 "leaky()\n"
                                 "leaky()\n");
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_NE(findings[0].summary.find("(2 instances)"), std::string::npos);
}

TEST(ExplainFrameCycles, GivenAClosureOverItsOwnFrameThenTheCellIsNamed) {
    auto findings = explainAfter("import sys\n"
                                 "def outer():\n"
                                 "    here = sys._getframe()\n"
                                 "    def later():\n"
                                 "        return here\n"
                                 "    hook = later\n"
                                 "outer()\n");
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].frames.front().function, "outer");
    // Either path closes the cycle: the cell `here` directly, or `hook` through the closure.
    EXPECT_FALSE(findings[0].locals.empty());
}

TEST(Footprint, GivenObjectsOfManyKindsThenEachCountsAtItsSysGetsizeof) {
    // GIVEN tracked objects whose sizes come from different rules (object's own __sizeof__, a C
    // __sizeof__, one written in Python, a type object, a frame), whose untracked referents are
    // all held from elsewhere too (so no leaf belongs to them alone)
    py::dict scope =
        testing::runPython("import sys\n"
                           "name = 'shared ' * 3\n"
                           "class Point:\n"
                           "    pass\n"
                           "class Sized:\n"
                           "    def __sizeof__(self):\n"
                           "        return 1000\n"
                           "def here():\n"
                           "    local = name\n"
                           "    return sys._getframe()\n"
                           "point = Point()\n"
                           "point.x = name\n"
                           // 3.10 keeps an instance's dict as an object of its own: hold it
                           // from elsewhere too
                           "point_dict = point.__dict__\n"
                           "objects = [point, {name: point}, [name] * 100, (Sized(), point),\n"
                           "           type('Kind', (), {}), here(), {point}]\n");
    std::vector<PyObject*> pointers = testing::pointersOf(scope["objects"]);
    ObjectGraph graph = ObjectGraph::build(pointers);
    std::vector<NodeId> all;
    for (NodeId node = 0; node < graph.size(); ++node)
        all.push_back(node);
    // WHEN the footprint of all of them is taken
    Footprint total = footprint(graph, all);
    // THEN the bytes are the sum of sys.getsizeof over them, object for object
    py::object getsizeof = py::module_::import("sys").attr("getsizeof");
    std::int64_t expected = 0;
    for (PyObject* object : pointers)
        expected += getsizeof(py::handle(object)).cast<std::int64_t>();
    EXPECT_EQ(total.objects, static_cast<std::int64_t>(pointers.size()));
    EXPECT_EQ(total.bytes, expected);
}

TEST(Footprint, GivenListsDictsAndIntsOfEverySizeThenEachCountsAtItsSysGetsizeof) {
    // GIVEN lists, dicts and ints (sized without their __sizeof__ call once the first of the type
    // agrees with it) of many sizes, the first of each type the smallest; subclasses; an instance
    // dict that shares its keys; negative ints, zero, a bool
    py::dict scope = testing::runPython(R"(
class Sub(list): pass
class Mapping(dict): pass
class Instance:
    def __init__(self, i): self.a, self.b = i, i
# Nothing here is owned by one of the objects alone (no leaf adds its bytes), and no object
# refers to another: each one's footprint is itself.
shared = ("shared",)
keys = [f"k{i}" for i in range(50)]
objects = [[]] + [[shared] * n for n in (1, 5, 17, 100, 1000)] + [[None] * 7]
grown = []
for i in range(33): grown.append(None)
objects += [grown, Sub([None, shared]), {}, {"a": None}, dict.fromkeys(keys), Mapping(x=shared)]
objects += [Instance(shared).__dict__, 0, -1, 2**30 + 7, -2**62, 2**200, -(2**500), True]
)");
    std::vector<PyObject*> pointers = testing::pointersOf(scope["objects"]);
    ObjectGraph graph = ObjectGraph::build(pointers);
    py::object getsizeof = py::module_::import("sys").attr("getsizeof");
    // WHEN each is taken alone THEN its bytes are its sys.getsizeof
    for (NodeId node = 0; node < graph.size(); ++node) {
        NodeId only[] = {node};
        EXPECT_EQ(footprint(graph, only).bytes,
                  getsizeof(py::handle(graph.object(node))).cast<std::int64_t>())
            << py::repr(py::handle(graph.object(node))).cast<std::string>().substr(0, 60);
    }
}

TEST(Footprint, GivenLeavesOwnedByOneListThenEachCountsAtItsSysGetsizeof) {
    // GIVEN lists each holding leaves that nothing else holds: ints of several sizes (one of 84 KiB
    // in every other list), a float, an untracked dict, a string, bytes
    py::dict scope = testing::runPython(R"(
objects = [[10**(10 * i) + 7, float(i) + 0.5, {"a": i}, i * 1000003 + 1, f"text {i}" * i,
            bytes(range(i % 7)) + b"x" * i, 3**(400000 * (i % 2))] for i in range(1, 40)]
)");
    std::vector<PyObject*> pointers = testing::pointersOf(scope["objects"]);
    ObjectGraph graph = ObjectGraph::build(pointers);
    py::object getsizeof = py::module_::import("sys").attr("getsizeof");
    for (NodeId node = 0; node < graph.size(); ++node) {
        // WHEN the footprint of one list is taken
        NodeId only[] = {node};
        Footprint pinned = footprint(graph, only);
        // THEN its bytes are its own sys.getsizeof and its owned leaves' (those it holds alone)
        py::list list = py::reinterpret_borrow<py::list>(graph.object(node));
        std::int64_t expected = getsizeof(list).cast<std::int64_t>();
        std::int64_t owned = 1;
        for (py::handle item : list) {
            if (Py_REFCNT(item.ptr()) != 1) continue;
            expected += getsizeof(item).cast<std::int64_t>();
            ++owned;
        }
        EXPECT_GE(owned, 6);
        EXPECT_EQ(pinned.objects, owned) << "list " << node;
        EXPECT_EQ(pinned.bytes, expected) << "list " << node;
    }
}

TEST(Footprints, GivenManySetsOverARandomHeapThenEachIsWhatFootprintGivesItAlone) {
    // GIVEN a random heap: containers that refer to each other (cycles and chains), leaves shared
    // by some and owned by one (strings, big ints, bytes), untracked dicts and tuples that hold
    // leaves of their own, and a payload on some objects
    py::dict scope = testing::runPython(R"(
import random
rng = random.Random(20261205)
class Node:
    pass
nodes = []
for i in range(600):
    kind = rng.randrange(4)
    nodes.append([] if kind == 0 else {} if kind == 1 else Node() if kind == 2 else [None])
shared_leaves = [f"shared-{i}" * 3 for i in range(40)] + [10**30 + i for i in range(40)]
for i, node in enumerate(nodes):
    for _ in range(rng.randrange(4)):
        target = rng.choice(nodes) if rng.random() < 0.7 else nodes[min(len(nodes) - 1, i + 1)]
        leaf = rng.choice(shared_leaves) if rng.random() < 0.5 else f"own-{i}-{rng.random()}"
        untracked = {"a": bytes(rng.randrange(1, 300)), "b": leaf}  # a dict of atomics: untracked
        if isinstance(node, list):
            node.append(target); node.append(leaf)
            if rng.random() < 0.3: node.append(untracked)
        elif isinstance(node, dict):
            node[f"k{len(node)}"] = target; node[leaf] = 2**70 + i
            if rng.random() < 0.3: node[f"u{len(node)}"] = untracked
        else:
            setattr(node, f"a{len(vars(node))}", target); setattr(node, f"l{len(vars(node))}", leaf)
# leaves that two or three containers share and nothing else holds: owned by a footprint only
# when it reaches every one of their holders
lists = [node for node in nodes if isinstance(node, list)]
for i in range(300):
    leaf = f"pair-{i}-" + "x" * rng.randrange(50)
    for _ in range(2 + i % 2):
        rng.choice(lists).append(leaf)
del leaf
objects = list(nodes)
)");
    std::vector<PyObject*> pointers = testing::pointersOf(scope["objects"]);
    ObjectGraph graph = ObjectGraph::build(pointers);
    Components components = Components::find(graph);
    Payloads payloads;
    for (NodeId node = 0; node < graph.size(); node += 7)
        payloads[graph.object(node)] = {node % 2 ? "device" : "torch", 1000 + node};
    // ... and 19 sets of sources (three walks of 8): single nodes, a few, overlapping ones, empty
    std::vector<std::vector<NodeId>> sets;
    std::uint32_t state = 12345;
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (int set = 0; set < 19; ++set) {
        std::vector<NodeId> sources;
        const int size = set == 7 ? 0 : 1 + static_cast<int>(next() % (set % 3 == 0 ? 1 : 12));
        for (int i = 0; i < size; ++i)
            sources.push_back(static_cast<NodeId>(next() % graph.size()));
        sets.push_back(sources);
    }
    // WHEN their footprints are taken in one call
    std::vector<Footprint> together = footprints(graph, components, sets, &payloads);
    // THEN each is the footprint of its set alone: objects, bytes and payloads
    ASSERT_EQ(together.size(), sets.size());
    std::int64_t reached = 0;
    for (size_t set = 0; set < sets.size(); ++set) {
        Footprint alone = footprint(graph, sets[set], nullptr, &payloads);
        EXPECT_EQ(together[set].objects, alone.objects) << "set " << set;
        EXPECT_EQ(together[set].bytes, alone.bytes) << "set " << set;
        EXPECT_EQ(together[set].payloadBytes, alone.payloadBytes) << "set " << set;
        reached += alone.objects;
    }
    // (and the heap is one the sets cross: most reach more than their sources)
    EXPECT_GT(reached, 19 * 50);
}

} // namespace
} // namespace leakgate::scanner

#include "lib/scanner/object_graph.h"

#include "lib/base/check.h"
#include "lib/python/compat.h"

#include <algorithm>
#include <bit>

namespace leakgate::scanner {
namespace {

size_t hashPointer(PyObject* object) {
    // Objects are 16-byte aligned; mix the rest with a Fibonacci multiplier.
    return static_cast<size_t>((reinterpret_cast<std::uintptr_t>(object) >> 4) * 0x9E3779B97F4A7C15ull);
}

} // namespace

// The walk is memory-bound: every referent is looked up in the index, a random access into a
// table of 32 bytes per object, and an untracked referent is read too. So the nodes are walked in
// blocks: the traversal of a block only records its referents and prefetches their index slots
// and headers, and the lookups run after it, when the cache lines are on their way.
struct GraphBuilder {
    static constexpr size_t kBlock = 32;

    ObjectGraph& graph;
    std::vector<PyObject*> pending; // the block's referents, in visit order
    std::vector<std::uint32_t> ends;

    static int visit(PyObject* referent, void* arg) {
        if (referent == nullptr) return 0;
        auto* self = static_cast<GraphBuilder*>(arg);
        __builtin_prefetch(&self->graph.index_[hashPointer(referent) & self->graph.indexMask_]);
        __builtin_prefetch(referent);
        self->pending.push_back(referent);
        return 0;
    }

    void resolve(PyObject* referent) {
        if (auto node = graph.find(referent)) {
            graph.edges_.push_back(*node);
        } else if (!python::isGcTracked(referent)) {
            graph.leaves_.push_back({referent, Py_REFCNT(referent)});
        }
    }

    void walk() {
        const size_t count = graph.objects_.size();
        for (size_t start = 0; start < count; start += kBlock) {
            const size_t end = std::min(count, start + kBlock);
            pending.clear();
            ends.clear();
            for (size_t node = start; node < end; ++node) {
                if (node + kBlock < count) __builtin_prefetch(graph.objects_[node + kBlock]);
                PyObject* object = graph.objects_[node];
                traverseproc traverse = Py_TYPE(object)->tp_traverse;
                if (PyObject_IS_GC(object) && traverse != nullptr) traverse(object, &visit, this);
                ends.push_back(static_cast<std::uint32_t>(pending.size()));
            }
            size_t next = 0;
            for (size_t node = start; node < end; ++node) {
                graph.edgeOffsets_.push_back(static_cast<std::uint32_t>(graph.edges_.size()));
                graph.leafOffsets_.push_back(static_cast<std::uint32_t>(graph.leaves_.size()));
                for (; next < ends[node - start]; ++next)
                    resolve(pending[next]);
            }
        }
    }
};

std::optional<NodeId> ObjectGraph::find(PyObject* object) const {
    for (size_t slot = hashPointer(object) & indexMask_;; slot = (slot + 1) & indexMask_) {
        if (index_[slot].key == object) return index_[slot].node;
        if (index_[slot].key == nullptr) return std::nullopt;
    }
}

ObjectGraph ObjectGraph::build(std::span<PyObject* const> objects) {
    LEAKGATE_CHECK(objects.size() < UINT32_MAX);
    ObjectGraph graph;
    graph.objects_.reserve(objects.size());
    size_t capacity = std::bit_ceil(std::max<size_t>(16, objects.size() * 2));
    graph.index_.assign(capacity, {});
    graph.indexMask_ = capacity - 1;
    constexpr size_t kAhead = 16;
    for (size_t i = 0; i < objects.size(); ++i) {
        if (i + kAhead < objects.size())
            __builtin_prefetch(&graph.index_[hashPointer(objects[i + kAhead]) & graph.indexMask_], 1);
        PyObject* object = objects[i];
        size_t slot = hashPointer(object) & graph.indexMask_;
        while (graph.index_[slot].key != nullptr && graph.index_[slot].key != object) {
            slot = (slot + 1) & graph.indexMask_;
        }
        if (graph.index_[slot].key == object) continue; // listed twice: one node
        graph.index_[slot] = {object, static_cast<NodeId>(graph.objects_.size())};
        graph.objects_.push_back(object);
    }

    const size_t count = graph.objects_.size();
    graph.edgeOffsets_.reserve(count + 1);
    graph.leafOffsets_.reserve(count + 1);
    graph.edges_.reserve(count * 2);
    graph.leaves_.reserve(count);
    GraphBuilder builder{graph, {}, {}};
    builder.pending.reserve(GraphBuilder::kBlock * 8);
    builder.walk();
    LEAKGATE_CHECK(graph.edges_.size() < UINT32_MAX);
    graph.edgeOffsets_.push_back(static_cast<std::uint32_t>(graph.edges_.size()));
    graph.leafOffsets_.push_back(static_cast<std::uint32_t>(graph.leaves_.size()));
    return graph;
}

std::uint32_t ObjectGraph::inDegree(NodeId node) const {
    if (inDegree_.empty() && size() > 0) {
        inDegree_.assign(size(), 0);
        for (NodeId target : edges_)
            ++inDegree_[target];
    }
    return inDegree_[node];
}

ObjectGraph::Reverse ObjectGraph::reverse() const {
    Reverse reversed;
    reversed.offsets.assign(size() + 1, 0);
    for (NodeId target : edges_)
        ++reversed.offsets[target + 1];
    for (size_t node = 0; node < size(); ++node)
        reversed.offsets[node + 1] += reversed.offsets[node];
    reversed.sources.resize(edges_.size());
    std::vector<std::uint32_t> cursor(reversed.offsets.begin(), reversed.offsets.end() - 1);
    for (NodeId source = 0; source < size(); ++source) {
        for (NodeId target : successors(source))
            reversed.sources[cursor[target]++] = source;
    }
    return reversed;
}

} // namespace leakgate::scanner

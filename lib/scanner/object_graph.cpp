#include "lib/scanner/object_graph.h"

#include "lib/check.h"
#include "lib/python/compat.h"

#include <bit>

namespace leakgate::scanner {
namespace {

size_t hashPointer(PyObject* object) {
    // Objects are 16-byte aligned; mix the rest with a Fibonacci multiplier.
    return static_cast<size_t>((reinterpret_cast<std::uintptr_t>(object) >> 4) * 0x9E3779B97F4A7C15ull);
}

} // namespace

struct GraphBuilder {
    ObjectGraph& graph;
    NodeId current = 0;

    static int visit(PyObject* referent, void* arg) {
        auto* self = static_cast<GraphBuilder*>(arg);
        if (referent == nullptr) return 0;
        if (auto node = self->graph.find(referent)) {
            self->graph.edges_.push_back(*node);
            ++self->graph.inDegree_[*node];
        } else if (!python::isGcTracked(referent)) {
            self->graph.leaves_.push_back({referent, Py_REFCNT(referent)});
        }
        return 0;
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
    for (PyObject* object : objects) {
        size_t slot = hashPointer(object) & graph.indexMask_;
        while (graph.index_[slot].key != nullptr && graph.index_[slot].key != object) {
            slot = (slot + 1) & graph.indexMask_;
        }
        if (graph.index_[slot].key == object) continue; // listed twice: one node
        graph.index_[slot] = {object, static_cast<NodeId>(graph.objects_.size())};
        graph.objects_.push_back(object);
    }

    const size_t count = graph.objects_.size();
    graph.inDegree_.assign(count, 0);
    graph.edgeOffsets_.reserve(count + 1);
    graph.leafOffsets_.reserve(count + 1);
    graph.edges_.reserve(count * 3);
    GraphBuilder builder{graph};
    for (NodeId node = 0; node < count; ++node) {
        graph.edgeOffsets_.push_back(static_cast<std::uint32_t>(graph.edges_.size()));
        graph.leafOffsets_.push_back(static_cast<std::uint32_t>(graph.leaves_.size()));
        PyObject* object = graph.objects_[node];
        traverseproc traverse = Py_TYPE(object)->tp_traverse;
        if (PyObject_IS_GC(object) && traverse != nullptr) {
            builder.current = node;
            traverse(object, &GraphBuilder::visit, &builder);
        }
    }
    LEAKGATE_CHECK(graph.edges_.size() < UINT32_MAX);
    graph.edgeOffsets_.push_back(static_cast<std::uint32_t>(graph.edges_.size()));
    graph.leafOffsets_.push_back(static_cast<std::uint32_t>(graph.leaves_.size()));
    return graph;
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

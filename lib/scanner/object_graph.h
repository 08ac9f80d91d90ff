// The reference graph among a fixed set of Python objects, built by calling each object's
// tp_traverse, the same walk the cyclic collector does. Nodes are compact ids (0..size-1) and the
// edges are stored once, in one array (CSR), so a graph of 1e6 objects costs a few arrays.
#pragma once

#include <Python.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace leakgate::scanner {

using NodeId = std::uint32_t;

class ObjectGraph {
  public:
    // The objects are borrowed: the caller keeps every one alive while the graph is in use.
    // Must run with the GIL held and without running Python code in between: the walk assumes
    // the heap does not change under it.
    static ObjectGraph build(std::span<PyObject* const> objects);

    size_t size() const { return objects_.size(); }
    PyObject* object(NodeId node) const { return objects_[node]; } // Borrowed reference
    std::optional<NodeId> find(PyObject* object) const;

    std::span<const NodeId> successors(NodeId node) const {
        return {edges_.data() + edgeOffsets_[node], edges_.data() + edgeOffsets_[node + 1]};
    }
    // A referent outside the set that the collector does not track (strings, bytes, numbers,
    // untracked containers): data a node owns but that can never be garbage by itself. Its
    // reference count is read when the graph is built, before labelling can add references.
    struct Leaf {
        PyObject* object; // Borrowed reference
        Py_ssize_t refcount;
    };
    std::span<const Leaf> untrackedReferents(NodeId node) const {
        return {leaves_.data() + leafOffsets_[node], leaves_.data() + leafOffsets_[node + 1]};
    }
    // How many references to the node come from nodes of the graph (counted on first use).
    std::uint32_t inDegree(NodeId node) const;
    size_t edgeCount() const { return edges_.size(); }

    // The reversed edges, built on demand (retention paths walk back from a frame to a root).
    struct Reverse {
        std::vector<std::uint32_t> offsets;
        std::vector<NodeId> sources;
        std::span<const NodeId> predecessors(NodeId node) const {
            return {sources.data() + offsets[node], sources.data() + offsets[node + 1]};
        }
    };
    Reverse reverse() const;

  private:
    // Open addressing on the pointer value: no allocation per object, no Python calls.
    struct Slot {
        PyObject* key = nullptr;
        NodeId node = 0;
    };
    std::vector<Slot> index_;
    size_t indexMask_ = 0;

    std::vector<PyObject*> objects_;
    std::vector<std::uint32_t> edgeOffsets_;
    std::vector<NodeId> edges_;
    std::vector<std::uint32_t> leafOffsets_;
    std::vector<Leaf> leaves_;
    mutable std::vector<std::uint32_t> inDegree_; // filled by the first inDegree()

    friend struct GraphBuilder;
};

} // namespace leakgate::scanner

// The reference graph among a fixed set of Python objects, built by calling each object's
// tp_traverse, the same walk the cyclic collector does. Nodes are compact ids (0..size-1) and the
// edges are stored once, in one array (CSR), so a graph of 1e6 objects costs a few arrays.
#pragma once

#include <Python.h>

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace leakgate::scanner {

using NodeId = std::uint32_t;

class ObjectGraph {
  public:
    // The objects are borrowed: the caller keeps every one alive while the graph is in use.
    // Must run with the GIL held and without running Python code in between: the walk assumes
    // the heap does not change under it. An object listed twice is one node.
    static ObjectGraph build(std::span<PyObject* const> objects);
    // The same, borrowing the array too (no copy of its pointers, 8 bytes per object at a scan's
    // peak) when no object is listed twice: the caller keeps `objects` alive and unchanged while
    // the graph is in use.
    static ObjectGraph buildOver(std::span<PyObject* const> objects);

    ObjectGraph(ObjectGraph&&) = default;
    ObjectGraph& operator=(ObjectGraph&&) = default;
    ObjectGraph(const ObjectGraph&) = delete; // objects_ may point into ownedObjects_
    ObjectGraph& operator=(const ObjectGraph&) = delete;

    size_t size() const { return objects_.size(); }
    PyObject* object(NodeId node) const { return objects_[node]; }  // Borrowed reference
    std::span<PyObject* const> objects() const { return objects_; } // by node
    std::optional<NodeId> find(PyObject* object) const;

    std::span<const NodeId> successors(NodeId node) const {
        const auto [first, end] = edgeRuns_.of(node);
        return {edges_.data() + first, edges_.data() + end};
    }
    // A referent outside the set that the collector does not track (strings, bytes, numbers,
    // untracked containers): data a node owns but that can never be garbage by itself. Its
    // reference count is read when the graph is built, before labelling can add references.
    struct Leaf {
        PyObject* object; // Borrowed reference
        Py_ssize_t refcount;
    };
    // A node's leaves, read as Leaf values. They are kept in two arrays, the pointers and their
    // reference counts in 4 bytes (12 bytes a leaf, not 16: at 1e6 objects of garbage there are
    // about 850,000 leaves). A count that does not fit is kept as UINT32_MAX and read back as
    // PY_SSIZE_T_MAX; that changes no finding: a count is only compared with the references
    // the footprint finds to the leaf, and to reach UINT32_MAX of them it would have to find more
    // references than a graph holds leaves (fewer than UINT32_MAX) plus 4e9 more in untracked
    // containers (32 GiB of pointers). The counts that decide a finding are the small ones. On
    // 3.12 and later every immortal object's count is UINT32_MAX, so it too reads as
    // PY_SSIZE_T_MAX; immortality is asked of the object (python::isImmortal), never of the count.
    class Leaves {
      public:
        struct Iterator {
            const ObjectGraph* graph;
            std::uint32_t leaf;
            Leaf operator*() const { return graph->leaf(leaf); }
            Iterator& operator++() {
                ++leaf;
                return *this;
            }
            bool operator==(const Iterator& other) const { return leaf == other.leaf; }
        };
        size_t size() const { return end_ - first_; }
        bool empty() const { return end_ == first_; }
        Leaf operator[](size_t i) const { return graph_->leaf(first_ + static_cast<std::uint32_t>(i)); }
        // The leaf's index in the graph (for leaf(), leafObject()).
        std::uint32_t index(size_t i) const { return first_ + static_cast<std::uint32_t>(i); }
        Iterator begin() const { return {graph_, first_}; }
        Iterator end() const { return {graph_, end_}; }

      private:
        friend class ObjectGraph;
        Leaves(const ObjectGraph* graph, std::uint32_t first, std::uint32_t end)
            : graph_(graph), first_(first), end_(end) {}
        const ObjectGraph* graph_;
        std::uint32_t first_, end_;
    };
    Leaves untrackedReferents(NodeId node) const {
        const auto [first, end] = leafRuns_.of(node);
        return {this, first, end};
    }
    // Every leaf of the graph by its index: the leaves of node n, then those of node n + 1.
    Leaf leaf(std::uint32_t index) const {
        const std::uint32_t refcount = leafRefcounts_[index];
        return {leafObjects_[index], refcount == kRefcountOverflow ? PY_SSIZE_T_MAX : refcount};
    }
    PyObject* leafObject(std::uint32_t index) const { return leafObjects_[index]; }
    size_t leafCount() const { return leafObjects_.size(); }
    // How many references to the node come from nodes of the graph (counted on first use).
    std::uint32_t inDegree(NodeId node) const;
    size_t edgeCount() const { return edges_.size(); }
    // Whether the node is a frame object: the explanation looks for frames among a component's
    // members, and the walk has each node's type at hand, where reading it again later is a
    // cache miss per member.
    bool isFrame(NodeId node) const { return frames_[node]; }

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
    // The index, without a hash of every object: an object is found by the 4 KiB of address space
    // it starts in (its page: a quarter of a 64-bit build's 16 KiB pymalloc pool; any address has
    // one, pymalloc's or not) and by its 16-byte slot there. Two live objects never start in the
    // same slot, since none is smaller than a PyObject (16 bytes), so one bit per slot says
    // exactly whether an address is a node: there is no key to compare. Nodes are ranked by page,
    // then slot; ids_[rank] is the node's id. A heap of small objects has about 37 on a page, so
    // the pages and their table take about 3 bytes per object and stay in the cache where a table
    // of objects (32 bytes per object before) could not: a referent is looked up with a read of
    // its page's key, of the page and of ids_.
    static constexpr unsigned kSlotShift = 4;
    static constexpr unsigned kPageShift = 12;
    static constexpr unsigned kSlotsPerPage = 1u << (kPageShift - kSlotShift);
    static_assert(sizeof(PyObject) >= (size_t{1} << kSlotShift), "two objects could share a slot");
    struct PageKey {
        std::uintptr_t number = 0; // address >> kPageShift; 0 marks an empty entry (no object there)
        std::uint32_t page = 0;    // into pages_
    };
    struct Page {
        std::uint32_t firstRank = 0;
        std::uint8_t wordRank[4] = {}; // nodes on this page in the words before each word
        std::uint64_t slots[kSlotsPerPage / 64] = {};
    };
    static std::uintptr_t pageNumber(PyObject* object) {
        return reinterpret_cast<std::uintptr_t>(object) >> kPageShift;
    }
    static unsigned slotOf(PyObject* object) {
        return (reinterpret_cast<std::uintptr_t>(object) >> kSlotShift) & (kSlotsPerPage - 1);
    }
    // The entry of pageKeys_ that holds `number`, or the empty one where it would go.
    size_t keyEntry(std::uintptr_t number) const;
    // The page `object` starts in, or nullptr (then it is no node).
    const Page* findPage(PyObject* object) const;
    // Whether `object` is a node of `page`; its rank if so.
    static bool rankOf(const Page& page, PyObject* object, std::uint32_t& rank);
    Page& insertPage(std::uintptr_t number);

    std::vector<PageKey> pageKeys_; // open addressing on the page number, at most half full
    size_t pageMask_ = 0;
    std::vector<Page> pages_;
    std::vector<NodeId> ids_; // by rank

    ObjectGraph() = default;
    static ObjectGraph build(std::span<PyObject* const> objects, bool borrow);

    std::span<PyObject* const> objects_; // by node: the caller's array, or ownedObjects_
    std::vector<PyObject*> ownedObjects_;
    // Where each node's edges, or leaves, start in their array, in 1.5 bytes a node where an
    // offset per node took 4 (two such arrays were 8 bytes per object at a scan's peak): the
    // first entry of every 8th node, and each node's count in a byte. A node with kMany or more
    // (a large dict of strings, a long list) has its count in many_, which few nodes need.
    class Runs {
      public:
        void reserve(size_t nodes);
        void add(NodeId node, size_t first, size_t count); // node after node, from 0
        std::pair<std::uint32_t, std::uint32_t> of(NodeId node) const {
            std::uint32_t first = blocks_[node >> kBlockShift];
            for (NodeId before = node & ~(kBlock - 1); before < node; ++before)
                first += countOf(before);
            return {first, first + countOf(node)};
        }

      private:
        static constexpr unsigned kBlockShift = 3;
        static constexpr NodeId kBlock = NodeId{1} << kBlockShift;
        static constexpr std::uint8_t kMany = UINT8_MAX;
        std::uint32_t countOf(NodeId node) const {
            const std::uint8_t count = counts_[node];
            return count != kMany ? count : manyOf(node);
        }
        std::uint32_t manyOf(NodeId node) const;
        std::vector<std::uint32_t> blocks_; // the first entry of nodes 0, 8, 16...
        std::vector<std::uint8_t> counts_;
        std::vector<std::pair<NodeId, std::uint32_t>> many_; // by node: (node, count)
    };
    Runs edgeRuns_;
    std::vector<NodeId> edges_;
    static constexpr std::uint32_t kRefcountOverflow = UINT32_MAX;
    Runs leafRuns_;
    std::vector<PyObject*> leafObjects_;
    std::vector<std::uint32_t> leafRefcounts_; // saturating at kRefcountOverflow

    std::vector<bool> frames_;
    mutable std::vector<std::uint32_t> inDegree_; // filled by the first inDegree()

    friend struct GraphBuilder;
};

} // namespace leakgate::scanner

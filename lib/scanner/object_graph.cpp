#include "lib/scanner/object_graph.h"

#include "lib/base/check.h"
#include "lib/python/compat.h"

#include <algorithm>
#include <bit>
#include <unordered_set>

namespace leakgate::scanner {
namespace {

size_t hashPage(std::uintptr_t number) {
    return static_cast<size_t>(number * 0x9E3779B97F4A7C15ull);
}

// std::popcount is a library call on a build for baseline x86-64 (no POPCNT instruction); the
// walk counts bits for every reference, so this is inline.
unsigned countBits(std::uint64_t word) {
#ifdef __POPCNT__
    return static_cast<unsigned>(std::popcount(word));
#else
    word -= (word >> 1) & 0x5555555555555555ull;
    word = (word & 0x3333333333333333ull) + ((word >> 2) & 0x3333333333333333ull);
    word = (word + (word >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return static_cast<unsigned>((word * 0x0101010101010101ull) >> 56);
#endif
}

} // namespace

size_t ObjectGraph::keyEntry(std::uintptr_t number) const {
    for (size_t entry = hashPage(number) & pageMask_;; entry = (entry + 1) & pageMask_) {
        if (pageKeys_[entry].number == number || pageKeys_[entry].number == 0) return entry;
    }
}

const ObjectGraph::Page* ObjectGraph::findPage(PyObject* object) const {
    if (pageKeys_.empty()) return nullptr; // a graph not built
    const PageKey& key = pageKeys_[keyEntry(pageNumber(object))];
    return key.number == 0 ? nullptr : &pages_[key.page];
}

bool ObjectGraph::rankOf(const Page& page, PyObject* object, std::uint32_t& rank) {
    const unsigned slot = slotOf(object);
    const std::uint64_t word = page.slots[slot / 64];
    const std::uint64_t bit = std::uint64_t{1} << (slot % 64);
    rank = page.firstRank + page.wordRank[slot / 64] + countBits(word & (bit - 1));
    return (word & bit) != 0;
}

ObjectGraph::Page& ObjectGraph::insertPage(std::uintptr_t number) {
    if ((pages_.size() + 1) * 2 > pageKeys_.size()) {
        // Grow: the table stays at most half full, so a probe, a miss too, ends within a line.
        std::vector<PageKey> old(std::max<size_t>(16, pageKeys_.size() * 2));
        old.swap(pageKeys_);
        pageMask_ = pageKeys_.size() - 1;
        for (const PageKey& key : old) {
            if (key.number != 0) pageKeys_[keyEntry(key.number)] = key;
        }
    }
    PageKey& key = pageKeys_[keyEntry(number)];
    if (key.number == 0) {
        key = {number, static_cast<std::uint32_t>(pages_.size())};
        pages_.emplace_back();
    }
    return pages_[key.page];
}

std::optional<NodeId> ObjectGraph::find(PyObject* object) const {
    const Page* page = findPage(object);
    std::uint32_t rank = 0;
    if (page == nullptr || !rankOf(*page, object, rank)) return std::nullopt;
    return ids_[rank];
}

// The walk is memory-bound: the traversal reads every node, and each referent is looked up (its
// page, then its id) or, outside the set, read (an untracked one is a leaf). So the nodes are
// walked in blocks: the traversal of a block only records its referents and prefetches their
// pages; a second pass over the block's referents reads the pages and prefetches the ids, or the
// headers of referents outside the set; the third records edges and leaves.
struct GraphBuilder {
    static constexpr size_t kBlock = 32;
    static constexpr std::uint32_t kOutside = UINT32_MAX;

    ObjectGraph& graph;
    std::vector<PyObject*> pending;   // the block's referents, in visit order
    std::vector<std::uint32_t> ranks; // of each pending referent, or kOutside
    std::vector<std::uint32_t> ends;

    static int visit(PyObject* referent, void* arg) {
        if (referent == nullptr) return 0;
        auto* self = static_cast<GraphBuilder*>(arg);
        const ObjectGraph& graph = self->graph;
        __builtin_prefetch(
            &graph.pageKeys_[hashPage(ObjectGraph::pageNumber(referent)) & graph.pageMask_]);
        self->pending.push_back(referent);
        return 0;
    }

    void rank() {
        ranks.resize(pending.size());
        for (size_t i = 0; i < pending.size(); ++i) {
            PyObject* referent = pending[i];
            const ObjectGraph::Page* page = graph.findPage(referent);
            std::uint32_t rank = 0;
            if (page != nullptr && ObjectGraph::rankOf(*page, referent, rank)) {
                ranks[i] = rank;
                __builtin_prefetch(&graph.ids_[rank]);
            } else {
                ranks[i] = kOutside;
                __builtin_prefetch(referent);
            }
        }
    }

    void resolve(size_t i) {
        if (ranks[i] != kOutside) {
            graph.edges_.push_back(graph.ids_[ranks[i]]);
            return;
        }
        PyObject* referent = pending[i];
        if (!python::isGcTracked(referent)) {
            const Py_ssize_t refcount = Py_REFCNT(referent);
            graph.leafObjects_.push_back(referent);
            graph.leafRefcounts_.push_back(refcount < Py_ssize_t{ObjectGraph::kRefcountOverflow}
                                               ? static_cast<std::uint32_t>(refcount)
                                               : ObjectGraph::kRefcountOverflow);
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
                if (PyFrame_Check(object)) graph.frames_[node] = true;
                traverseproc traverse = Py_TYPE(object)->tp_traverse;
                if (traverse != nullptr && python::hasGcHeader(object)) traverse(object, &visit, this);
                ends.push_back(static_cast<std::uint32_t>(pending.size()));
            }
            rank();
            size_t next = 0;
            for (size_t node = start; node < end; ++node) {
                const size_t firstEdge = graph.edges_.size();
                const size_t firstLeaf = graph.leafObjects_.size();
                for (; next < ends[node - start]; ++next)
                    resolve(next);
                graph.edgeRuns_.add(static_cast<NodeId>(node), firstEdge,
                                    graph.edges_.size() - firstEdge);
                graph.leafRuns_.add(static_cast<NodeId>(node), firstLeaf,
                                    graph.leafObjects_.size() - firstLeaf);
            }
        }
    }
};

ObjectGraph ObjectGraph::build(std::span<PyObject* const> objects) {
    return build(objects, false);
}

ObjectGraph ObjectGraph::buildOver(std::span<PyObject* const> objects) {
    return build(objects, true);
}

ObjectGraph ObjectGraph::build(std::span<PyObject* const> objects, bool borrow) {
    LEAKGATE_CHECK(objects.size() < UINT32_MAX);
    ObjectGraph graph;
    // Sized for 32 objects a page; a heap of larger objects grows it.
    graph.pageKeys_.resize(std::bit_ceil(std::max<size_t>(16, objects.size() / 16)));
    graph.pageMask_ = graph.pageKeys_.size() - 1;
    graph.pages_.reserve(graph.pageKeys_.size() / 2);
    constexpr size_t kAhead = 16;
    bool listedTwice = false;
    for (size_t i = 0; i < objects.size(); ++i) {
        if (i + kAhead < objects.size()) {
            __builtin_prefetch(
                &graph.pageKeys_[hashPage(pageNumber(objects[i + kAhead])) & graph.pageMask_]);
        }
        PyObject* object = objects[i];
        Page& page = graph.insertPage(pageNumber(object));
        const unsigned slot = slotOf(object);
        const std::uint64_t bit = std::uint64_t{1} << (slot % 64);
        if (page.slots[slot / 64] & bit) { // listed twice: one node
            listedTwice = true;
            continue;
        }
        page.slots[slot / 64] |= bit;
    }
    if (!listedTwice && borrow) {
        graph.objects_ = objects;
    } else {
        // Each object once, at its first place.
        graph.ownedObjects_.reserve(objects.size());
        if (!listedTwice) {
            graph.ownedObjects_.assign(objects.begin(), objects.end());
        } else {
            std::unordered_set<PyObject*> listed;
            for (PyObject* object : objects) {
                if (listed.insert(object).second) graph.ownedObjects_.push_back(object);
            }
        }
        graph.objects_ = graph.ownedObjects_;
    }
    // Ranks: pages in the order they were first met, slots in address order within a page.
    std::uint32_t rank = 0;
    for (Page& page : graph.pages_) {
        page.firstRank = rank;
        std::uint32_t onPage = 0;
        for (size_t word = 0; word < std::size(page.slots); ++word) {
            page.wordRank[word] = static_cast<std::uint8_t>(onPage);
            onPage += countBits(page.slots[word]);
        }
        rank += onPage;
    }
    const size_t count = graph.objects_.size();
    LEAKGATE_CHECK(rank == count);
    graph.ids_.resize(count);
    for (size_t node = 0; node < count; ++node) {
        std::uint32_t nodeRank = 0;
        bool found = rankOf(*graph.findPage(graph.objects_[node]), graph.objects_[node], nodeRank);
        LEAKGATE_CHECK(found);
        graph.ids_[nodeRank] = static_cast<NodeId>(node);
    }

    graph.frames_.assign(count, false);
    graph.edgeRuns_.reserve(count);
    graph.leafRuns_.reserve(count);
    graph.edges_.reserve(count * 2);
    graph.leafObjects_.reserve(count);
    graph.leafRefcounts_.reserve(count);
    GraphBuilder builder{graph, {}, {}, {}};
    builder.pending.reserve(GraphBuilder::kBlock * 8);
    builder.ranks.reserve(GraphBuilder::kBlock * 8);
    builder.walk();
    LEAKGATE_CHECK(graph.edges_.size() < UINT32_MAX);
    LEAKGATE_CHECK(graph.leafObjects_.size() < UINT32_MAX); // see Leaves: fewer than any saturated count
    return graph;
}

void ObjectGraph::Runs::reserve(size_t nodes) {
    blocks_.reserve(nodes / kBlock + 1);
    counts_.reserve(nodes);
}

void ObjectGraph::Runs::add(NodeId node, size_t first, size_t count) {
    if (node % kBlock == 0) blocks_.push_back(static_cast<std::uint32_t>(first));
    if (count < kMany) {
        counts_.push_back(static_cast<std::uint8_t>(count));
    } else {
        counts_.push_back(kMany);
        many_.emplace_back(node, static_cast<std::uint32_t>(count));
    }
}

std::uint32_t ObjectGraph::Runs::manyOf(NodeId node) const {
    auto found = std::lower_bound(many_.begin(), many_.end(), node,
                                  [](const auto& entry, NodeId key) { return entry.first < key; });
    LEAKGATE_CHECK(found != many_.end() && found->first == node);
    return found->second;
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

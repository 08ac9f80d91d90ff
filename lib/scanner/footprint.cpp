// What objects weigh: sys.getsizeof, computed in C where it can be, and the footprint of a set of
// objects (what they reach and own, payloads included), one set at a time or several in one walk.
#include "lib/scanner/explain.h"

#include "lib/python/compat.h"
#include "lib/scanner/payloads.h"

#include <algorithm>
#include <bit>
#include <unordered_set>

namespace leakgate::scanner {
namespace {

using python::own;
using python::OwnedRef;

} // namespace

std::int64_t getsizeof(PyObject* object) {
    static PyObject* getsizeof = PySys_GetObject("getsizeof"); // Borrowed reference
    if (getsizeof) {
        OwnedRef size = own(PyObject_CallOneArg(getsizeof, object));
        if (size) {
            long long value = PyLong_AsLongLong(size.get());
            if (!PyErr_Occurred()) return value;
        }
        PyErr_Clear();
    }
    return Py_TYPE(object)->tp_basicsize;
}

namespace {

// sys.getsizeof without a Python call per object. sys.getsizeof is the type's __sizeof__ plus
// what the collector keeps in front of the object (the GC header; from 3.12 also the pre-header
// of managed dicts and weakrefs): per type, the C function behind __sizeof__ is called directly
// (object.__sizeof__ is computed inline) and the constant in front is learnt from one real
// sys.getsizeof call on the first object of the type. Types whose GC-ness varies per object
// (tp_is_gc: type objects) or whose __sizeof__ is written in Python take the slow call.
// Types can die during a scan's lifetime no more than their objects can: the graph keeps every
// object, hence every type, alive, so one table per footprint is safe.
class ObjectSizes {
  public:
    std::int64_t operator()(PyObject* object) {
        PyTypeObject* type = Py_TYPE(object);
        if (type != lastType_) {
            // A scan meets a handful of types: a flat table beats hashing.
            auto known = std::find_if(rules_.begin(), rules_.end(),
                                      [&](const auto& entry) { return entry.first == type; });
            if (known == rules_.end()) known = rules_.insert(rules_.end(), {type, learn(object)});
            lastType_ = type;
            lastRule_ = known->second;
        }
        switch (lastRule_.kind) {
        case Rule::kBasic:
            return lastRule_.extra + basicSize(object);
        case Rule::kMethod:
            if (auto size = callSizeof(lastRule_.method, object)) return lastRule_.extra + *size;
            return getsizeof(object);
        case Rule::kInline:
            return lastRule_.extra + lastRule_.inlineSize(object);
        case Rule::kCall:
            break;
        }
        return getsizeof(object);
    }

  private:
    struct Rule {
        enum Kind { kCall, kBasic, kMethod, kInline } kind = kCall;
        PyCFunction method = nullptr;
        std::int64_t extra = 0;
        Py_ssize_t (*inlineSize)(PyObject*) = nullptr; // kInline: the method's result, computed
    };

    // The C function behind a built-in type's __sizeof__.
    static PyCFunction sizeofMethodOf(PyTypeObject* type) {
        OwnedRef method = own(PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__sizeof__"));
        PyMethodDef* definition = method ? python::methodDefOf(method.get()) : nullptr;
        PyErr_Clear();
        return definition ? definition->ml_meth : nullptr;
    }

    // list's, dict's and int's __sizeof__ (subclasses' too) computed inline: most of what a
    // footprint counts, and each call would make an int. Used only where the computation gives
    // what the method gave for the type's first object.
    static Py_ssize_t (*inlineSizeFor(PyCFunction method))(PyObject*) {
        static const std::pair<PyCFunction, Py_ssize_t (*)(PyObject*)> known[] = {
            {sizeofMethodOf(&PyList_Type), python::listSizeof},
            {sizeofMethodOf(&PyDict_Type), python::dictSizeof},
            {sizeofMethodOf(&PyLong_Type), python::longSizeof},
        };
        for (const auto& [candidate, size] : known) {
            if (candidate != nullptr && candidate == method) return size;
        }
        return nullptr;
    }

    // object.__sizeof__: the fixed part plus the items.
    static std::int64_t basicSize(PyObject* object) {
        PyTypeObject* type = Py_TYPE(object);
        std::int64_t size = type->tp_basicsize;
        if (type->tp_itemsize > 0) size += Py_SIZE(object) * type->tp_itemsize;
        return size;
    }

    static std::optional<std::int64_t> callSizeof(PyCFunction method, PyObject* object) {
        OwnedRef size = own(method(object, nullptr));
        if (size) {
            long long value = PyLong_AsLongLong(size.get());
            if (!PyErr_Occurred()) return value;
        }
        PyErr_Clear();
        return std::nullopt;
    }

    static Rule learn(PyObject* object) {
        PyTypeObject* type = Py_TYPE(object);
        if (type->tp_is_gc != nullptr) return {};
        OwnedRef method = own(PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__sizeof__"));
        if (!method || !Py_IS_TYPE(method.get(), &PyMethodDescr_Type)) {
            PyErr_Clear();
            return {};
        }
        PyMethodDef* definition = python::methodDefOf(method.get()); // Borrowed pointer
        if ((definition->ml_flags & (METH_NOARGS | METH_VARARGS | METH_KEYWORDS | METH_FASTCALL |
                                     METH_O | METH_METHOD)) != METH_NOARGS) {
            return {};
        }
        auto sizeofValue = callSizeof(definition->ml_meth, object);
        if (!sizeofValue) return {};
        std::int64_t extra = getsizeof(object) - *sizeofValue;
        // New reference, kept for the process: object's own descriptor.
        static PyObject* objectSizeof =
            PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__sizeof__");
        if (method.get() == objectSizeof && basicSize(object) == *sizeofValue) {
            return {Rule::kBasic, nullptr, extra};
        }
        if (auto inlineSize = inlineSizeFor(definition->ml_meth);
            inlineSize != nullptr && inlineSize(object) == *sizeofValue) {
            return {Rule::kInline, nullptr, extra, inlineSize};
        }
        return {Rule::kMethod, definition->ml_meth, extra};
    }

    std::vector<std::pair<PyTypeObject*, Rule>> rules_;
    PyTypeObject* lastType_ = nullptr;
    Rule lastRule_;
};

// Adds the payload of `object` to `total`: its memory once (`counted`), and what __sizeof__ already
// counted (a NumPy owner's data) moved from the objects' bytes to the payloads.
void addPayload(Footprint& total, std::unordered_set<std::uintptr_t>& counted, const Payload& payload,
                PyObject* object) {
    if (payload.inSizeof) total.bytes -= payload.bytes;
    if (counted.insert(memoryOf(payload, object)).second)
        total.payloadBytes[payload.kind] += payload.bytes;
}

} // namespace

std::int64_t summedSizeof(std::span<PyObject* const> objects) {
    ObjectSizes sizeOf; // one table: the caller keeps the objects, hence their types, alive
    std::int64_t total = 0;
    for (PyObject* object : objects)
        total += sizeOf(object);
    return total;
}

namespace {

// Whether an untracked object can hold more untracked data: an untracked dict (a frame's
// materialised f_locals holding only bytes and numbers), an untracked tuple. Its referents are
// read with its tp_traverse, which works whether or not the collector tracks it.
bool holdsReferences(PyObject* object) {
    PyTypeObject* type = Py_TYPE(object);
    return PyType_IS_GC(type) && type->tp_traverse != nullptr;
}

int collectReferent(PyObject* referent, void* out) {
    if (referent) static_cast<std::vector<PyObject*>*>(out)->push_back(referent);
    return 0;
}

// A leaf some but not all of whose references come from a footprint's objects: an owned untracked
// container may hold the rest (a payload named by a frame and by its f_locals dict).
struct PartlyOwned {
    PyObject* object;
    Py_ssize_t seen, refcount;
};

// What a footprint's owned untracked containers hold goes with it when those references complete
// the count, level by level: `nextContainer()` gives each owned container (nullptr when none is
// left), `own(referent)` counts what goes with the footprint (and, for a container, has
// nextContainer() give it too).
template <typename NextContainer, typename Own>
void ownWhatContainersHold(std::span<const PartlyOwned> partlyFound, NextContainer&& nextContainer,
                           Own&& own) {
    std::unordered_map<PyObject*, std::pair<Py_ssize_t, Py_ssize_t>> partly; // seen, refcount
    for (const PartlyOwned& leaf : partlyFound)
        partly.emplace(leaf.object, std::make_pair(leaf.seen, leaf.refcount));
    std::unordered_set<PyObject*> counted;
    std::vector<PyObject*> referents;
    while (PyObject* container = nextContainer()) {
        referents.clear();
        Py_TYPE(container)->tp_traverse(container, collectReferent, &referents);
        for (PyObject* referent : referents) {
            if (python::isGcTracked(referent) || python::isImmortal(referent)) continue; // a node
            auto [entry, added] = partly.try_emplace(referent, 0, Py_REFCNT(referent));
            if (++entry->second.first == entry->second.second && counted.insert(referent).second)
                own(referent);
        }
    }
}

} // namespace

Footprint footprint(const ObjectGraph& graph, std::span<const NodeId> sources,
                    const std::vector<bool>* excluded, const Payloads* payloads) {
    Footprint total;
    std::vector<bool> seen(graph.size(), false);
    std::vector<NodeId> stack;
    for (NodeId source : sources) {
        if (!seen[source]) {
            seen[source] = true;
            stack.push_back(source);
        }
    }
    // Every reference to untracked data from the walked nodes, sorted afterwards so that the
    // references to one leaf are counted side by side (no map, no allocation per leaf). Kept as
    // indices into the graph's leaves, 4 bytes each where a copy of the leaf took 16: this is
    // allocated at the peak of a scan, beside the graph and its components.
    std::vector<std::uint32_t> leafReferences;
    // Untracked containers that go with the objects: what they hold may go with them too.
    std::vector<PyObject*> ownedContainers;
    ObjectSizes sizeOf;
    std::unordered_set<std::uintptr_t> counted; // Payload::key: views of one storage count it once
    auto payloadOf = [&](PyObject* object) {
        if (!payloads) return;
        if (auto found = payloads->find(object); found != payloads->end())
            addPayload(total, counted, found->second, object);
    };
    auto own = [&](PyObject* leaf) {
        ++total.objects;
        total.bytes += sizeOf(leaf);
        payloadOf(leaf);
        if (holdsReferences(leaf)) ownedContainers.push_back(leaf);
    };
    while (!stack.empty()) {
        NodeId node = stack.back();
        stack.pop_back();
        ++total.objects;
        total.bytes += sizeOf(graph.object(node));
        payloadOf(graph.object(node));
        const ObjectGraph::Leaves leaves = graph.untrackedReferents(node);
        for (size_t i = 0; i < leaves.size(); ++i) {
            // One reference in all, and it is ours: counted now, without the sort.
            const ObjectGraph::Leaf leaf = leaves[i];
            if (leaf.refcount == 1 && !python::isImmortal(leaf.object)) {
                own(leaf.object);
            } else {
                leafReferences.push_back(leaves.index(i));
            }
        }
        for (NodeId next : graph.successors(node)) {
            if (seen[next] || (excluded && (*excluded)[next])) continue;
            seen[next] = true;
            stack.push_back(next);
            // Its size is read when it is popped: by then the line is on its way.
            __builtin_prefetch(graph.object(next));
        }
    }
    // Untracked data (a big bytes or bytearray local) goes with the objects only when every
    // reference to it comes from them.
    std::sort(leafReferences.begin(), leafReferences.end(), [&](std::uint32_t a, std::uint32_t b) {
        return graph.leafObject(a) < graph.leafObject(b);
    });
    // Leaves some but not all of whose references come from the objects: an owned untracked
    // container may hold the rest (a payload named by a frame and by its f_locals dict).
    std::vector<PartlyOwned> partlyFound;
    for (size_t first = 0; first < leafReferences.size();) {
        size_t last = first;
        const ObjectGraph::Leaf leaf = graph.leaf(leafReferences[first]);
        while (last < leafReferences.size() && graph.leafObject(leafReferences[last]) == leaf.object)
            ++last;
        auto seenReferences = static_cast<Py_ssize_t>(last - first);
        if (!python::isImmortal(leaf.object)) {
            if (leaf.refcount <= seenReferences) {
                own(leaf.object);
            } else {
                partlyFound.push_back({leaf.object, seenReferences, leaf.refcount});
            }
        }
        first = last;
    }
    // Then what the owned untracked containers hold, level by level, by the same rule (the map only
    // when there is such a container: most scans have none).
    if (ownedContainers.empty()) return total;
    ownWhatContainersHold(
        partlyFound,
        [&]() -> PyObject* {
            if (ownedContainers.empty()) return nullptr;
            PyObject* container = ownedContainers.back();
            ownedContainers.pop_back();
            return container;
        },
        own); // own() adds a container it owns to ownedContainers
    return total;
}

namespace {

// A position in the order footprints() walks the members: components from the highest id down,
// each one's members in order.
class WalkCursor {
  public:
    WalkCursor(const Components& components, ComponentId highest)
        : components_(components), members_(components.allMembers()), component_(highest),
          at_(components.firstMember(highest)) {}
    bool done() const { return done_; }
    NodeId node() const { return members_[at_]; }
    void step() {
        if (done_) return;
        if (++at_ < components_.firstMember(component_ + 1)) return;
        if (component_ == 0) {
            done_ = true;
            return;
        }
        at_ = components_.firstMember(--component_);
    }

  private:
    const Components& components_;
    std::span<const NodeId> members_;
    ComponentId component_;
    std::uint32_t at_;
    bool done_ = false;
};

} // namespace

std::vector<Footprint> footprints(const ObjectGraph& graph, const Components& components,
                                  std::span<const std::vector<NodeId>> sourceSets,
                                  const Payloads* payloads) {
    std::vector<Footprint> totals(sourceSets.size());
    // Up to 8 footprints per walk, a bit each in a byte per component.
    using Mask = std::uint8_t;
    constexpr size_t kPerWalk = 8;
    // How far ahead objects are prefetched: 8 to 20 measured alike on the 1e6 scan bench.
    constexpr size_t kAhead = 16;
    ObjectSizes sizeOf;
    // The memories each footprint counted (Payload::key): views of one storage count it once.
    std::vector<std::unordered_set<std::uintptr_t>> counted(payloads ? sourceSets.size() : 0);
    auto payloadOf = [&](PyObject* object, Mask mask, size_t first) {
        if (!payloads) return;
        auto found = payloads->find(object);
        if (found == payloads->end()) return;
        for (Mask bits = mask; bits != 0; bits &= bits - 1) {
            const size_t set = first + std::countr_zero(bits);
            addPayload(totals[set], counted[set], found->second, object);
        }
    };
    auto add = [&](PyObject* object, Mask mask, size_t first) {
        const std::int64_t bytes = sizeOf(object);
        for (Mask bits = mask; bits != 0; bits &= bits - 1) {
            Footprint& total = totals[first + std::countr_zero(bits)];
            ++total.objects;
            total.bytes += bytes;
        }
        payloadOf(object, mask, first);
    };
    for (size_t first = 0; first < sourceSets.size(); first += kPerWalk) {
        const size_t count = std::min(kPerWalk, sourceSets.size() - first);
        // Which footprints reach each component. Components are numbered sinks first, so walking
        // them from the highest id down meets a component after every one that reaches it: its
        // mask is whole when it is met, and each node is read once for all the footprints.
        std::vector<Mask> reachedBy(components.count(), 0);
        ComponentId highest = 0;
        bool any = false;
        for (size_t i = 0; i < count; ++i) {
            for (NodeId source : sourceSets[first + i]) {
                const ComponentId component = components.of(source);
                reachedBy[component] |= static_cast<Mask>(1u << i);
                highest = std::max(highest, component);
                any = true;
            }
        }
        if (!any) continue;
        // The footprints' masks of each leaf reference (by the leaf's index in the graph: a leaf
        // index belongs to one node), and the references to sort (see footprint()).
        std::vector<Mask> leafMask(graph.leafCount(), 0);
        std::vector<std::uint32_t> leafReferences;
        // Untracked containers that go with some of the footprints, and which (9 bytes each: a
        // heap of small objects can own hundreds of thousands, such as attribute dicts of numbers).
        std::vector<PyObject*> ownedContainers;
        std::vector<Mask> ownedContainerMasks;
        auto own = [&](PyObject* leaf, Mask mask) {
            add(leaf, mask, first);
            if (holdsReferences(leaf)) {
                ownedContainers.push_back(leaf);
                ownedContainerMasks.push_back(mask);
            }
        };
        // The objects lie all over the heap: each member's header (and the leaves it may own)
        // is prefetched kAhead members before the walk reads it.
        WalkCursor ahead(components, highest);
        for (size_t i = 0; i < kAhead; ++i)
            ahead.step();
        auto prefetchAhead = [&]() {
            if (ahead.done()) return;
            const NodeId node = ahead.node();
            __builtin_prefetch(graph.object(node));
            for (const ObjectGraph::Leaf leaf : graph.untrackedReferents(node)) {
                if (leaf.refcount == 1) __builtin_prefetch(leaf.object);
            }
        };
        for (ComponentId component = highest + 1; component-- > 0;) {
            const Mask mask = reachedBy[component];
            if (mask == 0) {
                // Only the last kAhead steps reach members walked next.
                for (size_t i = components.members(component).size(); i-- > 0; ahead.step()) {
                    if (i < kAhead) prefetchAhead();
                }
                continue;
            }
            for (NodeId node : components.members(component)) {
                prefetchAhead();
                ahead.step();
                add(graph.object(node), mask, first);
                const ObjectGraph::Leaves leaves = graph.untrackedReferents(node);
                for (size_t i = 0; i < leaves.size(); ++i) {
                    const ObjectGraph::Leaf leaf = leaves[i];
                    if (leaf.refcount == 1 && !python::isImmortal(leaf.object)) {
                        own(leaf.object, mask);
                    } else {
                        leafMask[leaves.index(i)] = mask;
                        leafReferences.push_back(leaves.index(i));
                    }
                }
                for (NodeId next : graph.successors(node)) {
                    const ComponentId to = components.of(next);
                    if (to != component) reachedBy[to] |= mask;
                }
            }
        }
        std::vector<Mask>().swap(reachedBy);
        std::sort(leafReferences.begin(), leafReferences.end(), [&](std::uint32_t a, std::uint32_t b) {
            return graph.leafObject(a) < graph.leafObject(b);
        });
        // A leaf goes with a footprint when every reference to it comes from that footprint's
        // objects. `forEachLeaf` gives each leaf with the references each footprint has to it.
        auto forEachLeaf = [&](auto&& call) {
            for (size_t begin = 0; begin < leafReferences.size();) {
                const ObjectGraph::Leaf leaf = graph.leaf(leafReferences[begin]);
                Py_ssize_t seen[kPerWalk] = {};
                size_t end = begin;
                for (;
                     end < leafReferences.size() && graph.leafObject(leafReferences[end]) == leaf.object;
                     ++end) {
                    for (Mask bits = leafMask[leafReferences[end]]; bits != 0; bits &= bits - 1)
                        ++seen[std::countr_zero(bits)];
                }
                begin = end;
                if (!python::isImmortal(leaf.object)) call(leaf, seen);
            }
        };
        forEachLeaf([&](const ObjectGraph::Leaf& leaf, const Py_ssize_t* seen) {
            Mask owners = 0;
            for (size_t i = 0; i < count; ++i) {
                if (seen[i] > 0 && leaf.refcount <= seen[i]) owners |= static_cast<Mask>(1u << i);
            }
            if (owners != 0) own(leaf.object, owners);
        });
        // Leaves some but not all of whose references come from a footprint's objects: an owned
        // untracked container may hold the rest (a payload named by a frame and by its f_locals
        // dict). Gathered only for the footprints that own such a container: most scans have none.
        Mask withContainers = 0;
        for (Mask mask : ownedContainerMasks)
            withContainers |= mask;
        std::vector<std::vector<PartlyOwned>> partlyFound(count);
        if (withContainers != 0) {
            forEachLeaf([&](const ObjectGraph::Leaf& leaf, const Py_ssize_t* seen) {
                for (Mask bits = withContainers; bits != 0; bits &= bits - 1) {
                    const int i = std::countr_zero(bits);
                    if (seen[i] > 0 && leaf.refcount > seen[i])
                        partlyFound[i].push_back({leaf.object, seen[i], leaf.refcount});
                }
            });
        }
        std::vector<Mask>().swap(leafMask);
        std::vector<std::uint32_t>().swap(leafReferences);
        // What the owned untracked containers hold, per footprint, by the same rule.
        for (size_t i = 0; i < count; ++i) {
            if ((withContainers & (1u << i)) == 0) continue;
            const auto bit = static_cast<Mask>(1u << i);
            std::vector<PyObject*> held; // containers owned through one of this footprint's
            size_t nextOwned = 0;
            auto nextContainer = [&]() -> PyObject* {
                if (!held.empty()) {
                    PyObject* container = held.back();
                    held.pop_back();
                    return container;
                }
                while (nextOwned < ownedContainers.size() && (ownedContainerMasks[nextOwned] & bit) == 0)
                    ++nextOwned;
                if (nextOwned >= ownedContainers.size()) return nullptr;
                // The header kAhead containers on, and a dict's keys (which its traversal reads)
                // half as far, whose header should be in by then.
                if (nextOwned + kAhead < ownedContainers.size())
                    __builtin_prefetch(ownedContainers[nextOwned + kAhead]);
                if (nextOwned + kAhead / 2 < ownedContainers.size()) {
                    PyObject* soon = ownedContainers[nextOwned + kAhead / 2];
                    if (PyDict_Check(soon)) {
                        auto* keys = reinterpret_cast<const char*>(
                            reinterpret_cast<PyDictObject*>(soon)->ma_keys);
                        __builtin_prefetch(keys);
                        __builtin_prefetch(keys + 64);
                    }
                }
                return ownedContainers[nextOwned++];
            };
            ownWhatContainersHold(partlyFound[i], nextContainer, [&](PyObject* referent) {
                add(referent, bit, first);
                if (holdsReferences(referent)) held.push_back(referent);
            });
            std::vector<PartlyOwned>().swap(partlyFound[i]);
        }
    }
    return totals;
}

std::int64_t pinnedInAll(const Footprint& footprint) {
    std::int64_t bytes = footprint.bytes;
    for (const auto& [kind, payload] : footprint.payloadBytes)
        bytes += payload;
    return bytes;
}

std::int64_t pinnedInAll(const Finding& finding) {
    std::int64_t bytes = finding.bytes;
    for (const auto& [kind, payload] : finding.payloadBytes)
        bytes += payload;
    return bytes;
}

} // namespace leakgate::scanner

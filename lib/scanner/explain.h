// Turns graph structure into findings a person can act on: which frame is the culprit, which of
// its locals closes the cycle, which frames it pins through f_back, and how many bytes.
#pragma once

#include "leakgate/explain.h"
#include "leakgate/report.h"
#include "lib/base/pointer_set.h"
#include "lib/scanner/components.h"
#include "lib/scanner/object_graph.h"

#include <functional>
#include <span>
#include <unordered_set>
#include <vector>

namespace leakgate::scanner {

// Footprint (objects reachable from `sources`, not entering `excluded` nodes) and FrameCycles
// are public: leakgate/explain.h.

// Frame cycles among the objects a DEBUG_SAVEALL collection saved (`garbage`), from its graph.
// Call with the GIL held, after the graph is built.
// With `madeAtImport` (the objects made while a module was imported, probes/import_marks.cpp), a
// frame cycle whose every instance was made so and pins only that import's frames
// (onlyImportFrames) goes to `atImport` instead of `findings`, and each other shape counts its
// cycles made so (CycleShapeCount::atImport).
FrameCycles explainFrameCycles(const ObjectGraph& garbage, const Components& components,
                               const Payloads* payloads = nullptr,
                               const base::PointerSet* madeAtImport = nullptr);

// What a footprint or a finding pins in all: what sys.getsizeof sees and the payloads it does
// not (tensors' storages, arrays' buffers, sentinels' allocations).
std::int64_t pinnedInAll(const Footprint& footprint);
std::int64_t pinnedInAll(const Finding& finding);

// Whether `frame` and its f_back chain hold only what an import runs: importlib's own frames,
// module-level code (a module's body, a class body), leakgate's harness, and functions an import
// called (an importlib frame further down the chain). A function frame with no import below it is
// the program's own call, the importer (`forward`, which imports a kernel module lazily): what an
// import pins there outlives the import. Call with the GIL held.
bool onlyImportFrames(PyObject* frame);

// Frames that outlived a full collection. `heap` is the graph of every tracked object,
// `retained` the frames that no thread runs and no generator owns, `external[n]` the references
// to node n from outside the graph (a positive count makes n a root), and `nameRoot` names a
// root for the report ("module `__main__` globals").
struct RetainedFrames {
    const ObjectGraph& heap;
    std::span<const NodeId> retained;
    std::span<const std::int64_t> external;
    std::function<std::string(PyObject*)> nameRoot;
};
std::vector<Finding> explainRetainedFrames(const RetainedFrames& input);

// The shortest path to `target` from the nearest root (a node with `external` references), root
// first and `target` last; empty when no root reaches it.
std::vector<NodeId> pathFromRoot(const ObjectGraph::Reverse& reverse,
                                 std::span<const std::int64_t> external, NodeId target);
// That path as a person reads it: "keeps_locals._SCOPES[3]['payload']", or "an unknown holder".
std::string retentionRoute(const ObjectGraph& heap, const std::vector<NodeId>& path,
                           const std::function<std::string(PyObject*)>& nameRoot);

// sys.getsizeof(object), or the type's basic size where it raises.
std::int64_t getsizeof(PyObject* object);
// The summed sys.getsizeof of `objects` (borrowed, kept alive by the caller), without a Python
// call per object for the types whose size can be computed in C.
std::int64_t summedSizeof(std::span<PyObject* const> objects);

Footprint footprint(const ObjectGraph& graph, std::span<const NodeId> sources,
                    const std::vector<bool>* excluded = nullptr, const Payloads* payloads = nullptr);
// The footprints of several sets of sources at once, each as footprint() gives it alone (without
// `excluded`), in one walk of the components for every 8 sets: an object that several of them
// reach is read once. `components` are those of `graph`.
std::vector<Footprint> footprints(const ObjectGraph& graph, const Components& components,
                                  std::span<const std::vector<NodeId>> sourceSets,
                                  const Payloads* payloads = nullptr);

// Cycles of any kind (ctypes objects, dicts, instances): one entry per shape, the sorted type
// names of a component's members, most bytes pinned first (then most instances); each with the
// labelled cycle of one example. For garbage that holds no frame, such as what a packer leaves per call.
struct CycleShape {
    std::string types;           // "CArgObject, c_void_p, dict"
    std::int64_t count = 0;      // components of this shape
    std::int64_t atImport = 0;   // of those, made while a module was imported
    std::int64_t objects = 0;    // objects in them
    std::int64_t bytes = 0;      // what they pin in all (their footprint: members and owned leaves)
    std::vector<PathStep> cycle; // example: first member -> ... -> first member
    PyObject* example = nullptr; // a member of the example (borrowed, alive while the garbage is)
};
std::vector<CycleShape> describeCycles(const ObjectGraph& garbage, const Components& components,
                                       size_t limit = 5);
// The same for the cyclic components `only`; `shapes` and `objects`, when given, get how many
// shapes and objects there were before the limit.
std::vector<CycleShape> describeCyclesOf(const ObjectGraph& garbage, const Components& components,
                                         std::span<const ComponentId> only, size_t limit = 5,
                                         std::int64_t* shapes = nullptr,
                                         std::int64_t* objects = nullptr);

// The fix pattern for a finding, chosen from the labels on its path.
std::string fixFor(const Finding& finding);

} // namespace leakgate::scanner

// The scanner's explain entry point (public, leakgate/api.h): what the frame-cycle check reports,
// for garbage a probe has in hand.
#pragma once

#include "leakgate/api.h"
#include "leakgate/report.h"

#include <Python.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace leakgate::scanner {

// Objects pinned and their summed sys.getsizeof, plus the untracked data only they refer to; and
// the payloads among them that sys.getsizeof does not see, by kind (when they were given).
struct Footprint {
    std::int64_t objects = 0;
    std::int64_t bytes = 0;
    std::map<std::string, std::int64_t> payloadBytes;
};

// A payload that sys.getsizeof does not see (a device sentinel's allocation), keyed by the object
// that holds it: its kind ("device", "torch") and bytes.
struct Payload {
    std::string kind;
    std::int64_t bytes = 0;
    // The memory's address (or its owner's): objects that share it (views of one storage) count it
    // once in a footprint. 0: the object's own address.
    std::uintptr_t key = 0;
    // sys.getsizeof already counts it (a NumPy array that owns its data): a footprint moves it from
    // the objects' bytes to the payloads, so that it is counted once.
    bool inSizeof = false;
};
using Payloads = std::unordered_map<PyObject*, Payload>;

// One finding per culprit frame (same code and same closing locals), most bytes first. Findings
// may pin the same objects (a shared caller chain); `total` counts each pinned object once.
struct FrameCycles {
    std::vector<Finding> findings; // one per shape: a culprit frame's code and its closing locals
    Footprint total;
    std::int64_t instances = 0; // cycles in all, over every shape
    // The cycles no frame closes (ctypes objects, dicts, instances), by shape, most instances
    // first, at most five; how many shapes and objects there were in all.
    std::vector<CycleShapeCount> otherCycles;
    // One member of each of those shapes' example cycle (borrowed: alive while the garbage is), in
    // the order of otherCycles: where a probe asks tracemalloc where it was made.
    std::vector<PyObject*> otherExamples;
    std::int64_t otherShapes = 0;
    std::int64_t otherObjects = 0;
    // Frame cycles made while a module was imported that pin only that import's frames (filled
    // only where the caller told which objects an import made): retention of one time.
    std::vector<Finding> atImport;
};

// The frame cycles among `garbage` (borrowed), typically what a DEBUG_SAVEALL collection saved:
// the span a probe's inGarbage() receives. Call with the GIL held. With `payloads`, each finding's
// `payloadBytes` holds those among the objects it pins.
LEAKGATE_API FrameCycles explainGarbage(std::span<PyObject* const> garbage,
                                        const Payloads* payloads = nullptr);

} // namespace leakgate::scanner

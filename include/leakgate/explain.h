// The scanner's explain entry point (public, leakgate/api.h): what the frame-cycle check reports,
// for garbage a probe has in hand.
#pragma once

#include "leakgate/api.h"
#include "leakgate/report.h"

#include <Python.h>

#include <cstdint>
#include <span>
#include <vector>

namespace leakgate::scanner {

// Objects pinned and their summed sys.getsizeof, plus the untracked data only they refer to.
struct Footprint {
    std::int64_t objects = 0;
    std::int64_t bytes = 0;
};

// One finding per culprit frame (same code and same closing locals), most bytes first. Findings
// may pin the same objects (a shared caller chain); `total` counts each pinned object once.
struct FrameCycles {
    std::vector<Finding> findings; // one per shape: a culprit frame's code and its closing locals
    Footprint total;
    std::int64_t instances = 0; // cycles in all, over every shape
    // The cycles no frame closes (ctypes objects, dicts, instances), by shape, most instances
    // first, at most five; how many shapes and objects there were in all.
    std::vector<CycleShapeCount> otherCycles;
    std::int64_t otherShapes = 0;
    std::int64_t otherObjects = 0;
};

// The frame cycles among `garbage` (borrowed), typically what a DEBUG_SAVEALL collection saved:
// the span a probe's inGarbage() receives. Call with the GIL held.
LEAKGATE_API FrameCycles explainGarbage(std::span<PyObject* const> garbage);

} // namespace leakgate::scanner

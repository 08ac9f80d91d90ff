// Sentinels (MEASURES.md): weakref-able objects that a workload places as locals in the frames
// of its call stack, each owning a payload. The registry tracks every sentinel made in this
// worker; the sentinel probe gives each a verdict at the three reads.
#pragma once

#include "lib/python/compat.h"

#include <cstdint>
#include <string>
#include <vector>

namespace leakgate::probes {

struct TrackedSentinel {
    std::string label;
    std::string kind; // payload kind: "host" (later "device", "torch")
    std::int64_t bytes = 0;
    python::OwnedRef weakref;     // to the sentinel
    PyObject* identity = nullptr; // Borrowed reference, valid only while the weakref is alive or
                                  // the object sits in gc.garbage
    bool aliveAfterReturn = false;
    bool inSavedGarbage = false;
    bool aliveAfterCollection = false;
};

// One per worker. Call with the GIL held.
std::vector<TrackedSentinel>& sentinelRegistry();

// Tracks `sentinel` (borrowed) under `label`.
void trackSentinel(PyObject* sentinel, std::string label, std::string kind, std::int64_t bytes);

} // namespace leakgate::probes

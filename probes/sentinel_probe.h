// Sentinels (docs/definitions.md, Sentinels): weakref-able objects that a workload places as
// locals in the frames of its call stack, each owning a payload. The registry of the worker's
// Session tracks every sentinel made in it; the sentinel probe gives each a verdict at the three
// reads.
#pragma once

#include "leakgate/sentinels.h"
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
    // A collection the program started found it in cyclic garbage (what started it): it was
    // pinned until a collection, and that one freed it (probes/gc_guard_probe.cpp).
    std::string collectedBy;
    bool aliveAtCollectionStart = false; // of the program's collection in progress
    bool inSavedGarbage = false;
    bool aliveAfterCollection = false;
};

// What the probes of one worker hold between its workload's start and its end: the sentinels'
// weak references. The worker makes one after its interpreter starts and ends it before the
// interpreter finalises, so no Python reference is released after Py_Finalize, whether or not
// the workload got to its last read (a static registry crashed the worker at exit whenever a
// measurement stopped early). One at a time; construct and destroy with the GIL held.
class Session {
  public:
    Session();
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    Session(Session&&) = delete;
    Session& operator=(Session&&) = delete;

    std::vector<TrackedSentinel>& sentinels() { return sentinels_; }

  private:
    std::vector<TrackedSentinel> sentinels_;
};

// The sentinels of the Session in progress (there must be one). Call with the GIL held.
std::vector<TrackedSentinel>& sentinelRegistry();

} // namespace leakgate::probes

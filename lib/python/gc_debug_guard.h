// Sets the collector's debug flags for a scope and restores the previous ones, whatever happens.
#pragma once

#include "lib/python/collector.h"
#include "lib/python/compat.h"

#include <pybind11/pybind11.h>

namespace leakgate::python {

class GcDebugGuard {
  public:
    static constexpr int kSaveAll = 32; // gc.DEBUG_SAVEALL

    // Through the functions taken before the code under test ran (collector.h): a gc.set_debug
    // it replaced by a no-op does not keep DEBUG_SAVEALL from being set.
    explicit GcDebugGuard(int flags) : previous_(collector::debugFlags()) {
        collector::setDebugFlags(flags);
    }
    ~GcDebugGuard() {
        // This may run while an exception propagates: set it aside, drop anything set_debug raises,
        // and put it back when `saved` goes out of scope (after the PyErr_Clear).
        SavedException saved;
        try {
            collector::setDebugFlags(previous_);
        } catch (pybind11::error_already_set&) {
        }
        PyErr_Clear();
    }
    GcDebugGuard(const GcDebugGuard&) = delete;
    GcDebugGuard& operator=(const GcDebugGuard&) = delete;
    GcDebugGuard(GcDebugGuard&&) = delete;
    GcDebugGuard& operator=(GcDebugGuard&&) = delete;

  private:
    int previous_;
};

} // namespace leakgate::python

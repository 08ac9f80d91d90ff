// The sentinel registry (public, leakgate/api.h). A sentinel is a weakref-able object that owns a
// payload and sits where the code under test should let it go; the registry of the worker's
// session tracks each, and the sentinel probe gives each a verdict at the three reads
// (docs/definitions.md, "Sentinels" and "Verdicts"). Python code makes them with the `_leakgate`
// module (`_leakgate.sentinel(label, nbytes)`, `_leakgate.track(...)`), which tracks them
// itself; a C++ probe tracks objects of its own here.
#pragma once

#include "leakgate/api.h"

#include <Python.h>

#include <cstdint>
#include <string>

namespace leakgate::probes {

// Whether a session is in progress: inside a worker, always; elsewhere, only while a Session
// object (probes/sentinel_probe.h) lives.
LEAKGATE_API bool sessionActive();

// Tracks `sentinel` (borrowed; it must support weak references) under `label`, with its payload's
// `kind` ("host", "device", "torch") and `bytes`. A UsageError when no session is in progress.
// Call with the GIL held.
LEAKGATE_API void trackSentinel(PyObject* sentinel, std::string label, std::string kind,
                                std::int64_t bytes);

} // namespace leakgate::probes

// What real objects own that sys.getsizeof does not see: a torch tensor's storage, a NumPy view's
// base, a CuPy, JAX or Warp array's device memory, a buffer or an mmap. The scanner adds them to
// the footprints it reports (docs/definitions.md, "Payloads"), so that a frame cycle that pins
// 3 GiB of CUDA tensors reads 3 GiB, not the few KiB of the tensors' Python objects.
#pragma once

#include "leakgate/explain.h"

#include <Python.h>

#include <cstdint>
#include <optional>

namespace leakgate::scanner {

class ObjectGraph;

// The payload of one object, if it owns or views memory that sys.getsizeof leaves out (or counts
// as the object's own): kind "device" (GPU memory) or "host" (native host memory), bytes, and the
// address of the memory (or of the object that owns it), so that views of one storage count once. A
// framework is asked only when the program imported it: nothing is imported here. Runs Python code (a
// tensor's untyped_storage()); call with the GIL held, after the graph is built.
std::optional<Payload> ownedMemory(PyObject* object);

// The memory a payload stands for: its key, or its object's own address (a sentinel's payload).
inline std::uintptr_t memoryOf(const Payload& payload, PyObject* object) {
    return payload.key ? payload.key : reinterpret_cast<std::uintptr_t>(object);
}

// The payloads among the graph's objects and the untracked data they refer to (a footprint counts
// each memory once, by Payload::key). `known` (sentinels' payloads) are kept as given and their
// objects are not asked again.
Payloads findPayloads(const ObjectGraph& graph, const Payloads* known);

} // namespace leakgate::scanner

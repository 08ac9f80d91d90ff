// The one place for CPython version differences (3.10 to 3.13, and the build's: free-threaded
// or not). Every function says whether it returns a new or a borrowed reference. Call with the GIL
// held. 3.14 is not supported yet: the section "Python 3.14" at the end says what it changes.
#pragma once

#include <Python.h>
#include <frameobject.h>

#include <memory>

namespace leakgate::python {

// A free-threaded build (3.13t, 3.14t: Py_GIL_DISABLED): no GIL serialises the allocator's MEM
// and OBJ domains (probes/allocation_counter.cpp counts them atomically then), and the collector
// keeps no generation in tracking order (probes/import_marks.cpp then tells no import apart).
// Untested: the CMake build refuses it ("Python 3.14" below says why).
#ifdef Py_GIL_DISABLED
inline constexpr bool kFreeThreaded = true;
#else
inline constexpr bool kFreeThreaded = false;
#endif

// Owning pointer for raw C-API references: releases with Py_XDECREF.
struct DecRef {
    void operator()(PyObject* object) const { Py_XDECREF(object); }
};
using OwnedRef = std::unique_ptr<PyObject, DecRef>;

inline OwnedRef own(PyObject* newReference) {
    return OwnedRef(newReference);
}

// Whether a collection keeps the collector's lists in tracking order for what it does not free:
// on 3.10 to 3.13 (CPython's gc.c) a collection only removes objects from a generation's list,
// moves some to its end (those it first thought unreachable) and appends whole lists to older
// ones, so an object found between two that stayed alive and tracked (the import marks) was
// tracked between them (probes/import_marks.cpp reads every generation after the program's own
// collections). Not on 3.14's incremental collector, which moves objects between its spaces in
// the order it reaches them, nor on a free-threaded build.
inline constexpr bool kCollectionsKeepTrackingOrder = PY_VERSION_HEX < 0x030E0000 && !kFreeThreaded;

// Whether a frame object enters the collector's lists only when its call ended and something
// still holds it (CPython's take_ownership tracks it then, in the youngest generation): 3.11 on.
// On 3.10 a generator's frame is tracked from the generator's creation.
inline constexpr bool kFramesTrackedWhenRetained = PY_VERSION_HEX >= 0x030B0000;

// New reference: the frame's caller, or null (no exception set).
inline OwnedRef frameBack(PyFrameObject* frame) {
    return own(reinterpret_cast<PyObject*>(PyFrame_GetBack(frame)));
}

// New reference: the frame's code object.
inline OwnedRef frameCode(PyFrameObject* frame) {
    return own(reinterpret_cast<PyObject*>(PyFrame_GetCode(frame)));
}

// New reference: the code's qualified name. co_qualname exists from 3.11; 3.10 has co_name only.
inline OwnedRef codeQualifiedName(PyObject* code) {
#if PY_VERSION_HEX >= 0x030B0000
    return own(PyObject_GetAttrString(code, "co_qualname"));
#else
    return own(PyObject_GetAttrString(code, "co_name"));
#endif
}

// Borrowed reference: the same name read from the struct's field (no call, no exception set).
inline PyObject* codeQualifiedNameField(PyCodeObject* code) {
#if PY_VERSION_HEX >= 0x030B0000
    return code->co_qualname;
#else
    return code->co_name;
#endif
}

// An embedded interpreter loads the standard modules from their files, not from the copies frozen
// into libpython (PyConfig.use_frozen_modules, 3.11+; 3.10 has no such setting). Why:
// lib/python/interpreter.cpp.
// The same for an interpreter started as a program (a worker of the wheel's CLI): its -X option,
// or null where there is none.
inline constexpr const char* kStandardModulesFromFilesOption =
    PY_VERSION_HEX >= 0x030B0000 ? "frozen_modules=off" : nullptr;
inline void loadStandardModulesFromFiles(PyConfig& config) {
#if PY_VERSION_HEX >= 0x030B0000
    config.use_frozen_modules = 0;
#else
    (void)config;
#endif
}

// New reference: the frame's locals as a mapping. On 3.10 to 3.12 this materialises a dict on the
// frame (PyFrame_FastToLocals), which adds references: call it only after the graph is built.
// On 3.13 it is a write-through FrameLocalsProxy (PEP 667) that adds nothing.
inline OwnedRef frameLocals(PyObject* frame) {
    return own(PyObject_GetAttrString(frame, "f_locals"));
}

// Objects that live forever (3.12+) have no meaningful reference count.
inline bool isImmortal(PyObject* object) {
#if PY_VERSION_HEX >= 0x030C0000
    return Py_REFCNT(object) >= static_cast<Py_ssize_t>(UINT32_MAX) >> 2 || _Py_IsImmortal(object);
#else
    (void)object;
    return false;
#endif
}

// Whether a weakref's referent is still alive. PyWeakref_GetObject is deprecated from 3.13.
inline bool weakrefIsAlive(PyObject* weakref) {
#if PY_VERSION_HEX >= 0x030D0000
    PyObject* referent = nullptr;
    if (PyWeakref_GetRef(weakref, &referent) < 0) {
        PyErr_Clear();
        return false;
    }
    Py_XDECREF(referent);
    return referent != nullptr;
#else
    PyObject* referent = PyWeakref_GetObject(weakref); // Borrowed reference
    return referent != nullptr && referent != Py_None;
#endif
}

// Holds the exception being raised, if any, for a scope: construction takes it and clears the error
// indicator, destruction puts it back (replacing whatever is set by then). Owns its references.
// 3.12+ keeps one exception object (PyErr_GetRaisedException); before, the type, value and traceback
// triple is kept as PyErr_Fetch left it, not normalized, so saving runs no Python code.
class SavedException {
  public:
#if PY_VERSION_HEX >= 0x030C0000
    SavedException() : exception_(PyErr_GetRaisedException()) {}
    ~SavedException() {
        PyErr_SetRaisedException(exception_); // Steals the reference
    }
#else
    SavedException() {
        PyErr_Fetch(&type_, &value_, &traceback_);
    }
    ~SavedException() {
        PyErr_Restore(type_, value_, traceback_); // Steals the references
    }
#endif
    SavedException(const SavedException&) = delete;
    SavedException& operator=(const SavedException&) = delete;
    SavedException(SavedException&&) = delete;
    SavedException& operator=(SavedException&&) = delete;

  private:
#if PY_VERSION_HEX >= 0x030C0000
    PyObject* exception_ = nullptr;
#else
    PyObject* type_ = nullptr;
    PyObject* value_ = nullptr;
    PyObject* traceback_ = nullptr;
#endif
};

// New reference, or null if none is set: the exception being raised, as an exception instance with
// its traceback attached (__traceback__). Clears the error indicator. 3.12+ raises exceptions
// normalized already; before, the PyErr_Fetch triple is normalized here, which may run Python code.
inline OwnedRef takeRaisedException() {
#if PY_VERSION_HEX >= 0x030C0000
    return own(PyErr_GetRaisedException());
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    OwnedRef ownedType = own(type), ownedTraceback = own(traceback);
    if (value && traceback) PyException_SetTraceback(value, traceback);
    return own(value);
#endif
}

// New reference (uniform across versions), or null: the type's own attribute dict. 3.12+ has
// PyType_GetDict (which also finds the dict of a static builtin type, whose tp_dict is null there);
// before, tp_dict is read directly and a reference added.
inline OwnedRef typeDict(PyTypeObject* type) {
#if PY_VERSION_HEX >= 0x030C0000
    return own(PyType_GetDict(type));
#else
    return own(Py_XNewRef(type->tp_dict));
#endif
}

// Borrowed reference: the code's file name. A field of PyCodeObject on every supported version;
// read here so that the struct's layout is touched in one place. No exception is set.
inline PyObject* codeFilename(PyCodeObject* code) {
    return code->co_filename;
}

// Borrowed pointer (lives as long as the descriptor), or null if `descriptor` is not exactly a
// method descriptor (PyMethodDescr_Type): the C method definition behind it. The descriptor struct
// has no accessor function on any supported version, so its field is read here.
inline PyMethodDef* methodDefOf(PyObject* descriptor) {
    if (!Py_IS_TYPE(descriptor, &PyMethodDescr_Type)) return nullptr;
    return reinterpret_cast<PyMethodDescrObject*>(descriptor)->d_method;
}

// PyObject_IS_GC without the call (the scanner asks it of every referent): whether the object
// has a GC header, read from its type as CPython's own inline version does.
inline bool hasGcHeader(PyObject* object) {
    PyTypeObject* type = Py_TYPE(object);
    return PyType_IS_GC(type) && (type->tp_is_gc == nullptr || type->tp_is_gc(object));
}

// __sizeof__ of a list, a dict and an int without the method call and the int object it returns
// (the footprint asks it of every object it counts); -1 where the version's layout is not known
// here (the caller calls the method). Callers check one result against the method per type.
inline Py_ssize_t listSizeof(PyObject* list) {
    return Py_TYPE(list)->tp_basicsize +
           reinterpret_cast<PyListObject*>(list)->allocated * static_cast<Py_ssize_t>(sizeof(void*));
}
inline Py_ssize_t dictSizeof(PyObject* dict) {
#if PY_VERSION_HEX < 0x030D0000
    return _PyDict_SizeOf(reinterpret_cast<PyDictObject*>(dict));
#else
    (void)dict; // 3.13 moved _PyDict_SizeOf to the internal headers
    return -1;
#endif
}
inline Py_ssize_t longSizeof(PyObject* number) {
#if PY_VERSION_HEX < 0x030C0000
    Py_ssize_t digits = Py_ABS(Py_SIZE(number));
#if PY_VERSION_HEX >= 0x030B0000
    if (digits == 0) digits = 1; // from 3.11 zero has a digit too
#endif
    return static_cast<Py_ssize_t>(offsetof(PyLongObject, ob_digit)) +
           digits * static_cast<Py_ssize_t>(sizeof(digit));
#else
    (void)number; // 3.12 packs the sign and size in lv_tag
    return -1;
#endif
}

// Whether the collector tracks this object (only tracked objects can sit in cyclic garbage).
inline bool isGcTracked(PyObject* object) {
    return hasGcHeader(object) && PyObject_GC_IsTracked(object);
}

// ---------------------------------------------------------------------------------------------
// Python 3.14 (not supported yet: CMakeLists.txt refuses it, and any free-threaded build, unless
// -DLEAKGATE_ALLOW_UNTESTED_PYTHON=ON; docs/definitions.md, "What a Python 3.14 run would
// change", says what each measurement would read). Checked against CPython's documentation: What's
// New In Python 3.14 ("Garbage collection"), the gc module's documentation, the C API's "Object
// Protocol" and "Memory Management" pages, and PEP 703 ("Deferred Reference Counting",
// "Generations", "Stop-the-World", "Memory Management"). Nothing below is built or run on 3.14.
//
// The cyclic collector of the default build depends on the patch release, not on the headers: a
// build against 3.14 headers runs with whatever 3.14.x libpython is installed, so a check would
// read Py_Version at run time (3.11+), never PY_VERSION_HEX.
//  - 3.14.0 to 3.14.4 shipped the incremental collector (What's New In Python 3.14, "Garbage
//    collection"): two generations, young and old; gc.collect(1) collects the young generation
//    and an increment of the old one; gc.get_objects(1) returns no objects; what survives a
//    young collection goes to the old generation, which gc.get_objects(2) lists. gc.collect()
//    (generation 2) is still a full collection, and each collection still adds one to one
//    generation's count in gc.get_stats() (0, 1 or 2, as asked).
//  - 3.14.5 went back to 3.13's generational collector ("reverted back to the generational GC
//    from 3.13" after reports of memory pressure, same section): everything below about
//    generations reads as on 3.13 there. The incremental design is proposed again, through a
//    PEP, for a later version.
// What that does to leakgate on 3.14.0 to 3.14.4:
//  - measure()'s reads 0, 2 and 3 (probes/measurement.cpp; scan and gate): full collections, so
//    the sentinels' verdicts, frame cycles, cycles without a frame and retained frames there are
//    unchanged. The regions differ (package/native.cpp, below).
//  - lib/workloads/scalar_cases.cpp, collectYoungGarbage() and cycleShapesLeftBy(): collect(0)
//    still finds the calls' cycles (all young under gc.disable()), but the collect(1) after it,
//    meant to free what DEBUG_SAVEALL kept (now old, not generation 1), is an increment that may
//    not reach it (the first increment of a scan only marks): those cycles would stay, and the
//    net blocks of the collection, hence the "retained" figures, would count them. The code
//    would collect generation 2 there instead (a full collection: slower on a large heap) when
//    the collector is the incremental one.
//  - probes/retained_frame_probe.cpp, youngObjects() (generations 0 and 1), which a region reads
//    at its start and at read 2 (inGarbage), after read 2's generation-0 collection: on 3.13 the
//    body's surviving frames are in generation 1 then; on 3.14.0 to 3.14.4 a young collection
//    moves its survivors to the old generation (gc.get_objects(2)), so read 2 would find none of
//    them and the region's retained-frame check would pass where 3.13 fails. The code would read
//    generation 2 there too, less what the region's start kept (package/native.cpp holds it).
//  - probes/import_marks.cpp: the young generation is still one list in tracking order, emptied
//    by read 0's full collection: unchanged while the program collects nothing. After a
//    collection of the program's, the marks are read in every generation
//    (kCollectionsKeepTrackingOrder); an increment moves what it reaches into the visited space
//    in the order it reaches it, so that reading is refused there (the constant is false), and
//    what such a collection finds is told apart only at its start, as on 3.13.
//  - probes/gc_guard_probe.cpp: collections are counted as before (one per call, in the
//    generation asked); gc.get_threshold() has other meanings (compared only with itself).
//  - package/native.cpp, the regions of the API and the pytest plugin (not this file's to
//    change; its owner has to weigh it): kOutermost collects generation 1 at the region's start
//    and at read 3, generation 0 at read 2. There generation 1 is an increment: read 3 may leave
//    the cycles read 2 saved unfreed (in the old generation now), so what "one collection freed"
//    (the device-memory witnesses) reads less, and the cycles stay for a later collection; the
//    region's reads of collector::objects(1) are empty, and objects(2) holds what young
//    collections kept, not only what is older than the region.
//
// The free-threaded build (3.14t; PEP 779 made it supported in 3.14, Py_GIL_DISABLED):
//  - one generation (PEP 703, "Generations"): every collection walks the whole heap whatever
//    generation is asked (it still counts in that generation's gc.get_stats() entry), and
//    gc.get_objects(generation) ignores the generation and lists every object in the
//    allocator's heap order, not in tracking order. So: collectYoungGarbage() counts the whole
//    heap's unreachable cycles and costs a full walk per run; youngObjects() and the region's
//    objects(0/1/2) return the whole heap each; import_marks.cpp cannot tell an import's objects
//    apart (kFreeThreaded: it marks the reading unknown, as for a reordered list).
//  - reference counts (PEP 703, "Reference Counting"): Py_REFCNT adds a thread-local and a
//    shared count; objects with deferred reference counting (top-level functions, code objects,
//    modules, methods, heap types) are not counted for references from interpreter stacks and
//    "can only be deallocated during garbage collection cycles"; an object released by a thread
//    other than its owner may wait in the owner's queue until that thread runs or a collection
//    merges it. The scanner's "references from outside the graph" (Py_REFCNT minus the graph's
//    own: lib/scanner/object_graph.cpp, explain.cpp's ownWhatContainersHold, the retained-frame
//    probe's `external`) is wrong for deferred objects, whose counts "no longer reflect the true
//    number of references" (PEP 703), and a sentinel held only by a deferred object (a
//    module-level function's defaults) is freed at read 2's collection: read 1 would say
//    freed-by-gc-only where the default build says freed-by-refcount. isImmortal() holds
//    (_Py_IsImmortal knows the free-threaded layout; 3.14 also has PyUnstable_IsImmortal()).
//  - no GIL: the scanner walks tp_traverse over live objects while other threads may mutate
//    them; on 3.14t it would need the world stopped (as gc.get_objects() does) or the program's
//    threads joined. probes/allocation_counter.cpp already counts every domain atomically
//    there; its wrappers delegate to the installed allocators, which PEP 703 ("Memory
//    Management") requires of PyMem_SetAllocator hooks in that build.
//  - the extension module (package/native.cpp) declares no Py_mod_gil slot, so importing it into
//    3.14t enables the GIL for the process, with a RuntimeWarning (Python HOWTOs, "C API
//    Extension Support for Free Threading"); its owner would declare py::mod_gil_not_used()
//    (pybind11 2.13+) once the above holds. Debian's pybind11 2.10.3 predates both 3.14 and free
//    threading; a 3.14 build would take a newer one from PyPI (cmake/dependencies.cmake finds it).
//
// Both builds of 3.14:
//  - reference counts: "Starting with Python 3.14, the interpreter internally avoids some
//    reference count modifications when loading objects onto the operands stack by borrowing
//    references" (C API, Object Protocol, PyUnstable_Object_IsUniqueReferencedTemporary):
//    Py_REFCNT can be below the true number of references for objects on the value stacks of
//    frames running at the read (leakgate's own, at reads 1 to 3). The footprint may then count
//    an untracked object as owned by the pinned objects although a running frame also holds it.
//  - frames: f_locals is the write-through proxy of PEP 667 as on 3.13 (frameLocals() above);
//    frames are tracked when their call ends and something keeps them, as from 3.11
//    (kFramesTrackedWhenRetained). PyFrame_GetBack/PyFrame_GetCode are unchanged.
//  - the struct fields read here (co_qualname, co_filename, tp_dict, d_method, PyListObject's
//    allocated) keep their 3.13 layout in 3.14's headers as far as the accessors above use them;
//    _PyType_Lookup (lib/scanner/payloads.cpp, a private function) is still exported, and its
//    borrowed result is only compared with null there, which stays safe on 3.14t.
//  - PyWeakref_GetObject (the 3.10 to 3.12 branch of weakrefIsAlive()) is deprecated for removal
//    in 3.15; 3.14 takes the PyWeakref_GetRef branch.
// ---------------------------------------------------------------------------------------------

} // namespace leakgate::python

// The one place for CPython version differences (3.10 to 3.13). Every function says whether it
// returns a new or a borrowed reference. Call with the GIL held.
#pragma once

#include <Python.h>
#include <frameobject.h>

#include <memory>

namespace leakgate::python {

// Owning pointer for raw C-API references: releases with Py_XDECREF.
struct DecRef {
    void operator()(PyObject* object) const { Py_XDECREF(object); }
};
using OwnedRef = std::unique_ptr<PyObject, DecRef>;

inline OwnedRef own(PyObject* newReference) {
    return OwnedRef(newReference);
}

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

// Whether the collector tracks this object (only tracked objects can sit in cyclic garbage).
inline bool isGcTracked(PyObject* object) {
    return PyObject_IS_GC(object) && PyObject_GC_IsTracked(object);
}

} // namespace leakgate::python

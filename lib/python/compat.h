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

} // namespace leakgate::python

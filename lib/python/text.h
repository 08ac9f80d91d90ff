// Strings across the C++/Python line, without losing or refusing bytes. Python's file names and
// argv are bytes decoded with surrogateescape (PEP 383), and exception texts can hold lone
// surrogates; UTF-8 alone (pybind11's std::string cast) fails on both. Call with the GIL held.
#pragma once

#include <Python.h>

#include <pybind11/pybind11.h>

#include <string>

namespace leakgate::python {

// A str as bytes: UTF-8, the bytes that surrogateescape stands for restored (a file name comes
// back as the bytes it was), any other lone surrogate as `\udXXX`. A non-str is its str().
// Never throws; an object whose str() fails is "<unprintable>".
inline std::string textOf(PyObject* object) {
    if (!object) return {};
    PyObject* text = PyUnicode_Check(object) ? (Py_INCREF(object), object) : PyObject_Str(object);
    if (!text) {
        PyErr_Clear();
        return "<unprintable>";
    }
    Py_ssize_t size = 0;
    if (const char* data = PyUnicode_AsUTF8AndSize(text, &size)) {
        std::string out(data, static_cast<size_t>(size));
        Py_DECREF(text);
        return out;
    }
    PyErr_Clear();
    PyObject* bytes = PyUnicode_AsEncodedString(text, "utf-8", "surrogateescape");
    if (!bytes) {
        PyErr_Clear();
        bytes = PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace");
    }
    Py_DECREF(text);
    if (!bytes) {
        PyErr_Clear();
        return "<unprintable>";
    }
    std::string out(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
    Py_DECREF(bytes);
    return out;
}

inline std::string textOf(pybind11::handle object) {
    return textOf(object.ptr());
}

// A file name or argument for Python: its bytes decoded as os.fsdecode() does.
inline pybind11::str fsText(const std::string& bytes) {
    PyObject* text =
        PyUnicode_DecodeFSDefaultAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
    if (!text) throw pybind11::error_already_set();
    return pybind11::reinterpret_steal<pybind11::str>(text);
}

} // namespace leakgate::python

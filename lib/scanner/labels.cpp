#include "lib/scanner/labels.h"

#include "lib/python/compat.h"

#include <structmember.h> // T_OBJECT, T_OBJECT_EX: the object members of tp_members

#include <fmt/format.h>

#include <algorithm>

#include <filesystem>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace leakgate::scanner {
namespace {

using python::own;
using python::OwnedRef;

// The attribute names the labels read, made once (interned) rather than per lookup: labelling
// reads several attributes of every frame on a cycle.
PyObject* attributeName(const char* name) {
    static std::unordered_map<std::string_view, PyObject*> names; // New references, kept
    auto [entry, added] = names.try_emplace(name, nullptr);
    if (added) entry->second = PyUnicode_InternFromString(name);
    return entry->second;
}

// New reference or null; never leaves an exception set.
OwnedRef attribute(PyObject* object, const char* name) {
    PyObject* key = attributeName(name);
    PyObject* value = key ? PyObject_GetAttr(object, key) : nullptr;
    if (!value) PyErr_Clear();
    return own(value);
}

std::string utf8(PyObject* text) {
    if (!text || !PyUnicode_Check(text)) return {};
    const char* data = PyUnicode_AsUTF8(text);
    if (!data) {
        PyErr_Clear();
        return {};
    }
    return data;
}

std::string shortRepr(PyObject* object) {
    if (PyUnicode_Check(object)) return fmt::format("'{}'", utf8(object));
    if (PyLong_Check(object)) {
        long long value = PyLong_AsLongLong(object);
        if (!PyErr_Occurred()) return std::to_string(value);
        PyErr_Clear();
    }
    return fmt::format("<{}>", Py_TYPE(object)->tp_name);
}

EdgeLabel named(std::string kind, std::string label, std::string name = {}) {
    return {std::move(kind), std::move(label), std::move(name)};
}

// Searches a mapping's values (and keys) for `to`.
std::optional<EdgeLabel> labelInDict(PyObject* dict, PyObject* to, bool asAttributes) {
    if (!PyDict_Check(dict)) return std::nullopt;
    PyObject* key;   // Borrowed reference
    PyObject* value; // Borrowed reference
    Py_ssize_t position = 0;
    while (PyDict_Next(dict, &position, &key, &value)) {
        if (value == to) {
            if (asAttributes && PyUnicode_Check(key))
                return named("attribute", "." + utf8(key), utf8(key));
            return named("item", fmt::format("[{}]", shortRepr(key)),
                         PyUnicode_Check(key) ? utf8(key) : "");
        }
        if (key == to) return named("key", "key");
    }
    return std::nullopt;
}

std::optional<EdgeLabel> labelInSequence(PyObject* sequence, PyObject* to) {
    Py_ssize_t size = PyList_Check(sequence) ? PyList_GET_SIZE(sequence) : PyTuple_GET_SIZE(sequence);
    for (Py_ssize_t i = 0; i < size; ++i) {
        PyObject* item =
            PyList_Check(sequence) ? PyList_GET_ITEM(sequence, i) : PyTuple_GET_ITEM(sequence, i);
        if (item == to) return named("index", fmt::format("[{}]", i));
    }
    return std::nullopt;
}

bool nameIn(PyObject* names, PyObject* name) {
    if (!names || !PyTuple_Check(names)) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
        int equal = PyObject_RichCompareBool(PyTuple_GET_ITEM(names, i), name, Py_EQ);
        if (equal < 0) PyErr_Clear();
        if (equal > 0) return true;
    }
    return false;
}

std::optional<EdgeLabel> labelDeclared(PyObject* from, PyObject* to);

// A frame's own references: f_back, its code and namespaces, its locals and cells.
EdgeLabel labelFromFrame(PyObject* frame, PyObject* to, const char* owner = nullptr) {
    auto* raw = reinterpret_cast<PyFrameObject*>(frame);
    if (python::frameBack(raw).get() == to) return named("f_back", "f_back");
    OwnedRef code = python::frameCode(raw);
    if (code.get() == to) return named("f_code", "f_code");
    if (attribute(frame, "f_globals").get() == to) return named("f_globals", "f_globals");
    if (attribute(frame, "f_builtins").get() == to) return named("f_builtins", "f_builtins");
    if (attribute(frame, "f_trace").get() == to) return named("f_trace", "f_trace");
    std::string suffix = owner ? fmt::format(" of {}", owner) : "";

    OwnedRef locals = python::frameLocals(frame);
    if (locals && locals.get() == to) return named("f_locals", "f_locals");
    OwnedRef cellNames = attribute(code.get(), "co_cellvars");
    OwnedRef freeNames = attribute(code.get(), "co_freevars");
    OwnedRef items = locals ? own(PyMapping_Items(locals.get())) : nullptr;
    if (!items) PyErr_Clear();
    if (items && PyList_Check(items.get())) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.get()); ++i) {
            PyObject* pair = PyList_GET_ITEM(items.get(), i); // Borrowed reference
            PyObject* name = PyTuple_GET_ITEM(pair, 0);       // Borrowed reference
            PyObject* value = PyTuple_GET_ITEM(pair, 1);      // Borrowed reference
            bool isCellName = nameIn(cellNames.get(), name) || nameIn(freeNames.get(), name);
            if (isCellName && PyCell_Check(to) && PyCell_GET(to) == value) {
                return named("cell", fmt::format("closure cell `{}`{}", utf8(name), suffix), utf8(name));
            }
            if (value == to) {
                return named(
                    isCellName ? "cell" : "local",
                    fmt::format("{} `{}`{}", isCellName ? "closure cell" : "local", utf8(name), suffix),
                    utf8(name));
            }
        }
    }
    if (PyCell_Check(to)) return named("cell", "closure cell" + suffix);
    if (PyFunction_Check(to) && PyFunction_GET_CODE(to) == code.get())
        return named("function", "its function");
    return named("ref", "referent");
}

EdgeLabel labelFromFunction(PyObject* function, PyObject* to) {
    if (PyFunction_GET_CLOSURE(function) == to) return named("__closure__", "__closure__");
    if (PyFunction_GET_GLOBALS(function) == to) return named("__globals__", "__globals__");
    if (PyFunction_GET_DEFAULTS(function) == to) return named("__defaults__", "__defaults__");
    if (PyFunction_GET_KW_DEFAULTS(function) == to) return named("__kwdefaults__", "__kwdefaults__");
    if (PyFunction_GET_CODE(function) == to) return named("__code__", "__code__");
    OwnedRef dict = attribute(function, "__dict__");
    if (dict.get() == to) return named("__dict__", "__dict__");
    if (dict) {
        if (auto label = labelInDict(dict.get(), to, true)) return *label;
    }
    if (auto label = labelDeclared(function, to)) return *label; // __name__, __module__, __doc__...
    return named("ref", "referent");
}

std::optional<EdgeLabel> labelAttributes(PyObject* from, PyObject* to) {
    static const char* const kKnown[] = {
        "tb_frame", "tb_next",   "__traceback__", "__context__",    "__cause__",     "__self__",
        "__func__", "gi_frame",  "cr_frame",      "ag_frame",       "cell_contents", "__wrapped__",
        "func",     "args",      "keywords",      "fget",           "fset",          "fdel",
        "__mro__",  "__bases__", "_objects",      "default_factory"};
    for (const char* name : kKnown) {
        OwnedRef value = attribute(from, name);
        if (value && value.get() == to) return named(name, name, name);
    }
    return std::nullopt;
}

std::optional<EdgeLabel> labelInstance(PyObject* from, PyObject* to) {
    if (PyModule_Check(from)) {
        PyObject* dict = PyModule_GetDict(from); // Borrowed reference
        if (dict == to) return named("__dict__", "__dict__");
        return std::nullopt;
    }
    if (PyType_Check(from)) {
        OwnedRef dict = python::typeDict(reinterpret_cast<PyTypeObject*>(from));
        if (dict && dict.get() == to) return named("__dict__", "__dict__");
        if (dict) return labelInDict(dict.get(), to, true);
        return std::nullopt;
    }
    OwnedRef dict = attribute(from, "__dict__");
    if (dict && dict.get() == to) return named("__dict__", "__dict__");
    // 3.11+ keeps instance attributes inline, so the edge may skip the dict.
    if (dict) {
        if (auto label = labelInDict(dict.get(), to, true)) return *label;
    }
    OwnedRef mro = attribute(reinterpret_cast<PyObject*>(Py_TYPE(from)), "__mro__");
    if (mro && PyTuple_Check(mro.get())) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro.get()); ++i) {
            OwnedRef slots = attribute(PyTuple_GET_ITEM(mro.get(), i), "__slots__");
            if (!slots) continue;
            // PySequence_List does not steal the sequence it copies: that one is released here too
            // (it leaked a reference to every `__slots__` read, and a tuple for a string one).
            OwnedRef sequence = own(PyUnicode_Check(slots.get()) ? Py_BuildValue("(O)", slots.get())
                                                                 : Py_NewRef(slots.get()));
            OwnedRef names = own(sequence ? PySequence_List(sequence.get()) : nullptr);
            if (!names) {
                PyErr_Clear();
                continue;
            }
            for (Py_ssize_t j = 0; j < PyList_GET_SIZE(names.get()); ++j) {
                PyObject* name = PyList_GET_ITEM(names.get(), j); // Borrowed reference
                if (!PyUnicode_Check(name)) continue;
                OwnedRef value = own(PyObject_GetAttr(from, name));
                if (!value) PyErr_Clear();
                if (value && value.get() == to) return named("attribute", "." + utf8(name), utf8(name));
            }
        }
    }
    return std::nullopt;
}

// What a type declares of its own: the object members of tp_members (a C type's fields and a
// class's __slots__, read at their offsets) and the getters of tp_getset, along the MRO. A C
// type's edges that no attribute in __dict__ names are found here: an asyncio Future's
// `_exception`, a Task's `_coro`, a weakref's `__callback__`, a ctypes object's `_b_base_`.
std::optional<EdgeLabel> labelDeclared(PyObject* from, PyObject* to) {
    PyObject* mro = Py_TYPE(from)->tp_mro; // Borrowed reference
    if (!mro || !PyTuple_Check(mro)) return std::nullopt;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
        auto* type = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
        for (PyMemberDef* member = type->tp_members; member && member->name; ++member) {
            if (member->type != T_OBJECT && member->type != T_OBJECT_EX) continue;
#ifdef Py_RELATIVE_OFFSET
            if (member->flags & Py_RELATIVE_OFFSET) continue; // offset into a base's data
#endif
            if (member->offset <= 0) continue;
            PyObject* value =
                *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(from) + member->offset);
            if (value == to) return named("attribute", fmt::format(".{}", member->name), member->name);
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
        auto* type = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
        for (PyGetSetDef* getset = type->tp_getset; getset && getset->name; ++getset) {
            if (!getset->get) continue;
            OwnedRef value = own(getset->get(from, getset->closure));
            if (!value) {
                PyErr_Clear();
                continue;
            }
            if (value.get() == to)
                return named("attribute", fmt::format(".{}", getset->name), getset->name);
        }
    }
    return std::nullopt;
}

bool typeNamed(PyObject* object, std::string_view name) {
    PyObject* mro = Py_TYPE(object)->tp_mro; // Borrowed reference
    if (!mro || !PyTuple_Check(mro)) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
        if (name == reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i))->tp_name) return true;
    }
    return false;
}

// The fields of asyncio's C Future (and Task) that no member or getter shows: the traceback of its
// exception and the CancelledError it made, named as the pure-Python Future names them.
std::optional<EdgeLabel> labelFutureFields(PyObject* from, PyObject* to) {
    if (!typeNamed(from, "_asyncio.Future")) return std::nullopt;
    if (PyTraceBack_Check(to)) return named("attribute", "._exception_tb", "_exception_tb");
    if (PyExceptionInstance_Check(to)) return named("attribute", "._cancelled_exc", "_cancelled_exc");
    return std::nullopt;
}

// Containers of C types without an index or key the generic paths read: a deque's items (by
// position) and a contextvars.Context's values (by variable).
std::optional<EdgeLabel> labelContainerItems(PyObject* from, PyObject* to) {
    if (typeNamed(from, "collections.deque")) {
        OwnedRef iterator = own(PyObject_GetIter(from));
        if (!iterator) {
            PyErr_Clear();
            return std::nullopt;
        }
        for (Py_ssize_t index = 0;; ++index) {
            OwnedRef item = own(PyIter_Next(iterator.get()));
            if (!item) break;
            if (item.get() == to) return named("index", fmt::format("[{}]", index));
        }
        PyErr_Clear();
        return std::nullopt;
    }
    if (PyContext_CheckExact(from)) {
        OwnedRef items = own(PyObject_CallMethod(from, "items", nullptr));
        OwnedRef list = own(items ? PySequence_List(items.get()) : nullptr);
        if (!list) {
            PyErr_Clear();
            return std::nullopt;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list.get()); ++i) {
            PyObject* pair = PyList_GET_ITEM(list.get(), i); // Borrowed reference
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) continue;
            PyObject* variable = PyTuple_GET_ITEM(pair, 0); // Borrowed reference
            if (variable == to) return named("key", "context variable");
            if (PyTuple_GET_ITEM(pair, 1) != to) continue;
            std::string name = utf8(attribute(variable, "name").get());
            return named("item", fmt::format("context variable `{}`", name), name);
        }
    }
    return std::nullopt;
}

} // namespace

EdgeLabel labelEdge(PyObject* from, PyObject* to) {
    // Labelling must not disturb an exception the caller is handling.
    python::SavedException saved; // put back when this returns
    return [&]() -> EdgeLabel {
        if (PyFrame_Check(from)) return labelFromFrame(from, to);
        if (PyFunction_Check(from)) return labelFromFunction(from, to);
        if (PyDict_Check(from)) {
            if (auto label = labelInDict(from, to, false)) return *label;
        }
        if (PyList_Check(from) || PyTuple_Check(from)) {
            if (auto label = labelInSequence(from, to)) return *label;
        }
        if (PyAnySet_Check(from)) return named("element", "element");
        if (PyCell_Check(from)) return named("cell_contents", "cell_contents");
        if (auto label = labelAttributes(from, to)) return *label;
        if (PyGen_Check(from) || PyCoro_CheckExact(from) || PyAsyncGen_CheckExact(from)) {
            // 3.11+ generators embed their frame: the edge reaches the locals directly.
            for (const char* name : {"gi_frame", "cr_frame", "ag_frame"}) {
                OwnedRef frame = attribute(from, name);
                if (frame && PyFrame_Check(frame.get())) {
                    std::string owner = fmt::format("suspended `{}`", frameInfo(frame.get()).function);
                    return labelFromFrame(frame.get(), to, owner.c_str());
                }
            }
        }
        if (PyExceptionInstance_Check(from) || !PyTuple_Check(from)) {
            if (auto label = labelInstance(from, to)) return *label;
        }
        if (auto label = labelDeclared(from, to)) return *label;
        if (auto label = labelContainerItems(from, to)) return *label;
        if (auto label = labelFutureFields(from, to)) return *label;
        return named("ref", "referent");
    }();
}

FrameInfo frameInfo(PyObject* frame) {
    auto* raw = reinterpret_cast<PyFrameObject*>(frame);
    OwnedRef code = python::frameCode(raw);
    FrameInfo info;
    info.function = utf8(python::codeQualifiedName(code.get()).get());
    info.file = utf8(python::codeFilename(reinterpret_cast<PyCodeObject*>(code.get())));
    info.line = PyFrame_GetLineNumber(raw);
    if (PyErr_Occurred()) PyErr_Clear();
    return info;
}

namespace {
std::vector<std::string>& harnessFiles() {
    static std::vector<std::string> files; // a worker writes one or two
    return files;
}
} // namespace

bool isHarnessFile(std::string_view file) {
    if (file.starts_with("<leakgate")) return true;
    const auto& files = harnessFiles();
    return std::find(files.begin(), files.end(), file) != files.end();
}

void addHarnessFile(const std::string& file) {
    harnessFiles().push_back(file);
}

namespace {
// A frame's code file name, for the checks made on every frame of every cycle: the file name
// only, no line number, no copy. Null when it has none. The code object outlives the call: the
// frame holds it.
const char* frameFileName(PyObject* frame) {
    OwnedRef code = python::frameCode(reinterpret_cast<PyFrameObject*>(frame));
    PyObject* file = python::codeFilename(reinterpret_cast<PyCodeObject*>(code.get())); // Borrowed
    const char* text = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : nullptr;
    if (!text) PyErr_Clear();
    return text;
}
} // namespace

bool isHarnessFrame(PyObject* frame) {
    const char* file = frameFileName(frame);
    return file && isHarnessFile(file);
}

namespace {
std::string& launcherFile() {
    static std::string file;
    return file;
}
} // namespace

void setLauncherFile(const std::string& file) {
    launcherFile() = file;
}

bool isLauncherFrame(PyObject* frame) {
    const char* file = frameFileName(frame);
    return file && !launcherFile().empty() && launcherFile() == file;
}

bool isStandardLibraryFrame(PyObject* frame) {
    const char* file = frameFileName(frame);
    return file && isStandardLibraryFile(file);
}

bool isImportMachineryFrame(PyObject* frame) {
    const char* file = frameFileName(frame);
    if (!file) return false;
    const std::string_view name(file);
    // Frozen since 3.3 ("<frozen importlib._bootstrap>"); a build may run the source files.
    return name.starts_with("<frozen importlib._bootstrap") ||
           name.ends_with("/importlib/_bootstrap.py") ||
           name.ends_with("/importlib/_bootstrap_external.py");
}

namespace {
// The standard library's directories (sysconfig's stdlib and platstdlib of this interpreter, a
// venv's base), read once, each ending in '/'.
const std::vector<std::string>& standardLibraryDirectories() {
    static const std::vector<std::string> directories = [] {
        std::vector<std::string> out;
        python::SavedException saved;
        OwnedRef sysconfig = own(PyImport_ImportModule("sysconfig"));
        OwnedRef paths =
            sysconfig ? own(PyObject_CallMethod(sysconfig.get(), "get_paths", nullptr)) : nullptr;
        for (const char* key : {"stdlib", "platstdlib"}) {
            PyObject* path =
                paths && PyDict_Check(paths.get()) ? PyDict_GetItemString(paths.get(), key) : nullptr;
            std::string text = utf8(path);
            if (text.empty()) continue;
            std::error_code error;
            std::string real = std::filesystem::weakly_canonical(text, error).string();
            for (const std::string& directory : {text, real}) {
                if (!directory.empty())
                    out.push_back(directory.ends_with('/') ? directory : directory + "/");
            }
        }
        PyErr_Clear();
        return out;
    }();
    return directories;
}
} // namespace

bool isStandardLibraryFile(std::string_view file) {
    if (file.starts_with("<frozen ")) return true; // importlib's bootstrap, frozen into the binary
    if (file.find("/site-packages/") != std::string_view::npos ||
        file.find("/dist-packages/") != std::string_view::npos)
        return false;
    for (const std::string& directory : standardLibraryDirectories()) {
        if (file.starts_with(directory)) return true;
    }
    return false;
}

std::string freeVariableName(PyObject* function, Py_ssize_t index) {
    if (!PyFunction_Check(function)) return {};
    OwnedRef names = attribute(PyFunction_GET_CODE(function), "co_freevars");
    if (!names || !PyTuple_Check(names.get()) || index >= PyTuple_GET_SIZE(names.get())) return {};
    return utf8(PyTuple_GET_ITEM(names.get(), index));
}

std::string describeObject(PyObject* object) {
    if (PyFrame_Check(object)) {
        FrameInfo info = frameInfo(object);
        if (isHarnessFile(info.file))
            return fmt::format("a frame of leakgate's workload (`{}`)", info.function);
        return fmt::format("frame of `{}` ({}:{})", info.function,
                           std::filesystem::path(info.file).filename().string(), info.line);
    }
    if (PyFunction_Check(object)) {
        return fmt::format("function `{}`", utf8(attribute(object, "__qualname__").get()));
    }
    if (PyType_Check(object))
        return fmt::format("class `{}`", reinterpret_cast<PyTypeObject*>(object)->tp_name);
    if (PyModule_Check(object)) {
        const char* name = PyModule_GetName(object);
        if (!name) PyErr_Clear();
        return fmt::format("module `{}`", name ? name : "?");
    }
    if (PyExceptionInstance_Check(object))
        return fmt::format("`{}` exception", Py_TYPE(object)->tp_name);
    if (PyList_Check(object)) return fmt::format("list of {}", PyList_GET_SIZE(object));
    if (PyTuple_Check(object)) return fmt::format("tuple of {}", PyTuple_GET_SIZE(object));
    if (PyDict_Check(object)) return fmt::format("dict of {}", PyDict_GET_SIZE(object));
    return fmt::format("`{}` object", Py_TYPE(object)->tp_name);
}

} // namespace leakgate::scanner

#include "lib/scanner/payloads.h"

#include "lib/scanner/object_graph.h"

#include <pybind11/pybind11.h>

#include <unordered_map>

namespace leakgate::scanner {
namespace {

namespace py = pybind11;

// How an object's memory is read, decided once per type.
enum class Kind {
    kNone,
    kTorch,          // torch.Tensor: its untyped storage, on its device
    kNumpy,          // numpy.ndarray: a view's owning base (an owner's data is in its __sizeof__)
    kCudaInterface,  // __cuda_array_interface__ (CuPy, Numba, Warp, JAX on a GPU)
    kDlpack,         // __dlpack__ with nbytes (JAX, and arrays like it)
    kArrayInterface, // __array_interface__ (host arrays of other libraries)
    kMmap,
    kBuffer, // the buffer protocol, where sys.getsizeof does not count the buffer
};

// A module the program imported, or nothing: leakgate never imports a framework itself.
py::object imported(const char* name) {
    PyObject* modules = PyImport_GetModuleDict();           // Borrowed reference
    PyObject* module = PyDict_GetItemString(modules, name); // Borrowed reference
    if (!module || module == Py_None) return py::object();
    return py::reinterpret_borrow<py::object>(module);
}

bool typeHas(PyTypeObject* type, const char* name) {
    py::str key(name);
    return _PyType_Lookup(type, key.ptr()) != nullptr;
}

// The type of torch.Tensor and numpy.ndarray, looked up each time a new type is seen (a program
// may import them after the first read).
bool isSubtypeOf(PyTypeObject* type, const char* module, const char* attribute) {
    py::object found = imported(module);
    if (!found) return false;
    PyObject* base = PyObject_GetAttrString(found.ptr(), attribute); // New reference
    if (!base) {
        PyErr_Clear();
        return false;
    }
    const bool result =
        PyType_Check(base) && PyType_IsSubtype(type, reinterpret_cast<PyTypeObject*>(base));
    Py_DECREF(base);
    return result;
}

Kind kindOf(PyTypeObject* type) {
    static std::unordered_map<PyTypeObject*, Kind> known;
    if (auto found = known.find(type); found != known.end()) return found->second;
    Kind kind = Kind::kNone;
    if (isSubtypeOf(type, "torch", "Tensor")) {
        kind = Kind::kTorch;
    } else if (isSubtypeOf(type, "numpy", "ndarray")) {
        kind = Kind::kNumpy;
    } else if (typeHas(type, "__cuda_array_interface__")) {
        kind = Kind::kCudaInterface;
    } else if (typeHas(type, "__dlpack__") && typeHas(type, "nbytes")) {
        kind = Kind::kDlpack;
    } else if (typeHas(type, "__array_interface__")) {
        kind = Kind::kArrayInterface;
    } else if (std::string_view(type->tp_name) == "mmap.mmap") {
        kind = Kind::kMmap;
    } else if (type->tp_as_buffer && type->tp_as_buffer->bf_getbuffer && type != &PyBytes_Type &&
               type != &PyByteArray_Type && type != &PyMemoryView_Type) {
        kind = Kind::kBuffer;
    }
    known.emplace(type, kind);
    return kind;
}

std::int64_t getsizeof(PyObject* object) {
    Py_ssize_t size = -1;
    if (PyObject* result = PyObject_CallMethod(object, "__sizeof__", nullptr)) {
        size = PyLong_AsSsize_t(result);
        Py_DECREF(result);
    }
    PyErr_Clear();
    return size;
}

// bytes of an array interface: shape times the item size of its typestr ("<f4": 4).
std::int64_t interfaceBytes(const py::dict& interface) {
    std::int64_t count = 1;
    for (py::handle extent : py::tuple(interface["shape"]))
        count *= extent.cast<std::int64_t>();
    const std::string typestr = interface["typestr"].cast<std::string>();
    const std::int64_t item = typestr.size() > 2 ? std::stoll(typestr.substr(2)) : 1;
    return count * item;
}

std::uintptr_t interfaceAddress(const py::dict& interface) {
    py::object data = interface.contains("data") ? py::object(interface["data"]) : py::none();
    if (py::isinstance<py::tuple>(data) && py::len(data) > 0 && !data[py::int_(0)].is_none())
        return data[py::int_(0)].cast<std::uintptr_t>();
    return 0;
}

std::optional<Payload> read(PyObject* object, Kind kind) {
    py::handle handle(object);
    Payload memory;
    memory.key = reinterpret_cast<std::uintptr_t>(object);
    switch (kind) {
    case Kind::kNone:
        return std::nullopt;
    case Kind::kTorch: {
        py::object storage = handle.attr("untyped_storage")();
        memory.bytes = storage.attr("nbytes")().cast<std::int64_t>();
        memory.key = storage.attr("data_ptr")().cast<std::uintptr_t>();
        const std::string device = py::str(handle.attr("device").attr("type"));
        memory.kind = device == "cpu" ? "host" : "device";
        if (device == "meta") return std::nullopt;
        break;
    }
    case Kind::kNumpy: {
        // An array that owns its data counts it in __sizeof__; a view is kept by its base chain's
        // owner, whose memory is the payload.
        py::object base = handle.attr("base");
        if (base.is_none()) {
            if (!handle.attr("flags").attr("owndata").cast<bool>()) return std::nullopt;
            memory.bytes = handle.attr("nbytes").cast<std::int64_t>();
            memory.kind = "host";
            memory.inSizeof = true;
            break;
        }
        auto isArray = [](const py::object& object) {
            return kindOf(Py_TYPE(object.ptr())) == Kind::kNumpy;
        };
        while (isArray(base)) {
            py::object next = base.attr("base");
            if (next.is_none()) break;
            base = next;
        }
        memory.key = reinterpret_cast<std::uintptr_t>(base.ptr());
        memory.kind = "host";
        if (isArray(base)) {
            memory.bytes = base.attr("nbytes").cast<std::int64_t>();
        } else if (auto owned = ownedMemory(base.ptr())) {
            owned->inSizeof = false; // this view's __sizeof__ does not count it
            return owned;            // an mmap, a tensor, a buffer
        } else {
            memory.bytes = getsizeof(base.ptr());
        }
        break;
    }
    case Kind::kCudaInterface:
    case Kind::kArrayInterface: {
        const bool device = kind == Kind::kCudaInterface;
        py::dict interface = handle.attr(device ? "__cuda_array_interface__" : "__array_interface__");
        memory.bytes = interfaceBytes(interface);
        if (std::uintptr_t address = interfaceAddress(interface)) memory.key = address;
        memory.kind = device ? "device" : "host";
        break;
    }
    case Kind::kDlpack: {
        memory.bytes = handle.attr("nbytes").cast<std::int64_t>();
        // DLPack's device types: 1 CPU, 3 CUDA host (pinned) memory; the rest are devices.
        py::tuple device = handle.attr("__dlpack_device__")();
        const int type = device[0].cast<int>();
        memory.kind = type == 1 || type == 3 ? "host" : "device";
        break;
    }
    case Kind::kMmap:
        memory.bytes = static_cast<std::int64_t>(py::len(handle));
        memory.kind = "host";
        break;
    case Kind::kBuffer: {
        Py_buffer view;
        if (PyObject_GetBuffer(object, &view, PyBUF_SIMPLE) != 0) {
            PyErr_Clear();
            return std::nullopt;
        }
        memory.bytes = view.len;
        memory.key = reinterpret_cast<std::uintptr_t>(view.buf);
        PyBuffer_Release(&view);
        // array.array and the like count their buffer in __sizeof__ already.
        if (getsizeof(object) >= memory.bytes) return std::nullopt;
        memory.kind = "host";
        break;
    }
    }
    if (memory.bytes <= 0) return std::nullopt;
    if (memory.key == 0) memory.key = reinterpret_cast<std::uintptr_t>(object);
    return memory;
}

} // namespace

std::optional<Payload> ownedMemory(PyObject* object) {
    const Kind kind = kindOf(Py_TYPE(object));
    if (kind == Kind::kNone) return std::nullopt;
    try {
        return read(object, kind);
    } catch (py::error_already_set&) {
        PyErr_Clear();
    } catch (py::cast_error&) {
    } catch (std::exception&) {
    }
    return std::nullopt;
}

Payloads findPayloads(const ObjectGraph& graph, const Payloads* known) {
    Payloads found;
    if (known) found = *known;
    auto consider = [&](PyObject* object) {
        if (found.count(object)) return;
        if (std::optional<Payload> memory = ownedMemory(object))
            found.emplace(object, std::move(*memory));
    };
    for (PyObject* object : graph.objects())
        consider(object);
    for (size_t leaf = 0; leaf < graph.leafCount(); ++leaf)
        consider(graph.leafObject(static_cast<std::uint32_t>(leaf)));
    return found;
}

} // namespace leakgate::scanner

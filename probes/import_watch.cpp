// The import watch (probes/import_watch.h). A load starts at the "import" audit event that
// importlib raises for a module not in sys.modules, or, for importlib.import_module (whose Python
// code raises none), when its outermost call names a module not yet loaded. It ends when the
// outermost import statement returns: builtins.__import__ (every `import` statement and
// PyImport_Import) and importlib.import_module are wrapped for the watch's lifetime.
#include "probes/import_watch.h"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

struct Watch {
    std::vector<ImportListener*> listeners;
    bool loading = false;
    int depth = 0; // import statements under way, nested
    py::object originalImport, originalImportModule;

    void starts(bool bounded) {
        if (loading) return;
        loading = true;
        for (ImportListener* listener : std::vector<ImportListener*>(listeners))
            listener->importStarts(bounded);
    }
    void leave() {
        if (--depth > 0 || !loading) return;
        loading = false;
        for (ImportListener* listener : std::vector<ImportListener*>(listeners))
            listener->importEnds();
    }
};

Watch& watch() {
    static Watch* the = new Watch; // never destroyed: its Python objects outlive no interpreter
    return *the;
}

// Whether `name` (an absolute module name) is loaded already; a relative one may not be.
bool loaded(py::handle name) {
    if (!PyUnicode_Check(name.ptr()) || PyUnicode_GET_LENGTH(name.ptr()) == 0 ||
        PyUnicode_READ_CHAR(name.ptr(), 0) == '.')
        return false;
    PyObject* module = PyDict_GetItemWithError(PyImport_GetModuleDict(), name.ptr()); // Borrowed
    if (!module) PyErr_Clear();
    return module != nullptr;
}

int auditHook(const char* event, PyObject*, void*) {
    Watch& w = watch();
    if (!w.listeners.empty() && std::string_view(event) == "import") w.starts(/*bounded=*/w.depth > 0);
    return 0;
}

void install() {
    static bool hooked = false; // an audit hook cannot be removed: one for the process
    if (!hooked) {
        PySys_AddAuditHook(auditHook, nullptr);
        hooked = true;
    }
    Watch& w = watch();
    w.loading = false;
    w.depth = 0;
    py::module_ builtins = py::module_::import("builtins");
    py::module_ importlib = py::module_::import("importlib");
    w.originalImport = builtins.attr("__import__");
    w.originalImportModule = importlib.attr("import_module");
    // `pure`: the call loads through importlib's Python code (import_module), which raises no
    // "import" audit event: a name not yet in sys.modules starts a load there and then.
    auto wrap = [](py::object original, bool pure) {
        return py::cpp_function([original, pure](py::args args, py::kwargs kwargs) -> py::object {
            Watch& w = watch();
            if (w.listeners.empty()) return original(*args, **kwargs);
            if (pure && w.depth == 0 && args.size() > 0 && !loaded(args[0])) w.starts(/*bounded=*/true);
            ++w.depth;
            struct Leave {
                ~Leave() {
                    if (!watch().listeners.empty()) watch().leave();
                }
            } leave;
            return original(*args, **kwargs);
        });
    };
    builtins.attr("__import__") = wrap(w.originalImport, false);
    importlib.attr("import_module") = wrap(w.originalImportModule, true);
}

void restore() {
    Watch& w = watch();
    if (!w.originalImport) return;
    py::module_::import("builtins").attr("__import__") = w.originalImport;
    py::module_::import("importlib").attr("import_module") = w.originalImportModule;
    w.originalImport = py::object();
    w.originalImportModule = py::object();
}

} // namespace

void watchImports(ImportListener* listener) {
    Watch& w = watch();
    if (std::find(w.listeners.begin(), w.listeners.end(), listener) != w.listeners.end()) return;
    if (w.listeners.empty()) install();
    w.listeners.push_back(listener);
}

void unwatchImports(ImportListener* listener) {
    Watch& w = watch();
    auto found = std::find(w.listeners.begin(), w.listeners.end(), listener);
    if (found == w.listeners.end()) return;
    w.listeners.erase(found);
    if (w.listeners.empty() && Py_IsInitialized()) {
        try {
            restore();
        } catch (py::error_already_set&) {
            PyErr_Clear();
        }
    }
}

bool importing() {
    return watch().loading;
}

} // namespace leakgate::probes

#include "lib/workloads/harness_loader.h"

#include "leakgate/errors.h"
#include "lib/base/data_dir.h"
#include "lib/python/compat.h"
#include "lib/python/text.h"

#include "probes/probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>

#include <fstream>
#include <sstream>
#include <vector>

namespace leakgate::workloads {

namespace py = pybind11;

namespace {

// Compiles the file at `path` under `fileName` and runs it in the namespace of `module`.
void execOwnSource(const std::filesystem::path& path, const std::string& fileName,
                   const py::module_& module) {
    std::ifstream in(path);
    if (!in) throw EnvironmentError(fmt::format("cannot read {}", path.string()));
    std::stringstream source;
    source << in.rdbuf();
    py::module_ builtins = py::module_::import("builtins");
    py::dict scope = module.attr("__dict__");
    scope["__builtins__"] = builtins;
    builtins.attr("exec")(builtins.attr("compile")(source.str(), fileName, "exec"), scope);
}

// An entry of sys.meta_path for as long as it lives: the finder of a package's modules while its
// __init__.py imports them.
class MetaPathEntry {
  public:
    explicit MetaPathEntry(py::object finder)
        : metaPath_(py::module_::import("sys").attr("meta_path")), finder_(std::move(finder)) {
        metaPath_.append(finder_);
    }
    ~MetaPathEntry() {
        // Raw calls: an exception may be on its way out, and a destructor throws nothing.
        PyObject* removed = PyObject_CallMethod(metaPath_.ptr(), "remove", "O", finder_.ptr());
        if (removed)
            Py_DECREF(removed);
        else
            PyErr_Clear();
    }
    MetaPathEntry(const MetaPathEntry&) = delete;
    MetaPathEntry& operator=(const MetaPathEntry&) = delete;
    MetaPathEntry(MetaPathEntry&&) = delete;
    MetaPathEntry& operator=(MetaPathEntry&&) = delete;

  private:
    py::list metaPath_;
    py::object finder_;
};

} // namespace

py::module_ loadOwnModule(const std::string& relativePath, const std::string& moduleName,
                          const std::string& fileName) {
    py::module_ module = py::reinterpret_steal<py::module_>(PyModule_New(moduleName.c_str()));
    execOwnSource(base::dataDir() / relativePath, fileName, module);
    py::module_::import("sys").attr("modules")[py::str(moduleName)] = module;
    return module;
}

py::module_ loadOwnPackage(const std::string& relativeDir, const std::string& packageName,
                           const std::string& fileName) {
    const std::filesystem::path folder = base::dataDir() / relativeDir;
    const std::string prefix = packageName + ".";
    const std::string stem =
        fileName.ends_with(">") ? fileName.substr(0, fileName.size() - 1) : fileName;
    py::object simpleNamespace = py::module_::import("types").attr("SimpleNamespace");
    // importlib's loader protocol: the module as importlib makes it, run from the folder's file.
    py::object loader = simpleNamespace(
        py::arg("create_module") = py::cpp_function([](py::handle) { return py::none(); }),
        py::arg("exec_module") = py::cpp_function([folder, prefix, stem](const py::module_& module) {
            const std::string name =
                py::str(module.attr("__name__")).cast<std::string>().substr(prefix.size());
            execOwnSource(folder / (name + ".py"), fmt::format("{}/{}.py>", stem, name), module);
        }));
    // The finder of the package's modules, the one way to them: the package's __path__ is empty.
    py::object finder = simpleNamespace(
        py::arg("find_spec") = py::cpp_function(
            [folder, prefix, loader](const std::string& fullName, py::handle, py::handle) -> py::object {
                if (!fullName.starts_with(prefix)) return py::none();
                const std::string name = fullName.substr(prefix.size());
                if (name.find('.') != std::string::npos ||
                    !std::filesystem::is_regular_file(folder / (name + ".py")))
                    return py::none();
                return py::module_::import("importlib.util").attr("spec_from_loader")(fullName, loader);
            },
            py::arg("fullname"), py::arg("path"), py::arg("target") = py::none()));

    py::module_ package = py::reinterpret_steal<py::module_>(PyModule_New(packageName.c_str()));
    package.attr("__path__") = py::list();
    package.attr("__package__") = packageName;
    py::dict modules = py::module_::import("sys").attr("modules");
    modules[py::str(packageName)] = package; // its modules' relative imports go through it
    try {
        MetaPathEntry entry(finder);
        execOwnSource(folder / "__init__.py", fileName, package);
    } catch (...) {
        modules.attr("pop")(packageName, py::none());
        throw;
    }
    return package;
}

namespace {

// What leakgate's own Python is made of in this worker, taken when the harness
// is loaded, before any code under test runs: every function, class and module
// bound in the harness and in
// `_leakgate` (the sentinels' module), each function's code, defaults and
// closure, each class's attributes; the reference runtime once the harness
// imported it (sealReference) and the decorate workload's kernels module
// (sealKernels). The harness's data (its caches, the loaded target) may change;
// its code may not.
class Seal {
  public:
    void add(const std::string& where, py::handle dict) {
        PyObject *key, *value;
        Py_ssize_t position = 0;
        while (PyDict_Next(dict.ptr(), &position, &key, &value)) {
            if (!PyUnicode_Check(key)) continue;
            const bool function = PyFunction_Check(value);
            const bool type = PyType_Check(value);
            const bool builtin = PyCFunction_Check(value) || PyInstanceMethod_Check(value);
            const bool module = PyModule_Check(value); // `importlib`, `_leakgate`: what it calls through
            if (!function && !type && !builtin && !module) continue;
            const std::string name = where + "." + PyUnicode_AsUTF8(key);
            Entry entry{name,
                        py::reinterpret_borrow<py::object>(dict),
                        py::reinterpret_borrow<py::object>(key),
                        py::reinterpret_borrow<py::object>(value),
                        {},
                        {},
                        {},
                        {}};
            if (function) {
                auto* raw = reinterpret_cast<PyFunctionObject*>(value);
                entry.code = py::reinterpret_borrow<py::object>(raw->func_code);
                entry.defaults = py::reinterpret_borrow<py::object>(
                    raw->func_defaults ? raw->func_defaults : Py_None);
                entry.kwdefaults = py::reinterpret_borrow<py::object>(
                    raw->func_kwdefaults ? raw->func_kwdefaults : Py_None);
                entry.closure =
                    py::reinterpret_borrow<py::object>(raw->func_closure ? raw->func_closure : Py_None);
            }
            entries_.push_back(std::move(entry));
            if (type && depth_ == 0) {
                ++depth_;
                add(name,
                    py::reinterpret_borrow<py::object>(reinterpret_cast<PyTypeObject*>(value)->tp_dict));
                --depth_;
            }
        }
    }

    std::optional<std::string> changed() const {
        if (changedWhileRunning_) return changedWhileRunning_;
        if (unwatched_) return unwatched_;
        for (const Entry& entry : entries_) {
            PyObject* now = PyDict_GetItemWithError(entry.dict.ptr(),
                                                    entry.key.ptr()); // Borrowed
            if (!now) PyErr_Clear();
            if (now != entry.value.ptr())
                return fmt::format("leakgate's harness was changed under it: `{}` was "
                                   "{} by the code under test",
                                   entry.name, now ? "replaced" : "deleted");
            if (!entry.code) continue;
            auto* function = reinterpret_cast<PyFunctionObject*>(now);
            auto same = [](PyObject* field, const py::object& kept) {
                return (field ? field : Py_None) == kept.ptr();
            };
            if (function->func_code != entry.code.ptr() ||
                !same(function->func_defaults, entry.defaults) ||
                !same(function->func_kwdefaults, entry.kwdefaults) ||
                !same(function->func_closure, entry.closure))
                return fmt::format("leakgate's harness was changed under it: the code, "
                                   "defaults or closure of `{}` "
                                   "were replaced by the code under test",
                                   entry.name);
        }
        return std::nullopt;
    }

    // A sealed dict's entry rebound or removed, the dict cleared or replaced in
    // bulk (the watchers, from 3.12): remembered with where the code under test
    // did it.
    void dictChanged(PyObject* dict, PyObject* key, PyObject* value) {
        if (changedWhileRunning_) return;
        for (const Entry& entry : entries_) {
            if (entry.dict.ptr() != dict) continue;
            if (key) {
                const int same = PyObject_RichCompareBool(key, entry.key.ptr(), Py_EQ);
                if (same < 0) PyErr_Clear();
                if (same != 1 || value == entry.value.ptr()) continue;
            }
            // The words of changed()'s, with where and when: the same change, seen as it happened.
            changedWhileRunning_ = fmt::format(
                "leakgate's harness was changed under it: `{}` was {} by the code under test ({}, while "
                "the workload ran; put back before the reads or not)",
                entry.name, value ? "replaced" : "deleted", whereNow());
            return;
        }
    }
    void functionChanged(PyFunctionObject* function) {
        if (changedWhileRunning_) return;
        for (const Entry& entry : entries_) {
            if (!entry.code || entry.value.ptr() != reinterpret_cast<PyObject*>(function)) continue;
            changedWhileRunning_ = fmt::format(
                "leakgate's harness was changed under it: the code, defaults or closure of `{}` were "
                "replaced by the code under test ({}, while the workload ran; put back before the reads "
                "or not)",
                entry.name, whereNow());
            return;
        }
    }

    // From 3.12: every sealed dict and function watched from now on. The watches
    // stay for the process (a later seal may share a dict, `_leakgate`'s); the
    // callbacks ask the current seal only. A watcher that cannot be had (CPython
    // gives 8 of each kind per interpreter, and code that ran before the harness
    // took them all) or a dict that cannot be watched makes every measurement under
    // this seal invalid: a change put back before the reads would not be seen.
    void watch();

  private:
    struct Entry {
        std::string name;
        py::object dict, key, value;
        py::object code, defaults, kwdefaults, closure; // functions
    };
    static std::string whereNow() {
        PyFrameObject* frame = PyEval_GetFrame(); // Borrowed reference
        if (!frame) return "from native code";
        python::OwnedRef code = python::frameCode(frame);
        if (!code) return "at an unknown place";
        auto* raw = reinterpret_cast<PyCodeObject*>(code.get());
        return fmt::format("at {}:{}", python::textOf(raw->co_filename), PyFrame_GetLineNumber(frame));
    }
    std::vector<Entry> entries_;
    std::vector<py::object> watched_; // the dicts this seal gave to PyDict_Watch
    std::optional<std::string> changedWhileRunning_;
    std::optional<std::string> unwatched_; // why the seal could not watch (3.12+)
    int depth_ = 0;
};

// The seal of the harness loaded last (held by the integrity check; weak here,
// so that nothing of Python's is released after the interpreter ends).
std::weak_ptr<Seal> g_seal;

#if PY_VERSION_HEX >= 0x030C0000
// From 3.12, CPython tells watchers of each change to a watched dict and to any
// function's code or defaults as it happens: the seal watches its dicts and
// functions (Seal::watch), so a change undone before the reads is still seen.
int onDictChange(PyDict_WatchEvent, PyObject* dict, PyObject* key, PyObject* value) {
    if (std::shared_ptr<Seal> seal = g_seal.lock()) seal->dictChanged(dict, key, value);
    return 0;
}
int onFunctionChange(PyFunction_WatchEvent event, PyFunctionObject* function, PyObject*) {
    if (event == PyFunction_EVENT_CREATE || event == PyFunction_EVENT_DESTROY) return 0;
    if (std::shared_ptr<Seal> seal = g_seal.lock()) seal->functionChanged(function);
    return 0;
}
#endif

} // namespace

#if PY_VERSION_HEX >= 0x030C0000
int dictWatcher() {
    static int id = [] {
        const int got = PyDict_AddWatcher(onDictChange);
        if (got < 0) PyErr_Clear();
        return got;
    }();
    return id;
}
int functionWatcher() {
    static int id = [] {
        const int got = PyFunction_AddWatcher(onFunctionChange);
        if (got < 0) PyErr_Clear();
        return got;
    }();
    return id;
}
#endif

void Seal::watch() {
#if PY_VERSION_HEX >= 0x030C0000
    // One function watcher for the process: it hears of every function's change.
    const bool functions = functionWatcher() >= 0;
    const int dicts = dictWatcher();
    if (!functions || dicts < 0) {
        unwatched_ = fmt::format(
            "leakgate could not watch its harness: CPython gave it no {} watcher (it has 8 per "
            "interpreter, and code that ran before leakgate's, a sitecustomize or a .pth file, took "
            "them all), so a change to the harness put back before the reads would not be seen",
            functions ? "dict" : "function");
        return;
    }
    for (const Entry& entry : entries_) {
        const bool known = std::any_of(watched_.begin(), watched_.end(),
                                       [&](const py::object& dict) { return dict.is(entry.dict); });
        if (known) continue;
        if (PyDict_Watch(dicts, entry.dict.ptr()) < 0) {
            PyErr_Clear();
            unwatched_ = fmt::format("leakgate could not watch its harness: CPython refused to "
                                     "watch the namespace of `{}`",
                                     entry.name);
            return;
        }
        watched_.push_back(entry.dict);
    }
#endif
}

std::optional<std::string> sealReference() {
    std::shared_ptr<Seal> seal = g_seal.lock();
    if (!seal) return "the reference runtime was loaded without leakgate's harness";
    const std::string home = (base::dataDir() / "lib/data/reference").string() + "/";
    py::dict modules = py::module_::import("sys").attr("modules");
    for (const char* name : {"leakgate_reference", "leakgate_reference.scalars"}) {
        if (!modules.contains(name))
            return fmt::format("the reference runtime has no module `{}`", name);
        py::object module = modules[name];
        py::object file = py::getattr(module, "__file__", py::none());
        const std::string path = file.is_none() ? std::string() : py::str(file).cast<std::string>();
        if (!path.starts_with(home))
            return fmt::format("the reference runtime's `{}` is not leakgate's own "
                               "({}): the code under test "
                               "put another in its place",
                               name, path.empty() ? "no file" : path);
        seal->add(name, module.attr("__dict__"));
    }
    seal->watch();
    return std::nullopt;
}

std::optional<std::string> sealKernels(const std::string& file) {
    std::shared_ptr<Seal> seal = g_seal.lock();
    if (!seal) return "the kernels module was loaded without leakgate's harness";
    py::dict modules = py::module_::import("sys").attr("modules");
    if (!modules.contains("leakgate_kernels"))
        return "the kernels module `leakgate_kernels` was not loaded";
    py::object module = modules["leakgate_kernels"];
    py::object loaded = py::getattr(module, "__file__", py::none());
    if (loaded.is_none() || py::str(loaded).cast<std::string>() != file)
        return fmt::format("the kernels module `leakgate_kernels` is not "
                           "leakgate's own ({}): the code "
                           "under test put another in its place",
                           loaded.is_none() ? "no file" : py::str(loaded).cast<std::string>());
    seal->add("leakgate_kernels", module.attr("__dict__"));
    seal->watch();
    return std::nullopt;
}

py::module_ loadHarness() {
    py::list(py::module_::import("sys").attr("path"))
        .insert(0, (base::dataDir() / "lib/data/reference").string());
    py::module_ harness =
        loadOwnModule("lib/workloads/harness.py", kHarnessModule, "<leakgate:harness>");
    auto seal = std::make_shared<Seal>();
    seal->add(kHarnessModule, harness.attr("__dict__"));
    seal->add("_leakgate", py::module_::import("_leakgate").attr("__dict__"));
    g_seal = seal;
    seal->watch();
    probes::setIntegrityCheck([seal] { return seal->changed(); });
    return harness;
}

py::dict targetSpec(const WorkerSpec& spec) {
    py::dict target;
    const TargetRef& ref = spec.requireTarget();
    if (!ref.path.empty()) target["path"] = ref.path;
    if (!ref.module.empty()) target["module"] = ref.module;
    return target;
}

WorkloadResult newResult(const WorkerSpec& spec, const char* workload) {
    WorkloadResult result;
    result.workload = workload;
    result.subject = spec.requireTarget().name;
    result.role = spec.role;
    return result;
}

WorkloadError targetImportError(const pybind11::error_already_set& error) {
    return {fmt::format("the target could not be imported: {}", error.what()), std::nullopt, ""};
}

std::string raisedAt(const pybind11::error_already_set& error) {
    PyObject* trace = error.trace().ptr();
    if (!trace || !PyTraceBack_Check(trace)) return "";
    std::vector<py::handle> entries; // outermost first
    for (py::handle entry = trace; entry && !entry.is_none(); entry = entry.attr("tb_next"))
        entries.push_back(entry);
    auto describe = [](py::handle entry) {
        py::handle code = entry.attr("tb_frame").attr("f_code");
        // tb_lineno through Python: from 3.12 the C field is computed on first
        // access (-1 before).
        return fmt::format("`{}` ({}:{})", py::str(code.attr("co_name")).cast<std::string>(),
                           py::str(code.attr("co_filename")).cast<std::string>(),
                           entry.attr("tb_lineno").cast<long>());
    };
    std::string where = "in " + describe(entries.back());
    if (entries.size() > 1) where += ", called from " + describe(entries[entries.size() - 2]);
    return where;
}

} // namespace leakgate::workloads

#include "lib/workloads/harness_loader.h"

#include "leakgate/errors.h"
#include "lib/base/data_dir.h"

#include "probes/probe.h"

#include <fmt/format.h>

#include <memory>
#include <optional>

#include <fstream>
#include <sstream>
#include <vector>

namespace leakgate::workloads {

namespace py = pybind11;

py::module_ loadOwnModule(const std::string& relativePath, const std::string& moduleName,
                          const std::string& fileName) {
    auto path = base::dataDir() / relativePath;
    std::ifstream in(path);
    if (!in) throw EnvironmentError(fmt::format("cannot read {}", path.string()));
    std::stringstream source;
    source << in.rdbuf();
    py::module_ builtins = py::module_::import("builtins");
    py::module_ module = py::reinterpret_steal<py::module_>(PyModule_New(moduleName.c_str()));
    py::dict scope = module.attr("__dict__");
    scope["__builtins__"] = builtins;
    builtins.attr("exec")(builtins.attr("compile")(source.str(), fileName, "exec"), scope);
    py::module_::import("sys").attr("modules")[py::str(moduleName)] = module;
    return module;
}

namespace {

// What leakgate's own Python is made of in this worker, taken when the harness is loaded, before
// any code under test runs: every function, class and module bound in the harness and in
// `_leakgate` (the sentinels' module), each function's code, defaults and closure, each class's
// attributes; the reference runtime once the harness imported it (sealReference) and the decorate
// workload's kernels module (sealKernels). The harness's data (its caches, the loaded target) may
// change; its code may not.
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
        for (const Entry& entry : entries_) {
            PyObject* now = PyDict_GetItemWithError(entry.dict.ptr(), entry.key.ptr()); // Borrowed
            if (!now) PyErr_Clear();
            if (now != entry.value.ptr())
                return fmt::format(
                    "leakgate's harness was changed under it: `{}` was {} by the code under test",
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
                return fmt::format(
                    "leakgate's harness was changed under it: the code, defaults or closure of `{}` "
                    "were replaced by the code under test",
                    entry.name);
        }
        return std::nullopt;
    }

  private:
    struct Entry {
        std::string name;
        py::object dict, key, value;
        py::object code, defaults, kwdefaults, closure; // functions
    };
    std::vector<Entry> entries_;
    int depth_ = 0;
};

// The seal of the harness loaded last (held by the integrity check; weak here, so that nothing of
// Python's is released after the interpreter ends).
std::weak_ptr<Seal> g_seal;

} // namespace

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
            return fmt::format(
                "the reference runtime's `{}` is not leakgate's own ({}): the code under test "
                "put another in its place",
                name, path.empty() ? "no file" : path);
        seal->add(name, module.attr("__dict__"));
    }
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
        return fmt::format("the kernels module `leakgate_kernels` is not leakgate's own ({}): the code "
                           "under test put another in its place",
                           loaded.is_none() ? "no file" : py::str(loaded).cast<std::string>());
    seal->add("leakgate_kernels", module.attr("__dict__"));
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
        // tb_lineno through Python: from 3.12 the C field is computed on first access (-1 before).
        return fmt::format("`{}` ({}:{})", py::str(code.attr("co_name")).cast<std::string>(),
                           py::str(code.attr("co_filename")).cast<std::string>(),
                           entry.attr("tb_lineno").cast<long>());
    };
    std::string where = "in " + describe(entries.back());
    if (entries.size() > 1) where += ", called from " + describe(entries[entries.size() - 2]);
    return where;
}

} // namespace leakgate::workloads

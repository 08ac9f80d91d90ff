#include "lib/workloads/harness_loader.h"

#include "lib/base/data_dir.h"
#include "leakgate/errors.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace leakgate::workloads {

namespace py = pybind11;

py::module_ loadOwnModule(const std::string& relativePath, const std::string& moduleName,
                          const std::string& fileName) {
    auto path = dataDir() / relativePath;
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

py::module_ loadHarness() {
    py::list(py::module_::import("sys").attr("path")).insert(0, (dataDir() / "lib/data/reference").string());
    return loadOwnModule("lib/workloads/harness.py", kHarnessModule, "<leakgate:harness>");
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

#include "lib/workloads/harness_loader.h"

#include "lib/data_dir.h"
#include "lib/errors.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace leakgate::workloads {

namespace py = pybind11;

// Loads the harness under a "<leakgate:..." file name, so its frames are known as leakgate's own.
py::module_ loadHarness() {
    auto path = dataDir() / "lib/workloads/harness.py";
    std::ifstream in(path);
    if (!in) throw EnvironmentError(fmt::format("cannot read {}", path.string()));
    std::stringstream source;
    source << in.rdbuf();
    py::module_ sys = py::module_::import("sys");
    py::list(sys.attr("path")).insert(0, (dataDir() / "lib/reference").string());
    py::module_ harness = py::reinterpret_steal<py::module_>(PyModule_New("_leakgate_harness"));
    py::object code =
        py::module_::import("builtins").attr("compile")(source.str(), "<leakgate:harness>", "exec");
    py::dict scope = harness.attr("__dict__");
    scope["__builtins__"] = py::module_::import("builtins");
    py::module_::import("builtins").attr("exec")(code, scope);
    sys.attr("modules")["_leakgate_harness"] = harness;
    return harness;
}

py::dict targetSpec(const nlohmann::json& spec) {
    py::dict target;
    const auto& json = spec.at("target");
    if (json.contains("path")) target["path"] = json.at("path").get<std::string>();
    if (json.contains("module")) target["module"] = json.at("module").get<std::string>();
    return target;
}

WorkloadResult newResult(const nlohmann::json& spec, const char* workload) {
    WorkloadResult result;
    result.workload = workload;
    result.subject = spec.at("target").at("name").get<std::string>();
    result.role = spec.value("role", "target");
    return result;
}

} // namespace leakgate::workloads

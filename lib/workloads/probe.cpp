// The gate's `probe` workload (`gate --probe FILE`): a plug-in's own probes, and optionally its
// own workload, measured with the three reads in a worker of its own, on the target and on the
// reference. A Python plug-in (FILE.py) is a module with hooks; a C++ plug-in (a shared library)
// defines the one symbol of leakgate/plugin.h. Whatever a plug-in does wrong (it does not load,
// it was built for another ABI, it throws in any phase) is an `error` of its own checks.
#include "lib/workloads/workload.h"

#include "leakgate/errors.h"
#include "leakgate/plugin.h"
#include "lib/base/dynamic_library.h"
#include "lib/python/text.h"
#include "lib/workloads/harness_loader.h"
#include "probes/probe.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

namespace leakgate::workloads {
namespace {

namespace py = pybind11;

// What a phase threw, as one line.
std::string describeCurrentException() {
    try {
        throw;
    } catch (const py::error_already_set& error) {
        return error.what();
    } catch (const std::exception& error) {
        return error.what();
    } catch (...) {
        return "an exception that is not a std::exception";
    }
}

// Calls one plug-in probe's phases. The first exception ends the probe: its checks become
// `error` with what it threw, and it is not called again. The other probes keep their checks,
// and the measurement stays valid (a probe's failure is not the code under test's).
class GuardedProbe final : public probes::Probe {
  public:
    GuardedProbe(std::unique_ptr<probes::Probe> inner, std::string origin)
        : inner_(std::move(inner)), origin_(std::move(origin)), name_(inner_->name()) {}

    std::string_view name() const override { return name_; }
    bool decidesCheck() const override { return inner_->decidesCheck(); }

    void before() override {
        guard("before", nullptr, [&] { inner_->before(); });
    }
    void afterReturn(WorkloadResult& result) override {
        if (thrown_) record(result); // it threw in before(), which has no result to write to
        guard("afterReturn", &result, [&] { inner_->afterReturn(result); });
    }
    void inGarbage(std::span<PyObject* const> garbage, WorkloadResult& result) override {
        guard("inGarbage", &result, [&] { inner_->inGarbage(garbage, result); });
    }
    void afterCollection(WorkloadResult& result) override {
        guard("afterCollection", &result, [&] { inner_->afterCollection(result); });
    }

  private:
    void guard(const char* phase, WorkloadResult* result, const std::function<void()>& call) {
        if (thrown_) return;
        try {
            call();
            return;
        } catch (...) {
            thrown_ = fmt::format("{} threw in {}: {}", origin_, phase, describeCurrentException());
        }
        if (result) record(*result);
    }
    // Whatever the probe decided before it threw is replaced by the error.
    void record(WorkloadResult& result) {
        if (recorded_) return;
        recorded_ = true;
        std::erase_if(result.checks, [&](const CheckResult& check) { return check.name == name_; });
        result.checks.push_back({name_, Status::kError, *thrown_, std::nullopt});
    }

    std::unique_ptr<probes::Probe> inner_;
    std::string origin_;
    std::string name_;
    std::optional<std::string> thrown_;
    bool recorded_ = false;
};

// A Python plug-in's hooks as a probe: `before()`, `after_return()`, `in_garbage(garbage)` and
// `after_collection()`, each optional. A hook returns None, one check as a dict (`check`,
// `status`, `reason`, `amount`) or a list of them; `check` may be left out when the plug-in
// declares one check.
class PythonProbe final : public probes::Probe {
  public:
    PythonProbe(py::object module, std::vector<std::string> checks)
        : module_(std::move(module)), checks_(std::move(checks)) {}

    std::string_view name() const override { return checks_.front(); }

    void before() override { call("before", py::tuple()); }
    void afterReturn(WorkloadResult& result) override {
        add(call("after_return", py::tuple()), result, "after_return");
    }
    void inGarbage(std::span<PyObject* const> garbage, WorkloadResult& result) override {
        if (!py::hasattr(module_, "in_garbage")) return;
        py::list saved;
        for (PyObject* object : garbage)
            saved.append(py::handle(object)); // Borrowed: the list takes its own reference
        py::object returned = call("in_garbage", py::make_tuple(saved));
        saved.attr("clear")(); // so that the real collection can free what it holds
        add(returned, result, "in_garbage");
    }
    void afterCollection(WorkloadResult& result) override {
        add(call("after_collection", py::tuple()), result, "after_collection");
    }

  private:
    py::object call(const char* hook, const py::tuple& arguments) {
        if (!py::hasattr(module_, hook)) return py::none();
        return module_.attr(hook)(*arguments);
    }

    void add(const py::object& returned, WorkloadResult& result, const char* hook) {
        if (returned.is_none()) return;
        if (py::isinstance<py::dict>(returned)) {
            addOne(returned, result, hook);
            return;
        }
        if (!py::isinstance<py::list>(returned) && !py::isinstance<py::tuple>(returned))
            throw UsageError(fmt::format("{}() returned a {}, not None, a dict or a list of dicts", hook,
                                         python::textOf(py::type::of(returned).attr("__name__"))));
        for (py::handle item : returned)
            addOne(py::reinterpret_borrow<py::object>(item), result, hook);
    }

    void addOne(const py::object& item, WorkloadResult& result, const char* hook) {
        if (!py::isinstance<py::dict>(item))
            throw UsageError(fmt::format("{}() returned a list holding a {}, not a dict", hook,
                                         python::textOf(py::type::of(item).attr("__name__"))));
        py::dict check = py::reinterpret_borrow<py::dict>(item);
        for (auto [key, value] : check) {
            std::string name = python::textOf(key);
            if (name != "check" && name != "status" && name != "reason" && name != "amount")
                throw UsageError(fmt::format("{}() returned a check with the unknown key `{}` (known: "
                                             "check, status, reason, amount)",
                                             hook, name));
        }
        CheckResult decided;
        if (check.contains("check")) {
            decided.name = python::textOf(check["check"]);
        } else if (checks_.size() == 1) {
            decided.name = checks_.front();
        } else {
            throw UsageError(fmt::format("{}() returned a check without `check`, and the plug-in "
                                         "declares {} checks in CHECKS",
                                         hook, checks_.size()));
        }
        if (std::find(checks_.begin(), checks_.end(), decided.name) == checks_.end())
            throw UsageError(fmt::format("{}() decided `{}`, which is not in the plug-in's CHECKS ({})",
                                         hook, decided.name, fmt::join(checks_, ", ")));
        const std::string status = check.contains("status") ? python::textOf(check["status"]) : "";
        if (status == "pass")
            decided.status = Status::kPass;
        else if (status == "fail")
            decided.status = Status::kFail;
        else if (status == "skip")
            decided.status = Status::kSkip;
        else if (status == "error")
            decided.status = Status::kError;
        else
            throw UsageError(
                fmt::format("{}() returned `{}` with status `{}`: pass, fail, skip or error", hook,
                            decided.name, status));
        if (check.contains("reason")) decided.reason = python::textOf(check["reason"]);
        if (check.contains("amount") && !check["amount"].is_none()) {
            py::object amount = check["amount"];
            if (!py::isinstance<py::int_>(amount) || py::isinstance<py::bool_>(amount))
                throw UsageError(fmt::format("{}() returned `{}` with an amount that is not an int",
                                             hook, decided.name));
            decided.amount = amount.cast<std::int64_t>();
        }
        if (std::any_of(result.checks.begin(), result.checks.end(),
                        [&](const CheckResult& other) { return other.name == decided.name; }))
            throw UsageError(fmt::format("{}() decided `{}` a second time", hook, decided.name));
        result.checks.push_back(std::move(decided));
    }

    py::object module_;
    std::vector<std::string> checks_;
};

// A plug-in, loaded: its probes (each guarded), its workload (empty: the target's import), and
// the names of its checks, known even when it could not be loaded.
struct Plugin {
    std::string origin;              // "probe plug-in kernel_cache.py"
    std::vector<std::string> checks; // what it decides; its file's stem until it says
    probes::ProbeList probes;
    std::function<void(py::handle target)> workload;
    std::optional<std::string> error;              // it could not be loaded
    std::unique_ptr<base::DynamicLibrary> library; // a C++ plug-in's code
};

// A Python plug-in's CHECKS: a str, or an iterable of str; nothing when it is neither.
std::optional<std::vector<std::string>> declaredChecks(py::object declared) {
    if (py::isinstance<py::str>(declared)) declared = py::make_tuple(declared);
    std::vector<std::string> checks;
    try {
        for (py::handle name : declared) {
            if (!py::isinstance<py::str>(name)) return std::nullopt;
            checks.push_back(python::textOf(name));
        }
    } catch (py::error_already_set&) { // not iterable
        return std::nullopt;
    }
    return checks;
}

void loadPythonPlugin(Plugin& plugin, const std::string& path, py::module_& harness) {
    py::object module;
    try {
        module = harness.attr("load_probe")(path);
    } catch (py::error_already_set& error) {
        plugin.error = fmt::format("{} raised on import: {}", plugin.origin, error.what());
        return;
    }
    if (py::hasattr(module, "CHECKS")) {
        std::optional<std::vector<std::string>> checks = declaredChecks(module.attr("CHECKS"));
        if (!checks) {
            plugin.error = fmt::format("{}: CHECKS must be a str or a list of str", plugin.origin);
            return;
        }
        if (checks->empty()) {
            plugin.error = fmt::format("{}: CHECKS is empty", plugin.origin);
            return;
        }
        plugin.checks = std::move(*checks);
    }
    if (py::hasattr(module, "workload")) {
        py::object workload = module.attr("workload");
        plugin.workload = [workload](py::handle target) { workload(target); };
    }
    plugin.probes.push_back(std::make_unique<GuardedProbe>(
        std::make_unique<PythonProbe>(module, plugin.checks), plugin.origin));
}

void loadCxxPlugin(Plugin& plugin, const std::string& path, const std::string& role) {
    plugin.library = std::make_unique<base::DynamicLibrary>(path);
    // Python may hold the plug-in's code past the workload (a function it made): never unloaded.
    plugin.library->keepLoaded();
    if (!plugin.library->loaded()) {
        plugin.error = fmt::format("{} could not be loaded: {}", plugin.origin, plugin.library->error());
        return;
    }
    const auto* entry = static_cast<const leakgate_plugin*>(plugin.library->symbol("leakgate_plugin"));
    if (!entry) {
        plugin.error = fmt::format("{} defines no `leakgate_plugin` symbol: not a leakgate plug-in "
                                   "(define one with LEAKGATE_PLUGIN, leakgate/plugin.h)",
                                   plugin.origin);
        return;
    }
    // The version first: nothing else of the struct is read before it matches.
    if (entry->abi_version != LEAKGATE_PLUGIN_ABI_VERSION) {
        plugin.error = fmt::format("{} was built for plug-in ABI {}; this leakgate ({}) loads ABI {}: "
                                   "rebuild it against this leakgate's headers",
                                   plugin.origin, entry->abi_version, LEAKGATE_VERSION,
                                   LEAKGATE_PLUGIN_ABI_VERSION);
        return;
    }
    if (entry->name) plugin.origin = fmt::format("{} ({})", plugin.origin, entry->name);
    if (!entry->register_probes) {
        plugin.error = fmt::format("{} has no registration function", plugin.origin);
        return;
    }
    plugin::Registration registration;
    registration.role = role;
    try {
        entry->register_probes(&registration);
    } catch (...) {
        plugin.error =
            fmt::format("{} threw at registration: {}", plugin.origin, describeCurrentException());
        return;
    }
    if (registration.probes.empty()) {
        plugin.error = fmt::format("{} registered no probe", plugin.origin);
        return;
    }
    plugin.checks.clear();
    for (auto& probe : registration.probes) {
        if (!probe) {
            plugin.error = fmt::format("{} registered a null probe", plugin.origin);
            return;
        }
        plugin.checks.emplace_back(probe->name());
        plugin.probes.push_back(std::make_unique<GuardedProbe>(std::move(probe), plugin.origin));
    }
    plugin.workload = std::move(registration.workload);
}

} // namespace

std::string probeFallbackCheck(const std::string& path) {
    const std::filesystem::path file(path);
    std::string stem = file.stem().string();
    if (stem.starts_with("lib") && stem.size() > 3 && file.extension() != ".py") stem = stem.substr(3);
    return stem;
}

WorkloadResult runProbe(const WorkerSpec& spec) {
    WorkloadResult result = newResult(spec, "probe");
    const std::filesystem::path path = spec.probe;
    result.details["probe"] = spec.probe;
    Plugin plugin;
    plugin.origin = fmt::format("probe plug-in {}", path.filename().string());
    plugin.checks = {probeFallbackCheck(spec.probe)};
    py::module_ harness = loadHarness();
    if (path.extension() == ".py")
        loadPythonPlugin(plugin, spec.probe, harness);
    else
        loadCxxPlugin(plugin, spec.probe, toString(spec.role));
    result.details["probe_checks"] = plugin.checks;
    auto failAll = [&](const std::string& message) {
        result.error = WorkloadError{message, std::nullopt, ""};
        for (const auto& name : plugin.checks)
            result.checks.push_back({name, Status::kError, message, std::nullopt});
    };
    if (plugin.error) {
        failAll(*plugin.error);
        return result;
    }

    py::object target;
    if (plugin.workload) {
        try {
            target = harness.attr("load_target")(targetSpec(spec));
        } catch (py::error_already_set& error) {
            failAll(fmt::format("the target could not be imported: {}", error.what()));
            return result;
        }
    }
    probes::ProbeList probes;
    probes.push_back(probes::makeGcGuardProbe());
    probes.push_back(probes::makeSentinelProbe());
    for (auto& probe : plugin.probes)
        probes.push_back(std::move(probe));
    measure(result, probes, [&] {
        try {
            if (plugin.workload)
                plugin.workload(target);
            else
                harness.attr("load_target")(targetSpec(spec));
        } catch (...) {
            result.error = WorkloadError{
                fmt::format("{} raised: {}",
                            plugin.workload ? plugin.origin + "'s workload" : "the target's import",
                            describeCurrentException()),
                std::nullopt, ""};
        }
    });
    // Every check the plug-in declared has a status, whatever stopped it.
    for (const auto& name : plugin.checks) {
        if (std::none_of(result.checks.begin(), result.checks.end(),
                         [&](const CheckResult& check) { return check.name == name; })) {
            result.checks.push_back(
                {name, Status::kError,
                 result.error
                     ? result.error->message
                     : fmt::format("{} decided nothing at any of the three reads", plugin.origin),
                 std::nullopt});
        }
    }
    // The sentinel check is the plug-in's too, when its workload made sentinels.
    std::erase_if(result.checks, [](const CheckResult& check) {
        return check.name == "sentinels" && check.status == Status::kSkip;
    });
    for (auto& check : result.checks) {
        if (check.name == "sentinels") check.name = plugin.checks.front() + "-sentinels";
    }
    // A failure the plug-in gave no finding of its own becomes one, so that the outputs made of
    // findings (SARIF, the text's findings) carry it too.
    for (const auto& check : result.checks) {
        if (check.status != Status::kFail) continue;
        bool explained = std::any_of(result.findings.begin(), result.findings.end(),
                                     [&](const Finding& finding) { return finding.kind == check.name; });
        if (!explained) {
            Finding finding;
            finding.kind = check.name;
            finding.summary = check.reason;
            result.findings.push_back(std::move(finding));
        }
    }
    return result;
}

} // namespace leakgate::workloads

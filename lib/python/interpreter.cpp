#include "lib/python/interpreter.h"

#include "leakgate/errors.h"
#include "lib/python/compat.h"

#include <fmt/format.h>

namespace leakgate::python {
namespace {

void setString(PyConfig& config, wchar_t** field, const std::string& value) {
    PyStatus status = PyConfig_SetBytesString(&config, field, value.c_str());
    if (PyStatus_Exception(status)) {
        PyConfig_Clear(&config);
        throw EnvironmentError(
            fmt::format("cannot configure Python: {}", status.err_msg ? status.err_msg : "?"));
    }
}

} // namespace

Interpreter::Interpreter(const Environment& env, const std::vector<std::string>& argv) {
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    // Paths come from the queried interpreter, so a venv's site-packages are used without relying
    // on each version's getpath heuristics for an embedding binary.
    setString(config, &config.executable, env.executable);
    setString(config, &config.program_name, env.executable);
    setString(config, &config.prefix, env.prefix);
    setString(config, &config.exec_prefix, env.execPrefix);
    setString(config, &config.base_prefix, env.basePrefix);
    setString(config, &config.base_exec_prefix, env.baseExecPrefix);
    // With the search path given, getpath leaves sys._stdlib_dir empty (it is computed only where
    // getpath computes the path), and the standard modules frozen into 3.11+ (abc, os, codecs...)
    // then have no __file__, which the interpreter itself gives them: torch 2.1 and 2.2 read
    // abc.__file__ on every torch.compile. Loaded from their files instead, they have it.
    loadStandardModulesFromFiles(config);
    // No bytecode caches written: a gate or a scan leaves no __pycache__ folder beside the files it
    // imports (the user's, or leakgate's own data), and an import measures the same in every run.
    // Caches already there are still read.
    config.write_bytecode = 0;
    config.module_search_paths_set = 1;
    for (const auto& entry : env.path) {
        std::wstring wide(entry.begin(), entry.end());
        wchar_t* decoded = Py_DecodeLocale(entry.c_str(), nullptr);
        PyStatus status =
            PyWideStringList_Append(&config.module_search_paths, decoded ? decoded : wide.c_str());
        if (decoded) PyMem_RawFree(decoded);
        if (PyStatus_Exception(status)) {
            PyConfig_Clear(&config);
            throw EnvironmentError("cannot configure Python's module search path");
        }
    }
    std::vector<const char*> args;
    for (const auto& arg : argv)
        args.push_back(arg.c_str());
    // scoped_interpreter takes ownership of the config (it clears it).
    interpreter_ = std::make_unique<pybind11::scoped_interpreter>(&config, static_cast<int>(args.size()),
                                                                  args.data(), false);
}

Interpreter::~Interpreter() = default;

std::string describe(const pybind11::error_already_set& error) {
    return error.what();
}

} // namespace leakgate::python

#include "lib/python/environment.h"

#include "lib/base/errors.h"
#include "lib/base/subprocess.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace leakgate::python {
namespace {

// Printed by the queried interpreter: everything a worker needs to embed the same environment.
constexpr const char* kQueryCode = R"(import json, sys
print(json.dumps({
    "executable": sys.executable,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "prefix": sys.prefix, "exec_prefix": sys.exec_prefix,
    "base_prefix": sys.base_prefix, "base_exec_prefix": sys.base_exec_prefix,
    "path": sys.path[1:],
}))
)";

std::string resolveOnPath(const std::string& name) {
    if (name.find('/') != std::string::npos) return std::filesystem::absolute(name).string();
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
    throw UsageError(fmt::format("--python {}: not found on PATH", name));
}

std::string majorMinor(const std::string& version) {
    auto first = version.find('.');
    auto second = version.find('.', first + 1);
    return version.substr(0, second);
}

} // namespace

std::string buildPythonExecutable() {
    return LEAKGATE_PYTHON_EXECUTABLE;
}
std::string embeddedPythonVersion() {
    return LEAKGATE_PYTHON_VERSION;
}

Environment queryEnvironment(const std::string& executable) {
    worker::ProcessSpec spec;
    // Not the resolved path: a venv's python is a symlink, and resolving it would lose the venv.
    spec.argv = {resolveOnPath(executable), "-c", kQueryCode};
    spec.timeout = std::chrono::seconds(60);
    worker::ProcessOutcome outcome = worker::runProcess(spec);
    if (outcome.exitCode != 0) {
        throw UsageError(fmt::format("--python {}: the interpreter did not run (exit {}): {}",
                                     executable, outcome.exitCode.value_or(-1), outcome.stderrTail));
    }
    Environment env;
    try {
        env = nlohmann::json::parse(outcome.stdoutText).get<Environment>();
    } catch (const nlohmann::json::exception& error) {
        throw UsageError(fmt::format("--python {}: unexpected answer from the interpreter: {}",
                                     executable, error.what()));
    }
    if (majorMinor(env.version) != embeddedPythonVersion()) {
        throw UsageError(fmt::format(
            "--python {} is Python {}, but this leakgate build embeds Python {}; build leakgate again "
            "for {} (one build directory per Python: cmake -B build-{} -DLEAKGATE_PYTHON={})",
            executable, env.version, embeddedPythonVersion(), majorMinor(env.version),
            majorMinor(env.version), executable));
    }
    return env;
}

void to_json(nlohmann::json& out, const Environment& env) {
    out = nlohmann::json{{"executable", env.executable},
                         {"version", env.version},
                         {"prefix", env.prefix},
                         {"exec_prefix", env.execPrefix},
                         {"base_prefix", env.basePrefix},
                         {"base_exec_prefix", env.baseExecPrefix},
                         {"path", env.path}};
}

void from_json(const nlohmann::json& in, Environment& env) {
    in.at("executable").get_to(env.executable);
    in.at("version").get_to(env.version);
    in.at("prefix").get_to(env.prefix);
    in.at("exec_prefix").get_to(env.execPrefix);
    in.at("base_prefix").get_to(env.basePrefix);
    in.at("base_exec_prefix").get_to(env.baseExecPrefix);
    in.at("path").get_to(env.path);
}

} // namespace leakgate::python

#include "lib/python/environment.h"

#include "leakgate/errors.h"
#include "lib/base/subprocess.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace leakgate::python {
namespace {

// Run by the queried interpreter: everything a worker needs to embed the same environment, sent
// on the result pipe (not stdout, where a sitecustomize or a .pth file may print a banner), each
// path as the hex of its bytes (a path need not be UTF-8).
constexpr const char* kQueryCode = R"(import json, os, site, sys
b = lambda text: os.fsencode(text).hex()
os.write(3, json.dumps({
    "executable": b(sys.executable),
    "version": b("%d.%d.%d" % sys.version_info[:3]),
    "prefix": b(sys.prefix), "exec_prefix": b(sys.exec_prefix),
    "base_prefix": b(sys.base_prefix), "base_exec_prefix": b(sys.base_exec_prefix),
    "path": [b(entry) for entry in sys.path[1:]],
    "user_site": b(site.getusersitepackages() if site.ENABLE_USER_SITE else ""),
}).encode())
)";

std::string fromHex(const std::string& hex) {
    if (hex.size() % 2 != 0) throw std::invalid_argument("odd hex");
    std::string bytes;
    for (size_t i = 0; i < hex.size(); i += 2)
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return bytes;
}

Environment parseAnswer(const std::string& text) {
    nlohmann::json in = nlohmann::json::parse(text);
    auto field = [&](const char* key) { return fromHex(in.at(key).get<std::string>()); };
    Environment env;
    env.executable = field("executable");
    env.version = field("version");
    env.prefix = field("prefix");
    env.execPrefix = field("exec_prefix");
    env.basePrefix = field("base_prefix");
    env.baseExecPrefix = field("base_exec_prefix");
    for (const auto& entry : in.at("path"))
        env.path.push_back(fromHex(entry.get<std::string>()));
    env.userSite = field("user_site");
    return env;
}

namespace fs = std::filesystem;

// A file's identity and contents' age: inode, size and modification time (ns); null when absent.
nlohmann::json statOf(const fs::path& path, bool followLink = true) {
    struct ::stat info {};
    if ((followLink ? ::stat(path.c_str(), &info) : ::lstat(path.c_str(), &info)) != 0) return nullptr;
    return {info.st_ino, info.st_size, info.st_mtim.tv_sec * 1'000'000'000LL + info.st_mtim.tv_nsec};
}

// A sys.path entry: its own stat and, for a folder, what site.py would run from it.
nlohmann::json entryFingerprint(const std::string& entry) {
    nlohmann::json out = {{"entry", entry}, {"stat", statOf(entry)}};
    std::error_code error;
    if (!fs::is_directory(entry, error)) return out;
    nlohmann::json run = nlohmann::json::object();
    for (const auto& child : fs::directory_iterator(entry, error)) {
        const std::string name = child.path().filename().string();
        if (name.ends_with(".pth") || name == "sitecustomize.py" || name == "usercustomize.py" ||
            name == "sitecustomize" || name == "usercustomize")
            run[name] = statOf(child.path());
    }
    if (error) return {{"entry", entry}, {"unreadable", error.message()}};
    out["runs"] = std::move(run);
    return out;
}

nlohmann::json fileText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return nullptr;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string majorMinor(const std::string& version) {
    auto first = version.find('.');
    auto second = version.find('.', first + 1);
    return version.substr(0, second);
}

} // namespace

std::string buildPythonExecutable() {
    // The Python package's launcher (leakgate-dsl) names the venv's interpreter it runs in: the
    // one the wheel was built with may have been a temporary build environment.
    if (const char* chosen = std::getenv("LEAKGATE_DEFAULT_PYTHON"); chosen && *chosen) return chosen;
    return LEAKGATE_PYTHON_EXECUTABLE;
}
std::string embeddedPythonVersion() {
    return LEAKGATE_PYTHON_VERSION;
}

Environment queryEnvironment(const std::string& executable) {
    base::ProcessSpec spec;
    // Not the resolved path: a venv's python is a symlink, and resolving it would lose the venv.
    spec.argv = {resolveExecutable(executable), "-c", kQueryCode};
    spec.timeout = std::chrono::seconds(60);
    spec.resultPipe = true;
    base::ProcessOutcome outcome = base::runProcess(spec);
    if (outcome.exitCode != 0) {
        throw UsageError(fmt::format("--python {}: the interpreter did not run (exit {}): {}",
                                     executable, outcome.exitCode.value_or(-1), outcome.stderrTail));
    }
    Environment env;
    try {
        env = parseAnswer(outcome.resultText);
    } catch (const std::exception& error) {
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

std::string resolveExecutable(const std::string& name) {
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

nlohmann::json launchFingerprint(const std::string& resolvedExecutable) {
    const fs::path executable = resolvedExecutable;
    nlohmann::json variables = nlohmann::json::object();
    for (char** entry = environ; *entry; ++entry) {
        const std::string_view text = *entry;
        const auto equals = text.find('=');
        const std::string_view name = text.substr(0, equals);
        if (name.starts_with("PYTHON") || name == "HOME")
            variables[std::string(name)] =
                std::string(equals == text.npos ? "" : text.substr(equals + 1));
    }
    const bool relativeEntries = variables.contains("PYTHONPATH");
    nlohmann::json out = {
        {"executable", resolvedExecutable},
        {"link", statOf(executable, /*followLink=*/false)},
        {"file", statOf(executable)},
        {"pyvenv_cfg",
         {fileText(executable.parent_path() / "pyvenv.cfg"),
          fileText(executable.parent_path().parent_path() / "pyvenv.cfg")}},
        {"variables", std::move(variables)},
    };
    // Relative PYTHONPATH entries are taken from the working directory.
    if (relativeEntries) {
        std::error_code error;
        out["cwd"] = fs::current_path(error).string();
    }
    return out;
}

nlohmann::json pathFingerprint(const Environment& env) {
    nlohmann::json entries = nlohmann::json::array();
    for (const std::string& entry : env.path)
        entries.push_back(entryFingerprint(entry));
    if (!env.userSite.empty()) entries.push_back(entryFingerprint(env.userSite));
    return entries;
}

void to_json(nlohmann::json& out, const Environment& env) {
    out = nlohmann::json{{"executable", env.executable},
                         {"version", env.version},
                         {"prefix", env.prefix},
                         {"exec_prefix", env.execPrefix},
                         {"base_prefix", env.basePrefix},
                         {"base_exec_prefix", env.baseExecPrefix},
                         {"path", env.path},
                         {"user_site", env.userSite}};
}

void from_json(const nlohmann::json& in, Environment& env) {
    in.at("executable").get_to(env.executable);
    in.at("version").get_to(env.version);
    in.at("prefix").get_to(env.prefix);
    in.at("exec_prefix").get_to(env.execPrefix);
    in.at("base_prefix").get_to(env.basePrefix);
    in.at("base_exec_prefix").get_to(env.baseExecPrefix);
    in.at("path").get_to(env.path);
    in.at("user_site").get_to(env.userSite);
}

} // namespace leakgate::python

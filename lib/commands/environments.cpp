#include "lib/commands/environments.h"

#include "leakgate/errors.h"
#include "lib/base/log.h"
#include "lib/python/environment.h"
#include "lib/base/subprocess.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace leakgate {
namespace {

namespace fs = std::filesystem;

constexpr const char* kReadyMarker = ".leakgate-ready";

worker::ProcessOutcome run(std::vector<std::string> argv, std::chrono::seconds timeout) {
    worker::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.timeout = timeout;
    return worker::runProcess(spec);
}

std::string tail(const worker::ProcessOutcome& outcome) {
    std::string text = outcome.stdoutText + outcome.stderrTail;
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

bool succeeded(const worker::ProcessOutcome& outcome) {
    return !outcome.timedOut && outcome.exitCode == 0;
}

std::vector<std::string> pip(const std::string& python, std::vector<std::string> args) {
    std::vector<std::string> argv{python, "-m", "pip", "--disable-pip-version-check", "--no-input"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

} // namespace

fs::path cacheDir() {
    if (const char* dir = std::getenv("LEAKGATE_CACHE_DIR")) return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME")) return fs::path(xdg) / "leakgate";
    const char* home = std::getenv("HOME");
    return fs::path(home ? home : "/tmp") / ".cache" / "leakgate";
}

std::string ensureReleaseEnvironment(const std::string& package, const std::string& version,
                                     std::chrono::seconds timeout) {
    const std::string pythonVersion = python::embeddedPythonVersion();
    const fs::path venv =
        cacheDir() / "venvs" / fmt::format("{}-{}-py{}", package, version, pythonVersion);
    const fs::path wheels = cacheDir() / "wheels";
    const std::string venvPython = (venv / "bin" / "python").string();
    if (fs::exists(venv / kReadyMarker)) return venvPython;

    log::info("making the environment for {}=={} (Python {}) in {}", package, version, pythonVersion,
              venv.string());
    fs::remove_all(venv); // a half-made venv from an interrupted run
    fs::create_directories(wheels);
    auto made = run({python::buildPythonExecutable(), "-m", "venv", venv.string()}, timeout);
    if (!succeeded(made))
        throw EnvironmentError(fmt::format("cannot make a venv at {}: {}", venv.string(), tail(made)));
    const std::string requirement = fmt::format("{}=={}", package, version);
    // Wheels are kept in the cache's wheelhouse (PyPI's responses here are not cacheable by
    // pip's own cache): install from it, and download into it only what is missing.
    std::vector<std::string> offline{"install", "--no-index", "--find-links", wheels.string(),
                                     requirement};
    auto installed = run(pip(venvPython, offline), timeout);
    if (!succeeded(installed)) {
        auto downloaded =
            run(pip(venvPython, {"download", "--only-binary=:all:", "-d", wheels.string(), requirement}),
                timeout);
        if (!succeeded(downloaded)) {
            throw EnvironmentError(fmt::format("cannot download {} for Python {}: {}", requirement,
                                               pythonVersion, tail(downloaded)));
        }
        installed = run(pip(venvPython, offline), timeout);
        if (!succeeded(installed)) {
            throw EnvironmentError(fmt::format("cannot install {}: {}", requirement, tail(installed)));
        }
    }
    std::ofstream(venv / kReadyMarker) << requirement << "\n";
    return venvPython;
}

std::vector<std::string> listReleases(const std::string& package) {
    auto listed = run(pip(python::buildPythonExecutable(), {"index", "versions", package}),
                      std::chrono::seconds(120));
    if (!succeeded(listed)) {
        throw EnvironmentError(fmt::format("cannot list the releases of {}: {}", package, tail(listed)));
    }
    // "Available versions: 4.8.1, 4.8.0, ..."
    std::smatch match;
    if (!std::regex_search(listed.stdoutText, match, std::regex("Available versions: ([^\\n]*)"))) {
        throw EnvironmentError(
            fmt::format("unexpected answer from pip index versions: {}", tail(listed)));
    }
    std::vector<std::string> versions;
    std::stringstream list(match[1].str());
    for (std::string version; std::getline(list, version, ',');) {
        version.erase(0, version.find_first_not_of(' '));
        if (!version.empty()) versions.push_back(version);
    }
    std::sort(versions.begin(), versions.end(),
              [](const std::string& a, const std::string& b) { return compareVersions(a, b) < 0; });
    return versions;
}

int compareVersions(const std::string& a, const std::string& b) {
    std::stringstream left(a), right(b);
    std::string x, y;
    while (true) {
        bool moreLeft = static_cast<bool>(std::getline(left, x, '.'));
        bool moreRight = static_cast<bool>(std::getline(right, y, '.'));
        if (!moreLeft && !moreRight) return 0;
        if (!moreLeft) return -1;
        if (!moreRight) return 1;
        bool numeric = !x.empty() && !y.empty() && std::all_of(x.begin(), x.end(), ::isdigit) &&
                       std::all_of(y.begin(), y.end(), ::isdigit);
        if (numeric) {
            long long l = std::stoll(x), r = std::stoll(y);
            if (l != r) return l < r ? -1 : 1;
        } else if (x != y) {
            return x < y ? -1 : 1;
        }
    }
}

} // namespace leakgate

#include "lib/commands/environments.h"

#include "leakgate/errors.h"
#include "lib/base/atomic_file.h"
#include "lib/base/log.h"
#include "lib/base/subprocess.h"
#include "lib/python/environment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace leakgate::commands {
namespace {

namespace fs = std::filesystem;

base::ProcessOutcome run(std::vector<std::string> argv, std::chrono::seconds timeout) {
    base::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.timeout = timeout;
    return base::runProcess(spec);
}

std::string tail(const base::ProcessOutcome& outcome) {
    std::string text = outcome.stdoutText + outcome.stderrTail;
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

// What pip says went wrong, in one line (its last ERROR: line), then its output's tail.
std::string pipFailure(const base::ProcessOutcome& outcome) {
    const std::string text = outcome.stdoutText + outcome.stderrTail;
    std::string summary = outcome.timedOut ? "timed out" : "";
    std::stringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with("ERROR: ")) summary = line.substr(7);
    return summary.empty() ? tail(outcome) : summary + "\n" + tail(outcome);
}

bool succeeded(const base::ProcessOutcome& outcome) {
    return !outcome.timedOut && outcome.exitCode == 0;
}

// Whether the build's Python has a pip that installs into another environment (--python, pip
// 22.3 and later). Then venvs are made without a pip of their own: 0.1 s and 92 KiB instead of
// 9 s and 26 MiB each here (ensurepip), the difference between a bisect's venvs and its checks.
bool pipInstallsElsewhere() {
    static const bool supported = [] {
        auto version =
            run({python::buildPythonExecutable(), "-m", "pip", "--version"}, std::chrono::seconds(60));
        std::smatch match;
        if (!succeeded(version) ||
            !std::regex_search(version.stdoutText, match, std::regex("^pip (\\d+)\\.(\\d+)")))
            return false;
        const int major = std::stoi(match[1]), minor = std::stoi(match[2]);
        return major > 22 || (major == 22 && minor >= 3);
    }();
    return supported;
}

// pip acting on the environment of `python`: its own pip, or the build's pointed at it.
std::vector<std::string> pip(const std::string& python, std::vector<std::string> args) {
    std::vector<std::string> argv{python, "-m", "pip", "--disable-pip-version-check", "--no-input"};
    if (python != python::buildPythonExecutable() && pipInstallsElsewhere()) {
        argv = {python::buildPythonExecutable(), "-m",        "pip", "--python", python,
                "--disable-pip-version-check",   "--no-input"};
    }
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

python::Environment pythonEnvironment(const std::string& executable) {
    if (const char* off = std::getenv("LEAKGATE_NO_ENVIRONMENT_CACHE"); off && *off)
        return python::queryEnvironment(executable);
    const std::string resolved = python::resolveExecutable(executable);
    // Taken before asking: a change while the interpreter runs makes the next run ask again.
    nlohmann::json launch = python::launchFingerprint(resolved);
    launch["leakgate_embeds"] = python::embeddedPythonVersion();
    const std::string key = launch.dump();
    const fs::path file =
        cacheDir() / "environments" / fmt::format("{:016x}.json", std::hash<std::string>{}(key));
    try {
        std::ifstream in(file);
        if (in) {
            const nlohmann::json kept = nlohmann::json::parse(in);
            auto env = kept.at("environment").get<python::Environment>();
            if (kept.at("launch").dump() == key && kept.at("path") == python::pathFingerprint(env)) {
                base::log::debug("the environment of {} from {}", executable, file.string());
                return env;
            }
        }
    } catch (const std::exception& error) {
        base::log::debug("environment cache {} not used: {}", file.string(), error.what());
    }
    python::Environment env = python::queryEnvironment(executable);
    try {
        fs::create_directories(file.parent_path());
        nlohmann::json kept = {
            {"launch", launch}, {"path", python::pathFingerprint(env)}, {"environment", env}};
        base::writeOutputFile(file.string(), kept.dump(1) + "\n");
    } catch (const std::exception& error) {
        base::log::debug("environment cache {} not written: {}", file.string(), error.what());
    }
    return env;
}

namespace {

// `uv --version` of `executable` ("uv 0.13.9"), or nothing when it does not run as uv.
std::optional<std::string> uvVersion(const std::string& executable) {
    auto version = run({executable, "--version"}, std::chrono::seconds(60));
    std::smatch match;
    if (!succeeded(version) ||
        !std::regex_search(version.stdoutText, match, std::regex("^uv [0-9][^ \\n]*")))
        return std::nullopt;
    return match.str(0);
}

// The offline install of `requirement` into `venvPython` from the wheelhouse.
std::vector<std::string> installCommand(const Installer& installer, const std::string& venvPython,
                                        const fs::path& wheels,
                                        const std::vector<std::string>& requirements) {
    std::vector<std::string> command;
    if (installer.kind == Installer::Kind::kPip) {
        command = pip(venvPython, {"install", "--no-index", "--find-links", wheels.string()});
    } else {
        // No configuration file of the user's or of the working directory's project, no index, no
        // network; files hard-linked from uv's cache in leakgate's (the same filesystem as the venvs).
        command = {installer.uv,
                   "pip",
                   "install",
                   "--quiet",
                   "--no-config",
                   "--offline",
                   "--no-index",
                   "--find-links",
                   wheels.string(),
                   "--cache-dir",
                   (cacheDir() / "uv").string(),
                   "--link-mode",
                   "hardlink",
                   "--python",
                   venvPython};
    }
    command.insert(command.end(), requirements.begin(), requirements.end());
    return command;
}

// A short, stable name for a list of requirements (FNV-1a, 32 bits, of the sorted list): the venv
// of a release installed with others is its own.
std::string digestOf(std::vector<std::string> requirements) {
    std::sort(requirements.begin(), requirements.end());
    std::uint32_t hash = 2166136261u;
    for (const std::string& requirement : requirements) {
        for (unsigned char c : requirement + '\n') {
            hash ^= c;
            hash *= 16777619u;
        }
    }
    return fmt::format("{:08x}", hash);
}

// What the installer says went wrong: pip's last ERROR: line, uv's first `×` line, then the tail.
std::string installFailure(const Installer& installer, const base::ProcessOutcome& outcome) {
    if (installer.kind == Installer::Kind::kPip) return pipFailure(outcome);
    std::string summary = outcome.timedOut ? "timed out" : "";
    std::stringstream lines(outcome.stdoutText + outcome.stderrTail);
    for (std::string line; summary.empty() && std::getline(lines, line);)
        if (line.starts_with("\u00d7 ") || line.starts_with("error: ")) summary = line;
    return summary.empty() ? tail(outcome) : summary + "\n" + tail(outcome);
}

} // namespace

Installer chooseInstaller(const std::string& name) {
    if (name == "pip") return {};
    if (name != "auto" && name != "uv")
        throw UsageError(fmt::format("--installer {}: auto, uv or pip", name));
    const char* named = std::getenv("LEAKGATE_UV");
    std::string executable = named && *named ? named : "";
    if (executable.empty()) {
        try {
            executable = python::resolveExecutable("uv");
        } catch (const UsageError&) {
        }
    }
    std::optional<std::string> version;
    if (!executable.empty()) version = uvVersion(executable);
    if (version) return {Installer::Kind::kUv, executable, *version};
    if (name == "uv" || (named && *named)) {
        throw UsageError(fmt::format("--installer {}: {}; install it (pip install uv) and put it on "
                                     "PATH or name it in LEAKGATE_UV, "
                                     "or use --installer pip",
                                     name,
                                     named && *named
                                         ? fmt::format("LEAKGATE_UV={} does not run as uv", named)
                                         : "no uv on PATH"));
    }
    return {};
}

std::string requirementOf(const Release& release) {
    if (release.extras.empty()) return fmt::format("{}=={}", release.package, release.version);
    return fmt::format("{}[{}]=={}", release.package, fmt::join(release.extras, ","), release.version);
}

std::string ensureReleaseEnvironment(const Release& release, std::chrono::seconds timeout,
                                     const Installer& installer) {
    const std::string pythonVersion = python::embeddedPythonVersion();
    const std::string extras =
        release.extras.empty() ? "" : fmt::format("+{}", fmt::join(release.extras, "+"));
    const std::string with = release.with.empty() ? "" : "-with-" + digestOf(release.with);
    const fs::path venv =
        cacheDir() / "venvs" /
        fmt::format("{}-{}{}{}-py{}", release.package, release.version, extras, with, pythonVersion);
    const fs::path wheels = cacheDir() / "wheels";
    const std::string venvPython = (venv / "bin" / "python").string();
    if (fs::exists(venv / kReadyMarker)) {
        std::error_code ignored; // its time is its last use, for `cache prune --older-than`
        fs::last_write_time(venv / kReadyMarker, fs::file_time_type::clock::now(), ignored);
        return venvPython;
    }
    base::log::info("making the environment for {}{} (Python {}) in {} with {}", requirementOf(release),
                    release.with.empty() ? "" : fmt::format(" and {}", fmt::join(release.with, ", ")),
                    pythonVersion, venv.string(),
                    installer.kind == Installer::Kind::kUv ? installer.version : "pip");
    fs::remove_all(venv); // a half-made venv from an interrupted run
    fs::create_directories(wheels);
    // A venv that could not be made whole is removed: a release that cannot be installed leaves
    // nothing in the cache.
    struct RemovedUnlessReady {
        fs::path venv;
        ~RemovedUnlessReady() {
            std::error_code ignored;
            if (!fs::exists(venv / kReadyMarker, ignored)) fs::remove_all(venv, ignored);
        }
    } cleanup{venv};
    std::vector<std::string> makeVenv{python::buildPythonExecutable(), "-m", "venv", venv.string()};
    if (installer.kind == Installer::Kind::kUv || pipInstallsElsewhere())
        makeVenv.insert(makeVenv.begin() + 3, "--without-pip");
    auto made = run(makeVenv, timeout);
    if (!succeeded(made))
        throw EnvironmentError(fmt::format("cannot make a venv at {}: {}", venv.string(), tail(made)));
    const std::string requirement = requirementOf(release);
    std::vector<std::string> requirements{requirement};
    requirements.insert(requirements.end(), release.with.begin(), release.with.end());
    const std::string described =
        release.with.empty() ? requirement
                             : fmt::format("{} with {}", requirement, fmt::join(release.with, ", "));
    // Wheels are kept in the cache's wheelhouse (PyPI's responses here are not cacheable by
    // pip's own cache): install from it, and download into it only what is missing.
    const std::vector<std::string> offline = installCommand(installer, venvPython, wheels, requirements);
    auto installed = run(offline, timeout);
    if (!succeeded(installed)) {
        // Downloaded into a directory of its own, then each wheel moved in whole (rename): a
        // bisect -j installs releases that share dependencies at the same time, and a pip reading
        // the wheelhouse never sees a file half-written by another.
        static std::atomic<int> downloads{0};
        const fs::path staging =
            cacheDir() / "downloads" / fmt::format("{}-{}", ::getpid(), downloads.fetch_add(1));
        fs::create_directories(staging);
        std::vector<std::string> download{"download", "--only-binary=:all:", "-d", staging.string()};
        download.insert(download.end(), requirements.begin(), requirements.end());
        auto downloaded = run(pip(venvPython, download), timeout);
        std::error_code ignored;
        for (const auto& entry : fs::directory_iterator(staging, ignored)) {
            if (!fs::exists(wheels / entry.path().filename()))
                fs::rename(entry.path(), wheels / entry.path().filename(), ignored);
        }
        fs::remove_all(staging, ignored);
        if (!succeeded(downloaded)) {
            throw EnvironmentError(fmt::format("cannot download {} for Python {}: {}", described,
                                               pythonVersion, pipFailure(downloaded)));
        }
        installed = run(offline, timeout);
        if (!succeeded(installed)) {
            throw EnvironmentError(
                fmt::format("cannot install {}: {}", described, installFailure(installer, installed)));
        }
    }
    std::ofstream ready(venv / kReadyMarker);
    for (const std::string& line : requirements)
        ready << line << "\n";
    return venvPython;
}

std::vector<std::string> listReleases(const std::string& package, bool pre) {
    std::vector<std::string> args{"index", "versions", package};
    if (pre) args.push_back("--pre");
    auto listed = run(pip(python::buildPythonExecutable(), args), std::chrono::seconds(120));
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
    return versions;
}

} // namespace leakgate::commands

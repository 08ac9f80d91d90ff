// Release environments: one venv per (package, extras, version, Python major.minor), made in
// leakgate's cache from its wheelhouse (pip downloads each release once) by uv where there is one
// (its files hard-linked from uv's cache) or pip. The venvs use the Python this build embeds, so
// `--python <venv>/bin/python` always matches it.
#pragma once

#include "lib/python/environment.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

// The file in a venv that says it was made whole; its time is the venv's last use.
inline constexpr const char* kReadyMarker = ".leakgate-ready";

// $LEAKGATE_CACHE_DIR, else $XDG_CACHE_HOME/leakgate, else ~/.cache/leakgate.
std::filesystem::path cacheDir();

// The environment of the interpreter `executable` (lib/python/environment.h), from the cache's
// environments/ when its fingerprint is unchanged since it was last asked, else asked (and the
// answer kept). Asking starts that interpreter: as long as the rest of a small scan. Not kept
// when LEAKGATE_NO_ENVIRONMENT_CACHE is set; a cache that cannot be read or written is skipped.
python::Environment pythonEnvironment(const std::string& executable);

// One release to install: package[extra,...]==version.
struct Release {
    std::string package;
    std::vector<std::string> extras;
    std::string version;
    std::vector<std::string> with; // requirements installed beside it ("numpy<2.5"), in its venv
};

// "nvidia-cutlass-dsl[cu13]==4.6.1"
std::string requirementOf(const Release& release);

// What installs a release into its venv from the wheelhouse (bisect --installer). uv makes a
// venv of nvidia-cutlass-dsl 4.6.1 in 0.2 s from a warm uv cache and 1.7 s from a cold one,
// against pip's 7.3 s (bench/venv_bench.py), and its files are hard links into uv's cache (in
// leakgate's: `uv/`), so venvs of releases that share wheels share their disk.
struct Installer {
    enum class Kind { kPip, kUv } kind = Kind::kPip;
    std::string uv;      // the uv executable, for kUv
    std::string version; // "uv 0.13.9", for kUv
};
// --installer auto: uv when one is found ($LEAKGATE_UV, else `uv` on PATH), else pip; "uv" needs
// one (a UsageError that says how to get it), "pip" is pip. A UsageError for any other name.
Installer chooseInstaller(const std::string& name);

// The interpreter of a venv holding the release, made if missing (its venv's name carries the
// extras and a digest of the `with` requirements: nvidia-cutlass-dsl-4.6.1+cu13-with-1f0c3a9e-py3.11).
// Missing wheels are downloaded by pip into the wheelhouse, then the installer installs offline from it.
// Throws EnvironmentError (with the tail of the installer's output) when it cannot be made.
std::string ensureReleaseEnvironment(const Release& release, std::chrono::seconds timeout,
                                     const Installer& installer = {});

// Every release of `package` on the index, as pip lists them (pip index versions; with `pre`,
// pre- and dev-releases too). lib/commands/versions.h orders them.
std::vector<std::string> listReleases(const std::string& package, bool pre);

} // namespace leakgate::commands
